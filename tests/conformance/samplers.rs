//! Samplers: the common descriptors are accepted, bad anisotropy and LOD
//! ranges are typed errors.

use keel_hal::wgt;
use keel_hal::{Api, Device, SamplerDescriptor, SamplerError};

use crate::harness::{Ctx, Outcome, TestResult};

conformance_tests!(
    valid_samplers,
    invalid_samplers,
    sampler_messages_name_the_values
);

fn linear() -> SamplerDescriptor<'static> {
    SamplerDescriptor {
        mag_filter: wgt::FilterMode::Linear,
        min_filter: wgt::FilterMode::Linear,
        mipmap_filter: wgt::MipmapFilterMode::Linear,
        ..Default::default()
    }
}

fn valid_samplers<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let descs = [
        ("nearest", SamplerDescriptor::default()),
        (
            "linear, repeat, anisotropy 16",
            SamplerDescriptor {
                address_modes: [wgt::AddressMode::Repeat; 3],
                anisotropy_clamp: 16,
                ..linear()
            },
        ),
        (
            "comparison",
            SamplerDescriptor {
                compare: Some(wgt::CompareFunction::LessEqual),
                ..linear()
            },
        ),
        (
            "mirror, LOD 2..4",
            SamplerDescriptor {
                address_modes: [wgt::AddressMode::MirrorRepeat; 3],
                lod_clamp: 2.0..4.0,
                ..Default::default()
            },
        ),
    ];
    // SAFETY: samplers come from ctx.device, are never used, and are destroyed.
    unsafe {
        let before = ctx.device.live_counts();
        let mut samplers = Vec::new();
        let mut failure = None;
        for (what, desc) in &descs {
            match ctx.device.create_sampler(desc) {
                Ok(s) => samplers.push(s),
                Err(e) => {
                    failure = Some(format!("{what}: {e:?}"));
                    break;
                }
            }
        }
        let during = ctx.device.live_counts();
        let made = samplers.len() as isize;
        for s in samplers {
            ctx.device.destroy_sampler(s);
        }
        let after = ctx.device.live_counts();
        if let Some(failure) = failure {
            return Err(failure.into());
        }
        check_eq!(during.samplers - before.samplers, made, "samplers counted");
        check_eq!(after, before, "live objects after destroying the samplers");
    }
    Ok(Outcome::Pass)
}

fn invalid_samplers<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let cases = [
        (
            "anisotropy 0",
            SamplerDescriptor {
                anisotropy_clamp: 0,
                ..linear()
            },
            SamplerError::InvalidAnisotropy(0),
        ),
        (
            "anisotropy 16 with nearest filtering",
            SamplerDescriptor {
                anisotropy_clamp: 16,
                ..Default::default()
            },
            SamplerError::InvalidAnisotropy(16),
        ),
        (
            "LOD clamp 4..1",
            SamplerDescriptor {
                lod_clamp: 4.0..1.0,
                ..Default::default()
            },
            SamplerError::InvalidLodClamp {
                start_bits: 4.0f32.to_bits(),
                end_bits: 1.0f32.to_bits(),
            },
        ),
        (
            "LOD clamp -1..2",
            SamplerDescriptor {
                lod_clamp: -1.0..2.0,
                ..Default::default()
            },
            SamplerError::InvalidLodClamp {
                start_bits: (-1.0f32).to_bits(),
                end_bits: 2.0f32.to_bits(),
            },
        ),
        (
            "LOD clamp NaN..2",
            SamplerDescriptor {
                lod_clamp: f32::NAN..2.0,
                ..Default::default()
            },
            SamplerError::InvalidLodClamp {
                start_bits: f32::NAN.to_bits(),
                end_bits: 2.0f32.to_bits(),
            },
        ),
    ];
    let before = ctx.device.live_counts();
    for (what, desc, expected) in cases {
        // SAFETY: live device; a sampler that should not exist is destroyed at once.
        match unsafe { ctx.device.create_sampler(&desc) } {
            Ok(s) => {
                // SAFETY: never used.
                unsafe { ctx.device.destroy_sampler(s) };
                return Err(format!("{what}: sampler created; expected {expected:?}").into());
            }
            Err(e) => check_eq!(e, expected, "{what}"),
        }
    }
    check_eq!(
        ctx.device.live_counts(),
        before,
        "live objects after the failed samplers"
    );
    Ok(Outcome::Pass)
}

/// The messages print what was asked: the LOD bounds as numbers, the
/// anisotropy clamp and its rule.
fn sampler_messages_name_the_values<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let error = |desc: &SamplerDescriptor| -> Result<SamplerError, crate::harness::Failure> {
        // SAFETY: live device; a sampler that should not exist is destroyed at once.
        match unsafe { ctx.device.create_sampler(desc) } {
            Ok(s) => {
                // SAFETY: never used.
                unsafe { ctx.device.destroy_sampler(s) };
                Err(format!("{desc:?} was created").into())
            }
            Err(e) => Ok(e),
        }
    };
    let lod = SamplerDescriptor {
        lod_clamp: 4.5..1.25,
        ..Default::default()
    };
    let text = error(&lod)?.to_string();
    check!(
        text.contains("4.5..1.25") && text.contains("0 <= start <= end"),
        "message: {text}"
    );
    let aniso = SamplerDescriptor {
        anisotropy_clamp: 16,
        ..Default::default()
    };
    let text = error(&aniso)?.to_string();
    check!(
        text.contains("16") && text.contains("linear"),
        "message: {text}"
    );
    Ok(Outcome::Pass)
}
