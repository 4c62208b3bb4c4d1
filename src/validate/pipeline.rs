//! Render-pipeline state checked against the features the device was
//! opened with, the same on every backend: polygon modes, unclipped depth
//! and conservative rasterization each need their feature.

use crate::PipelineError;

/// `primitive` needs only features in `enabled`.
pub(crate) fn check_primitive(
    enabled: wgt::Features,
    primitive: &wgt::PrimitiveState,
) -> Result<(), PipelineError> {
    use wgt::Features as F;
    let needs = [
        (
            primitive.polygon_mode == wgt::PolygonMode::Line,
            "polygon mode Line",
            F::POLYGON_MODE_LINE,
        ),
        (
            primitive.polygon_mode == wgt::PolygonMode::Point,
            "polygon mode Point",
            F::POLYGON_MODE_POINT,
        ),
        (
            primitive.unclipped_depth,
            "unclipped depth",
            F::DEPTH_CLIP_CONTROL,
        ),
        (
            primitive.conservative,
            "conservative rasterization",
            F::CONSERVATIVE_RASTERIZATION,
        ),
    ];
    match needs
        .into_iter()
        .find(|&(used, _, feature)| used && !enabled.contains(feature))
    {
        Some((_, what, feature)) => Err(PipelineError::MissingFeature { what, feature }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_state_needs_its_feature() {
        let with = |f: fn(&mut wgt::PrimitiveState)| {
            let mut p = wgt::PrimitiveState::default();
            f(&mut p);
            p
        };
        let line = with(|p| p.polygon_mode = wgt::PolygonMode::Line);
        let point = with(|p| p.polygon_mode = wgt::PolygonMode::Point);
        let unclipped = with(|p| p.unclipped_depth = true);
        let conservative = with(|p| p.conservative = true);
        let none = wgt::Features::empty();
        assert_eq!(
            check_primitive(none, &wgt::PrimitiveState::default()),
            Ok(())
        );
        for (state, feature) in [
            (line, wgt::Features::POLYGON_MODE_LINE),
            (point, wgt::Features::POLYGON_MODE_POINT),
            (unclipped, wgt::Features::DEPTH_CLIP_CONTROL),
            (conservative, wgt::Features::CONSERVATIVE_RASTERIZATION),
        ] {
            assert!(matches!(
                check_primitive(none, &state),
                Err(PipelineError::MissingFeature { feature: f, .. }) if f == feature
            ));
            assert_eq!(check_primitive(feature, &state), Ok(()));
        }
    }
}
