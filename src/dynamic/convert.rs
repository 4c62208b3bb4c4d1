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

use arrayvec::ArrayVec;

use super::{
    cast, DynBindGroupLayout, DynBuffer, DynPipelineLayout, DynResources, DynSampler,
    DynShaderModule, DynTextureView,
};
use crate::{
    Api, Attachment, BindGroupDescriptor, BindGroupEntry, BindingResource, BufferBinding,
    ColorAttachment, ComputePipelineDescriptor, DepthStencilAttachment, DeviceError, DynApi,
    PipelineLayoutDescriptor, ProgrammableStage, RenderPassDescriptor, RenderPipelineDescriptor,
    Resources,
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

/// A list kept inline for up to `N` items, on the heap beyond.
pub(crate) enum List<T, const N: usize> {
    Inline(ArrayVec<T, N>),
    Heap(Vec<T>),
}

impl<T, const N: usize> List<T, N> {
    /// An empty list with room for `capacity` items.
    pub(crate) fn with_capacity(capacity: usize) -> Result<Self, ConvertError> {
        if capacity <= N {
            return Ok(Self::Inline(ArrayVec::new()));
        }
        let mut heap = Vec::new();
        heap.try_reserve_exact(capacity)
            .map_err(|_| ConvertError::OutOfMemory)?;
        Ok(Self::Heap(heap))
    }

    /// Appends an item (moving to the heap if the inline room runs out).
    pub(crate) fn push(&mut self, item: T) -> Result<(), ConvertError> {
        match self {
            Self::Inline(inline) => {
                if let Err(full) = inline.try_push(item) {
                    let mut heap = Vec::new();
                    heap.try_reserve_exact(N + 1)
                        .map_err(|_| ConvertError::OutOfMemory)?;
                    heap.extend(inline.drain(..));
                    heap.push(full.element());
                    *self = Self::Heap(heap);
                }
            }
            Self::Heap(heap) => {
                heap.try_reserve(1).map_err(|_| ConvertError::OutOfMemory)?;
                heap.push(item);
            }
        }
        Ok(())
    }

    /// The items.
    pub(crate) fn as_slice(&self) -> &[T] {
        match self {
            Self::Inline(inline) => inline,
            Self::Heap(heap) => heap,
        }
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
    let (mut nb, mut ns, mut nv) = (0, 0, 0);
    for entry in desc.entries {
        match entry.resource {
            BindingResource::BufferArray(list) => nb += list.len(),
            BindingResource::SamplerArray(list) => ns += list.len(),
            BindingResource::TextureViewArray(list) => nv += list.len(),
            _ => {}
        }
    }
    let mut buffers = List::<BufferBinding<'_, T::Buffer>, 8>::with_capacity(nb)?;
    let mut samplers = List::<&T::Sampler, 8>::with_capacity(ns)?;
    let mut views = List::<&T::TextureView, 8>::with_capacity(nv)?;
    for entry in desc.entries {
        match entry.resource {
            BindingResource::BufferArray(list) => {
                for b in list {
                    buffers.push(buffer_binding(c, b)?)?;
                }
            }
            BindingResource::SamplerArray(list) => {
                for &s in list {
                    samplers.push(c.sampler(s).ok_or(FOREIGN)?)?;
                }
            }
            BindingResource::TextureViewArray(list) => {
                for &v in list {
                    views.push(c.texture_view(v).ok_or(FOREIGN)?)?;
                }
            }
            _ => {}
        }
    }
    let (buffers, samplers, views) = (buffers.as_slice(), samplers.as_slice(), views.as_slice());
    let (mut ib, mut is, mut iv) = (0, 0, 0);
    // Each array's elements, in the order they were flattened.
    fn take(at: &mut usize, len: usize) -> std::ops::Range<usize> {
        let range = *at..*at + len;
        *at += len;
        range
    }
    let mut entries = List::<BindGroupEntry<'_, T>, 16>::with_capacity(desc.entries.len())?;
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
        };
        entries.push(BindGroupEntry {
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
    let mut layouts = List::<&T::BindGroupLayout, 8>::with_capacity(desc.bind_group_layouts.len())?;
    for &layout in desc.bind_group_layouts {
        layouts.push(c.bind_group_layout(layout).ok_or(FOREIGN)?)?;
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
    })
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
    let mut colors = List::<Option<ColorAttachment<'_, T::TextureView>>, 8>::with_capacity(
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
        colors.push(converted)?;
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
    }))
}
