//! Draws whose arguments live in buffers, checked while recording the same
//! way on every backend: what is checked is logged and the command skipped
//! (recording has no error path), so a misuse is the same no-op everywhere.

/// Bytes of one `draw_indirect` argument set.
pub(crate) const DRAW_ARGS: u64 = 16;
/// Bytes of one `draw_indexed_indirect` argument set.
pub(crate) const DRAW_INDEXED_ARGS: u64 = 20;

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
