//! Acceleration-structure creation: the checks both backends run before
//! making a structure (each an [`AccelerationStructureError`]): a size of
//! zero, and for a structure placed in a caller's buffer, a buffer without
//! `STORAGE` usage (which keel-hal maps to Vulkan's
//! `ACCELERATION_STRUCTURE_STORAGE_KHR` on devices with acceleration
//! structures), an offset that is not a multiple of
//! [`PLACEMENT_ALIGNMENT`], or a range past the buffer's end
//! (`InvalidPlacement`). And, for builds, copies and compacted-size reads,
//! [`check_kind`] (`WrongKind`, naming the kind given and the kind needed).

use super::BufferFacts;
use crate::AccelerationStructureError as Error;

/// What a placement offset must be a multiple of (Vulkan's
/// `VUID-VkAccelerationStructureCreateInfoKHR-offset-03734`).
pub(crate) const PLACEMENT_ALIGNMENT: u64 = 256;

/// The usage a buffer needs to hold acceleration structures.
pub(crate) const STORAGE_USAGE: wgt::BufferUsages = wgt::BufferUsages::STORAGE;

/// Checks a structure's size, and its placement when it lives in a
/// caller's buffer (`placement`: the buffer and the offset).
pub(crate) fn check_create(size: u64, placement: Option<(BufferFacts, u64)>) -> Result<(), Error> {
    if size == 0 {
        return Err(Error::InvalidPlacement(
            "an acceleration structure needs a non-zero size",
        ));
    }
    let Some((buffer, offset)) = placement else {
        return Ok(());
    };
    if !buffer.usage.contains(STORAGE_USAGE) {
        return Err(Error::InvalidPlacement(
            "the buffer needs STORAGE usage (Vulkan: ACCELERATION_STRUCTURE_STORAGE) to hold a \
             structure",
        ));
    }
    if offset % PLACEMENT_ALIGNMENT != 0 {
        return Err(Error::InvalidPlacement(
            "the offset is not a multiple of 256",
        ));
    }
    if offset.checked_add(size).is_none_or(|end| end > buffer.size) {
        return Err(Error::InvalidPlacement(
            "the structure runs past the buffer's end",
        ));
    }
    Ok(())
}

/// Checks that `what` (build entries, a copy's destination, a structure
/// whose compacted size is read, …) is of the `expected` kind.
pub(crate) fn check_kind(
    what: &'static str,
    given: crate::AccelerationStructureKind,
    expected: crate::AccelerationStructureKind,
) -> Result<(), Error> {
    if given != expected {
        return Err(Error::WrongKind {
            what,
            given,
            expected,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_needs_storage_usage_alignment_and_room() {
        let storage = BufferFacts {
            size: 1024,
            usage: wgt::BufferUsages::STORAGE,
        };
        let uniform = BufferFacts {
            usage: wgt::BufferUsages::UNIFORM,
            ..storage
        };
        assert_eq!(check_create(256, Some((storage, 256))), Ok(()));
        assert_eq!(check_create(256, None), Ok(()));
        for (size, placement) in [
            (0, None),
            (256, Some((uniform, 0))),
            (256, Some((storage, 128))),
            (1024, Some((storage, 256))),
        ] {
            assert!(matches!(
                check_create(size, placement),
                Err(Error::InvalidPlacement(_))
            ));
        }
    }

    #[test]
    fn wrong_kind_names_both_kinds() {
        use crate::AccelerationStructureKind as K;
        assert_eq!(check_kind("x", K::TopLevel, K::TopLevel), Ok(()));
        let e = check_kind("the copy's destination", K::TopLevel, K::BottomLevel).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("the copy's destination")
                && text.contains("TopLevel given")
                && text.contains("BottomLevel is needed"),
            "{text}"
        );
    }
}
