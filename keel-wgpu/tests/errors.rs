//! A wgpu program's mistakes on keel-wgpu: each becomes a `wgpu::Error`
//! caught by an error scope or handed to the uncaptured-error handler,
//! never a panic; the objects made invalid stay safe to use and drop. On
//! noop (no GPU needed): keel-hal's checks are the same on every backend.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn device() -> (wgpu::Device, wgpu::Queue) {
    let instance =
        keel_wgpu::instance_with(keel_wgpu::BackendChoice::Noop, false).expect("noop instance");
    let adapter =
        pollster::block_on(instance.request_adapter(&Default::default())).expect("noop adapter");
    pollster::block_on(adapter.request_device(&Default::default())).expect("noop device")
}

/// Runs `f` inside a validation scope and returns the error it caught.
fn caught(device: &wgpu::Device, f: impl FnOnce()) -> Option<String> {
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    f();
    pollster::block_on(scope.pop()).map(|e| e.to_string())
}

#[test]
fn buffer_usage_mistakes_are_validation_errors() {
    let (device, _queue) = device();
    let error = caught(&device, || {
        let _ = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: 64,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
    })
    .expect("MAP_READ | STORAGE must be refused");
    assert!(
        error.contains("MAP_READ goes only with COPY_DST"),
        "{error}"
    );
    let error = caught(&device, || {
        let _ = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: 6,
            usage: wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: true,
        });
    })
    .expect("an unaligned mapped_at_creation size must be refused");
    assert!(error.contains("multiple of 4"), "{error}");
    assert_eq!(
        keel_wgpu::live_counts(&device).expect("keel device"),
        Default::default()
    );
}

#[test]
fn a_binding_of_the_wrong_kind_is_refused_by_keel_hal() {
    let (device, _queue) = device();
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: None,
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }],
    });
    // A storage-only buffer bound as a uniform: keel-hal's shared check.
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 256,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    let error = caught(&device, || {
        let _ = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: buffer.as_entire_binding(),
            }],
        });
    })
    .expect("a STORAGE buffer bound as uniform must be refused");
    assert!(error.contains("create_bind_group"), "{error}");
    assert!(error.to_lowercase().contains("uniform"), "{error}");
}

#[test]
fn invalid_shaders_and_encoders_reach_the_uncaptured_handler() {
    let (device, queue) = device();
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = seen.clone();
    device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
        assert!(matches!(e, wgpu::Error::Validation { .. }), "{e}");
        counter.fetch_add(1, Ordering::Relaxed);
    }));
    // A WGSL syntax error: the module is invalid, so is its pipeline.
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl("@compute fn main( {".into()),
    });
    let info = pollster::block_on(module.get_compilation_info());
    assert_eq!(info.messages.len(), 1);
    // A copy past the end of a buffer: the command buffer is invalid at
    // finish, and submitting it is an error too.
    let small = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 16,
        usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(&small, 0, &small, 8, 16);
    queue.submit([encoder.finish()]);
    assert_eq!(seen.load(Ordering::Relaxed), 3, "shader, finish, submit");
}

#[test]
fn unmapping_what_is_not_mapped_is_an_error_not_a_panic() {
    let (device, _queue) = device();
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 16,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let error = caught(&device, || buffer.unmap()).expect("unmap of an unmapped buffer");
    assert!(error.contains("not mapped"), "{error}");
    // map_async twice: the second fails (wgpu refuses it itself, before
    // keel-wgpu sees it) and its callback gets an error; no error is raised.
    let failed = Arc::new(AtomicUsize::new(0));
    let f = failed.clone();
    let error = caught(&device, || {
        buffer.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        buffer.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            if r.is_err() {
                f.fetch_add(1, Ordering::Relaxed);
            }
        });
    });
    assert!(error.is_none(), "{error:?}");
    assert_eq!(failed.load(Ordering::Relaxed), 1);
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("poll");
    buffer.unmap();
}

#[test]
fn destroying_the_device_fires_the_lost_callback_once() {
    let (device, queue) = device();
    let fired = Arc::new(AtomicUsize::new(0));
    let f = fired.clone();
    device.set_device_lost_callback(move |reason, _| {
        assert_eq!(reason, wgpu::DeviceLostReason::Destroyed);
        f.fetch_add(1, Ordering::Relaxed);
    });
    device.destroy();
    device.destroy();
    assert_eq!(fired.load(Ordering::Relaxed), 1);
    // Work after loss is a no-op, neither a crash nor an error: as on
    // wgpu-core, a lost device's errors are `DeviceLost`, which wgpu drops.
    let seen = Arc::new(AtomicUsize::new(0));
    let s = seen.clone();
    device.on_uncaptured_error(Arc::new(move |_| {
        s.fetch_add(1, Ordering::Relaxed);
    }));
    queue.submit([]);
    assert_eq!(seen.load(Ordering::Relaxed), 0);
}

#[test]
fn huge_indices_are_errors_not_overflows() {
    let (device, queue) = device();
    let texture = device.create_texture(&wgpu::TextureDescriptor {
        label: None,
        size: wgpu::Extent3d {
            width: 4,
            height: 4,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8Unorm,
        usage: wgpu::TextureUsages::TEXTURE_BINDING,
        view_formats: &[],
    });
    let mut view = None;
    let error = caught(&device, || {
        view = Some(texture.create_view(&wgpu::TextureViewDescriptor {
            base_mip_level: u32::MAX,
            mip_level_count: Some(2),
            base_array_layer: u32::MAX,
            array_layer_count: Some(2),
            ..Default::default()
        }));
    });
    assert!(error.is_some(), "a view past the texture's mips and layers");
    // Used as an attachment anyway: an error at submit, not a shift or
    // index overflow.
    let error = caught(&device, || {
        let mut encoder = device.create_command_encoder(&Default::default());
        if let Some(view) = &view {
            let _pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: Default::default(),
                })],
                ..Default::default()
            });
        }
        queue.submit([encoder.finish()]);
    });
    assert!(error.is_some(), "the invalid attachment is reported");
    // A timestamp index past the set, inside a pass: the command buffer is
    // invalid at finish (and its submit refused), nothing wraps around.
    let queries = device.create_query_set(&wgpu::QuerySetDescriptor {
        label: None,
        ty: wgpu::QueryType::Occlusion,
        count: 1,
    });
    let error = caught(&device, || {
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.begin_pipeline_statistics_query(&queries, u32::MAX);
        }
        queue.submit([encoder.finish()]);
    });
    assert!(error.is_some_and(|e| e.contains("outside the set")));
}

#[test]
fn huge_copy_sizes_and_group_indices_are_errors_not_overflows() {
    let (device, queue) = device();
    let texture = device.create_texture(&wgpu::TextureDescriptor {
        label: None,
        size: wgpu::Extent3d {
            width: 4,
            height: 4,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8Unorm,
        usage: wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    // Huge pitches and layer counts: never an overflow, always an error.
    let write = |layers: u32| {
        caught(&device, || {
            queue.write_texture(
                texture.as_image_copy(),
                &[0; 64],
                wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(u32::MAX),
                    rows_per_image: Some(u32::MAX),
                },
                wgpu::Extent3d {
                    width: 4,
                    height: 4,
                    depth_or_array_layers: layers,
                },
            );
        })
    };
    // wgpu checks the texture side first: u32::MAX layers overrun it.
    assert!(write(u32::MAX).is_some_and(|e| e.contains("overrunning the bounds")));
    assert!(write(1).is_some_and(|e| e.contains("past the data")));
    // A derived layout with a group index past the device's limit.
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(
            "@group(4000000000) @binding(0) var<storage, read_write> d: array<u32>;
             @compute @workgroup_size(1) fn main() { d[0] = 1u; }"
                .into(),
        ),
    });
    let error = caught(&device, || {
        let _ = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: None,
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
    });
    assert!(error.is_some_and(|e| e.contains("bind groups")));
}
