//! Quick smoke tests of external memory on the first Vulkan adapter: a
//! buffer exported by one device and imported by another holds the same
//! bytes; host allocations import; bad imports are typed errors that close
//! their fd. (The full suite lives in the conformance tests.)

#![cfg(feature = "vulkan")]

use std::os::fd::OwnedFd;
use std::ptr::NonNull;

use keel_hal::vulkan;
use keel_hal::wgt;
use keel_hal::{Adapter as _, CommandEncoder as _, Device as _, Instance as _, Queue as _};
use keel_hal::{
    BufferCopy, BufferDescriptor, BufferError, DeviceDescriptor, ExternalError, ExternalHandle,
    ExternalHandleType, ExternalMemory, HalFeatures, InstanceDescriptor, InstanceFlags, Memory,
};

#[path = "support/fds.rs"]
mod fds;
use fds::open_fds;

struct Setup {
    instance: vulkan::Instance,
    adapter: vulkan::Adapter,
    hal: HalFeatures,
    // Declared last: held until the instance is gone.
    _serial: std::sync::MutexGuard<'static, ()>,
}

/// The tests count the process's open fds: they run one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn setup() -> Option<Setup> {
    let serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let _ = env_logger::builder().is_test(true).try_init();
    let desc = InstanceDescriptor {
        name: "keel-hal external smoke",
        flags: InstanceFlags::VALIDATION,
        ..Default::default()
    };
    // SAFETY: the system loader is trusted.
    let instance = match unsafe { vulkan::Instance::init(&desc) } {
        Ok(i) => i,
        Err(e) => {
            println!("skipped: {e}");
            return None;
        }
    };
    // SAFETY: live instance.
    let exposed = unsafe { instance.enumerate_adapters() }
        .into_iter()
        .next()?;
    let hal = exposed.capabilities.hal_features;
    println!(
        "adapter {} ({}), hal {hal:?}",
        exposed.info.name, exposed.info.driver_info
    );
    Some(Setup {
        instance,
        adapter: exposed.adapter,
        hal,
        _serial: serial,
    })
}

fn open(setup: &Setup, features: HalFeatures) -> keel_hal::OpenDevice<vulkan::Api> {
    // SAFETY: dropped after everything made on it.
    unsafe {
        setup.adapter.open(&DeviceDescriptor {
            required_hal_features: features,
            ..Default::default()
        })
    }
    .expect("open")
}

/// Copies `src` into a new readback buffer on `device` and returns its bytes.
fn read_back(
    device: &vulkan::Device,
    queue: &vulkan::Queue,
    src: &vulkan::Buffer,
    size: u64,
) -> Vec<u8> {
    // SAFETY: everything is waited for and destroyed here.
    unsafe {
        let dst = device
            .create_buffer(&BufferDescriptor {
                size,
                usage: wgt::BufferUsages::COPY_DST | wgt::BufferUsages::MAP_READ,
                memory: Memory::Readback,
                ..Default::default()
            })
            .expect("readback");
        let mut encoder = device
            .create_command_encoder(&Default::default())
            .expect("encoder");
        encoder.begin_encoding(None).expect("begin");
        use keel_hal::{BufferBarrier, BufferUses as U};
        encoder.transition_buffers(&[BufferBarrier::new(&dst, U::empty(), U::COPY_DST)]);
        encoder.copy_buffer_to_buffer(
            src,
            &dst,
            &[BufferCopy {
                src_offset: 0,
                dst_offset: 0,
                size,
            }],
        );
        // The host-visibility rule (`BufferMapping`): a barrier to MAP_READ, then the fence wait.
        encoder.transition_buffers(&[BufferBarrier::new(&dst, U::COPY_DST, U::MAP_READ)]);
        let cb = encoder.end_encoding().expect("end");
        let fence = device.create_fence().expect("fence");
        queue.submit(&[&cb], &[], &fence, 1).expect("submit");
        assert!(device.wait(&fence, 1, None).expect("wait"));
        let map = device.map_buffer(&dst).expect("map");
        let out = std::slice::from_raw_parts(map.ptr.as_ptr(), size as usize).to_vec();
        encoder.reset_all([cb]);
        device.destroy_command_encoder(encoder);
        device.destroy_fence(fence);
        device.destroy_buffer(dst);
        out
    }
}

/// Fills `dst` on `device` with `bytes` (through an upload buffer).
fn write(device: &vulkan::Device, queue: &vulkan::Queue, dst: &vulkan::Buffer, bytes: &[u8]) {
    let size = bytes.len() as u64;
    // SAFETY: everything is waited for and destroyed here.
    unsafe {
        let src = device
            .create_buffer(&BufferDescriptor {
                size,
                usage: wgt::BufferUsages::COPY_SRC | wgt::BufferUsages::MAP_WRITE,
                memory: Memory::Upload,
                ..Default::default()
            })
            .expect("upload");
        let map = device.map_buffer(&src).expect("map");
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), map.ptr.as_ptr(), bytes.len());
        let mut encoder = device
            .create_command_encoder(&Default::default())
            .expect("encoder");
        encoder.begin_encoding(None).expect("begin");
        encoder.copy_buffer_to_buffer(
            &src,
            dst,
            &[BufferCopy {
                src_offset: 0,
                dst_offset: 0,
                size,
            }],
        );
        let cb = encoder.end_encoding().expect("end");
        let fence = device.create_fence().expect("fence");
        queue.submit(&[&cb], &[], &fence, 1).expect("submit");
        assert!(device.wait(&fence, 1, None).expect("wait"));
        encoder.reset_all([cb]);
        device.destroy_command_encoder(encoder);
        device.destroy_fence(fence);
        device.destroy_buffer(src);
    }
}

fn pattern(size: usize, seed: u8) -> Vec<u8> {
    (0..size)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

fn round_trip(setup: &Setup, ht: ExternalHandleType, feature: HalFeatures) {
    if !setup.hal.contains(feature) {
        println!("skipped {ht:?}: adapter lacks {feature:?}");
        return;
    }
    let usage = wgt::BufferUsages::COPY_SRC | wgt::BufferUsages::COPY_DST;
    let desc = BufferDescriptor {
        label: Some("external"),
        size: 64 * 1024,
        usage,
        memory: Memory::External(ExternalMemory::export(ht)),
    };
    let caps = setup.adapter.external_buffer_capabilities(&desc, ht);
    println!("{ht:?} buffer capabilities: {caps:?}");
    if !(caps.exportable && caps.importable) {
        println!("skipped {ht:?}: not exportable and importable");
        return;
    }
    let a = open(setup, feature);
    let b = open(setup, feature);
    let bytes = pattern(desc.size as usize, 7);
    let fds = open_fds();
    // SAFETY: everything is destroyed before the devices drop.
    unsafe {
        let exported = a.device.create_buffer(&desc).expect("exportable buffer");
        write(&a.device, &a.queue, &exported, &bytes);
        let memory = a
            .device
            .export_buffer_memory(&exported, ht)
            .expect("export");
        assert!(memory.size >= desc.size);
        let handle = match ht {
            ExternalHandleType::OpaqueFd => ExternalHandle::OpaqueFd(memory.fd),
            _ => ExternalHandle::DmaBuf {
                fd: memory.fd,
                drm_format_modifier: 0,
                planes: Default::default(),
            },
        };
        let imported = b.device.import_buffer(&desc, handle).expect("import");
        assert_eq!(read_back(&b.device, &b.queue, &imported, desc.size), bytes);
        b.device.destroy_buffer(imported);
        a.device.destroy_buffer(exported);
    }
    assert_eq!(open_fds(), fds, "fds leaked");
    assert_eq!(a.device.live_counts(), Default::default());
    assert_eq!(b.device.live_counts(), Default::default());
}

#[test]
fn buffer_round_trips() {
    let Some(setup) = setup() else { return };
    round_trip(
        &setup,
        ExternalHandleType::OpaqueFd,
        HalFeatures::EXTERNAL_MEMORY_FD,
    );
    round_trip(
        &setup,
        ExternalHandleType::DmaBuf,
        HalFeatures::EXTERNAL_MEMORY_DMA_BUF,
    );
    let validation = setup.instance.validation_counter();
    drop(setup);
    assert_eq!(validation.errors(), 0, "validation errors (see the log)");
}

/// A page-aligned host allocation, freed on drop.
struct HostAlloc {
    ptr: NonNull<u8>,
    layout: std::alloc::Layout,
}

impl HostAlloc {
    fn new(size: usize, align: usize) -> Self {
        let layout = std::alloc::Layout::from_size_align(size, align).expect("layout");
        // SAFETY: non-zero size.
        let ptr = NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) }).expect("alloc");
        Self { ptr, layout }
    }
}

impl Drop for HostAlloc {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

#[test]
fn host_pointer_imports_and_checks_alignment() {
    let Some(setup) = setup() else { return };
    if !setup.hal.contains(HalFeatures::EXTERNAL_MEMORY_HOST) {
        println!("skipped: no EXTERNAL_MEMORY_HOST");
        return;
    }
    let open = open(&setup, HalFeatures::EXTERNAL_MEMORY_HOST);
    let (device, queue) = (&open.device, &open.queue);
    let size = 64 * 1024;
    let host = HostAlloc::new(size, 64 * 1024);
    let bytes = pattern(size, 3);
    // SAFETY: `host` outlives the buffers; everything is destroyed below.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), host.ptr.as_ptr(), size);
        let desc = BufferDescriptor {
            size: size as u64,
            usage: wgt::BufferUsages::COPY_SRC | wgt::BufferUsages::COPY_DST,
            ..Default::default()
        };
        let handle = ExternalHandle::HostPointer {
            ptr: host.ptr,
            size: size as u64,
        };
        let buffer = device.import_buffer(&desc, handle).expect("host import");
        assert_eq!(read_back(device, queue, &buffer, size as u64), bytes);
        device.destroy_buffer(buffer);

        let misaligned = NonNull::new(host.ptr.as_ptr().add(16)).expect("non-null");
        let handle = ExternalHandle::HostPointer {
            ptr: misaligned,
            size: 4096,
        };
        let err = device.import_buffer(
            &BufferDescriptor {
                size: 4096,
                ..desc.clone()
            },
            handle,
        );
        assert!(
            matches!(
                err,
                Err(BufferError::External(ExternalError::Misaligned {
                    what: "pointer",
                    ..
                }))
            ),
            "{err:?}"
        );
    }
    assert_eq!(device.live_counts(), Default::default());
}

#[test]
fn bad_fd_imports_are_typed_and_close_the_fd() {
    let Some(setup) = setup() else { return };
    if !setup.hal.contains(HalFeatures::EXTERNAL_MEMORY_FD) {
        println!("skipped: no EXTERNAL_MEMORY_FD");
        return;
    }
    let open = open(&setup, HalFeatures::EXTERNAL_MEMORY_FD);
    let device = &open.device;
    let desc = BufferDescriptor {
        size: 64 * 1024,
        usage: wgt::BufferUsages::COPY_SRC,
        ..Default::default()
    };
    let fds = open_fds();
    // A regular file of 4 KiB: its size is known, and too small.
    let file = tempfile_of(4096);
    // SAFETY: the import fails before anything is created.
    let err = unsafe { device.import_buffer(&desc, ExternalHandle::OpaqueFd(file)) };
    assert!(
        matches!(
            err,
            Err(BufferError::External(ExternalError::TooSmall {
                size: 4096,
                ..
            }))
        ),
        "{err:?}"
    );
    assert_eq!(open_fds(), fds, "the fd of a failed import was not closed");
    // Big enough, but not a memory handle at all: the driver says no.
    let file = tempfile_of(1 << 20);
    // SAFETY: as above; the driver rejects the handle.
    let err = unsafe { device.import_buffer(&desc, ExternalHandle::OpaqueFd(file)) };
    println!("regular file as opaque fd: {err:?}");
    assert!(err.is_err());
    assert_eq!(open_fds(), fds, "the fd of a failed import was not closed");
    // A device without the feature refuses, closing the fd too.
    let plain = self::open(&setup, HalFeatures::empty());
    // Opening a device opens driver fds (NVIDIA): count from here.
    let fds = open_fds();
    let file = tempfile_of(1 << 20);
    // SAFETY: as above.
    let err = unsafe {
        plain
            .device
            .import_buffer(&desc, ExternalHandle::OpaqueFd(file))
    };
    assert!(
        matches!(
            err,
            Err(BufferError::External(ExternalError::Unsupported { .. }))
        ),
        "{err:?}"
    );
    assert_eq!(open_fds(), fds);
    assert_eq!(device.live_counts(), Default::default());
}

/// An unlinked temporary file of `len` bytes.
fn tempfile_of(len: u64) -> OwnedFd {
    let path =
        std::env::temp_dir().join(format!("keel-external-smoke-{}-{len}", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .expect("temp file");
    let _ = std::fs::remove_file(&path);
    file.set_len(len).expect("set_len");
    OwnedFd::from(file)
}

/// Writes `bytes` into a 64×64 RGBA8 texture on `device` and reads them
/// back (the texture ends in `COPY_SRC`).
fn texture_bytes(
    device: &vulkan::Device,
    queue: &vulkan::Queue,
    texture: &vulkan::Texture,
    write: Option<&[u8]>,
) -> Vec<u8> {
    use keel_hal::{
        BufferTextureCopy, OwnershipTransfer, StateTransition, TextureBarrier, TextureUses,
    };
    let size = 64 * 64 * 4;
    let region = BufferTextureCopy {
        buffer_layout: wgt::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(256),
            rows_per_image: Some(64),
        },
        texture_base: Default::default(),
        size: wgt::Extent3d {
            width: 64,
            height: 64,
            depth_or_array_layers: 1,
        },
    };
    let barrier = |from, to| TextureBarrier {
        texture,
        range: Default::default(),
        usage: StateTransition { from, to },
    };
    // SAFETY: everything is waited for and destroyed here.
    unsafe {
        let staging = device
            .create_buffer(&BufferDescriptor {
                size,
                usage: wgt::BufferUsages::COPY_SRC
                    | wgt::BufferUsages::COPY_DST
                    | wgt::BufferUsages::MAP_READ
                    | wgt::BufferUsages::MAP_WRITE,
                memory: Memory::Readback,
                ..Default::default()
            })
            .expect("staging");
        let map = device.map_buffer(&staging).expect("map");
        let mut encoder = device
            .create_command_encoder(&Default::default())
            .expect("encoder");
        encoder.begin_encoding(None).expect("begin");
        if let Some(bytes) = write {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), map.ptr.as_ptr(), bytes.len());
            encoder
                .transition_textures(&[barrier(TextureUses::UNINITIALIZED, TextureUses::COPY_DST)]);
            encoder.copy_buffer_to_texture(&staging, texture, &[region]);
            encoder.transition_textures(&[barrier(TextureUses::COPY_DST, TextureUses::COPY_SRC)]);
            // Hand it to the outside world, in COPY_SRC.
            encoder.transfer_ownership(
                OwnershipTransfer::Release,
                &[],
                &[barrier(TextureUses::COPY_SRC, TextureUses::COPY_SRC)],
            );
        } else {
            // Take it from the outside world, where the exporter left it in COPY_SRC.
            encoder.transfer_ownership(
                OwnershipTransfer::Acquire,
                &[],
                &[barrier(TextureUses::COPY_SRC, TextureUses::COPY_SRC)],
            );
            encoder.copy_texture_to_buffer(texture, TextureUses::COPY_SRC, &staging, &[region]);
        }
        let cb = encoder.end_encoding().expect("end");
        let fence = device.create_fence().expect("fence");
        queue.submit(&[&cb], &[], &fence, 1).expect("submit");
        assert!(device.wait(&fence, 1, None).expect("wait"));
        let out = std::slice::from_raw_parts(map.ptr.as_ptr(), size as usize).to_vec();
        encoder.reset_all([cb]);
        device.destroy_command_encoder(encoder);
        device.destroy_fence(fence);
        device.destroy_buffer(staging);
        out
    }
}

#[test]
fn texture_round_trips() {
    let Some(setup) = setup() else { return };
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
        if !setup.hal.contains(feature) {
            continue;
        }
        let desc = keel_hal::TextureDescriptor {
            label: Some("external texture"),
            size: wgt::Extent3d {
                width: 64,
                height: 64,
                depth_or_array_layers: 1,
            },
            usage: wgt::TextureUsages::COPY_SRC | wgt::TextureUsages::COPY_DST,
            memory: Memory::External(ExternalMemory::export(ht)),
            ..Default::default()
        };
        let caps = setup
            .adapter
            .external_texture_capabilities(&desc, ht)
            .expect("query");
        println!("{ht:?} texture capabilities: {caps:?}");
        if !(caps.exportable && caps.importable) {
            println!("skipped {ht:?} textures: not exportable and importable");
            continue;
        }
        let a = open(&setup, feature);
        let b = open(&setup, feature);
        let bytes = pattern(64 * 64 * 4, 11);
        let fds = open_fds();
        // SAFETY: everything is destroyed before the devices drop; the
        // exporter's work is waited for before the import reads it.
        unsafe {
            let exported = a.device.create_texture(&desc).expect("exportable texture");
            assert_eq!(
                texture_bytes(&a.device, &a.queue, &exported, Some(&bytes)),
                bytes
            );
            let memory = a
                .device
                .export_texture_memory(&exported, ht)
                .expect("export");
            println!(
                "exported {ht:?}: size {}, modifier {:?}, planes {:?}",
                memory.size, memory.drm_format_modifier, memory.planes
            );
            let handle = match ht {
                ExternalHandleType::OpaqueFd => ExternalHandle::OpaqueFd(memory.fd),
                _ => ExternalHandle::DmaBuf {
                    fd: memory.fd,
                    drm_format_modifier: memory.drm_format_modifier.unwrap_or(0),
                    planes: memory.planes,
                },
            };
            let imported = b.device.import_texture(&desc, handle).expect("import");
            assert_eq!(texture_bytes(&b.device, &b.queue, &imported, None), bytes);
            b.device.destroy_texture(imported);
            a.device.destroy_texture(exported);
        }
        assert_eq!(open_fds(), fds, "fds leaked");
    }
    // The layer here (1.3.239) flags the import's acquire from the
    // exporter's layout; keel-hal's allow-list ignores exactly that message
    // for images with external memory (see src/vulkan/instance.rs).
    let validation = setup.instance.validation_counter();
    drop(setup);
    assert_eq!(validation.errors(), 0, "validation errors (see the log)");
}

#[test]
fn semaphores_order_two_devices() {
    use keel_hal::{
        ExternalSemaphoreDescriptor, ExternalSemaphoreType, SemaphoreKind, SemaphoreSignal,
        SemaphoreWait,
    };
    let Some(setup) = setup() else { return };
    let feature = HalFeatures::EXTERNAL_SEMAPHORE_FD | HalFeatures::EXTERNAL_MEMORY_FD;
    for kind in [
        SemaphoreKind::Binary,
        SemaphoreKind::Timeline { initial_value: 0 },
    ] {
        let desc = ExternalSemaphoreDescriptor {
            handle_type: ExternalSemaphoreType::OpaqueFd,
            kind,
        };
        let caps = setup.adapter.external_semaphore_capabilities(&desc);
        println!("opaque fd semaphore {kind:?}: {caps:?}");
        if !(setup.hal.contains(feature) && caps.exportable && caps.importable) {
            println!("skipped: no exportable opaque-fd {kind:?} semaphores");
            continue;
        }
        let a = open(&setup, feature);
        let b = open(&setup, feature);
        let fds = open_fds();
        // SAFETY: every submission is waited for before anything is destroyed.
        unsafe {
            let signal = a.device.create_external_semaphore(&desc).expect("create");
            let fd = a.device.export_semaphore(&signal).expect("export");
            let wait = b.device.import_semaphore(&desc, fd).expect("import");
            let fence_a = a.device.create_fence().expect("fence");
            let fence_b = b.device.create_fence().expect("fence");
            // B waits on the semaphore A signals. A timeline wait may be
            // submitted before its signal (B first); a binary one may not
            // (the contract of submit_external), so there A goes first.
            let waits = [SemaphoreWait {
                semaphore: &wait,
                value: 1,
                stages: Default::default(),
            }];
            let signals = [SemaphoreSignal {
                semaphore: &signal,
                value: 1,
                stages: Default::default(),
            }];
            let submit_a = || {
                a.queue
                    .submit_external(&keel_hal::ExternalSubmission {
                        command_buffers: &[],
                        waits: &[],
                        signals: &signals,
                        fence: Some((&fence_a, 1)),
                    })
                    .expect("submit a")
            };
            let timeline = matches!(kind, SemaphoreKind::Timeline { .. });
            if !timeline {
                submit_a();
            }
            b.queue
                .submit_external(&keel_hal::ExternalSubmission {
                    command_buffers: &[],
                    waits: &waits,
                    signals: &[],
                    fence: Some((&fence_b, 1)),
                })
                .expect("submit b");
            if timeline {
                submit_a();
            }
            assert!(b
                .device
                .wait(&fence_b, 1, Some(std::time::Duration::from_secs(5)))
                .expect("wait b"));
            assert!(a.device.wait(&fence_a, 1, None).expect("wait a"));
            a.device.destroy_fence(fence_a);
            b.device.destroy_fence(fence_b);
            a.device.destroy_external_semaphore(signal);
            b.device.destroy_external_semaphore(wait);
        }
        assert_eq!(open_fds(), fds, "fds leaked");
        assert_eq!(a.device.live_counts(), Default::default());
        assert_eq!(b.device.live_counts(), Default::default());
    }
    let validation = setup.instance.validation_counter();
    drop(setup);
    assert_eq!(validation.errors(), 0, "validation errors (see the log)");
}
