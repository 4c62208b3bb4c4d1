//! Pipeline layouts (each a [`BindingError`]): more bind group layouts
//! than `max_bind_groups`, more dynamic uniform or storage buffers than
//! their per-layout limits, a push-constant range past
//! `max_immediate_size` (`LimitExceeded`, naming the limit, what was asked
//! and what is allowed); a push-constant range without stages, empty, not
//! 4-byte aligned, naming a stage an earlier range names, or naming task
//! or mesh stages on a device without `EXPERIMENTAL_MESH_SHADER`
//! (`InvalidPushConstantRange`).

use crate::{BindingError, PushConstantRange};

/// Checks a pipeline layout made of the groups whose (layout) entries
/// `groups` yields and of `ranges`.
pub(crate) fn check_pipeline_layout<'a>(
    groups: impl ExactSizeIterator<Item = &'a [wgt::BindGroupLayoutEntry]>,
    ranges: &[PushConstantRange],
    limits: &wgt::Limits,
    features: wgt::Features,
) -> Result<(), BindingError> {
    let group_count = groups.len() as u64;
    if group_count > u64::from(limits.max_bind_groups) {
        return Err(BindingError::LimitExceeded {
            what: "bind group layouts",
            limit: "max_bind_groups",
            requested: group_count,
            allowed: limits.max_bind_groups.into(),
        });
    }
    let (mut uniform, mut storage) = (0u64, 0u64);
    for entry in groups.flatten() {
        if let wgt::BindingType::Buffer {
            ty,
            has_dynamic_offset: true,
            ..
        } = entry.ty
        {
            match ty {
                wgt::BufferBindingType::Uniform => uniform += 1,
                wgt::BufferBindingType::Storage { .. } => storage += 1,
            }
        }
    }
    for (what, limit, requested, allowed) in [
        (
            "dynamic uniform buffers",
            "max_dynamic_uniform_buffers_per_pipeline_layout",
            uniform,
            limits.max_dynamic_uniform_buffers_per_pipeline_layout,
        ),
        (
            "dynamic storage buffers",
            "max_dynamic_storage_buffers_per_pipeline_layout",
            storage,
            limits.max_dynamic_storage_buffers_per_pipeline_layout,
        ),
    ] {
        if requested > u64::from(allowed) {
            return Err(BindingError::LimitExceeded {
                what,
                limit,
                requested,
                allowed: allowed.into(),
            });
        }
    }
    check_push_constants(ranges, limits.max_immediate_size, features)
}

/// Push-constant ranges: with stages, non-empty, 4-byte aligned, inside
/// `max_immediate_size`, and no stage in two ranges.
fn check_push_constants(
    ranges: &[PushConstantRange],
    max_immediate_size: u32,
    features: wgt::Features,
) -> Result<(), BindingError> {
    let mut seen = wgt::ShaderStages::empty();
    for r in ranges {
        let (start, end) = (r.range.start, r.range.end);
        let invalid = |reason| {
            Err(BindingError::InvalidPushConstantRange {
                range: r.range.clone(),
                stages: r.stages,
                reason,
            })
        };
        if r.stages.is_empty() {
            return invalid("it names no shader stage");
        }
        if r.stages
            .intersects(wgt::ShaderStages::TASK | wgt::ShaderStages::MESH)
            && !features.contains(wgt::Features::EXPERIMENTAL_MESH_SHADER)
        {
            return invalid("task and mesh stages need EXPERIMENTAL_MESH_SHADER");
        }
        if start >= end {
            return invalid("it is empty (start must be below end)");
        }
        if start % 4 != 0 || end % 4 != 0 {
            return invalid("its start and end must be multiples of 4");
        }
        if end > max_immediate_size {
            return Err(BindingError::LimitExceeded {
                what: "push-constant range end",
                limit: "max_immediate_size",
                requested: end.into(),
                allowed: max_immediate_size.into(),
            });
        }
        if seen.intersects(r.stages) {
            return invalid("a stage it names is in an earlier range too (one range per stage)");
        }
        seen |= r.stages;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(stages: wgt::ShaderStages, range: std::ops::Range<u32>) -> PushConstantRange {
        PushConstantRange { stages, range }
    }

    #[test]
    fn push_constant_messages_name_the_numbers() {
        let limits = wgt::Limits {
            max_immediate_size: 128,
            ..wgt::Limits::default()
        };
        let compute = wgt::ShaderStages::COMPUTE;
        let e = check_pipeline_layout(
            [].into_iter(),
            &[range(compute, 0..256)],
            &limits,
            wgt::Features::empty(),
        )
        .unwrap_err();
        assert_eq!(
            e,
            BindingError::LimitExceeded {
                what: "push-constant range end",
                limit: "max_immediate_size",
                requested: 256,
                allowed: 128,
            }
        );
        let text = e.to_string();
        assert!(
            text.contains("256") && text.contains("max_immediate_size = 128"),
            "{text}"
        );
        let e = check_pipeline_layout(
            [].into_iter(),
            &[range(compute, 2..6)],
            &limits,
            wgt::Features::empty(),
        )
        .unwrap_err();
        assert!(matches!(e, BindingError::InvalidPushConstantRange { .. }));
        let text = e.to_string();
        assert!(text.contains("2..6") && text.contains("COMPUTE"), "{text}");
    }
}
