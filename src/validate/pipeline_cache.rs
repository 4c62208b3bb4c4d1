//! Pipeline-cache data, as keel-hal hands it out and takes it back on every
//! backend: a 40-byte header, then the backend's own bytes (Vulkan: what
//! `vkGetPipelineCacheData` wrote; noop: none).
//!
//! | bytes | what |
//! |---|---|
//! | 0..8 | [`MAGIC`] |
//! | 8..24 | the adapter's validation key (`pipeline_cache_validation_key`) |
//! | 24..32 | the length of the backend's bytes, little-endian `u64` |
//! | 32..40 | their CRC-32 (IEEE, `crc32fast`), zero-extended to a little-endian `u64` |
//!
//! [`unwrap`] checks all four before any driver sees the bytes: data from
//! another adapter or driver, truncated or damaged, is refused with the
//! check it failed (a driver is only obliged to check its own header, and
//! damaged data past it may crash one).

use crate::PipelineCacheError;

/// The first bytes of keel-hal pipeline-cache data (format version 2: the
/// CRC-32 checksum; version 1's FNV-1a data is refused by its magic).
pub(crate) const MAGIC: [u8; 8] = *b"KEELPC\x00\x02";
/// Bytes of the header before the backend's bytes.
pub(crate) const HEADER: usize = 40;

/// The payload's checksum: CRC-32 (IEEE), zero-extended.
fn hash(bytes: &[u8]) -> u64 {
    u64::from(crc32fast::hash(bytes))
}

/// The data to hand out: the header for `key`, then `payload`.
pub(crate) fn wrap(key: [u8; 16], payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&key);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&hash(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// The backend's bytes inside `data`, when `data` is whole keel-hal cache
/// data made under `key`.
pub(crate) fn unwrap(key: [u8; 16], data: &[u8]) -> Result<&[u8], PipelineCacheError> {
    let invalid = |why| Err(PipelineCacheError::Invalid(why));
    let (Some(header), Some(payload)) = (data.get(..HEADER), data.get(HEADER..)) else {
        return invalid("shorter than keel-hal's 40-byte header");
    };
    let field = |range: std::ops::Range<usize>| header.get(range).unwrap_or_default();
    if field(0..8) != MAGIC {
        return invalid("not keel-hal pipeline-cache data (magic bytes)");
    }
    if field(8..24) != key {
        return invalid("made on another adapter or driver (validation key)");
    }
    let word = |range| {
        let mut le = [0; 8];
        le.copy_from_slice(field(range));
        u64::from_le_bytes(le)
    };
    if word(24..32) != payload.len() as u64 {
        return invalid("truncated or padded (length)");
    }
    if word(32..40) != hash(payload) {
        return invalid("damaged (checksum)");
    }
    Ok(payload)
}

/// The cache's initial bytes for `data` under `key`: `None` for no data;
/// with `fallback`, `None` for data [`unwrap`] refuses (an empty cache).
pub(crate) fn initial_data(
    key: [u8; 16],
    data: Option<&[u8]>,
    fallback: bool,
) -> Result<Option<&[u8]>, PipelineCacheError> {
    match data.map(|d| unwrap(key, d)) {
        None => Ok(None),
        Some(Ok(payload)) => Ok(Some(payload)),
        Some(Err(e)) if fallback => {
            log::info!("pipeline cache: {e}; starting empty (fallback)");
            Ok(None)
        }
        Some(Err(e)) => Err(e),
    }
}

/// Refuses a cache on a device opened without `PIPELINE_CACHE`.
pub(crate) fn check_feature(features: wgt::Features) -> Result<(), PipelineCacheError> {
    if features.contains(wgt::Features::PIPELINE_CACHE) {
        Ok(())
    } else {
        Err(PipelineCacheError::MissingFeature {
            feature: wgt::Features::PIPELINE_CACHE,
            enabled: features,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: [u8; 16] = [7; 16];

    #[test]
    fn data_round_trips_and_every_damage_is_refused() {
        let data = wrap(KEY, b"driver bytes");
        assert_eq!(unwrap(KEY, &data), Ok(&b"driver bytes"[..]));
        assert_eq!(unwrap(KEY, &wrap(KEY, &[])), Ok(&[][..]));
        let refused = |d: &[u8], key| matches!(unwrap(key, d), Err(PipelineCacheError::Invalid(_)));
        assert!(refused(&data[..10], KEY), "short");
        assert!(refused(&data, [8; 16]), "other key");
        assert!(refused(&data[..data.len() - 1], KEY), "truncated");
        let mut flipped = data.clone();
        if let Some(last) = flipped.last_mut() {
            *last ^= 1;
        }
        assert!(refused(&flipped, KEY), "damaged");
        let mut magic = data.clone();
        magic[0] = b'X';
        assert!(refused(&magic, KEY), "magic");
    }

    #[test]
    fn fallback_starts_empty() {
        let bad = [0u8; 3];
        assert_eq!(initial_data(KEY, Some(&bad), true), Ok(None));
        assert!(initial_data(KEY, Some(&bad), false).is_err());
        assert_eq!(initial_data(KEY, None, false), Ok(None));
        let good = wrap(KEY, b"x");
        assert_eq!(initial_data(KEY, Some(&good), false), Ok(Some(&b"x"[..])));
    }
}
