//! The cheap checks every backend makes, written once: each is a pure
//! function of a description and of what the resources it names are (their
//! usage, format, size, …), with no driver call. The noop and Vulkan
//! backends call the same functions, so a descriptor that passes on noop
//! passes the same checks on Vulkan and a mistake is the same typed error
//! on both. What needs the driver (format support, memory requirements)
//! stays in the backends. One file per kind of object checked
//! (`ARCHITECTURE.md`'s map lists them).
//!
//! A backend tells the checks what its resources are through [`Facts`].

pub(crate) mod acceleration;
pub(crate) mod binding;
pub(crate) mod buffer;
pub(crate) mod clear;
pub(crate) mod draw;
pub(crate) mod external;
pub(crate) mod layout;
pub(crate) mod multiview;
pub(crate) mod pipeline;
pub(crate) mod pipeline_cache;
pub(crate) mod query;
pub(crate) mod sampler;
pub(crate) mod texture;
pub(crate) mod view;

/// What the checks need to know about a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BufferFacts {
    /// Size in bytes.
    pub(crate) size: u64,
    /// The usages it was created with.
    pub(crate) usage: wgt::BufferUsages,
}

/// What the checks need to know about a texture (for its views).
#[derive(Clone, Copy, Debug)]
pub(crate) struct TextureFacts<'a> {
    /// Texel format.
    pub(crate) format: wgt::TextureFormat,
    /// Dimension.
    pub(crate) dimension: wgt::TextureDimension,
    /// Extent of mip 0.
    pub(crate) size: wgt::Extent3d,
    /// Mip levels.
    pub(crate) mip_level_count: u32,
    /// Samples per texel.
    pub(crate) sample_count: u32,
    /// The usages it was created with.
    pub(crate) usage: wgt::TextureUsages,
    /// Formats its views may have besides its own.
    pub(crate) view_formats: &'a [wgt::TextureFormat],
}

impl TextureFacts<'_> {
    /// Array layers (1 for a 3D texture, whose third size is depth).
    pub(crate) fn layer_count(&self) -> u32 {
        match self.dimension {
            wgt::TextureDimension::D3 => 1,
            _ => self.size.depth_or_array_layers,
        }
    }
}

/// What the checks need to know about a texture view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ViewFacts {
    /// The view's format.
    pub(crate) format: wgt::TextureFormat,
    /// The view's dimension.
    pub(crate) dimension: wgt::TextureViewDimension,
    /// The aspect it shows.
    pub(crate) aspect: wgt::TextureAspect,
    /// Its texture's sample count.
    pub(crate) sample_count: u32,
    /// The usages the view may serve: its texture's, less those its format
    /// cannot serve (an sRGB view of a storage texture is not a storage view).
    pub(crate) usage: wgt::TextureUsages,
    /// Its array layers (multiview passes need one per view).
    pub(crate) layers: u32,
    /// What its texels read as in a shader, for the device's features
    /// (`None`: a view of both aspects of a depth-stencil format). Worked
    /// out when the view is made ([`view_sample_type`]).
    pub(crate) sample_type: Option<wgt::TextureSampleType>,
    /// What it can be bound as ([`binding::ViewKey::of`] of the above, worked
    /// out when the view is made).
    pub(crate) key: binding::ViewKey,
}

/// What a view of `format` showing `aspect` reads as in a shader on a
/// device with `features` (`None`: both aspects of a depth-stencil format).
pub(crate) fn view_sample_type(
    format: wgt::TextureFormat,
    aspect: wgt::TextureAspect,
    features: wgt::Features,
) -> Option<wgt::TextureSampleType> {
    format.sample_type(Some(aspect), Some(features))
}

/// What the checks need to know about a sampler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SamplerFacts {
    /// It compares (a `compare` function was given).
    pub(crate) comparison: bool,
    /// Some filter is linear.
    pub(crate) filtering: bool,
}

impl SamplerFacts {
    /// The facts of a sampler made from `desc`.
    pub(crate) fn of(desc: &crate::SamplerDescriptor) -> Self {
        Self {
            comparison: desc.compare.is_some(),
            filtering: desc.mag_filter == wgt::FilterMode::Linear
                || desc.min_filter == wgt::FilterMode::Linear
                || desc.mipmap_filter == wgt::MipmapFilterMode::Linear,
        }
    }
}

/// How a backend's resources describe themselves to the checks.
pub(crate) trait Facts: crate::Api {
    /// A buffer's size and usage.
    fn buffer(buffer: &Self::Buffer) -> BufferFacts;
    /// A view's format, dimension, aspect, samples and usage.
    fn view(view: &Self::TextureView) -> ViewFacts;
    /// A sampler's kind.
    fn sampler(sampler: &Self::Sampler) -> SamplerFacts;
    /// An acceleration structure's level.
    fn structure_kind(structure: &Self::AccelerationStructure) -> crate::AccelerationStructureKind;
}

/// The names of the flags in `flags`, `A | B`, or `none`: for messages.
pub(crate) fn flag_names<F: bitflags::Flags>(flags: F) -> String {
    let names: Vec<&str> = flags.iter_names().map(|(name, _)| name).collect();
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(" | ")
    }
}
