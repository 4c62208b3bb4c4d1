//! Fixed-function state of render pipelines: the cheap checks (docs/design.md §1)
//! and the conversion from `wgpu-types` to Vulkan create-info parts.
//!
//! [`FixedState::new`] runs before any Vulkan object of the pipeline
//! exists, so a description the adapter cannot serve fails with
//! [`PipelineError::Unsupported`] and nothing to release. Features checked
//! here are the core features `adapter.rs` enables whenever the adapter
//! has them (`PhysicalFeatures`), so "supported" means "enabled".

use ash::vk;

use super::{conv, DeviceShared};
use crate::features::vulkan_column::Bit;
use crate::pipeline::RasterState;
use crate::PipelineError;

/// Most colour attachments a pass or pipeline can have (wgpu-types' limit,
/// which `max_color_attachments` never exceeds).
pub(super) const MAX_COLOR_ATTACHMENTS: usize = 8;

/// The states set by command, not baked into the pipeline.
pub(super) const DYNAMIC_STATES: [vk::DynamicState; 4] = [
    vk::DynamicState::VIEWPORT,
    vk::DynamicState::SCISSOR,
    vk::DynamicState::STENCIL_REFERENCE,
    vk::DynamicState::BLEND_CONSTANTS,
];

/// A render pipeline's fixed-function state in Vulkan terms. The create
/// infos hold no pointers; the arrays they will point to live here.
pub(super) struct FixedState {
    pub(super) vertex_bindings: Vec<vk::VertexInputBindingDescription>,
    pub(super) vertex_attributes: Vec<vk::VertexInputAttributeDescription>,
    pub(super) input_assembly: vk::PipelineInputAssemblyStateCreateInfo<'static>,
    pub(super) rasterization: vk::PipelineRasterizationStateCreateInfo<'static>,
    /// Conservative (overestimating) rasterization: chains a
    /// `VkPipelineRasterizationConservativeStateCreateInfoEXT` (the device
    /// enabled the extension with `CONSERVATIVE_RASTERIZATION`, checked).
    pub(super) conservative: bool,
    pub(super) samples: vk::SampleCountFlags,
    /// The sample mask; only the words `samples` needs are read.
    pub(super) sample_mask: [u32; 2],
    pub(super) alpha_to_coverage: bool,
    pub(super) depth_stencil: vk::PipelineDepthStencilStateCreateInfo<'static>,
    pub(super) blend_attachments: Vec<vk::PipelineColorBlendAttachmentState>,
    pub(super) color_formats: Vec<vk::Format>,
    pub(super) depth_format: vk::Format,
    pub(super) stencil_format: vk::Format,
    /// The view mask (0: no multiview; `validate/multiview.rs` checked it).
    pub(super) view_mask: u32,
}

fn unsupported<T>(what: impl Into<String>) -> Result<T, PipelineError> {
    Err(PipelineError::Unsupported(what.into()))
}

impl FixedState {
    /// Checks `desc`'s fixed-function state against the device and converts it.
    pub(super) fn new(shared: &DeviceShared, desc: RasterState<'_>) -> Result<Self, PipelineError> {
        let (vertex_bindings, vertex_attributes) = vertex_input(shared, &desc)?;
        let primitive = desc.primitive;
        let samples = conv::map_sample_count(desc.multisample.count).ok_or_else(|| {
            PipelineError::Unsupported(format!("sample count {}", desc.multisample.count))
        })?;
        let mask = desc.multisample.mask;
        let (depth_stencil, depth_format, stencil_format) =
            depth_stencil(shared, desc.depth_stencil)?;
        let (blend_attachments, color_formats) = color_targets(shared, desc.color_targets)?;
        Ok(Self {
            vertex_bindings,
            vertex_attributes,
            input_assembly: vk::PipelineInputAssemblyStateCreateInfo::default()
                .topology(map_topology(primitive.topology))
                .primitive_restart_enable(
                    primitive.topology.is_strip() && primitive.strip_index_format.is_some(),
                ),
            rasterization: rasterization(shared, primitive, desc.depth_stencil)?,
            conservative: primitive.conservative,
            samples,
            // Truncation keeps the low word; the high word is the rest.
            sample_mask: [mask as u32, (mask >> 32) as u32],
            alpha_to_coverage: desc.multisample.alpha_to_coverage_enabled,
            depth_stencil,
            blend_attachments,
            color_formats,
            view_mask: crate::validate::multiview::check_view_mask(
                desc.multiview_mask,
                shared.features,
                shared.limits.max_multiview_view_count,
            )?,
            depth_format,
            stencil_format,
        })
    }

    /// The words of `sample_mask` that `samples` reads.
    pub(super) fn sample_mask(&self) -> &[u32] {
        if self.samples.as_raw() > 32 {
            &self.sample_mask
        } else {
            &self.sample_mask[..1]
        }
    }
}

/// The optimal-tiling and buffer features of a format (cached per device).
fn format_features(shared: &DeviceShared, format: vk::Format) -> vk::FormatProperties {
    // SAFETY: the physical device belongs to this instance and is the
    // device's own on every call.
    unsafe {
        shared
            .formats
            .format_properties(&shared.instance.raw, shared.physical_device, format)
    }
}

type VertexInput = (
    Vec<vk::VertexInputBindingDescription>,
    Vec<vk::VertexInputAttributeDescription>,
);

/// Vertex buffers and attributes: counts, strides and offsets within the
/// limits, formats the adapter can fetch.
fn vertex_input(
    shared: &DeviceShared,
    desc: &RasterState<'_>,
) -> Result<VertexInput, PipelineError> {
    let limits = &shared.limits;
    if desc.vertex_buffers.len() > limits.max_vertex_buffers as usize {
        return unsupported(format!(
            "{} vertex buffers, the limit is {}",
            desc.vertex_buffers.len(),
            limits.max_vertex_buffers
        ));
    }
    let mut bindings = Vec::with_capacity(desc.vertex_buffers.len());
    let mut attributes = Vec::new();
    for (slot, layout) in (0u32..).zip(desc.vertex_buffers) {
        let stride = u32::try_from(layout.array_stride)
            .ok()
            .filter(|&s| s <= limits.max_vertex_buffer_array_stride);
        let Some(stride) = stride else {
            return unsupported(format!(
                "vertex buffer {slot}: stride {} exceeds the limit {}",
                layout.array_stride, limits.max_vertex_buffer_array_stride
            ));
        };
        bindings.push(vk::VertexInputBindingDescription {
            binding: slot,
            stride,
            input_rate: match layout.step_mode {
                wgt::VertexStepMode::Vertex => vk::VertexInputRate::VERTEX,
                wgt::VertexStepMode::Instance => vk::VertexInputRate::INSTANCE,
            },
        });
        for attribute in layout.attributes {
            let format = conv::map_vertex_format(attribute.format);
            let fetchable = format_features(shared, format)
                .buffer_features
                .contains(vk::FormatFeatureFlags::VERTEX_BUFFER);
            if !fetchable {
                return unsupported(format!(
                    "vertex format {:?} (location {})",
                    attribute.format, attribute.shader_location
                ));
            }
            let Ok(offset) = u32::try_from(attribute.offset) else {
                return unsupported(format!(
                    "vertex attribute offset {} (location {})",
                    attribute.offset, attribute.shader_location
                ));
            };
            attributes.push(vk::VertexInputAttributeDescription {
                location: attribute.shader_location,
                binding: slot,
                format,
                offset,
            });
        }
    }
    if attributes.len() > limits.max_vertex_attributes as usize {
        return unsupported(format!(
            "{} vertex attributes, the limit is {}",
            attributes.len(),
            limits.max_vertex_attributes
        ));
    }
    Ok((bindings, attributes))
}

/// Rasterization: polygon mode, culling, winding, depth clamp and bias.
///
/// Winding is taken as given: the backend flips Y with a negative viewport
/// height, so counter-clockwise on screen stays counter-clockwise.
fn rasterization(
    shared: &DeviceShared,
    primitive: &wgt::PrimitiveState,
    depth_stencil: Option<&wgt::DepthStencilState>,
) -> Result<vk::PipelineRasterizationStateCreateInfo<'static>, PipelineError> {
    // Polygon modes, unclipped depth and conservative rasterization need
    // their features, which the adapter advertises only with
    // fillModeNonSolid and depthClamp (enabled wherever supported).
    crate::validate::pipeline::check_primitive(shared.features, primitive)?;
    let polygon_mode = match primitive.polygon_mode {
        wgt::PolygonMode::Fill => vk::PolygonMode::FILL,
        wgt::PolygonMode::Line => vk::PolygonMode::LINE,
        wgt::PolygonMode::Point => vk::PolygonMode::POINT,
    };
    let mut info = vk::PipelineRasterizationStateCreateInfo::default()
        .depth_clamp_enable(primitive.unclipped_depth)
        .polygon_mode(polygon_mode)
        .cull_mode(match primitive.cull_mode {
            None => vk::CullModeFlags::NONE,
            Some(wgt::Face::Front) => vk::CullModeFlags::FRONT,
            Some(wgt::Face::Back) => vk::CullModeFlags::BACK,
        })
        .front_face(match primitive.front_face {
            wgt::FrontFace::Ccw => vk::FrontFace::COUNTER_CLOCKWISE,
            wgt::FrontFace::Cw => vk::FrontFace::CLOCKWISE,
        })
        .line_width(1.0);
    if let Some(bias) = depth_stencil.map(|ds| ds.bias).filter(|b| b.is_enabled()) {
        if bias.clamp != 0.0 && !shared.enabled.has(Bit::DepthBiasClamp) {
            return unsupported("a depth bias clamp needs depthBiasClamp");
        }
        info = info
            .depth_bias_enable(true)
            .depth_bias_constant_factor(bias.constant as f32)
            .depth_bias_slope_factor(bias.slope_scale)
            .depth_bias_clamp(bias.clamp);
    }
    Ok(info)
}

type DepthStencil = (
    vk::PipelineDepthStencilStateCreateInfo<'static>,
    vk::Format,
    vk::Format,
);

/// Depth and stencil tests, and the attachment formats of each aspect.
fn depth_stencil(
    shared: &DeviceShared,
    state: Option<&wgt::DepthStencilState>,
) -> Result<DepthStencil, PipelineError> {
    let Some(state) = state else {
        let none = vk::Format::UNDEFINED;
        return Ok((Default::default(), none, none));
    };
    let format = conv::map_texture_format(state.format);
    let attachable = format_features(shared, format)
        .optimal_tiling_features
        .contains(vk::FormatFeatureFlags::DEPTH_STENCIL_ATTACHMENT);
    if !state.format.is_depth_stencil_format() || format == vk::Format::UNDEFINED || !attachable {
        return unsupported(format!("{:?} as a depth/stencil attachment", state.format));
    }
    let pick = |has: bool| if has { format } else { vk::Format::UNDEFINED };
    let depth_format = pick(state.format.has_depth_aspect());
    let stencil_format = pick(state.format.has_stencil_aspect());
    let mut info = vk::PipelineDepthStencilStateCreateInfo::default();
    // Without the test Vulkan writes no depth, so a write under `Always`
    // still needs the test on.
    if state.is_depth_enabled() {
        info = info
            .depth_test_enable(true)
            .depth_write_enable(state.depth_write_enabled.unwrap_or(false))
            .depth_compare_op(conv::map_compare_function(
                state.depth_compare.unwrap_or(wgt::CompareFunction::Always),
            ));
    }
    let stencil = &state.stencil;
    if stencil.is_enabled() {
        let face = |f: &wgt::StencilFaceState| vk::StencilOpState {
            fail_op: map_stencil_op(f.fail_op),
            pass_op: map_stencil_op(f.pass_op),
            depth_fail_op: map_stencil_op(f.depth_fail_op),
            compare_op: conv::map_compare_function(f.compare),
            compare_mask: stencil.read_mask,
            write_mask: stencil.write_mask,
            // Dynamic: set by `set_stencil_reference` (0 at pass start).
            reference: 0,
        };
        info = info
            .stencil_test_enable(true)
            .front(face(&stencil.front))
            .back(face(&stencil.back));
    }
    Ok((info, depth_format, stencil_format))
}

type ColorTargets = (Vec<vk::PipelineColorBlendAttachmentState>, Vec<vk::Format>);

/// Colour blend states and formats, one per attachment slot.
///
/// An empty slot gets format `UNDEFINED` (nothing is written there) and a
/// copy of the first target's blend state: without independentBlend every
/// element of the blend state array must be identical.
fn color_targets(
    shared: &DeviceShared,
    targets: &[Option<wgt::ColorTargetState>],
) -> Result<ColorTargets, PipelineError> {
    // Second-source factors need DUAL_SOURCE_BLENDING (dualSrcBlend,
    // enabled with it).
    crate::validate::pipeline::check_blend(shared.features, targets)?;
    let max = (shared.limits.max_color_attachments as usize).min(MAX_COLOR_ATTACHMENTS);
    if targets.len() > max {
        return unsupported(format!(
            "{} colour targets, the limit is {max}",
            targets.len()
        ));
    }
    let mut states = Vec::with_capacity(targets.len());
    let mut formats = Vec::with_capacity(targets.len());
    for (slot, target) in targets.iter().enumerate() {
        let Some(target) = target else {
            formats.push(vk::Format::UNDEFINED);
            states.push(None);
            continue;
        };
        let format = conv::map_texture_format(target.format);
        let features = format_features(shared, format).optimal_tiling_features;
        if format == vk::Format::UNDEFINED
            || !features.contains(vk::FormatFeatureFlags::COLOR_ATTACHMENT)
        {
            return unsupported(format!(
                "colour target {slot}: {:?} is not a colour attachment format here",
                target.format
            ));
        }
        let mut state = vk::PipelineColorBlendAttachmentState::default()
            .color_write_mask(map_color_writes(target.write_mask));
        if let Some(blend) = target.blend {
            if !features.contains(vk::FormatFeatureFlags::COLOR_ATTACHMENT_BLEND) {
                return unsupported(format!(
                    "colour target {slot}: {:?} cannot be blended",
                    target.format
                ));
            }
            state = state
                .blend_enable(true)
                .src_color_blend_factor(map_blend_factor(blend.color.src_factor))
                .dst_color_blend_factor(map_blend_factor(blend.color.dst_factor))
                .color_blend_op(map_blend_op(blend.color.operation))
                .src_alpha_blend_factor(map_blend_factor(blend.alpha.src_factor))
                .dst_alpha_blend_factor(map_blend_factor(blend.alpha.dst_factor))
                .alpha_blend_op(map_blend_op(blend.alpha.operation));
        }
        formats.push(format);
        states.push(Some(state));
    }
    let first = states.iter().flatten().next().copied().unwrap_or_default();
    let states: Vec<_> = states.into_iter().map(|s| s.unwrap_or(first)).collect();
    let identical = states.iter().all(|s| same_blend(s, &first));
    if !identical && !shared.enabled.has(Bit::IndependentBlend) {
        return unsupported("colour targets with different blend states need independentBlend");
    }
    Ok((states, formats))
}

/// Field-wise equality (ash's structs do not implement `PartialEq`).
fn same_blend(
    a: &vk::PipelineColorBlendAttachmentState,
    b: &vk::PipelineColorBlendAttachmentState,
) -> bool {
    a.blend_enable == b.blend_enable
        && a.src_color_blend_factor == b.src_color_blend_factor
        && a.dst_color_blend_factor == b.dst_color_blend_factor
        && a.color_blend_op == b.color_blend_op
        && a.src_alpha_blend_factor == b.src_alpha_blend_factor
        && a.dst_alpha_blend_factor == b.dst_alpha_blend_factor
        && a.alpha_blend_op == b.alpha_blend_op
        && a.color_write_mask == b.color_write_mask
}

fn map_topology(topology: wgt::PrimitiveTopology) -> vk::PrimitiveTopology {
    use vk::PrimitiveTopology as V;
    use wgt::PrimitiveTopology as T;
    match topology {
        T::PointList => V::POINT_LIST,
        T::LineList => V::LINE_LIST,
        T::LineStrip => V::LINE_STRIP,
        T::TriangleList => V::TRIANGLE_LIST,
        T::TriangleStrip => V::TRIANGLE_STRIP,
    }
}

fn map_stencil_op(op: wgt::StencilOperation) -> vk::StencilOp {
    use vk::StencilOp as V;
    use wgt::StencilOperation as S;
    match op {
        S::Keep => V::KEEP,
        S::Zero => V::ZERO,
        S::Replace => V::REPLACE,
        S::Invert => V::INVERT,
        S::IncrementClamp => V::INCREMENT_AND_CLAMP,
        S::DecrementClamp => V::DECREMENT_AND_CLAMP,
        S::IncrementWrap => V::INCREMENT_AND_WRAP,
        S::DecrementWrap => V::DECREMENT_AND_WRAP,
    }
}

/// A blend factor. `Constant` reads the blend constant's colour for colour
/// and its alpha for alpha, as in WebGPU.
fn map_blend_factor(factor: wgt::BlendFactor) -> vk::BlendFactor {
    use vk::BlendFactor as V;
    use wgt::BlendFactor as F;
    match factor {
        F::Zero => V::ZERO,
        F::One => V::ONE,
        F::Src => V::SRC_COLOR,
        F::OneMinusSrc => V::ONE_MINUS_SRC_COLOR,
        F::SrcAlpha => V::SRC_ALPHA,
        F::OneMinusSrcAlpha => V::ONE_MINUS_SRC_ALPHA,
        F::Dst => V::DST_COLOR,
        F::OneMinusDst => V::ONE_MINUS_DST_COLOR,
        F::DstAlpha => V::DST_ALPHA,
        F::OneMinusDstAlpha => V::ONE_MINUS_DST_ALPHA,
        F::SrcAlphaSaturated => V::SRC_ALPHA_SATURATE,
        F::Constant => V::CONSTANT_COLOR,
        F::OneMinusConstant => V::ONE_MINUS_CONSTANT_COLOR,
        F::Src1 => V::SRC1_COLOR,
        F::OneMinusSrc1 => V::ONE_MINUS_SRC1_COLOR,
        F::Src1Alpha => V::SRC1_ALPHA,
        F::OneMinusSrc1Alpha => V::ONE_MINUS_SRC1_ALPHA,
    }
}

fn map_blend_op(op: wgt::BlendOperation) -> vk::BlendOp {
    use vk::BlendOp as V;
    use wgt::BlendOperation as O;
    match op {
        O::Add => V::ADD,
        O::Subtract => V::SUBTRACT,
        O::ReverseSubtract => V::REVERSE_SUBTRACT,
        O::Min => V::MIN,
        O::Max => V::MAX,
    }
}

fn map_color_writes(writes: wgt::ColorWrites) -> vk::ColorComponentFlags {
    use vk::ColorComponentFlags as V;
    use wgt::ColorWrites as W;
    [
        (W::RED, V::R),
        (W::GREEN, V::G),
        (W::BLUE, V::B),
        (W::ALPHA, V::A),
    ]
    .into_iter()
    .filter(|&(w, _)| writes.contains(w))
    .fold(V::empty(), |acc, (_, v)| acc | v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn color_writes_map_bit_for_bit() {
        assert_eq!(
            map_color_writes(wgt::ColorWrites::ALL),
            vk::ColorComponentFlags::RGBA
        );
        assert_eq!(
            map_color_writes(wgt::ColorWrites::RED | wgt::ColorWrites::ALPHA),
            vk::ColorComponentFlags::R | vk::ColorComponentFlags::A
        );
        assert!(map_color_writes(wgt::ColorWrites::empty()).is_empty());
    }

    #[test]
    fn blend_states_compare_field_by_field() {
        let a = vk::PipelineColorBlendAttachmentState::default()
            .color_write_mask(vk::ColorComponentFlags::RGBA);
        let b = a.blend_enable(true);
        assert!(same_blend(&a, &a));
        assert!(!same_blend(&a, &b));
    }
}
