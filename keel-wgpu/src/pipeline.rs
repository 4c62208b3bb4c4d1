//! Shader modules (parsed once by naga, kept for layout derivation and
//! pipeline checks; passthrough modules keep only their entry point
//! names) and compute and render pipelines.

use std::borrow::Cow;
use std::sync::Arc;

use keel_hal::dynamic::{DynComputePipeline, DynPipelineCache, DynRenderPipeline, DynShaderModule};

use crate::binding::PipelineLayout;
use crate::resource::LastUse;
use crate::shared::{Dead, DeviceShared};

/// A shader module: the keel-hal module and the naga module it came from.
#[derive(Debug)]
pub(crate) struct ShaderModule {
    pub shared: Arc<DeviceShared>,
    pub raw: Option<Box<dyn DynShaderModule>>,
    pub naga: Option<(naga::Module, naga::valid::ModuleInfo)>,
    /// A passthrough module's entry point names, as its descriptor gave
    /// them (no naga module: pipelines check nothing else of it, as
    /// wgpu-core's `PassthroughInterface`); `None` for other modules.
    pub passthrough: Option<Vec<String>>,
    /// Compilation messages (one error when the module is invalid).
    pub messages: Vec<String>,
}

impl ShaderModule {
    /// The entry point of `stage` named `name`, or the only one of `stage`.
    /// Pipeline-overridable constant values as wgpu reads them (WebIDL's
    /// conversion, which naga applies on stock wgpu): an integer override
    /// takes its value truncated toward zero. keel-hal takes only values
    /// its types hold exactly, so the conversion is made here, once.
    pub(crate) fn webidl_constants<'a>(
        &self,
        constants: &'a [(&'a str, f64)],
    ) -> Cow<'a, [(&'a str, f64)]> {
        let Some((module, _)) = &self.naga else {
            return Cow::Borrowed(constants);
        };
        let integer = |name: &str| {
            module
                .overrides
                .iter()
                .find(|(_, o)| match (o.id, &o.name) {
                    (Some(id), _) => id.to_string() == name,
                    (None, Some(n)) => n == name,
                    (None, None) => false,
                })
                .and_then(|(_, o)| module.types.get_handle(o.ty).ok())
                .is_some_and(|t| {
                    matches!(t.inner, naga::TypeInner::Scalar(s)
                        if matches!(s.kind, naga::ScalarKind::Sint | naga::ScalarKind::Uint))
                })
        };
        let fraction = |&(name, value): &(&str, f64)| {
            value.is_finite() && value.fract() != 0.0 && integer(name)
        };
        if !constants.iter().any(fraction) {
            return Cow::Borrowed(constants);
        }
        Cow::Owned(
            constants
                .iter()
                .map(|c| if fraction(c) { (c.0, c.1.trunc()) } else { *c })
                .collect(),
        )
    }

    pub(crate) fn entry_point(
        &self,
        name: Option<&str>,
        stage: naga::ShaderStage,
    ) -> Result<(usize, String), String> {
        let Some((module, _)) = &self.naga else {
            return self.passthrough_entry_point(name);
        };
        let mut found = module
            .entry_points
            .iter()
            .enumerate()
            .filter(|(_, ep)| ep.stage == stage && name.is_none_or(|n| ep.name == n));
        match (found.next(), found.next(), name) {
            (Some((i, ep)), None, _) | (Some((i, ep)), Some(_), Some(_)) => {
                Ok((i, ep.name.clone()))
            }
            (Some(_), Some(_), None) => Err(format!(
                "the module has several {stage:?} entry points: name one"
            )),
            (None, _, Some(n)) => Err(format!("the module has no {stage:?} entry point {n:?}")),
            (None, _, None) => Err(format!("the module has no {stage:?} entry point")),
        }
    }

    /// A passthrough module's entry point: the one named, which must be
    /// among the descriptor's, or the only one (wgpu-core's
    /// `finalize_entry_point_name`; the stage is the program's word).
    fn passthrough_entry_point(&self, name: Option<&str>) -> Result<(usize, String), String> {
        let (Some(_), Some(names)) = (&self.raw, &self.passthrough) else {
            return Err("the shader module is invalid".into());
        };
        match (name, names.as_slice()) {
            (Some(n), names) => match names.iter().position(|e| e == n) {
                Some(i) => Ok((i, n.to_string())),
                None => Err(format!("Unable to find entry point '{n}'")),
            },
            (None, [only]) => Ok((0, only.clone())),
            (None, _) => Err(
                "Unable to select an entry point: multiple entry points were found \
                 in the provided shader module, but no entry point was specified"
                    .into(),
            ),
        }
    }
}

impl Drop for ShaderModule {
    fn drop(&mut self) {
        if let Some(raw) = self.raw.take() {
            // Pipelines keep no reference to their modules.
            self.shared.bury(0, Dead::ShaderModule(raw));
        }
    }
}

/// A compute pipeline.
#[derive(Debug)]
pub(crate) struct ComputePipeline {
    pub shared: Arc<DeviceShared>,
    pub raw: Option<Box<dyn DynComputePipeline>>,
    pub label: String,
    pub layout: Option<Arc<PipelineLayout>>,
    /// The immediate data slots its shader reads.
    pub immediate_slots: naga::valid::ImmediateSlots,
    /// `(group, binding, bytes)`: buffers its shader uses whose layout
    /// entry has no `min_binding_size`, checked at each dispatch.
    pub late_sizes: Vec<(u32, u32, u64)>,
    pub last_use: LastUse,
}

impl Drop for ComputePipeline {
    fn drop(&mut self) {
        let last = self.last_use.get();
        if let Some(layout) = &self.layout {
            layout.last_use.bump(last);
        }
        if let Some(raw) = self.raw.take() {
            self.shared.bury(last, Dead::ComputePipeline(raw));
        }
    }
}

/// The attachments a render pipeline, a render bundle or a render pass
/// draws into: a pipeline or bundle is used only where they are equal
/// (wgpu's render-pass compatibility).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Targets {
    /// Colour formats by attachment index, empty ones included: wgpu
    /// compares the lists exactly, so `[Some(f), None]` is not `[Some(f)]`.
    pub colors: Vec<Option<wgpu::TextureFormat>>,
    pub depth_stencil: Option<wgpu::TextureFormat>,
    pub samples: u32,
    pub multiview: Option<std::num::NonZeroU32>,
}

impl Targets {
    /// Targets as given (wgpu-core's `RenderPassContext`: its colour list
    /// keeps every entry, trailing empty ones too).
    pub(crate) fn new(
        colors: Vec<Option<wgpu::TextureFormat>>,
        depth_stencil: Option<wgpu::TextureFormat>,
        samples: u32,
        multiview: Option<std::num::NonZeroU32>,
    ) -> Self {
        Self {
            colors,
            depth_stencil,
            samples,
            multiview,
        }
    }
}

/// One vertex buffer slot a render pipeline reads.
#[derive(Clone, Copy, Debug)]
pub(crate) struct VertexSlot {
    pub stride: u64,
    pub step: wgpu::VertexStepMode,
    /// The bytes one element needs: the end of its last attribute.
    pub end: u64,
}

/// A render pipeline.
#[derive(Debug)]
pub(crate) struct RenderPipeline {
    pub shared: Arc<DeviceShared>,
    pub raw: Option<Box<dyn DynRenderPipeline>>,
    pub label: String,
    pub layout: Option<Arc<PipelineLayout>>,
    /// The vertex buffer slots the pipeline reads (bit per slot): each
    /// must have a buffer set before a draw.
    pub vertex_slots: u64,
    /// The slots' layouts (`None`: a gap), for the draw range checks.
    pub vertex: Vec<Option<VertexSlot>>,
    pub targets: Targets,
    pub writes_depth: bool,
    pub writes_stencil: bool,
    /// A target blends with the blend constant: a render pass must set it
    /// before a draw (wgpu-core's `PipelineFlags::BLEND_CONSTANT`).
    pub uses_blend_constant: bool,
    /// The index format a strip topology restarts on: a draw's index
    /// buffer must have it.
    pub strip_index_format: Option<wgpu::IndexFormat>,
    /// The immediate data slots its shaders read.
    pub immediate_slots: naga::valid::ImmediateSlots,
    /// As [`ComputePipeline::late_sizes`], checked at each draw.
    pub late_sizes: Vec<(u32, u32, u64)>,
    /// A mesh pipeline (`create_mesh_pipeline`): drawn only with
    /// `draw_mesh_tasks*`, and those draw only it.
    pub mesh: Option<MeshStages>,
    pub last_use: LastUse,
}

/// A mesh pipeline's front stages: what its draws' counts are held to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MeshStages {
    /// A mesh stage alone: counts within the mesh workgroup limits.
    Mesh,
    /// A task stage before the mesh stage: counts within the task
    /// workgroup limits.
    TaskMesh,
}

/// What render and mesh pipelines share from rasterization on, with the
/// vertex buffers (none for a mesh pipeline): what the creation checks
/// and the recording checks read from either descriptor.
#[derive(Clone, Copy)]
pub(crate) struct RasterParts<'a> {
    pub vertex_buffers: &'a [Option<wgpu::VertexBufferLayout<'a>>],
    pub primitive: &'a wgpu::PrimitiveState,
    pub depth_stencil: Option<&'a wgpu::DepthStencilState>,
    pub multisample: &'a wgpu::MultisampleState,
    pub fragment: Option<&'a wgpu::FragmentState<'a>>,
    pub multiview_mask: Option<std::num::NonZeroU32>,
}

impl<'a> RasterParts<'a> {
    /// A render pipeline's.
    pub(crate) fn render(desc: &'a wgpu::RenderPipelineDescriptor<'a>) -> Self {
        Self {
            vertex_buffers: desc.vertex.buffers,
            primitive: &desc.primitive,
            depth_stencil: desc.depth_stencil.as_ref(),
            multisample: &desc.multisample,
            fragment: desc.fragment.as_ref(),
            multiview_mask: desc.multiview_mask,
        }
    }

    /// A mesh pipeline's (no vertex buffers).
    pub(crate) fn mesh(desc: &'a wgpu::MeshPipelineDescriptor<'a>) -> Self {
        Self {
            vertex_buffers: &[],
            primitive: &desc.primitive,
            depth_stencil: desc.depth_stencil.as_ref(),
            multisample: &desc.multisample,
            fragment: desc.fragment.as_ref(),
            multiview_mask: desc.multiview,
        }
    }

    /// The colour targets (none without a fragment stage).
    pub(crate) fn targets(&self) -> &'a [Option<wgpu::ColorTargetState>] {
        self.fragment.map_or(&[], |f| f.targets)
    }
}

impl RenderPipeline {
    /// A pipeline with no keel-hal object (yet).
    pub(crate) fn invalid(
        shared: &Arc<DeviceShared>,
        label: Option<&str>,
        layout: Option<Arc<PipelineLayout>>,
    ) -> Self {
        Self {
            shared: shared.clone(),
            raw: None,
            label: label.unwrap_or_default().into(),
            layout,
            vertex_slots: 0,
            vertex: Vec::new(),
            targets: Targets::default(),
            writes_depth: false,
            writes_stencil: false,
            uses_blend_constant: false,
            strip_index_format: None,
            immediate_slots: Default::default(),
            late_sizes: Vec::new(),
            mesh: None,
            last_use: LastUse::default(),
        }
    }

    /// Takes what the recording checks need from `desc`: vertex slots,
    /// targets, depth and stencil writes.
    pub(crate) fn describe(&mut self, desc: &RasterParts<'_>) {
        self.vertex = desc
            .vertex_buffers
            .iter()
            .map(|b| {
                b.as_ref().map(|b| VertexSlot {
                    stride: b.array_stride,
                    step: b.step_mode,
                    end: b
                        .attributes
                        .iter()
                        .map(|a| a.offset + a.format.size())
                        .max()
                        .unwrap_or(0),
                })
            })
            .collect();
        self.vertex_slots = self
            .vertex
            .iter()
            .enumerate()
            .filter(|(slot, b)| b.is_some() && *slot < 64)
            .fold(0, |bits, (slot, _)| bits | 1 << slot);
        let colors = desc
            .targets()
            .iter()
            .map(|t| t.as_ref().map(|t| t.format))
            .collect();
        self.targets = Targets::new(
            colors,
            desc.depth_stencil.map(|d| d.format),
            desc.multisample.count,
            desc.multiview_mask,
        );
        self.strip_index_format = desc.primitive.strip_index_format;
        self.uses_blend_constant = desc
            .targets()
            .iter()
            .flatten()
            .filter_map(|t| t.blend)
            .any(|b| b.color.uses_constant() || b.alpha.uses_constant());
        if let Some(ds) = desc.depth_stencil {
            self.writes_depth = !ds.is_depth_read_only();
            self.writes_stencil = !ds.is_stencil_read_only(desc.primitive.cull_mode);
        }
    }

    /// How wgpu names the pipeline in its messages.
    pub(crate) fn ident(&self) -> String {
        format!("RenderPipeline with '{}' label", self.label)
    }
}

impl Drop for RenderPipeline {
    fn drop(&mut self) {
        let last = self.last_use.get();
        if let Some(layout) = &self.layout {
            layout.last_use.bump(last);
        }
        if let Some(raw) = self.raw.take() {
            self.shared.bury(last, Dead::RenderPipeline(raw));
        }
    }
}

/// A pipeline cache (keel-hal's, with its checked header).
#[derive(Debug)]
pub(crate) struct PipelineCache {
    pub shared: Arc<DeviceShared>,
    pub raw: Option<Box<dyn DynPipelineCache>>,
}

impl Drop for PipelineCache {
    fn drop(&mut self) {
        if let Some(raw) = self.raw.take() {
            // SAFETY: a pipeline cache is used only while pipelines are
            // created, never by submitted work; it came from this device.
            unsafe { self.shared.hal().destroy_pipeline_cache(raw) };
        }
    }
}
