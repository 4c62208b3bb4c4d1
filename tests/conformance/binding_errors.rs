//! Bad bind group layouts and bind groups: each is a typed
//! [`BindingError`], nothing is created or leaked, and validation stays
//! silent. Runs everywhere (no shader runs).

use std::num::NonZeroU64;

use keel_hal::wgt;
use keel_hal::{
    Api, BindGroupDescriptor, BindGroupEntry, BindGroupLayoutDescriptor, BindingError,
    BindingResource, BufferBinding, Device, Memory, PipelineLayoutDescriptor, PushConstantRange,
    SamplerDescriptor,
};

use crate::harness::{Ctx, Failure, Outcome, TestResult};
use crate::helpers::create_buffer;
use crate::pipelines::{entry, storage, uniform};

conformance_tests!(
    layout_with_a_duplicate_binding,
    group_missing_a_binding,
    group_with_an_unknown_binding,
    group_with_the_wrong_resource_type,
    group_buffer_range_past_the_end,
    group_entries_in_any_order_check_alike,
    pipeline_layout_past_the_limits,
);

const STAGES: wgt::ShaderStages = wgt::ShaderStages::COMPUTE;

/// A bind group layout of `entries`.
///
/// # Safety
/// `ctx.device` is live; the caller destroys the layout.
unsafe fn layout<A: Api>(
    ctx: &Ctx<A>,
    entries: &[wgt::BindGroupLayoutEntry],
) -> Result<A::BindGroupLayout, Failure> {
    let desc = BindGroupLayoutDescriptor {
        label: Some("conformance"),
        entries,
        ..Default::default()
    };
    // SAFETY: live device.
    Ok(unsafe { ctx.device.create_bind_group_layout(&desc) }?)
}

/// Tries to make a bind group of `entries` on a layout of `layout_entries`
/// with a 256-byte uniform/storage buffer and a sampler to point at
/// (`make_entries` builds the entries from them). Returns the error, and
/// fails if the call succeeded or live counts changed.
fn expect_group_error<A: Api>(
    ctx: &Ctx<A>,
    layout_entries: &[wgt::BindGroupLayoutEntry],
    make_entries: impl for<'r> FnOnce(&'r A::Buffer, &'r A::Sampler) -> Vec<BindGroupEntry<'r, A>>,
) -> Result<BindingError, Failure> {
    let usage = wgt::BufferUsages::UNIFORM | wgt::BufferUsages::STORAGE;
    // SAFETY: every object is destroyed below; nothing is submitted.
    unsafe {
        let layout = layout(ctx, layout_entries)?;
        let buffer = create_buffer(ctx, 256, usage, Memory::Device)?;
        let sampler = ctx.device.create_sampler(&SamplerDescriptor::default())?;
        let before = ctx.device.live_counts();
        let entries = make_entries(&buffer, &sampler);
        let desc = BindGroupDescriptor {
            label: Some("bad"),
            layout: &layout,
            entries: &entries,
        };
        let made = ctx.device.create_bind_group(&desc);
        let after = ctx.device.live_counts();
        drop(entries);
        let result = match made {
            Ok(group) => {
                ctx.device.destroy_bind_group(group);
                Err("the bad bind group was created".into())
            }
            Err(e) => Ok(e),
        };
        ctx.device.destroy_sampler(sampler);
        ctx.device.destroy_buffer(buffer);
        ctx.device.destroy_bind_group_layout(layout);
        check_eq!(after, before, "live counts after the failed create");
        result
    }
}

/// A buffer range binding.
fn buffer_entry<B: ?Sized>(buffer: &B, offset: u64, size: Option<u64>) -> BufferBinding<'_, B> {
    BufferBinding {
        buffer,
        offset,
        size: size.and_then(NonZeroU64::new),
    }
}

/// Two layout entries with binding 3.
fn layout_with_a_duplicate_binding<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let entries = [
        entry(3, STAGES, uniform()),
        entry(1, STAGES, uniform()),
        entry(3, STAGES, storage(true, false)),
    ];
    let before = ctx.device.live_counts();
    // SAFETY: live device; a layout that is made is destroyed.
    let made = unsafe {
        ctx.device
            .create_bind_group_layout(&BindGroupLayoutDescriptor {
                label: Some("bad"),
                entries: &entries,
                ..Default::default()
            })
    };
    match made {
        Err(e) => check_eq!(e, BindingError::DuplicateBinding(3), "error"),
        Ok(layout) => {
            // SAFETY: unused.
            unsafe { ctx.device.destroy_bind_group_layout(layout) };
            return Err("a layout with binding 3 twice was created".into());
        }
    }
    check_eq!(ctx.device.live_counts(), before, "live counts");
    Ok(Outcome::Pass)
}

/// A layout of bindings 0 and 1; the group gives only 0.
fn group_missing_a_binding<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let layout = [
        entry(0, STAGES, uniform()),
        entry(1, STAGES, storage(false, false)),
    ];
    let e = expect_group_error(ctx, &layout, |buffer, _| {
        vec![BindGroupEntry {
            binding: 0,
            resource: BindingResource::Buffer(buffer_entry(buffer, 0, Some(64))),
        }]
    })?;
    check_eq!(e, BindingError::MissingBinding(1), "error");
    Ok(Outcome::Pass)
}

/// The group names binding 7, which the layout lacks.
fn group_with_an_unknown_binding<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let layout = [entry(0, STAGES, uniform())];
    let e = expect_group_error(ctx, &layout, |buffer, _| {
        vec![
            BindGroupEntry {
                binding: 0,
                resource: BindingResource::Buffer(buffer_entry(buffer, 0, Some(64))),
            },
            BindGroupEntry {
                binding: 7,
                resource: BindingResource::Buffer(buffer_entry(buffer, 0, Some(64))),
            },
        ]
    })?;
    check_eq!(e, BindingError::UnknownBinding(7), "error");
    Ok(Outcome::Pass)
}

/// A sampler where the layout wants a uniform buffer, and a buffer where it
/// wants a sampler.
fn group_with_the_wrong_resource_type<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let layout = [entry(0, STAGES, uniform())];
    let e = expect_group_error(ctx, &layout, |_, sampler| {
        vec![BindGroupEntry {
            binding: 0,
            resource: BindingResource::Sampler(sampler),
        }]
    })?;
    check!(
        matches!(e, BindingError::WrongType { binding: 0, .. }),
        "a sampler for a uniform buffer: {e:?}"
    );
    let sampler_layout = [entry(
        2,
        STAGES,
        wgt::BindingType::Sampler(wgt::SamplerBindingType::Filtering),
    )];
    let e = expect_group_error(ctx, &sampler_layout, |buffer, _| {
        vec![BindGroupEntry {
            binding: 2,
            resource: BindingResource::Buffer(buffer_entry(buffer, 0, None)),
        }]
    })?;
    check!(
        matches!(e, BindingError::WrongType { binding: 2, .. }),
        "a buffer for a sampler: {e:?}"
    );
    Ok(Outcome::Pass)
}

/// Ranges of the 256-byte buffer that run past its end, or are empty.
fn group_buffer_range_past_the_end<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let layout = [entry(0, STAGES, storage(false, false))];
    for (offset, size) in [(0, Some(512)), (256, Some(16)), (256, None), (512, None)] {
        let e = expect_group_error(ctx, &layout, |buffer, _| {
            vec![BindGroupEntry {
                binding: 0,
                resource: BindingResource::Buffer(buffer_entry(buffer, offset, size)),
            }]
        })?;
        check!(
            matches!(
                e,
                BindingError::InvalidBufferRange {
                    binding: 0,
                    buffer_size: 256,
                    ..
                }
            ),
            "range {offset}+{size:?} of a 256-byte buffer: {e:?}"
        );
    }
    Ok(Outcome::Pass)
}

/// Entries in the layout's binding order (checked without a lookup) and in
/// another order (looked up) check alike: both orders make the group, and
/// the same mistake is the same error in either order.
fn group_entries_in_any_order_check_alike<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let layout_entries = [
        entry(0, STAGES, uniform()),
        entry(
            1,
            STAGES,
            wgt::BindingType::Sampler(wgt::SamplerBindingType::Filtering),
        ),
    ];
    let mut errors = Vec::new();
    for reversed in [false, true] {
        // 64 bytes from offset 224 run past the 256-byte buffer's end.
        let e = expect_group_error(ctx, &layout_entries, |buffer, sampler| {
            buffer_and_sampler::<A>(buffer, sampler, 224, reversed)
        })?;
        errors.push(e);
    }
    check!(
        matches!(
            errors[0],
            BindingError::InvalidBufferRange { binding: 0, .. }
        ),
        "in order: {:?}",
        errors[0]
    );
    check_eq!(&errors[1], &errors[0], "the same mistake, reversed");
    // SAFETY: every object is destroyed below; nothing is submitted.
    let made = unsafe {
        let layout = layout(ctx, &layout_entries)?;
        let buffer = create_buffer(ctx, 256, wgt::BufferUsages::UNIFORM, Memory::Device)?;
        let sampler = ctx.device.create_sampler(&SamplerDescriptor::default())?;
        let mut made = Vec::new();
        for reversed in [false, true] {
            let entries = buffer_and_sampler::<A>(&buffer, &sampler, 0, reversed);
            let desc = BindGroupDescriptor {
                label: None,
                layout: &layout,
                entries: &entries,
            };
            match ctx.device.create_bind_group(&desc) {
                Ok(group) => {
                    ctx.device.destroy_bind_group(group);
                    made.push(Ok(()));
                }
                Err(e) => made.push(Err(e)),
            }
        }
        ctx.device.destroy_sampler(sampler);
        ctx.device.destroy_buffer(buffer);
        ctx.device.destroy_bind_group_layout(layout);
        made
    };
    check_eq!(made, vec![Ok(()), Ok(())], "in order, then reversed");
    Ok(Outcome::Pass)
}

/// Binding 0: 64 bytes of `buffer` from `offset`; binding 1: `sampler`; in
/// binding order, or reversed.
fn buffer_and_sampler<'r, A: Api>(
    buffer: &'r A::Buffer,
    sampler: &'r A::Sampler,
    offset: u64,
    reversed: bool,
) -> Vec<BindGroupEntry<'r, A>> {
    let mut list = vec![
        BindGroupEntry {
            binding: 0,
            resource: BindingResource::Buffer(buffer_entry(buffer, offset, Some(64))),
        },
        BindGroupEntry {
            binding: 1,
            resource: BindingResource::Sampler(sampler),
        },
    ];
    if reversed {
        list.reverse();
    }
    list
}

/// More bind groups than `max_bind_groups`, and push-constant ranges past
/// `max_immediate_size` or unaligned.
fn pipeline_layout_past_the_limits<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let max_groups = ctx.limits().max_bind_groups as usize;
    let max_immediate = ctx.limits().max_immediate_size;
    // SAFETY: every object is destroyed below; nothing is submitted.
    unsafe {
        let group = layout(ctx, &[entry(0, STAGES, uniform())])?;
        let groups = vec![&group; max_groups + 1];
        let before = ctx.device.live_counts();
        let too_high = max_immediate + 4;
        let cases: [(&[&A::BindGroupLayout], Vec<PushConstantRange>); 3] = [
            (&groups, Vec::new()),
            (
                &groups[..1],
                vec![PushConstantRange {
                    stages: STAGES,
                    range: 0..too_high,
                }],
            ),
            (
                &groups[..1],
                vec![PushConstantRange {
                    stages: STAGES,
                    range: 2..6,
                }],
            ),
        ];
        let mut failure = None;
        for (i, (layouts, ranges)) in cases.iter().enumerate() {
            let made = ctx
                .device
                .create_pipeline_layout(&PipelineLayoutDescriptor {
                    label: Some("bad"),
                    bind_group_layouts: layouts,
                    push_constant_ranges: ranges,
                });
            // Over a limit: `LimitExceeded`, naming it; a misaligned range:
            // `InvalidPushConstantRange`.
            let expected = match i {
                0 => BindingError::LimitExceeded {
                    what: "bind group layouts",
                    limit: "max_bind_groups",
                    requested: max_groups as u64 + 1,
                    allowed: max_groups as u64,
                },
                1 => BindingError::LimitExceeded {
                    what: "push-constant range end",
                    limit: "max_immediate_size",
                    requested: too_high.into(),
                    allowed: max_immediate.into(),
                },
                _ => BindingError::InvalidPushConstantRange {
                    range: 2..6,
                    stages: STAGES,
                    reason: "its start and end must be multiples of 4",
                },
            };
            match made {
                Err(e) if e == expected => {}
                Err(e) => failure = Some(format!("case {i}: {e:?}, not {expected:?}")),
                Ok(layout) => {
                    ctx.device.destroy_pipeline_layout(layout);
                    failure = Some(format!("case {i}: the pipeline layout was created"));
                }
            }
        }
        let after = ctx.device.live_counts();
        drop(groups);
        ctx.device.destroy_bind_group_layout(group);
        if let Some(failure) = failure {
            return Err(failure.into());
        }
        check_eq!(after, before, "live counts after the failed creates");
    }
    Ok(Outcome::Pass)
}
