//! Maps and sets keyed by an object's address (`Arc::as_ptr as usize`),
//! the key of every per-command-buffer and per-pass table (the tracker's
//! first and last uses, a usage scope's index, the groups a pass has
//! seen). Addresses need no DoS-resistant hash: one multiply spreads them,
//! where std's SipHash cost more than the lookups it served on the
//! recording hot path.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A map from an object's address.
pub(crate) type PtrMap<V> = HashMap<usize, V, BuildHasherDefault<PtrHasher>>;
/// A set of objects' addresses.
pub(crate) type PtrSet = HashSet<usize, BuildHasherDefault<PtrHasher>>;

/// A folded multiply of one `usize`: the 128-bit product's halves XORed,
/// so the low bits the table indexes with depend on every bit of the
/// address (whose own low bits are zero).
#[derive(Default)]
pub(crate) struct PtrHasher(u64);

impl Hasher for PtrHasher {
    fn write(&mut self, bytes: &[u8]) {
        // Only `usize` keys are hashed here; bytes still hash correctly.
        for &b in bytes {
            self.write_usize(self.0 as usize ^ usize::from(b));
        }
    }

    fn write_usize(&mut self, n: usize) {
        let m = u128::from(n as u64) * 0x9E37_79B9_7F4A_7C15;
        self.0 = (m as u64) ^ ((m >> 64) as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_addresses_spread_over_the_low_bits() {
        // 64 random keys fill about 40 of 64 buckets; a weak hash of
        // aligned addresses fills far fewer.
        for stride in [8, 16, 64, 256, 4096] {
            let buckets: PtrSet = (0..64usize)
                .map(|i| {
                    let mut h = PtrHasher::default();
                    h.write_usize(0x7f00_0000_0000 + i * stride);
                    (h.finish() & 63) as usize
                })
                .collect();
            assert!(
                buckets.len() >= 36,
                "stride {stride}: only {} of 64 buckets used",
                buckets.len()
            );
        }
    }
}
