//! The usage tracker against the patterns of real programs, on keel-wgpu's
//! Vulkan backend with the validation layer and synchronization validation
//! on: the instance must count zero messages (no hazard, no layout
//! mismatch) and the pixels must be what the program drew.
//!
//! The shape is that of wgpu's shadow example: per-entity uniforms in one
//! buffer, updated by `Queue::write_buffer` every frame and read with
//! dynamic offsets by the vertex and fragment stages; a light uniform
//! updated by `copy_buffer_to_buffer` before each shadow pass; a depth
//! texture array, one layer rendered per light through a single-layer
//! view, then sampled as a whole array (with a comparison sampler) by the
//! forward pass; several frames in a row.
//!
//! And command buffers encoded at `finish` on their own (keel-wgpu's
//! model, wgpu-core's too): finished in one order and submitted in
//! another, finished on several threads at once, with a resource destroyed
//! between `finish` and submit. These run on keel-wgpu's noop and Vulkan
//! backends and on stock wgpu, with the same assertions.

mod common;

use common::{caught, each_backend, Gpu};
use wgpu::util::DeviceExt;

/// A keel-wgpu Vulkan device with the layer on, or `None` (printed why).
fn vulkan() -> Option<(wgpu::Instance, wgpu::Device, wgpu::Queue)> {
    let instance = match keel_wgpu::instance_with(keel_wgpu::BackendChoice::Vulkan, true) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("skip: no Vulkan instance ({e})");
            return None;
        }
    };
    let adapter = match pollster::block_on(instance.request_adapter(&Default::default())) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("skip: no Vulkan adapter ({e})");
            return None;
        }
    };
    eprintln!("on {:?}", adapter.get_info());
    let (device, queue) =
        pollster::block_on(adapter.request_device(&Default::default())).expect("device");
    Some((instance, device, queue))
}

const SHADER: &str = "
struct Entity { model: vec4<f32>, color: vec4<f32> };
struct Light { offset: vec4<f32> };
@group(0) @binding(0) var<uniform> light: Light;
@group(1) @binding(0) var<uniform> entity: Entity;

@vertex
fn vs_shadow(@location(0) p: vec2<f32>) -> @builtin(position) vec4<f32> {
    return vec4<f32>(p * entity.model.x + entity.model.yz + light.offset.xy, 0.5, 1.0);
}

@group(0) @binding(1) var shadows: texture_depth_2d_array;
@group(0) @binding(2) var cmp: sampler_comparison;

struct Out { @builtin(position) pos: vec4<f32>, @location(0) uv: vec2<f32> };

@vertex
fn vs_main(@location(0) p: vec2<f32>) -> Out {
    var out: Out;
    out.pos = vec4<f32>(p * entity.model.x + entity.model.yz, 0.5, 1.0);
    out.uv = out.pos.xy * vec2<f32>(0.5, -0.5) + 0.5;
    return out;
}

@fragment
fn fs_main(in: Out) -> @location(0) vec4<f32> {
    var lit = 0.0;
    for (var i = 0; i < 4; i++) {
        lit += textureSampleCompareLevel(shadows, cmp, in.uv, i, 0.75);
    }
    return vec4<f32>(entity.color.rgb * (0.25 + 0.1875 * lit), 1.0);
}
";

const LIGHTS: u32 = 2;
const LAYERS: u32 = 4;
const ENTITIES: u64 = 5;
const SIZE: u32 = 32;

#[test]
fn a_shadow_mapping_frame_loop_is_hazard_free() {
    let Some((instance, device, queue)) = vulkan() else {
        return;
    };
    let align = device.limits().min_uniform_buffer_offset_alignment as u64;
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("shadow"),
        source: wgpu::ShaderSource::Wgsl(SHADER.into()),
    });
    let quad: [f32; 12] = [-1., -1., 1., -1., 1., 1., -1., -1., 1., 1., -1., 1.];
    let vertices = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("vertices"),
        contents: &quad
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect::<Vec<_>>(),
        usage: wgpu::BufferUsages::VERTEX,
    });
    let entities = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("entity uniforms"),
        size: ENTITIES * align,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let light_storage = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("light storage"),
        size: LIGHTS as u64 * 256,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let light_uniform = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("shadow pass light"),
        size: 16,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let shadow_texture = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("shadow maps"),
        size: wgpu::Extent3d {
            width: SIZE,
            height: SIZE,
            depth_or_array_layers: LAYERS,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Depth32Float,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::TEXTURE_BINDING,
        view_formats: &[],
    });
    let layer_views: Vec<_> = (0..LIGHTS)
        .map(|i| {
            shadow_texture.create_view(&wgpu::TextureViewDescriptor {
                dimension: Some(wgpu::TextureViewDimension::D2),
                base_array_layer: i,
                array_layer_count: Some(1),
                ..Default::default()
            })
        })
        .collect();
    let array_view = shadow_texture.create_view(&wgpu::TextureViewDescriptor {
        dimension: Some(wgpu::TextureViewDimension::D2Array),
        ..Default::default()
    });
    let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
        compare: Some(wgpu::CompareFunction::LessEqual),
        ..Default::default()
    });
    let target = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("target"),
        size: wgpu::Extent3d {
            width: SIZE,
            height: SIZE,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8Unorm,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    let target_view = target.create_view(&Default::default());
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size: 256 * SIZE as u64,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });

    let entity_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("entity"),
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::VERTEX | wgpu::ShaderStages::FRAGMENT,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: true,
                min_binding_size: wgpu::BufferSize::new(32),
            },
            count: None,
        }],
    });
    let entity_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("entity"),
        layout: &entity_layout,
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: &entities,
                offset: 0,
                size: wgpu::BufferSize::new(32),
            }),
        }],
    });
    let uniform_entry = |binding, visibility| wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    };
    let shadow_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("shadow pass"),
        entries: &[uniform_entry(0, wgpu::ShaderStages::VERTEX)],
    });
    let shadow_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("shadow pass"),
        layout: &shadow_layout,
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: light_uniform.as_entire_binding(),
        }],
    });
    let forward_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("forward pass"),
        entries: &[
            uniform_entry(0, wgpu::ShaderStages::VERTEX),
            wgpu::BindGroupLayoutEntry {
                binding: 1,
                visibility: wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Texture {
                    sample_type: wgpu::TextureSampleType::Depth,
                    view_dimension: wgpu::TextureViewDimension::D2Array,
                    multisampled: false,
                },
                count: None,
            },
            wgpu::BindGroupLayoutEntry {
                binding: 2,
                visibility: wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Comparison),
                count: None,
            },
        ],
    });
    let forward_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("forward pass"),
        layout: &forward_layout,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: light_uniform.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: wgpu::BindingResource::TextureView(&array_view),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: wgpu::BindingResource::Sampler(&sampler),
            },
        ],
    });
    let vertex_layout = wgpu::VertexBufferLayout {
        array_stride: 8,
        step_mode: wgpu::VertexStepMode::Vertex,
        attributes: &wgpu::vertex_attr_array![0 => Float32x2],
    };
    let pipeline_layout = |groups: &[&wgpu::BindGroupLayout]| {
        device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: None,
            bind_group_layouts: &groups.iter().map(|g| Some(*g)).collect::<Vec<_>>(),
            immediate_size: 0,
        })
    };
    let shadow_pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("shadow"),
        layout: Some(&pipeline_layout(&[&shadow_layout, &entity_layout])),
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs_shadow"),
            compilation_options: Default::default(),
            buffers: &[Some(vertex_layout.clone())],
        },
        primitive: Default::default(),
        depth_stencil: Some(wgpu::DepthStencilState {
            format: wgpu::TextureFormat::Depth32Float,
            depth_write_enabled: Some(true),
            depth_compare: Some(wgpu::CompareFunction::LessEqual),
            stencil: Default::default(),
            bias: Default::default(),
        }),
        multisample: Default::default(),
        fragment: None,
        multiview_mask: None,
        cache: None,
    });
    let forward_pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("forward"),
        layout: Some(&pipeline_layout(&[&forward_layout, &entity_layout])),
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs_main"),
            compilation_options: Default::default(),
            buffers: &[Some(vertex_layout)],
        },
        primitive: Default::default(),
        depth_stencil: None,
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some("fs_main"),
            compilation_options: Default::default(),
            targets: &[Some(wgpu::TextureFormat::Rgba8Unorm.into())],
        }),
        multiview_mask: None,
        cache: None,
    });

    for frame in 0..3u32 {
        // Entity uniforms: scale, offset, colour; one write per entity.
        for e in 0..ENTITIES {
            let scale = 0.2 + 0.05 * frame as f32;
            let x = -0.6 + 0.3 * e as f32;
            let data: [f32; 8] = [scale, x, 0.0, 0.0, 0.2 * e as f32, 0.5, 1.0, 1.0];
            let bytes: Vec<u8> = data.iter().flat_map(|f| f.to_le_bytes()).collect();
            queue.write_buffer(&entities, e * align, &bytes);
        }
        for l in 0..LIGHTS {
            let offset: [f32; 4] = [0.05 * l as f32, 0.0, 0.0, 0.0];
            let bytes: Vec<u8> = offset.iter().flat_map(|f| f.to_le_bytes()).collect();
            queue.write_buffer(&light_storage, l as u64 * 256, &bytes);
        }
        let mut encoder = device.create_command_encoder(&Default::default());
        for (l, view) in layer_views.iter().enumerate() {
            encoder.copy_buffer_to_buffer(&light_storage, l as u64 * 256, &light_uniform, 0, 16);
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("shadow"),
                color_attachments: &[],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view,
                    depth_ops: Some(wgpu::Operations {
                        load: wgpu::LoadOp::Clear(1.0),
                        store: wgpu::StoreOp::Store,
                    }),
                    stencil_ops: None,
                }),
                ..Default::default()
            });
            pass.set_pipeline(&shadow_pipeline);
            pass.set_bind_group(0, &shadow_group, &[]);
            pass.set_vertex_buffer(0, vertices.slice(..));
            for e in 0..ENTITIES {
                pass.set_bind_group(1, &entity_group, &[(e * align) as u32]);
                pass.draw(0..6, 0..1);
            }
        }
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("forward"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &target_view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                ..Default::default()
            });
            pass.set_pipeline(&forward_pipeline);
            pass.set_bind_group(0, &forward_group, &[]);
            pass.set_vertex_buffer(0, vertices.slice(..));
            for e in 0..ENTITIES {
                pass.set_bind_group(1, &entity_group, &[(e * align) as u32]);
                pass.draw(0..6, 0..1);
            }
        }
        encoder.copy_texture_to_buffer(
            target.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &readback,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(256),
                    rows_per_image: None,
                },
            },
            wgpu::Extent3d {
                width: SIZE,
                height: SIZE,
                depth_or_array_layers: 1,
            },
        );
        queue.submit([encoder.finish()]);
        readback
            .slice(..)
            .map_async(wgpu::MapMode::Read, |r| r.expect("map"));
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("poll");
        {
            let data = readback.slice(..).get_mapped_range().expect("mapped");
            // Something was drawn: not every pixel is the clear colour.
            assert!(
                data.chunks(4).any(|p| p != [0, 0, 0, 255]),
                "frame {frame}: nothing drawn"
            );
        }
        readback.unmap();
    }
    drop((device, queue));
    assert_eq!(
        keel_wgpu::validation_errors(&instance),
        Some(0),
        "validation messages (see the log above)"
    );
}

fn buffer(gpu: &Gpu, label: &str, size: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
    gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage,
        mapped_at_creation: false,
    })
}

fn read(gpu: &Gpu, b: &wgpu::Buffer) -> Vec<u8> {
    b.slice(..)
        .map_async(wgpu::MapMode::Read, |r| r.expect("map"));
    gpu.device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("poll");
    let data = b.slice(..).get_mapped_range().expect("mapped").to_vec();
    b.unmap();
    data
}

/// Command buffer A reads a buffer and a texture that B writes whole; A is
/// finished first, B submitted first: A sees B's data, not the zeros a
/// never-written resource reads as when A was finished.
#[test]
fn command_buffers_finished_in_one_order_run_in_submission_order() {
    use wgpu::BufferUsages as U;
    each_backend(wgpu::Features::empty(), |gpu| {
        let data: Vec<u8> = (0..256u32).map(|i| (i * 7 + 1) as u8).collect();
        let src = gpu
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("src"),
                contents: &data,
                usage: U::COPY_SRC,
            });
        let middle = buffer(gpu, "middle", 256, U::COPY_SRC | U::COPY_DST);
        let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
            label: Some("middle texture"),
            size: wgpu::Extent3d {
                width: 64,
                height: 1,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::R32Uint,
            usage: wgpu::TextureUsages::COPY_SRC | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        });
        let out = buffer(gpu, "out", 512, U::MAP_READ | U::COPY_DST);
        let layout = wgpu::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(256),
            rows_per_image: None,
        };
        let row = wgpu::Extent3d {
            width: 64,
            height: 1,
            depth_or_array_layers: 1,
        };
        let mut a = gpu.device.create_command_encoder(&Default::default());
        a.copy_buffer_to_buffer(&middle, 0, &out, 0, 256);
        a.copy_texture_to_buffer(
            texture.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &out,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 256,
                    ..layout
                },
            },
            row,
        );
        let a = a.finish();
        let mut b = gpu.device.create_command_encoder(&Default::default());
        b.copy_buffer_to_buffer(&src, 0, &middle, 0, 256);
        b.copy_buffer_to_texture(
            wgpu::TexelCopyBufferInfo {
                buffer: &src,
                layout,
            },
            texture.as_image_copy(),
            row,
        );
        let b = b.finish();
        gpu.queue.submit([b, a]);
        let got = read(gpu, &out);
        assert_eq!(&got[..256], &data[..], "{}: the buffer", gpu.name);
        assert_eq!(&got[256..], &data[..], "{}: the texture", gpu.name);
    });
}

/// Eight threads each record and finish a command buffer of copies and
/// clears into their own buffer at once; one submit carries them all.
#[test]
fn encoders_finished_on_several_threads_submit_together() {
    use wgpu::BufferUsages as U;
    const THREADS: usize = 8;
    each_backend(wgpu::Features::empty(), |gpu| {
        let src = gpu
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("src"),
                contents: &(0..THREADS as u32 * 64)
                    .flat_map(|i| i.to_le_bytes())
                    .collect::<Vec<_>>(),
                usage: U::COPY_SRC,
            });
        let outs: Vec<_> = (0..THREADS)
            .map(|t| buffer(gpu, &format!("out {t}"), 256, U::MAP_READ | U::COPY_DST))
            .collect();
        let buffers = std::thread::scope(|s| {
            let handles: Vec<_> = outs
                .iter()
                .enumerate()
                .map(|(t, out)| {
                    let (device, src) = (&gpu.device, &src);
                    s.spawn(move || {
                        let mut e = device.create_command_encoder(&Default::default());
                        for round in 0..50u64 {
                            // Clear, then copy this thread's words back in:
                            // the last round leaves them.
                            e.clear_buffer(out, 0, None);
                            e.copy_buffer_to_buffer(
                                src,
                                t as u64 * 256,
                                out,
                                0,
                                256 - (round + 1) % 2 * 128,
                            );
                        }
                        e.finish()
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("encoding thread"))
                .collect::<Vec<_>>()
        });
        gpu.queue.submit(buffers);
        for (t, out) in outs.iter().enumerate() {
            let got = read(gpu, out);
            let want: Vec<u8> = (t as u32 * 64..t as u32 * 64 + 64)
                .flat_map(|i| i.to_le_bytes())
                .collect();
            assert_eq!(got, want, "{}: thread {t}", gpu.name);
        }
    });
}

/// A buffer destroyed between `finish` and submit: the submit is the
/// error (wgpu's point), `finish` is not.
#[test]
fn a_resource_destroyed_after_finish_fails_the_submit() {
    use wgpu::BufferUsages as U;
    each_backend(wgpu::Features::empty(), |gpu| {
        let a = buffer(gpu, "a", 256, U::COPY_SRC | U::COPY_DST);
        let b = buffer(gpu, "b", 256, U::COPY_DST);
        let mut cb = None;
        let at_finish = caught(&gpu.device, || {
            let mut e = gpu.device.create_command_encoder(&Default::default());
            e.copy_buffer_to_buffer(&a, 0, &b, 0, 256);
            cb = Some(e.finish());
        });
        assert_eq!(at_finish, None, "{}: finish", gpu.name);
        a.destroy();
        let at_submit = caught(&gpu.device, || {
            gpu.queue.submit(cb.take());
        });
        assert!(at_submit.is_some(), "{}: the submit passed", gpu.name);
        // The queue goes on.
        let after = caught(&gpu.device, || {
            let mut e = gpu.device.create_command_encoder(&Default::default());
            e.clear_buffer(&b, 0, None);
            gpu.queue.submit([e.finish()]);
        });
        assert_eq!(after, None, "{}: the next submit", gpu.name);
        gpu.device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("poll");
    });
}
