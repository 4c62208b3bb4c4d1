//! Shader modules and compute/render pipeline descriptors.

use std::borrow::Cow;

use crate::Resources;

/// Where a shader module's code comes from.
// A descriptor field, built once per module: boxing the naga module would
// cost callers an allocation for nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum ShaderSource<'a> {
    /// WGSL text, parsed and validated with naga.
    Wgsl(Cow<'a, str>),
    /// A naga module, validated with naga.
    Naga(Cow<'a, naga::Module>),
    /// SPIR-V words, passed through after a structural check. The hal cannot
    /// check such a shader's interface against pipeline layouts.
    SpirV(Cow<'a, [u32]>),
}

/// Describes a shader module.
#[derive(Clone, Debug)]
pub struct ShaderModuleDescriptor<'a> {
    /// Debug label.
    pub label: Option<&'a str>,
    /// The code.
    pub source: ShaderSource<'a>,
}

impl<'a> ShaderModuleDescriptor<'a> {
    /// A module from WGSL text: the one-call path.
    pub fn wgsl(source: &'a str) -> Self {
        Self {
            label: None,
            source: ShaderSource::Wgsl(Cow::Borrowed(source)),
        }
    }
}

/// One shader stage of a pipeline.
#[derive(Debug)]
pub struct ProgrammableStage<'a, R: Resources + ?Sized> {
    /// The module holding the entry point.
    pub module: &'a R::ShaderModule,
    /// The entry point's name.
    pub entry_point: &'a str,
}

impl<R: Resources + ?Sized> Clone for ProgrammableStage<'_, R> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R: Resources + ?Sized> Copy for ProgrammableStage<'_, R> {}

/// Describes a compute pipeline.
#[derive(Debug)]
pub struct ComputePipelineDescriptor<'a, R: Resources + ?Sized> {
    /// Debug label.
    pub label: Option<&'a str>,
    /// The layout its bindings must match.
    pub layout: &'a R::PipelineLayout,
    /// The compute stage.
    pub stage: ProgrammableStage<'a, R>,
}

/// How one vertex buffer is laid out.
#[derive(Clone, Debug)]
pub struct VertexBufferLayout<'a> {
    /// Bytes between consecutive elements.
    pub array_stride: u64,
    /// Per vertex or per instance.
    pub step_mode: wgt::VertexStepMode,
    /// The attributes read from it.
    pub attributes: &'a [wgt::VertexAttribute],
}

/// Describes a render pipeline (for dynamic rendering: the attachment
/// formats come from `color_targets` and `depth_stencil`).
#[derive(Debug)]
pub struct RenderPipelineDescriptor<'a, R: Resources + ?Sized> {
    /// Debug label.
    pub label: Option<&'a str>,
    /// The layout its bindings must match.
    pub layout: &'a R::PipelineLayout,
    /// Vertex buffers, by slot.
    pub vertex_buffers: &'a [VertexBufferLayout<'a>],
    /// The vertex stage.
    pub vertex_stage: ProgrammableStage<'a, R>,
    /// Topology, culling, winding.
    pub primitive: wgt::PrimitiveState,
    /// Depth/stencil state and format, if the pass has such an attachment.
    pub depth_stencil: Option<wgt::DepthStencilState>,
    /// Sample count and mask.
    pub multisample: wgt::MultisampleState,
    /// The fragment stage, if any.
    pub fragment_stage: Option<ProgrammableStage<'a, R>>,
    /// Colour targets, by attachment slot.
    pub color_targets: &'a [Option<wgt::ColorTargetState>],
}
