//! What another API needs from keel-hal to share memory and semaphores
//! (docs/interop-cuda.md): the adapter's identity (device and driver
//! UUIDs), what an export is (dedicated, memory type), fds that never leak
//! into child processes (close-on-exec), and host access to timeline
//! semaphores (value, signal, wait), with the same typed errors on every
//! backend.

use std::os::fd::{AsRawFd as _, OwnedFd};
use std::time::{Duration, Instant};

use keel_hal::{
    Adapter, Api, Backend, BufferDescriptor, Device, ExportedMemory, ExternalError,
    ExternalHandleType, ExternalSemaphoreDescriptor, ExternalSemaphoreType, HalFeatures,
    MemoryProperties, SemaphoreKind, SemaphoreSignal, SemaphoreWait,
};

use crate::external::texture_desc;
use crate::external_side::{check_fds, open_fds, Side};
use crate::harness::{skip, Ctx, Failure, Outcome, TestResult};

exclusive_conformance_tests!(
    adapter_ids_are_stable,
    exported_memory_reports_its_allocation,
    exported_fds_are_close_on_exec,
    timeline_semaphores_from_the_host,
    binary_semaphores_have_no_host_value,
);

/// `O_CLOEXEC` as `/proc/self/fdinfo` prints it in `flags:` (octal 02000000).
const O_CLOEXEC: u32 = 0o2_000_000;

/// Whether `fd` is close-on-exec, from `/proc/self/fdinfo/<fd>`.
pub fn is_close_on_exec(fd: &OwnedFd) -> Result<bool, Failure> {
    let path = format!("/proc/self/fdinfo/{}", fd.as_raw_fd());
    let info = std::fs::read_to_string(&path)?;
    let flags = info
        .lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .ok_or_else(|| format!("{path} has no flags line:\n{info}"))?;
    Ok(u32::from_str_radix(flags.trim(), 8)? & O_CLOEXEC != 0)
}

/// The device and driver UUIDs (and LUID) are the adapter's, not the
/// instance's: two instances report the same ones. Vulkan's are the
/// driver's (`VkPhysicalDeviceIDProperties`), never all zero; noop's are
/// fixed made-up ones.
fn adapter_ids_are_stable<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let (_first_instance, first) = ctx.new_instance(&ctx.instance_desc)?;
    let (_second_instance, second) = ctx.new_instance(&ctx.instance_desc)?;
    let (a, b) = (&first.info, &second.info);
    check_eq!(
        b.device_uuid,
        a.device_uuid,
        "device UUID of a second instance"
    );
    check_eq!(
        b.driver_uuid,
        a.driver_uuid,
        "driver UUID of a second instance"
    );
    check_eq!(
        b.device_luid,
        a.device_luid,
        "device LUID of a second instance"
    );
    check_eq!(
        b.device_node_mask,
        a.device_node_mask,
        "device node mask of a second instance"
    );
    check!(
        a.device_uuid != [0; 16],
        "{}: the device UUID is all zero",
        a.name
    );
    check!(
        a.driver_uuid != [0; 16],
        "{}: the driver UUID is all zero",
        a.name
    );
    if a.device_luid.is_none() {
        check_eq!(a.device_node_mask, 0, "node mask without a LUID");
    }
    if a.backend == Backend::Noop {
        check_eq!(a.device_luid, None, "noop's LUID");
    }
    ctx.note(format!(
        "device UUID {}, driver UUID {}",
        hex(&a.device_uuid),
        hex(&a.driver_uuid)
    ));
    Ok(Outcome::Pass)
}

/// Bytes as lowercase hex.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A 64 KiB buffer to export as `ht`.
fn buffer_desc(ht: ExternalHandleType) -> BufferDescriptor<'static> {
    crate::external::buffer_desc(64 * 1024, ht)
}

/// Checks what an export reports besides its fd.
fn check_report<A: Api>(
    ctx: &Ctx<A>,
    memory: &ExportedMemory,
    what: &str,
    at_least: u64,
) -> Result<(), Failure> {
    check!(memory.dedicated, "{what}: not reported dedicated");
    check!(
        memory.size >= at_least,
        "{what}: {} bytes exported for {at_least}",
        memory.size
    );
    check!(
        memory
            .memory_properties
            .contains(MemoryProperties::DEVICE_LOCAL),
        "{what}: memory properties {:?} lack DEVICE_LOCAL (keel-hal picks a device-local type first)",
        memory.memory_properties
    );
    match ctx.backend {
        Backend::Noop => check_eq!(memory.memory_type_index, None, "{what}: noop type index"),
        Backend::Vulkan => check!(
            memory.memory_type_index.is_some_and(|i| i < 32),
            "{what}: Vulkan memory type index {:?}",
            memory.memory_type_index
        ),
    }
    Ok(())
}

/// Buffers and textures exported as opaque fds report a dedicated
/// allocation, device-local memory, and (Vulkan) the memory type index,
/// the same on every export of the same resource.
fn exported_memory_reports_its_allocation<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let ht = ExternalHandleType::OpaqueFd;
    let caps = ctx
        .adapter
        .external_buffer_capabilities(&buffer_desc(ht), ht);
    if !caps.exportable {
        return skip(format!("opaque-fd buffers are not exportable: {caps:?}"));
    }
    let Some(side) = Side::open(ctx, HalFeatures::EXTERNAL_MEMORY_FD)? else {
        return skip("the adapter lacks EXTERNAL_MEMORY_FD");
    };
    let fds = open_fds();
    // SAFETY: the resources are destroyed before the device, unused by the GPU.
    unsafe {
        let buffer = side.device.create_buffer(&buffer_desc(ht))?;
        let result = (|| -> Result<(), Failure> {
            let first = side.device.export_buffer_memory(&buffer, ht)?;
            check_report(ctx, &first, "buffer", 64 * 1024)?;
            let second = side.device.export_buffer_memory(&buffer, ht)?;
            check_eq!(second.size, first.size, "size of a second export");
            check_eq!(
                second.memory_properties,
                first.memory_properties,
                "memory properties of a second export"
            );
            check_eq!(
                second.memory_type_index,
                first.memory_type_index,
                "memory type index of a second export"
            );
            Ok(())
        })();
        side.device.destroy_buffer(buffer);
        result?;

        let tdesc = texture_desc(ht);
        let tcaps = ctx.adapter.external_texture_capabilities(&tdesc, ht)?;
        if tcaps.exportable {
            let texture = side.device.create_texture(&tdesc)?;
            let result = side
                .device
                .export_texture_memory(&texture, ht)
                .map_err(Failure::from)
                .and_then(|m| check_report(ctx, &m, "texture", 64 * 64 * 4));
            side.device.destroy_texture(texture);
            result?;
        } else {
            ctx.note(format!("textures not exportable as opaque fds: {tcaps:?}"));
        }
    }
    check_fds(fds, "exported memory reports")?;
    side.check_clean("exporter")?;
    Ok(Outcome::Pass)
}

/// Every fd keel-hal hands out is close-on-exec, whatever the driver made
/// (lavapipe's memfds are not): buffer and texture memory (opaque fd and,
/// where the adapter has it, dma-buf) and semaphores.
fn exported_fds_are_close_on_exec<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let mut checked = Vec::new();
    let fds = open_fds();
    for (ht, feature) in [
        (
            ExternalHandleType::OpaqueFd,
            HalFeatures::EXTERNAL_MEMORY_FD,
        ),
        (
            ExternalHandleType::DmaBuf,
            HalFeatures::EXTERNAL_MEMORY_DMA_BUF,
        ),
    ] {
        let caps = ctx
            .adapter
            .external_buffer_capabilities(&buffer_desc(ht), ht);
        let Some(side) = Side::open(ctx, feature)?.filter(|_| caps.exportable) else {
            ctx.note(format!("{} buffers not exportable here", ht.name()));
            continue;
        };
        // SAFETY: destroyed before the device; the GPU never uses them.
        unsafe {
            let buffer = side.device.create_buffer(&buffer_desc(ht))?;
            let result = side
                .device
                .export_buffer_memory(&buffer, ht)
                .map_err(Failure::from)
                .and_then(|m| is_close_on_exec(&m.fd));
            side.device.destroy_buffer(buffer);
            check!(
                result?,
                "the {} buffer export is not close-on-exec",
                ht.name()
            );
            checked.push(format!("{} buffer", ht.name()));

            let tdesc = texture_desc(ht);
            if ctx
                .adapter
                .external_texture_capabilities(&tdesc, ht)?
                .exportable
            {
                let texture = side.device.create_texture(&tdesc)?;
                let result = side
                    .device
                    .export_texture_memory(&texture, ht)
                    .map_err(Failure::from)
                    .and_then(|m| is_close_on_exec(&m.fd));
                side.device.destroy_texture(texture);
                check!(
                    result?,
                    "the {} texture export is not close-on-exec",
                    ht.name()
                );
                checked.push(format!("{} texture", ht.name()));
            }
        }
        side.check_clean("exporter")?;
    }
    let sem_desc = ExternalSemaphoreDescriptor {
        handle_type: ExternalSemaphoreType::OpaqueFd,
        kind: SemaphoreKind::Binary,
    };
    let caps = ctx.adapter.external_semaphore_capabilities(&sem_desc);
    if let Some(side) =
        Side::open(ctx, HalFeatures::EXTERNAL_SEMAPHORE_FD)?.filter(|_| caps.exportable)
    {
        // SAFETY: destroyed before the device; never submitted.
        unsafe {
            let semaphore = side.device.create_external_semaphore(&sem_desc)?;
            let result = side
                .device
                .export_semaphore(&semaphore)
                .map_err(Failure::from)
                .and_then(|fd| is_close_on_exec(&fd));
            side.device.destroy_external_semaphore(semaphore);
            check!(result?, "a semaphore export is not close-on-exec");
        }
        checked.push("opaque-fd semaphore".to_string());
        side.check_clean("exporter")?;
    } else {
        ctx.note("opaque-fd semaphores not exportable here");
    }
    check_fds(fds, "close-on-exec exports")?;
    if checked.is_empty() {
        return skip("the adapter exports nothing as an fd");
    }
    ctx.note(format!("close-on-exec: {}", checked.join(", ")));
    Ok(Outcome::Pass)
}

/// A timeline semaphore's descriptor.
fn timeline(initial_value: u64) -> ExternalSemaphoreDescriptor {
    ExternalSemaphoreDescriptor {
        handle_type: ExternalSemaphoreType::OpaqueFd,
        kind: SemaphoreKind::Timeline { initial_value },
    }
}

/// Two devices of the configuration's adapter, or why there are not.
type Sides<A> = Result<(Side<A>, Side<A>), String>;

/// Opens two sides with external semaphores, or says why not.
fn semaphore_sides<A: Api>(
    ctx: &Ctx<A>,
    desc: &ExternalSemaphoreDescriptor,
) -> Result<Sides<A>, Failure> {
    let caps = ctx.adapter.external_semaphore_capabilities(desc);
    if !(caps.exportable && caps.importable) {
        return Ok(Err(format!(
            "{:?} opaque-fd semaphores are not exportable and importable: {caps:?}",
            desc.kind
        )));
    }
    let features = HalFeatures::EXTERNAL_SEMAPHORE_FD;
    match (Side::open(ctx, features)?, Side::open(ctx, features)?) {
        (Some(a), Some(b)) => Ok(Ok((a, b))),
        _ => Ok(Err(format!("the adapter lacks {features:?}"))),
    }
}

/// Host value, signal and wait of a timeline semaphore shared by two
/// devices: a host signal on A is seen on B, a timeline never moves back
/// (typed error), waits time out, and a host signal releases a GPU wait
/// whose GPU signal a host wait on the other device then sees.
fn timeline_semaphores_from_the_host<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let desc = timeline(5);
    let (a, b) = match semaphore_sides(ctx, &desc)? {
        Ok(sides) => sides,
        Err(reason) => return skip(reason),
    };
    let fds = open_fds();
    // SAFETY: every submission is waited for before the semaphores go;
    // host signals stay below pending signals (none is pending at each).
    unsafe {
        let sem_a = a.device.create_external_semaphore(&desc)?;
        let result = a
            .device
            .export_semaphore(&sem_a)
            .map_err(Failure::from)
            .and_then(|fd| Ok(b.device.import_semaphore(&timeline(0), fd)?))
            .and_then(|sem_b| {
                let r = host_ops(&a, &b, &sem_a, &sem_b);
                b.device.destroy_external_semaphore(sem_b);
                r
            });
        a.device.destroy_external_semaphore(sem_a);
        result?;
    }
    check_fds(fds, "timeline host operations")?;
    a.check_clean("device A")?;
    b.check_clean("device B")?;
    Ok(Outcome::Pass)
}

/// The body of [`timeline_semaphores_from_the_host`].
///
/// # Safety
/// `sem_a` is A's, `sem_b` B's import of it, at value 5, nothing pending.
unsafe fn host_ops<A: Api>(
    a: &Side<A>,
    b: &Side<A>,
    sem_a: &A::ExternalSemaphore,
    sem_b: &A::ExternalSemaphore,
) -> Result<(), Failure> {
    // SAFETY: forwarded contract; no signal is pending during these host operations.
    unsafe {
        check_eq!(a.device.semaphore_value(sem_a)?, 5, "initial value on A");
        check_eq!(b.device.semaphore_value(sem_b)?, 5, "initial value on B");
        a.device.signal_semaphore(sem_a, 7)?;
        check_eq!(
            b.device.semaphore_value(sem_b)?,
            7,
            "B after A's host signal"
        );
        for bad in [7, 3] {
            check_eq!(
                b.device.signal_semaphore(sem_b, bad),
                Err(ExternalError::ValueNotIncreasing {
                    value: bad,
                    current: 7
                }),
                "host signal of {bad} at 7"
            );
        }
        check_eq!(a.device.semaphore_value(sem_a)?, 7, "value after refusals");
        check!(
            b.device.wait_semaphore(sem_b, 7, Some(Duration::ZERO))?,
            "a wait for a reached value did not return true"
        );
        let start = Instant::now();
        check!(
            !b.device
                .wait_semaphore(sem_b, 8, Some(Duration::from_millis(20)))?,
            "a wait for a value nobody signals did not time out"
        );
        check!(
            start.elapsed() >= Duration::from_millis(15),
            "a 20 ms wait timed out after {:?}",
            start.elapsed()
        );
    }

    // A's queue waits for 10 (GPU side), then signals 11. B waits for
    // 11 on the host from another thread, started first; a third
    // signals 10 from the host a little later. (Noop runs the GPU wait
    // inside `submit_external`, which then blocks until the host
    // signal; Vulkan's returns at once and `run` waits for the fence.)
    let delay = Duration::from_millis(50);
    let start = Instant::now();
    std::thread::scope(|s| -> Result<(), Failure> {
        let waiter = s.spawn(|| {
            // SAFETY: the semaphore outlives the scope; A's submission
            // below signals 11.
            let seen = unsafe {
                b.device
                    .wait_semaphore(sem_b, 11, Some(Duration::from_secs(10)))
            };
            (seen, start.elapsed())
        });
        let signaller = s.spawn(|| {
            std::thread::sleep(delay);
            // SAFETY: the semaphore outlives the scope; the only pending
            // signal is the submission's 11, above 10.
            let signalled = unsafe { a.device.signal_semaphore(sem_a, 10) };
            (signalled, start.elapsed())
        });
        let waits = [SemaphoreWait {
            semaphore: sem_a,
            value: 10,
            stages: Default::default(),
        }];
        let signals = [SemaphoreSignal {
            semaphore: sem_a,
            value: 11,
            stages: Default::default(),
        }];
        // SAFETY: nothing recorded; the wait is satisfied by the signaller.
        let ran = unsafe { a.run(&waits, &signals, |_| {}) };
        let (signalled, signalled_at) = signaller
            .join()
            .map_err(|_| Failure::from("the signalling thread panicked"))?;
        let (seen, seen_at) = waiter
            .join()
            .map_err(|_| Failure::from("the waiting thread panicked"))?;
        signalled?;
        ran?;
        check!(seen?, "B's host wait for 11 timed out");
        check!(
            seen_at >= delay,
            "B's wait for 11 returned after {seen_at:?}, before the host signal of 10 \
             that the GPU waited for ({signalled_at:?})"
        );
        Ok(())
    })?;
    // SAFETY: both semaphores are their devices'.
    let (value_a, value_b) = unsafe {
        (
            a.device.semaphore_value(sem_a)?,
            b.device.semaphore_value(sem_b)?,
        )
    };
    check_eq!(value_a, 11, "A's value after the GPU signal");
    check_eq!(value_b, 11, "B's value after the GPU signal");
    Ok(())
}

/// Host operations on a binary semaphore are `NotTimeline`, naming the
/// operation, on every backend.
fn binary_semaphores_have_no_host_value<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let desc = ExternalSemaphoreDescriptor {
        handle_type: ExternalSemaphoreType::OpaqueFd,
        kind: SemaphoreKind::Binary,
    };
    let caps = ctx.adapter.external_semaphore_capabilities(&desc);
    if !caps.exportable {
        return skip(format!("binary opaque-fd semaphores: {caps:?}"));
    }
    let Some(side) = Side::open(ctx, HalFeatures::EXTERNAL_SEMAPHORE_FD)? else {
        return skip("the adapter lacks EXTERNAL_SEMAPHORE_FD");
    };
    // SAFETY: destroyed before the device; never submitted.
    unsafe {
        let semaphore = side.device.create_external_semaphore(&desc)?;
        let d = &side.device;
        let got = (
            d.semaphore_value(&semaphore).err(),
            d.signal_semaphore(&semaphore, 1).err(),
            d.wait_semaphore(&semaphore, 1, Some(Duration::ZERO)).err(),
        );
        d.destroy_external_semaphore(semaphore);
        check_eq!(
            got,
            (
                Some(ExternalError::NotTimeline("semaphore_value")),
                Some(ExternalError::NotTimeline("signal_semaphore")),
                Some(ExternalError::NotTimeline("wait_semaphore")),
            ),
            "host operations on a binary semaphore"
        );
    }
    side.check_clean("device")?;
    Ok(Outcome::Pass)
}
