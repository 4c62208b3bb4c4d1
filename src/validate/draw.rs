//! Draws checked while recording the same way on every backend: draws
//! whose arguments live in buffers, and mesh draws against the bound
//! pipeline and the workgroup limits. What is checked is logged and the
//! command skipped (recording has no error path), so a misuse is the same
//! no-op everywhere.

/// Bytes of one `draw_indirect` argument set.
pub(crate) const DRAW_ARGS: u64 = 16;
/// Bytes of one `draw_indexed_indirect` argument set.
pub(crate) const DRAW_INDEXED_ARGS: u64 = 20;
/// Bytes of one `draw_mesh_tasks_indirect` argument set (three `u32`s).
pub(crate) const MESH_ARGS: u64 = 12;

/// Where a render pipeline's geometry comes from, which decides the draws
/// it may be used with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Geometry {
    /// Vertex input and a vertex stage: `draw*`.
    Vertex,
    /// A mesh stage alone: `draw_mesh_tasks*`, counts within the mesh
    /// workgroup limits.
    Mesh,
    /// A task stage and a mesh stage: `draw_mesh_tasks*`, counts within
    /// the task workgroup limits.
    Task,
}

/// Why a vertex draw is skipped: a mesh pipeline is bound.
pub(crate) fn vertex_draw_problem(bound: Option<Geometry>) -> Option<&'static str> {
    match bound {
        Some(Geometry::Mesh | Geometry::Task) => {
            Some("the bound pipeline is a mesh pipeline (draw it with draw_mesh_tasks)")
        }
        _ => None,
    }
}

/// Why a mesh draw is skipped, or `None` to record it: the device must be
/// opened with `EXPERIMENTAL_MESH_SHADER` and a mesh pipeline be bound;
/// `groups`, for a direct draw, must be within the bound pipeline's first
/// stage's workgroup-count limits (per dimension and in total).
pub(crate) fn mesh_draw_problem(
    enabled: wgt::Features,
    limits: &wgt::Limits,
    bound: Option<Geometry>,
    groups: Option<[u32; 3]>,
) -> Option<String> {
    if !enabled.contains(wgt::Features::EXPERIMENTAL_MESH_SHADER) {
        return Some("the device was not opened with EXPERIMENTAL_MESH_SHADER".into());
    }
    let (per_dimension, total, names) = match bound {
        Some(Geometry::Task) => (
            limits.max_task_workgroups_per_dimension,
            limits.max_task_workgroup_total_count,
            "max_task_workgroups_per_dimension / max_task_workgroup_total_count",
        ),
        Some(Geometry::Mesh) => (
            limits.max_mesh_workgroups_per_dimension,
            limits.max_mesh_workgroup_total_count,
            "max_mesh_workgroups_per_dimension / max_mesh_workgroup_total_count",
        ),
        _ => return Some("no mesh pipeline is bound".into()),
    };
    let groups = groups?;
    let product = groups.iter().try_fold(1u32, |acc, &n| acc.checked_mul(n));
    if groups.iter().any(|&n| n > per_dimension) || product.is_none_or(|n| n > total) {
        return Some(format!(
            "workgroup counts {groups:?} exceed {names} ({per_dimension} / {total})"
        ));
    }
    None
}

/// Why an indirect draw of `draw_count` argument sets of `arg_size` bytes
/// at `offset` of a buffer of `size` bytes is skipped: the offset must be
/// a multiple of 4 and every set lie in the buffer.
pub(crate) fn indirect_problem(
    size: u64,
    offset: u64,
    draw_count: u32,
    arg_size: u64,
) -> Option<String> {
    let end = u64::from(draw_count)
        .checked_mul(arg_size)
        .and_then(|len| offset.checked_add(len));
    if offset % 4 != 0 {
        Some(format!("offset {offset} must be a multiple of 4"))
    } else if end.is_none_or(|end| end > size) {
        Some(format!(
            "{draw_count} argument sets of {arg_size} bytes at offset {offset} do not fit the buffer of {size} bytes"
        ))
    } else {
        None
    }
}

/// What a count draw reads: `max_count` argument sets of `arg_size` bytes
/// at `offset` of a buffer of `size` bytes, and a 4-byte count at
/// `count_offset` of one of `count_size`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CountDraw {
    pub(crate) size: u64,
    pub(crate) offset: u64,
    pub(crate) arg_size: u64,
    pub(crate) max_count: u32,
    pub(crate) count_size: u64,
    pub(crate) count_offset: u64,
}

/// Why a count draw is skipped, or `None` to record it: the device must be
/// opened with `MULTI_DRAW_INDIRECT_COUNT`, offsets be multiples of 4, and
/// every argument set and the count lie in their buffers.
pub(crate) fn count_draw_problem(enabled: wgt::Features, d: CountDraw) -> Option<String> {
    let fits = |size: u64, offset: u64, len: Option<u64>| {
        len.and_then(|len| offset.checked_add(len))
            .is_some_and(|end| end <= size)
    };
    if !enabled.contains(wgt::Features::MULTI_DRAW_INDIRECT_COUNT) {
        Some("the device was not opened with MULTI_DRAW_INDIRECT_COUNT".into())
    } else if d.offset % 4 != 0 || d.count_offset % 4 != 0 {
        Some(format!(
            "offsets {} and {} must be multiples of 4",
            d.offset, d.count_offset
        ))
    } else if !fits(
        d.size,
        d.offset,
        u64::from(d.max_count).checked_mul(d.arg_size),
    ) {
        Some(format!(
            "{} argument sets of {} bytes at offset {} do not fit the buffer of {} bytes",
            d.max_count, d.arg_size, d.offset, d.size
        ))
    } else if !fits(d.count_size, d.count_offset, Some(4)) {
        Some(format!(
            "the count at offset {} does not fit its buffer of {} bytes",
            d.count_offset, d.count_size
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mesh_draws_need_the_feature_a_mesh_pipeline_and_counts_in_the_limits() {
        let on = wgt::Features::EXPERIMENTAL_MESH_SHADER;
        let limits = wgt::Limits {
            max_task_workgroups_per_dimension: 8,
            max_task_workgroup_total_count: 64,
            max_mesh_workgroups_per_dimension: 4,
            max_mesh_workgroup_total_count: 16,
            ..wgt::Limits::default()
        };
        let task = Some(Geometry::Task);
        let mesh = Some(Geometry::Mesh);
        assert_eq!(mesh_draw_problem(on, &limits, task, Some([8, 8, 1])), None);
        assert_eq!(mesh_draw_problem(on, &limits, mesh, Some([4, 4, 1])), None);
        assert_eq!(mesh_draw_problem(on, &limits, mesh, None), None);
        assert!(mesh_draw_problem(wgt::Features::empty(), &limits, task, Some([1; 3])).is_some());
        assert!(mesh_draw_problem(on, &limits, Some(Geometry::Vertex), Some([1; 3])).is_some());
        assert!(mesh_draw_problem(on, &limits, None, Some([1; 3])).is_some());
        assert!(mesh_draw_problem(on, &limits, mesh, Some([5, 1, 1])).is_some());
        assert!(mesh_draw_problem(on, &limits, task, Some([8, 8, 2])).is_some());
        assert!(mesh_draw_problem(on, &limits, task, Some([u32::MAX; 3])).is_some());
        assert_eq!(vertex_draw_problem(Some(Geometry::Vertex)), None);
        assert_eq!(vertex_draw_problem(None), None);
        assert!(vertex_draw_problem(task).is_some());
    }

    #[test]
    fn indirect_draws_lie_in_their_buffer_at_aligned_offsets() {
        assert_eq!(indirect_problem(36, 12, 2, MESH_ARGS), None);
        assert!(indirect_problem(36, 14, 1, MESH_ARGS).is_some());
        assert!(indirect_problem(36, 12, 3, MESH_ARGS).is_some());
        assert!(indirect_problem(36, u64::MAX - 3, 1, MESH_ARGS).is_some());
    }

    #[test]
    fn count_draws_need_the_feature_and_ranges_in_their_buffers() {
        let ok = CountDraw {
            size: 64,
            offset: 16,
            arg_size: DRAW_ARGS,
            max_count: 3,
            count_size: 8,
            count_offset: 4,
        };
        let on = wgt::Features::MULTI_DRAW_INDIRECT_COUNT;
        assert_eq!(count_draw_problem(on, ok), None);
        assert!(count_draw_problem(wgt::Features::empty(), ok).is_some());
        for bad in [
            CountDraw { max_count: 4, ..ok },
            CountDraw { offset: 18, ..ok },
            CountDraw {
                count_offset: 6,
                ..ok
            },
            CountDraw {
                count_offset: 8,
                ..ok
            },
            CountDraw {
                max_count: u32::MAX,
                arg_size: u64::MAX,
                ..ok
            },
        ] {
            assert!(count_draw_problem(on, bad).is_some(), "{bad:?}");
        }
    }
}
