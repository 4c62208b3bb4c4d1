//! Where keel-wgpu follows stock wgpu beyond refusing what it refuses:
//! programs stock wgpu accepts (a bind group of a mapped buffer, a 2D view
//! of one layer of an array texture, a derived layout's immediates, a
//! transient attachment cleared and discarded) run on keel-wgpu too, and
//! values wgpu-core defines (a resolve of queries nothing wrote reads
//! zeros) are the same. Each runs on keel-wgpu's noop and Vulkan backends,
//! with nothing left alive and no validation-layer message, and on stock
//! wgpu, where it shows the behaviour is wgpu's.

mod common;
use common::*;

fn buffer(d: &wgpu::Device, size: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
    d.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size,
        usage,
        mapped_at_creation: false,
    })
}

/// The bytes of `src` (a `COPY_SRC` buffer of `size` bytes).
fn read(gpu: &Gpu, src: &wgpu::Buffer, size: u64) -> Vec<u8> {
    let d = &gpu.device;
    let readback = buffer(
        d,
        size,
        wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
    );
    let mut e = d.create_command_encoder(&Default::default());
    e.copy_buffer_to_buffer(src, 0, &readback, 0, size);
    gpu.queue.submit([e.finish()]);
    readback
        .slice(..)
        .map_async(wgpu::MapMode::Read, |r| r.expect("mapped"));
    d.poll(wgpu::PollType::wait_indefinitely()).expect("poll");
    let bytes = readback
        .slice(..)
        .get_mapped_range()
        .expect("mapped range")
        .to_vec();
    readback.unmap();
    bytes
}

fn u64s(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect()
}

const DRAW: &str = "
@vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let p = array(vec2<f32>(-1.0, -1.0), vec2<f32>(3.0, -1.0), vec2<f32>(-1.0, 3.0));
    return vec4<f32>(p[i], 0.0, 1.0);
}
@fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }
";

fn target(d: &wgpu::Device) -> wgpu::TextureView {
    d.create_texture(&wgpu::TextureDescriptor {
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
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
        view_formats: &[],
    })
    .create_view(&Default::default())
}

/// wgpu-core's deferred resolves: queries no work wrote resolve to zeros
/// (keel-wgpu never lets Vulkan copy a query never written), those an
/// earlier submission wrote to their values.
#[test]
fn queries_never_written_resolve_to_zeros() {
    each_backend_limits(
        wgpu::Features::empty(),
        wgpu::Features::empty(),
        |_| Default::default(),
        |gpu| {
            let d = &gpu.device;
            let q = &gpu.queue;
            let set = d.create_query_set(&wgpu::QuerySetDescriptor {
                label: None,
                ty: wgpu::QueryType::Occlusion,
                count: 4,
            });
            let module = d.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: None,
                source: wgpu::ShaderSource::Wgsl(DRAW.into()),
            });
            let pipeline = d.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: None,
                layout: None,
                vertex: wgpu::VertexState {
                    module: &module,
                    entry_point: Some("vs"),
                    compilation_options: Default::default(),
                    buffers: &[],
                },
                primitive: Default::default(),
                depth_stencil: None,
                multisample: Default::default(),
                fragment: Some(wgpu::FragmentState {
                    module: &module,
                    entry_point: Some("fs"),
                    compilation_options: Default::default(),
                    targets: &[Some(wgpu::TextureFormat::Rgba8Unorm.into())],
                }),
                multiview_mask: None,
                cache: None,
            });
            let view = target(d);
            let resolved = buffer(
                d,
                32,
                wgpu::BufferUsages::QUERY_RESOLVE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
            );
            // Stale bytes a resolve of nothing written would leave.
            q.write_buffer(&resolved, 0, &[0xff; 32]);
            // Query 1 is written, then all four resolved in the same encoder.
            let mut e = d.create_command_encoder(&Default::default());
            {
                let mut p = e.begin_render_pass(&wgpu::RenderPassDescriptor {
                    color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                        view: &view,
                        depth_slice: None,
                        resolve_target: None,
                        ops: Default::default(),
                    })],
                    occlusion_query_set: Some(&set),
                    ..Default::default()
                });
                p.set_pipeline(&pipeline);
                p.begin_occlusion_query(1);
                p.draw(0..3, 0..1);
                p.end_occlusion_query();
            }
            e.resolve_query_set(&set, 0..4, &resolved, 0);
            q.submit([e.finish()]);
            let values = u64s(&read(gpu, &resolved, 32));
            assert_eq!(
                [values[0], values[2], values[3]],
                [0, 0, 0],
                "{}: never-written queries: {values:?}",
                gpu.name
            );
            assert_ne!(values[1], u64::MAX, "{}: query 1 not resolved", gpu.name);
            // A later command buffer resolves what the first submission wrote.
            q.write_buffer(&resolved, 0, &[0xff; 32]);
            let mut e = d.create_command_encoder(&Default::default());
            e.resolve_query_set(&set, 1..2, &resolved, 0);
            q.submit([e.finish()]);
            let again = u64s(&read(gpu, &resolved, 8));
            assert_eq!(again[0], values[1], "{}: query 1 resolved again", gpu.name);
        },
    );
}

/// A bind group of a buffer that is mapped is made (wgpu checks mapping at
/// submit); the buffer unmapped, the group is used.
#[test]
fn a_mapped_buffer_can_be_bound() {
    each_backend_limits(
        wgpu::Features::empty(),
        wgpu::Features::empty(),
        |_| Default::default(),
        |gpu| {
            let d = &gpu.device;
            let data = d.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: 16,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: true,
            });
            let module = d.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: None,
                source: wgpu::ShaderSource::Wgsl(
                    "@group(0) @binding(0) var<storage, read_write> data: array<u32>;
                 @compute @workgroup_size(1) fn main() { data[1] = data[0] + 1u; }"
                        .into(),
                ),
            });
            let pipeline = d.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: None,
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            });
            data.slice(..)
                .get_mapped_range_mut()
                .expect("mapped at creation")
                .slice(..4)
                .copy_from_slice(&41u32.to_le_bytes());
            let error = caught(d, || {
                let group = d.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &pipeline.get_bind_group_layout(0),
                    entries: &[wgpu::BindGroupEntry {
                        binding: 0,
                        resource: data.as_entire_binding(),
                    }],
                });
                data.unmap();
                let mut e = d.create_command_encoder(&Default::default());
                {
                    let mut p = e.begin_compute_pass(&Default::default());
                    p.set_pipeline(&pipeline);
                    p.set_bind_group(0, &group, &[]);
                    p.dispatch_workgroups(1, 1, 1);
                }
                gpu.queue.submit([e.finish()]);
            });
            assert_eq!(error, None, "{}", gpu.name);
            if gpu.name != "noop" {
                let words = read(gpu, &data, 16);
                assert_eq!(&words[4..8], &42u32.to_le_bytes(), "{}", gpu.name);
            }
        },
    );
}

/// A view with dimension `D2` and no layer count of a two-layer texture is
/// one layer (wgpu-core resolves the count from the dimension), usable as
/// an attachment.
#[test]
fn a_2d_view_of_an_array_texture_is_one_layer() {
    each_backend_limits(
        wgpu::Features::empty(),
        wgpu::Features::empty(),
        |_| Default::default(),
        |gpu| {
            let d = &gpu.device;
            let texture = d.create_texture(&wgpu::TextureDescriptor {
                label: None,
                size: wgpu::Extent3d {
                    width: 4,
                    height: 4,
                    depth_or_array_layers: 2,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: wgpu::TextureFormat::Rgba8Unorm,
                usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
                view_formats: &[],
            });
            let error = caught(d, || {
                let view = texture.create_view(&wgpu::TextureViewDescriptor {
                    dimension: Some(wgpu::TextureViewDimension::D2),
                    ..Default::default()
                });
                let mut e = d.create_command_encoder(&Default::default());
                drop(e.begin_render_pass(&wgpu::RenderPassDescriptor {
                    color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                        view: &view,
                        depth_slice: None,
                        resolve_target: None,
                        ops: Default::default(),
                    })],
                    ..Default::default()
                }));
                gpu.queue.submit([e.finish()]);
            });
            assert_eq!(error, None, "{}", gpu.name);
        },
    );
}

/// A pipeline with a derived layout whose shader reads immediates gets a
/// layout with room for them (wgpu-core sizes it from the module).
#[test]
fn a_derived_layout_holds_the_shaders_immediates() {
    let limits = |adapter: &wgpu::Adapter| wgpu::Limits {
        max_immediate_size: adapter.limits().max_immediate_size.min(64),
        ..Default::default()
    };
    each_backend_limits(
        wgpu::Features::empty(),
        wgpu::Features::IMMEDIATES,
        limits,
        |gpu| {
            let d = &gpu.device;
            if !d.features().contains(wgpu::Features::IMMEDIATES) {
                eprintln!("{}: skipped, no IMMEDIATES", gpu.name);
                return;
            }
            let module = d.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: None,
                source: wgpu::ShaderSource::Wgsl(
                    "var<immediate> c: vec4<u32>;
                 @group(0) @binding(0) var<storage, read_write> data: array<u32>;
                 @compute @workgroup_size(1) fn main() { data[0] = c.x; }"
                        .into(),
                ),
            });
            let data = buffer(d, 16, wgpu::BufferUsages::STORAGE);
            let error = caught(d, || {
                let pipeline = d.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: None,
                    layout: None,
                    module: &module,
                    entry_point: Some("main"),
                    compilation_options: Default::default(),
                    cache: None,
                });
                let group = d.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &pipeline.get_bind_group_layout(0),
                    entries: &[wgpu::BindGroupEntry {
                        binding: 0,
                        resource: data.as_entire_binding(),
                    }],
                });
                let mut e = d.create_command_encoder(&Default::default());
                {
                    let mut p = e.begin_compute_pass(&Default::default());
                    p.set_pipeline(&pipeline);
                    p.set_bind_group(0, &group, &[]);
                    p.set_immediates(0, &[7; 16]);
                    p.dispatch_workgroups(1, 1, 1);
                }
                gpu.queue.submit([e.finish()]);
            });
            assert_eq!(error, None, "{}", gpu.name);
        },
    );
}

/// A transient attachment cleared and discarded is what wgpu allows; the
/// Vulkan image is transient (no copy usage) and the layer says nothing.
#[test]
fn a_transient_attachment_cleared_and_discarded() {
    each_backend_limits(
        wgpu::Features::empty(),
        wgpu::Features::empty(),
        |_| Default::default(),
        |gpu| {
            let d = &gpu.device;
            let error = caught(d, || {
                let view = d
                    .create_texture(&wgpu::TextureDescriptor {
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
                        usage: wgpu::TextureUsages::RENDER_ATTACHMENT
                            | wgpu::TextureUsages::TRANSIENT_ATTACHMENT,
                        view_formats: &[],
                    })
                    .create_view(&Default::default());
                let mut e = d.create_command_encoder(&Default::default());
                drop(e.begin_render_pass(&wgpu::RenderPassDescriptor {
                    color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                        view: &view,
                        depth_slice: None,
                        resolve_target: None,
                        ops: wgpu::Operations {
                            load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                            store: wgpu::StoreOp::Discard,
                        },
                    })],
                    ..Default::default()
                }));
                gpu.queue.submit([e.finish()]);
            });
            assert_eq!(error, None, "{}", gpu.name);
            d.poll(wgpu::PollType::wait_indefinitely()).expect("poll");
        },
    );
}

/// `get_mapped_range` at an offset that is not a multiple of 8: stock
/// wgpu returns `Err`, which wgpu's custom-backend interface gives a
/// backend no way to make; keel-wgpu reports a validation error and hands
/// out an empty range instead (never the misaligned bytes).
#[test]
fn get_mapped_range_at_an_unaligned_offset_is_refused() {
    each_backend_limits(
        wgpu::Features::empty(),
        wgpu::Features::empty(),
        |_| Default::default(),
        |gpu| {
            let d = &gpu.device;
            let b = d.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: 64,
                usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: true,
            });
            let mut returned_err = false;
            let error = caught(d, || match b.slice(4..12).get_mapped_range() {
                Err(_) => returned_err = true,
                Ok(view) => assert!(
                    view.is_empty(),
                    "{}: a view of {} bytes",
                    gpu.name,
                    view.len()
                ),
            });
            assert!(
                returned_err || error.is_some(),
                "{}: an unaligned mapped range was accepted",
                gpu.name
            );
            b.unmap();
        },
    );
}

/// Views wgpu allows of textures keel-hal makes no view of (a texture
/// with only copy usages; a cube view of a texture without
/// `TEXTURE_BINDING`) are made without an error; a descriptor wgpu
/// refuses still is refused.
#[test]
fn views_keel_hal_has_no_use_for_are_made() {
    each_backend_limits(
        wgpu::Features::empty(),
        wgpu::Features::empty(),
        |_| Default::default(),
        |gpu| {
            let d = &gpu.device;
            let texture = |layers, usage| {
                d.create_texture(&wgpu::TextureDescriptor {
                    label: None,
                    size: wgpu::Extent3d {
                        width: 4,
                        height: 4,
                        depth_or_array_layers: layers,
                    },
                    mip_level_count: 1,
                    sample_count: 1,
                    dimension: wgpu::TextureDimension::D2,
                    format: wgpu::TextureFormat::Rgba8Unorm,
                    usage,
                    view_formats: &[],
                })
            };
            let copy_only = texture(
                1,
                wgpu::TextureUsages::COPY_SRC | wgpu::TextureUsages::COPY_DST,
            );
            let error = caught(d, || drop(copy_only.create_view(&Default::default())));
            assert_eq!(error, None, "{}: view of a copy-only texture", gpu.name);
            let cube = texture(6, wgpu::TextureUsages::RENDER_ATTACHMENT);
            let error = caught(d, || {
                drop(cube.create_view(&wgpu::TextureViewDescriptor {
                    dimension: Some(wgpu::TextureViewDimension::Cube),
                    ..Default::default()
                }))
            });
            assert_eq!(
                error, None,
                "{}: cube view without TEXTURE_BINDING",
                gpu.name
            );
            let error = caught(d, || {
                drop(copy_only.create_view(&wgpu::TextureViewDescriptor {
                    base_mip_level: 1,
                    ..Default::default()
                }))
            });
            assert!(error.is_some(), "{}: a mip past the texture", gpu.name);
        },
    );
}

/// A pipeline-overridable constant given a value with a fraction for an
/// integer override is truncated toward zero, as wgpu reads it (WebIDL's
/// conversion, which keel-hal leaves to the upper layer): `1.9` for a `u32`
/// reaches the shader as 1, `-2.7` for an `i32` as -2.
#[test]
fn integer_overrides_take_truncated_values() {
    const SHADER: &str = "
override count: u32;
@id(3) override delta: i32;
@group(0) @binding(0) var<storage, read_write> out: array<i32, 2>;
@compute @workgroup_size(1) fn main() {
    out[0] = i32(count);
    out[1] = delta;
}
";
    each_backend(wgpu::Features::empty(), |gpu| {
        let d = &gpu.device;
        let module = d.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("overrides"),
            source: wgpu::ShaderSource::Wgsl(SHADER.into()),
        });
        let mut values = None;
        let error = caught(d, || {
            let pipeline = d.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("overrides"),
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &[("count", 1.9), ("3", -2.7)],
                    ..Default::default()
                },
                cache: None,
            });
            let out = buffer(
                d,
                8,
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            );
            let group = d.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &pipeline.get_bind_group_layout(0),
                entries: &[wgpu::BindGroupEntry {
                    binding: 0,
                    resource: out.as_entire_binding(),
                }],
            });
            let mut e = d.create_command_encoder(&Default::default());
            {
                let mut pass = e.begin_compute_pass(&Default::default());
                pass.set_pipeline(&pipeline);
                pass.set_bind_group(0, &group, &[]);
                pass.dispatch_workgroups(1, 1, 1);
            }
            gpu.queue.submit([e.finish()]);
            values = Some(read(gpu, &out, 8));
        });
        assert_eq!(error, None, "{}", gpu.name);
        if gpu.backend != Backend::Noop {
            let got: Vec<i32> = values
                .unwrap_or_default()
                .chunks(4)
                .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            assert_eq!(got, vec![1, -2], "{}", gpu.name);
        }
    });
}
