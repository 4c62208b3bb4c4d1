//! Sharing memory between two devices that know nothing of each other:
//! two instances in one process, each with its own device, as two APIs
//! (or two processes) would have.
//!
//! ```text
//! cargo run --example external_memory                     # Vulkan if present, else noop
//! cargo run --example external_memory -- --backend noop   # the noop backend
//! cargo run --example external_memory -- --size 4194304   # bytes to share (multiple of 4)
//! ```
//!
//! Device A creates a buffer whose memory is exportable as an opaque file
//! descriptor, writes a byte pattern into it (a copy from an upload
//! buffer), releases it to the outside world, and signals an exported
//! semaphore. Device B imports the memory and the semaphore, waits on the
//! semaphore, acquires the buffer, copies it into a readback buffer and
//! checks every byte. Where the adapter has no exportable semaphores
//! (lavapipe), A's fence is waited on instead, and the example says so.
//! At the end it checks that every fd it received was closed.
//!
//! On an error the example reports it and exits; a long-lived program would
//! also destroy what it had made so far.

use std::error::Error;
use std::process::ExitCode;

use keel_hal::wgt;
use keel_hal::{
    Api, BufferBarrier, BufferCopy, BufferDescriptor, BufferUses, DeviceDescriptor, ExposedAdapter,
    ExternalHandle, ExternalHandleType, ExternalMemory, ExternalSemaphoreDescriptor,
    ExternalSemaphoreType, ExternalSubmission, HalFeatures, InstanceDescriptor, InstanceFlags,
    Memory, OwnershipTransfer, SemaphoreKind, SemaphoreSignal, SemaphoreWait, StateTransition,
};
// The trait set.
use keel_hal::{Adapter as _, CommandEncoder as _, Device as _, Instance as _, Queue as _};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

struct Options {
    backend: Option<String>,
    size: u64,
}

fn parse_options() -> Result<Options> {
    let mut options = Options {
        backend: None,
        size: 1 << 20,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--backend" => options.backend = Some(args.next().ok_or("--backend needs a name")?),
            "--size" => {
                let n = args.next().ok_or("--size needs a number of bytes")?;
                options.size = n.parse()?;
                if options.size == 0 || options.size % 4 != 0 {
                    return Err("--size must be a positive multiple of 4".into());
                }
            }
            other => {
                return Err(format!(
                    "unknown argument {other:?} (use --backend vulkan|noop, --size BYTES)"
                )
                .into())
            }
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    env_logger::init();
    let result = parse_options().and_then(|options| match options.backend.as_deref() {
        Some("noop") => run::<keel_hal::noop::Api>(options.size),
        #[cfg(feature = "vulkan")]
        Some("vulkan") => run::<keel_hal::vulkan::Api>(options.size),
        Some(other) => Err(format!("unknown backend {other:?}").into()),
        #[cfg(feature = "vulkan")]
        None => run::<keel_hal::vulkan::Api>(options.size).or_else(|e| {
            println!("Vulkan: {e}; running on noop instead");
            run::<keel_hal::noop::Api>(options.size)
        }),
        #[cfg(not(feature = "vulkan"))]
        None => run::<keel_hal::noop::Api>(options.size),
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("external_memory: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Open file descriptors of this process.
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

/// A new instance of `A` and its first adapter that can share memory as opaque fds.
fn instance<A: Api>(name: &'static str) -> Result<(A::Instance, ExposedAdapter<A>)> {
    let desc = InstanceDescriptor {
        name,
        flags: if cfg!(debug_assertions) {
            InstanceFlags::VALIDATION
        } else {
            InstanceFlags::empty()
        },
        ..Default::default()
    };
    // SAFETY: the system's Vulkan loader (if any) is a real one.
    let instance = unsafe { A::Instance::init(&desc) }?;
    // SAFETY: the instance is live.
    let adapter = unsafe { instance.enumerate_adapters() }
        .into_iter()
        .find(|a| {
            a.capabilities
                .hal_features
                .contains(HalFeatures::EXTERNAL_MEMORY_FD)
        })
        .ok_or("no adapter shares memory as opaque fds (EXTERNAL_MEMORY_FD)")?;
    Ok((instance, adapter))
}

/// The semaphore both sides can use, if the adapter exports one.
fn semaphore_kind<A: Api>(adapter: &ExposedAdapter<A>) -> Option<ExternalSemaphoreDescriptor> {
    if !adapter
        .capabilities
        .hal_features
        .contains(HalFeatures::EXTERNAL_SEMAPHORE_FD)
    {
        return None;
    }
    [
        SemaphoreKind::Timeline { initial_value: 0 },
        SemaphoreKind::Binary,
    ]
    .into_iter()
    .map(|kind| ExternalSemaphoreDescriptor {
        handle_type: ExternalSemaphoreType::OpaqueFd,
        kind,
    })
    .find(|desc| {
        let caps = adapter.adapter.external_semaphore_capabilities(desc);
        caps.exportable && caps.importable
    })
}

fn barrier<B: ?Sized>(buffer: &B, from: BufferUses, to: BufferUses) -> BufferBarrier<'_, B> {
    BufferBarrier {
        buffer,
        usage: StateTransition { from, to },
    }
}

fn run<A: Api>(size: u64) -> Result<()> {
    let fds_before = open_fds();
    let (instance_a, adapter_a) = instance::<A>("keel-hal external_memory: A")?;
    let (instance_b, adapter_b) = instance::<A>("keel-hal external_memory: B")?;
    let ht = ExternalHandleType::OpaqueFd;
    let desc = BufferDescriptor {
        label: Some("shared"),
        size,
        usage: wgt::BufferUsages::COPY_SRC | wgt::BufferUsages::COPY_DST,
        memory: Memory::External(ExternalMemory::export(ht)),
    };
    let caps = adapter_a.adapter.external_buffer_capabilities(&desc, ht);
    if !(caps.exportable && caps.importable) {
        return Err(format!(
            "{} buffers cannot be exported and imported: {caps:?}",
            ht.name()
        )
        .into());
    }
    let semaphore = semaphore_kind(&adapter_a).filter(|_| semaphore_kind(&adapter_b).is_some());
    let mut features = HalFeatures::EXTERNAL_MEMORY_FD;
    if semaphore.is_some() {
        features |= HalFeatures::EXTERNAL_SEMAPHORE_FD;
    }
    let open = DeviceDescriptor {
        required_hal_features: features,
        ..Default::default()
    };
    println!(
        "backend {}: device A on {:?}, device B on {:?} (separate instances)",
        instance_a.backend(),
        adapter_a.info.name,
        adapter_b.info.name
    );
    let bytes: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();

    // SAFETY: every submission is waited for before its objects are
    // destroyed; everything is destroyed before its device, and the
    // devices before their instances.
    unsafe {
        let a = adapter_a.adapter.open(&open)?;
        let b = adapter_b.adapter.open(&open)?;
        let fence_a = a.device.create_fence()?;
        let fence_b = b.device.create_fence()?;

        // Device A: upload, copy into exportable memory, release it, signal.
        let shared = a.device.create_buffer(&desc)?;
        let upload = a.device.create_buffer(&BufferDescriptor {
            label: Some("upload"),
            size,
            usage: wgt::BufferUsages::COPY_SRC | wgt::BufferUsages::MAP_WRITE,
            memory: Memory::Upload,
        })?;
        let map = a.device.map_buffer(&upload)?;
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), map.ptr.as_ptr(), bytes.len());
        let exported = a.device.export_buffer_memory(&shared, ht)?;
        println!(
            "A: exported a {size}-byte buffer as an {} ({} bytes of memory)",
            ht.name(),
            exported.size
        );
        let sem_a = match &semaphore {
            Some(d) => Some(a.device.create_external_semaphore(d)?),
            None => None,
        };
        let mut encoder_a = a.device.create_command_encoder(&Default::default())?;
        encoder_a.begin_encoding(Some("A writes"))?;
        encoder_a.transition_buffers(&[
            barrier(&upload, BufferUses::empty(), BufferUses::COPY_SRC),
            barrier(&shared, BufferUses::empty(), BufferUses::COPY_DST),
        ]);
        let whole = BufferCopy {
            src_offset: 0,
            dst_offset: 0,
            size,
        };
        encoder_a.copy_buffer_to_buffer(&upload, &shared, &[whole]);
        encoder_a.transfer_ownership(
            OwnershipTransfer::Release,
            &[barrier(&shared, BufferUses::COPY_DST, BufferUses::COPY_DST)],
            &[],
        );
        let commands_a = encoder_a.end_encoding()?;
        let signals: Vec<_> = sem_a
            .iter()
            .map(|s| SemaphoreSignal {
                semaphore: s,
                value: 1,
                stages: Default::default(),
            })
            .collect();
        a.queue.submit_external(&ExternalSubmission {
            command_buffers: &[&commands_a],
            waits: &[],
            signals: &signals,
            fence: Some((&fence_a, 1)),
        })?;

        // Device B: import memory (and semaphore), wait, acquire, read back.
        let sem_b = match (&semaphore, &sem_a) {
            (Some(d), Some(s)) => Some(
                b.device
                    .import_semaphore(d, a.device.export_semaphore(s)?)?,
            ),
            _ => None,
        };
        match &semaphore {
            Some(d) => println!(
                "A: signals an exported {} ({:?}); B waits on it",
                d.handle_type.name(),
                d.kind
            ),
            None => {
                println!(
                    "the adapter exports no semaphores (EXTERNAL_SEMAPHORE_FD or the \
                     capability query says no): B starts after waiting on A's fence"
                );
                a.device.wait(&fence_a, 1, None)?;
            }
        }
        let imported = b.device.import_buffer(
            &BufferDescriptor {
                memory: Memory::Device,
                ..desc.clone()
            },
            ExternalHandle::OpaqueFd(exported.fd),
        )?;
        let readback = b.device.create_buffer(&BufferDescriptor {
            label: Some("readback"),
            size,
            usage: wgt::BufferUsages::COPY_DST | wgt::BufferUsages::MAP_READ,
            memory: Memory::Readback,
        })?;
        let mut encoder_b = b.device.create_command_encoder(&Default::default())?;
        encoder_b.begin_encoding(Some("B reads"))?;
        encoder_b.transfer_ownership(
            OwnershipTransfer::Acquire,
            &[barrier(
                &imported,
                BufferUses::COPY_DST,
                BufferUses::COPY_SRC,
            )],
            &[],
        );
        encoder_b.transition_buffers(&[barrier(
            &readback,
            BufferUses::empty(),
            BufferUses::COPY_DST,
        )]);
        encoder_b.copy_buffer_to_buffer(&imported, &readback, &[whole]);
        encoder_b.transition_buffers(&[barrier(
            &readback,
            BufferUses::COPY_DST,
            BufferUses::MAP_READ,
        )]);
        let commands_b = encoder_b.end_encoding()?;
        let waits: Vec<_> = sem_b
            .iter()
            .map(|s| SemaphoreWait {
                semaphore: s,
                value: 1,
                stages: Default::default(),
            })
            .collect();
        b.queue.submit_external(&ExternalSubmission {
            command_buffers: &[&commands_b],
            waits: &waits,
            signals: &[],
            fence: Some((&fence_b, 1)),
        })?;
        b.device.wait(&fence_b, 1, None)?;
        a.device.wait(&fence_a, 1, None)?;
        let map = b.device.map_buffer(&readback)?;
        let got = std::slice::from_raw_parts(map.ptr.as_ptr(), size as usize);
        let verified = match got.iter().zip(&bytes).position(|(g, e)| g != e) {
            None => true,
            Some(at) => {
                println!(
                    "B: byte {at} is {:#04x}, expected {:#04x}",
                    got[at], bytes[at]
                );
                false
            }
        };

        encoder_a.reset_all([commands_a]);
        encoder_b.reset_all([commands_b]);
        a.device.destroy_command_encoder(encoder_a);
        b.device.destroy_command_encoder(encoder_b);
        b.device.destroy_buffer(readback);
        b.device.destroy_buffer(imported);
        a.device.destroy_buffer(upload);
        a.device.destroy_buffer(shared);
        if let Some(s) = sem_b {
            b.device.destroy_external_semaphore(s);
        }
        if let Some(s) = sem_a {
            a.device.destroy_external_semaphore(s);
        }
        a.device.destroy_fence(fence_a);
        b.device.destroy_fence(fence_b);
        let validation = instance_a.validation_error_count() + instance_b.validation_error_count();
        drop((a, b, adapter_a, adapter_b, instance_a, instance_b));
        if !verified {
            return Err("device B did not read what device A wrote".into());
        }
        println!(
            "B: imported the {} and read back all {size} bytes: every byte matches",
            ht.name()
        );
        if cfg!(debug_assertions) {
            println!("validation errors: {validation}");
        }
    }
    let fds_after = open_fds();
    println!("open fds: {fds_before} before, {fds_after} after");
    if fds_after != fds_before {
        return Err(format!("{} fd(s) leaked", fds_after.abs_diff(fds_before)).into());
    }
    Ok(())
}
