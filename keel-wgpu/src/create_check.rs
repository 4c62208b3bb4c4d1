//! Checks wgpu-core makes when objects are created that keel-hal leaves to
//! its caller (`device/resource.rs`, `binding_model.rs`, `validation.rs`):
//! texture descriptor rules, per-stage binding counts, pipeline layout
//! immediates, vertex buffer layouts, the shader's vertex inputs and
//! fragment outputs against the pipeline, and texture-sampler pairs against
//! an explicit layout. One function per rule; each returns wgpu's reason.

use crate::binding::PipelineLayout;

/// The texture descriptor rules of wgpu-core's `create_texture` that
/// keel-hal's check does not make: a known, non-empty usage; depth-stencil
/// formats in 2D only; compressed formats and render attachments not in
/// 1D; compressed 3D textures only with the sliced-3D features; transient
/// attachments as wgpu allows them.
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
