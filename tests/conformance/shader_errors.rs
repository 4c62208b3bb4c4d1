//! Bad shaders and pipelines: a WGSL syntax error, invalid SPIR-V (by
//! structure or by naga's front end), a missing entry point and a shader
//! interface that does not match the pipeline layout are typed errors,
//! create nothing, and keep validation silent; checked SPIR-V is reflected
//! like WGSL, and unchecked SPIR-V is taken as vouched for. Runs
//! everywhere (nothing executes).

use std::borrow::Cow;

use keel_hal::wgt;
use keel_hal::{
    Api, ComputePipelineDescriptor, Device, PipelineError, ProgrammableStage, ShaderError,
    ShaderModuleDescriptor, ShaderSource, UncheckedSpirV,
};

use crate::harness::{Ctx, Failure, Outcome, TestResult};
use crate::pipelines::{entry, storage, uniform, wgsl, Layouts};

conformance_tests!(
    wgsl_syntax_error_has_its_position,
    invalid_spirv_is_rejected,
    lone_entry_point_spirv_is_a_typed_error,
    checked_spirv_is_reflected,
    unchecked_spirv_is_vouched_for,
    missing_entry_point,
    interface_mismatches_the_layout,
);

/// Creates a module that must fail; returns the error.
fn expect_shader_error<A: Api>(
    ctx: &Ctx<A>,
    source: ShaderSource<'_>,
) -> Result<ShaderError, Failure> {
    let before = ctx.device.live_counts();
    let desc = ShaderModuleDescriptor {
        label: Some("bad"),
        source,
    };
    // SAFETY: live device; a module that is made is destroyed.
    match unsafe { ctx.device.create_shader_module(&desc) } {
        Ok(module) => {
            // SAFETY: unused.
            unsafe { ctx.device.destroy_shader_module(module) };
            Err("the bad shader module was created".into())
        }
        Err(e) => {
            check_eq!(ctx.device.live_counts(), before, "live counts");
            Ok(e)
        }
    }
}

/// A missing expression on line 4 is a parse error at line 4.
fn wgsl_syntax_error_has_its_position<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let source = "// line 1\n\n@compute @workgroup_size(1)\nfn main() { let x = ; }\n";
    let e = expect_shader_error(ctx, ShaderSource::Wgsl(Cow::Borrowed(source)))?;
    check!(
        matches!(e, ShaderError::Parse { line: 4, column, .. } if column > 1),
        "expected a parse error on line 4, got {e:?}"
    );
    Ok(Outcome::Pass)
}

/// Words that are not SPIR-V, a byte-swapped header, a header cut short,
/// and an instruction running past the end.
fn invalid_spirv_is_rejected<A: Api>(ctx: &Ctx<A>) -> TestResult {
    const MAGIC: u32 = 0x0723_0203;
    let cases: [(&str, Vec<u32>); 5] = [
        ("empty", vec![]),
        ("not SPIR-V", vec![0x1234_5678, 0x0001_0000, 0, 8, 0]),
        (
            "byte-swapped",
            vec![MAGIC.swap_bytes(), 0x0001_0000, 0, 8, 0],
        ),
        ("short header", vec![MAGIC, 0x0001_0000]),
        (
            "instruction past the end",
            vec![MAGIC, 0x0001_0000, 0, 8, 0, (9 << 16) | 15, 0],
        ),
    ];
    for (what, words) in cases {
        let e = expect_shader_error(ctx, ShaderSource::SpirV(Cow::Owned(words)))?;
        check!(
            matches!(e, ShaderError::InvalidSpirV(_)),
            "{what}: expected InvalidSpirV, got {e:?}"
        );
    }
    Ok(Outcome::Pass)
}

/// A header and a lone `OpEntryPoint GLCompute %1 "m"` naming no
/// function: structurally fine, and once crashed lavapipe's compute
/// pipeline creation. naga's front end refuses it at module creation.
fn lone_entry_point_spirv_is_a_typed_error<A: Api>(ctx: &Ctx<A>) -> TestResult {
    const MAGIC: u32 = 0x0723_0203;
    let words = vec![
        MAGIC,
        0x0001_0500,
        0,
        2,
        0,
        (4 << 16) | 15,
        5,
        1,
        u32::from(b'm'),
    ];
    let e = expect_shader_error(ctx, ShaderSource::SpirV(Cow::Owned(words)))?;
    check!(
        matches!(e, ShaderError::SpirVParse(_)),
        "expected SpirVParse, got {e:?}"
    );
    Ok(Outcome::Pass)
}

/// `STORE` as SPIR-V from naga's writer (SPIR-V 1.0, set g / binding b).
fn store_spirv() -> Result<Vec<u32>, Failure> {
    let module = naga::front::wgsl::parse_str(STORE)?;
    let info =
        naga::valid::Validator::new(Default::default(), Default::default()).validate(&module)?;
    Ok(naga::back::spv::write_vec(
        &module,
        &info,
        &Default::default(),
        None,
    )?)
}

/// Creates a module from `source` and a compute pipeline of its `main` on
/// a layout of one group of `entries`; returns the pipeline's result.
fn spirv_pipeline<A: Api>(
    ctx: &Ctx<A>,
    source: ShaderSource<'_>,
    entries: &[wgt::BindGroupLayoutEntry],
) -> Result<Result<(), PipelineError>, Failure> {
    let before = ctx.device.live_counts();
    // SAFETY: every object is destroyed below; nothing is submitted.
    unsafe {
        let layouts = Layouts::new(ctx, Some(entries), &[])?;
        let desc = ShaderModuleDescriptor {
            label: Some("spir-v"),
            source,
        };
        let module = match ctx.device.create_shader_module(&desc) {
            Ok(module) => module,
            Err(e) => {
                layouts.destroy(ctx);
                return Err(e.into());
            }
        };
        let made = ctx
            .device
            .create_compute_pipeline(&ComputePipelineDescriptor {
                label: Some("spir-v"),
                layout: &layouts.pipeline,
                stage: ProgrammableStage {
                    module: &module,
                    entry_point: "main",
                    constants: &[],
                },
                cache: None,
            });
        let result = made.map(|pipeline| ctx.device.destroy_compute_pipeline(pipeline));
        ctx.device.destroy_shader_module(module);
        layouts.destroy(ctx);
        check_eq!(ctx.device.live_counts(), before, "live counts");
        Ok(result)
    }
}

/// Checked SPIR-V is read by naga: its pipeline is made on a matching
/// layout, and its interface is checked against a layout that does not
/// match (a uniform buffer where it writes a storage buffer).
fn checked_spirv_is_reflected<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let compute = wgt::ShaderStages::COMPUTE;
    let words = store_spirv()?;
    let good = [entry(0, compute, storage(false, false))];
    spirv_pipeline(ctx, ShaderSource::SpirV(Cow::Borrowed(&words)), &good)??;
    let bad = [entry(0, compute, uniform())];
    match spirv_pipeline(ctx, ShaderSource::SpirV(Cow::Borrowed(&words)), &bad)? {
        Err(PipelineError::InterfaceMismatch(_)) => Ok(Outcome::Pass),
        other => Err(format!("expected InterfaceMismatch, got {other:?}").into()),
    }
}

/// Valid SPIR-V naga's front end does not read (it declares the core
/// `InputAttachment` capability, unknown to naga) is a typed error when
/// checked, and is taken, pipeline and all, when the caller vouches for it.
fn unchecked_spirv_is_vouched_for<A: Api>(ctx: &Ctx<A>) -> TestResult {
    const OP_CAPABILITY: u32 = 17;
    const INPUT_ATTACHMENT: u32 = 40;
    let mut words = store_spirv()?;
    words.splice(5..5, [(2 << 16) | OP_CAPABILITY, INPUT_ATTACHMENT]);
    let e = expect_shader_error(ctx, ShaderSource::SpirV(Cow::Borrowed(&words)))?;
    check!(
        matches!(e, ShaderError::SpirVParse(_)),
        "checked: expected SpirVParse, got {e:?}"
    );
    let good = [entry(0, wgt::ShaderStages::COMPUTE, storage(false, false))];
    // SAFETY: naga's own SPIR-V for STORE, valid for Vulkan 1.3 with no
    // feature, plus a capability core Vulkan supports; its one binding
    // (set 0, binding 0, a storage buffer it writes) is in `good`, and its
    // workgroup size is 1.
    let unchecked = unsafe { UncheckedSpirV::new(words.as_slice()) };
    if !ctx.features.contains(wgt::Features::PASSTHROUGH_SHADERS) {
        return crate::harness::skip("the adapter lacks PASSTHROUGH_SHADERS");
    }
    spirv_pipeline(ctx, ShaderSource::SpirVUnchecked(unchecked.clone()), &good)??;
    // A device without PASSTHROUGH_SHADERS refuses it, naming the feature.
    // SAFETY: the adapter is live; nothing is made on the device.
    let bare =
        unsafe { keel_hal::Adapter::open(&ctx.adapter, &keel_hal::DeviceDescriptor::default()) }?;
    // SAFETY: live device; a module that is made is destroyed at once.
    let refused = unsafe {
        match bare
            .device
            .create_shader_module(&keel_hal::ShaderModuleDescriptor {
                label: None,
                source: ShaderSource::SpirVUnchecked(unchecked),
            }) {
            Ok(module) => {
                bare.device.destroy_shader_module(module);
                None
            }
            Err(e) => Some(e),
        }
    };
    check_eq!(
        refused,
        Some(ShaderError::MissingFeature {
            what: "unchecked SPIR-V",
            feature: wgt::Features::PASSTHROUGH_SHADERS,
        }),
        "unchecked SPIR-V on a device without PASSTHROUGH_SHADERS"
    );
    Ok(Outcome::Pass)
}

const STORE: &str = "
@group(0) @binding(0) var<storage, read_write> data: array<u32>;

@compute @workgroup_size(1)
fn main() {
    data[0] = 1u;
}
";

/// Tries a compute pipeline of `STORE`'s `entry_point` on a layout of one
/// group of `entries` (or none); returns the error.
fn expect_pipeline_error<A: Api>(
    ctx: &Ctx<A>,
    entries: Option<&[wgt::BindGroupLayoutEntry]>,
    entry_point: &str,
) -> Result<PipelineError, Failure> {
    // SAFETY: every object is destroyed below; nothing is submitted.
    unsafe {
        let layouts = Layouts::new(ctx, entries, &[])?;
        let module = match wgsl(ctx, STORE) {
            Ok(module) => module,
            Err(e) => {
                layouts.destroy(ctx);
                return Err(e);
            }
        };
        let before = ctx.device.live_counts();
        let made = ctx
            .device
            .create_compute_pipeline(&ComputePipelineDescriptor {
                label: Some("bad"),
                layout: &layouts.pipeline,
                stage: ProgrammableStage {
                    module: &module,
                    entry_point,
                    constants: &[],
                },
                cache: None,
            });
        let after = ctx.device.live_counts();
        let result = match made {
            Ok(pipeline) => {
                ctx.device.destroy_compute_pipeline(pipeline);
                Err("the bad pipeline was created".into())
            }
            Err(e) => Ok(e),
        };
        ctx.device.destroy_shader_module(module);
        layouts.destroy(ctx);
        check_eq!(after, before, "live counts after the failed create");
        result
    }
}

/// An entry point name the module lacks.
fn missing_entry_point<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let entries = [entry(0, wgt::ShaderStages::COMPUTE, storage(false, false))];
    let e = expect_pipeline_error(ctx, Some(&entries), "nope")?;
    check_eq!(
        e,
        PipelineError::EntryPoint {
            stage: naga::ShaderStage::Compute,
            name: "nope".into(),
        },
        "error"
    );
    Ok(Outcome::Pass)
}

/// The shader writes a storage buffer at group 0, binding 0; the layout
/// has no group, a uniform buffer there, a read-only storage buffer there,
/// or a storage buffer the compute stage cannot see.
fn interface_mismatches_the_layout<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let compute = wgt::ShaderStages::COMPUTE;
    let cases: [(&str, Option<Vec<wgt::BindGroupLayoutEntry>>); 5] = [
        ("no bind group", None),
        (
            "no such binding",
            Some(vec![entry(1, compute, storage(false, false))]),
        ),
        ("a uniform buffer", Some(vec![entry(0, compute, uniform())])),
        (
            "a read-only storage buffer",
            Some(vec![entry(0, compute, storage(true, false))]),
        ),
        (
            "a storage buffer for the fragment stage",
            Some(vec![entry(
                0,
                wgt::ShaderStages::FRAGMENT,
                storage(false, false),
            )]),
        ),
    ];
    for (what, entries) in cases {
        let e = expect_pipeline_error(ctx, entries.as_deref(), "main")?;
        check!(
            matches!(e, PipelineError::InterfaceMismatch(_)),
            "layout with {what}: expected InterfaceMismatch, got {e:?}"
        );
    }
    Ok(Outcome::Pass)
}
