//! Samplers: the common descriptors are accepted, bad anisotropy and LOD
//! ranges are typed errors, and `ClampToBorder` needs the feature of its
//! border colour (`ADDRESS_MODE_CLAMP_TO_ZERO` for `Zero`,
//! `ADDRESS_MODE_CLAMP_TO_BORDER` for the others).

use keel_hal::wgt;
use keel_hal::{Adapter, Api, Device, DeviceDescriptor, SamplerDescriptor, SamplerError};

use crate::harness::{Ctx, Outcome, TestResult};

conformance_tests!(
    valid_samplers,
    invalid_samplers,
    sampler_messages_name_the_values,
    clamp_to_border_needs_its_feature,
);

/// On the test's device (opened without either address-mode feature) a
/// `ClampToBorder` sampler is `MissingFeature` naming the feature of its
/// border colour; on a device opened with that feature (where advertised)
/// it is made.
fn clamp_to_border_needs_its_feature<A: Api>(ctx: &Ctx<A>) -> TestResult {
    use wgt::Features as F;
    let border = |color| SamplerDescriptor {
        address_modes: [wgt::AddressMode::ClampToBorder; 3],
        border_color: Some(color),
        ..linear()
    };
    let cases = [
        (
            border(wgt::SamplerBorderColor::Zero),
            F::ADDRESS_MODE_CLAMP_TO_ZERO,
        ),
        (
            border(wgt::SamplerBorderColor::OpaqueBlack),
            F::ADDRESS_MODE_CLAMP_TO_BORDER,
        ),
    ];
    let mut made = Vec::new();
    for (desc, feature) in cases {
        check!(
            !ctx.features
                .intersects(F::ADDRESS_MODE_CLAMP_TO_ZERO | F::ADDRESS_MODE_CLAMP_TO_BORDER),
            "the test's device was opened with an address-mode feature"
        );
        // SAFETY: live device; a sampler made by mistake is destroyed.
        match unsafe { ctx.device.create_sampler(&desc) } {
            Err(SamplerError::MissingFeature { feature: named, .. }) => {
                check_eq!(
                    named,
                    feature,
                    "the feature named for {:?}",
                    desc.border_color
                );
            }
            Ok(sampler) => {
                // SAFETY: unused.
                unsafe { ctx.device.destroy_sampler(sampler) };
                return Err(format!("{:?} made without {feature:?}", desc.border_color).into());
            }
            Err(e) => return Err(format!("{:?}: {e}", desc.border_color).into()),
        }
        if !ctx.caps.features.contains(feature) {
            continue;
        }
        let open_desc = DeviceDescriptor {
            label: Some("conformance clamp to border"),
            required_features: feature,
            allow_no_shader_execution: true,
            ..Default::default()
        };
        // SAFETY: the adapter is live; the sampler is destroyed before the device drops.
        unsafe {
            let open = ctx.adapter.open(&open_desc)?;
            let sampler = open.device.create_sampler(&desc)?;
            open.device.destroy_sampler(sampler);
        }
        made.push(feature);
    }
    ctx.note(format!("made with {made:?}"));
    Ok(Outcome::Pass)
}

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
