//! Bad external-memory input: each is a typed error, closes the fd it was
//! handed (the process's open-fd count does not move), and leaves no object
//! behind. The fds are `OwnedFd`s, so a double close would also be caught:
//! `std` aborts a debug build that closes an fd it owns but no longer has.
//!
//! A *closed* fd cannot be handed over at all: an `OwnedFd` is open by
//! construction (making one from a closed number is itself undefined
//! behaviour), which is why the import API takes `OwnedFd`.

use std::fs::File;
use std::os::fd::OwnedFd;
use std::process::{Command, Stdio};

use keel_hal::wgt;
use keel_hal::{
    Adapter, Api, BufferDescriptor, BufferError, Device, ExternalError, ExternalHandle,
    ExternalHandleType, ExternalMemory, ExternalSemaphoreDescriptor, ExternalSemaphoreType,
    HalFeatures, Memory, SemaphoreKind,
};

use crate::external_side::{check_fds, open_fds, Side};
use crate::harness::{skip, Ctx, Failure, Outcome, TestResult};

exclusive_conformance_tests!(bad_imports_are_typed_and_leak_nothing);

/// An unlinked temporary regular file of `len` bytes.
fn temp_file(len: u64) -> Result<OwnedFd, Failure> {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path =
        std::env::temp_dir().join(format!("keel-external-errors-{}-{n}", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)?;
    std::fs::remove_file(&path)?;
    file.set_len(len)?;
    Ok(OwnedFd::from(file))
}

/// The read end of a pipe (from a short-lived child's standard output).
fn pipe() -> Result<Option<OwnedFd>, Failure> {
    let Ok(mut child) = Command::new("true").stdout(Stdio::piped()).spawn() else {
        return Ok(None);
    };
    let out = child.stdout.take().map(OwnedFd::from);
    child.wait()?;
    Ok(out)
}

/// Whether the kernel reports how much memory an fd holds (a file of that
/// size, or a seekable end): noop's files and lavapipe's memfds do.
fn reports_size(fd: &OwnedFd) -> bool {
    use std::io::{Seek, SeekFrom};
    let Ok(dup) = fd.try_clone() else {
        return false;
    };
    let mut file = File::from(dup);
    match file.metadata() {
        Ok(m) if m.is_file() => m.len() > 0,
        _ => file.seek(SeekFrom::End(0)).is_ok_and(|s| s > 0),
    }
}

/// Whether an import of a handle that is not memory failed as it should:
/// with an external error, `InvalidHandle` on noop (where the answer is
/// ours). Drivers differ: lavapipe says `VK_ERROR_INVALID_EXTERNAL_HANDLE`,
/// NVIDIA out of device memory.
fn refused<A: Api>(ctx: &Ctx<A>, r: &Result<impl std::fmt::Debug, BufferError>) -> bool {
    match r {
        Err(BufferError::External(ExternalError::InvalidHandle)) => true,
        Err(BufferError::External(_)) => ctx.backend != keel_hal::Backend::Noop,
        _ => false,
    }
}

fn bad_imports_are_typed_and_leak_nothing<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let mut features = HalFeatures::EXTERNAL_MEMORY_FD;
    let host = ctx
        .caps
        .hal_features
        .contains(HalFeatures::EXTERNAL_MEMORY_HOST);
    if host {
        features |= HalFeatures::EXTERNAL_MEMORY_HOST;
    }
    let Some(a) = Side::open(ctx, features)? else {
        return skip("the adapter lacks EXTERNAL_MEMORY_FD");
    };
    let size = 64 * 1024;
    let desc = BufferDescriptor {
        label: Some("bad import"),
        size,
        usage: wgt::BufferUsages::COPY_SRC | wgt::BufferUsages::COPY_DST,
        memory: Memory::Device,
    };
    let fds = open_fds();

    // SAFETY (every import below): each fails before creating anything, or
    // the resource is destroyed right away.
    // Asking for more than the fd's memory holds.
    let mut sized = ctx.backend == keel_hal::Backend::Noop;
    let export = BufferDescriptor {
        memory: Memory::External(ExternalMemory::export(ExternalHandleType::OpaqueFd)),
        ..desc.clone()
    };
    let caps = ctx
        .adapter
        .external_buffer_capabilities(&export, ExternalHandleType::OpaqueFd);
    if caps.exportable {
        // SAFETY: destroyed below; nothing is submitted.
        unsafe {
            let exported = a
                .device
                .create_buffer(&export)
                .map_err(|e| format!("creating an exportable buffer: {e}"))?;
            let memory = a
                .device
                .export_buffer_memory(&exported, ExternalHandleType::OpaqueFd);
            let bigger = BufferDescriptor {
                size: 4 * size,
                ..desc.clone()
            };
            // Only where the fd says how much memory it holds can the hal
            // check; elsewhere (NVIDIA) a size other than the exporter's is
            // invalid usage that neither the hal nor the test can see.
            sized = match &memory {
                Ok(m) => reports_size(&m.fd),
                Err(_) => false,
            };
            let r = memory.map(|m| {
                if sized {
                    a.device
                        .import_buffer(&bigger, ExternalHandle::OpaqueFd(m.fd))
                } else {
                    Err(BufferError::External(ExternalError::TooSmall {
                        size,
                        required: 4 * size,
                    }))
                }
            });
            if !sized {
                ctx.note("opaque fds here do not report their size: a larger import not tried");
            }
            // A resource not created for export as this type is not exportable.
            let plain = a
                .device
                .create_buffer(&desc)
                .map_err(|e| format!("creating a plain buffer: {e}"))?;
            let not_exportable = a
                .device
                .export_buffer_memory(&plain, ExternalHandleType::OpaqueFd);
            a.device.destroy_buffer(plain);
            a.device.destroy_buffer(exported);
            check!(
                matches!(
                    r,
                    Ok(Err(BufferError::External(ExternalError::TooSmall { required, .. })))
                        if required == 4 * size
                ),
                "importing {} bytes from a {size}-byte export: {r:?}",
                4 * size
            );
            check!(
                matches!(not_exportable, Err(ExternalError::NotExportable(_))),
                "exporting a plain buffer: {not_exportable:?}"
            );
        }
        check_fds(fds, "too small")?;
    }

    // Not memory at all: a pipe (refused by the hal on every backend) and,
    // where opaque fds are files the driver inspects (noop, lavapipe), a
    // regular file, a character device and a semaphore. Elsewhere handing
    // the driver an fd that is not of the handle type is invalid usage
    // (NVIDIA answers out of memory and is not sound afterwards).
    if let Some(pipe) = pipe()? {
        let r = unsafe {
            a.device
                .import_buffer(&desc, ExternalHandle::OpaqueFd(pipe))
        };
        check!(
            matches!(r, Err(BufferError::External(ExternalError::InvalidHandle))),
            "a pipe as an opaque fd: {r:?}"
        );
        check_fds(fds, "pipe")?;
    }
    if !sized {
        ctx.note("foreign fds not handed to this driver (invalid usage it need not catch)");
    }
    if sized {
        let file = temp_file(1 << 20)?;
        let r = unsafe {
            a.device
                .import_buffer(&desc, ExternalHandle::OpaqueFd(file))
        };
        check!(refused(ctx, &r), "a regular file as an opaque fd: {r:?}");
        check_fds(fds, "regular file")?;
    }
    if sized {
        // A file smaller than the buffer, whatever it holds: `TooSmall` on
        // every backend (the size is read before the contents).
        let file = temp_file(16)?;
        let r = unsafe {
            a.device
                .import_buffer(&desc, ExternalHandle::OpaqueFd(file))
        };
        check!(
            matches!(
                r,
                Err(BufferError::External(ExternalError::TooSmall { required, .. }))
                    if required == desc.size
            ),
            "a 16-byte file for a {}-byte buffer: {r:?}",
            desc.size
        );
        check_fds(fds, "small file")?;
    }
    if sized {
        let null = OwnedFd::from(File::open("/dev/null")?);
        let r = unsafe {
            a.device
                .import_buffer(&desc, ExternalHandle::OpaqueFd(null))
        };
        check!(refused(ctx, &r), "/dev/null as an opaque fd: {r:?}");
        check_fds(fds, "/dev/null")?;
    }

    // A semaphore's fd is not memory.
    let sem_desc = ExternalSemaphoreDescriptor {
        handle_type: ExternalSemaphoreType::OpaqueFd,
        kind: SemaphoreKind::Binary,
    };
    let sem_caps = ctx.adapter.external_semaphore_capabilities(&sem_desc);
    if sem_caps.exportable && sized {
        if let Some(s) = Side::open(
            ctx,
            HalFeatures::EXTERNAL_MEMORY_FD | HalFeatures::EXTERNAL_SEMAPHORE_FD,
        )? {
            let fds = open_fds();
            // SAFETY: destroyed below; nothing is submitted.
            unsafe {
                let sem = s
                    .device
                    .create_external_semaphore(&sem_desc)
                    .map_err(|e| format!("creating a semaphore: {e}"))?;
                let fd = s.device.export_semaphore(&sem);
                let r = fd.map(|fd| s.device.import_buffer(&desc, ExternalHandle::OpaqueFd(fd)));
                s.device.destroy_external_semaphore(sem);
                check!(
                    matches!(r, Ok(Err(BufferError::External(_)))),
                    "a semaphore fd as memory: {r:?}"
                );
            }
            check_fds(fds, "semaphore fd")?;
            s.check_clean("semaphore device")?;
        }
    }

    // Host pointers that are not aligned, by address or by size.
    let host_caps = ctx
        .adapter
        .external_buffer_capabilities(&desc, ExternalHandleType::HostAllocation);
    if host && host_caps.importable {
        let align = host_caps.host_pointer_alignment.max(1) as usize;
        let layout = std::alloc::Layout::from_size_align(2 * size as usize, align)?;
        // SAFETY: non-zero size.
        let raw = unsafe { std::alloc::alloc_zeroed(layout) };
        let base = std::ptr::NonNull::new(raw).ok_or("allocation failed")?;
        let results = if align > 1 {
            // SAFETY: the pointers lie inside the allocation; the imports fail.
            unsafe {
                let shifted = base.add(align / 2);
                let by_address = a
                    .device
                    .import_buffer(&desc, ExternalHandle::HostPointer { ptr: shifted, size });
                let by_size = a.device.import_buffer(
                    &BufferDescriptor {
                        size: 16,
                        ..desc.clone()
                    },
                    ExternalHandle::HostPointer {
                        ptr: base,
                        size: (align / 2) as u64,
                    },
                );
                Some((by_address, by_size))
            }
        } else {
            None
        };
        // SAFETY: allocated above with this layout; no buffer was made on it.
        unsafe { std::alloc::dealloc(raw, layout) };
        if let Some((by_address, by_size)) = results {
            check!(
                matches!(
                    by_address,
                    Err(BufferError::External(ExternalError::Misaligned {
                        what: "pointer",
                        ..
                    }))
                ),
                "an unaligned host pointer: {by_address:?}"
            );
            check!(
                matches!(
                    by_size,
                    Err(BufferError::External(ExternalError::Misaligned {
                        what: "size",
                        ..
                    }))
                ),
                "an unaligned host allocation size: {by_size:?}"
            );
        }
    }

    // Handle types the capability query says no to are refused when creating.
    for ht in [
        ExternalHandleType::OpaqueFd,
        ExternalHandleType::DmaBuf,
        ExternalHandleType::HostAllocation,
    ] {
        let export = BufferDescriptor {
            memory: Memory::External(ExternalMemory::export(ht)),
            ..desc.clone()
        };
        if ctx
            .adapter
            .external_buffer_capabilities(&export, ht)
            .exportable
        {
            continue;
        }
        // SAFETY: destroyed if it were made.
        let r = unsafe { a.device.create_buffer(&export) };
        let refused = matches!(
            r,
            Err(BufferError::External(ExternalError::Unsupported { .. }))
        );
        if let Ok(buffer) = r {
            // SAFETY: never used.
            unsafe { a.device.destroy_buffer(buffer) };
        }
        check!(
            refused,
            "creating a buffer exportable as {} the query refused",
            ht.name()
        );
    }

    // A device opened without the feature refuses, closing the fd.
    let r = unsafe {
        ctx.device
            .import_buffer(&desc, ExternalHandle::OpaqueFd(temp_file(1 << 20)?))
    };
    check!(
        matches!(
            r,
            Err(BufferError::External(ExternalError::Unsupported { .. }))
        ),
        "an import on a device without EXTERNAL_MEMORY_FD: {r:?}"
    );
    check_fds(fds, "bad imports")?;
    a.check_clean("importer")?;
    Ok(Outcome::Pass)
}
