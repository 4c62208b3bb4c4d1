//! Render-pipeline state checked against the features the device was
//! opened with, the same on every backend: polygon modes, unclipped depth,
//! conservative rasterization and dual-source blend factors each need
//! their feature; mesh pipelines need the mesh-shader features, and their
//! task and mesh workgroups fit the mesh limits.

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

/// Blend factors that read the second blend source need
/// `DUAL_SOURCE_BLENDING`; blending a 32-bit float target needs
/// `FLOAT32_BLENDABLE`.
pub(crate) fn check_blend(
    enabled: wgt::Features,
    targets: &[Option<wgt::ColorTargetState>],
) -> Result<(), PipelineError> {
    let feature = wgt::Features::DUAL_SOURCE_BLENDING;
    let dual = targets.iter().flatten().filter_map(|t| t.blend).any(|b| {
        [
            b.color.src_factor,
            b.color.dst_factor,
            b.alpha.src_factor,
            b.alpha.dst_factor,
        ]
        .iter()
        .any(|f| f.ref_second_blend_source())
    });
    if dual && !enabled.contains(feature) {
        return Err(PipelineError::MissingFeature {
            what: "a blend factor of the second blend source",
            feature,
        });
    }
    use wgt::TextureFormat as T;
    let float32 = targets.iter().flatten().any(|t| {
        t.blend.is_some() && matches!(t.format, T::R32Float | T::Rg32Float | T::Rgba32Float)
    });
    let feature = wgt::Features::FLOAT32_BLENDABLE;
    if float32 && !enabled.contains(feature) {
        return Err(PipelineError::MissingFeature {
            what: "blending a 32-bit float colour target",
            feature,
        });
    }
    Ok(())
}

/// A mesh pipeline needs `EXPERIMENTAL_MESH_SHADER`, and with a view mask
/// `EXPERIMENTAL_MESH_SHADER_MULTIVIEW` (the view mask's own checks are
/// `validate/multiview.rs`'s).
pub(crate) fn check_mesh_pipeline(
    enabled: wgt::Features,
    multiview_mask: Option<std::num::NonZeroU32>,
) -> Result<(), PipelineError> {
    let needs = [
        (
            true,
            "a mesh pipeline",
            wgt::Features::EXPERIMENTAL_MESH_SHADER,
        ),
        (
            multiview_mask.is_some(),
            "a mesh pipeline with a view mask",
            wgt::Features::EXPERIMENTAL_MESH_SHADER_MULTIVIEW,
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

/// A mesh pipeline's primitive topology against the one its mesh stage
/// writes (`None`: not known, SPIR-V without naga's reading): they must be
/// the same list topology.
pub(crate) fn check_mesh_topology(
    declared: Option<wgt::PrimitiveTopology>,
    pipeline: wgt::PrimitiveTopology,
) -> Result<(), PipelineError> {
    match declared {
        Some(declared) if declared != pipeline => Err(PipelineError::InterfaceMismatch(format!(
            "the mesh stage writes {declared:?} primitives, the pipeline's topology is {pipeline:?}"
        ))),
        _ => Ok(()),
    }
}

/// A task or mesh entry point's workgroup size (zeros: not known, SPIR-V)
/// within that stage's per-dimension and per-workgroup invocation limits.
pub(crate) fn check_mesh_workgroup_size(
    limits: &wgt::Limits,
    stage: naga::ShaderStage,
    size: [u32; 3],
) -> Result<(), PipelineError> {
    let (per_dimension, per_workgroup, names) = match stage {
        naga::ShaderStage::Task => (
            limits.max_task_invocations_per_dimension,
            limits.max_task_invocations_per_workgroup,
            "max_task_invocations_per_dimension / max_task_invocations_per_workgroup",
        ),
        _ => (
            limits.max_mesh_invocations_per_dimension,
            limits.max_mesh_invocations_per_workgroup,
            "max_mesh_invocations_per_dimension / max_mesh_invocations_per_workgroup",
        ),
    };
    let invocations = size.iter().try_fold(1u32, |acc, &n| acc.checked_mul(n));
    if size == [0; 3] {
        return Ok(());
    }
    if size.iter().any(|&n| n > per_dimension) || invocations.is_none_or(|n| n > per_workgroup) {
        return Err(PipelineError::Unsupported(format!(
            "{stage:?} workgroup size {size:?} exceeds {names} ({per_dimension} / {per_workgroup})"
        )));
    }
    Ok(())
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

    #[test]
    fn second_source_factors_need_dual_source_blending() {
        let component = wgt::BlendComponent {
            src_factor: wgt::BlendFactor::Src1,
            dst_factor: wgt::BlendFactor::OneMinusSrc1,
            operation: wgt::BlendOperation::Add,
        };
        let targets = [Some(wgt::ColorTargetState {
            format: wgt::TextureFormat::Rgba8Unorm,
            blend: Some(wgt::BlendState {
                color: component,
                alpha: wgt::BlendComponent::REPLACE,
            }),
            write_mask: wgt::ColorWrites::ALL,
        })];
        assert!(matches!(
            check_blend(wgt::Features::empty(), &targets),
            Err(PipelineError::MissingFeature { .. })
        ));
        assert_eq!(
            check_blend(wgt::Features::DUAL_SOURCE_BLENDING, &targets),
            Ok(())
        );
        assert_eq!(check_blend(wgt::Features::empty(), &[None]), Ok(()));
    }
}
