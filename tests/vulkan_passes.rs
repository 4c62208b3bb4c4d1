//! Vulkan-only checks of pipelines and passes on a real adapter, with the
//! validation layer on (any validation error fails): a compute pass with a
//! dynamic offset and push constants; a 4x MSAA render pass with depth,
//! resolve, culling, indexed multi-draw indirect and the Y-up convention.
//! Skips (with a message) where no Vulkan 1.3 adapter is found.
#![cfg(feature = "vulkan")]

use std::num::NonZeroU64;

use keel_hal::vulkan;
use keel_hal::wgt;
use keel_hal::{Adapter as _, CommandEncoder as _, Device as _, Instance as _, Queue as _};
use keel_hal::{
    Attachment, AttachmentOps, BindGroupDescriptor, BindGroupEntry, BindGroupLayoutDescriptor,
    BindingResource, BufferBarrier, BufferBinding, BufferCopy, BufferDescriptor, BufferTextureCopy,
    BufferUses, ColorAttachment, ComputePassDescriptor, ComputePipelineDescriptor,
    DepthStencilAttachment, DeviceDescriptor, InstanceDescriptor, InstanceFlags, Memory,
    PipelineLayoutDescriptor, ProgrammableStage, PushConstantRange, RenderPassDescriptor,
    RenderPipelineDescriptor, ShaderModuleDescriptor, StateTransition, TextureBarrier,
    TextureCopyBase, TextureDescriptor, TextureUses, TextureViewDescriptor, VertexBufferLayout,
};

struct Gpu {
    instance: vulkan::Instance,
    device: vulkan::Device,
    queue: vulkan::Queue,
}

fn open(name: &str) -> Option<Gpu> {
    let _ = env_logger::builder().is_test(true).try_init();
    let desc = InstanceDescriptor {
        name,
        flags: InstanceFlags::VALIDATION | InstanceFlags::DEBUG,
        ..Default::default()
    };
    // SAFETY: the system loader is trusted.
    let Ok(instance) = (unsafe { vulkan::Instance::init(&desc) }) else {
        println!("skipped: no Vulkan");
        return None;
    };
    // SAFETY: live instance.
    let Some(exposed) = (unsafe { instance.enumerate_adapters() })
        .into_iter()
        .next()
    else {
        println!("skipped: no Vulkan 1.3 adapter");
        return None;
    };
    // SAFETY: opened once, dropped after everything it made.
    let open = unsafe { exposed.adapter.open(&DeviceDescriptor::default()) }.expect("open");
    Some(Gpu {
        instance,
        device: open.device,
        queue: open.queue,
    })
}

impl Gpu {
    fn buffer(&self, size: u64, usage: wgt::BufferUsages, memory: Memory) -> vulkan::Buffer {
        let desc = BufferDescriptor {
            label: None,
            size,
            usage,
            memory,
        };
        // SAFETY: destroyed by the test before the device goes.
        unsafe { self.device.create_buffer(&desc) }.expect("buffer")
    }

    /// Writes `bytes` into a mapped buffer.
    fn write(&self, buffer: &vulkan::Buffer, offset: usize, bytes: &[u8]) {
        // SAFETY: an Upload buffer no pending GPU work uses; in bounds.
        unsafe {
            let map = self.device.map_buffer(buffer).expect("map");
            assert!(offset + bytes.len() <= map.size as usize);
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                map.ptr.as_ptr().add(offset),
                bytes.len(),
            );
        }
    }

    fn read(&self, buffer: &vulkan::Buffer, len: usize) -> Vec<u8> {
        // SAFETY: a Readback buffer the GPU is done with.
        unsafe {
            let map = self.device.map_buffer(buffer).expect("map");
            std::slice::from_raw_parts(map.ptr.as_ptr(), len).to_vec()
        }
    }

    fn module(&self, wgsl: &str) -> vulkan::ShaderModule {
        // SAFETY: live device.
        unsafe {
            self.device
                .create_shader_module(&ShaderModuleDescriptor::wgsl(wgsl))
        }
        .expect("shader module")
    }

    /// Records with `record`, submits, waits, recycles.
    fn run(&self, record: impl FnOnce(&mut vulkan::CommandEncoder)) {
        // SAFETY: everything is waited for before it is reset or destroyed.
        unsafe {
            let mut encoder = self
                .device
                .create_command_encoder(&Default::default())
                .expect("encoder");
            let fence = self.device.create_fence().expect("fence");
            encoder.begin_encoding(Some("test")).expect("begin");
            record(&mut encoder);
            let cb = encoder.end_encoding().expect("end");
            self.queue.submit(&[&cb], &[], &fence, 1).expect("submit");
            // A GPU that never finishes fails the test instead of hanging it.
            let limit = Some(std::time::Duration::from_secs(60));
            let done = self.device.wait(&fence, 1, limit).expect("wait");
            assert!(done, "the GPU did not finish within 60 s");
            encoder.reset_all([cb]);
            self.device.destroy_command_encoder(encoder);
            self.device.destroy_fence(fence);
        }
    }

    fn finish(self) {
        let counts = self.device.live_counts();
        assert_eq!(counts, keel_hal::LiveCounts::default(), "leaked objects");
        let validation = self.instance.validation_counter();
        drop((self.device, self.queue, self.instance));
        assert_eq!(validation.errors(), 0, "validation errors (see the log)");
    }
}

fn buffer_barrier(
    buffer: &vulkan::Buffer,
    from: BufferUses,
    to: BufferUses,
) -> BufferBarrier<'_, vulkan::Buffer> {
    BufferBarrier {
        buffer,
        usage: StateTransition { from, to },
    }
}

const COMPUTE: &str = "
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@group(0) @binding(1) var<uniform> factor: vec4<u32>;
var<immediate> add: vec4<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x < arrayLength(&data) {
        data[id.x] = data[id.x] * factor.x + add.y;
    }
}
";

#[test]
fn compute_with_dynamic_offset_push_constants_and_indirect_dispatch() {
    let Some(gpu) = open("keel-hal compute pass") else {
        return;
    };
    use wgt::BufferUsages as U;
    const N: u32 = 4096;
    let bytes = u64::from(N) * 4;
    let input: Vec<u8> = (0..N).flat_map(u32::to_ne_bytes).collect();
    let upload = gpu.buffer(bytes, U::COPY_SRC | U::MAP_WRITE, Memory::Upload);
    gpu.write(&upload, 0, &input);
    let data = gpu.buffer(
        bytes,
        U::STORAGE | U::COPY_DST | U::COPY_SRC,
        Memory::Device,
    );
    let readback = gpu.buffer(bytes, U::COPY_DST | U::MAP_READ, Memory::Readback);
    // Factor 3 at offset 0, factor 2 at 256: the dynamic offset picks 2.
    let uniform = gpu.buffer(512, U::UNIFORM | U::MAP_WRITE, Memory::Upload);
    gpu.write(&uniform, 0, &[3u32, 0, 0, 0].map(u32::to_ne_bytes).concat());
    gpu.write(
        &uniform,
        256,
        &[2u32, 0, 0, 0].map(u32::to_ne_bytes).concat(),
    );
    let indirect = gpu.buffer(64, U::INDIRECT | U::MAP_WRITE, Memory::Upload);
    gpu.write(
        &indirect,
        16,
        &[N / 64, 1, 1].map(u32::to_ne_bytes).concat(),
    );

    let entries = [
        wgt::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgt::ShaderStages::COMPUTE,
            ty: wgt::BindingType::Buffer {
                ty: wgt::BufferBindingType::Storage { read_only: false },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        },
        wgt::BindGroupLayoutEntry {
            binding: 1,
            visibility: wgt::ShaderStages::COMPUTE,
            ty: wgt::BindingType::Buffer {
                ty: wgt::BufferBindingType::Uniform,
                has_dynamic_offset: true,
                min_binding_size: NonZeroU64::new(16),
            },
            count: None,
        },
    ];
    // SAFETY: every object is destroyed below, after the GPU is done.
    unsafe {
        let device = &gpu.device;
        let bgl = device
            .create_bind_group_layout(&BindGroupLayoutDescriptor {
                entries: &entries,
                ..Default::default()
            })
            .expect("bind group layout");
        let group_entries = [
            BindGroupEntry {
                binding: 0,
                resource: BindingResource::Buffer(BufferBinding::whole(&data)),
            },
            BindGroupEntry {
                binding: 1,
                resource: BindingResource::Buffer(BufferBinding {
                    buffer: &uniform,
                    offset: 0,
                    size: NonZeroU64::new(16),
                }),
            },
        ];
        let group = device
            .create_bind_group(&BindGroupDescriptor::<vulkan::Api> {
                label: Some("compute group"),
                layout: &bgl,
                entries: &group_entries,
            })
            .expect("bind group");
        let ranges = [PushConstantRange {
            stages: wgt::ShaderStages::COMPUTE,
            range: 0..16,
        }];
        let layout = device
            .create_pipeline_layout(&PipelineLayoutDescriptor::<vulkan::Api> {
                label: None,
                bind_group_layouts: &[&bgl],
                push_constant_ranges: &ranges,
            })
            .expect("pipeline layout");
        let module = gpu.module(COMPUTE);
        let pipeline = device
            .create_compute_pipeline(&ComputePipelineDescriptor::<vulkan::Api> {
                label: Some("double"),
                layout: &layout,
                stage: ProgrammableStage {
                    module: &module,
                    entry_point: "main",
                    constants: &[],
                },
                cache: None,
            })
            .expect("compute pipeline");

        gpu.run(|e| {
            e.copy_buffer_to_buffer(
                &upload,
                &data,
                &[BufferCopy {
                    src_offset: 0,
                    dst_offset: 0,
                    size: bytes,
                }],
            );
            e.transition_buffers(&[buffer_barrier(
                &data,
                BufferUses::COPY_DST,
                BufferUses::STORAGE_READ_WRITE,
            )]);
            e.begin_compute_pass(&ComputePassDescriptor {
                label: Some("compute"),
            });
            e.set_compute_pipeline(&pipeline);
            e.set_bind_group(&layout, 0, &group, &[256]);
            e.set_push_constants(&layout, wgt::ShaderStages::COMPUTE, 0, &[0, 1, 0, 0]);
            e.dispatch([N / 64, 1, 1]);
            // Out of bounds: logged and skipped, never reaches the driver.
            e.dispatch_indirect(&indirect, 60);
            e.end_compute_pass();
            e.transition_buffers(&[buffer_barrier(
                &data,
                BufferUses::STORAGE_READ_WRITE,
                BufferUses::STORAGE_READ_WRITE,
            )]);
            e.begin_compute_pass(&ComputePassDescriptor::default());
            e.set_compute_pipeline(&pipeline);
            e.set_bind_group(&layout, 0, &group, &[0]);
            e.set_push_constants(&layout, wgt::ShaderStages::COMPUTE, 4, &[0]);
            e.dispatch_indirect(&indirect, 16);
            e.end_compute_pass();
            e.transition_buffers(&[buffer_barrier(
                &data,
                BufferUses::STORAGE_READ_WRITE,
                BufferUses::COPY_SRC,
            )]);
            e.copy_buffer_to_buffer(
                &data,
                &readback,
                &[BufferCopy {
                    src_offset: 0,
                    dst_offset: 0,
                    size: bytes,
                }],
            );
        });
        let out = gpu.read(&readback, bytes as usize);
        for (i, word) in out.chunks_exact(4).enumerate() {
            let got = u32::from_ne_bytes(word.try_into().unwrap());
            // First pass: x * 2 + 1; second: (x * 2 + 1) * 3 + 0.
            assert_eq!(got, (i as u32 * 2 + 1) * 3, "element {i}");
        }

        device.destroy_compute_pipeline(pipeline);
        device.destroy_shader_module(module);
        device.destroy_pipeline_layout(layout);
        device.destroy_bind_group(group);
        device.destroy_bind_group_layout(bgl);
        for b in [upload, data, readback, uniform, indirect] {
            device.destroy_buffer(b);
        }
    }
    gpu.finish();
}

const RENDER: &str = "
struct Out { @builtin(position) pos: vec4<f32>, @location(0) color: vec4<f32> }
@vertex
fn vs(@location(0) pos: vec3<f32>, @location(1) color: vec3<f32>) -> Out {
    return Out(vec4<f32>(pos, 1.0), vec4<f32>(color, 1.0));
}
@fragment
fn fs(in: Out) -> @location(0) vec4<f32> { return in.color; }
";

const SIZE: u32 = 64;

#[test]
fn msaa_depth_resolve_indexed_indirect_and_y_up() {
    let Some(gpu) = open("keel-hal render pass") else {
        return;
    };
    use wgt::BufferUsages as U;
    // A green triangle in the upper half at depth 0.5 (counter-clockwise,
    // so back-face culling keeps it), then a red full-screen quad behind it.
    #[rustfmt::skip]
    let vertices: [f32; 42] = [
        -0.5, 0.1, 0.5,   0.0, 1.0, 0.0,
         0.5, 0.1, 0.5,   0.0, 1.0, 0.0,
         0.0, 0.9, 0.5,   0.0, 1.0, 0.0,
        -1.0, -1.0, 0.9,  1.0, 0.0, 0.0,
         1.0, -1.0, 0.9,  1.0, 0.0, 0.0,
         1.0, 1.0, 0.9,   1.0, 0.0, 0.0,
        -1.0, 1.0, 0.9,   1.0, 0.0, 0.0,
    ];
    let indices: [u16; 10] = [0, 1, 2, 3, 4, 5, 3, 5, 6, 0];
    // Two VkDrawIndexedIndirectCommands: the triangle, then the quad.
    let args: [u32; 10] = [3, 1, 0, 0, 0, 6, 1, 3, 0, 0];
    let vertex_buffer = gpu.buffer(256, U::VERTEX | U::MAP_WRITE, Memory::Upload);
    gpu.write(&vertex_buffer, 0, &vertices.map(f32::to_ne_bytes).concat());
    let index_buffer = gpu.buffer(64, U::INDEX | U::MAP_WRITE, Memory::Upload);
    gpu.write(&index_buffer, 0, &indices.map(u16::to_ne_bytes).concat());
    let indirect = gpu.buffer(64, U::INDIRECT | U::MAP_WRITE, Memory::Upload);
    gpu.write(&indirect, 0, &args.map(u32::to_ne_bytes).concat());
    let readback = gpu.buffer(
        u64::from(SIZE * SIZE * 4),
        U::COPY_DST | U::MAP_READ,
        Memory::Readback,
    );

    let texture = |format, samples, usage| TextureDescriptor {
        size: wgt::Extent3d {
            width: SIZE,
            height: SIZE,
            depth_or_array_layers: 1,
        },
        sample_count: samples,
        format,
        usage,
        ..Default::default()
    };
    use wgt::TextureUsages as T;
    // SAFETY: every object is destroyed below, after the GPU is done.
    unsafe {
        let device = &gpu.device;
        let msaa = device
            .create_texture(&texture(
                wgt::TextureFormat::Rgba8Unorm,
                4,
                T::RENDER_ATTACHMENT,
            ))
            .expect("msaa");
        let resolved = device
            .create_texture(&texture(
                wgt::TextureFormat::Rgba8Unorm,
                1,
                T::RENDER_ATTACHMENT | T::COPY_SRC,
            ))
            .expect("resolved");
        let depth = device
            .create_texture(&texture(
                wgt::TextureFormat::Depth32Float,
                4,
                T::RENDER_ATTACHMENT,
            ))
            .expect("depth");
        let view = |t| {
            device
                .create_texture_view(t, &TextureViewDescriptor::default())
                .expect("view")
        };
        let (msaa_view, resolved_view, depth_view) = (view(&msaa), view(&resolved), view(&depth));

        let layout = device
            .create_pipeline_layout(&PipelineLayoutDescriptor::<vulkan::Api> {
                label: None,
                bind_group_layouts: &[],
                push_constant_ranges: &[],
            })
            .expect("layout");
        let module = gpu.module(RENDER);
        let attributes = [
            wgt::VertexAttribute {
                format: wgt::VertexFormat::Float32x3,
                offset: 0,
                shader_location: 0,
            },
            wgt::VertexAttribute {
                format: wgt::VertexFormat::Float32x3,
                offset: 12,
                shader_location: 1,
            },
        ];
        let buffers = [VertexBufferLayout {
            array_stride: 24,
            step_mode: wgt::VertexStepMode::Vertex,
            attributes: &attributes,
        }];
        let targets = [Some(wgt::ColorTargetState::from(
            wgt::TextureFormat::Rgba8Unorm,
        ))];
        let pipeline = device
            .create_render_pipeline(&RenderPipelineDescriptor::<vulkan::Api> {
                label: Some("triangle"),
                layout: &layout,
                vertex_buffers: &buffers,
                vertex_stage: ProgrammableStage {
                    module: &module,
                    entry_point: "vs",
                    constants: &[],
                },
                primitive: wgt::PrimitiveState {
                    cull_mode: Some(wgt::Face::Back),
                    ..Default::default()
                },
                depth_stencil: Some(wgt::DepthStencilState {
                    format: wgt::TextureFormat::Depth32Float,
                    depth_write_enabled: Some(true),
                    depth_compare: Some(wgt::CompareFunction::Less),
                    stencil: Default::default(),
                    bias: Default::default(),
                }),
                multisample: wgt::MultisampleState {
                    count: 4,
                    ..Default::default()
                },
                fragment_stage: Some(ProgrammableStage {
                    module: &module,
                    entry_point: "fs",
                    constants: &[],
                }),
                color_targets: &targets,
                cache: None,
                multiview_mask: None,
            })
            .expect("render pipeline");

        let all = wgt::ImageSubresourceRange::default();
        let barrier = |texture, from, to| TextureBarrier {
            texture,
            range: all,
            usage: StateTransition { from, to },
        };
        gpu.run(|e| {
            e.transition_textures(&[
                barrier(&msaa, TextureUses::UNINITIALIZED, TextureUses::COLOR_TARGET),
                barrier(
                    &resolved,
                    TextureUses::UNINITIALIZED,
                    TextureUses::COLOR_TARGET,
                ),
                barrier(
                    &depth,
                    TextureUses::UNINITIALIZED,
                    TextureUses::DEPTH_STENCIL_WRITE,
                ),
            ]);
            let colors = [Some(ColorAttachment {
                target: Attachment {
                    view: &msaa_view,
                    usage: TextureUses::COLOR_TARGET,
                },
                resolve_target: Some(Attachment {
                    view: &resolved_view,
                    usage: TextureUses::COLOR_TARGET,
                }),
                ops: AttachmentOps::empty(),
                clear_value: wgt::Color::BLUE,
            })];
            e.begin_render_pass(&RenderPassDescriptor::<vulkan::Api> {
                label: Some("render"),
                extent: wgt::Extent3d {
                    width: SIZE,
                    height: SIZE,
                    depth_or_array_layers: 1,
                },
                sample_count: 4,
                color_attachments: &colors,
                depth_stencil_attachment: Some(DepthStencilAttachment {
                    target: Attachment {
                        view: &depth_view,
                        usage: TextureUses::DEPTH_STENCIL_WRITE,
                    },
                    depth_ops: AttachmentOps::empty(),
                    stencil_ops: AttachmentOps::empty(),
                    clear_value: (1.0, 0),
                }),
                multiview_mask: None,
            });
            e.set_render_pipeline(&pipeline);
            e.set_vertex_buffer(0, BufferBinding::whole(&vertex_buffer));
            e.set_index_buffer(
                BufferBinding::whole(&index_buffer),
                wgt::IndexFormat::Uint16,
            );
            // Past the end: logged and skipped.
            e.draw_indexed_indirect(&indirect, 40, 2);
            e.draw_indexed_indirect(&indirect, 0, 2);
            e.end_render_pass();
            e.transition_textures(&[barrier(
                &resolved,
                TextureUses::COLOR_TARGET,
                TextureUses::COPY_SRC,
            )]);
            e.copy_texture_to_buffer(
                &resolved,
                TextureUses::COPY_SRC,
                &readback,
                &[BufferTextureCopy {
                    buffer_layout: wgt::TexelCopyBufferLayout {
                        offset: 0,
                        bytes_per_row: Some(SIZE * 4),
                        rows_per_image: None,
                    },
                    texture_base: TextureCopyBase {
                        mip_level: 0,
                        array_layer: 0,
                        origin: wgt::Origin3d::ZERO,
                        aspect: wgt::TextureAspect::All,
                    },
                    size: wgt::Extent3d {
                        width: SIZE,
                        height: SIZE,
                        depth_or_array_layers: 1,
                    },
                }],
            );
        });
        let pixels = gpu.read(&readback, (SIZE * SIZE * 4) as usize);
        let at = |x: u32, y: u32| {
            let i = ((y * SIZE + x) * 4) as usize;
            [pixels[i], pixels[i + 1], pixels[i + 2], pixels[i + 3]]
        };
        assert_eq!(
            at(32, 20),
            [0, 255, 0, 255],
            "triangle in the upper half (Y up)"
        );
        assert_eq!(at(32, 50), [255, 0, 0, 255], "quad behind, lower half");
        assert_eq!(at(2, 2), [255, 0, 0, 255], "quad in the corner");
        // An edge pixel of the triangle is resolved to a blend of both colours.
        let edge = (0..SIZE)
            .map(|x| at(x, 20))
            .find(|p| p[0] != 0 && p[1] != 0);
        assert!(edge.is_some(), "MSAA resolve averages edge samples");

        device.destroy_render_pipeline(pipeline);
        device.destroy_shader_module(module);
        device.destroy_pipeline_layout(layout);
        for v in [msaa_view, resolved_view, depth_view] {
            device.destroy_texture_view(v);
        }
        for t in [msaa, resolved, depth] {
            device.destroy_texture(t);
        }
        for b in [vertex_buffer, index_buffer, indirect, readback] {
            device.destroy_buffer(b);
        }
    }
    gpu.finish();
}

#[test]
fn pipeline_errors_are_typed() {
    let Some(gpu) = open("keel-hal pipeline errors") else {
        return;
    };
    // SAFETY: every object is destroyed below.
    unsafe {
        let device = &gpu.device;
        let layout = device
            .create_pipeline_layout(&PipelineLayoutDescriptor::<vulkan::Api> {
                label: None,
                bind_group_layouts: &[],
                push_constant_ranges: &[],
            })
            .expect("layout");
        let module = gpu.module(COMPUTE);
        let desc = |entry_point| ComputePipelineDescriptor::<vulkan::Api> {
            label: None,
            layout: &layout,
            stage: ProgrammableStage {
                module: &module,
                entry_point,
                constants: &[],
            },
            cache: None,
        };
        let before = device.live_counts();
        match device.create_compute_pipeline(&desc("nope")) {
            Err(keel_hal::PipelineError::EntryPoint { name, .. }) => assert_eq!(name, "nope"),
            other => panic!("expected a missing entry point, got {other:?}"),
        }
        match device.create_compute_pipeline(&desc("main")) {
            Err(keel_hal::PipelineError::InterfaceMismatch(message)) => {
                assert!(message.contains("group 0"), "{message}")
            }
            other => panic!("expected an interface mismatch, got {other:?}"),
        }
        assert_eq!(
            device.live_counts(),
            before,
            "a failed pipeline leaves nothing"
        );

        // SPIR-V passes through; its entry points are still looked up.
        let plain = "@compute @workgroup_size(1) fn main() {}";
        let ir = naga::front::wgsl::parse_str(plain).expect("wgsl");
        let info = naga::valid::Validator::new(Default::default(), Default::default())
            .validate(&ir)
            .expect("valid");
        let words = naga::back::spv::write_vec(&ir, &info, &Default::default(), None).expect("spv");
        let spirv = device
            .create_shader_module(&ShaderModuleDescriptor {
                label: Some("spir-v"),
                source: keel_hal::ShaderSource::SpirV(words.into()),
            })
            .expect("SPIR-V module");
        let spirv_desc = |entry_point| ComputePipelineDescriptor::<vulkan::Api> {
            label: None,
            layout: &layout,
            stage: ProgrammableStage {
                module: &spirv,
                entry_point,
                constants: &[],
            },
            cache: None,
        };
        match device.create_compute_pipeline(&spirv_desc("mian")) {
            Err(keel_hal::PipelineError::EntryPoint { .. }) => {}
            other => panic!("expected a missing entry point, got {other:?}"),
        }
        let pipeline = device
            .create_compute_pipeline(&spirv_desc("main"))
            .expect("pipeline");
        device.destroy_compute_pipeline(pipeline);
        device.destroy_shader_module(spirv);
        device.destroy_shader_module(module);
        device.destroy_pipeline_layout(layout);
    }
    gpu.finish();
}

/// Synchronization validation is on with `InstanceFlags::VALIDATION`: two
/// copies writing one buffer with no barrier between them are a
/// write-after-write hazard the layer reports, and keel-hal counts it as an
/// error; the same copies with a barrier are clean.
#[test]
fn sync_validation_counts_a_missing_barrier() {
    let Some(gpu) = open("sync-validation") else {
        return;
    };
    if !gpu.instance.validation_enabled() {
        println!("skipped: the validation layer is not installed");
        return gpu.finish();
    }
    assert!(
        gpu.instance.sync_validation_enabled(),
        "VALIDATION should turn synchronization validation on"
    );
    let usage = wgt::BufferUsages::COPY_SRC | wgt::BufferUsages::COPY_DST;
    let src = gpu.buffer(256, usage, Memory::Device);
    let dst = gpu.buffer(256, usage, Memory::Device);
    let region = [BufferCopy {
        src_offset: 0,
        dst_offset: 0,
        size: 256,
    }];
    let counter = gpu.instance.validation_counter();
    // SAFETY: both buffers are live and idle; the run waits for the GPU.
    gpu.run(|encoder| unsafe {
        encoder.copy_buffer_to_buffer(&src, &dst, &region);
        encoder.transition_buffers(&[buffer_barrier(
            &dst,
            BufferUses::COPY_DST,
            BufferUses::COPY_DST,
        )]);
        encoder.copy_buffer_to_buffer(&src, &dst, &region);
    });
    assert_eq!(counter.errors(), 0, "copies ordered by a barrier are clean");
    // SAFETY: as above; the hazard is the point of the test.
    gpu.run(|encoder| unsafe {
        encoder.copy_buffer_to_buffer(&src, &dst, &region);
        encoder.copy_buffer_to_buffer(&src, &dst, &region);
    });
    let hazards = counter.errors();
    assert!(hazards > 0, "the write-after-write hazard was not reported");
    // SAFETY: idle after `run`.
    unsafe {
        gpu.device.destroy_buffer(src);
        gpu.device.destroy_buffer(dst);
    }
    let counts = gpu.device.live_counts();
    assert_eq!(counts, keel_hal::LiveCounts::default(), "leaked objects");
    println!("the missing barrier was reported as {hazards} error(s)");
}

/// Vulkan 1.3 (keel-hal's floor) has `shaderZeroInitializeWorkgroupMemory`:
/// shaders leave zeroing `var<workgroup>` memory to the driver, as
/// wgpu-hal's do, instead of naga's in-shader polyfill (a loop and a
/// barrier per workgroup: 140 times slower on lavapipe for a 16 KiB
/// array). keel-wgpu's `tests/correctness.rs` reads such memory back as
/// zeros.
#[test]
fn workgroup_memory_is_zeroed_by_the_driver() {
    let Some(gpu) = open("workgroup-zeroing") else {
        return;
    };
    assert!(gpu.device.zeroes_workgroup_memory_natively());
    gpu.finish();
}
