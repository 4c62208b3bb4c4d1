//! Fault-injection sweep over every create path of the Vulkan backend.
//!
//! For each path and N = 1, 2, …: make the Nth hooked Vulkan call fail,
//! run the path, and check that a typed error came back (or that the
//! failure was absorbed, e.g. by VMA retrying elsewhere), and that nothing
//! leaked, until the path runs through without the fault firing. "Nothing
//! leaked" is checked twice: the hal's `live_counts` are unchanged, and so
//! is the thread's net count of Vulkan creates minus destroys
//! (`fault::net_creates`), which also sees objects the hal never counted.
//! Each path runs once unarmed first, so caches that legitimately outlive a
//! step (VMA keeps one empty memory block) are already warm. Three passes:
//! out of device memory, out of host memory, device lost; the instance's
//! own create path is swept too. The external-memory paths (export, fd and
//! host-pointer import, semaphores where the adapter has them) also check
//! that the process's open fd count (`/proc/self/fd`) is unchanged after
//! every failed step: an imported fd is consumed exactly once. The tests of
//! this file run one at a time (`SERIAL`), so that count is theirs alone. At the end the instance is dropped and
//! then the validation layer's error count is read (its object tracker
//! reports leaked objects at `vkDestroyDevice`/`vkDestroyInstance`): it must
//! be zero.
//!
//! Surfaces and swapchains (`Instance::create_surface`, `Surface::configure`)
//! are not swept: they need a window and a display server, which the CI
//! sweep does not have. Their semaphores are made with the hooked
//! `vkCreateSemaphore`; the `VK_KHR_surface`/`VK_KHR_swapchain` functions are
//! not hooked.
#![cfg(feature = "fault-injection")]

use std::time::Duration;

use ash::vk;
use keel_hal::vulkan::{self, fault};
use keel_hal::wgt;
use keel_hal::{
    Adapter as _, CommandEncoder as _, Device as _, DeviceError, Instance as _, Queue as _,
};
use keel_hal::{
    BindGroupDescriptor, BindGroupEntry, BindGroupLayoutDescriptor, BindingResource, BufferBinding,
    BufferDescriptor, CommandEncoderDescriptor, DeviceDescriptor, InstanceDescriptor,
    InstanceFlags, Memory, PipelineLayoutDescriptor, PushConstantRange, QuerySetDescriptor,
    SamplerDescriptor, TextureDescriptor, TextureViewDescriptor,
};

/// Serialises the tests of this file: fd counts are process-wide.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[path = "support/fds.rs"]
mod fds;
use fds::{new_fds_settled, owned_fds};

/// How a path ended.
#[derive(Debug)]
enum Outcome {
    Done,
    /// A typed error carrying a `DeviceError`.
    Device(DeviceError),
    /// Any other error: always a test failure under injection.
    Other(String),
}

/// Maps a typed hal error to an [`Outcome`], keeping its `DeviceError`.
macro_rules! outcome {
    ($result:expr, $($variant:path),+) => {
        match $result {
            Ok(v) => Ok(v),
            $(Err($variant(d)) => Err(Outcome::Device(d)),)+
            Err(e) => Err(Outcome::Other(format!("{e:?}"))),
        }
    };
}

type Step<T> = Result<T, Outcome>;

fn dev<T>(r: Result<T, DeviceError>) -> Step<T> {
    r.map_err(Outcome::Device)
}

/// Injection points of one path: calls made to fail, and how many of those
/// the path absorbed (recovered from and succeeded anyway).
#[derive(Clone, Copy, Debug, Default)]
struct Points {
    total: u64,
    absorbed: u64,
}

/// Runs a path until it passes without the fault firing.
fn sweep(
    name: &str,
    result: vk::Result,
    counts: impl Fn() -> keel_hal::LiveCounts,
    mut path: impl FnMut() -> Step<()>,
) -> Points {
    let expected = match result {
        vk::Result::ERROR_DEVICE_LOST => DeviceError::Lost,
        _ => DeviceError::OutOfMemory,
    };
    let mut points = Points::default();
    if let Err(e) = path() {
        panic!("{name}: fails without an injected fault: {e:?}");
    }
    for n in 1.. {
        let before = counts();
        let net_before = fault::net_creates();
        let fds_before = owned_fds();
        fault::arm(n, result);
        let outcome = match path() {
            Ok(()) => Outcome::Done,
            Err(o) => o,
        };
        let report = fault::disarm();
        assert_eq!(
            counts(),
            before,
            "{name}: live objects changed after failing call {n} with {result:?} ({outcome:?})"
        );
        let leaked_fds = new_fds_settled(&fds_before);
        assert!(
            leaked_fds.is_empty(),
            "{name}: fds left open after failing call {n} with {result:?} ({outcome:?}): \
             {leaked_fds:?}"
        );
        assert_eq!(
            fault::net_creates(),
            net_before,
            "{name}: Vulkan objects leaked (creates minus destroys) after failing call {n} \
             with {result:?} ({outcome:?})"
        );
        if !report.fired {
            assert!(
                matches!(outcome, Outcome::Done),
                "{name}: failed without an injected fault: {outcome:?}"
            );
            break;
        }
        points.total += 1;
        match outcome {
            Outcome::Done => {
                log::info!("{name}: fault at call {n} ({result:?}) absorbed; path succeeded");
                points.absorbed += 1;
            }
            Outcome::Device(d) => assert_eq!(
                d, expected,
                "{name}: call {n} failed with {result:?}, but the hal reported {d:?}"
            ),
            Outcome::Other(e) => {
                panic!("{name}: call {n} failed with {result:?}: untyped outcome {e}")
            }
        }
        assert!(n < 10_000, "{name}: the sweep does not terminate");
    }
    points
}

fn buffer_path(device: &vulkan::Device, memory: Memory, usage: wgt::BufferUsages) -> Step<()> {
    let desc = BufferDescriptor {
        label: Some("fault buffer"),
        size: 4096,
        usage,
        memory,
    };
    // SAFETY: the buffer is destroyed before the device; no GPU work uses it.
    unsafe {
        let buffer = outcome!(device.create_buffer(&desc), keel_hal::BufferError::Device)?;
        if memory.is_mappable() {
            let map = device.map_buffer(&buffer);
            if let Ok(map) = &map {
                map.ptr.as_ptr().write_bytes(0xAB, 16);
            }
            device.destroy_buffer(buffer);
            outcome!(map, keel_hal::MapError::Device)?;
        } else {
            device.destroy_buffer(buffer);
        }
    }
    Ok(())
}

fn texture_desc() -> TextureDescriptor<'static> {
    TextureDescriptor {
        label: Some("fault texture"),
        size: wgt::Extent3d {
            width: 64,
            height: 64,
            depth_or_array_layers: 6,
        },
        mip_level_count: 3,
        usage: wgt::TextureUsages::TEXTURE_BINDING | wgt::TextureUsages::COPY_DST,
        view_formats: &[wgt::TextureFormat::Rgba8UnormSrgb],
        ..Default::default()
    }
}

fn texture_path(device: &vulkan::Device) -> Step<()> {
    // SAFETY: destroyed right away; no GPU work uses it.
    unsafe {
        let texture = outcome!(
            device.create_texture(&texture_desc()),
            keel_hal::TextureError::Device
        )?;
        device.destroy_texture(texture);
    }
    Ok(())
}

fn view_path(device: &vulkan::Device, texture: &vulkan::Texture) -> Step<()> {
    let descs = [
        TextureViewDescriptor {
            label: Some("fault cube view"),
            dimension: Some(wgt::TextureViewDimension::Cube),
            ..Default::default()
        },
        TextureViewDescriptor {
            label: Some("fault srgb view"),
            format: Some(wgt::TextureFormat::Rgba8UnormSrgb),
            dimension: Some(wgt::TextureViewDimension::D2),
            range: wgt::ImageSubresourceRange {
                base_mip_level: 1,
                mip_level_count: Some(1),
                base_array_layer: 2,
                array_layer_count: Some(1),
                ..Default::default()
            },
        },
    ];
    let mut views = Vec::new();
    let mut result = Ok(());
    for desc in &descs {
        // SAFETY: the texture outlives its views, destroyed below.
        match outcome!(
            unsafe { device.create_texture_view(texture, desc) },
            keel_hal::TextureError::Device
        ) {
            Ok(v) => views.push(v),
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    for view in views {
        // SAFETY: no GPU work uses the view.
        unsafe { device.destroy_texture_view(view) };
    }
    result
}

fn sampler_path(device: &vulkan::Device, anisotropy: bool) -> Step<()> {
    let desc = SamplerDescriptor {
        label: Some("fault sampler"),
        mag_filter: wgt::FilterMode::Linear,
        min_filter: wgt::FilterMode::Linear,
        mipmap_filter: wgt::MipmapFilterMode::Linear,
        anisotropy_clamp: if anisotropy { 4 } else { 1 },
        compare: Some(wgt::CompareFunction::LessEqual),
        ..Default::default()
    };
    // SAFETY: destroyed right away.
    unsafe {
        let sampler = outcome!(device.create_sampler(&desc), keel_hal::SamplerError::Device)?;
        device.destroy_sampler(sampler);
    }
    Ok(())
}

fn query_path(device: &vulkan::Device, ty: wgt::QueryType) -> Step<()> {
    let desc = QuerySetDescriptor {
        label: Some("fault queries"),
        ty,
        count: 16,
    };
    // SAFETY: destroyed right away.
    unsafe {
        let set = outcome!(
            device.create_query_set(&desc),
            keel_hal::QuerySetError::Device
        )?;
        device.destroy_query_set(set);
    }
    Ok(())
}

fn fence_path(device: &vulkan::Device) -> Step<()> {
    // SAFETY: the fence is never submitted; destroyed right away.
    unsafe {
        let fence = dev(device.create_fence())?;
        let checks = dev(device.get_fence_value(&fence)).and_then(|v| {
            assert_eq!(v, 0);
            dev(device.wait(&fence, 0, Some(Duration::ZERO)))
        });
        device.destroy_fence(fence);
        assert!(checks?, "a fence at 0 is reached at once");
    }
    Ok(())
}

fn encoder_path(device: &vulkan::Device) -> Step<()> {
    // SAFETY: nothing recorded is submitted; the encoder is destroyed last.
    unsafe {
        let desc = CommandEncoderDescriptor {
            label: Some("fault encoder"),
        };
        let mut encoder = dev(device.create_command_encoder(&desc))?;
        let recorded = dev(encoder.begin_encoding(Some("fault recording")))
            .and_then(|()| dev(encoder.end_encoding()));
        let result = recorded.map(|cb| encoder.reset_all([cb]));
        device.destroy_command_encoder(encoder);
        result
    }
}

/// Two bindings, a uniform buffer and a sampler: the shape of every layout
/// the binding paths make (one descriptor-allocator bucket).
fn layout_entries() -> [wgt::BindGroupLayoutEntry; 2] {
    [
        wgt::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgt::ShaderStages::COMPUTE,
            ty: wgt::BindingType::Buffer {
                ty: wgt::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        },
        wgt::BindGroupLayoutEntry {
            binding: 1,
            visibility: wgt::ShaderStages::COMPUTE,
            ty: wgt::BindingType::Sampler(wgt::SamplerBindingType::Filtering),
            count: None,
        },
    ]
}

fn create_layout(device: &vulkan::Device) -> Step<vulkan::BindGroupLayout> {
    let entries = layout_entries();
    let desc = BindGroupLayoutDescriptor {
        label: Some("fault layout"),
        entries: &entries,
        ..Default::default()
    };
    // SAFETY: live device.
    outcome!(
        unsafe { device.create_bind_group_layout(&desc) },
        keel_hal::BindingError::Device
    )
}

/// Creates and destroys a bind group layout: with no other layout of its
/// shape alive, this opens (and then closes) a descriptor-pool bucket.
fn layout_path(device: &vulkan::Device) -> Step<()> {
    let layout = create_layout(device)?;
    // SAFETY: no bind group or pipeline layout uses it.
    unsafe { device.destroy_bind_group_layout(layout) };
    Ok(())
}

/// A fresh layout (so its set is a fresh allocation), a bind group of it
/// over `buffer` and `sampler`, then both destroyed.
fn bind_group_path(
    device: &vulkan::Device,
    buffer: &vulkan::Buffer,
    sampler: &vulkan::Sampler,
) -> Step<()> {
    let layout = create_layout(device)?;
    let entries = [
        BindGroupEntry {
            binding: 0,
            resource: BindingResource::Buffer(BufferBinding::whole(buffer)),
        },
        BindGroupEntry {
            binding: 1,
            resource: BindingResource::Sampler(sampler),
        },
    ];
    let desc = BindGroupDescriptor::<vulkan::Api> {
        label: Some("fault bind group"),
        layout: &layout,
        entries: &entries,
    };
    // SAFETY: the resources outlive the group; no GPU work uses it; the
    // group goes before its layout.
    unsafe {
        let group = outcome!(
            device.create_bind_group(&desc),
            keel_hal::BindingError::Device
        );
        let result = group.map(|group| device.destroy_bind_group(group));
        device.destroy_bind_group_layout(layout);
        result
    }
}

fn pipeline_layout_path(device: &vulkan::Device, layout: &vulkan::BindGroupLayout) -> Step<()> {
    let layouts = [layout];
    let ranges = [PushConstantRange {
        stages: wgt::ShaderStages::COMPUTE,
        range: 0..16,
    }];
    let desc = PipelineLayoutDescriptor::<vulkan::Api> {
        label: Some("fault pipeline layout"),
        bind_group_layouts: &layouts,
        push_constant_ranges: &ranges,
    };
    // SAFETY: the bind group layout outlives the pipeline layout; no
    // pipeline uses it.
    unsafe {
        let layout = outcome!(
            device.create_pipeline_layout(&desc),
            keel_hal::BindingError::Device
        )?;
        device.destroy_pipeline_layout(layout);
    }
    Ok(())
}

const COMPUTE_WGSL: &str = "
@group(0) @binding(0) var<uniform> scale: vec4<u32>;
var<immediate> extra: vec4<u32>;
var<workgroup> scratch: array<u32, 64>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) i: u32) {
    scratch[i] = scale.x * i + extra.y;
}
";

const RENDER_WGSL: &str = "
struct Out { @builtin(position) pos: vec4<f32>, @location(0) color: vec4<f32> }
@vertex
fn vs(@location(0) xy: vec2<f32>) -> Out {
    return Out(vec4<f32>(xy, 0.5, 1.0), vec4<f32>(xy, 0.0, 1.0));
}
@fragment
fn fs(in: Out) -> @location(0) vec4<f32> { return in.color; }
";

/// A WGSL shader module: parsed, validated and kept (no Vulkan call; the
/// sweep checks that the counters balance).
fn shader_module_path(device: &vulkan::Device, wgsl: &str) -> Step<vulkan::ShaderModule> {
    let desc = keel_hal::ShaderModuleDescriptor {
        label: Some("fault shader"),
        ..keel_hal::ShaderModuleDescriptor::wgsl(wgsl)
    };
    // SAFETY: live device.
    outcome!(
        unsafe { device.create_shader_module(&desc) },
        keel_hal::ShaderError::Device
    )
}

fn compute_pipeline_path(
    device: &vulkan::Device,
    layout: &vulkan::PipelineLayout,
    module: &vulkan::ShaderModule,
) -> Step<()> {
    let desc = keel_hal::ComputePipelineDescriptor::<vulkan::Api> {
        label: Some("fault compute pipeline"),
        layout,
        stage: keel_hal::ProgrammableStage {
            module,
            entry_point: "main",
            constants: &[],
        },
        cache: None,
    };
    // SAFETY: the layout and module came from this device; destroyed at once.
    unsafe {
        let pipeline = outcome!(
            device.create_compute_pipeline(&desc),
            keel_hal::PipelineError::Device
        )?;
        device.destroy_compute_pipeline(pipeline);
    }
    Ok(())
}

fn render_pipeline_path(
    device: &vulkan::Device,
    layout: &vulkan::PipelineLayout,
    module: &vulkan::ShaderModule,
) -> Step<()> {
    let attributes = [wgt::VertexAttribute {
        format: wgt::VertexFormat::Float32x2,
        offset: 0,
        shader_location: 0,
    }];
    let buffers = [keel_hal::VertexBufferLayout {
        array_stride: 8,
        step_mode: wgt::VertexStepMode::Vertex,
        attributes: &attributes,
    }];
    let stage = |entry_point| keel_hal::ProgrammableStage {
        module,
        entry_point,
        constants: &[],
    };
    let targets = [Some(wgt::ColorTargetState {
        format: wgt::TextureFormat::Rgba8Unorm,
        blend: Some(wgt::BlendState::ALPHA_BLENDING),
        write_mask: wgt::ColorWrites::ALL,
    })];
    let desc = keel_hal::RenderPipelineDescriptor::<vulkan::Api> {
        label: Some("fault render pipeline"),
        layout,
        vertex_buffers: &buffers,
        vertex_stage: stage("vs"),
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
        fragment_stage: Some(stage("fs")),
        color_targets: &targets,
        cache: None,
        multiview_mask: None,
    };
    // SAFETY: the layout and module came from this device; destroyed at once.
    unsafe {
        let pipeline = outcome!(
            device.create_render_pipeline(&desc),
            keel_hal::PipelineError::Device
        )?;
        device.destroy_render_pipeline(pipeline);
    }
    Ok(())
}

fn submit_path(
    device: &vulkan::Device,
    queue: &vulkan::Queue,
    src: &vulkan::Buffer,
    dst: &vulkan::Buffer,
) -> Step<()> {
    // SAFETY: every object is made here and destroyed after the GPU is done
    // (a successful or failed wait is followed by a real, unarmed wait).
    unsafe {
        let fence = dev(device.create_fence())?;
        let mut encoder = match dev(device.create_command_encoder(&Default::default())) {
            Ok(e) => e,
            Err(e) => {
                device.destroy_fence(fence);
                return Err(e);
            }
        };
        let recorded = dev(encoder.begin_encoding(None)).and_then(|()| {
            encoder.copy_buffer_to_buffer(
                src,
                dst,
                &[keel_hal::BufferCopy {
                    src_offset: 0,
                    dst_offset: 0,
                    size: 256,
                }],
            );
            dev(encoder.end_encoding())
        });
        let result = match recorded {
            Ok(cb) => {
                let submitted = dev(queue.submit(&[&cb], &[], &fence, 1));
                let waited = submitted.and_then(|()| dev(device.wait(&fence, 1, None)));
                if waited.is_err() {
                    // The submission may be pending: wait for real before cleanup.
                    let _ = device.wait_idle();
                }
                encoder.reset_all([cb]);
                waited.map(|reached| assert!(reached))
            }
            Err(e) => Err(e),
        };
        device.destroy_command_encoder(encoder);
        device.destroy_fence(fence);
        result
    }
}

/// Creates an instance and drops it; its validation count, read after the
/// drop, must be zero.
fn instance_path(desc: &InstanceDescriptor) -> Step<()> {
    // SAFETY: the system loader is trusted.
    let instance = outcome!(
        unsafe { vulkan::Instance::init(desc) },
        keel_hal::InstanceError::Device
    )?;
    let validation = instance.validation_counter();
    drop(instance);
    match validation.errors() {
        0 => Ok(()),
        n => Err(Outcome::Other(format!("{n} validation errors"))),
    }
}

/// A ray-tracing pipeline without bindings: ray generation, miss, closest hit.
const RAY_TRACING_WGSL: &str = "
enable wgpu_ray_tracing_pipeline;
struct Payload { hit: u32 }
var<incoming_ray_payload> incoming: Payload;
@ray_generation
fn rgen() {}
@miss
@incoming_payload(incoming)
fn miss() { incoming.hit = 0u; }
@closest_hit
@incoming_payload(incoming)
fn chit() { incoming.hit = 1u; }
";

fn ray_tracing_pipeline_path(
    device: &vulkan::Device,
    layout: &vulkan::PipelineLayout,
    module: &vulkan::ShaderModule,
) -> Step<vulkan::RayTracingPipeline> {
    use keel_hal::RayTracingStageKind as K;
    let stage = |kind, entry_point| keel_hal::RayTracingStage::<vulkan::Api> {
        kind,
        stage: keel_hal::ProgrammableStage {
            module,
            entry_point,
            constants: &[],
        },
    };
    let stages = [
        stage(K::RayGeneration, "rgen"),
        stage(K::Miss, "miss"),
        stage(K::ClosestHit, "chit"),
    ];
    let groups = [
        keel_hal::ShaderGroup::General { stage: 0 },
        keel_hal::ShaderGroup::General { stage: 1 },
        keel_hal::ShaderGroup::TrianglesHit {
            closest_hit: Some(2),
            any_hit: None,
        },
    ];
    let desc = keel_hal::RayTracingPipelineDescriptor::<vulkan::Api> {
        label: Some("fault ray-tracing pipeline"),
        layout,
        stages: &stages,
        groups: &groups,
        max_recursion_depth: 1,
        cache: None,
    };
    // SAFETY: the layout and module came from this device.
    outcome!(
        unsafe { device.create_ray_tracing_pipeline(&desc) },
        keel_hal::PipelineError::Device
    )
}

/// Ray-tracing pipeline and shader-binding-table creation, on a device
/// opened with `RAY_TRACING_PIPELINE` (skipped, with a message, where the
/// adapter lacks it).
fn ray_tracing_paths(adapter: &vulkan::Adapter, result: vk::Result) -> Vec<(&'static str, Points)> {
    let desc = DeviceDescriptor {
        label: Some("fault ray-tracing device"),
        required_hal_features: keel_hal::HalFeatures::RAY_TRACING_PIPELINE,
        ..Default::default()
    };
    // SAFETY: every object below is destroyed before the device is dropped.
    let open = match unsafe { adapter.open(&desc) } {
        Ok(open) => open,
        Err(e) => {
            println!("ray-tracing paths skipped: {e}");
            return Vec::new();
        }
    };
    let device = open.device;
    let counts = || device.live_counts();
    let mut per_path = Vec::new();
    // SAFETY: destroyed after the sweeps.
    let layout = unsafe {
        device.create_pipeline_layout(&PipelineLayoutDescriptor {
            label: None,
            bind_group_layouts: &[],
            push_constant_ranges: &[],
        })
    }
    .expect("layout");
    let module = shader_module_path(&device, RAY_TRACING_WGSL).expect("ray-tracing module");
    per_path.push((
        "ray-tracing pipeline",
        sweep("ray-tracing pipeline", result, counts, || {
            let pipeline = ray_tracing_pipeline_path(&device, &layout, &module)?;
            // SAFETY: no GPU work uses it.
            unsafe { device.destroy_ray_tracing_pipeline(pipeline) };
            Ok(())
        }),
    ));
    let pipeline =
        ray_tracing_pipeline_path(&device, &layout, &module).expect("ray-tracing pipeline");
    per_path.push((
        "shader binding table",
        sweep("shader binding table", result, counts, || {
            let desc = keel_hal::ShaderBindingTableDescriptor {
                label: Some("fault table"),
                ray_generation: 0,
                miss: &[1],
                hit: &[2, 2],
            };
            // SAFETY: the pipeline came from this device; no GPU work uses the table.
            unsafe {
                let table = outcome!(
                    device.create_shader_binding_table(&pipeline, &desc),
                    keel_hal::PipelineError::Device
                )?;
                device.destroy_shader_binding_table(table);
            }
            Ok(())
        }),
    ));
    // SAFETY: no GPU work used them.
    unsafe {
        device.destroy_ray_tracing_pipeline(pipeline);
        device.destroy_shader_module(module);
        device.destroy_pipeline_layout(layout);
    }
    assert_eq!(device.live_counts(), keel_hal::LiveCounts::default());
    per_path
}

#[test]
fn fault_sweep() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let _ = env_logger::builder().is_test(true).try_init();
    let desc = InstanceDescriptor {
        name: "keel-hal fault sweep",
        flags: InstanceFlags::VALIDATION | InstanceFlags::DEBUG,
        ..Default::default()
    };
    // SAFETY: the system loader is trusted.
    let instance = match unsafe { vulkan::Instance::init(&desc) } {
        Ok(i) => i,
        Err(e) => {
            println!("skipped: {e}");
            return;
        }
    };
    if !instance.validation_enabled() {
        println!("note: VK_LAYER_KHRONOS_validation is not installed; leaks are checked by counters only");
    }
    // SAFETY: live instance.
    let mut adapters = unsafe { instance.enumerate_adapters() };
    if adapters.is_empty() {
        println!("skipped: no Vulkan 1.3 adapter");
        return;
    }
    let exposed = adapters.remove(0);
    let hal = exposed.capabilities.hal_features;
    let adapter = exposed.adapter;
    println!(
        "fault sweep on {} ({})",
        exposed.info.name, exposed.info.driver_info
    );
    let timestamps = exposed
        .capabilities
        .features
        .contains(wgt::Features::TIMESTAMP_QUERY);
    let device_desc = DeviceDescriptor {
        label: Some("fault device"),
        required_features: if timestamps {
            wgt::Features::TIMESTAMP_QUERY
        } else {
            wgt::Features::empty()
        },
        ..Default::default()
    };

    let mut grand_total = 0;
    for result in [
        vk::Result::ERROR_OUT_OF_DEVICE_MEMORY,
        vk::Result::ERROR_OUT_OF_HOST_MEMORY,
        vk::Result::ERROR_DEVICE_LOST,
    ] {
        let mut per_path: Vec<(&str, Points)> = Vec::new();
        let no_counts = keel_hal::LiveCounts::default;

        let points = sweep("instance", result, no_counts, || instance_path(&desc));
        per_path.push(("instance", points));

        // Device open: a failed open must leave nothing (checked by validation).
        let points = sweep("device open", result, no_counts, || {
            // SAFETY: opened and dropped on this thread.
            let open = unsafe { adapter.open(&device_desc) };
            outcome!(open, keel_hal::OpenError::Device).map(drop)
        });
        per_path.push(("device open", points));
        per_path.extend(acceleration_paths(&adapter, result));

        // SAFETY: every object below is destroyed before the device is dropped.
        let open = unsafe { adapter.open(&device_desc) }.expect("device opens without faults");
        let (device, queue) = (open.device, open.queue);
        let counts = || device.live_counts();

        use wgt::BufferUsages as U;
        let buffer_paths = [
            ("buffer (device)", Memory::Device, U::COPY_DST | U::STORAGE),
            (
                "buffer (upload)",
                Memory::Upload,
                U::MAP_WRITE | U::COPY_SRC,
            ),
            (
                "buffer (readback)",
                Memory::Readback,
                U::MAP_READ | U::COPY_DST,
            ),
        ];
        for (name, memory, usage) in buffer_paths {
            let p = sweep(name, result, counts, || buffer_path(&device, memory, usage));
            per_path.push((name, p));
        }
        per_path.push((
            "texture",
            sweep("texture", result, counts, || texture_path(&device)),
        ));

        // SAFETY: destroyed after the view sweep.
        let texture = unsafe { device.create_texture(&texture_desc()) }.expect("texture");
        per_path.push((
            "texture view",
            sweep("texture view", result, counts, || {
                view_path(&device, &texture)
            }),
        ));
        // SAFETY: its views are gone; no GPU work used it.
        unsafe { device.destroy_texture(texture) };

        // Anisotropy needs the device feature; without it, sweep a plain sampler.
        let sampler_ok = sampler_path(&device, true).is_ok();
        per_path.push((
            "sampler",
            sweep("sampler", result, counts, || {
                sampler_path(&device, sampler_ok)
            }),
        ));
        per_path.push((
            "query set (occlusion)",
            sweep("query set (occlusion)", result, counts, || {
                query_path(&device, wgt::QueryType::Occlusion)
            }),
        ));
        if timestamps {
            per_path.push((
                "query set (timestamp)",
                sweep("query set (timestamp)", result, counts, || {
                    query_path(&device, wgt::QueryType::Timestamp)
                }),
            ));
        }
        per_path.push((
            "fence",
            sweep("fence", result, counts, || fence_path(&device)),
        ));
        per_path.push((
            "command encoder",
            sweep("command encoder", result, counts, || encoder_path(&device)),
        ));

        per_path.push((
            "bind group layout (new bucket)",
            sweep("bind group layout (new bucket)", result, counts, || {
                layout_path(&device)
            }),
        ));
        // A layout of the same shape keeps the bucket (and its pool) open
        // for the next paths.
        let keeper = create_layout(&device).expect("layout");
        per_path.push((
            "bind group layout (existing bucket)",
            sweep(
                "bind group layout (existing bucket)",
                result,
                counts,
                || layout_path(&device),
            ),
        ));
        // SAFETY: destroyed after the bind group sweep.
        let (uniform, sampler) = unsafe {
            (
                device
                    .create_buffer(&BufferDescriptor {
                        size: 256,
                        usage: U::UNIFORM,
                        ..Default::default()
                    })
                    .expect("uniform buffer"),
                device
                    .create_sampler(&SamplerDescriptor::default())
                    .expect("sampler"),
            )
        };
        per_path.push((
            "bind group",
            sweep("bind group", result, counts, || {
                bind_group_path(&device, &uniform, &sampler)
            }),
        ));
        per_path.push((
            "pipeline layout",
            sweep("pipeline layout", result, counts, || {
                pipeline_layout_path(&device, &keeper)
            }),
        ));

        per_path.push((
            "shader module (WGSL)",
            sweep("shader module (WGSL)", result, counts, || {
                let module = shader_module_path(&device, COMPUTE_WGSL)?;
                // SAFETY: no pipeline is being made from it.
                unsafe { device.destroy_shader_module(module) };
                Ok(())
            }),
        ));
        let keepers = [&keeper];
        let compute_ranges = [PushConstantRange {
            stages: wgt::ShaderStages::COMPUTE,
            range: 0..16,
        }];
        // SAFETY: destroyed after the pipeline sweeps.
        let (compute_layout, render_layout) = unsafe {
            (
                device
                    .create_pipeline_layout(&PipelineLayoutDescriptor {
                        label: None,
                        bind_group_layouts: &keepers,
                        push_constant_ranges: &compute_ranges,
                    })
                    .expect("compute layout"),
                device
                    .create_pipeline_layout(&PipelineLayoutDescriptor {
                        label: None,
                        bind_group_layouts: &[],
                        push_constant_ranges: &[],
                    })
                    .expect("render layout"),
            )
        };
        let compute_module = shader_module_path(&device, COMPUTE_WGSL).expect("compute module");
        let render_module = shader_module_path(&device, RENDER_WGSL).expect("render module");
        per_path.push((
            "compute pipeline",
            sweep("compute pipeline", result, counts, || {
                compute_pipeline_path(&device, &compute_layout, &compute_module)
            }),
        ));
        per_path.push((
            "render pipeline",
            sweep("render pipeline", result, counts, || {
                render_pipeline_path(&device, &render_layout, &render_module)
            }),
        ));
        // SAFETY: no pipeline is being made from them.
        unsafe {
            device.destroy_shader_module(compute_module);
            device.destroy_shader_module(render_module);
            device.destroy_pipeline_layout(compute_layout);
            device.destroy_pipeline_layout(render_layout);
        }
        // SAFETY: no bind group, pipeline layout or GPU work uses them.
        unsafe {
            device.destroy_bind_group_layout(keeper);
            device.destroy_sampler(sampler);
            device.destroy_buffer(uniform);
        }

        let buffer = |usage, memory| BufferDescriptor {
            size: 256,
            usage,
            memory,
            ..Default::default()
        };
        // SAFETY: destroyed after the submit sweep, once the GPU is idle.
        let (src, dst) = unsafe {
            (
                device
                    .create_buffer(&buffer(U::COPY_SRC | U::MAP_WRITE, Memory::Upload))
                    .expect("src"),
                device
                    .create_buffer(&buffer(U::COPY_DST | U::MAP_READ, Memory::Readback))
                    .expect("dst"),
            )
        };
        per_path.push((
            "submit",
            sweep("submit", result, counts, || {
                submit_path(&device, &queue, &src, &dst)
            }),
        ));
        // SAFETY: the submit path waited for its work.
        unsafe {
            device.wait_idle().expect("idle");
            device.destroy_buffer(src);
            device.destroy_buffer(dst);
        }
        assert_eq!(device.live_counts(), keel_hal::LiveCounts::default());
        drop((device, queue));
        per_path.extend(ray_tracing_paths(&adapter, result));

        external_paths(&adapter, hal, result, &mut per_path);

        let total: u64 = per_path.iter().map(|(_, p)| p.total).sum();
        for (name, p) in &per_path {
            println!(
                "  {result:?}: {name}: {} injection points ({} absorbed)",
                p.total, p.absorbed
            );
        }
        println!(
            "fault sweep ({result:?}): {total} injection points over {} paths",
            per_path.len()
        );
        grand_total += total;
    }
    println!("fault sweep: {grand_total} injection points in total");
    // Read after the instance is gone, so leaks reported while it is
    // destroyed are counted.
    let validation = instance.validation_counter();
    drop((adapter, adapters, instance));
    assert_eq!(
        validation.errors(),
        0,
        "the validation layer reported errors (see the log)"
    );
}

/// Not a fault path, but Vulkan-only and in need of a device: `reset_all`
/// recycles every buffer its encoder allocated (returned or not), so the
/// pool does not grow, and ignores a buffer of another encoder.
#[test]
fn reset_all_recycles_every_buffer_and_ignores_foreign_ones() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let desc = InstanceDescriptor {
        name: "keel-hal encoder recycling",
        flags: InstanceFlags::VALIDATION,
        ..Default::default()
    };
    // SAFETY: the system loader is trusted.
    let Ok(instance) = (unsafe { vulkan::Instance::init(&desc) }) else {
        println!("skipped: no Vulkan");
        return;
    };
    // SAFETY: live instance.
    let Some(exposed) = (unsafe { instance.enumerate_adapters() })
        .into_iter()
        .next()
    else {
        println!("skipped: no Vulkan 1.3 adapter");
        return;
    };
    // SAFETY: nothing recorded is submitted; the encoders go before the device.
    unsafe {
        let open = exposed
            .adapter
            .open(&DeviceDescriptor::default())
            .expect("open");
        let device = open.device;
        let mut a = device
            .create_command_encoder(&Default::default())
            .expect("a");
        let mut b = device
            .create_command_encoder(&Default::default())
            .expect("b");
        b.begin_encoding(None).expect("begin b");
        let foreign = b.end_encoding().expect("end b");
        let mut seen = Vec::new();
        for _ in 0..4 {
            // Two recordings a round; only the second is handed back.
            a.begin_encoding(None).expect("begin");
            seen.extend(a.raw_command_buffer());
            let _kept = a.end_encoding().expect("end");
            a.begin_encoding(None).expect("begin");
            seen.extend(a.raw_command_buffer());
            let returned = a.end_encoding().expect("end");
            a.reset_all([returned]);
        }
        a.reset_all([foreign]);
        assert_eq!(a.allocated_command_buffers(), 2, "the pool grew");
        a.begin_encoding(None).expect("begin");
        let raw = a.raw_command_buffer().expect("recording");
        assert!(seen[..2].contains(&raw), "buffers are reused");
        a.discard_encoding();
        b.reset_all([]);
        device.destroy_command_encoder(a);
        device.destroy_command_encoder(b);
        let validation = instance.validation_counter();
        drop((device, open.queue, exposed.adapter, instance));
        assert_eq!(validation.errors(), 0, "validation errors (see the log)");
    }
}

/// Creates an acceleration structure of `size` bytes and destroys it.
fn acceleration_structure_path(
    device: &vulkan::Device,
    kind: keel_hal::AccelerationStructureKind,
    size: u64,
    placement: keel_hal::AccelerationStructurePlacement<'_, vulkan::Buffer>,
) -> Step<()> {
    let desc = keel_hal::AccelerationStructureDescriptor::<vulkan::Api> {
        label: Some("fault structure"),
        kind,
        size,
        placement,
    };
    // SAFETY: no GPU work uses the structure; a placement buffer outlives it.
    unsafe {
        let structure = outcome!(
            device.create_acceleration_structure(&desc),
            keel_hal::AccelerationStructureError::Device
        )?;
        device.destroy_acceleration_structure(structure);
    }
    Ok(())
}

/// Records a build of a compactable BLAS and a compacted-size read (which
/// takes slots from a new shared query pool), then resets and destroys the
/// encoder, giving the pool back. Nothing is submitted.
fn compacted_size_read_path(
    device: &vulkan::Device,
    blas: &vulkan::AccelerationStructure,
    entries: &keel_hal::AccelerationStructureEntries<'_, vulkan::Buffer>,
    scratch: &vulkan::Buffer,
    sizes: &vulkan::Buffer,
) -> Step<()> {
    let build = keel_hal::BuildAccelerationStructureDescriptor::<vulkan::Api> {
        entries,
        mode: keel_hal::AccelerationStructureBuildMode::Build,
        flags: wgt::AccelerationStructureFlags::ALLOW_COMPACTION,
        source_acceleration_structure: None,
        destination_acceleration_structure: blas,
        scratch_buffer: scratch,
        scratch_buffer_offset: 0,
    };
    // SAFETY: nothing recorded is submitted; the encoder is destroyed last.
    unsafe {
        let mut encoder = dev(device.create_command_encoder(&CommandEncoderDescriptor {
            label: Some("fault AS encoder"),
        }))?;
        let recorded = dev(encoder.begin_encoding(None)).and_then(|()| {
            let read = encoder
                .build_acceleration_structures(&[build])
                .and_then(|()| {
                    encoder.read_acceleration_structure_compacted_sizes(&[blas], sizes, 0)
                });
            let read = outcome!(read, keel_hal::AccelerationStructureError::Device);
            let ended = dev(encoder.end_encoding());
            read.and(ended)
        });
        let outcome = match recorded {
            Ok(cb) => {
                encoder.reset_all([cb]);
                Ok(())
            }
            Err(e) => {
                encoder.reset_all(std::iter::empty());
                Err(e)
            }
        };
        device.destroy_command_encoder(encoder);
        outcome
    }
}

/// Acceleration-structure create paths (owned BLAS, placed BLAS, TLAS) and
/// a compacted-size read, on a device opened with `ACCELERATION_STRUCTURE`
/// (skipped, with a message, where the adapter lacks it).
fn acceleration_paths(
    adapter: &vulkan::Adapter,
    result: vk::Result,
) -> Vec<(&'static str, Points)> {
    use keel_hal::{AccelerationStructureKind as Kind, AccelerationStructurePlacement as Place};
    let desc = DeviceDescriptor {
        label: Some("fault AS device"),
        required_hal_features: keel_hal::HalFeatures::ACCELERATION_STRUCTURE,
        ..Default::default()
    };
    // SAFETY: every object below is destroyed before the device is dropped.
    let open = match unsafe { adapter.open(&desc) } {
        Ok(open) => open,
        Err(e) => {
            println!("acceleration-structure paths skipped: {e}");
            return Vec::new();
        }
    };
    let device = open.device;
    let counts = || device.live_counts();
    let buffer = |size, usage| {
        // SAFETY: destroyed at the end of this function.
        unsafe {
            device.create_buffer(&BufferDescriptor {
                label: None,
                size,
                usage,
                memory: Memory::Device,
            })
        }
        .expect("buffer")
    };
    let vertices = buffer(64, wgt::BufferUsages::BLAS_INPUT);
    let triangles = [keel_hal::AccelerationStructureTriangles {
        vertex_buffer: Some(&vertices),
        vertex_offset: 0,
        vertex_format: wgt::VertexFormat::Float32x3,
        vertex_stride: 12,
        vertex_count: 3,
        indices: None,
        transform: None,
        flags: wgt::AccelerationStructureGeometryFlags::OPAQUE,
    }];
    let entries = keel_hal::AccelerationStructureEntries::Triangles(&triangles);
    // SAFETY: the vertex buffer came from this device.
    let sizes = unsafe {
        device.get_acceleration_structure_build_sizes(
            &keel_hal::GetAccelerationStructureBuildSizesDescriptor {
                entries: &entries,
                flags: wgt::AccelerationStructureFlags::ALLOW_COMPACTION,
            },
        )
    }
    .expect("sizes");
    let size = sizes.acceleration_structure_size;
    let storage = buffer(256 + size, wgt::BufferUsages::STORAGE);
    let scratch = buffer(sizes.build_scratch_size, wgt::BufferUsages::STORAGE);
    let readback = buffer(8, wgt::BufferUsages::COPY_DST);
    let mut per_path = Vec::new();
    per_path.push((
        "BLAS (owned)",
        sweep("BLAS (owned)", result, counts, || {
            acceleration_structure_path(&device, Kind::BottomLevel, size, Place::Owned)
        }),
    ));
    per_path.push((
        "BLAS (placed)",
        sweep("BLAS (placed)", result, counts, || {
            let placement = Place::InBuffer {
                buffer: &storage,
                offset: 256,
            };
            acceleration_structure_path(&device, Kind::BottomLevel, size, placement)
        }),
    ));
    per_path.push((
        "TLAS (owned)",
        sweep("TLAS (owned)", result, counts, || {
            acceleration_structure_path(&device, Kind::TopLevel, 4096, Place::Owned)
        }),
    ));
    // SAFETY: destroyed below.
    let blas = unsafe {
        device.create_acceleration_structure(&keel_hal::AccelerationStructureDescriptor {
            label: None,
            kind: Kind::BottomLevel,
            size,
            placement: Place::Owned,
        })
    }
    .expect("BLAS");
    per_path.push((
        "compacted-size read (new query pool)",
        sweep(
            "compacted-size read (new query pool)",
            result,
            counts,
            || compacted_size_read_path(&device, &blas, &entries, &scratch, &readback),
        ),
    ));
    // SAFETY: no GPU work used them.
    unsafe {
        device.destroy_acceleration_structure(blas);
        for b in [vertices, storage, scratch, readback] {
            device.destroy_buffer(b);
        }
    }
    assert_eq!(device.live_counts(), keel_hal::LiveCounts::default());
    per_path
}

/// A typed error of an external-memory call, keeping its `DeviceError`.
fn ext<T>(r: Result<T, keel_hal::ExternalError>) -> Step<T> {
    match r {
        Ok(v) => Ok(v),
        Err(keel_hal::ExternalError::Device(d)) => Err(Outcome::Device(d)),
        Err(e) => Err(Outcome::Other(format!("{e:?}"))),
    }
}

/// As [`ext`], for buffer creation and import.
fn ext_buffer<T>(r: Result<T, keel_hal::BufferError>) -> Step<T> {
    match r {
        Err(keel_hal::BufferError::External(e)) => ext(Err(e)),
        other => outcome!(other, keel_hal::BufferError::Device),
    }
}

/// As [`ext`], for texture creation and import.
fn ext_texture<T>(r: Result<T, keel_hal::TextureError>) -> Step<T> {
    match r {
        Err(keel_hal::TextureError::External(e)) => ext(Err(e)),
        other => outcome!(other, keel_hal::TextureError::Device),
    }
}

/// Page-aligned host memory for host-pointer imports, freed on drop.
struct HostPages {
    ptr: std::ptr::NonNull<u8>,
    layout: std::alloc::Layout,
}

impl HostPages {
    fn new(size: usize) -> Self {
        let layout = std::alloc::Layout::from_size_align(size, 64 * 1024).expect("layout");
        // SAFETY: non-zero size.
        let ptr = std::ptr::NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })
            .expect("host allocation");
        Self { ptr, layout }
    }
}

impl Drop for HostPages {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

/// Exports a buffer (create, export an fd, destroy) or imports one from a
/// fresh fd of `source` (export, import, destroy).
fn external_buffer_path(
    device: &vulkan::Device,
    desc: &BufferDescriptor,
    source: Option<&vulkan::Buffer>,
) -> Step<()> {
    use keel_hal::{ExternalHandle, ExternalHandleType as H};
    // SAFETY: everything is destroyed here; no GPU work uses it.
    unsafe {
        match source {
            None => {
                let buffer = ext_buffer(device.create_buffer(desc))?;
                let exported = ext(device.export_buffer_memory(&buffer, H::OpaqueFd));
                device.destroy_buffer(buffer);
                drop(exported?);
            }
            Some(source) => {
                let fd = ext(device.export_buffer_memory(source, H::OpaqueFd))?.fd;
                let imported =
                    ext_buffer(device.import_buffer(desc, ExternalHandle::OpaqueFd(fd)))?;
                device.destroy_buffer(imported);
            }
        }
    }
    Ok(())
}

/// The external-memory and external-semaphore paths, on a device opened
/// with every external feature the adapter has.
fn external_paths(
    adapter: &vulkan::Adapter,
    caps: keel_hal::HalFeatures,
    result: vk::Result,
    per_path: &mut Vec<(&str, Points)>,
) {
    use keel_hal::{ExternalHandle, ExternalHandleType as H, ExternalMemory, HalFeatures as F};
    let wanted =
        caps & (F::EXTERNAL_MEMORY_FD | F::EXTERNAL_MEMORY_HOST | F::EXTERNAL_SEMAPHORE_FD);
    if wanted.is_empty() {
        println!("  external paths skipped: the adapter has no external memory");
        return;
    }
    let desc = DeviceDescriptor {
        label: Some("fault external device"),
        required_hal_features: wanted,
        ..Default::default()
    };
    // SAFETY: every object below is destroyed before the device is dropped.
    let open = unsafe { adapter.open(&desc) }.expect("external device opens without faults");
    let device = open.device;
    let counts = || device.live_counts();
    let usage = wgt::BufferUsages::COPY_SRC | wgt::BufferUsages::COPY_DST;
    if wanted.contains(F::EXTERNAL_MEMORY_FD) {
        let buffer = BufferDescriptor {
            label: Some("fault external buffer"),
            size: 64 * 1024,
            usage,
            memory: Memory::External(ExternalMemory::export(H::OpaqueFd)),
        };
        per_path.push((
            "external buffer (export)",
            sweep("external buffer (export)", result, counts, || {
                external_buffer_path(&device, &buffer, None)
            }),
        ));
        // SAFETY: destroyed after the import sweep.
        let source = unsafe { device.create_buffer(&buffer) }.expect("exportable buffer");
        per_path.push((
            "external buffer (import)",
            sweep("external buffer (import)", result, counts, || {
                external_buffer_path(&device, &buffer, Some(&source))
            }),
        ));
        // SAFETY: no GPU work used it.
        unsafe { device.destroy_buffer(source) };

        let texture = TextureDescriptor {
            label: Some("fault external texture"),
            size: wgt::Extent3d {
                width: 64,
                height: 64,
                depth_or_array_layers: 1,
            },
            usage: wgt::TextureUsages::COPY_SRC | wgt::TextureUsages::COPY_DST,
            memory: Memory::External(ExternalMemory::export(H::OpaqueFd)),
            ..Default::default()
        };
        // SAFETY: destroyed after the sweeps.
        let source = unsafe { device.create_texture(&texture) }.expect("exportable texture");
        per_path.push((
            "external texture (export, import)",
            sweep("external texture (export, import)", result, counts, || {
                // SAFETY: everything is destroyed here; no GPU work uses it.
                unsafe {
                    let made = ext_texture(device.create_texture(&texture))?;
                    device.destroy_texture(made);
                    let fd = ext(device.export_texture_memory(&source, H::OpaqueFd))?.fd;
                    let imported =
                        ext_texture(device.import_texture(&texture, ExternalHandle::OpaqueFd(fd)))?;
                    device.destroy_texture(imported);
                }
                Ok(())
            }),
        ));
        // SAFETY: no GPU work used it.
        unsafe { device.destroy_texture(source) };
    }
    if wanted.contains(F::EXTERNAL_MEMORY_HOST) {
        let host = HostPages::new(64 * 1024);
        let buffer = BufferDescriptor {
            label: Some("fault host buffer"),
            size: 64 * 1024,
            usage,
            memory: Memory::Device,
        };
        per_path.push((
            "external buffer (host pointer)",
            sweep("external buffer (host pointer)", result, counts, || {
                let handle = ExternalHandle::HostPointer {
                    ptr: host.ptr,
                    size: 64 * 1024,
                };
                // SAFETY: `host` outlives the buffer, destroyed right away.
                unsafe {
                    let imported = ext_buffer(device.import_buffer(&buffer, handle))?;
                    device.destroy_buffer(imported);
                }
                Ok(())
            }),
        ));
    }
    if wanted.contains(F::EXTERNAL_SEMAPHORE_FD) {
        use keel_hal::{ExternalSemaphoreDescriptor, ExternalSemaphoreType, SemaphoreKind};
        for kind in [
            SemaphoreKind::Binary,
            SemaphoreKind::Timeline { initial_value: 0 },
        ] {
            let desc = ExternalSemaphoreDescriptor {
                handle_type: ExternalSemaphoreType::OpaqueFd,
                kind,
            };
            let caps = adapter.external_semaphore_capabilities(&desc);
            if !(caps.exportable && caps.importable) {
                continue;
            }
            let name = match kind {
                SemaphoreKind::Binary => "external semaphore (binary)",
                SemaphoreKind::Timeline { .. } => "external semaphore (timeline)",
            };
            per_path.push((
                name,
                sweep(name, result, counts, || {
                    // SAFETY: never submitted; destroyed here.
                    unsafe {
                        let made = ext(device.create_external_semaphore(&desc))?;
                        let fd = ext(device.export_semaphore(&made));
                        let imported = fd.and_then(|fd| ext(device.import_semaphore(&desc, fd)));
                        device.destroy_external_semaphore(made);
                        device.destroy_external_semaphore(imported?);
                    }
                    Ok(())
                }),
            ));
        }
    }
    assert_eq!(device.live_counts(), keel_hal::LiveCounts::default());
}

/// An instance with validation on, its first adapter and its validation
/// counter; `None` (having printed why) where there is no Vulkan 1.3 adapter.
fn validated_adapter(
    name: &'static str,
) -> Option<(
    vulkan::Instance,
    keel_hal::ExposedAdapter<vulkan::Api>,
    vulkan::ValidationCounter,
)> {
    let _ = env_logger::builder().is_test(true).try_init();
    let desc = InstanceDescriptor {
        name,
        flags: InstanceFlags::VALIDATION | InstanceFlags::DEBUG,
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
    let Some(exposed) = unsafe { instance.enumerate_adapters() }.into_iter().next() else {
        println!("skipped: no Vulkan 1.3 adapter");
        return None;
    };
    let validation = instance.validation_counter();
    Some((instance, exposed, validation))
}

/// Device loss is remembered: after one `VK_ERROR_DEVICE_LOST` (injected as
/// a lasting loss), every fallible call of the device, its queue and its
/// encoders returns `Lost` without a single hooked call reaching the
/// driver, `is_lost` says so, and every destroy still frees its object
/// (the hal's counts and the Vulkan creates-minus-destroys balance).
#[test]
fn device_loss_is_remembered() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some((instance, exposed, validation)) = validated_adapter("keel-hal device loss") else {
        return;
    };
    // SAFETY: every object below is destroyed before the device is dropped.
    let open = unsafe { exposed.adapter.open(&DeviceDescriptor::default()) }.expect("open");
    let (device, queue) = (open.device, open.queue);
    use wgt::BufferUsages as U;
    let buffer_desc = BufferDescriptor {
        label: Some("before the loss"),
        size: 256,
        usage: U::MAP_WRITE | U::COPY_SRC | U::UNIFORM,
        memory: Memory::Upload,
    };
    // Warm VMA's caches (it keeps one empty block per memory type), so
    // that the creates-minus-destroys balance below counts objects only.
    // SAFETY: made and destroyed at once.
    unsafe {
        let buffer = device.create_buffer(&buffer_desc).expect("buffer");
        let texture = device.create_texture(&texture_desc()).expect("texture");
        device.destroy_texture(texture);
        device.destroy_buffer(buffer);
    }
    let start = device.live_counts();
    let net_start = fault::net_creates();

    // SAFETY: nothing is submitted before the loss; every object is
    // destroyed below, on the lost device, before the device is dropped.
    unsafe {
        let buffer = device.create_buffer(&buffer_desc).expect("buffer");
        let texture = device.create_texture(&texture_desc()).expect("texture");
        let fence = device.create_fence().expect("fence");
        let mut encoder = device
            .create_command_encoder(&CommandEncoderDescriptor { label: None })
            .expect("encoder");
        let layout = create_layout(&device).expect("bind group layout");
        let layouts = [&layout];
        let pipeline_layout_desc = PipelineLayoutDescriptor::<vulkan::Api> {
            label: None,
            bind_group_layouts: &layouts,
            push_constant_ranges: &[PushConstantRange {
                stages: wgt::ShaderStages::COMPUTE,
                range: 0..16,
            }],
        };
        let pipeline_layout = device
            .create_pipeline_layout(&pipeline_layout_desc)
            .expect("pipeline layout");
        let module = shader_module_path(&device, COMPUTE_WGSL).expect("module");
        assert!(!device.is_lost());

        // The loss: the next hooked call (vkCreateSemaphore) answers
        // VK_ERROR_DEVICE_LOST, as a real driver would.
        fault::arm_lasting(1, vk::Result::ERROR_DEVICE_LOST);
        let lost = device.create_fence();
        let report = fault::disarm();
        assert!(report.fired, "the loss was not injected");
        assert_eq!(lost.err(), Some(DeviceError::Lost));
        assert!(device.is_lost());

        // From now on: Lost, and the driver is not called. Arming a plan
        // that never fires counts every hooked call.
        fault::arm(u64::MAX, vk::Result::ERROR_DEVICE_LOST);
        let lost_device = keel_hal::DeviceError::Lost;
        assert_eq!(
            device.create_buffer(&buffer_desc).err(),
            Some(keel_hal::BufferError::Device(lost_device.clone()))
        );
        assert_eq!(
            device.create_texture(&texture_desc()).err(),
            Some(keel_hal::TextureError::Device(lost_device.clone()))
        );
        assert_eq!(
            device.create_sampler(&SamplerDescriptor::default()).err(),
            Some(keel_hal::SamplerError::Device(lost_device.clone()))
        );
        assert_eq!(device.create_fence().err(), Some(lost_device.clone()));
        assert_eq!(
            device
                .create_command_encoder(&CommandEncoderDescriptor { label: None })
                .err(),
            Some(lost_device.clone())
        );
        assert_eq!(
            device
                .create_query_set(&QuerySetDescriptor {
                    label: None,
                    ty: wgt::QueryType::Occlusion,
                    count: 4,
                })
                .err(),
            Some(keel_hal::QuerySetError::Device(lost_device.clone()))
        );
        assert_eq!(
            create_layout(&device).err().map(|o| format!("{o:?}")),
            Some(format!("{:?}", Outcome::Device(lost_device.clone())))
        );
        assert_eq!(
            compute_pipeline_path(&device, &pipeline_layout, &module)
                .err()
                .map(|o| format!("{o:?}")),
            Some(format!("{:?}", Outcome::Device(lost_device.clone())))
        );
        assert_eq!(
            device.map_buffer(&buffer).err(),
            Some(keel_hal::MapError::Device(lost_device.clone()))
        );
        assert_eq!(
            device.get_fence_value(&fence).err(),
            Some(lost_device.clone())
        );
        assert_eq!(
            device.wait(&fence, 1, Some(Duration::ZERO)).err(),
            Some(lost_device.clone())
        );
        assert_eq!(device.wait_idle().err(), Some(lost_device.clone()));
        assert_eq!(
            encoder.begin_encoding(None).err(),
            Some(lost_device.clone())
        );
        assert_eq!(encoder.end_encoding().err(), Some(lost_device.clone()));
        assert_eq!(
            queue.submit(&[], &[], &fence, 1).err(),
            Some(lost_device.clone())
        );
        let report = fault::disarm();
        assert_eq!(report.calls, 0, "calls on a lost device reached the driver");
        assert!(device.is_lost(), "a lost device stays lost");

        // Destroys still free everything.
        device.destroy_shader_module(module);
        device.destroy_pipeline_layout(pipeline_layout);
        device.destroy_bind_group_layout(layout);
        encoder.reset_all([]);
        device.destroy_command_encoder(encoder);
        device.destroy_fence(fence);
        device.destroy_texture(texture);
        device.destroy_buffer(buffer);
    }
    assert_eq!(
        device.live_counts(),
        start,
        "live objects after the destroys"
    );
    assert_eq!(
        fault::net_creates(),
        net_start,
        "Vulkan objects leaked on the lost device"
    );
    drop((device, queue, exposed.adapter, instance));
    assert_eq!(validation.errors(), 0, "validation errors (see the log)");
}

/// A lasting loss while a submission is still pending: the caller cannot
/// wait for it (every wait now returns `Lost`), so destroying what the
/// submission uses is the device's job to make valid. keel-hal retires the
/// driver's work once (one real `vkDeviceWaitIdle`, which a truly lost
/// device answers at once) before the first destroy after the loss, and the
/// layer sees no command pool, semaphore or buffer destroyed while in use.
#[test]
fn lost_device_teardown_retires_pending_work() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some((instance, exposed, validation)) = validated_adapter("keel-hal lost teardown") else {
        return;
    };
    // SAFETY: every object below is destroyed before the device is dropped;
    // the submission is left pending on purpose, as a lost device leaves it.
    let open = unsafe { exposed.adapter.open(&DeviceDescriptor::default()) }.expect("open");
    let (device, queue) = (open.device, open.queue);
    use wgt::BufferUsages as U;
    let buffer_desc = BufferDescriptor {
        label: Some("in flight at the loss"),
        size: 1 << 16,
        usage: U::COPY_SRC | U::COPY_DST,
        memory: Memory::Device,
    };
    // SAFETY: see above.
    unsafe {
        let src = device.create_buffer(&buffer_desc).expect("buffer");
        let dst = device.create_buffer(&buffer_desc).expect("buffer");
        let fence = device.create_fence().expect("fence");
        let mut encoder = device
            .create_command_encoder(&CommandEncoderDescriptor { label: None })
            .expect("encoder");
        encoder.begin_encoding(None).expect("begin");
        use keel_hal::{BufferBarrier, BufferUses as B};
        encoder.transition_buffers(&[
            BufferBarrier::new(&src, B::empty(), B::COPY_DST),
            BufferBarrier::new(&dst, B::empty(), B::COPY_DST),
        ]);
        encoder.clear_buffer(&src, 0..buffer_desc.size);
        encoder.transition_buffers(&[BufferBarrier::new(&src, B::COPY_DST, B::COPY_SRC)]);
        encoder.copy_buffer_to_buffer(
            &src,
            &dst,
            &[keel_hal::BufferCopy {
                src_offset: 0,
                dst_offset: 0,
                size: buffer_desc.size,
            }],
        );
        let cb = encoder.end_encoding().expect("end");
        queue.submit(&[&cb], &[], &fence, 1).expect("submit");

        // The loss, with the submission never waited for.
        fault::arm_lasting(1, vk::Result::ERROR_DEVICE_LOST);
        assert_eq!(device.create_fence().err(), Some(DeviceError::Lost));
        assert!(fault::disarm().fired, "the loss was not injected");
        assert!(device.is_lost());
        assert_eq!(
            device.wait(&fence, 1, None).err(),
            Some(DeviceError::Lost),
            "a lost device cannot be waited for"
        );

        let waits = fault::calls("vkDeviceWaitIdle").expect("hooked");
        encoder.reset_all([cb]);
        device.destroy_command_encoder(encoder);
        device.destroy_fence(fence);
        device.destroy_buffer(dst);
        device.destroy_buffer(src);
        assert_eq!(
            fault::calls("vkDeviceWaitIdle").expect("hooked") - waits,
            1,
            "the teardown retires the driver's work once, before its first destroy"
        );
    }
    drop((device, queue, exposed.adapter, instance));
    assert_eq!(validation.errors(), 0, "validation errors (see the log)");
}

/// An injected one-call `VK_ERROR_DEVICE_LOST` (`fault::arm`, what the
/// sweep uses) is a failure of that call only: the device stays usable.
#[test]
fn one_call_device_lost_does_not_latch() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: the system loader is trusted.
    let Ok(instance) = (unsafe { vulkan::Instance::init(&InstanceDescriptor::default()) }) else {
        println!("skipped: no Vulkan");
        return;
    };
    // SAFETY: live instance.
    let Some(exposed) = unsafe { instance.enumerate_adapters() }.into_iter().next() else {
        println!("skipped: no Vulkan 1.3 adapter");
        return;
    };
    // SAFETY: the fences are destroyed before the device is dropped.
    unsafe {
        let open = exposed
            .adapter
            .open(&DeviceDescriptor::default())
            .expect("open");
        fault::arm(1, vk::Result::ERROR_DEVICE_LOST);
        assert_eq!(open.device.create_fence().err(), Some(DeviceError::Lost));
        assert!(fault::disarm().fired);
        assert!(!open.device.is_lost());
        let fence = open
            .device
            .create_fence()
            .expect("the device is still usable");
        open.device.destroy_fence(fence);
    }
}
