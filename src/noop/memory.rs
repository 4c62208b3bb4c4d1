//! Host memory behind noop buffers and textures, and the instance-wide
//! memory budget.
//!
//! [`HostBytes`] is the noop backend's "device memory": one zeroed heap
//! allocation that is only ever touched through raw pointers, so the CPU
//! (through a mapping) and the "GPU" (commands executed at submit) can both
//! reach it without Rust references aliasing. Every access the backend makes
//! is bounds-checked; who may touch which bytes when is the caller's
//! contract, exactly as with real GPU memory.
//!
//! External memory (see `external.rs`) is a [`HostBytes`] too, with a
//! [`SharedFile`] beside it: the file is what other devices and processes
//! share, the host bytes are what commands run on, and the two are
//! synchronised at submit boundaries ([`HostBytes::pull`], [`HostBytes::push`]).
//! An imported host allocation is a [`HostBytes`] that borrows the caller's
//! memory instead of owning it.
//!
//! [`Budget`] models a device heap of limited size
//! ([`crate::InstanceDescriptor::noop_memory_budget`]) so out-of-memory paths
//! can be tested; a [`Charge`] is one resource's share of it, returned when
//! the charge is dropped. Each device charges through its own child budget,
//! whose `used` is the live bytes of its memory report
//! (`Device::memory_report`). Noop keeps no freed memory: every byte is
//! returned when its resource goes, so `trim_memory` has nothing to release.

use std::alloc::Layout;
use std::fmt;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::shm::SharedFile;
use crate::DeviceError;

/// Alignment of every allocation: what a mapping pointer is aligned to.
/// 64 matches the largest `minMemoryMapAlignment` Vulkan drivers report, so
/// code that casts a mapping to `&[u64]` or SIMD types works on both backends.
pub(crate) const ALLOCATION_ALIGNMENT: usize = 64;

/// A region that does not lie inside a [`HostBytes`] allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OutOfBounds;

/// A zero-initialised, fixed-size heap allocation accessed only through raw
/// pointers.
///
/// Shared through `Arc` between the resource that owns it and the recorded
/// commands that use it, so a command buffer never points at freed memory,
/// even if the caller destroys a resource too early.
pub(crate) struct HostBytes {
    ptr: NonNull<u8>,
    len: usize,
    /// Whether `ptr` is ours to free, or the caller's (a host-pointer import).
    owned: bool,
    /// External memory: the file other devices and processes share.
    shared: Option<SharedFile>,
}

// SAFETY: `HostBytes` owns its allocation (like a `Box<[u8]>`), or for a
// host-pointer import borrows one the caller keeps valid (`borrowed`'s
// contract), and every method that reads or writes it does so through raw
// pointers within bounds, never through a lasting Rust reference (`pull` and
// `push` form a slice only while a submission runs, when nothing else may
// touch external memory). Concurrent access from several threads is
// therefore not a Rust aliasing violation in itself; a *data race* on the
// same bytes (a CPU write through a mapping while a submit copies them) is
// excluded by the hal's contracts (`map_buffer`, `submit`), exactly as for
// GPU memory, and submits of one device are serialised by its queue.
unsafe impl Send for HostBytes {}
// SAFETY: as above.
unsafe impl Sync for HostBytes {}

impl HostBytes {
    /// Allocates `len` zeroed bytes. Fails with `OutOfMemory`, never aborts,
    /// when the size does not fit the address space or the allocator refuses.
    pub(crate) fn new_zeroed(len: u64) -> Result<Self, DeviceError> {
        let len = usize::try_from(len).map_err(|_| DeviceError::OutOfMemory)?;
        if len == 0 {
            return Ok(Self {
                ptr: NonNull::dangling(),
                len: 0,
                owned: true,
                shared: None,
            });
        }
        let layout = Self::layout(len).ok_or(DeviceError::OutOfMemory)?;
        // SAFETY: `layout` has a non-zero size (checked above).
        let raw = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or(DeviceError::OutOfMemory)?;
        Ok(Self {
            ptr,
            len,
            owned: true,
            shared: None,
        })
    }

    /// `len` zeroed host bytes synchronised with `file` at submit boundaries.
    /// On error `file` is dropped (its descriptor closed).
    pub(crate) fn new_shared(len: u64, file: SharedFile) -> Result<Self, DeviceError> {
        let mut bytes = Self::new_zeroed(len)?;
        bytes.shared = Some(file);
        Ok(bytes)
    }

    /// The caller's `len` bytes at `ptr`, used in place and never freed here.
    ///
    /// # Safety
    /// `ptr` is valid for reads and writes of `len` bytes until this value
    /// and every command recorded with it are gone, and nothing else
    /// touches those bytes while a submission that uses them runs (the
    /// contract of a host-pointer import).
    pub(crate) unsafe fn borrowed(ptr: NonNull<u8>, len: u64) -> Result<Self, DeviceError> {
        let len = usize::try_from(len).map_err(|_| DeviceError::OutOfMemory)?;
        Ok(Self {
            ptr,
            len,
            owned: false,
            shared: None,
        })
    }

    /// The shared file of external memory.
    pub(crate) fn shared(&self) -> Option<&SharedFile> {
        self.shared.as_ref()
    }

    /// External memory: reads the shared file into the host bytes (at the
    /// start of a submission that uses them). Does nothing otherwise.
    pub(crate) fn pull(&self) -> Result<(), DeviceError> {
        let Some(file) = &self.shared else {
            return Ok(());
        };
        if self.len == 0 {
            return Ok(());
        }
        // SAFETY: the allocation is `len` bytes, ours, and external memory
        // is never mapped; while a submission runs nothing else touches it
        // (the `submit` contract), so this is the only reference to it.
        let bytes = unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) };
        file.read(0, bytes)
    }

    /// External memory: writes the host bytes to the shared file (at the
    /// end of a submission that wrote them). Does nothing otherwise.
    pub(crate) fn push(&self) -> Result<(), DeviceError> {
        let Some(file) = &self.shared else {
            return Ok(());
        };
        if self.len == 0 {
            return Ok(());
        }
        // SAFETY: as in `pull`: the only reference to the bytes meanwhile.
        let bytes = unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) };
        file.write(0, bytes)
    }

    fn layout(len: usize) -> Option<Layout> {
        Layout::from_size_align(len, ALLOCATION_ALIGNMENT).ok()
    }

    /// Size in bytes.
    pub(crate) fn len(&self) -> u64 {
        self.len as u64
    }

    /// Start of the bytes; stable for the allocation's whole life.
    pub(crate) fn as_ptr(&self) -> NonNull<u8> {
        self.ptr
    }

    /// `offset` as a `usize` if `offset..offset + len` lies inside the allocation.
    fn check(&self, offset: u64, len: u64) -> Result<usize, OutOfBounds> {
        let end = offset.checked_add(len).ok_or(OutOfBounds)?;
        if end > self.len as u64 {
            return Err(OutOfBounds);
        }
        // `end <= self.len`, a `usize`, so `offset` fits too.
        Ok(offset as usize)
    }

    /// Sets `len` bytes at `offset` to zero.
    pub(crate) fn zero(&self, offset: u64, len: u64) -> Result<(), OutOfBounds> {
        let start = self.check(offset, len)?;
        // SAFETY: `start..start + len` lies inside the allocation (checked);
        // access through a raw pointer (see the `Sync` impl).
        unsafe { self.ptr.as_ptr().add(start).write_bytes(0, len as usize) };
        Ok(())
    }

    /// Writes `bytes` at `offset`.
    pub(crate) fn write(&self, offset: u64, bytes: &[u8]) -> Result<(), OutOfBounds> {
        let start = self.check(offset, bytes.len() as u64)?;
        // SAFETY: the destination lies inside the allocation (checked); the
        // source is a Rust slice, which cannot overlap memory we only reach
        // through raw pointers.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr.as_ptr().add(start), bytes.len())
        };
        Ok(())
    }

    /// Copies `len` bytes from `src` at `src_offset` to `dst` at `dst_offset`.
    /// `src` and `dst` may be the same allocation and the ranges may
    /// overlap (the copy behaves like `memmove`).
    pub(crate) fn copy(
        src: &HostBytes,
        src_offset: u64,
        dst: &HostBytes,
        dst_offset: u64,
        len: u64,
    ) -> Result<(), OutOfBounds> {
        let from = src.check(src_offset, len)?;
        let to = dst.check(dst_offset, len)?;
        // SAFETY: both ranges lie inside their allocations (checked);
        // `ptr::copy` allows overlap; access through raw pointers only.
        unsafe {
            std::ptr::copy(
                src.ptr.as_ptr().add(from),
                dst.ptr.as_ptr().add(to),
                len as usize,
            )
        };
        Ok(())
    }
}

impl Drop for HostBytes {
    fn drop(&mut self) {
        if self.len == 0 || !self.owned {
            return;
        }
        if let Some(layout) = Self::layout(self.len) {
            // SAFETY: `ptr` came from `alloc_zeroed` with this very layout
            // (same length and alignment) and is freed exactly once, here.
            unsafe { std::alloc::dealloc(self.ptr.as_ptr(), layout) };
        }
    }
}

impl fmt::Debug for HostBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostBytes")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .field("owned", &self.owned)
            .field("shared", &self.shared)
            .finish()
    }
}

/// The memory budget shared by every device of one noop instance, and each
/// device's own account of it (a *child*: what that device holds, charged
/// to the instance's budget too), which its memory report reads.
#[derive(Debug)]
pub(crate) struct Budget {
    /// Bytes the devices may hold at once; `None` is unlimited.
    limit: Option<u64>,
    /// Bytes currently charged.
    used: AtomicU64,
    /// The instance's budget, for a device's account.
    parent: Option<Arc<Budget>>,
}

impl Budget {
    pub(crate) fn new(limit: Option<u64>) -> Self {
        Self {
            limit,
            used: AtomicU64::new(0),
            parent: None,
        }
    }

    /// A device's account: no limit of its own, every charge also charged
    /// to (and limited by) `parent`.
    pub(crate) fn child(parent: &Arc<Budget>) -> Self {
        Self {
            limit: None,
            used: AtomicU64::new(0),
            parent: Some(Arc::clone(parent)),
        }
    }

    /// Adds `bytes` to this budget alone, within its limit.
    fn add(&self, bytes: u64) -> Result<(), DeviceError> {
        self.used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                let next = used.checked_add(bytes)?;
                match self.limit {
                    Some(limit) if next > limit => None,
                    _ => Some(next),
                }
            })
            .map(|_| ())
            .map_err(|_| DeviceError::OutOfMemory)
    }

    /// Charges `bytes` to the budget (and its parent), or fails with
    /// `OutOfMemory` if they do not fit. The bytes are returned when the
    /// [`Charge`] is dropped.
    pub(crate) fn charge(self: &Arc<Self>, bytes: u64) -> Result<Charge, DeviceError> {
        if let Some(parent) = &self.parent {
            parent.add(bytes)?;
        }
        if let Err(e) = self.add(bytes) {
            if let Some(parent) = &self.parent {
                parent.used.fetch_sub(bytes, Ordering::Relaxed);
            }
            return Err(e);
        }
        Ok(Charge {
            budget: Arc::clone(self),
            bytes,
        })
    }

    /// Bytes currently charged.
    pub(crate) fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }
}

/// One resource's share of a [`Budget`]; returned to it on drop.
#[derive(Debug)]
pub(crate) struct Charge {
    budget: Arc<Budget>,
    bytes: u64,
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.budget.used.fetch_sub(self.bytes, Ordering::Relaxed);
        if let Some(parent) = &self.budget.parent {
            parent.used.fetch_sub(self.bytes, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_charges_and_returns() {
        let budget = Arc::new(Budget::new(Some(100)));
        let a = budget.charge(60).expect("test fixture");
        assert_eq!(budget.charge(41).unwrap_err(), DeviceError::OutOfMemory);
        let b = budget.charge(40).expect("test fixture");
        assert_eq!(budget.used(), 100);
        drop(a);
        drop(b);
        assert_eq!(budget.used(), 0);
    }

    #[test]
    fn a_device_account_charges_the_instance_budget_too() {
        let instance = Arc::new(Budget::new(Some(100)));
        let a = Arc::new(Budget::child(&instance));
        let b = Arc::new(Budget::child(&instance));
        let x = a.charge(60).expect("test fixture");
        assert_eq!(b.charge(41).unwrap_err(), DeviceError::OutOfMemory);
        assert_eq!((a.used(), b.used(), instance.used()), (60, 0, 60));
        let y = b.charge(40).expect("test fixture");
        assert_eq!((a.used(), b.used(), instance.used()), (60, 40, 100));
        drop((x, y));
        assert_eq!((a.used(), b.used(), instance.used()), (0, 0, 0));
    }

    #[test]
    fn host_bytes_bounds() {
        let bytes = HostBytes::new_zeroed(16).expect("test fixture");
        assert_eq!(bytes.as_ptr().as_ptr() as usize % ALLOCATION_ALIGNMENT, 0);
        assert!(bytes.write(12, &[1, 2, 3, 4]).is_ok());
        assert_eq!(bytes.write(13, &[1, 2, 3, 4]), Err(OutOfBounds));
        assert_eq!(bytes.zero(u64::MAX, 2), Err(OutOfBounds));
        assert!(HostBytes::copy(&bytes, 12, &bytes, 10, 4).is_ok());
        assert_eq!(HostBytes::copy(&bytes, 12, &bytes, 13, 4), Err(OutOfBounds));
        assert_eq!(
            HostBytes::new_zeroed(u64::MAX).unwrap_err(),
            DeviceError::OutOfMemory
        );
    }
}
