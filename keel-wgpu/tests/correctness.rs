//! Promises wgpu makes to every program, kept on keel-wgpu: objects are
//! checked against the device they are used on, new memory reads as zeros,
//! queue writes take their data at the call, compressed small mips copy
//! with their physical size, error scopes are per thread, and what keel-hal
//! refuses at submit reaches the program.
//!
//! Each test runs on noop and on Vulkan (lavapipe here; skipped with a line
//! saying why where there is no adapter), with the validation layer on:
//! the instance must count zero validation messages at the end and every
//! keel-hal object must be gone.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

/// One Vulkan instance at a time: Debian 12's layer crashes when instances
/// are made on several threads at once.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A keel-wgpu device of one backend.
struct Gpu {
    name: &'static str,
    instance: wgpu::Instance,
    device: wgpu::Device,
    queue: wgpu::Queue,
}

fn open(choice: keel_wgpu::BackendChoice, features: wgpu::Features) -> Option<Gpu> {
    let name = match choice {
        keel_wgpu::BackendChoice::Noop => "noop",
        _ => "vulkan",
    };
    let instance = match keel_wgpu::instance_with(choice, true) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("skip {name}: no instance ({e})");
            return None;
        }
    };
    let adapter = match pollster::block_on(instance.request_adapter(&Default::default())) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("skip {name}: no adapter ({e})");
            return None;
        }
    };
    if !adapter.features().contains(features) {
        eprintln!(
            "skip {name}: the adapter lacks {:?}",
            features - adapter.features()
        );
        return None;
    }
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_features: features,
        ..Default::default()
    }))
    .expect("device");
    Some(Gpu {
        name,
        instance,
        device,
        queue,
    })
}

/// Runs `f` on noop and on Vulkan, then checks that nothing leaked and the
/// layer said nothing.
fn each_backend(features: wgpu::Features, f: impl Fn(&Gpu)) {
    let _one = ONE_AT_A_TIME.lock();
    for choice in [
        keel_wgpu::BackendChoice::Noop,
        keel_wgpu::BackendChoice::Vulkan,
    ] {
        let Some(gpu) = open(choice, features) else {
            continue;
        };
        f(&gpu);
        let Gpu {
            name,
            instance,
            device,
            queue,
        } = gpu;
        assert_eq!(
            keel_wgpu::live_counts(&device),
            Some(Default::default()),
            "{name}: keel-hal objects left alive"
        );
        drop((device, queue));
        assert_eq!(
            keel_wgpu::validation_errors(&instance),
            Some(0),
            "{name}: validation messages"
        );
    }
}

/// The validation error `f` caused, if any.
fn caught(device: &wgpu::Device, f: impl FnOnce()) -> Option<String> {
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    f();
    pollster::block_on(scope.pop()).map(|e| e.to_string())
}

fn buffer(device: &wgpu::Device, size: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size,
        usage,
        mapped_at_creation: false,
    })
}

/// Reads `size` bytes of `src` at `offset` through a readback buffer.
fn read_buffer(gpu: &Gpu, src: &wgpu::Buffer, offset: u64, size: u64) -> Vec<u8> {
    let readback = buffer(
        &gpu.device,
        size,
        wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
    );
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(src, offset, &readback, 0, size);
    gpu.queue.submit([encoder.finish()]);
    map_read(gpu, &readback)
}

fn map_read(gpu: &Gpu, readback: &wgpu::Buffer) -> Vec<u8> {
    readback
        .slice(..)
        .map_async(wgpu::MapMode::Read, |r| r.expect("mapped"));
    gpu.device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("poll");
    let bytes = readback
        .slice(..)
        .get_mapped_range()
        .expect("mapped range")
        .to_vec();
    readback.unmap();
    bytes
}

// ---------------------------------------------------------------------------
// Objects of another device

const COMPUTE: &str = "
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@compute @workgroup_size(1) fn main() { data[0] = 1u; }
";

fn storage_layout(device: &wgpu::Device) -> wgpu::BindGroupLayout {
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: None,
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: false },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }],
    })
}

fn assert_mismatch(error: Option<String>, what: &str) {
    let error = error.unwrap_or_else(|| panic!("{what}: another device's object was accepted"));
    assert!(error.contains("doesn't match Device"), "{what}: {error}");
}

#[test]
fn objects_of_another_device_are_validation_errors() {
    each_backend(wgpu::Features::empty(), |a| {
        // Device B: a second device of the same adapter kind.
        let b = open(
            match a.name {
                "noop" => keel_wgpu::BackendChoice::Noop,
                _ => keel_wgpu::BackendChoice::Vulkan,
            },
            wgpu::Features::empty(),
        )
        .expect("a second device");
        let usage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::INDIRECT;
        let foreign = buffer(&b.device, 256, usage);
        let own = buffer(&a.device, 256, usage);
        let foreign_layout = storage_layout(&b.device);
        let layout = storage_layout(&a.device);
        let module_b = b.device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: None,
            source: wgpu::ShaderSource::Wgsl(COMPUTE.into()),
        });

        // A bind group of A with B's buffer: the crash this test was
        // written for.
        assert_mismatch(
            caught(&a.device, || {
                let _ = a.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &layout,
                    entries: &[wgpu::BindGroupEntry {
                        binding: 0,
                        resource: foreign.as_entire_binding(),
                    }],
                });
            }),
            "create_bind_group with a buffer",
        );
        // ... with B's layout.
        assert_mismatch(
            caught(&a.device, || {
                let _ = a.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &foreign_layout,
                    entries: &[wgpu::BindGroupEntry {
                        binding: 0,
                        resource: own.as_entire_binding(),
                    }],
                });
            }),
            "create_bind_group with a layout",
        );
        // A pipeline layout with B's group layout; a pipeline with B's module.
        assert_mismatch(
            caught(&a.device, || {
                let _ = a
                    .device
                    .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                        label: None,
                        bind_group_layouts: &[Some(&foreign_layout)],
                        immediate_size: 0,
                    });
            }),
            "create_pipeline_layout",
        );
        assert_mismatch(
            caught(&a.device, || {
                let _ = a
                    .device
                    .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                        label: None,
                        layout: None,
                        module: &module_b,
                        entry_point: None,
                        compilation_options: Default::default(),
                        cache: None,
                    });
            }),
            "create_compute_pipeline",
        );
        // Commands: a copy, a clear, an indirect dispatch with B's buffer,
        // and a bind group of B set in A's pass.
        assert_mismatch(
            caught(&a.device, || {
                let mut encoder = a.device.create_command_encoder(&Default::default());
                encoder.copy_buffer_to_buffer(&foreign, 0, &own, 0, 64);
                let _ = encoder.finish();
            }),
            "copy_buffer_to_buffer",
        );
        assert_mismatch(
            caught(&a.device, || {
                let mut encoder = a.device.create_command_encoder(&Default::default());
                encoder.clear_buffer(&foreign, 0, None);
                let _ = encoder.finish();
            }),
            "clear_buffer",
        );
        let group_b = b.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &foreign_layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: foreign.as_entire_binding(),
            }],
        });
        assert_mismatch(
            caught(&a.device, || {
                let mut encoder = a.device.create_command_encoder(&Default::default());
                {
                    let mut pass = encoder.begin_compute_pass(&Default::default());
                    pass.set_bind_group(0, &group_b, &[]);
                    pass.dispatch_workgroups_indirect(&foreign, 0);
                }
                let _ = encoder.finish();
            }),
            "set_bind_group",
        );
        // Queue writes and a command buffer of B submitted on A.
        assert_mismatch(
            caught(&a.device, || a.queue.write_buffer(&foreign, 0, &[1; 16])),
            "write_buffer",
        );
        let encoder = b.device.create_command_encoder(&Default::default());
        let finished = encoder.finish();
        assert_mismatch(
            caught(&a.device, || {
                a.queue.submit([finished]);
            }),
            "submit",
        );
        // A's own objects still work: a write and a read back.
        a.queue.write_buffer(&own, 0, &[7; 16]);
        assert_eq!(read_buffer(a, &own, 0, 16), [7; 16]);
        drop((foreign, foreign_layout, module_b, group_b));
        assert_eq!(keel_wgpu::live_counts(&b.device), Some(Default::default()));
        let Gpu {
            instance,
            device,
            queue,
            ..
        } = b;
        drop((device, queue));
        assert_eq!(keel_wgpu::validation_errors(&instance), Some(0));
    });
}

// ---------------------------------------------------------------------------
// Error scopes

/// A buffer descriptor wgpu refuses (MAP_READ with STORAGE).
fn refused_buffer(device: &wgpu::Device) {
    let _ = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 64,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
}

#[test]
fn error_scopes_are_per_thread() {
    each_backend(wgpu::Features::empty(), |gpu| {
        let uncaptured = Arc::new(AtomicUsize::new(0));
        let count = uncaptured.clone();
        gpu.device.on_uncaptured_error(Arc::new(move |_| {
            count.fetch_add(1, Ordering::SeqCst);
        }));
        // This thread's scope does not catch another thread's error: that
        // one has no scope, so it is uncaptured.
        let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
        std::thread::scope(|s| {
            s.spawn(|| refused_buffer(&gpu.device));
        });
        assert!(pollster::block_on(scope.pop()).is_none(), "{}", gpu.name);
        assert_eq!(uncaptured.load(Ordering::SeqCst), 1, "{}", gpu.name);
        // The other thread's own scope catches its error, and this
        // thread's, open meanwhile, stays empty.
        let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let theirs = std::thread::scope(|s| {
            s.spawn(|| {
                let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
                refused_buffer(&gpu.device);
                pollster::block_on(scope.pop()).is_some()
            })
            .join()
            .expect("thread")
        });
        assert!(
            theirs,
            "{}: the other thread's scope caught nothing",
            gpu.name
        );
        assert!(pollster::block_on(scope.pop()).is_none(), "{}", gpu.name);
        assert_eq!(uncaptured.load(Ordering::SeqCst), 1, "{}", gpu.name);
    });
}

/// The panic message of `f`, which must panic.
fn panic_message(f: impl FnOnce() + Send) -> String {
    std::thread::scope(|s| {
        let payload = s.spawn(f).join().expect_err("must panic");
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

#[test]
fn mismatched_pops_are_what_wgpu_says() {
    each_backend(wgpu::Features::empty(), |gpu| {
        // Out of order: the outer guard popped while the inner is open.
        // (On its own thread: the inner scope is left open there, as in
        // wgpu, and that thread's scopes go with it.)
        let message = panic_message(|| {
            let outer = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
            let inner = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
            drop(outer.pop());
            drop(inner);
        });
        assert!(message.contains("popped in reverse order"), "{message}");
        // Nested scopes of one thread pop in order, each with its error.
        let outer = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let inner = gpu.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        refused_buffer(&gpu.device);
        assert!(pollster::block_on(inner.pop()).is_none(), "{}", gpu.name);
        assert!(pollster::block_on(outer.pop()).is_some(), "{}", gpu.name);
        // Nothing is left open: an error now reaches the handler.
        let seen = Arc::new(AtomicUsize::new(0));
        let count = seen.clone();
        gpu.device.on_uncaptured_error(Arc::new(move |_| {
            count.fetch_add(1, Ordering::SeqCst);
        }));
        refused_buffer(&gpu.device);
        assert_eq!(seen.load(Ordering::SeqCst), 1, "{}", gpu.name);
    });
}

// ---------------------------------------------------------------------------
// Queue writes, then destroy

fn texture(
    device: &wgpu::Device,
    format: wgpu::TextureFormat,
    size: wgpu::Extent3d,
    mips: u32,
    samples: u32,
    usage: wgpu::TextureUsages,
) -> wgpu::Texture {
    device.create_texture(&wgpu::TextureDescriptor {
        label: None,
        size,
        mip_level_count: mips,
        sample_count: samples,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage,
        view_formats: &[],
    })
}

fn extent(width: u32, height: u32) -> wgpu::Extent3d {
    wgpu::Extent3d {
        width,
        height,
        depth_or_array_layers: 1,
    }
}

#[test]
fn a_queue_write_then_destroy_then_submit_is_valid() {
    each_backend(wgpu::Features::empty(), |gpu| {
        let b = buffer(&gpu.device, 256, wgpu::BufferUsages::COPY_DST);
        let t = texture(
            &gpu.device,
            wgpu::TextureFormat::Rgba8Unorm,
            extent(4, 4),
            1,
            1,
            wgpu::TextureUsages::COPY_DST,
        );
        let error = caught(&gpu.device, || {
            gpu.queue.write_buffer(&b, 0, &[1; 64]);
            b.destroy();
            gpu.queue.write_texture(
                t.as_image_copy(),
                &[2; 64],
                wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(16),
                    rows_per_image: None,
                },
                extent(4, 4),
            );
            t.destroy();
            gpu.queue.submit([]);
        });
        assert_eq!(error, None, "{}", gpu.name);
        // Writes to what is still alive, queued beside them, land.
        let live = buffer(
            &gpu.device,
            16,
            wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
        );
        let gone = buffer(&gpu.device, 16, wgpu::BufferUsages::COPY_DST);
        gpu.queue.write_buffer(&gone, 0, &[3; 16]);
        gpu.queue.write_buffer(&live, 0, &[4; 16]);
        gone.destroy();
        assert_eq!(read_buffer(gpu, &live, 0, 16), [4; 16], "{}", gpu.name);
    });
}
