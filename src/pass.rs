//! Render and compute pass descriptors.

use crate::{Resources, TextureUses};

bitflags::bitflags! {
    /// What happens to an attachment at the start and end of a pass.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct AttachmentOps: u8 {
        /// Keep the previous contents (otherwise: clear to the clear value).
        const LOAD = 1 << 0;
        /// Store the results (otherwise: contents are undefined afterwards).
        const STORE = 1 << 1;
    }
}

/// A texture view used as an attachment, with the state it is in during the pass.
#[derive(Debug)]
pub struct Attachment<'a, V: ?Sized> {
    /// The view (one mip level; layers as the pass needs).
    pub view: &'a V,
    /// `COLOR_TARGET`, `DEPTH_STENCIL_WRITE` or `DEPTH_STENCIL_READ`.
    pub usage: TextureUses,
}

/// A colour attachment.
#[derive(Debug)]
pub struct ColorAttachment<'a, V: ?Sized> {
    /// Where the pass draws.
    pub target: Attachment<'a, V>,
    /// Where a multisampled target is resolved at the end of the pass.
    pub resolve_target: Option<Attachment<'a, V>>,
    /// Load and store behaviour.
    pub ops: AttachmentOps,
    /// Clear colour, used when `ops` lacks `LOAD`.
    pub clear_value: wgt::Color,
}

/// A depth/stencil attachment.
#[derive(Debug)]
pub struct DepthStencilAttachment<'a, V: ?Sized> {
    /// The depth/stencil view.
    pub target: Attachment<'a, V>,
    /// Depth load/store.
    pub depth_ops: AttachmentOps,
    /// Stencil load/store.
    pub stencil_ops: AttachmentOps,
    /// Clear depth and stencil, used where the ops lack `LOAD`.
    pub clear_value: (f32, u32),
}

/// Describes a render pass.
#[derive(Debug)]
pub struct RenderPassDescriptor<'a, R: Resources + ?Sized> {
    /// Debug label (a debug region around the pass).
    pub label: Option<&'a str>,
    /// Render area (width, height; `depth_or_array_layers` is the layer count).
    pub extent: wgt::Extent3d,
    /// Samples of every attachment.
    pub sample_count: u32,
    /// Colour attachments by slot.
    pub color_attachments: &'a [Option<ColorAttachment<'a, R::TextureView>>],
    /// The depth/stencil attachment.
    pub depth_stencil_attachment: Option<DepthStencilAttachment<'a, R::TextureView>>,
    /// Multiview (`MULTIVIEW`): view `i` of the mask renders to layer `i`
    /// of every attachment's view, which must have a layer for each view;
    /// pipelines used in the pass have the same mask. `None`: one view, as
    /// `extent.depth_or_array_layers` says.
    pub multiview_mask: Option<std::num::NonZeroU32>,
}

/// Describes a compute pass.
#[derive(Clone, Debug, Default)]
pub struct ComputePassDescriptor<'a> {
    /// Debug label (a debug region around the pass).
    pub label: Option<&'a str>,
}

/// A rectangle, for viewports and scissors.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rect<T> {
    /// Left.
    pub x: T,
    /// Top.
    pub y: T,
    /// Width.
    pub w: T,
    /// Height.
    pub h: T,
}
