//! One case for each advertised feature that no broader test names: each
//! opens a device with the feature (skipping, with the reason, where the
//! adapter lacks it) and uses what it stands for; where keel-hal refuses
//! the use without it, that refusal is checked too.

use std::num::NonZeroU32;

use keel_hal::naga::valid::Capabilities as Caps;
use keel_hal::wgt;
use keel_hal::{
    AccelerationStructureEntries, AccelerationStructureError, Adapter, Api, Backend,
    BindGroupLayoutDescriptor, BindGroupLayoutFlags, BufferDescriptor, ComputePipelineDescriptor,
    Device, DeviceDescriptor, GetAccelerationStructureBuildSizesDescriptor, HalFeatures, Memory,
    PipelineLayoutDescriptor, ProgrammableStage, ShaderError, ShaderModuleDescriptor,
    TextureDescriptor,
};

use crate::harness::{skip, Ctx, Failure, Outcome, TestResult};
use crate::pipelines::{entry, storage};

conformance_tests!(
    non_uniform_indexing_needs_its_features,
    early_depth_test_pipelines,
    texture_atomic_pipelines,
    mappable_primary_buffers_take_any_usage,
    adapter_specific_format_features_make_textures,
);

/// The cases that open acceleration-structure devices: alone where the
/// validation layer cannot take such devices made on several threads at
/// once (`harness::ray_tracing_needs_isolation`).
mod with_structures {
    use super::extended_vertex_formats_need_their_feature;
    ray_tracing_conformance_tests!(extended_vertex_formats_need_their_feature);
}

/// A device of the test's adapter opened with `features` (and `hal`);
/// `None` where the adapter lacks one of them.
pub fn open_with<A: Api>(
    ctx: &Ctx<A>,
    features: wgt::Features,
    hal: HalFeatures,
) -> Result<Option<keel_hal::OpenDevice<A>>, Failure> {
    if !ctx.caps.features.contains(features) || !ctx.caps.hal_features.contains(hal) {
        return Ok(None);
    }
    let desc = DeviceDescriptor {
        label: Some("conformance feature cases"),
        required_features: features,
        required_hal_features: hal,
        // Pipelines are made, not run (noop runs no shaders).
        allow_no_shader_execution: true,
        ..Default::default()
    };
    // SAFETY: the adapter is live; the caller drops the device.
    Ok(Some(unsafe { ctx.adapter.open(&desc) }?))
}

/// Makes a module of `wgsl` on `device`; `Err(ShaderError)` as it came.
///
/// # Safety
/// `device` is live; the caller destroys the module.
unsafe fn module<A: Api>(device: &A::Device, wgsl: &str) -> Result<A::ShaderModule, ShaderError> {
    // SAFETY: forwarded contract.
    unsafe { device.create_shader_module(&ShaderModuleDescriptor::wgsl(wgsl)) }
}

/// A compute pipeline of `wgsl`'s `main` over one group of `entries` is
/// made (and everything destroyed) on `device`.
fn compute_made<A: Api>(
    device: &A::Device,
    entries: &[wgt::BindGroupLayoutEntry],
    wgsl: &str,
) -> Result<(), Failure> {
    // SAFETY: every object is made from `device` and destroyed below, the
    // pipeline first.
    unsafe {
        let group = device.create_bind_group_layout(&BindGroupLayoutDescriptor {
            label: Some("feature case"),
            flags: BindGroupLayoutFlags::empty(),
            entries,
        })?;
        let layout = device.create_pipeline_layout(&PipelineLayoutDescriptor {
            label: Some("feature case"),
            bind_group_layouts: &[&group],
            push_constant_ranges: &[],
        });
        let result = (|| {
            let layout = layout.as_ref().map_err(|e| format!("{e}"))?;
            let module = module::<A>(device, wgsl)?;
            let pipeline = device.create_compute_pipeline(&ComputePipelineDescriptor {
                label: Some("feature case"),
                layout,
                stage: ProgrammableStage::new(&module, "main"),
                cache: None,
            });
            device.destroy_shader_module(module);
            device.destroy_compute_pipeline(pipeline?);
            Ok::<_, Failure>(())
        })();
        if let Ok(layout) = layout {
            device.destroy_pipeline_layout(layout);
        }
        device.destroy_bind_group_layout(group);
        result
    }
}

/// Fails unless `wgsl` is refused on `device` naming exactly `needs`.
pub fn refused<A: Api>(
    device: &A::Device,
    wgsl: &str,
    needs: Caps,
    what: &str,
) -> Result<(), Failure> {
    // SAFETY: live device; a module made by mistake is destroyed.
    match unsafe { module::<A>(device, wgsl) } {
        Err(ShaderError::MissingCapabilities { needed, .. }) => {
            check_eq!(needed, needs, "{what}: the capabilities named");
            Ok(())
        }
        Ok(module) => {
            // SAFETY: unused.
            unsafe { device.destroy_shader_module(module) };
            Err(format!("{what}: the module was made").into())
        }
        Err(e) => Err(format!("{what}: {e}").into()),
    }
}

/// A binding array of four `ty` bindings visible to compute.
fn array_entry(binding: u32, ty: wgt::BindingType) -> wgt::BindGroupLayoutEntry {
    wgt::BindGroupLayoutEntry {
        count: NonZeroU32::new(4),
        ..entry(binding, wgt::ShaderStages::COMPUTE, ty)
    }
}

/// Indexing binding arrays with a non-uniform index (the invocation's):
/// sampled textures and storage buffers need
/// `SAMPLED_TEXTURE_AND_STORAGE_BUFFER_ARRAY_NON_UNIFORM_INDEXING`, storage
/// textures `STORAGE_TEXTURE_ARRAY_NON_UNIFORM_INDEXING`, uniform buffers
/// `UNIFORM_BUFFER_BINDING_ARRAYS`. On a device with the arrays alone each
/// texture module is refused naming the one capability (the uniform-buffer
/// layout is refused naming the feature); with the feature a compute
/// pipeline is made.
fn non_uniform_indexing_needs_its_features<A: Api>(ctx: &Ctx<A>) -> TestResult {
    use wgt::Features as F;
    let arrays =
        F::TEXTURE_BINDING_ARRAY | F::STORAGE_RESOURCE_BINDING_ARRAY | F::BUFFER_BINDING_ARRAY;
    let Some(base) = open_with(ctx, arrays, HalFeatures::empty())? else {
        return skip("no TEXTURE_, STORAGE_RESOURCE_ and BUFFER_BINDING_ARRAY");
    };
    let texture = wgt::BindingType::Texture {
        sample_type: wgt::TextureSampleType::Float { filterable: false },
        view_dimension: wgt::TextureViewDimension::D2,
        multisampled: false,
    };
    let storage_texture = wgt::BindingType::StorageTexture {
        access: wgt::StorageTextureAccess::WriteOnly,
        format: wgt::TextureFormat::R32Uint,
        view_dimension: wgt::TextureViewDimension::D2,
    };
    let uniform = wgt::BindingType::Buffer {
        ty: wgt::BufferBindingType::Uniform,
        has_dynamic_offset: false,
        min_binding_size: None,
    };
    let out = entry(1, wgt::ShaderStages::COMPUTE, storage(false, false));
    let head = "enable wgpu_binding_array;
@group(0) @binding(1) var<storage, read_write> out: array<vec4<f32>>;";
    let main = "@compute @workgroup_size(4) fn main(@builtin(local_invocation_index) i: u32)";
    let cases = [
        (
            F::SAMPLED_TEXTURE_AND_STORAGE_BUFFER_ARRAY_NON_UNIFORM_INDEXING,
            array_entry(0, texture),
            format!(
                "{head}\n@group(0) @binding(0) var t: binding_array<texture_2d<f32>, 4>;
{main} {{ out[i] = textureLoad(t[i], vec2<u32>(0u), 0); }}"
            ),
            Caps::TEXTURE_AND_SAMPLER_BINDING_ARRAY_NON_UNIFORM_INDEXING,
        ),
        (
            F::STORAGE_TEXTURE_ARRAY_NON_UNIFORM_INDEXING,
            array_entry(0, storage_texture),
            format!(
                "{head}\n@group(0) @binding(0) var t: binding_array<texture_storage_2d<r32uint, write>, 4>;
{main} {{ textureStore(t[i], vec2<u32>(0u), vec4<u32>(i)); }}"
            ),
            Caps::STORAGE_TEXTURE_BINDING_ARRAY_NON_UNIFORM_INDEXING,
        ),
        (
            F::UNIFORM_BUFFER_BINDING_ARRAYS,
            array_entry(0, uniform),
            format!(
                "{head}\nstruct U {{ v: vec4<f32> }}
@group(0) @binding(0) var<uniform> u: binding_array<U, 4>;
{main} {{ out[i] = u[i].v; }}"
            ),
            Caps::empty(),
        ),
    ];
    let mut made = Vec::new();
    for (feature, array, wgsl, needs) in cases {
        if needs.is_empty() {
            // naga asks no capability for buffer arrays (it reads their
            // type through the pointer); the layout is refused instead.
            match compute_made::<A>(&base.device, &[array, out], &wgsl) {
                Err(e) if e.to_string().contains("UNIFORM_BUFFER_BINDING_ARRAYS") => {}
                other => return Err(format!("without {feature:?}: {other:?}").into()),
            }
        } else {
            refused::<A>(&base.device, &wgsl, needs, &format!("without {feature:?}"))?;
        }
        let Some(with) = open_with(ctx, arrays | feature, HalFeatures::empty())? else {
            ctx.note(format!("no {feature:?}: not made"));
            continue;
        };
        compute_made::<A>(&with.device, &[array, out], &wgsl)
            .map_err(|e| format!("with {feature:?}: {e}"))?;
        made.push(feature);
    }
    ctx.note(format!("made with {made:?}"));
    Ok(Outcome::Pass)
}

/// `@early_depth_test(force)` on a fragment shader (`SHADER_EARLY_DEPTH_TEST`):
/// a render pipeline with a depth target is made.
fn early_depth_test_pipelines<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let Some(open) = open_with(
        ctx,
        wgt::Features::SHADER_EARLY_DEPTH_TEST,
        HalFeatures::empty(),
    )?
    else {
        return skip("no SHADER_EARLY_DEPTH_TEST");
    };
    let device = &open.device;
    let wgsl = "
@vertex fn vs() -> @builtin(position) vec4<f32> { return vec4<f32>(0.0, 0.0, 0.5, 1.0); }
@fragment @early_depth_test(force) fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }
";
    // SAFETY: every object is made from `device` and destroyed below.
    unsafe {
        let layout = device.create_pipeline_layout(&PipelineLayoutDescriptor {
            label: Some("early depth"),
            bind_group_layouts: &[],
            push_constant_ranges: &[],
        })?;
        let result = (|| {
            let module = module::<A>(device, wgsl)?;
            let targets = [Some(wgt::ColorTargetState {
                format: wgt::TextureFormat::Rgba8Unorm,
                blend: None,
                write_mask: wgt::ColorWrites::ALL,
            })];
            let pipeline = device.create_render_pipeline(&keel_hal::RenderPipelineDescriptor {
                label: Some("early depth"),
                layout: &layout,
                vertex_buffers: &[],
                vertex_stage: ProgrammableStage::new(&module, "vs"),
                primitive: wgt::PrimitiveState::default(),
                depth_stencil: Some(wgt::DepthStencilState {
                    format: wgt::TextureFormat::Depth32Float,
                    depth_write_enabled: Some(true),
                    depth_compare: Some(wgt::CompareFunction::Less),
                    stencil: Default::default(),
                    bias: Default::default(),
                }),
                multisample: wgt::MultisampleState::default(),
                fragment_stage: Some(ProgrammableStage::new(&module, "fs")),
                color_targets: &targets,
                cache: None,
                multiview_mask: None,
            });
            device.destroy_shader_module(module);
            device.destroy_render_pipeline(pipeline?);
            Ok::<_, Failure>(())
        })();
        device.destroy_pipeline_layout(layout);
        result?;
    }
    Ok(Outcome::Pass)
}

/// `TEXTURE_ATOMIC`: atomics on R32Uint and R32Sint storage textures, a
/// compute pipeline for each.
fn texture_atomic_pipelines<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let Some(open) = open_with(ctx, wgt::Features::TEXTURE_ATOMIC, HalFeatures::empty())? else {
        return skip("no TEXTURE_ATOMIC");
    };
    for (format, texel, one) in [
        (wgt::TextureFormat::R32Uint, "r32uint", "1u"),
        (wgt::TextureFormat::R32Sint, "r32sint", "-1i"),
    ] {
        let entries = [entry(
            0,
            wgt::ShaderStages::COMPUTE,
            wgt::BindingType::StorageTexture {
                access: wgt::StorageTextureAccess::Atomic,
                format,
                view_dimension: wgt::TextureViewDimension::D2,
            },
        )];
        let wgsl = format!(
            "@group(0) @binding(0) var t: texture_storage_2d<{texel}, atomic>;
@compute @workgroup_size(1) fn main() {{ textureAtomicMin(t, vec2<i32>(0, 0), {one}); }}"
        );
        compute_made::<A>(&open.device, &entries, &wgsl).map_err(|e| format!("{format:?}: {e}"))?;
    }
    Ok(Outcome::Pass)
}

/// `MAPPABLE_PRIMARY_BUFFERS`: a host-visible buffer that is also a
/// storage, vertex and index buffer is made, written through its mapping,
/// and reads back what was written.
fn mappable_primary_buffers_take_any_usage<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let feature = wgt::Features::MAPPABLE_PRIMARY_BUFFERS;
    let Some(open) = open_with(ctx, feature, HalFeatures::empty())? else {
        return skip("no MAPPABLE_PRIMARY_BUFFERS");
    };
    let device = &open.device;
    let usage = wgt::BufferUsages::MAP_READ
        | wgt::BufferUsages::MAP_WRITE
        | wgt::BufferUsages::STORAGE
        | wgt::BufferUsages::VERTEX
        | wgt::BufferUsages::INDEX;
    let bytes = crate::helpers::pattern(256, 7);
    // SAFETY: the buffer is made from `device`, mapped once, unmapped and
    // destroyed below; no GPU work uses it.
    unsafe {
        let buffer = device.create_buffer(&BufferDescriptor {
            label: Some("mappable primary"),
            size: bytes.len() as u64,
            usage,
            memory: Memory::Upload,
        })?;
        let result = (|| {
            let mapping = device.map_buffer(&buffer)?;
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), mapping.ptr.as_ptr(), bytes.len());
            let mut got = vec![0u8; bytes.len()];
            std::ptr::copy_nonoverlapping(mapping.ptr.as_ptr(), got.as_mut_ptr(), got.len());
            device.unmap_buffer(&buffer);
            crate::helpers::compare(&got, &bytes, "read back through the mapping")
        })();
        device.destroy_buffer(buffer);
        result?;
    }
    Ok(Outcome::Pass)
}

/// `TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES`: for a set of formats, every
/// usage the adapter reports (beyond WebGPU's guarantees) makes a texture
/// on a device opened with the feature and the format features the
/// adapter has.
fn adapter_specific_format_features_make_textures<A: Api>(ctx: &Ctx<A>) -> TestResult {
    use wgt::TextureFormat as T;
    use wgt::TextureUsages as U;
    let feature = wgt::Features::TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES;
    if !ctx.caps.features.contains(feature) {
        return skip("no TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES");
    }
    // The features that stand for format support come with it: the
    // adapter's capabilities count them (`BGRA8UNORM_STORAGE`, …).
    let formats = wgt::Features::BGRA8UNORM_STORAGE
        | wgt::Features::RG11B10UFLOAT_RENDERABLE
        | wgt::Features::FLOAT32_FILTERABLE
        | wgt::Features::FLOAT32_BLENDABLE
        | wgt::Features::TEXTURE_FORMAT_16BIT_NORM;
    let Some(open) = open_with(
        ctx,
        feature | (ctx.caps.features & formats),
        HalFeatures::empty(),
    )?
    else {
        return skip("no TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES");
    };
    let mut made = 0;
    for format in [
        T::R8Unorm,
        T::Rg16Float,
        T::Rgba16Float,
        T::R32Float,
        T::Rgba32Float,
        T::Bgra8Unorm,
        T::Rgb10a2Unorm,
        T::Rg11b10Ufloat,
    ] {
        let caps = ctx.adapter.texture_format_capabilities(format);
        for usage in [
            U::COPY_SRC,
            U::COPY_DST,
            U::TEXTURE_BINDING,
            U::STORAGE_BINDING,
            U::RENDER_ATTACHMENT,
        ] {
            if !caps.allowed_usages.contains(usage) {
                continue;
            }
            let desc = TextureDescriptor {
                usage,
                ..crate::helpers::texture_desc(format, 8, 8, 1, 1)
            };
            // SAFETY: made from the live device and destroyed right away.
            unsafe {
                let texture = open
                    .device
                    .create_texture(&desc)
                    .map_err(|e| format!("{format:?} as {usage:?}: {e}"))?;
                open.device.destroy_texture(texture);
            }
            made += 1;
        }
    }
    ctx.note(format!("{made} textures made"));
    Ok(Outcome::Pass)
}

/// `EXTENDED_ACCELERATION_STRUCTURE_VERTEX_FORMATS`: a `Float32x2` triangle
/// geometry's build sizes are `UnsupportedVertexFormat` on a device with
/// acceleration structures alone, and are given with the feature.
fn extended_vertex_formats_need_their_feature<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let feature = wgt::Features::EXTENDED_ACCELERATION_STRUCTURE_VERTEX_FORMATS;
    let Some(plain) = open_with(
        ctx,
        wgt::Features::empty(),
        HalFeatures::ACCELERATION_STRUCTURE,
    )?
    else {
        return skip("no ACCELERATION_STRUCTURE");
    };
    let mut geometry = crate::ray_tracing_scene::triangles::<A::Buffer>(None, 3);
    geometry[0].vertex_format = wgt::VertexFormat::Float32x2;
    geometry[0].vertex_stride = 8;
    let entries = AccelerationStructureEntries::Triangles(&geometry);
    let desc = GetAccelerationStructureBuildSizesDescriptor::<A> {
        entries: &entries,
        flags: wgt::AccelerationStructureFlags::PREFER_FAST_TRACE,
    };
    // SAFETY: live device; no buffer is named.
    match unsafe { plain.device.get_acceleration_structure_build_sizes(&desc) } {
        Err(AccelerationStructureError::UnsupportedVertexFormat {
            extended: false, ..
        }) => {}
        other => return Err(format!("Float32x2 without {feature:?}: {other:?}").into()),
    }
    let Some(with) = open_with(ctx, feature, HalFeatures::ACCELERATION_STRUCTURE)? else {
        return skip("no EXTENDED_ACCELERATION_STRUCTURE_VERTEX_FORMATS");
    };
    // SAFETY: as above.
    let sizes = unsafe { with.device.get_acceleration_structure_build_sizes(&desc) }?;
    check!(sizes.acceleration_structure_size > 0, "sizes {sizes:?}");
    if ctx.backend == Backend::Noop {
        ctx.note("noop: sizes only");
    }
    Ok(Outcome::Pass)
}
