//! Descriptors that name resources, converted from one [`Resources`]
//! family to another: from the dyn objects to a backend's own types (by
//! downcasting, [`Downcast`]), and from [`DynApi`]'s boxes to the dyn
//! objects inside them ([`Unbox`]).
//!
//! A converted descriptor points into lists built on the stack (up to a
//! few entries; on the heap beyond) and is handed to a closure, so nothing
//! outlives the call. A resource of another backend fails the conversion
//! with [`ConvertError::Foreign`]; nothing panics.

use std::marker::PhantomData;

use smallvec::SmallVec;

use super::{
    cast, DynAccelerationStructure, DynBindGroupLayout, DynBuffer, DynPipelineCache,
    DynPipelineLayout, DynResources, DynSampler, DynShaderModule, DynTextureView,
};
use crate::{
    AccelerationStructureAabbs, AccelerationStructureDescriptor, AccelerationStructureEntries,
    AccelerationStructureInstances, AccelerationStructurePlacement, AccelerationStructureTriangles,
    Api, Attachment, BindGroupDescriptor, BindGroupEntry, BindingResource, BufferBinding,
    BuildAccelerationStructureDescriptor, ColorAttachment, ComputePipelineDescriptor,
    DepthStencilAttachment, DeviceError, DynApi, GetAccelerationStructureBuildSizesDescriptor,
    MeshPipelineDescriptor, PipelineLayoutDescriptor, ProgrammableStage,
    RayTracingPipelineDescriptor, RayTracingStage, RenderPassDescriptor, RenderPipelineDescriptor,
    Resources, TriangleIndices,
};

/// Why a descriptor could not be converted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ConvertError {
    /// A resource belongs to another backend.
    Foreign,
    /// The list of converted entries could not be allocated.
    OutOfMemory,
}

impl From<ConvertError> for DeviceError {
    fn from(e: ConvertError) -> Self {
        match e {
            ConvertError::Foreign => DeviceError::ForeignResource,
            ConvertError::OutOfMemory => DeviceError::OutOfMemory,
        }
    }
}

/// A converted list, inline for up to `N` items (`smallvec`), grown only
/// through [`TryList`] so that a failed allocation is `OutOfMemory`, not an
/// abort.
pub(crate) type List<T, const N: usize> = SmallVec<[T; N]>;

/// Fallible growth of a [`List`].
pub(crate) trait TryList: Sized {
    /// The item type.
    type Item;
    /// An empty list with room for `capacity` items.
    fn try_with_capacity(capacity: usize) -> Result<Self, ConvertError>;
    /// Appends an item, reserving room fallibly first.
    fn try_push(&mut self, item: Self::Item) -> Result<(), ConvertError>;
}

impl<A: smallvec::Array> TryList for SmallVec<A> {
    type Item = A::Item;

    fn try_with_capacity(capacity: usize) -> Result<Self, ConvertError> {
        let mut list = SmallVec::new();
        list.try_reserve_exact(capacity)
            .map_err(|_| ConvertError::OutOfMemory)?;
        Ok(list)
    }

    fn try_push(&mut self, item: A::Item) -> Result<(), ConvertError> {
        self.try_reserve(1).map_err(|_| ConvertError::OutOfMemory)?;
        self.push(item);
        Ok(())
    }
}

/// Maps each resource of family `R` to the same resource in family `T`.
pub(crate) trait Convert<R: Resources + ?Sized, T: Resources + ?Sized> {
    fn buffer<'a>(&self, r: &'a R::Buffer) -> Option<&'a T::Buffer>;
    fn texture_view<'a>(&self, r: &'a R::TextureView) -> Option<&'a T::TextureView>;
    fn sampler<'a>(&self, r: &'a R::Sampler) -> Option<&'a T::Sampler>;
    fn bind_group_layout<'a>(&self, r: &'a R::BindGroupLayout) -> Option<&'a T::BindGroupLayout>;
    fn pipeline_layout<'a>(&self, r: &'a R::PipelineLayout) -> Option<&'a T::PipelineLayout>;
    fn shader_module<'a>(&self, r: &'a R::ShaderModule) -> Option<&'a T::ShaderModule>;
    fn acceleration_structure<'a>(
        &self,
        r: &'a R::AccelerationStructure,
    ) -> Option<&'a T::AccelerationStructure>;
    fn pipeline_cache<'a>(&self, r: &'a R::PipelineCache) -> Option<&'a T::PipelineCache>;
}

/// From the dyn objects to backend `A`'s types, by downcasting.
pub(crate) struct Downcast<A>(PhantomData<A>);

impl<A> Downcast<A> {
    pub(crate) const NEW: Self = Self(PhantomData);
}

impl<A: Api> Convert<DynResources, A> for Downcast<A> {
    fn buffer<'a>(&self, r: &'a dyn DynBuffer) -> Option<&'a A::Buffer> {
        cast(r)
    }
    fn texture_view<'a>(&self, r: &'a dyn DynTextureView) -> Option<&'a A::TextureView> {
        cast(r)
    }
    fn sampler<'a>(&self, r: &'a dyn DynSampler) -> Option<&'a A::Sampler> {
        cast(r)
    }
    fn bind_group_layout<'a>(
        &self,
        r: &'a dyn DynBindGroupLayout,
    ) -> Option<&'a A::BindGroupLayout> {
        cast(r)
    }
    fn pipeline_layout<'a>(&self, r: &'a dyn DynPipelineLayout) -> Option<&'a A::PipelineLayout> {
        cast(r)
    }
    fn shader_module<'a>(&self, r: &'a dyn DynShaderModule) -> Option<&'a A::ShaderModule> {
        cast(r)
    }
    fn acceleration_structure<'a>(
        &self,
        r: &'a dyn DynAccelerationStructure,
    ) -> Option<&'a A::AccelerationStructure> {
        cast(r)
    }
    fn pipeline_cache<'a>(&self, r: &'a dyn DynPipelineCache) -> Option<&'a A::PipelineCache> {
        cast(r)
    }
}

/// From [`DynApi`]'s boxes to the dyn objects inside. Never fails.
pub(crate) struct Unbox;

impl Convert<DynApi, DynResources> for Unbox {
    fn buffer<'a>(&self, r: &'a Box<dyn DynBuffer>) -> Option<&'a dyn DynBuffer> {
        Some(&**r)
    }
    fn texture_view<'a>(&self, r: &'a Box<dyn DynTextureView>) -> Option<&'a dyn DynTextureView> {
        Some(&**r)
    }
    fn sampler<'a>(&self, r: &'a Box<dyn DynSampler>) -> Option<&'a dyn DynSampler> {
        Some(&**r)
    }
    fn bind_group_layout<'a>(
        &self,
        r: &'a Box<dyn DynBindGroupLayout>,
    ) -> Option<&'a dyn DynBindGroupLayout> {
        Some(&**r)
    }
    fn pipeline_layout<'a>(
        &self,
        r: &'a Box<dyn DynPipelineLayout>,
    ) -> Option<&'a dyn DynPipelineLayout> {
        Some(&**r)
    }
    fn shader_module<'a>(
        &self,
        r: &'a Box<dyn DynShaderModule>,
    ) -> Option<&'a dyn DynShaderModule> {
        Some(&**r)
    }
    fn acceleration_structure<'a>(
        &self,
        r: &'a Box<dyn DynAccelerationStructure>,
    ) -> Option<&'a dyn DynAccelerationStructure> {
        Some(&**r)
    }
    fn pipeline_cache<'a>(
        &self,
        r: &'a Box<dyn DynPipelineCache>,
    ) -> Option<&'a dyn DynPipelineCache> {
        Some(&**r)
    }
}

const FOREIGN: ConvertError = ConvertError::Foreign;

fn buffer_binding<'a, R, T, C>(
    c: &C,
    b: &BufferBinding<'a, R::Buffer>,
) -> Result<BufferBinding<'a, T::Buffer>, ConvertError>
where
    R: Resources + ?Sized,
    T: Resources + ?Sized,
    C: Convert<R, T>,
{
    Ok(BufferBinding {
        buffer: c.buffer(b.buffer).ok_or(FOREIGN)?,
        offset: b.offset,
        size: b.size,
    })
}

/// Converts a bind group descriptor and hands it to `then`.
pub(crate) fn bind_group<R, T, C, X>(
    desc: &BindGroupDescriptor<'_, R>,
    c: &C,
    then: impl FnOnce(&BindGroupDescriptor<'_, T>) -> X,
) -> Result<X, ConvertError>
where
    R: Resources + ?Sized,
    T: Resources + ?Sized,
    C: Convert<R, T>,
{
    let layout = c.bind_group_layout(desc.layout).ok_or(FOREIGN)?;
    // Array elements first, flattened, so entries can point into them.
    let (mut nb, mut ns, mut nv, mut na) = (0, 0, 0, 0);
    for entry in desc.entries {
        match entry.resource {
            BindingResource::BufferArray(list) => nb += list.len(),
            BindingResource::SamplerArray(list) => ns += list.len(),
            BindingResource::TextureViewArray(list) => nv += list.len(),
            BindingResource::AccelerationStructureArray(list) => na += list.len(),
            _ => {}
        }
    }
    let mut buffers = List::<BufferBinding<'_, T::Buffer>, 8>::try_with_capacity(nb)?;
    let mut samplers = List::<&T::Sampler, 8>::try_with_capacity(ns)?;
    let mut views = List::<&T::TextureView, 8>::try_with_capacity(nv)?;
    let mut structures = List::<&T::AccelerationStructure, 8>::try_with_capacity(na)?;
    for entry in desc.entries {
        match entry.resource {
            BindingResource::BufferArray(list) => {
                for b in list {
                    buffers.try_push(buffer_binding(c, b)?)?;
                }
            }
            BindingResource::SamplerArray(list) => {
                for &s in list {
                    samplers.try_push(c.sampler(s).ok_or(FOREIGN)?)?;
                }
            }
            BindingResource::TextureViewArray(list) => {
                for &v in list {
                    views.try_push(c.texture_view(v).ok_or(FOREIGN)?)?;
                }
            }
            BindingResource::AccelerationStructureArray(list) => {
                for &a in list {
                    structures.try_push(c.acceleration_structure(a).ok_or(FOREIGN)?)?;
                }
            }
            _ => {}
        }
    }
    let (buffers, samplers, views) = (buffers.as_slice(), samplers.as_slice(), views.as_slice());
    let structures = structures.as_slice();
    let (mut ib, mut is, mut iv, mut ia) = (0, 0, 0, 0);
    // Each array's elements, in the order they were flattened.
    fn take(at: &mut usize, len: usize) -> std::ops::Range<usize> {
        let range = *at..*at + len;
        *at += len;
        range
    }
    let mut entries = List::<BindGroupEntry<'_, T>, 16>::try_with_capacity(desc.entries.len())?;
    for entry in desc.entries {
        let resource = match entry.resource {
            BindingResource::Buffer(ref b) => BindingResource::Buffer(buffer_binding(c, b)?),
            BindingResource::BufferArray(list) => {
                BindingResource::BufferArray(&buffers[take(&mut ib, list.len())])
            }
            BindingResource::Sampler(s) => BindingResource::Sampler(c.sampler(s).ok_or(FOREIGN)?),
            BindingResource::SamplerArray(list) => {
                BindingResource::SamplerArray(&samplers[take(&mut is, list.len())])
            }
            BindingResource::TextureView(v) => {
                BindingResource::TextureView(c.texture_view(v).ok_or(FOREIGN)?)
            }
            BindingResource::TextureViewArray(list) => {
                BindingResource::TextureViewArray(&views[take(&mut iv, list.len())])
            }
            BindingResource::AccelerationStructure(a) => {
                BindingResource::AccelerationStructure(c.acceleration_structure(a).ok_or(FOREIGN)?)
            }
            BindingResource::AccelerationStructureArray(list) => {
                BindingResource::AccelerationStructureArray(&structures[take(&mut ia, list.len())])
            }
        };
        entries.try_push(BindGroupEntry {
            binding: entry.binding,
            resource,
        })?;
    }
    Ok(then(&BindGroupDescriptor {
        label: desc.label,
        layout,
        entries: entries.as_slice(),
    }))
}

/// Converts a pipeline layout descriptor and hands it to `then`.
pub(crate) fn pipeline_layout<R, T, C, X>(
    desc: &PipelineLayoutDescriptor<'_, R>,
    c: &C,
    then: impl FnOnce(&PipelineLayoutDescriptor<'_, T>) -> X,
) -> Result<X, ConvertError>
where
    R: Resources + ?Sized,
    T: Resources + ?Sized,
    C: Convert<R, T>,
{
    let mut layouts =
        List::<&T::BindGroupLayout, 8>::try_with_capacity(desc.bind_group_layouts.len())?;
    for &layout in desc.bind_group_layouts {
        layouts.try_push(c.bind_group_layout(layout).ok_or(FOREIGN)?)?;
    }
    Ok(then(&PipelineLayoutDescriptor {
        label: desc.label,
        bind_group_layouts: layouts.as_slice(),
        push_constant_ranges: desc.push_constant_ranges,
    }))
}

fn stage<'a, R, T, C>(
    c: &C,
    s: &ProgrammableStage<'a, R>,
) -> Result<ProgrammableStage<'a, T>, ConvertError>
where
    R: Resources + ?Sized,
    T: Resources + ?Sized,
    C: Convert<R, T>,
{
    Ok(ProgrammableStage {
        module: c.shader_module(s.module).ok_or(FOREIGN)?,
        entry_point: s.entry_point,
        constants: s.constants,
    })
}

/// Converts a pipeline's optional cache.
fn cache<'a, R, T, C>(
    c: &C,
    cache: Option<&'a R::PipelineCache>,
) -> Result<Option<&'a T::PipelineCache>, ConvertError>
where
    R: Resources + ?Sized,
    T: Resources + ?Sized,
    C: Convert<R, T>,
{
    match cache {
        Some(r) => Ok(Some(c.pipeline_cache(r).ok_or(FOREIGN)?)),
        None => Ok(None),
    }
}

/// Converts a compute pipeline descriptor.
pub(crate) fn compute_pipeline<'a, R, T, C>(
    desc: &ComputePipelineDescriptor<'a, R>,
    c: &C,
) -> Result<ComputePipelineDescriptor<'a, T>, ConvertError>
where
    R: Resources + ?Sized,
    T: Resources + ?Sized,
    C: Convert<R, T>,
{
    Ok(ComputePipelineDescriptor {
        label: desc.label,
        layout: c.pipeline_layout(desc.layout).ok_or(FOREIGN)?,
        stage: stage(c, &desc.stage)?,
        cache: cache(c, desc.cache)?,
    })
}

/// Converts a render pipeline descriptor.
pub(crate) fn render_pipeline<'a, R, T, C>(
    desc: &RenderPipelineDescriptor<'a, R>,
    c: &C,
) -> Result<RenderPipelineDescriptor<'a, T>, ConvertError>
where
    R: Resources + ?Sized,
    T: Resources + ?Sized,
    C: Convert<R, T>,
{
    let fragment_stage = match &desc.fragment_stage {
        Some(s) => Some(stage(c, s)?),
        None => None,
    };
    Ok(RenderPipelineDescriptor {
        label: desc.label,
        layout: c.pipeline_layout(desc.layout).ok_or(FOREIGN)?,
        vertex_buffers: desc.vertex_buffers,
        vertex_stage: stage(c, &desc.vertex_stage)?,
        primitive: desc.primitive,
        depth_stencil: desc.depth_stencil.clone(),
        multisample: desc.multisample,
        fragment_stage,
        color_targets: desc.color_targets,
        multiview_mask: desc.multiview_mask,
        cache: cache(c, desc.cache)?,
    })
}

/// Converts a mesh pipeline descriptor.
pub(crate) fn mesh_pipeline<'a, R, T, C>(
    desc: &MeshPipelineDescriptor<'a, R>,
    c: &C,
) -> Result<MeshPipelineDescriptor<'a, T>, ConvertError>
where
    R: Resources + ?Sized,
    T: Resources + ?Sized,
    C: Convert<R, T>,
{
    let optional = |s: &Option<ProgrammableStage<'a, R>>| match s {
        Some(s) => stage(c, s).map(Some),
        None => Ok(None),
    };
    Ok(MeshPipelineDescriptor {
        label: desc.label,
        layout: c.pipeline_layout(desc.layout).ok_or(FOREIGN)?,
        task_stage: optional(&desc.task_stage)?,
        mesh_stage: stage(c, &desc.mesh_stage)?,
        primitive: desc.primitive,
        depth_stencil: desc.depth_stencil.clone(),
        multisample: desc.multisample,
        fragment_stage: optional(&desc.fragment_stage)?,
        color_targets: desc.color_targets,
        multiview_mask: desc.multiview_mask,
        cache: cache(c, desc.cache)?,
    })
}

fn attachment<'a, R, T, C>(
    c: &C,
    a: &Attachment<'a, R::TextureView>,
) -> Result<Attachment<'a, T::TextureView>, ConvertError>
where
    R: Resources + ?Sized,
    T: Resources + ?Sized,
    C: Convert<R, T>,
{
    Ok(Attachment {
        view: c.texture_view(a.view).ok_or(FOREIGN)?,
        usage: a.usage,
    })
}

/// Converts a render pass descriptor (up to 8 colour attachments inline)
/// and hands it to `then`.
pub(crate) fn render_pass<R, T, C, X>(
    desc: &RenderPassDescriptor<'_, R>,
    c: &C,
    then: impl FnOnce(&RenderPassDescriptor<'_, T>) -> X,
) -> Result<X, ConvertError>
where
    R: Resources + ?Sized,
    T: Resources + ?Sized,
    C: Convert<R, T>,
{
    let mut colors = List::<Option<ColorAttachment<'_, T::TextureView>>, 8>::try_with_capacity(
        desc.color_attachments.len(),
    )?;
    for slot in desc.color_attachments {
        let converted = match slot {
            Some(a) => Some(ColorAttachment {
                target: attachment(c, &a.target)?,
                resolve_target: match &a.resolve_target {
                    Some(r) => Some(attachment(c, r)?),
                    None => None,
                },
                ops: a.ops,
                clear_value: a.clear_value,
            }),
            None => None,
        };
        colors.try_push(converted)?;
    }
    let depth_stencil_attachment = match &desc.depth_stencil_attachment {
        Some(ds) => Some(DepthStencilAttachment {
            target: attachment(c, &ds.target)?,
            depth_ops: ds.depth_ops,
            stencil_ops: ds.stencil_ops,
            clear_value: ds.clear_value,
        }),
        None => None,
    };
    Ok(then(&RenderPassDescriptor {
        label: desc.label,
        extent: desc.extent,
        sample_count: desc.sample_count,
        color_attachments: colors.as_slice(),
        depth_stencil_attachment,
        multiview_mask: desc.multiview_mask,
    }))
}

/// Converts a ray-tracing pipeline descriptor (up to 8 stages inline) and
/// hands it to `then`.
pub(crate) fn ray_tracing_pipeline<R, T, C, X>(
    desc: &RayTracingPipelineDescriptor<'_, R>,
    c: &C,
    then: impl FnOnce(&RayTracingPipelineDescriptor<'_, T>) -> X,
) -> Result<X, ConvertError>
where
    R: Resources + ?Sized,
    T: Resources + ?Sized,
    C: Convert<R, T>,
{
    let mut stages = List::<RayTracingStage<'_, T>, 8>::try_with_capacity(desc.stages.len())?;
    for s in desc.stages {
        stages.try_push(RayTracingStage {
            kind: s.kind,
            stage: stage(c, &s.stage)?,
        })?;
    }
    Ok(then(&RayTracingPipelineDescriptor {
        label: desc.label,
        layout: c.pipeline_layout(desc.layout).ok_or(FOREIGN)?,
        stages: stages.as_slice(),
        groups: desc.groups,
        max_recursion_depth: desc.max_recursion_depth,
        cache: cache(c, desc.cache)?,
    }))
}

/// Converts an acceleration structure descriptor (its placement buffer).
pub(crate) fn acceleration_structure<'a, R, T, C>(
    desc: &AccelerationStructureDescriptor<'a, R>,
    c: &C,
) -> Result<AccelerationStructureDescriptor<'a, T>, ConvertError>
where
    R: Resources + ?Sized,
    T: Resources + ?Sized,
    C: Convert<R, T>,
{
    let placement = match desc.placement {
        AccelerationStructurePlacement::Owned => AccelerationStructurePlacement::Owned,
        AccelerationStructurePlacement::InBuffer { buffer, offset } => {
            AccelerationStructurePlacement::InBuffer {
                buffer: c.buffer(buffer).ok_or(FOREIGN)?,
                offset,
            }
        }
    };
    Ok(AccelerationStructureDescriptor {
        label: desc.label,
        kind: desc.kind,
        size: desc.size,
        placement,
    })
}

/// Converts a build-size query (its geometry) and hands it to `then`.
pub(crate) fn build_sizes<R, T, C, X>(
    desc: &GetAccelerationStructureBuildSizesDescriptor<'_, R>,
    c: &C,
    then: impl FnOnce(&GetAccelerationStructureBuildSizesDescriptor<'_, T>) -> X,
) -> Result<X, ConvertError>
where
    R: Resources + ?Sized,
    T: Resources + ?Sized,
    C: Convert<R, T>,
{
    let geometries = Geometries::new(std::iter::once(desc.entries), c)?;
    let entries = geometries.entries(desc.entries, &mut (0, 0), c)?;
    Ok(then(&GetAccelerationStructureBuildSizesDescriptor {
        entries: &entries,
        flags: desc.flags,
    }))
}

/// Converts the descriptors of one `build_acceleration_structures` call
/// (up to 8 descriptors and 8 geometries of each kind inline) and hands
/// them to `then`.
pub(crate) fn build_acceleration_structures<R, T, C, X>(
    descs: &[BuildAccelerationStructureDescriptor<'_, R>],
    c: &C,
    then: impl FnOnce(&[BuildAccelerationStructureDescriptor<'_, T>]) -> X,
) -> Result<X, ConvertError>
where
    R: Resources + ?Sized,
    T: Resources + ?Sized,
    C: Convert<R, T>,
{
    let geometries = Geometries::new(descs.iter().map(|d| d.entries), c)?;
    let mut entries =
        List::<AccelerationStructureEntries<'_, T::Buffer>, 8>::try_with_capacity(descs.len())?;
    let mut at = (0, 0);
    for d in descs {
        entries.try_push(geometries.entries(d.entries, &mut at, c)?)?;
    }
    let entries = entries.as_slice();
    let mut own =
        List::<BuildAccelerationStructureDescriptor<'_, T>, 8>::try_with_capacity(descs.len())?;
    for (d, entries) in descs.iter().zip(entries) {
        let source = match d.source_acceleration_structure {
            Some(s) => Some(c.acceleration_structure(s).ok_or(FOREIGN)?),
            None => None,
        };
        own.try_push(BuildAccelerationStructureDescriptor {
            entries,
            mode: d.mode,
            flags: d.flags,
            source_acceleration_structure: source,
            destination_acceleration_structure: c
                .acceleration_structure(d.destination_acceleration_structure)
                .ok_or(FOREIGN)?,
            scratch_buffer: c.buffer(d.scratch_buffer).ok_or(FOREIGN)?,
            scratch_buffer_offset: d.scratch_buffer_offset,
        })?;
    }
    Ok(then(own.as_slice()))
}

/// The triangle and box geometries of several build inputs, converted and
/// flattened, so that each converted input can point into them.
struct Geometries<'a, B: ?Sized> {
    triangles: List<AccelerationStructureTriangles<'a, B>, 8>,
    aabbs: List<AccelerationStructureAabbs<'a, B>, 8>,
}

impl<'a, B: ?Sized> Geometries<'a, B> {
    fn new<'d, R, T, C>(
        all: impl Iterator<Item = &'d AccelerationStructureEntries<'a, R::Buffer>> + Clone,
        c: &C,
    ) -> Result<Self, ConvertError>
    where
        'a: 'd,
        R: Resources + ?Sized + 'd,
        R::Buffer: 'a,
        T: Resources<Buffer = B> + ?Sized,
        C: Convert<R, T>,
    {
        let (mut nt, mut na) = (0, 0);
        for entries in all.clone() {
            match entries {
                AccelerationStructureEntries::Triangles(list) => nt += list.len(),
                AccelerationStructureEntries::Aabbs(list) => na += list.len(),
                AccelerationStructureEntries::Instances(_) => {}
            }
        }
        let mut triangles = List::try_with_capacity(nt)?;
        let mut aabbs = List::try_with_capacity(na)?;
        for entries in all {
            match entries {
                AccelerationStructureEntries::Triangles(list) => {
                    for g in *list {
                        triangles.try_push(self::triangles(c, g)?)?;
                    }
                }
                AccelerationStructureEntries::Aabbs(list) => {
                    for g in *list {
                        aabbs.try_push(AccelerationStructureAabbs {
                            buffer: optional(c, g.buffer)?,
                            offset: g.offset,
                            count: g.count,
                            stride: g.stride,
                            flags: g.flags,
                        })?;
                    }
                }
                AccelerationStructureEntries::Instances(_) => {}
            }
        }
        Ok(Self { triangles, aabbs })
    }

    /// The converted form of `entries`, whose geometries start at `at`
    /// (triangles, boxes) in the flattened lists; advances `at` past them.
    fn entries<'g, R, T, C>(
        &'g self,
        entries: &AccelerationStructureEntries<'a, R::Buffer>,
        at: &mut (usize, usize),
        c: &C,
    ) -> Result<AccelerationStructureEntries<'g, B>, ConvertError>
    where
        R: Resources + ?Sized,
        T: Resources<Buffer = B> + ?Sized,
        C: Convert<R, T>,
    {
        Ok(match entries {
            AccelerationStructureEntries::Triangles(list) => {
                let range = at.0..at.0 + list.len();
                at.0 = range.end;
                // `new` flattened these very inputs in this order, so the
                // range is always inside; `get` keeps that a non-panicking fact.
                let slice = self.triangles.as_slice().get(range).ok_or(FOREIGN)?;
                AccelerationStructureEntries::Triangles(slice)
            }
            AccelerationStructureEntries::Aabbs(list) => {
                let range = at.1..at.1 + list.len();
                at.1 = range.end;
                // `new` flattened these very inputs in this order, so the
                // range is always inside; `get` keeps that a non-panicking fact.
                let slice = self.aabbs.as_slice().get(range).ok_or(FOREIGN)?;
                AccelerationStructureEntries::Aabbs(slice)
            }
            AccelerationStructureEntries::Instances(i) => {
                AccelerationStructureEntries::Instances(AccelerationStructureInstances {
                    buffer: optional(c, i.buffer)?,
                    offset: i.offset,
                    count: i.count,
                })
            }
        })
    }
}

/// Converts a buffer that may be absent (size queries name none).
fn optional<'a, R, T, C>(
    c: &C,
    buffer: Option<&'a R::Buffer>,
) -> Result<Option<&'a T::Buffer>, ConvertError>
where
    R: Resources + ?Sized,
    T: Resources + ?Sized,
    C: Convert<R, T>,
{
    match buffer {
        Some(b) => Ok(Some(c.buffer(b).ok_or(FOREIGN)?)),
        None => Ok(None),
    }
}

fn triangles<'a, R, T, C>(
    c: &C,
    g: &AccelerationStructureTriangles<'a, R::Buffer>,
) -> Result<AccelerationStructureTriangles<'a, T::Buffer>, ConvertError>
where
    R: Resources + ?Sized,
    T: Resources + ?Sized,
    C: Convert<R, T>,
{
    let indices = match &g.indices {
        Some(i) => Some(TriangleIndices {
            buffer: optional(c, i.buffer)?,
            offset: i.offset,
            format: i.format,
            count: i.count,
        }),
        None => None,
    };
    let transform = match g.transform {
        Some((buffer, offset)) => Some((c.buffer(buffer).ok_or(FOREIGN)?, offset)),
        None => None,
    };
    Ok(AccelerationStructureTriangles {
        vertex_buffer: optional(c, g.vertex_buffer)?,
        vertex_offset: g.vertex_offset,
        vertex_format: g.vertex_format,
        vertex_stride: g.vertex_stride,
        vertex_count: g.vertex_count,
        indices,
        transform,
        flags: g.flags,
    })
}
