//! Multiview, the same on every backend: a view mask renders view `i` to
//! layer `i` of every attachment. A mask needs `MULTIVIEW`; one that is
//! not `0..n` (views skipped) needs `SELECTIVE_MULTIVIEW`; its highest view
//! must be below `max_multiview_view_count`, and below the layer count of
//! every attachment of a pass that uses it. A pipeline's mask must be its
//! pass's (checked when the pipeline is set).

use std::num::NonZeroU32;

use crate::PipelineError;

/// Why a view mask is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MaskProblem {
    /// The device was not opened with this feature.
    MissingFeature(&'static str, wgt::Features),
    /// More views than `max_multiview_view_count`.
    TooManyViews {
        /// Views up to the mask's highest bit.
        views: u32,
        /// `max_multiview_view_count`.
        max: u32,
    },
}

impl std::fmt::Display for MaskProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::MissingFeature(what, feature) => write!(f, "{what} needs {feature}"),
            Self::TooManyViews { views, max } => write!(
                f,
                "a view mask up to view {} needs {views} views; max_multiview_view_count is {max}",
                views - 1
            ),
        }
    }
}

impl From<MaskProblem> for PipelineError {
    fn from(p: MaskProblem) -> Self {
        match p {
            MaskProblem::MissingFeature(what, feature) => {
                PipelineError::MissingFeature { what, feature }
            }
            MaskProblem::TooManyViews { .. } => PipelineError::Unsupported(p.to_string()),
        }
    }
}

/// The views `mask` reaches: one past its highest bit (0 without a mask).
pub(crate) fn view_count(mask: Option<NonZeroU32>) -> u32 {
    mask.map_or(0, |m| 32 - m.get().leading_zeros())
}

/// Checks a view mask (see the module docs); returns its bits (0: none).
/// `max_views` is the device's `max_multiview_view_count`.
pub(crate) fn check_view_mask(
    mask: Option<NonZeroU32>,
    features: wgt::Features,
    max_views: u32,
) -> Result<u32, MaskProblem> {
    let Some(bits) = mask.map(NonZeroU32::get) else {
        return Ok(0);
    };
    use wgt::Features as F;
    if !features.contains(F::MULTIVIEW) {
        return Err(MaskProblem::MissingFeature(
            "a multiview mask",
            F::MULTIVIEW,
        ));
    }
    // 0..n: the bits above the lowest clear one are clear too.
    let contiguous = bits & (bits.wrapping_add(1)) == 0;
    if !contiguous && !features.contains(F::SELECTIVE_MULTIVIEW) {
        return Err(MaskProblem::MissingFeature(
            "a multiview mask that skips views",
            F::SELECTIVE_MULTIVIEW,
        ));
    }
    let views = view_count(mask);
    if views > max_views {
        return Err(MaskProblem::TooManyViews {
            views,
            max: max_views,
        });
    }
    Ok(bits)
}

/// Checks a render pass's view mask ([`check_view_mask`]) and that each of
/// its attachments' views has a layer for every view; returns the mask's
/// bits, or what is wrong.
pub(crate) fn check_pass<A: super::Facts>(
    desc: &crate::RenderPassDescriptor<'_, A>,
    features: wgt::Features,
    max_views: u32,
) -> Result<u32, String> {
    let layers = desc
        .color_attachments
        .iter()
        .flatten()
        .map(|a| &a.target)
        .chain(desc.depth_stencil_attachment.as_ref().map(|d| &d.target))
        .map(|a| A::view(a.view).layers);
    check_layers(desc.multiview_mask, features, max_views, layers)
}

/// [`check_pass`] on the attachments' layer counts.
fn check_layers(
    mask: Option<NonZeroU32>,
    features: wgt::Features,
    max_views: u32,
    layers: impl IntoIterator<Item = u32>,
) -> Result<u32, String> {
    let bits = check_view_mask(mask, features, max_views).map_err(|p| p.to_string())?;
    let views = view_count(mask);
    match layers.into_iter().find(|&l| l < views) {
        Some(l) => Err(format!(
            "an attachment view of {l} layer(s) for a view mask of {views} views"
        )),
        None => Ok(bits),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_need_their_features_and_fit_the_limit() {
        use wgt::Features as F;
        let limits = 4;
        let m = NonZeroU32::new;
        assert_eq!(check_view_mask(None, F::empty(), limits), Ok(0));
        assert!(matches!(
            check_view_mask(m(0b11), F::empty(), limits),
            Err(MaskProblem::MissingFeature(_, F::MULTIVIEW))
        ));
        assert_eq!(check_view_mask(m(0b11), F::MULTIVIEW, limits), Ok(0b11));
        assert!(matches!(
            check_view_mask(m(0b10), F::MULTIVIEW, limits),
            Err(MaskProblem::MissingFeature(_, F::SELECTIVE_MULTIVIEW))
        ));
        let both = F::MULTIVIEW | F::SELECTIVE_MULTIVIEW;
        assert_eq!(check_view_mask(m(0b1010), both, limits), Ok(0b1010));
        assert_eq!(
            check_view_mask(m(0b11111), both, limits),
            Err(MaskProblem::TooManyViews { views: 5, max: 4 })
        );
        assert_eq!(view_count(m(0b100)), 3);
        assert_eq!(check_layers(m(0b11), F::MULTIVIEW, 4, [2, 3]), Ok(0b11));
        assert!(check_layers(m(0b11), F::MULTIVIEW, 4, [2, 1]).is_err());
        assert_eq!(check_layers(None, F::empty(), 0, [1]), Ok(0));
    }
}
