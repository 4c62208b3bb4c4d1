//! Imported memory against the resource it backs: the check both backends
//! run where the imported handle tells its size (an fd of a file, a memfd,
//! a seekable dma-buf; a host allocation's given size).

use crate::ExternalError;

/// Checks a host-pointer import of `size` bytes at `ptr` for a resource
/// of `required` bytes: the pointer, then the size, aligned to `alignment`
/// (the adapter's `minImportedHostPointerAlignment`; noop's own), then
/// [`check_import_size`]. Both backends run it with the buffer's size
/// before anything else about the import.
pub(crate) fn check_host_pointer(
    ptr: u64,
    size: u64,
    alignment: u64,
    required: u64,
) -> Result<(), ExternalError> {
    for (what, value) in [("pointer", ptr), ("size", size)] {
        if value % alignment.max(1) != 0 {
            return Err(ExternalError::Misaligned {
                what,
                value,
                alignment,
            });
        }
    }
    check_import_size(size, required)
}

/// Checks that `size` bytes of imported memory hold the `required` bytes
/// of the resource: the resource's own size (a buffer's `desc.size`), on
/// every backend. A driver that asks for more than a buffer's size
/// (Vulkan's memory requirements) is a second, backend-only check:
/// [`ExternalError::BelowDriverRequirement`].
pub(crate) fn check_import_size(size: u64, required: u64) -> Result<(), ExternalError> {
    if size < required {
        return Err(ExternalError::TooSmall { size, required });
    }
    Ok(())
}

/// Textures are never imported from host allocations (Vulkan has no
/// host-pointer images): every backend refuses one with this error, first,
/// before any check of the description.
pub(crate) fn check_texture_handle(
    handle_type: crate::ExternalHandleType,
) -> Result<(), ExternalError> {
    if handle_type == crate::ExternalHandleType::HostAllocation {
        return Err(ExternalError::Unsupported {
            handle: handle_type.name(),
            reason: "textures cannot be imported from host allocations",
        });
    }
    Ok(())
}

/// The description an imported texture is checked and made with: the
/// caller's, with `memory` replaced by what an import of `handle_type` is
/// (`Memory::External(ExternalMemory::imported(..))`). `desc.memory` is
/// ignored by every backend (`Device::import_texture`), so `Upload` there
/// is no `UnsupportedMemory` on noop and none on Vulkan: both call this
/// before any other check.
pub(crate) fn imported_texture_desc<'a>(
    desc: &crate::TextureDescriptor<'a>,
    handle_type: crate::ExternalHandleType,
) -> crate::TextureDescriptor<'a> {
    crate::TextureDescriptor {
        memory: crate::Memory::External(crate::ExternalMemory::imported(handle_type)),
        ..desc.clone()
    }
}
