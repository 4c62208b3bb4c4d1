//! Checks wgpu-core makes when objects are created that keel-hal leaves to
//! its caller (`device/resource.rs`, `binding_model.rs`, `validation.rs`):
//! buffer usages' features; texture descriptor rules and the formats'
//! guaranteed capabilities; view descriptors resolved as wgpu-core
//! resolves them, with their usage and dimension rules; layout entries,
//! per-stage binding counts and binding arrays; bind group buffer sizes
//! and views; pipeline layout immediates and group layouts; render
//! pipelines' primitive, colour-target and depth-stencil states, vertex
//! buffer layouts, the inter-stage interface (vertex inputs and outputs,
//! fragment inputs and outputs) and slot limits; and texture-sampler pairs
//! against an explicit layout. One function per rule; each returns wgpu's
//! reason, in wgpu-core's words.

use crate::binding::PipelineLayout;

/// The texture descriptor rules of wgpu-core's `create_texture` that
/// keel-hal's check does not make: a known, non-empty usage; depth-stencil
/// formats in 2D only; compressed formats and render attachments not in
/// 1D; compressed 3D textures only with the sliced-3D features; transient
/// attachments as wgpu allows them; compressed sizes in whole blocks;
/// multisampled textures as render attachments; the format's sample
/// counts and usages.
pub(crate) fn check_texture_descriptor(
    desc: &wgpu::TextureDescriptor<'_>,
    features: wgpu::Features,
) -> Result<(), String> {
    use wgpu::TextureDimension as D;
    let usage = desc.usage;
    if usage.is_empty() || wgpu::TextureUsages::from_bits(usage.bits()).is_none() {
        return Err(format!("Texture usages {usage:?} are invalid"));
    }
    let format = desc.format;
    if desc.dimension != D::D2 && format.is_depth_stencil_format() {
        return Err(format!(
            "Depth texture ({format:?}) can't be created as {:?}",
            desc.dimension
        ));
    }
    if desc.dimension == D::D1 {
        if format.is_compressed() {
            return Err(format!(
                "Compressed texture ({format:?}) can't be created as {:?}",
                desc.dimension
            ));
        }
        if usage.contains(wgpu::TextureUsages::RENDER_ATTACHMENT) {
            return Err(format!(
                "Textures with {:?} usage can't be created as {:?}",
                wgpu::TextureUsages::RENDER_ATTACHMENT,
                desc.dimension
            ));
        }
    }
    check_block_multiple(desc)?;
    if desc.dimension == D::D3 && format.is_compressed() {
        let needed = if format.is_bcn() {
            Some(wgpu::Features::TEXTURE_COMPRESSION_BC_SLICED_3D)
        } else if format.is_astc() {
            Some(wgpu::Features::TEXTURE_COMPRESSION_ASTC_SLICED_3D)
        } else {
            None
        };
        match needed {
            Some(f) if features.contains(f) => {}
            Some(f) => {
                return Err(format!(
                    "Texture format {format:?} can't be used in 3D: Features {f:?} are \
                     required but not enabled on the device"
                ))
            }
            None => {
                return Err(format!(
                    "Compressed texture ({format:?}) can't be created as {:?}",
                    desc.dimension
                ))
            }
        }
    }
    if usage.contains(wgpu::TextureUsages::TRANSIENT_ATTACHMENT)
        && (usage
            != wgpu::TextureUsages::TRANSIENT_ATTACHMENT | wgpu::TextureUsages::RENDER_ATTACHMENT
            || desc.mip_level_count != 1
            || desc.size.depth_or_array_layers != 1
            || desc.dimension != D::D2
            || !desc.view_formats.is_empty())
    {
        return Err(format!(
            "A transient attachment is one 2D layer and mip, only a render attachment, with \
             no view formats; this texture has usage {usage:?}"
        ));
    }
    check_multisampled_usage(desc)?;
    check_format_capabilities(desc, features)
}

/// The format's WebGPU-guaranteed features allow the sample count and the
/// usages (wgpu-core's `create_texture` with `describe_format_features`:
/// `InvalidMultisampledFormat`, `InvalidSampleCount`,
/// `InvalidFormatUsages`). keel-hal checks the same against the adapter's
/// own table, which allows more: wgpu asks that table only with
/// `TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES`, and so does keel-hal then.
/// Planar formats, and formats whose feature is missing, stay keel-hal's.
fn check_format_capabilities(
    desc: &wgpu::TextureDescriptor<'_>,
    features: wgpu::Features,
) -> Result<(), String> {
    use wgpu::TextureFormatFeatureFlags as F;
    let format = desc.format;
    if format.is_multi_planar_format() || !features.contains(format.required_features()) {
        return Ok(());
    }
    let Some(caps) = format_features(format, features) else {
        return Ok(());
    };
    if desc.sample_count > 1 {
        let any = F::MULTISAMPLE_X2 | F::MULTISAMPLE_X4 | F::MULTISAMPLE_X8 | F::MULTISAMPLE_X16;
        if !caps.flags.intersects(any) {
            return Err(format!("Format {format:?} does not support multisampling"));
        }
        if !caps.flags.sample_count_supported(desc.sample_count) {
            return Err(sample_count_message(format, desc.sample_count, features));
        }
    }
    let missing = desc.usage - caps.allowed_usages;
    if !missing.is_empty() {
        return Err(format!(
            "Texture usages {missing:?} are not allowed on a texture of type {format:?}"
        ));
    }
    Ok(())
}

/// Bindings of one kind, counted per shader stage.
#[derive(Default, Clone, Copy)]
struct PerStage {
    vertex: u32,
    fragment: u32,
    compute: u32,
}

impl PerStage {
    fn add(&mut self, stages: wgpu::ShaderStages, count: u32) {
        if stages.contains(wgpu::ShaderStages::VERTEX) {
            self.vertex = self.vertex.saturating_add(count);
        }
        if stages.contains(wgpu::ShaderStages::FRAGMENT) {
            self.fragment = self.fragment.saturating_add(count);
        }
        if stages.contains(wgpu::ShaderStages::COMPUTE) {
            self.compute = self.compute.saturating_add(count);
        }
    }

    fn check(&self, limit: u32, what: &str, limit_name: &str) -> Result<(), String> {
        let max = self.vertex.max(self.fragment).max(self.compute);
        if max > limit {
            return Err(format!(
                "Too many bindings of type {what} in a shader stage, limit is {limit}, count \
                 was {max}. Check the limit `{limit_name}` passed to `Adapter::request_device`"
            ));
        }
        Ok(())
    }
}

/// The binding counts of a bind group layout, or of all of a pipeline
/// layout's groups together, against the per-stage and per-layout limits
/// (wgpu-core's `BindingTypeMaxCountValidator`, checked at both
/// creations).
pub(crate) fn check_binding_counts<'a>(
    entries: impl IntoIterator<Item = &'a wgpu::BindGroupLayoutEntry>,
    limits: &wgpu::Limits,
) -> Result<(), String> {
    use wgpu::BindingType as T;
    let (mut dynamic_uniform, mut dynamic_storage) = (0u32, 0u32);
    let mut sampled = PerStage::default();
    let mut samplers = PerStage::default();
    let mut storage_buffers = PerStage::default();
    let mut storage_textures = PerStage::default();
    let mut uniform_buffers = PerStage::default();
    let mut arrays = PerStage::default();
    for e in entries {
        let count = e.count.map_or(1, |c| c.get());
        let v = e.visibility;
        if e.count.is_some() {
            arrays.add(v, count);
            continue;
        }
        match e.ty {
            T::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset,
                ..
            } => {
                uniform_buffers.add(v, count);
                if has_dynamic_offset {
                    dynamic_uniform = dynamic_uniform.saturating_add(count);
                }
            }
            T::Buffer {
                has_dynamic_offset, ..
            } => {
                storage_buffers.add(v, count);
                if has_dynamic_offset {
                    dynamic_storage = dynamic_storage.saturating_add(count);
                }
            }
            T::Sampler(_) => samplers.add(v, count),
            T::Texture { .. } => sampled.add(v, count),
            T::StorageTexture { .. } => storage_textures.add(v, count),
            T::ExternalTexture => {
                sampled.add(v, count * 4);
                samplers.add(v, count);
                uniform_buffers.add(v, count);
            }
            _ => {}
        }
    }
    if dynamic_uniform > limits.max_dynamic_uniform_buffers_per_pipeline_layout {
        return Err(format!(
            "Too many dynamic uniform buffers: {dynamic_uniform}, the limit \
             `max_dynamic_uniform_buffers_per_pipeline_layout` is {}",
            limits.max_dynamic_uniform_buffers_per_pipeline_layout
        ));
    }
    if dynamic_storage > limits.max_dynamic_storage_buffers_per_pipeline_layout {
        return Err(format!(
            "Too many dynamic storage buffers: {dynamic_storage}, the limit \
             `max_dynamic_storage_buffers_per_pipeline_layout` is {}",
            limits.max_dynamic_storage_buffers_per_pipeline_layout
        ));
    }
    sampled.check(
        limits.max_sampled_textures_per_shader_stage,
        "sampled textures",
        "max_sampled_textures_per_shader_stage",
    )?;
    samplers.check(
        limits.max_samplers_per_shader_stage,
        "samplers",
        "max_samplers_per_shader_stage",
    )?;
    storage_buffers.check(
        limits.max_storage_buffers_per_shader_stage,
        "storage buffers",
        "max_storage_buffers_per_shader_stage",
    )?;
    storage_textures.check(
        limits.max_storage_textures_per_shader_stage,
        "storage textures",
        "max_storage_textures_per_shader_stage",
    )?;
    uniform_buffers.check(
        limits.max_uniform_buffers_per_shader_stage,
        "uniform buffers",
        "max_uniform_buffers_per_shader_stage",
    )?;
    arrays.check(
        limits.max_binding_array_elements_per_shader_stage,
        "binding array elements",
        "max_binding_array_elements_per_shader_stage",
    )?;
    // The native limit wgpu-core adds unless STRICT_WEBGPU_COMPLIANCE
    // (which keel-wgpu's instances never set): uniform and storage buffers
    // together (no acceleration structures on keel-wgpu).
    let buffers = PerStage {
        vertex: uniform_buffers
            .vertex
            .saturating_add(storage_buffers.vertex),
        fragment: uniform_buffers
            .fragment
            .saturating_add(storage_buffers.fragment),
        compute: uniform_buffers
            .compute
            .saturating_add(storage_buffers.compute),
    };
    buffers.check(
        limits.max_buffers_and_acceleration_structures_per_shader_stage,
        "buffers and acceleration structures",
        "max_buffers_and_acceleration_structures_per_shader_stage",
    )
}

/// A pipeline layout's immediate data size (wgpu-core's
/// `create_pipeline_layout`): only with `IMMEDIATES`, within
/// `max_immediate_size`, a multiple of 4.
pub(crate) fn check_immediate_size(
    size: u32,
    features: wgpu::Features,
    limits: &wgpu::Limits,
) -> Result<(), String> {
    let needed = wgpu::Features::IMMEDIATES;
    if size != 0 && !features.contains(needed) {
        return Err(format!(
            "Features {needed:?} are required but not enabled on the device"
        ));
    }
    if size > limits.max_immediate_size {
        return Err(format!(
            "Immediate data size {size} is greater than the device's `max_immediate_size` \
             limit {}",
            limits.max_immediate_size
        ));
    }
    if !size.is_multiple_of(wgpu::IMMEDIATE_DATA_ALIGNMENT) {
        return Err(format!(
            "Immediate data size {size} must be aligned to {}",
            wgpu::IMMEDIATE_DATA_ALIGNMENT
        ));
    }
    Ok(())
}

/// A render pipeline's vertex buffer layouts (WebGPU's "validating
/// GPUVertexBufferLayout", wgpu-core's `create_render_pipeline`): their
/// number, strides within the limit and multiples of 4, attributes inside
/// the stride at aligned offsets, locations under the limit and each used
/// once, 64-bit formats only with their feature, the total attribute count.
pub(crate) fn check_vertex_buffers(
    buffers: &[Option<wgpu::VertexBufferLayout<'_>>],
    features: wgpu::Features,
    limits: &wgpu::Limits,
) -> Result<(), String> {
    if buffers.len() > limits.max_vertex_buffers as usize {
        return Err(format!(
            "The number of vertex buffers {} exceeds the limit {}",
            buffers.len(),
            limits.max_vertex_buffers
        ));
    }
    let mut locations = Vec::new();
    let mut total = 0usize;
    for (i, vb) in buffers.iter().enumerate() {
        let Some(vb) = vb else { continue };
        let max = u64::from(limits.max_vertex_buffer_array_stride);
        if vb.array_stride > max {
            return Err(format!(
                "Vertex buffer {i} stride {} exceeds the limit {max}",
                vb.array_stride
            ));
        }
        if !vb.array_stride.is_multiple_of(wgpu::VERTEX_ALIGNMENT) {
            return Err(format!(
                "Vertex buffer {i} stride {} must be a multiple of {}",
                vb.array_stride,
                wgpu::VERTEX_ALIGNMENT
            ));
        }
        let max_stride = if vb.array_stride == 0 {
            max
        } else {
            vb.array_stride
        };
        for a in vb.attributes {
            let end = a.offset.saturating_add(a.format.size());
            if end > max_stride {
                return Err(format!(
                    "Vertex attribute at location {} stride {end} exceeds the limit {max_stride}",
                    a.shader_location
                ));
            }
            if !a.offset.is_multiple_of(a.format.size().min(4)) || a.offset >= 0x1000_0000 {
                return Err(format!(
                    "Vertex attribute at location {} has invalid offset {}",
                    a.shader_location, a.offset
                ));
            }
            if a.shader_location >= limits.max_vertex_attributes {
                return Err(format!(
                    "Vertex attribute location {} must be less than limit {}",
                    a.shader_location, limits.max_vertex_attributes
                ));
            }
            let wide = matches!(
                a.format,
                wgpu::VertexFormat::Float64
                    | wgpu::VertexFormat::Float64x2
                    | wgpu::VertexFormat::Float64x3
                    | wgpu::VertexFormat::Float64x4
            );
            let needed = wgpu::Features::VERTEX_ATTRIBUTE_64BIT;
            if wide && !features.contains(needed) {
                return Err(format!(
                    "Features {needed:?} are required but not enabled on the device"
                ));
            }
            if locations.contains(&a.shader_location) {
                return Err(format!(
                    "Shader location {} is used by more than one vertex attribute",
                    a.shader_location
                ));
            }
            locations.push(a.shader_location);
        }
        total += vb.attributes.len();
    }
    if total > limits.max_vertex_attributes as usize {
        return Err(format!(
            "The number of vertex attributes {total} exceeds the limit {}",
            limits.max_vertex_attributes
        ));
    }
    Ok(())
}

/// The `@location` bindings of an entry point's arguments (`inputs`) or
/// result, with each one's scalar kind, width and vector size (1 for a
/// scalar).
fn locations(
    module: &naga::Module,
    ep: &naga::EntryPoint,
    inputs: bool,
) -> Vec<(u32, naga::ScalarKind, u8, u8)> {
    let mut found = Vec::new();
    let mut visit = |binding: Option<&naga::Binding>, ty: naga::Handle<naga::Type>| {
        let mut one = |binding: Option<&naga::Binding>, ty: naga::Handle<naga::Type>| {
            let Some(naga::Binding::Location { location, .. }) = binding else {
                return;
            };
            let (scalar, size) = match module.types[ty].inner {
                naga::TypeInner::Scalar(s) => (s, 1),
                naga::TypeInner::Vector { size, scalar } => (scalar, size as u8),
                _ => return,
            };
            found.push((*location, scalar.kind, scalar.width, size));
        };
        match &module.types[ty].inner {
            naga::TypeInner::Struct { members, .. } if binding.is_none() => {
                for m in members {
                    one(m.binding.as_ref(), m.ty);
                }
            }
            _ => one(binding, ty),
        }
    };
    if inputs {
        for arg in &ep.function.arguments {
            visit(arg.binding.as_ref(), arg.ty);
        }
    } else if let Some(result) = &ep.function.result {
        visit(result.binding.as_ref(), result.ty);
    }
    found
}

/// The numeric class a vertex format reads as in a shader (wgpu-core's
/// `NumericType::from_vertex_format`).
fn vertex_format_kind(format: wgpu::VertexFormat) -> naga::ScalarKind {
    use wgpu::VertexFormat as F;
    match format {
        F::Uint8
        | F::Uint8x2
        | F::Uint8x4
        | F::Uint16
        | F::Uint16x2
        | F::Uint16x4
        | F::Uint32
        | F::Uint32x2
        | F::Uint32x3
        | F::Uint32x4 => naga::ScalarKind::Uint,
        F::Sint8
        | F::Sint8x2
        | F::Sint8x4
        | F::Sint16
        | F::Sint16x2
        | F::Sint16x4
        | F::Sint32
        | F::Sint32x2
        | F::Sint32x3
        | F::Sint32x4 => naga::ScalarKind::Sint,
        _ => naga::ScalarKind::Float,
    }
}

/// Every `@location` input of the vertex entry point is given by a vertex
/// attribute of the same scalar kind (wgpu-core's `check_stage`:
/// `InputError::Missing`, `InputError::WrongType`).
pub(crate) fn check_vertex_inputs(
    module: &naga::Module,
    entry_point: usize,
    buffers: &[Option<wgpu::VertexBufferLayout<'_>>],
) -> Result<(), String> {
    let Some(ep) = module.entry_points.get(entry_point) else {
        return Ok(());
    };
    for (location, kind, _, _) in locations(module, ep, true) {
        let attribute = buffers
            .iter()
            .flatten()
            .flat_map(|b| b.attributes.iter())
            .find(|a| a.shader_location == location);
        match attribute {
            None => {
                return Err(format!(
                    "Error matching the vertex shader's input at location {location}: the \
                     pipeline's vertex buffers provide no attribute there"
                ))
            }
            Some(a) if vertex_format_kind(a.format) != kind => {
                return Err(format!(
                    "Error matching the vertex shader's input at location {location}: the \
                     shader reads {kind:?} values, the attribute's format {:?} provides {:?}",
                    a.format,
                    vertex_format_kind(a.format)
                ))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Every fragment output that has a colour target is one the target's
/// format can take (wgpu-core's `check_texture_format`: the format's
/// numeric type a subtype of the output's, same scalar kind, no wider, no
/// more components).
pub(crate) fn check_fragment_outputs(
    module: &naga::Module,
    entry_point: usize,
    targets: &[Option<wgpu::ColorTargetState>],
) -> Result<(), String> {
    let Some(ep) = module.entry_points.get(entry_point) else {
        return Ok(());
    };
    for (location, kind, width, size) in locations(module, ep, false) {
        let Some(Some(target)) = targets.get(location as usize) else {
            continue;
        };
        let format = target.format;
        let format_kind = match format.sample_type(None, None) {
            Some(wgpu::TextureSampleType::Sint) => naga::ScalarKind::Sint,
            Some(wgpu::TextureSampleType::Uint) => naga::ScalarKind::Uint,
            _ => naga::ScalarKind::Float,
        };
        let format_width = if format == wgpu::TextureFormat::R64Uint {
            8
        } else {
            4
        };
        let components = format.components();
        let fits = format_kind == kind
            && format_width <= width
            && (components == 1 || (size > 1 && components <= size));
        if !fits {
            return Err(format!(
                "Incompatible color state at index {location}: the format {format:?} is \
                 incompatible with the shader's output type ({kind:?}, {size} component(s))"
            ));
        }
    }
    Ok(())
}

/// Each texture a stage samples with a filtering sampler is filterable in
/// the explicit layout (wgpu-core's `check_stage`: `FilteringError`).
pub(crate) fn check_sampling(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    entry_point: usize,
    layout: &PipelineLayout,
) -> Result<(), String> {
    if entry_point >= module.entry_points.len() {
        return Ok(());
    }
    let entry = |var: naga::Handle<naga::GlobalVariable>| {
        let binding = module.global_variables[var].binding.as_ref()?;
        let group = layout.groups.get(binding.group as usize)?;
        group.entry(binding.binding).map(|e| (*binding, e.ty))
    };
    for key in &info.get_entry_point(entry_point).sampling_set {
        let (Some((texture, texture_ty)), Some((sampler, sampler_ty))) =
            (entry(key.image), entry(key.sampler))
        else {
            continue;
        };
        let filtering = matches!(
            sampler_ty,
            wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering)
        );
        let sample_type = match texture_ty {
            wgpu::BindingType::Texture { sample_type, .. } => sample_type,
            _ => continue,
        };
        let error = match sample_type {
            wgpu::TextureSampleType::Float { filterable: false } => {
                "Non-filterable float textures can't be sampled with a filtering sampler"
            }
            wgpu::TextureSampleType::Sint | wgpu::TextureSampleType::Uint => {
                "Integer textures can't be sampled with a filtering sampler"
            }
            _ => continue,
        };
        if filtering {
            return Err(format!(
                "Unable to filter the texture ({texture:?}) by the sampler ({sampler:?}): {error}"
            ));
        }
    }
    Ok(())
}

/// `BLAS_INPUT` and `TLAS_INPUT` usages need `EXPERIMENTAL_RAY_QUERY`
/// (wgpu-core's `create_buffer`: `CreateBufferError::MissingFeatures`).
pub(crate) fn check_buffer_features(
    usage: wgpu::BufferUsages,
    features: wgpu::Features,
) -> Result<(), String> {
    let needed = wgpu::Features::EXPERIMENTAL_RAY_QUERY;
    if usage.intersects(wgpu::BufferUsages::BLAS_INPUT | wgpu::BufferUsages::TLAS_INPUT)
        && !features.contains(needed)
    {
        return Err(missing_features(needed));
    }
    Ok(())
}

/// wgpu-core's `MissingFeatures` words.
pub(crate) fn missing_features(needed: wgpu::Features) -> String {
    format!("Features {needed:?} are required but not enabled on the device")
}

/// A compressed texture's width and height are whole blocks (wgpu-core's
/// `create_texture`: `TextureDimensionError::NotMultipleOfBlockWidth` and
/// `NotMultipleOfBlockHeight`).
fn check_block_multiple(desc: &wgpu::TextureDescriptor<'_>) -> Result<(), String> {
    let format = desc.format;
    if !format.is_compressed() {
        return Ok(());
    }
    let (block_width, block_height) = format.block_dimensions();
    let (width, height) = (desc.size.width, desc.size.height);
    if !width.is_multiple_of(block_width) {
        return Err(format!(
            "Width {width} is not a multiple of {format:?}'s block width ({block_width})"
        ));
    }
    if !height.is_multiple_of(block_height) {
        return Err(format!(
            "Height {height} is not a multiple of {format:?}'s block height ({block_height})"
        ));
    }
    Ok(())
}

/// A multisampled texture is a render attachment (wgpu-core's
/// `create_texture`: `CreateTextureError::MultisampledNotRenderAttachment`).
fn check_multisampled_usage(desc: &wgpu::TextureDescriptor<'_>) -> Result<(), String> {
    if desc.sample_count > 1 && !desc.usage.contains(wgpu::TextureUsages::RENDER_ATTACHMENT) {
        return Err("Multisampled textures must have RENDER_ATTACHMENT usage".into());
    }
    Ok(())
}

/// What a view descriptor resolves to (wgpu-core's `create_texture_view`
/// defaults): format, dimension, mip and layer counts, usage.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ResolvedView {
    pub format: wgpu::TextureFormat,
    pub dimension: wgpu::TextureViewDimension,
    pub mip_level_count: u32,
    pub array_layer_count: u32,
    pub usage: wgpu::TextureUsages,
}

/// Resolves a view descriptor's defaults as wgpu-core does: the format of
/// the aspect, a dimension from the texture's, mips to the end, one layer
/// for 1D/2D/3D views, six for a cube, the rest for arrays, the texture's
/// usage. The usage is checked (wgpu-core's `InvalidTextureViewUsage`,
/// `InvalidTransientTextureViewUsage`).
pub(crate) fn resolve_view(
    texture: &crate::resource::Texture,
    desc: &wgpu::TextureViewDescriptor<'_>,
) -> Result<ResolvedView, String> {
    use wgpu::TextureViewDimension as V;
    let format = desc.format.unwrap_or_else(|| {
        texture
            .format
            .aspect_specific_format(desc.aspect)
            .unwrap_or(texture.format)
    });
    let dimension = desc.dimension.unwrap_or(match texture.dimension {
        wgpu::TextureDimension::D1 => V::D1,
        wgpu::TextureDimension::D2 if texture.layers() == 1 => V::D2,
        wgpu::TextureDimension::D2 => V::D2Array,
        wgpu::TextureDimension::D3 => V::D3,
    });
    let mip_level_count = desc
        .mip_level_count
        .unwrap_or_else(|| texture.mip_level_count.saturating_sub(desc.base_mip_level));
    let array_layer_count = desc.array_layer_count.unwrap_or(match dimension {
        V::D1 | V::D2 | V::D3 => 1,
        V::Cube => 6,
        V::D2Array | V::CubeArray => texture.layers().saturating_sub(desc.base_array_layer),
    });
    let asked = desc.usage.unwrap_or(wgpu::TextureUsages::empty());
    let usage = if asked.is_empty() {
        texture.usage
    } else if texture.usage.contains(asked) {
        if texture
            .usage
            .contains(wgpu::TextureUsages::TRANSIENT_ATTACHMENT)
            && texture.usage != asked
        {
            return Err(format!(
                "The texture view (`{asked:?}`) from transient texture (`{:?}`) must have the \
                 same usage",
                texture.usage
            ));
        }
        asked
    } else {
        return Err(format!(
            "Texture view usages (`{asked:?}`) must be a subset of the texture's original \
             usages (`{:?}`)",
            texture.usage
        ));
    };
    Ok(ResolvedView {
        format,
        dimension,
        mip_level_count,
        array_layer_count,
        usage,
    })
}

/// A multisampled texture is viewed in 2D only, or as a 2D array with
/// `MULTISAMPLE_ARRAY` (wgpu-core's `create_texture_view`:
/// `InvalidMultisampledTextureViewDimension`).
pub(crate) fn check_multisampled_view(
    sample_count: u32,
    dimension: wgpu::TextureViewDimension,
    features: wgpu::Features,
) -> Result<(), String> {
    use wgpu::TextureViewDimension as V;
    if sample_count > 1
        && dimension != V::D2
        && !(dimension == V::D2Array && features.contains(wgpu::Features::MULTISAMPLE_ARRAY))
    {
        return Err(format!(
            "Texture view dimension `{dimension:?}` cannot be used with a multisampled texture"
        ));
    }
    Ok(())
}

/// Each layout entry's own rules keel-hal does not make (wgpu-core's
/// `create_bind_group_layout`): atomic storage textures need
/// `TEXTURE_ATOMIC` (`BindGroupLayoutEntryError::StorageTextureAtomic`);
/// visibility has no unknown bits (`InvalidVisibility`).
pub(crate) fn check_layout_entries(
    entries: &[wgpu::BindGroupLayoutEntry],
    features: wgpu::Features,
) -> Result<(), String> {
    for e in entries {
        if let wgpu::BindingType::StorageTexture {
            access: wgpu::StorageTextureAccess::Atomic,
            ..
        } = e.ty
        {
            if !features.contains(wgpu::Features::TEXTURE_ATOMIC) {
                return Err(format!(
                    "Binding {} entry is invalid: Atomic storage textures are not allowed by \
                     baseline webgpu, they require the native only feature \
                     TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES",
                    e.binding
                ));
            }
        }
        if wgpu::ShaderStages::from_bits(e.visibility.bits()).is_none() {
            return Err(format!("Invalid visibility {:?}", e.visibility));
        }
    }
    Ok(())
}

/// A layout with a binding array has no dynamic-offset buffer and no
/// uniform buffer (wgpu-core's `validate_binding_arrays`:
/// `ContainsBothBindingArrayAndDynamicOffsetArray`,
/// `ContainsBothBindingArrayAndUniformBuffer`).
pub(crate) fn check_binding_arrays(entries: &[wgpu::BindGroupLayoutEntry]) -> Result<(), String> {
    if !entries.iter().any(|e| e.count.is_some()) {
        return Ok(());
    }
    let single = || entries.iter().filter(|e| e.count.is_none());
    let dynamic = single().any(|e| {
        matches!(
            e.ty,
            wgpu::BindingType::Buffer {
                has_dynamic_offset: true,
                ..
            }
        )
    });
    if dynamic {
        return Err(
            "Bind groups may not contain both a binding array and a dynamically offset buffer"
                .into(),
        );
    }
    // wgpu counts uniform buffers in any stage (its per-stage maximum).
    let uniform = single().any(|e| {
        e.visibility
            .intersects(wgpu::ShaderStages::VERTEX_FRAGMENT | wgpu::ShaderStages::COMPUTE)
            && matches!(
                e.ty,
                wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    ..
                }
            )
    });
    if uniform {
        return Err("Bind groups may not contain both a binding array and a uniform buffer".into());
    }
    Ok(())
}

/// The vertex-stage buffers (uniform and storage, outside binding arrays)
/// of a layout's groups (wgpu-core's
/// `buffers_and_acceleration_structures_in_vertex_stage`).
fn vertex_stage_buffers(layout: &PipelineLayout) -> u32 {
    let mut count = 0u32;
    for e in layout.groups.iter().flat_map(|g| g.entries.iter()) {
        if e.count.is_none()
            && e.visibility.contains(wgpu::ShaderStages::VERTEX)
            && matches!(e.ty, wgpu::BindingType::Buffer { .. })
        {
            count = count.saturating_add(1);
        }
    }
    count
}

/// No group layout of a pipeline layout is one taken from a pipeline with
/// a derived layout (wgpu-core's `create_pipeline_layout`:
/// `BglHasExclusivePipeline`).
pub(crate) fn check_exclusive_groups(
    groups: &[std::sync::Arc<crate::binding::BindGroupLayout>],
) -> Result<(), String> {
    if let Some(index) = groups.iter().position(|g| g.exclusive.is_some()) {
        return Err(format!(
            "Bind group layout at index {index} has an exclusive pipeline: a pipeline whose \
             layout was derived (`layout: None`)"
        ));
    }
    Ok(())
}

/// A storage buffer binding's size is a multiple of 4 (wgpu-core's
/// `create_buffer_binding`:
/// `UnalignedEffectiveBufferBindingSizeForStorage`).
pub(crate) fn check_storage_binding_size(
    ty: &wgpu::BindingType,
    bind_size: u64,
) -> Result<(), String> {
    let storage = matches!(
        ty,
        wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { .. },
            ..
        }
    );
    let alignment = u64::from(wgpu::wgt::STORAGE_BINDING_SIZE_ALIGNMENT);
    if storage && !bind_size.is_multiple_of(alignment) {
        return Err(format!(
            "Effective buffer binding size {bind_size} for storage buffers is expected to align \
             to {alignment}, but size is {bind_size}"
        ));
    }
    Ok(())
}

/// A view bound to a texture or storage-texture binding: its own usage
/// has the binding's (wgpu-core's `view.check_usage`:
/// `MissingTextureUsage`), and a storage view covers one mip level
/// (`InvalidStorageTextureMipLevelCount`).
pub(crate) fn check_bound_view(
    binding: u32,
    ty: &wgpu::BindingType,
    view: &crate::resource::TextureView,
) -> Result<(), String> {
    let needed = match ty {
        wgpu::BindingType::StorageTexture { .. } => {
            let mip_level_count = view.mips.len();
            if mip_level_count != 1 {
                return Err(format!(
                    "Storage texture bindings must have a single mip level, but given a view \
                     with mip_level_count = {mip_level_count:?} at binding {binding}"
                ));
            }
            wgpu::TextureUsages::STORAGE_BINDING
        }
        wgpu::BindingType::Texture { .. } => wgpu::TextureUsages::TEXTURE_BINDING,
        _ => return Ok(()),
    };
    if !view.usage.contains(needed) {
        return Err(crate::pass_check::missing_usage(
            format!("TextureView of {}", view.texture.ident()),
            view.usage,
            needed,
        ));
    }
    Ok(())
}

/// The format features wgpu-core checks pipelines and attachments
/// against: the WebGPU guarantees for the format on this device
/// (`describe_format_features` without
/// `TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES`). With that feature wgpu asks
/// the adapter, whose table keel-wgpu's device state does not hold: `None`,
/// and the checks that need it are left to keel-hal.
pub(crate) fn format_features(
    format: wgpu::TextureFormat,
    features: wgpu::Features,
) -> Option<wgpu::TextureFormatFeatures> {
    if features.contains(wgpu::Features::TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES) {
        return None;
    }
    Some(format.guaranteed_format_features(features))
}

/// `format` supports `samples` (wgpu-core's `sample_count_supported`), as
/// far as keel-wgpu knows the format's features ([`format_features`]).
fn samples_supported(format: wgpu::TextureFormat, samples: u32, features: wgpu::Features) -> bool {
    samples <= 1
        || format_features(format, features).is_none_or(|f| f.flags.sample_count_supported(samples))
}

/// wgpu-core's words for a sample count the format does not support.
fn sample_count_message(
    format: wgpu::TextureFormat,
    samples: u32,
    features: wgpu::Features,
) -> String {
    let guaranteed = format
        .guaranteed_format_features(features)
        .flags
        .supported_sample_counts();
    format!(
        "Sample count {samples} is not supported by format {format:?} on this device. The \
         WebGPU spec guarantees {guaranteed:?} samples are supported by this format."
    )
}

/// The primitive state's own rules (wgpu-core's `create_render_pipeline`):
/// a strip index format only with a strip topology
/// (`StripIndexFormatForNonStripTopology`), conservative rasterization
/// only with `PolygonMode::Fill`
/// (`ConservativeRasterizationNonFillPolygonMode`).
pub(crate) fn check_primitive(primitive: &wgpu::PrimitiveState) -> Result<(), String> {
    if primitive.strip_index_format.is_some() && !primitive.topology.is_strip() {
        return Err(format!(
            "Strip index format was not set to None but to {:?} while using the non-strip \
             topology {:?}",
            primitive.strip_index_format, primitive.topology
        ));
    }
    if primitive.conservative && primitive.polygon_mode != wgpu::PolygonMode::Fill {
        return Err(
            "Conservative Rasterization is only supported for wgt::PolygonMode::Fill".into(),
        );
    }
    Ok(())
}

/// The colour targets' rules keel-hal does not make (wgpu-core's
/// `create_render_pipeline`, `ColorStateError`): a write mask without
/// unknown bits (`InvalidWriteMask`), a format that supports the sample
/// count (`InvalidSampleCount`), second-source blend factors only on
/// target 0 (`BlendFactorOnUnsupportedTarget`), factor `One` with min/max
/// operations (`InvalidMinMaxBlendFactor`); then dual-source blending with
/// exactly one target (`DualSourceBlendingWithMultipleColorTargets`).
/// Returns whether the pipeline blends with two sources.
pub(crate) fn check_color_targets(
    targets: &[Option<wgpu::ColorTargetState>],
    samples: u32,
    features: wgpu::Features,
) -> Result<bool, String> {
    let mut dual_source = false;
    for (i, target) in targets.iter().enumerate() {
        let Some(cs) = target else { continue };
        let error = (|| {
            if wgpu::ColorWrites::from_bits(cs.write_mask.bits()).is_none() {
                return Err(format!("Invalid write mask {:?}", cs.write_mask));
            }
            if !samples_supported(cs.format, samples, features) {
                return Err(sample_count_message(cs.format, samples, features));
            }
            let Some(blend) = cs.blend else {
                return Ok(());
            };
            for component in [&blend.color, &blend.alpha] {
                for factor in [component.src_factor, component.dst_factor] {
                    if factor.ref_second_blend_source() {
                        if i == 0 {
                            dual_source = true;
                        } else {
                            return Err(format!(
                                "Using the blend factor {factor:?} for render target {i} is \
                                 not possible. Only the first render target may be used when \
                                 dual-source blending."
                            ));
                        }
                    }
                    if matches!(
                        component.operation,
                        wgpu::BlendOperation::Min | wgpu::BlendOperation::Max
                    ) && factor != wgpu::BlendFactor::One
                    {
                        return Err(format!(
                            "Blend factor {factor:?} for render target {i} is not valid. Blend \
                             factor must be `one` when using min/max blend operations."
                        ));
                    }
                }
            }
            Ok(())
        })();
        if let Err(e) = error {
            return Err(format!("Color state [{i}] is invalid: {e}"));
        }
    }
    if dual_source && targets.len() > 1 {
        return Err(format!(
            "Dual-source blending requires exactly one color target, but {} color targets are \
             present",
            targets.len()
        ));
    }
    Ok(dual_source)
}

/// The depth-stencil state's rules keel-hal does not make (wgpu-core's
/// `create_render_pipeline`, `DepthStencilStateError`): depth test or
/// write only with a depth aspect (`FormatNotDepth`); for depth formats,
/// `depth_write_enabled` given (`MissingDepthWriteEnabled`) and
/// `depth_compare` given where writes or depth-fail operations need it
/// (`MissingDepthCompare`); stencil only with a stencil aspect
/// (`FormatNotStencil`); a format that supports the sample count
/// (`InvalidSampleCount`); depth bias only with triangles
/// (`DepthBiasWithIncompatibleTopology`). Returns whether the format has a
/// depth aspect.
pub(crate) fn check_depth_stencil(
    ds: &wgpu::DepthStencilState,
    samples: u32,
    topology: wgpu::PrimitiveTopology,
    features: wgpu::Features,
) -> Result<bool, String> {
    let format = ds.format;
    let error = (|| {
        if !format.is_depth_stencil_format() {
            // keel-hal's check words this one (FormatNotDepthOrStencil).
            return Ok(false);
        }
        let has_depth = format.has_depth_aspect();
        if !has_depth && ds.is_depth_enabled() {
            return Err(format!(
                "Format {format:?} does not have a depth aspect, but depth test/write is enabled"
            ));
        }
        if has_depth {
            let Some(write) = ds.depth_write_enabled else {
                return Err(format!(
                    "Depth write enabled must be specified for depth format {format:?}"
                ));
            };
            let keep = wgpu::StencilOperation::Keep;
            let compare_needed = write
                || ds.stencil.front.depth_fail_op != keep
                || ds.stencil.back.depth_fail_op != keep;
            if compare_needed && ds.depth_compare.is_none() {
                return Err(format!(
                    "Depth compare function must be specified for depth format {format:?}"
                ));
            }
        }
        if ds.stencil.is_enabled() && !format.has_stencil_aspect() {
            return Err(format!(
                "Format {format:?} does not have a stencil aspect, but stencil test/write is \
                 enabled"
            ));
        }
        if !samples_supported(format, samples, features) {
            return Err(sample_count_message(format, samples, features));
        }
        Ok(has_depth)
    })();
    let has_depth = error.map_err(|e| format!("Depth/stencil state is invalid: {e}"))?;
    if (ds.bias.is_enabled() || ds.bias.clamp != 0.0) && !topology.is_triangles() {
        return Err(format!(
            "Depth/stencil state is invalid: Depth bias is not compatible with non-triangle \
             topology {topology:?}"
        ));
    }
    Ok(has_depth)
}

/// The numeric shape of an inter-stage value (wgpu-core's `NumericType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Scalar,
    Vector(u8),
    Matrix(u8, u8),
}

/// One `@location` value an entry point reads or writes.
#[derive(Clone, Copy, Debug)]
struct Local {
    location: u32,
    scalar: naga::Scalar,
    shape: Shape,
    interpolation: Option<naga::Interpolation>,
    sampling: Option<naga::Sampling>,
    /// `@per_primitive` (a mesh stage's primitive outputs, the fragment
    /// inputs that read them).
    per_primitive: bool,
}

impl Local {
    /// wgpu-core's `NumericType::is_subtype_of`.
    fn is_subtype_of(&self, other: &Local) -> bool {
        if self.scalar.width > other.scalar.width || self.scalar.kind != other.scalar.kind {
            return false;
        }
        match (self.shape, other.shape) {
            (Shape::Scalar, Shape::Scalar | Shape::Vector(_)) => true,
            (Shape::Vector(a), Shape::Vector(b)) => a <= b,
            (Shape::Matrix(c0, r0), Shape::Matrix(c1, r1)) => c0 == c1 && r0 == r1,
            _ => false,
        }
    }

    /// How wgpu-core prints the value (`InterfaceVar`'s `Display`).
    fn describe(&self) -> String {
        let dim = match self.shape {
            Shape::Scalar => String::new(),
            Shape::Vector(n) => format!("x{n}"),
            Shape::Matrix(c, r) => format!("x{c}{r}"),
        };
        format!(
            "{:?}{}{dim} interpolated as {:?} with sampling {:?}",
            self.scalar.kind,
            self.scalar.width * 8,
            self.interpolation,
            self.sampling
        )
    }
}

/// An entry point's inter-stage interface, as wgpu-core's
/// `Interface::populate` reads it: `@location` values (scalars, vectors,
/// matrices, struct members) and built-ins (with a `clip_distances`
/// array's size); other types are skipped.
#[derive(Debug, Default)]
struct Varyings {
    locals: Vec<Local>,
    built_ins: Vec<(naga::BuiltIn, u32)>,
}

impl Varyings {
    fn populate(
        &mut self,
        module: &naga::Module,
        binding: Option<&naga::Binding>,
        ty: naga::Handle<naga::Type>,
    ) {
        let (scalar, shape) = match module.types[ty].inner {
            naga::TypeInner::Scalar(s) => (s, Shape::Scalar),
            naga::TypeInner::Vector { size, scalar } => (scalar, Shape::Vector(size as u8)),
            naga::TypeInner::Matrix {
                columns,
                rows,
                scalar,
            } => (scalar, Shape::Matrix(columns as u8, rows as u8)),
            naga::TypeInner::Struct { ref members, .. } => {
                for m in members {
                    self.populate(module, m.binding.as_ref(), m.ty);
                }
                return;
            }
            naga::TypeInner::Array { size, .. }
                if matches!(
                    binding,
                    Some(naga::Binding::BuiltIn(naga::BuiltIn::ClipDistances))
                ) =>
            {
                let n = match size {
                    naga::ArraySize::Constant(n) => n.get(),
                    _ => 0,
                };
                self.built_ins.push((naga::BuiltIn::ClipDistances, n));
                return;
            }
            _ => return,
        };
        match binding {
            Some(&naga::Binding::Location {
                location,
                interpolation,
                sampling,
                per_primitive,
                ..
            }) => self.locals.push(Local {
                location,
                scalar,
                shape,
                interpolation,
                sampling,
                per_primitive,
            }),
            Some(&naga::Binding::BuiltIn(b)) => self.built_ins.push((b, 0)),
            None => {}
        }
    }

    fn of(module: &naga::Module, entry_point: usize, inputs: bool) -> Self {
        let mut v = Self::default();
        let Some(ep) = module.entry_points.get(entry_point) else {
            return v;
        };
        if inputs {
            for arg in &ep.function.arguments {
                v.populate(module, arg.binding.as_ref(), arg.ty);
            }
        } else if let Some(mesh) = &ep.mesh_info {
            // A mesh stage writes its vertices and primitives through
            // `setVertex` / `setPrimitive`, not a result.
            v.populate(module, None, mesh.vertex_output_type);
            v.populate(module, None, mesh.primitive_output_type);
        } else if let Some(result) = &ep.function.result {
            v.populate(module, result.binding.as_ref(), result.ty);
        }
        v
    }
}

/// What a render pipeline's fragment stage is checked against.
pub(crate) struct FragmentContext {
    pub topology: wgpu::PrimitiveTopology,
    /// Target 0 blends with two sources.
    pub dual_source_blending: bool,
    /// The depth-stencil format has a depth aspect.
    pub has_depth_attachment: bool,
}

/// The vertex stage's outputs within `max_inter_stage_shader_variables`
/// (wgpu-core's `check_stage`: `VertexOutputLocationTooLarge`,
/// `TooManyUserDefinedVertexOutputs`, with its deductions for point lists
/// and `clip_distances`).
pub(crate) fn check_vertex_outputs(
    module: &naga::Module,
    entry_point: usize,
    topology: wgpu::PrimitiveTopology,
    limits: &wgpu::Limits,
) -> Result<(), String> {
    let outputs = Varyings::of(module, entry_point, false);
    let limit = limits.max_inter_stage_shader_variables;
    let mut max_variables = limit;
    let mut max_location = limit.saturating_sub(1);
    if topology == wgpu::PrimitiveTopology::PointList {
        max_variables = max_variables.saturating_sub(1);
    }
    for &(b, size) in &outputs.built_ins {
        if b == naga::BuiltIn::ClipDistances {
            let deduction = size.div_ceil(4);
            max_variables = max_variables.saturating_sub(deduction);
            max_location = max_location.saturating_sub(deduction);
        }
    }
    let stage = "Error matching ShaderStages(VERTEX) shader requirements against the pipeline";
    for v in &outputs.locals {
        if v.location > max_location {
            return Err(format!(
                "{stage}: vertex shader output location Location[{}] ({}) exceeds the \
                 `max_inter_stage_shader_variables` limit ({}, 0-based)",
                v.location,
                v.describe(),
                limit.saturating_sub(1)
            ));
        }
    }
    let found = outputs.locals.len() as u32;
    if found > max_variables {
        return Err(format!(
            "{stage}: found {found} user-defined vertex shader output variables, which exceeds \
             the `max_inter_stage_shader_variables` limit ({limit})"
        ));
    }
    Ok(())
}

/// Bytes of an entry point's task payload, if it has one.
fn task_payload_size(module: &naga::Module, entry_point: usize) -> Option<u32> {
    let ep = module.entry_points.get(entry_point)?;
    let var = &module.global_variables[ep.task_payload?];
    Some(module.types[var.ty].inner.size(module.to_ctx()))
}

/// A mesh pipeline's task and mesh stages against the device and the
/// pipeline (wgpu-core's `check_stage` for them, in its order): the task
/// payload within `max_task_payload_size` (`TaskPayloadTooLarge`); the mesh
/// stage's output counts within `max_mesh_output_vertices` /
/// `max_mesh_output_primitives` (`TooManyMeshVertices` /
/// `TooManyMeshPrimitives`), its topology the pipeline's
/// (`MeshTopologyMismatch`), its payload the task stage's
/// (`TaskPayloadMustMatch`), and no draw index read behind a task stage
/// (`DrawIdError`). Workgroup sizes are keel-hal's check.
pub(crate) fn check_mesh_stages(
    task: Option<(&naga::Module, usize)>,
    mesh: (&naga::Module, usize),
    topology: wgpu::PrimitiveTopology,
    limits: &wgpu::Limits,
) -> Result<(), String> {
    let prefix = |stage: &str| {
        format!("Error matching ShaderStages({stage}) shader requirements against the pipeline")
    };
    let payload_limit = limits.max_task_payload_size;
    let too_large = |stage: &str, value: u32| {
        format!(
            "{}: Mesh or task shaders are limited to {payload_limit} bytes of task payload by \
             `Limits::max_task_payload_size`, but the shader has a task payload of size {value}",
            prefix(stage)
        )
    };
    let task_payload = task.and_then(|(m, ep)| task_payload_size(m, ep));
    if let Some(size) = task_payload.filter(|&n| n > payload_limit) {
        return Err(too_large("TASK", size));
    }
    let (module, entry_point) = mesh;
    let Some(ep) = module.entry_points.get(entry_point) else {
        return Ok(());
    };
    let stage = prefix("MESH");
    if let Some(info) = &ep.mesh_info {
        if info.max_vertices > limits.max_mesh_output_vertices {
            return Err(format!(
                "{stage}: Mesh shaders are limited to {} output vertices by \
                 `Limits::max_mesh_output_vertices`, but the shader has a maximum number of {}",
                limits.max_mesh_output_vertices, info.max_vertices
            ));
        }
        if info.max_primitives > limits.max_mesh_output_primitives {
            return Err(format!(
                "{stage}: Mesh shaders are limited to {} output primitives by \
                 `Limits::max_mesh_output_primitives`, but the shader has a maximum number of {}",
                limits.max_mesh_output_primitives, info.max_primitives
            ));
        }
        let declared = match info.topology {
            naga::MeshOutputTopology::Triangles => wgpu::PrimitiveTopology::TriangleList,
            naga::MeshOutputTopology::Lines => wgpu::PrimitiveTopology::LineList,
            naga::MeshOutputTopology::Points => wgpu::PrimitiveTopology::PointList,
        };
        if topology != declared {
            return Err(format!(
                "{stage}: Mesh shader pipelines must have primitive topology of TriangleList, \
                 LineList or PointList, and this must match with what the mesh shader declares."
            ));
        }
    }
    let mesh_payload = task_payload_size(module, entry_point);
    if let Some(size) = mesh_payload.filter(|&n| n > payload_limit) {
        return Err(too_large("MESH", size));
    }
    if mesh_payload != task_payload {
        return Err(format!(
            "{stage}: Mesh shader's task payload has size ({mesh_payload:?}), which doesn't \
             match the payload declared in the task stage ({task_payload:?})"
        ));
    }
    let inputs = Varyings::of(module, entry_point, true);
    if task.is_some()
        && inputs
            .built_ins
            .iter()
            .any(|(b, _)| *b == naga::BuiltIn::DrawIndex)
    {
        return Err(format!(
            "{stage}: DrawId cannot be used in a mesh shader in a pipeline with a task shader"
        ));
    }
    Ok(())
}

/// The fragment stage against the vertex stage and the pipeline
/// (wgpu-core's `check_stage` for the fragment stage): each `@location`
/// input written by the vertex stage with the same interpolation and
/// sampling and a type it can take (`InputError::Missing`,
/// `InterpolationMismatch`, `SamplingMismatch`, `WrongType`); inputs
/// within `max_inter_stage_shader_variables`
/// (`FragmentInputLocationTooLarge`, `TooManyUserDefinedFragmentInputs`);
/// outputs below `max_color_attachments`
/// (`ColorAttachmentLocationTooLarge`); `@blend_src` outputs where the
/// pipeline blends with two sources (`InvalidDualSourceBlending`); a depth
/// attachment for a shader writing depth (`MissingFragDepthAttachment`);
/// per-vertex inputs only with triangles (`PerVertexNotTriangles`).
pub(crate) fn check_fragment_stage(
    vertex: Option<(&naga::Module, usize)>,
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    entry_point: usize,
    ctx: &FragmentContext,
    limits: &wgpu::Limits,
) -> Result<(), String> {
    if entry_point >= module.entry_points.len() {
        return Ok(());
    }
    let stage = "Error matching ShaderStages(FRAGMENT) shader requirements against the pipeline";
    let inputs = Varyings::of(module, entry_point, true);
    let provided = vertex.map(|(m, ep)| Varyings::of(m, ep, false));
    let mut per_vertex = false;
    for input in &inputs.locals {
        let location = input.location;
        let found = provided
            .as_ref()
            .and_then(|p| p.locals.iter().find(|o| o.location == location));
        let error = match found {
            None => Some("Input is not provided by the earlier stage in the pipeline".to_string()),
            Some(out) if input.interpolation != out.interpolation => Some(format!(
                "Input interpolation doesn't match provided {:?}",
                out.interpolation
            )),
            Some(out) if input.sampling != out.sampling => Some(format!(
                "Input sampling doesn't match provided {:?}",
                out.sampling
            )),
            Some(out) if !input.is_subtype_of(out) => Some(format!(
                "Input type is not compatible with the provided {}",
                out.describe().split(' ').next().unwrap_or_default()
            )),
            Some(out) if input.per_primitive != out.per_primitive => Some(format!(
                "Pipeline input has per_primitive={}, but shader expects per_primitive={}",
                out.per_primitive, input.per_primitive
            )),
            Some(_) => None,
        };
        if let Some(error) = error {
            return Err(format!(
                "{stage}: Location[{location}] {} is not provided by the previous stage \
                 outputs: {error}",
                input.describe()
            ));
        }
        per_vertex |= input.interpolation == Some(naga::Interpolation::PerVertex);
    }
    let limit = limits.max_inter_stage_shader_variables;
    let deduction: u32 = inputs
        .built_ins
        .iter()
        .map(|(b, _)| match b {
            naga::BuiltIn::FrontFacing
            | naga::BuiltIn::SampleIndex
            | naga::BuiltIn::SampleMask
            | naga::BuiltIn::PrimitiveIndex
            | naga::BuiltIn::SubgroupInvocationId
            | naga::BuiltIn::SubgroupSize
            | naga::BuiltIn::ViewIndex
            | naga::BuiltIn::PointCoord => 1,
            naga::BuiltIn::Barycentric { .. } => 3,
            _ => 0,
        })
        .sum();
    for v in &inputs.locals {
        if v.location >= limit {
            return Err(format!(
                "{stage}: fragment shader input location Location[{}] ({}) exceeds the \
                 `max_inter_stage_shader_variables` limit ({}, 0-based)",
                v.location,
                v.describe(),
                limit.saturating_sub(1)
            ));
        }
    }
    let found = inputs.locals.len() as u32;
    if found > limit.saturating_sub(deduction) {
        return Err(format!(
            "{stage}: found {found} user-defined fragment shader input variables, which exceeds \
             the `max_inter_stage_shader_variables` limit ({limit})"
        ));
    }
    let outputs = Varyings::of(module, entry_point, false);
    for v in &outputs.locals {
        if v.location >= limits.max_color_attachments {
            return Err(format!(
                "{stage}: Location[{}] {}'s index exceeds the `max_color_attachments` limit ({})",
                v.location,
                v.describe(),
                limits.max_color_attachments
            ));
        }
    }
    let writes_dual = info.get_entry_point(entry_point).dual_source_blending;
    if ctx.dual_source_blending && !writes_dual {
        return Err(format!(
            "{stage}: Pipeline uses dual-source blending, but the shader does not support it"
        ));
    }
    let writes_depth = outputs
        .built_ins
        .iter()
        .any(|(b, _)| *b == naga::BuiltIn::FragDepth);
    if writes_depth && !ctx.has_depth_attachment {
        return Err(format!(
            "{stage}: Fragment shader writes depth, but pipeline does not have a depth attachment"
        ));
    }
    // Behind a mesh stage, the primitive index is read exactly where the
    // mesh stage writes it (wgpu-core's `primitive_index` of the stage I/O).
    let behind_mesh = vertex
        .and_then(|(m, ep)| m.entry_points.get(ep))
        .is_some_and(|ep| ep.stage == naga::ShaderStage::Mesh);
    if behind_mesh {
        let primitive_index = |v: &Varyings| {
            v.built_ins
                .iter()
                .any(|(b, _)| *b == naga::BuiltIn::PrimitiveIndex)
        };
        let written = provided.as_ref().is_some_and(primitive_index);
        let read = primitive_index(&inputs);
        if read && !written {
            return Err(format!(
                "{stage}: Primitive index can only be used in a fragment shader if the \
                 preceding shader was a vertex shader or a mesh shader that writes to primitive \
                 index."
            ));
        }
        if written && !read {
            return Err(format!(
                "{stage}: If a mesh shader writes to primitive index, it must be read by the \
                 fragment shader."
            ));
        }
    }
    if per_vertex && !ctx.topology.is_triangles() {
        return Err(format!(
            "{stage}: Per vertex fragment inputs can only be used in triangle primitive pipelines"
        ));
    }
    Ok(())
}

/// The pipeline's layout and vertex buffers against the limits wgpu-core
/// checks once the layout is known (`create_render_pipeline`):
/// `max_bind_groups_plus_vertex_buffers`
/// (`TooManyBindGroupsPlusVertexBuffers`) and the vertex stage's buffers
/// with the vertex buffers within
/// `max_buffers_and_acceleration_structures_per_shader_stage`
/// (`TooManyBuffersAndAccelerationStructuresInVertexStage`).
pub(crate) fn check_pipeline_slots(
    layout: &PipelineLayout,
    vertex_buffers: usize,
    limits: &wgpu::Limits,
) -> Result<(), String> {
    let given = (layout.groups.len() + vertex_buffers) as u64;
    let limit = limits.max_bind_groups_plus_vertex_buffers;
    if given > u64::from(limit) {
        return Err(format!(
            "The number of bind groups + vertex buffers {given} exceeds the limit {limit}"
        ));
    }
    let given = vertex_stage_buffers(layout).saturating_add(vertex_buffers as u32);
    let limit = limits.max_buffers_and_acceleration_structures_per_shader_stage;
    if given > limit {
        return Err(format!(
            "The number of vertex-stage buffers and acceleration structures {given} exceeds the \
             limit {limit}"
        ));
    }
    Ok(())
}

/// Whether a view wgpu-core allows is one keel-hal refuses for its own
/// reasons: a view of a texture with none of `TEXTURE_BINDING`,
/// `STORAGE_BINDING` and `RENDER_ATTACHMENT`, or a cube view of a texture
/// without `TEXTURE_BINDING` (keel-hal views are for those uses). No use
/// of such a view is valid (every binding and attachment needs one of the
/// usages the view lacks), so keel-wgpu makes it without a keel-hal view,
/// after the rest of wgpu-core's `create_texture_view` checks
/// ([`check_unbacked_view`]). Planar textures stay keel-hal's.
pub(crate) fn view_needs_no_hal(texture: &crate::resource::Texture, view: &ResolvedView) -> bool {
    use wgpu::TextureUsages as U;
    use wgpu::TextureViewDimension as V;
    let viewable = U::TEXTURE_BINDING | U::STORAGE_BINDING | U::RENDER_ATTACHMENT;
    !texture.format.is_multi_planar_format()
        && (!texture.usage.intersects(viewable)
            || (matches!(view.dimension, V::Cube | V::CubeArray)
                && !texture.usage.contains(U::TEXTURE_BINDING)))
}

/// The rest of wgpu-core's `create_texture_view` checks, for a view made
/// without keel-hal ([`view_needs_no_hal`]), in its order and words: the
/// view format renders or stores where the view's usage asks it, the
/// aspect is the format's, the format is the texture's (or a view format,
/// or the aspect's), the dimension fits the texture's, the layer count
/// fits the dimension, cube views are square, the mip and layer ranges
/// are inside the texture and not empty.
pub(crate) fn check_unbacked_view(
    texture: &crate::resource::Texture,
    desc: &wgpu::TextureViewDescriptor<'_>,
    view_formats: &[wgpu::TextureFormat],
    view: &ResolvedView,
    features: wgpu::Features,
) -> Result<(), String> {
    use wgpu::TextureViewDimension as V;
    let format = view.format;
    if let Some(f) = format_features(format, features) {
        if view.usage.contains(wgpu::TextureUsages::RENDER_ATTACHMENT)
            && !f
                .allowed_usages
                .contains(wgpu::TextureUsages::RENDER_ATTACHMENT)
        {
            return Err(format!(
                "Texture view format `{format:?}` cannot be used as a render attachment. Make \
                 sure the format supports RENDER_ATTACHMENT usage and required device features \
                 are enabled."
            ));
        }
        if view.usage.contains(wgpu::TextureUsages::STORAGE_BINDING)
            && !f
                .allowed_usages
                .contains(wgpu::TextureUsages::STORAGE_BINDING)
        {
            return Err(format!(
                "Texture view format `{format:?}` cannot be used as a storage binding. Make \
                 sure the format supports STORAGE usage and required device features are \
                 enabled."
            ));
        }
    }
    let has_aspect = match desc.aspect {
        wgpu::TextureAspect::All => true,
        wgpu::TextureAspect::DepthOnly => texture.format.has_depth_aspect(),
        wgpu::TextureAspect::StencilOnly => texture.format.has_stencil_aspect(),
        _ => false,
    };
    if !has_aspect {
        return Err(format!(
            "Aspect {:?} is not a valid aspect of the source texture format {:?}",
            desc.aspect, texture.format
        ));
    }
    let format_ok = if desc.aspect == wgpu::TextureAspect::All {
        format == texture.format || view_formats.contains(&format)
    } else {
        texture.format.aspect_specific_format(desc.aspect) == Some(format)
    };
    if !format_ok {
        return Err(format!(
            "Trying to create a view of format {format:?} of a texture with format {:?}, but \
             this view format is not present in the texture's viewFormat array",
            texture.format
        ));
    }
    check_multisampled_view(texture.sample_count, view.dimension, features)?;
    if view.dimension.compatible_texture_dimension() != texture.dimension {
        return Err(format!(
            "Invalid texture view dimension `{:?}` with texture of dimension `{:?}`",
            view.dimension, texture.dimension
        ));
    }
    let layers = view.array_layer_count;
    match view.dimension {
        V::D1 | V::D2 | V::D3 if layers != 1 => {
            return Err(format!(
                "Requested array layer count {layers} is not valid for the target view \
                 dimension {:?}",
                view.dimension
            ))
        }
        V::Cube if layers != 6 => {
            return Err(format!(
                "TextureView has an arrayLayerCount of {layers}. Views of type `Cube` must have \
                 arrayLayerCount of 6."
            ))
        }
        V::CubeArray if !layers.is_multiple_of(6) => {
            return Err(format!(
                "TextureView has an arrayLayerCount of {layers}. Views of type `CubeArray` must \
                 have an arrayLayerCount that is a multiple of 6."
            ))
        }
        _ => {}
    }
    if matches!(view.dimension, V::Cube | V::CubeArray) && texture.size.width != texture.size.height
    {
        return Err(
            "Source texture width and height must be equal for a texture view of dimension \
             `Cube`/`CubeArray`"
                .into(),
        );
    }
    let mips = view.mip_level_count;
    if mips == 0 {
        return Err("Mip level count is 0".into());
    }
    if desc.base_mip_level.saturating_add(mips) > texture.mip_level_count {
        return Err(format!(
            "`TextureView` starts at mip level {} and spans {mips} mip levels, but the texture \
             view only has {} total mip level(s)",
            desc.base_mip_level, texture.mip_level_count
        ));
    }
    if layers == 0 {
        return Err("Array layer count is 0".into());
    }
    if desc.base_array_layer.saturating_add(layers) > texture.layers() {
        return Err(format!(
            "`TextureView` starts at array layer {} and spans {layers}) array layers, but the \
             texture view only has {} total layer(s)",
            desc.base_array_layer,
            texture.layers()
        ));
    }
    Ok(())
}
