//! Imported memory against the resource it backs: the check both backends
//! run where the imported handle tells its size (an fd of a file, a memfd,
//! a seekable dma-buf; a host allocation's given size).

use crate::ExternalError;

/// Checks that `size` bytes of imported memory hold the `required` bytes
/// of the resource: the resource's own size (a buffer's `desc.size`) first,
/// on every backend; a backend whose driver asks for more (Vulkan's memory
/// requirements) calls it again with that.
pub(crate) fn check_import_size(size: u64, required: u64) -> Result<(), ExternalError> {
    if size < required {
        return Err(ExternalError::TooSmall { size, required });
    }
    Ok(())
}
