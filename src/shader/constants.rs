//! Pipeline-overridable constants: a stage's values checked against its
//! module's `override` declarations and resolved, in one place for every
//! backend, so a stage is checked and translated from the same module
//! everywhere.

use std::borrow::Cow;

use super::ValidatedModule;
use crate::{ConstantProblem, PipelineError};

/// Refuses values for a stage whose module is SPIR-V: they are given to
/// WGSL and naga modules only ([`ConstantProblem::SpirV`]).
pub(crate) fn refuse_for_spirv(
    stage: naga::ShaderStage,
    entry_point: &str,
    constants: &[(&str, f64)],
) -> Result<(), PipelineError> {
    match constants.first() {
        Some((name, _)) => Err(error(stage, entry_point, name, ConstantProblem::SpirV)),
        None => Ok(()),
    }
}

/// The module a stage's entry point is checked and translated from:
/// `module` with its overrides resolved by `constants` and only
/// `entry_point` kept (borrowed back when there is nothing to do).
///
/// Each value is looked up by its override's identifier, the `@id` when
/// it has one, else its name (WebGPU's rule), and must fit the override's
/// type; an override the entry point uses without a default needs a value.
pub(crate) fn resolve<'m>(
    module: &'m ValidatedModule,
    stage: naga::ShaderStage,
    entry_point: &str,
    constants: &[(&str, f64)],
) -> Result<Cow<'m, ValidatedModule>, PipelineError> {
    let ir = module.module();
    if ir.overrides.is_empty() && constants.is_empty() {
        return Ok(Cow::Borrowed(module));
    }
    let mut values = naga::back::PipelineConstants::default();
    for &(name, value) in constants {
        let declared = ir
            .overrides
            .iter()
            .find(|(_, o)| identifier(o).as_deref() == Some(name));
        let Some((_, over)) = declared else {
            return Err(error(
                stage,
                entry_point,
                name,
                ConstantProblem::NotDeclared,
            ));
        };
        // A validated module's handles are good; a bad one checks nothing.
        if let Ok(ty) = ir.types.get_handle(over.ty) {
            check_value(&ty.inner, value).map_err(|p| error(stage, entry_point, name, p))?;
        }
        values.insert(name.to_owned(), value);
    }
    let (ir, info) = naga::back::pipeline_constants::process_overrides(
        ir,
        module.info(),
        Some((stage, entry_point)),
        &values,
    )
    .map_err(|err| {
        use naga::back::pipeline_constants::PipelineConstantError as E;
        let (name, problem) = match err {
            E::MissingValue(name) => (name, ConstantProblem::Missing),
            E::NotFound(name) => (name, ConstantProblem::NotDeclared),
            other => (
                String::new(),
                ConstantProblem::Invalid(super::error_chain(&other)),
            ),
        };
        error(stage, entry_point, &name, problem)
    })?;
    Ok(module.resolved(ir, info))
}

/// The error for constant `name` of a stage.
fn error(
    stage: naga::ShaderStage,
    entry_point: &str,
    name: &str,
    problem: ConstantProblem,
) -> PipelineError {
    PipelineError::Constant {
        stage,
        entry_point: entry_point.to_owned(),
        name: name.to_owned(),
        problem,
    }
}

/// An override's identifier: its `@id` when it has one, else its name.
fn identifier(over: &naga::Override) -> Option<Cow<'_, str>> {
    match (over.id, &over.name) {
        (Some(id), _) => Some(Cow::Owned(id.to_string())),
        (None, Some(name)) => Some(Cow::Borrowed(name)),
        (None, None) => None,
    }
}

/// Whether `value` is one an override of type `ty` holds exactly:
/// booleans take anything (non-zero is true), integers a whole number
/// within their range, floats a finite value within theirs. (WebIDL's
/// truncation of integers is not the hal's: an upper layer that follows
/// WebGPU truncates before it passes the value.)
fn check_value(ty: &naga::TypeInner, value: f64) -> Result<(), ConstantProblem> {
    use naga::ScalarKind as K;
    let naga::TypeInner::Scalar(scalar) = *ty else {
        return Ok(());
    };
    if scalar.kind == K::Bool {
        return Ok(());
    }
    if !value.is_finite() {
        return Err(ConstantProblem::NotFinite);
    }
    let (low, high, ty) = match (scalar.kind, scalar.width) {
        (K::Sint, 2) => (f64::from(i16::MIN), f64::from(i16::MAX), "i16"),
        (K::Uint, 2) => (0.0, f64::from(u16::MAX), "u16"),
        (K::Sint, 4) => (f64::from(i32::MIN), f64::from(i32::MAX), "i32"),
        (K::Uint, 4) => (0.0, f64::from(u32::MAX), "u32"),
        (K::Float, 2) => (-65504.0, 65504.0, "f16"),
        (K::Float, 4) => (f64::from(f32::MIN), f64::from(f32::MAX), "f32"),
        _ => return Ok(()),
    };
    if scalar.kind != K::Float && value.fract() != 0.0 {
        return Err(ConstantProblem::NotAnInteger {
            value: value.to_string(),
            ty,
        });
    }
    if value < low || value > high {
        return Err(ConstantProblem::OutOfRange { ty });
    }
    Ok(())
}
