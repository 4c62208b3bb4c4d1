//! Shaders that need a device feature the hal must enable (or refuse):
//! storage writes from vertex and fragment shaders, `f16`, binding arrays
//! (sized, unbounded, update-after-bind), atomics on storage textures; and
//! the features that stand for format support. Pipelines are created, not
//! run: what counts is the typed result and a silent validation layer.

use std::num::NonZeroU32;

use keel_hal::wgt;
use keel_hal::{
    Adapter, Api, Backend, BindGroupLayoutDescriptor, BindGroupLayoutFlags,
    ComputePipelineDescriptor, Device, PipelineError, PipelineLayoutDescriptor, ProgrammableStage,
    RenderPipelineDescriptor, ShaderError, ShaderModuleDescriptor, TextureError,
};

use crate::harness::{skip, Ctx, Failure, Outcome, TestResult};
use crate::pipelines::{entry, storage};

conformance_tests!(
    fragment_shader_writes_storage,
    vertex_shader_writes_storage,
    f16_pipelines,
    binding_array_pipelines,
    storage_texture_atomics,
    format_features_match_their_probes,
    shader_capabilities_gate_modules,
    pipeline_state_needs_its_feature,
    shader_features_grant_their_capabilities,
    storage_shader_features_need_their_features,
    format_features_gate_their_usages,
    subgroup_barrier_needs_its_feature,
    texture_shapes_need_their_features,
);

/// What a pipeline test made on a device: its layouts and module.
struct Objects<A: Api> {
    group: A::BindGroupLayout,
    layout: A::PipelineLayout,
    module: A::ShaderModule,
}

impl<A: Api> Objects<A> {
    /// One bind group layout of `entries` (with `flags`), a pipeline layout
    /// of it, and a module from `wgsl`; what was made is destroyed on failure.
    ///
    /// # Safety
    /// `device` is live; the caller calls [`Self::destroy`].
    unsafe fn new(
        device: &A::Device,
        entries: &[wgt::BindGroupLayoutEntry],
        flags: BindGroupLayoutFlags,
        wgsl: &str,
    ) -> Result<Self, Failure> {
        let desc = BindGroupLayoutDescriptor {
            label: Some("shader features"),
            flags,
            entries,
        };
        // SAFETY: live device.
        let group = unsafe { device.create_bind_group_layout(&desc) }?;
        let desc = PipelineLayoutDescriptor {
            label: Some("shader features"),
            bind_group_layouts: &[&group],
            push_constant_ranges: &[],
        };
        // SAFETY: the group layout came from this device.
        let layout = match unsafe { device.create_pipeline_layout(&desc) } {
            Ok(layout) => layout,
            Err(e) => {
                // SAFETY: unused.
                unsafe { device.destroy_bind_group_layout(group) };
                return Err(e.into());
            }
        };
        // SAFETY: live device.
        match unsafe { device.create_shader_module(&ShaderModuleDescriptor::wgsl(wgsl)) } {
            Ok(module) => Ok(Self {
                group,
                layout,
                module,
            }),
            Err(e) => {
                // SAFETY: unused.
                unsafe {
                    device.destroy_pipeline_layout(layout);
                    device.destroy_bind_group_layout(group);
                }
                Err(e.into())
            }
        }
    }

    /// Creates and destroys a compute pipeline of entry point `name`.
    ///
    /// # Safety
    /// `device` made `self`.
    unsafe fn compute(&self, device: &A::Device, name: &str) -> Result<(), PipelineError> {
        let desc = ComputePipelineDescriptor {
            label: Some("shader features"),
            layout: &self.layout,
            stage: ProgrammableStage {
                module: &self.module,
                entry_point: name,
                constants: &[],
            },
            cache: None,
        };
        // SAFETY: every object came from `device`; the pipeline is unused.
        unsafe {
            let pipeline = device.create_compute_pipeline(&desc)?;
            device.destroy_compute_pipeline(pipeline);
        }
        Ok(())
    }

    /// Creates and destroys a render pipeline of entry points `vs` and `fs`
    /// drawing points into one Rgba8Unorm target.
    ///
    /// # Safety
    /// `device` made `self`.
    unsafe fn render(&self, device: &A::Device) -> Result<(), PipelineError> {
        let points = wgt::PrimitiveState {
            topology: wgt::PrimitiveTopology::PointList,
            ..Default::default()
        };
        // SAFETY: forwarded contract.
        unsafe { self.render_with(device, points, None) }
    }

    /// As [`Self::render_with`], into a `format` target.
    ///
    /// # Safety
    /// As for [`Self::render`].
    unsafe fn render_target(
        &self,
        device: &A::Device,
        primitive: wgt::PrimitiveState,
        format: wgt::TextureFormat,
        blend: Option<wgt::BlendState>,
    ) -> Result<(), PipelineError> {
        let targets = [Some(wgt::ColorTargetState {
            format,
            blend,
            write_mask: wgt::ColorWrites::ALL,
        })];
        let desc = RenderPipelineDescriptor {
            label: Some("shader features"),
            layout: &self.layout,
            vertex_buffers: &[],
            vertex_stage: ProgrammableStage::new(&self.module, "vs"),
            primitive,
            depth_stencil: None,
            multisample: wgt::MultisampleState::default(),
            fragment_stage: Some(ProgrammableStage::new(&self.module, "fs")),
            color_targets: &targets,
            cache: None,
            multiview_mask: None,
        };
        // SAFETY: every object came from `device`; the pipeline is unused.
        unsafe {
            let pipeline = device.create_render_pipeline(&desc)?;
            device.destroy_render_pipeline(pipeline);
        }
        Ok(())
    }

    /// As [`Self::render`], with `primitive` state and the target's `blend`.
    ///
    /// # Safety
    /// As for [`Self::render`].
    unsafe fn render_with(
        &self,
        device: &A::Device,
        primitive: wgt::PrimitiveState,
        blend: Option<wgt::BlendState>,
    ) -> Result<(), PipelineError> {
        let targets = [Some(wgt::ColorTargetState {
            format: wgt::TextureFormat::Rgba8Unorm,
            blend,
            write_mask: wgt::ColorWrites::ALL,
        })];
        let desc = RenderPipelineDescriptor {
            label: Some("shader features"),
            layout: &self.layout,
            vertex_buffers: &[],
            vertex_stage: ProgrammableStage {
                module: &self.module,
                entry_point: "vs",
                constants: &[],
            },
            primitive,
            depth_stencil: None,
            multisample: wgt::MultisampleState::default(),
            fragment_stage: Some(ProgrammableStage {
                module: &self.module,
                entry_point: "fs",
                constants: &[],
            }),
            color_targets: &targets,
            cache: None,
            multiview_mask: None,
        };
        // SAFETY: every object came from `device`; the pipeline is unused.
        unsafe {
            let pipeline = device.create_render_pipeline(&desc)?;
            device.destroy_render_pipeline(pipeline);
        }
        Ok(())
    }

    /// Destroys the objects.
    ///
    /// # Safety
    /// No pipeline of them is alive.
    unsafe fn destroy(self, device: &A::Device) {
        // SAFETY: forwarded contract.
        unsafe {
            device.destroy_shader_module(self.module);
            device.destroy_pipeline_layout(self.layout);
            device.destroy_bind_group_layout(self.group);
        }
    }
}

/// Makes [`Objects`], runs `body` on them, destroys them, and checks that
/// the device's live counts are back.
fn with_objects<A: Api, T>(
    device: &A::Device,
    entries: &[wgt::BindGroupLayoutEntry],
    flags: BindGroupLayoutFlags,
    wgsl: &str,
    body: impl FnOnce(&Objects<A>) -> T,
) -> Result<T, Failure> {
    let before = device.live_counts();
    // SAFETY: live device; destroyed below.
    let objects = unsafe { Objects::<A>::new(device, entries, flags, wgsl) }?;
    let out = body(&objects);
    // SAFETY: the body destroys the pipelines it makes.
    unsafe { objects.destroy(device) };
    check_eq!(device.live_counts(), before, "live counts");
    Ok(out)
}

/// A render pipeline whose `stage` writes storage is made, or refused with
/// [`PipelineError::MissingShaderFeature`] naming `feature` (only where a
/// Vulkan adapter lacks it; lavapipe has both features).
fn stage_writes_storage<A: Api>(
    ctx: &Ctx<A>,
    visibility: wgt::ShaderStages,
    wgsl: &str,
    feature: &str,
) -> TestResult {
    let entries = [entry(0, visibility, storage(false, false))];
    let result = with_objects::<A, _>(
        &ctx.device,
        &entries,
        BindGroupLayoutFlags::empty(),
        wgsl,
        // SAFETY: the objects came from this device.
        |objects| unsafe { objects.render(&ctx.device) },
    )?;
    match result {
        Ok(()) => Ok(Outcome::Pass),
        Err(PipelineError::MissingShaderFeature { feature: f, .. })
            if f == feature && ctx.backend == Backend::Vulkan =>
        {
            ctx.note(format!("refused: the adapter lacks {feature}"));
            Ok(Outcome::Pass)
        }
        Err(e) => Err(format!("expected the pipeline or a missing {feature}, got {e:?}").into()),
    }
}

/// A fragment shader that counts its fragments in a storage buffer.
fn fragment_shader_writes_storage<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let wgsl = "
@group(0) @binding(0) var<storage, read_write> hits: array<atomic<u32>>;
@vertex fn vs() -> @builtin(position) vec4<f32> { return vec4<f32>(0.0, 0.0, 0.0, 1.0); }
@fragment fn fs() -> @location(0) vec4<f32> {
    atomicAdd(&hits[0], 1u);
    return vec4<f32>(1.0);
}
";
    stage_writes_storage(
        ctx,
        wgt::ShaderStages::FRAGMENT,
        wgsl,
        "fragmentStoresAndAtomics",
    )
}

/// A vertex shader that writes its index to a storage buffer: refused with
/// `MissingShaderFeature` naming `VERTEX_WRITABLE_STORAGE` on a device not
/// opened with it, made on one opened with it (where advertised).
fn vertex_shader_writes_storage<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let wgsl = "
@group(0) @binding(0) var<storage, read_write> seen: array<u32>;
@vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    seen[i] = i;
    return vec4<f32>(0.0, 0.0, 0.0, 1.0);
}
@fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }
";
    let entries = [entry(0, wgt::ShaderStages::VERTEX, storage(false, false))];
    let flags = BindGroupLayoutFlags::empty();
    // SAFETY: the objects came from this device.
    let without = with_objects::<A, _>(&ctx.device, &entries, flags, wgsl, |objects| unsafe {
        objects.render(&ctx.device)
    })?;
    check!(
        matches!(&without, Err(PipelineError::MissingShaderFeature { feature, .. })
            if *feature == "VERTEX_WRITABLE_STORAGE"),
        "without the feature: {without:?}"
    );
    let Some(open) = open_with(ctx, wgt::Features::VERTEX_WRITABLE_STORAGE)? else {
        return skip("no VERTEX_WRITABLE_STORAGE");
    };
    // SAFETY: as above.
    with_objects::<A, _>(&open.device, &entries, flags, wgsl, |objects| unsafe {
        objects.render(&open.device)
    })??;
    Ok(Outcome::Pass)
}

/// A second device of the test's adapter opened with `features`; `None`
/// where the adapter lacks one of them.
fn open_with<A: Api>(
    ctx: &Ctx<A>,
    features: wgt::Features,
) -> Result<Option<keel_hal::OpenDevice<A>>, Failure> {
    crate::feature_cases::open_with(ctx, features, keel_hal::HalFeatures::empty())
}

/// With `SHADER_F16`: a compute shader doing f16 arithmetic in a storage
/// buffer, and a render pipeline passing an f16 varying (naga passes it as
/// f32 where the device has no `storageInputOutput16`).
fn f16_pipelines<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let Some(open) = open_with(ctx, wgt::Features::SHADER_F16)? else {
        return skip("no SHADER_F16");
    };
    let wgsl = "
enable f16;
@group(0) @binding(0) var<storage, read_write> data: array<f16>;
@compute @workgroup_size(1) fn main() { data[0] = data[1] * 2.0h + f16(1); }

struct Varyings { @builtin(position) position: vec4<f32>, @location(0) shade: f16 }
@vertex fn vs() -> Varyings { return Varyings(vec4<f32>(0.0, 0.0, 0.0, 1.0), 0.5h); }
@fragment fn fs(v: Varyings) -> @location(0) vec4<f32> { return vec4<f32>(f32(v.shade)); }
";
    let entries = [entry(0, wgt::ShaderStages::COMPUTE, storage(false, false))];
    let device = &open.device;
    with_objects::<A, _>(
        device,
        &entries,
        BindGroupLayoutFlags::empty(),
        wgsl,
        // SAFETY: the objects came from this device.
        |objects| unsafe {
            objects.compute(device, "main")?;
            objects.render(device)
        },
    )??;
    Ok(Outcome::Pass)
}

/// With `TEXTURE_BINDING_ARRAY`: compute pipelines reading a layout's
/// array of 4 textures through `binding_array<T, 4>` and through
/// `binding_array<T>` (given the layout's size); with
/// `PARTIALLY_BOUND_BINDING_ARRAY` too, the same on an update-after-bind
/// layout (whose arrays may be partially bound).
fn binding_array_pipelines<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let partial = wgt::Features::PARTIALLY_BOUND_BINDING_ARRAY;
    let has_partial = ctx.caps.features.contains(partial);
    let features = if has_partial {
        wgt::Features::TEXTURE_BINDING_ARRAY | partial
    } else {
        wgt::Features::TEXTURE_BINDING_ARRAY
    };
    let Some(open) = open_with(ctx, features)? else {
        return skip("no TEXTURE_BINDING_ARRAY");
    };
    let textures = wgt::BindGroupLayoutEntry {
        binding: 0,
        visibility: wgt::ShaderStages::COMPUTE,
        ty: wgt::BindingType::Texture {
            sample_type: wgt::TextureSampleType::Float { filterable: false },
            view_dimension: wgt::TextureViewDimension::D2,
            multisampled: false,
        },
        count: NonZeroU32::new(4),
    };
    let out = entry(1, wgt::ShaderStages::COMPUTE, storage(false, false));
    let entries = [textures, out];
    let shader = |array: &str| {
        format!(
            "enable wgpu_binding_array;
@group(0) @binding(0) var textures: {array};
@group(0) @binding(1) var<storage, read_write> out: array<vec4<f32>>;
@compute @workgroup_size(1) fn main() {{
    out[0] = textureLoad(textures[0], vec2<u32>(0u), 0) + textureLoad(textures[3], vec2<u32>(0u), 0);
}}
"
        )
    };
    let mut flag_sets = vec![BindGroupLayoutFlags::empty()];
    if has_partial {
        flag_sets.push(BindGroupLayoutFlags::UPDATE_AFTER_BIND);
    }
    let device = &open.device;
    for flags in flag_sets {
        for array in [
            "binding_array<texture_2d<f32>, 4>",
            "binding_array<texture_2d<f32>>",
        ] {
            with_objects::<A, _>(
                device,
                &entries,
                flags,
                &shader(array),
                // SAFETY: the objects came from this device.
                |objects| unsafe { objects.compute(device, "main") },
            )?
            .map_err(|e| format!("{array} ({flags:?}): {e}"))?;
        }
    }
    Ok(Outcome::Pass)
}

/// `textureAtomicAdd` on an R32Uint storage texture with atomic access:
/// layouts accept such textures, so shaders may use them.
fn storage_texture_atomics<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let wgsl = "
@group(0) @binding(0) var counts: texture_storage_2d<r32uint, atomic>;
@compute @workgroup_size(1) fn main() { textureAtomicAdd(counts, vec2<i32>(0, 0), 1u); }
";
    let entries = [entry(
        0,
        wgt::ShaderStages::COMPUTE,
        wgt::BindingType::StorageTexture {
            access: wgt::StorageTextureAccess::Atomic,
            format: wgt::TextureFormat::R32Uint,
            view_dimension: wgt::TextureViewDimension::D2,
        },
    )];
    with_objects::<A, _>(
        &ctx.device,
        &entries,
        BindGroupLayoutFlags::empty(),
        wgsl,
        // SAFETY: the objects came from this device.
        |objects| unsafe { objects.compute(&ctx.device, "main") },
    )??;

    // 64-bit: `textureAtomicMax` on an r64uint storage texture needs
    // TEXTURE_INT64_ATOMIC (which grants 64-bit integers with it).
    use keel_hal::naga::valid::Capabilities as Caps;
    let wgsl = "
@group(0) @binding(0) var wide: texture_storage_2d<r64uint, atomic>;
@compute @workgroup_size(1) fn main() { textureAtomicMax(wide, vec2<i32>(0, 0), 5lu); }
";
    refused_for_want_of(
        ctx,
        wgsl,
        Caps::TEXTURE_INT64_ATOMIC | Caps::SHADER_INT64,
        "TEXTURE_INT64_ATOMIC not enabled",
    )?;
    let Some(open) = open_with(ctx, wgt::Features::TEXTURE_INT64_ATOMIC)? else {
        ctx.note("no TEXTURE_INT64_ATOMIC: the 64-bit pipeline is not made");
        return Ok(Outcome::Pass);
    };
    let entries = [entry(
        0,
        wgt::ShaderStages::COMPUTE,
        wgt::BindingType::StorageTexture {
            access: wgt::StorageTextureAccess::Atomic,
            format: wgt::TextureFormat::R64Uint,
            view_dimension: wgt::TextureViewDimension::D2,
        },
    )];
    with_objects::<A, _>(
        &open.device,
        &entries,
        BindGroupLayoutFlags::empty(),
        wgsl,
        // SAFETY: the objects came from this device.
        |objects| unsafe { objects.compute(&open.device, "main") },
    )??;
    ctx.note("64-bit texture atomics: pipeline made");
    Ok(Outcome::Pass)
}

/// On Vulkan, `DEPTH32FLOAT_STENCIL8` is reported exactly where
/// Depth32FloatStencil8 can be a sampled depth-stencil attachment, and
/// `TEXTURE_FORMAT_16BIT_NORM` exactly where all six 16-bit norm formats
/// can be sampled, stored and copied.
fn format_features_match_their_probes<A: Api>(ctx: &Ctx<A>) -> TestResult {
    if ctx.backend != Backend::Vulkan {
        return skip("the probes are Vulkan's (noop reports fixed features)");
    }
    use wgt::TextureFormat as T;
    use wgt::TextureUsages as U;
    let has = |format, usages: U| {
        ctx.adapter
            .texture_format_capabilities(format)
            .allowed_usages
            .contains(usages)
    };
    let d32s8 = has(
        T::Depth32FloatStencil8,
        U::RENDER_ATTACHMENT | U::TEXTURE_BINDING,
    );
    check_eq!(
        ctx.caps
            .features
            .contains(wgt::Features::DEPTH32FLOAT_STENCIL8),
        d32s8,
        "DEPTH32FLOAT_STENCIL8 reported"
    );
    let norm16 = [
        T::R16Unorm,
        T::R16Snorm,
        T::Rg16Unorm,
        T::Rg16Snorm,
        T::Rgba16Unorm,
        T::Rgba16Snorm,
    ]
    .into_iter()
    .all(|f| {
        has(
            f,
            U::TEXTURE_BINDING | U::STORAGE_BINDING | U::COPY_SRC | U::COPY_DST,
        )
    });
    check_eq!(
        ctx.caps
            .features
            .contains(wgt::Features::TEXTURE_FORMAT_16BIT_NORM),
        norm16,
        "TEXTURE_FORMAT_16BIT_NORM reported"
    );
    use wgt::TextureFormatFeatureFlags as Ff;
    let flags = |format| ctx.adapter.texture_format_capabilities(format).flags;
    let float32 = [T::R32Float, T::Rg32Float, T::Rgba32Float];
    let rows = [
        (
            wgt::Features::FLOAT32_FILTERABLE,
            float32.iter().all(|&f| flags(f).contains(Ff::FILTERABLE)),
        ),
        (
            wgt::Features::FLOAT32_BLENDABLE,
            float32.iter().all(|&f| flags(f).contains(Ff::BLENDABLE)),
        ),
        (
            wgt::Features::RG11B10UFLOAT_RENDERABLE,
            has(T::Rg11b10Ufloat, U::RENDER_ATTACHMENT)
                && flags(T::Rg11b10Ufloat).contains(Ff::BLENDABLE),
        ),
        (
            wgt::Features::BGRA8UNORM_STORAGE,
            has(T::Bgra8Unorm, U::STORAGE_BINDING),
        ),
    ];
    for (feature, probed) in rows {
        check_eq!(
            ctx.caps.features.contains(feature),
            probed,
            "{feature:?} reported"
        );
    }
    ctx.note(format!(
        "DEPTH32FLOAT_STENCIL8: {d32s8}, TEXTURE_FORMAT_16BIT_NORM: {norm16}, others: {rows:?}"
    ));
    Ok(Outcome::Pass)
}

/// Usages that need a format feature: storage on Bgra8Unorm
/// (`BGRA8UNORM_STORAGE`), rendering to Rg11b10Ufloat
/// (`RG11B10UFLOAT_RENDERABLE`) are `TextureError::UnsupportedFormat` on a
/// device not opened with the feature and made on one opened with it;
/// blending a 32-bit float target needs `FLOAT32_BLENDABLE`
/// (`PipelineError::MissingFeature` without it).
fn format_features_gate_their_usages<A: Api>(ctx: &Ctx<A>) -> TestResult {
    use wgt::Features as F;
    use wgt::TextureFormat as T;
    use wgt::TextureUsages as U;
    let cases = [
        (F::BGRA8UNORM_STORAGE, T::Bgra8Unorm, U::STORAGE_BINDING),
        (
            F::RG11B10UFLOAT_RENDERABLE,
            T::Rg11b10Ufloat,
            U::RENDER_ATTACHMENT,
        ),
    ];
    let mut made = Vec::new();
    for (feature, format, usage) in cases {
        let mut desc = crate::helpers::texture_desc(format, 4, 4, 1, 1);
        desc.usage = usage;
        // SAFETY: live device; a texture made by mistake is destroyed.
        match unsafe { ctx.device.create_texture(&desc) } {
            Err(TextureError::UnsupportedFormat { .. }) => {}
            Ok(texture) => {
                // SAFETY: unused.
                unsafe { ctx.device.destroy_texture(texture) };
                return Err(format!("{format:?} {usage:?} made without {feature:?}").into());
            }
            Err(e) => return Err(format!("{format:?} {usage:?} without {feature:?}: {e}").into()),
        }
        let Some(open) = open_with(ctx, feature)? else {
            continue;
        };
        // SAFETY: live device; destroyed right away.
        unsafe {
            let texture = open.device.create_texture(&desc)?;
            open.device.destroy_texture(texture);
        }
        made.push(feature);
    }
    let wgsl = "
@vertex fn vs() -> @builtin(position) vec4<f32> { return vec4<f32>(0.0, 0.0, 0.0, 1.0); }
@fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }
";
    let blend = Some(wgt::BlendState::ALPHA_BLENDING);
    let triangles = wgt::PrimitiveState::default();
    let flags = BindGroupLayoutFlags::empty();
    // SAFETY: the objects came from this device.
    let without = with_objects::<A, _>(&ctx.device, &[], flags, wgsl, |o| unsafe {
        o.render_target(&ctx.device, triangles, T::R32Float, blend)
    })?;
    check!(
        matches!(without, Err(PipelineError::MissingFeature { feature, .. })
            if feature == F::FLOAT32_BLENDABLE),
        "blending R32Float without FLOAT32_BLENDABLE: {without:?}"
    );
    if let Some(open) = open_with(ctx, F::FLOAT32_BLENDABLE)? {
        // SAFETY: as above.
        with_objects::<A, _>(&open.device, &[], flags, wgsl, |o| unsafe {
            o.render_target(&open.device, triangles, T::R32Float, blend)
        })??;
        made.push(F::FLOAT32_BLENDABLE);
    }
    ctx.note(format!("made with {made:?}"));
    Ok(Outcome::Pass)
}

/// `Device::shader_capabilities` is what module creation takes: a module
/// within it is created, one needing more fails with
/// `ShaderError::MissingCapabilities` naming exactly what it lacks.
/// `pack2x16float` (core WGSL) builds everywhere; `sample_index` where the
/// device has per-sample shading; `primitive_index` not on the test's
/// device, which is not opened with `PRIMITIVE_INDEX`.
fn shader_capabilities_gate_modules<A: Api>(ctx: &Ctx<A>) -> TestResult {
    use keel_hal::naga::valid::Capabilities as Caps;
    let device = &ctx.device;
    let caps = device.shader_capabilities();
    check!(
        caps.contains(Caps::SHADER_FLOAT16_IN_FLOAT32),
        "pack2x16float is core WGSL: {caps:?}"
    );
    let pack = "
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@compute @workgroup_size(1)
fn main() { data[1] = pack2x16float(unpack2x16float(data[0]) * 2.0); }
";
    let sample = "
@fragment
fn main(@builtin(sample_index) i: u32, @builtin(sample_mask) m: u32) -> @location(0) vec4<f32> {
    return vec4<f32>(f32(i), f32(m), 0.0, 1.0);
}
";
    let primitive = "
enable primitive_index;
@fragment
fn main(@builtin(primitive_index) p: u32) -> @location(0) vec4<f32> {
    return vec4<f32>(f32(p), 0.0, 0.0, 1.0);
}
";
    let cases = [
        ("pack2x16float", pack, Caps::empty()),
        ("sample_index", sample, Caps::MULTISAMPLED_SHADING),
        ("primitive_index", primitive, Caps::PRIMITIVE_INDEX),
    ];
    for (what, wgsl, needs) in cases {
        // SAFETY: live device; a module made is destroyed right away.
        let made = unsafe { device.create_shader_module(&ShaderModuleDescriptor::wgsl(wgsl)) };
        match made {
            Ok(module) => {
                // SAFETY: unused.
                unsafe { device.destroy_shader_module(module) };
                check!(caps.contains(needs), "{what}: created without {needs:?}");
            }
            Err(ShaderError::MissingCapabilities {
                needed, available, ..
            }) => {
                check!(
                    !caps.contains(needs),
                    "{what}: refused although the device has {needs:?}"
                );
                check_eq!(needed, needs, "{what}: the capabilities named");
                check_eq!(available, caps, "{what}: the capabilities available");
            }
            Err(e) => return Err(format!("{what}: {e}").into()),
        }
    }
    ctx.note(format!("shader capabilities: {caps:?}"));
    Ok(Outcome::Pass)
}

/// Polygon modes, unclipped depth and conservative rasterization need their
/// features: a device opened without one refuses the pipeline with
/// `PipelineError::MissingFeature` naming it; one opened with it (where the
/// adapter advertises it) makes the pipeline.
fn pipeline_state_needs_its_feature<A: Api>(ctx: &Ctx<A>) -> TestResult {
    use wgt::Features as F;
    let wgsl = "
@vertex fn vs() -> @builtin(position) vec4<f32> { return vec4<f32>(0.0, 0.0, 0.0, 1.0); }
@fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }
";
    let triangles = |f: fn(&mut wgt::PrimitiveState)| {
        let mut p = wgt::PrimitiveState::default();
        f(&mut p);
        p
    };
    let cases = [
        (
            triangles(|p| p.polygon_mode = wgt::PolygonMode::Line),
            F::POLYGON_MODE_LINE,
        ),
        (
            triangles(|p| p.polygon_mode = wgt::PolygonMode::Point),
            F::POLYGON_MODE_POINT,
        ),
        (
            triangles(|p| p.unclipped_depth = true),
            F::DEPTH_CLIP_CONTROL,
        ),
        (
            triangles(|p| p.conservative = true),
            F::CONSERVATIVE_RASTERIZATION,
        ),
    ];
    let plain = open_with(ctx, F::empty())?.ok_or("no plain device")?;
    let mut made = Vec::new();
    for (primitive, feature) in cases {
        let flags = BindGroupLayoutFlags::empty();
        // SAFETY: the objects came from this device.
        let without = with_objects::<A, _>(&plain.device, &[], flags, wgsl, |o| unsafe {
            o.render_with(&plain.device, primitive, None)
        })?;
        check!(
            matches!(without, Err(PipelineError::MissingFeature { feature: f, .. }) if f == feature),
            "{feature:?} not enabled: {without:?}"
        );
        let Some(open) = open_with(ctx, feature)? else {
            continue;
        };
        // SAFETY: as above.
        with_objects::<A, _>(&open.device, &[], flags, wgsl, |o| unsafe {
            o.render_with(&open.device, primitive, None)
        })??;
        made.push(feature);
    }
    ctx.note(format!("pipelines made with {made:?}"));
    Ok(Outcome::Pass)
}

/// Each shader feature grants its naga capability: on a device not opened
/// with it a module using it is `ShaderError::MissingCapabilities` naming
/// exactly that capability; on one opened with it (where advertised) the
/// module and a render pipeline of it are made (dual-source blending with
/// second-source blend factors, which need the feature too).
fn shader_features_grant_their_capabilities<A: Api>(ctx: &Ctx<A>) -> TestResult {
    use keel_hal::naga::valid::Capabilities as Caps;
    use wgt::Features as F;
    const FS: &str = "@fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }";
    const VS: &str =
        "@vertex fn vs() -> @builtin(position) vec4<f32> { return vec4<f32>(0.0, 0.0, 0.0, 1.0); }";
    let clip = format!(
        "enable clip_distances;
struct Out {{ @builtin(position) p: vec4<f32>, @builtin(clip_distances) clip: array<f32, 1> }}
@vertex fn vs() -> Out {{ return Out(vec4<f32>(0.0, 0.0, 0.0, 1.0), array<f32, 1>(1.0)); }}
{FS}"
    );
    let primitive = format!(
        "enable primitive_index;
{VS}
@fragment fn fs(@builtin(primitive_index) i: u32) -> @location(0) vec4<f32> {{
    return vec4<f32>(f32(i));
}}"
    );
    let draw = format!(
        "enable draw_index;
@vertex fn vs(@builtin(draw_index) d: u32) -> @builtin(position) vec4<f32> {{
    return vec4<f32>(f32(d), 0.0, 0.0, 1.0);
}}
{FS}"
    );
    let dual = format!(
        "enable dual_source_blending;
{VS}
struct FsOut {{ @location(0) @blend_src(0) a: vec4<f32>, @location(0) @blend_src(1) b: vec4<f32> }}
@fragment fn fs() -> FsOut {{ return FsOut(vec4<f32>(1.0), vec4<f32>(0.5)); }}"
    );
    let subgroups = format!(
        "{VS}
@fragment fn fs() -> @location(0) vec4<f32> {{
    return vec4<f32>(subgroupAdd(1.0) / f32(max(subgroupBallot(true).x, 1u)));
}}"
    );
    let barycentric = format!(
        "{VS}
@fragment fn fs(@builtin(barycentric) b: vec3<f32>) -> @location(0) vec4<f32> {{
    return vec4<f32>(b, 1.0);
}}"
    );
    let per_vertex = "enable wgpu_per_vertex;
struct Out { @builtin(position) p: vec4<f32>, @location(0) c: f32 }
@vertex fn vs() -> Out { return Out(vec4<f32>(0.0, 0.0, 0.0, 1.0), 1.0); }
@fragment fn fs(@location(0) @interpolate(per_vertex) c: array<f32, 3>) -> @location(0) vec4<f32> {
    return vec4<f32>(c[0], c[1], c[2], 1.0);
}"
    .to_owned();
    let second_source = wgt::BlendState {
        color: wgt::BlendComponent {
            src_factor: wgt::BlendFactor::Src1,
            dst_factor: wgt::BlendFactor::OneMinusSrc1,
            operation: wgt::BlendOperation::Add,
        },
        alpha: wgt::BlendComponent::REPLACE,
    };
    let vertex_subgroups = format!(
        "@vertex fn vs() -> @builtin(position) vec4<f32> {{
    return vec4<f32>(f32(subgroupAdd(1u)), 0.0, 0.0, 1.0);
}}
{FS}"
    );
    let cases = [
        (F::CLIP_DISTANCES, Caps::CLIP_DISTANCES, clip, None),
        (
            F::SUBGROUP_VERTEX,
            Caps::SUBGROUP | Caps::SUBGROUP_VERTEX_STAGE,
            vertex_subgroups,
            None,
        ),
        (F::PRIMITIVE_INDEX, Caps::PRIMITIVE_INDEX, primitive, None),
        (F::SHADER_DRAW_INDEX, Caps::DRAW_INDEX, draw, None),
        (F::SUBGROUP, Caps::SUBGROUP, subgroups, None),
        (
            F::SHADER_BARYCENTRICS,
            Caps::SHADER_BARYCENTRICS,
            barycentric,
            None,
        ),
        (F::SHADER_PER_VERTEX, Caps::PER_VERTEX, per_vertex, None),
        (
            F::DUAL_SOURCE_BLENDING,
            Caps::DUAL_SOURCE_BLENDING,
            dual,
            Some(second_source),
        ),
    ];
    let mut made = Vec::new();
    for (feature, cap, wgsl, blend) in cases {
        refused_for_want_of(ctx, &wgsl, cap, &format!("{feature:?} not enabled"))?;
        let Some(open) = open_with(ctx, feature)? else {
            continue;
        };
        let triangles = wgt::PrimitiveState::default();
        // SAFETY: the objects came from this device.
        with_objects::<A, _>(
            &open.device,
            &[],
            BindGroupLayoutFlags::empty(),
            &wgsl,
            |o| unsafe { o.render_with(&open.device, triangles, blend) },
        )??;
        made.push(cap);
    }
    ctx.note(format!("pipelines made with {made:?}"));
    Ok(Outcome::Pass)
}

/// Storage features of compute shaders: an `f64` in storage needs
/// `SHADER_F64`, an `i64` `SHADER_INT64`, an `i16` `SHADER_I16`, `atomicMax` on a `u64` needs
/// `SHADER_INT64_ATOMIC_MIN_MAX`, `atomicAdd` (with its result) on a `u64`
/// `SHADER_INT64_ATOMIC_ALL_OPS`, `atomicAdd` on an `f32`
/// `SHADER_FLOAT32_ATOMIC`, `@coherent` and `@volatile` storage
/// `MEMORY_DECORATION_COHERENT` and `_VOLATILE`; without the feature the
/// module names the capabilities it lacks, with it (where advertised) a
/// compute pipeline is made.
fn storage_shader_features_need_their_features<A: Api>(ctx: &Ctx<A>) -> TestResult {
    use keel_hal::naga::valid::Capabilities as Caps;
    use wgt::Features as F;
    let decl = "@group(0) @binding(0) var<storage, read_write> x: atomic<u64>;";
    let min_max =
        format!("{decl}\n@compute @workgroup_size(1) fn main() {{ atomicMax(&x, 5lu); }}");
    let all_ops = format!(
        "{decl}\n@group(0) @binding(1) var<storage, read_write> y: u64;
@compute @workgroup_size(1) fn main() {{ y = atomicAdd(&x, 5lu); }}"
    );
    let cases = [
        (
            F::SHADER_INT64_ATOMIC_MIN_MAX,
            min_max,
            Caps::SHADER_INT64 | Caps::SHADER_INT64_ATOMIC_MIN_MAX,
        ),
        (
            F::SHADER_INT64_ATOMIC_ALL_OPS,
            all_ops,
            Caps::SHADER_INT64 | Caps::SHADER_INT64_ATOMIC_ALL_OPS,
        ),
        (
            F::SHADER_F64,
            "@group(0) @binding(0) var<storage, read_write> x: f64;
@compute @workgroup_size(1) fn main() { x = x * 2.0lf; }"
                .to_owned(),
            Caps::FLOAT64,
        ),
        (
            F::SHADER_INT64,
            "@group(0) @binding(0) var<storage, read_write> x: i64;
@compute @workgroup_size(1) fn main() { x = x + 1li; }"
                .to_owned(),
            Caps::SHADER_INT64,
        ),
        (
            F::SHADER_I16,
            "enable wgpu_int16;
@group(0) @binding(0) var<storage, read_write> x: i16;
@compute @workgroup_size(1) fn main() { x = x + x; }"
                .to_owned(),
            Caps::SHADER_INT16,
        ),
        (
            F::SHADER_FLOAT32_ATOMIC,
            "@group(0) @binding(0) var<storage, read_write> x: atomic<f32>;
@compute @workgroup_size(1) fn main() { atomicAdd(&x, 1.0); }"
                .to_owned(),
            Caps::SHADER_FLOAT32_ATOMIC,
        ),
        (
            F::MEMORY_DECORATION_COHERENT,
            "@group(0) @binding(0) @coherent var<storage, read_write> x: u32;
@compute @workgroup_size(1) fn main() { x = 1u; }"
                .to_owned(),
            Caps::MEMORY_DECORATION_COHERENT,
        ),
        (
            F::MEMORY_DECORATION_VOLATILE,
            "@group(0) @binding(0) @volatile var<storage, read_write> x: u32;
@compute @workgroup_size(1) fn main() { x = 1u; }"
                .to_owned(),
            Caps::MEMORY_DECORATION_VOLATILE,
        ),
    ];
    let entries = [
        entry(0, wgt::ShaderStages::COMPUTE, storage(false, false)),
        entry(1, wgt::ShaderStages::COMPUTE, storage(false, false)),
    ];
    let mut made = Vec::new();
    for (feature, wgsl, needs) in cases {
        refused_for_want_of(ctx, &wgsl, needs, &format!("{feature:?} not enabled"))?;
        let Some(open) = open_with(ctx, feature)? else {
            continue;
        };
        let flags = BindGroupLayoutFlags::empty();
        // SAFETY: the objects came from this device.
        with_objects::<A, _>(&open.device, &entries, flags, &wgsl, |o| unsafe {
            o.compute(&open.device, "main")
        })??;
        made.push(feature);
    }
    ctx.note(format!("compute pipelines made with {made:?}"));
    Ok(Outcome::Pass)
}

/// `subgroupBarrier` needs `SUBGROUP_BARRIER` (which grants subgroups
/// too): both capabilities named when missing, a compute pipeline made
/// with the feature alone where advertised (on Vulkan through the
/// barrier-semantics fix-up of `shader/spirv_fixups.rs`, which the
/// validation layer checks at pipeline creation).
fn subgroup_barrier_needs_its_feature<A: Api>(ctx: &Ctx<A>) -> TestResult {
    use keel_hal::naga::valid::Capabilities as Caps;
    let wgsl = "@compute @workgroup_size(64) fn main() { subgroupBarrier(); }";
    let needs = Caps::SUBGROUP | Caps::SUBGROUP_BARRIER;
    refused_for_want_of(ctx, wgsl, needs, "without SUBGROUP_BARRIER")?;
    let Some(open) = open_with(ctx, wgt::Features::SUBGROUP_BARRIER)? else {
        return skip("no SUBGROUP_BARRIER");
    };
    let flags = BindGroupLayoutFlags::empty();
    // SAFETY: the objects came from this device.
    with_objects::<A, _>(&open.device, &[], flags, wgsl, |o| unsafe {
        o.compute(&open.device, "main")
    })??;
    Ok(Outcome::Pass)
}

/// Fails unless `wgsl` is refused on the test's device with
/// `ShaderError::MissingCapabilities` naming exactly `needs`.
fn refused_for_want_of<A: Api>(
    ctx: &Ctx<A>,
    wgsl: &str,
    needs: keel_hal::naga::valid::Capabilities,
    what: &str,
) -> Result<(), Failure> {
    crate::feature_cases::refused::<A>(&ctx.device, wgsl, needs, what)
}

/// Texture shapes that need a feature: a block-compressed 3D texture
/// (`TEXTURE_COMPRESSION_BC_SLICED_3D` beside `TEXTURE_COMPRESSION_BC`) is
/// `UnsupportedFormat` without it, and a multisampled texture of several
/// layers (`MULTISAMPLE_ARRAY`) `InvalidSampleCount`; each is made with its
/// feature where advertised.
fn texture_shapes_need_their_features<A: Api>(ctx: &Ctx<A>) -> TestResult {
    use wgt::Features as F;
    let mut bc3d = crate::helpers::texture_desc(wgt::TextureFormat::Bc1RgbaUnorm, 8, 8, 4, 1);
    bc3d.dimension = wgt::TextureDimension::D3;
    bc3d.usage = wgt::TextureUsages::COPY_DST | wgt::TextureUsages::TEXTURE_BINDING;
    let mut msaa_array = crate::helpers::texture_desc(wgt::TextureFormat::Rgba8Unorm, 8, 8, 2, 1);
    msaa_array.sample_count = 4;
    msaa_array.usage = wgt::TextureUsages::RENDER_ATTACHMENT;
    let cases = [
        (
            F::TEXTURE_COMPRESSION_BC,
            F::TEXTURE_COMPRESSION_BC_SLICED_3D,
            bc3d,
        ),
        (F::empty(), F::MULTISAMPLE_ARRAY, msaa_array),
    ];
    let mut made = Vec::new();
    for (base, feature, desc) in cases {
        let Some(without) = open_with(ctx, base)? else {
            continue;
        };
        // SAFETY: live device; a texture made by mistake is destroyed.
        match unsafe { without.device.create_texture(&desc) } {
            Err(
                TextureError::UnsupportedFormat { .. } | TextureError::InvalidSampleCount { .. },
            ) => {}
            Ok(texture) => {
                // SAFETY: unused.
                unsafe { without.device.destroy_texture(texture) };
                return Err(format!("{desc:?} made without {feature:?}").into());
            }
            Err(e) => return Err(format!("without {feature:?}: {e}").into()),
        }
        let Some(with) = open_with(ctx, base | feature)? else {
            continue;
        };
        // SAFETY: live device; destroyed right away.
        unsafe {
            let texture = with.device.create_texture(&desc)?;
            with.device.destroy_texture(texture);
        }
        made.push(feature);
    }
    ctx.note(format!("made with {made:?}"));
    Ok(Outcome::Pass)
}
