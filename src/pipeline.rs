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
    /// SPIR-V words, checked before any reaches the driver: a structural
    /// check, then naga's SPIR-V front end and its validator with the
    /// device's capabilities (failures are [`ShaderError::InvalidSpirV`],
    /// [`ShaderError::SpirVParse`] and [`ShaderError::Validation`]). The
    /// words reach the driver as given; the module naga read is used to find
    /// entry points and check them against pipeline layouts, as for WGSL.
    ///
    /// naga's front end does not read every valid module (ray-tracing
    /// stages, capabilities it does not know): pass SPIR-V you vouch for as
    /// [`ShaderSource::SpirVUnchecked`].
    ///
    /// [`ShaderError::InvalidSpirV`]: crate::ShaderError::InvalidSpirV
    /// [`ShaderError::SpirVParse`]: crate::ShaderError::SpirVParse
    /// [`ShaderError::Validation`]: crate::ShaderError::Validation
    SpirV(Cow<'a, [u32]>),
    /// SPIR-V the caller vouches for (made only through the `unsafe`
    /// [`UncheckedSpirV::new`]; the device needs `PASSTHROUGH_SHADERS`,
    /// else [`ShaderError::MissingFeature`](crate::ShaderError::MissingFeature)):
    /// only the structural check runs, and
    /// pipelines check no more than that the entry point exists; its
    /// interface is not checked against pipeline layouts.
    SpirVUnchecked(UncheckedSpirV<'a>),
}

/// SPIR-V words whose validity the caller guarantees: see
/// [`UncheckedSpirV::new`]. Only `unsafe` code can make one.
#[derive(Clone, Debug)]
pub struct UncheckedSpirV<'a> {
    words: Cow<'a, [u32]>,
}

impl<'a> UncheckedSpirV<'a> {
    /// Wraps SPIR-V words the hal will hand to the driver without reading
    /// them with naga (only the structural check runs: magic number,
    /// header, instruction lengths, an `OpEntryPoint`).
    ///
    /// # Safety
    /// `words` must be a SPIR-V module that is valid per the SPIR-V
    /// specification and the Vulkan environment for SPIR-V (the Vulkan
    /// specification's appendix "Vulkan Environment for SPIR-V") for every
    /// device it is used on, with the features that device was opened with:
    /// every capability and extension it declares is supported and enabled
    /// there. Every pipeline made from it must also meet what the hal does
    /// not check for such modules: each entry point's resources and push
    /// constants are provided by the pipeline layout, with compatible types
    /// and visibility, and its workgroup size is within the device's limits.
    /// Backends that run no shaders (noop) read nothing but the structure.
    pub unsafe fn new(words: impl Into<Cow<'a, [u32]>>) -> Self {
        Self {
            words: words.into(),
        }
    }

    /// The words.
    pub fn words(&self) -> &[u32] {
        &self.words
    }

    /// The words, by value.
    pub fn into_words(self) -> Cow<'a, [u32]> {
        self.words
    }
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
    /// Values for the module's pipeline-overridable constants (`override`
    /// declarations), each under the override's identifier: its `@id`
    /// when it has one, else its name. An override without a value keeps
    /// its default; one the entry point uses without either is an error
    /// ([`PipelineError::Constant`](crate::PipelineError::Constant)), as is
    /// a value that does not fit its type. For WGSL and naga modules only.
    pub constants: &'a [(&'a str, f64)],
}

impl<'a, R: Resources + ?Sized> ProgrammableStage<'a, R> {
    /// `module`'s `entry_point`, overrides at their defaults.
    pub fn new(module: &'a R::ShaderModule, entry_point: &'a str) -> Self {
        Self {
            module,
            entry_point,
            constants: &[],
        }
    }
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
    /// A pipeline cache the driver may read compiled code from and add to
    /// (`PIPELINE_CACHE`); `None`: none.
    pub cache: Option<&'a R::PipelineCache>,
}

impl<'a, R: Resources + ?Sized> ComputePipelineDescriptor<'a, R> {
    /// A compute pipeline of `module`'s `entry_point` on `layout`, no
    /// label, no cache.
    pub fn new(
        layout: &'a R::PipelineLayout,
        module: &'a R::ShaderModule,
        entry_point: &'a str,
    ) -> Self {
        Self {
            label: None,
            layout,
            stage: ProgrammableStage {
                module,
                entry_point,
                constants: &[],
            },
            cache: None,
        }
    }
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
    /// The views it renders (`MULTIVIEW`), the same as the passes it is
    /// used in; shaders read the view as `@builtin(view_index)`.
    pub multiview_mask: Option<std::num::NonZeroU32>,
    /// A pipeline cache (`PIPELINE_CACHE`); `None`: none.
    pub cache: Option<&'a R::PipelineCache>,
}

/// Describes a mesh pipeline (`EXPERIMENTAL_MESH_SHADER`): an optional
/// task stage and a mesh stage in place of vertex input and the vertex
/// stage; everything from rasterization on is a render pipeline's. It
/// makes a render pipeline, bound with `set_render_pipeline` and drawn
/// with the `draw_mesh_tasks` commands (and only with those).
#[derive(Debug)]
pub struct MeshPipelineDescriptor<'a, R: Resources + ?Sized> {
    /// Debug label.
    pub label: Option<&'a str>,
    /// The layout its bindings must match.
    pub layout: &'a R::PipelineLayout,
    /// The task stage (`@task`), if any: it decides how many mesh
    /// workgroups run and passes them its payload.
    pub task_stage: Option<ProgrammableStage<'a, R>>,
    /// The mesh stage (`@mesh`): it writes vertices and primitives.
    pub mesh_stage: ProgrammableStage<'a, R>,
    /// Culling, winding, polygon mode (the topology comes from the mesh
    /// stage's output; `topology` must be the one it writes: a triangle,
    /// line or point list).
    pub primitive: wgt::PrimitiveState,
    /// Depth/stencil state and format, if the pass has such an attachment.
    pub depth_stencil: Option<wgt::DepthStencilState>,
    /// Sample count and mask.
    pub multisample: wgt::MultisampleState,
    /// The fragment stage, if any.
    pub fragment_stage: Option<ProgrammableStage<'a, R>>,
    /// Colour targets, by attachment slot.
    pub color_targets: &'a [Option<wgt::ColorTargetState>],
    /// The views it renders (`EXPERIMENTAL_MESH_SHADER_MULTIVIEW` with
    /// `MULTIVIEW`), the same as the passes it is used in.
    pub multiview_mask: Option<std::num::NonZeroU32>,
    /// A pipeline cache (`PIPELINE_CACHE`); `None`: none.
    pub cache: Option<&'a R::PipelineCache>,
}

/// What render and mesh pipelines share from rasterization on, plus the
/// vertex input (none for mesh pipelines): what the fixed-function checks
/// of every backend read.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RasterState<'a> {
    /// Vertex buffers, by slot (empty for a mesh pipeline).
    pub(crate) vertex_buffers: &'a [VertexBufferLayout<'a>],
    pub(crate) primitive: &'a wgt::PrimitiveState,
    pub(crate) depth_stencil: Option<&'a wgt::DepthStencilState>,
    pub(crate) multisample: &'a wgt::MultisampleState,
    pub(crate) color_targets: &'a [Option<wgt::ColorTargetState>],
    pub(crate) multiview_mask: Option<std::num::NonZeroU32>,
}

impl<R: Resources + ?Sized> RenderPipelineDescriptor<'_, R> {
    /// Its fixed-function state.
    pub(crate) fn raster(&self) -> RasterState<'_> {
        RasterState {
            vertex_buffers: self.vertex_buffers,
            primitive: &self.primitive,
            depth_stencil: self.depth_stencil.as_ref(),
            multisample: &self.multisample,
            color_targets: self.color_targets,
            multiview_mask: self.multiview_mask,
        }
    }
}

impl<R: Resources + ?Sized> MeshPipelineDescriptor<'_, R> {
    /// Its fixed-function state (no vertex input).
    pub(crate) fn raster(&self) -> RasterState<'_> {
        RasterState {
            vertex_buffers: &[],
            primitive: &self.primitive,
            depth_stencil: self.depth_stencil.as_ref(),
            multisample: &self.multisample,
            color_targets: self.color_targets,
            multiview_mask: self.multiview_mask,
        }
    }
}

/// The kind of a ray-tracing shader stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RayTracingStageKind {
    /// Ray generation.
    RayGeneration,
    /// Miss.
    Miss,
    /// Closest hit.
    ClosestHit,
    /// Any hit.
    AnyHit,
    /// Intersection (procedural geometry; SPIR-V modules only, WGSL has none).
    Intersection,
}

/// One shader of a ray-tracing pipeline.
#[derive(Debug)]
pub struct RayTracingStage<'a, R: Resources + ?Sized> {
    /// Its kind.
    pub kind: RayTracingStageKind,
    /// The module and entry point.
    pub stage: ProgrammableStage<'a, R>,
}

/// A shader group: what one shader-binding-table record invokes. Indices
/// point into the pipeline's `stages`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShaderGroup {
    /// A ray-generation or miss shader.
    General {
        /// Index of the stage.
        stage: u32,
    },
    /// Hit shaders for triangle geometry.
    TrianglesHit {
        /// Closest-hit stage, if any.
        closest_hit: Option<u32>,
        /// Any-hit stage, if any.
        any_hit: Option<u32>,
    },
    /// Hit shaders for AABB geometry, with its intersection shader.
    ProceduralHit {
        /// Intersection stage.
        intersection: u32,
        /// Closest-hit stage, if any.
        closest_hit: Option<u32>,
        /// Any-hit stage, if any.
        any_hit: Option<u32>,
    },
}

/// Describes a ray-tracing pipeline.
#[derive(Debug)]
pub struct RayTracingPipelineDescriptor<'a, R: Resources + ?Sized> {
    /// Debug label.
    pub label: Option<&'a str>,
    /// The layout its bindings must match.
    pub layout: &'a R::PipelineLayout,
    /// Its shaders.
    pub stages: &'a [RayTracingStage<'a, R>],
    /// Its groups; the shader binding table names groups by index here.
    pub groups: &'a [ShaderGroup],
    /// Deepest `traceRay` recursion, at most `max_ray_recursion_depth`.
    pub max_recursion_depth: u32,
    /// A pipeline cache (`PIPELINE_CACHE`); `None`: none.
    pub cache: Option<&'a R::PipelineCache>,
}

/// How to make a pipeline cache.
#[derive(Clone, Copy, Debug, Default)]
pub struct PipelineCacheDescriptor<'a> {
    /// Debug label.
    pub label: Option<&'a str>,
    /// What an earlier cache's [`crate::Device::pipeline_cache_get_data`]
    /// returned, on a device of the same adapter and driver; `None`: an
    /// empty cache.
    pub data: Option<&'a [u8]>,
    /// With data that does not fit (another adapter or driver, or damaged):
    /// make an empty cache instead of failing.
    pub fallback: bool,
}

/// Which groups a shader binding table holds, in record order.
#[derive(Clone, Debug, Default)]
pub struct ShaderBindingTableDescriptor<'a> {
    /// Debug label.
    pub label: Option<&'a str>,
    /// The ray-generation group.
    pub ray_generation: u32,
    /// Miss groups (miss index i → record i).
    pub miss: &'a [u32],
    /// Hit groups (instance SBT offset + geometry index → record).
    pub hit: &'a [u32],
}

/// One region of a shader binding table in its buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShaderBindingTableRegion {
    /// Byte offset of the first record in the table's buffer.
    pub offset: u64,
    /// Bytes between records (the adapter's handle size, aligned).
    pub stride: u64,
    /// Bytes of the region (0 when empty).
    pub size: u64,
}

/// A shader binding table built by the hal: the group handles of a pipeline
/// laid out with the adapter's handle size and alignments, in a buffer the
/// table owns. Destroy it with `destroy_shader_binding_table`.
#[derive(Debug)]
pub struct ShaderBindingTable<B> {
    /// The buffer holding the records.
    pub buffer: B,
    /// The ray-generation record.
    pub ray_generation: ShaderBindingTableRegion,
    /// The miss records.
    pub miss: ShaderBindingTableRegion,
    /// The hit records.
    pub hit: ShaderBindingTableRegion,
}
