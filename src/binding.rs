//! Bind group layouts, bind groups and pipeline layouts: what shaders see.
//!
//! Descriptors are generic over a [`Resources`] family, so the same structs
//! serve a backend's own types (`A: Api`) and the dyn path ([`DynResources`]).

use std::num::NonZeroU64;
use std::ops::Range;

use crate::Resources;

bitflags::bitflags! {
    /// Options of a bind group layout.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct BindGroupLayoutFlags: u32 {
        /// Bindings may be updated after the group is bound (Vulkan:
        /// UPDATE_AFTER_BIND; needs descriptor indexing). Binding arrays of such
        /// layouts may also be partially bound.
        const UPDATE_AFTER_BIND = 1 << 0;
    }
}

/// Describes a bind group layout.
#[derive(Clone, Debug, Default)]
pub struct BindGroupLayoutDescriptor<'a> {
    /// Debug label.
    pub label: Option<&'a str>,
    /// Options.
    pub flags: BindGroupLayoutFlags,
    /// The bindings, each with its type, visibility and array count.
    pub entries: &'a [wgt::BindGroupLayoutEntry],
}

impl<'a> BindGroupLayoutDescriptor<'a> {
    /// A layout of `entries` (see [`crate::layout`] for short entry
    /// constructors), no label, no flags.
    pub fn new(entries: &'a [wgt::BindGroupLayoutEntry]) -> Self {
        Self {
            label: None,
            flags: BindGroupLayoutFlags::empty(),
            entries,
        }
    }
}

/// A range of a buffer bound to a shader.
#[derive(Debug)]
pub struct BufferBinding<'a, B: ?Sized> {
    /// The buffer.
    pub buffer: &'a B,
    /// Start of the range in bytes.
    pub offset: u64,
    /// Length of the range; `None` binds to the end of the buffer.
    pub size: Option<NonZeroU64>,
}

impl<B: ?Sized> Clone for BufferBinding<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<B: ?Sized> Copy for BufferBinding<'_, B> {}

impl<'a, B: ?Sized> BufferBinding<'a, B> {
    /// Binds the whole buffer.
    pub fn whole(buffer: &'a B) -> Self {
        Self {
            buffer,
            offset: 0,
            size: None,
        }
    }
}

/// What one binding of a bind group points at. Each entry carries its
/// resource directly, so two bindings may name the same resource.
#[derive(Debug)]
pub enum BindingResource<'a, R: Resources + ?Sized> {
    /// A uniform or storage buffer range.
    Buffer(BufferBinding<'a, R::Buffer>),
    /// An array of buffer ranges (binding arrays).
    BufferArray(&'a [BufferBinding<'a, R::Buffer>]),
    /// A sampler.
    Sampler(&'a R::Sampler),
    /// An array of samplers.
    SamplerArray(&'a [&'a R::Sampler]),
    /// A sampled or storage texture view.
    TextureView(&'a R::TextureView),
    /// An array of texture views.
    TextureViewArray(&'a [&'a R::TextureView]),
    /// A top-level acceleration structure.
    AccelerationStructure(&'a R::AccelerationStructure),
    /// An array of top-level acceleration structures
    /// (`ACCELERATION_STRUCTURE_BINDING_ARRAY`).
    AccelerationStructureArray(&'a [&'a R::AccelerationStructure]),
}

/// One binding of a bind group.
#[derive(Debug)]
pub struct BindGroupEntry<'a, R: Resources + ?Sized> {
    /// Binding number in the layout.
    pub binding: u32,
    /// What it points at.
    pub resource: BindingResource<'a, R>,
}

impl<'a, R: Resources + ?Sized> BindGroupEntry<'a, R> {
    /// Binding `binding` to the whole of `buffer` (a uniform or storage
    /// buffer binding; see [`BufferBinding::whole`]).
    pub fn buffer(binding: u32, buffer: &'a R::Buffer) -> Self {
        Self {
            binding,
            resource: BindingResource::Buffer(BufferBinding::whole(buffer)),
        }
    }
}

/// Describes a bind group.
#[derive(Debug)]
pub struct BindGroupDescriptor<'a, R: Resources + ?Sized> {
    /// Debug label.
    pub label: Option<&'a str>,
    /// The layout; every binding of it must have exactly one entry.
    pub layout: &'a R::BindGroupLayout,
    /// The entries, in any order.
    pub entries: &'a [BindGroupEntry<'a, R>],
}

impl<'a, R: Resources + ?Sized> BindGroupDescriptor<'a, R> {
    /// A bind group of `layout` with `entries`, no label. (There is no
    /// `Default`: a bind group always names its layout.)
    pub fn new(layout: &'a R::BindGroupLayout, entries: &'a [BindGroupEntry<'a, R>]) -> Self {
        Self {
            label: None,
            layout,
            entries,
        }
    }
}

/// Push-constant (immediate) bytes visible to some shader stages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PushConstantRange {
    /// Stages that read the range.
    pub stages: wgt::ShaderStages,
    /// Byte range; start and end multiples of 4, end at most `max_immediate_size`.
    pub range: Range<u32>,
}

/// Describes a pipeline layout.
#[derive(Debug)]
pub struct PipelineLayoutDescriptor<'a, R: Resources + ?Sized> {
    /// Debug label.
    pub label: Option<&'a str>,
    /// One layout per bind group index, at most `max_bind_groups`.
    pub bind_group_layouts: &'a [&'a R::BindGroupLayout],
    /// Push-constant ranges.
    pub push_constant_ranges: &'a [PushConstantRange],
}

impl<'a, R: Resources + ?Sized> PipelineLayoutDescriptor<'a, R> {
    /// A layout of `bind_group_layouts` (one per group index), no label, no
    /// push constants.
    pub fn new(bind_group_layouts: &'a [&'a R::BindGroupLayout]) -> Self {
        Self {
            label: None,
            bind_group_layouts,
            push_constant_ranges: &[],
        }
    }
}

impl<R: Resources + ?Sized> Default for PipelineLayoutDescriptor<'_, R> {
    /// No label, no bind group layouts, no push constants.
    fn default() -> Self {
        Self {
            label: None,
            bind_group_layouts: &[],
            push_constant_ranges: &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noop::Api as Noop;

    #[test]
    fn descriptor_shortcuts_fill_the_fields() {
        let layout = PipelineLayoutDescriptor::<Noop>::default();
        assert!(layout.label.is_none());
        assert!(layout.bind_group_layouts.is_empty() && layout.push_constant_ranges.is_empty());
        // Any `Resources` family works; `()` stands in for real objects here.
        struct Unit;
        impl Resources for Unit {
            type Buffer = ();
            type Texture = ();
            type TextureView = ();
            type Sampler = ();
            type QuerySet = ();
            type BindGroupLayout = ();
            type PipelineLayout = ();
            type ShaderModule = ();
            type AccelerationStructure = ();
            type PipelineCache = ();
        }
        let entries = [BindGroupEntry::<Unit>::buffer(2, &())];
        assert_eq!(entries[0].binding, 2);
        assert!(matches!(
            entries[0].resource,
            BindingResource::Buffer(BufferBinding {
                offset: 0,
                size: None,
                ..
            })
        ));
        let group = BindGroupDescriptor::<Unit>::new(&(), &entries);
        assert!(group.label.is_none());
        assert_eq!(group.entries.len(), 1);
    }
}
