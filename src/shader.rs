//! The backend-independent shader front end.
//!
//! Both backends turn a [`ShaderSource`] into a [`ShaderInput`] here: WGSL is
//! parsed and validated with naga, naga modules are validated, SPIR-V gets a
//! structural check and is then read with naga's SPIR-V front end and
//! validated (its words pass through to the driver unchanged), and
//! [`UncheckedSpirV`](crate::UncheckedSpirV) gets the structural check only.
//! A validated module can then be translated to SPIR-V for Vulkan
//! ([`to_spirv`], with the pipeline layout's [`interface::binding_map`]),
//! and an entry point's interface can be read and checked against a
//! pipeline layout and the device's stage rules (the [`interface`]
//! submodule: [`interface::find_entry_point`], [`interface::check_layout`],
//! [`interface::check_stage_stores`]).
//!
//! Nothing here panics on bad input: every failure is a [`ShaderError`] or
//! a [`PipelineError`](crate::PipelineError) with a message that says where
//! and what.

use std::borrow::Cow;

use crate::ShaderError;

pub(crate) mod constants;
mod cooperative;
pub(crate) mod interface;
pub(crate) mod spirv_fixups;
#[cfg(test)]
mod tests;

use crate::ShaderSource;

/// What a device supports for shaders beyond its features: each backend
/// fills it from its device ([`capabilities`] turns it into naga's terms).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ShaderSupport {
    /// Cube-array textures (Vulkan `imageCubeArray`).
    pub cube_arrays: bool,
    /// Per-sample shading: `@builtin(sample_index)` and
    /// `@interpolate(_, sample)` (Vulkan `sampleRateShading`).
    pub sample_rate_shading: bool,
}

/// What shaders may use on a device opened with `features` and
/// `hal_features` that has `support`, the same for every backend so that
/// naga accepts and rejects the same modules everywhere: the capabilities
/// the feature table gives those features ([`crate::features`]), and
/// always immediates (push constants), early depth tests, `pack2x16float` /
/// `unpack2x16float` (core WGSL; `PackHalf2x16` needs no Vulkan feature)
/// and atomics on storage textures (32-bit; Vulkan requires
/// `STORAGE_IMAGE_ATOMIC` on R32Uint/R32Sint, and layouts check the
/// format); with `support`, cube arrays and per-sample shading.
pub(crate) fn capabilities(
    features: wgt::Features,
    hal_features: crate::HalFeatures,
    support: ShaderSupport,
) -> naga::valid::Capabilities {
    use naga::valid::Capabilities as C;
    let mut caps = crate::features::naga_capabilities(features, hal_features)
        | C::IMMEDIATES
        | C::EARLY_DEPTH_TEST
        | C::TEXTURE_ATOMIC
        | C::SHADER_FLOAT16_IN_FLOAT32;
    caps.set(C::CUBE_ARRAY_TEXTURES, support.cube_arrays);
    caps.set(C::MULTISAMPLED_SHADING, support.sample_rate_shading);
    caps
}

/// Which stages outside compute may write storage buffers and textures
/// (and use atomics on them): vertex shaders on a device opened with
/// `VERTEX_WRITABLE_STORAGE` (Vulkan advertises it with
/// `vertexPipelineStoresAndAtomics`), fragment shaders where the device
/// has them (WebGPU allows them; Vulkan's `fragmentStoresAndAtomics`).
/// Each backend says what its device has; [`interface::check_stage_stores`]
/// holds entry points to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StageStores {
    /// Vertex shaders may write storage.
    pub vertex: bool,
    /// Fragment shaders may write storage.
    pub fragment: bool,
}

/// A shader module's code once the front end has accepted it: what a
/// backend's shader module keeps.
#[derive(Clone, Debug)]
pub(crate) enum ShaderInput<'a> {
    /// Validated naga IR (from WGSL or a naga module): its interface can be
    /// reflected and it can be translated for the backend.
    Naga(Box<ValidatedModule>),
    /// SPIR-V that passed [`check_spirv`], handed to the driver as it is.
    SpirV {
        /// The words.
        words: Cow<'a, [u32]>,
        /// What naga's front end read from them, validated: the interface
        /// that pipelines check against their layout. `None` for
        /// [`UncheckedSpirV`](crate::UncheckedSpirV), whose interface the
        /// hal does not know.
        module: Option<Box<ValidatedModule>>,
    },
}

impl<'a> ShaderInput<'a> {
    /// [`Self::new`] on a device opened with `features`: unchecked SPIR-V
    /// (passed through to the driver unread) needs `PASSTHROUGH_SHADERS`,
    /// and every cooperative matrix must fit one of the device's
    /// `cooperative_matrices` (`shader/cooperative.rs`).
    /// Both backends make their modules through this.
    pub(crate) fn for_device(
        source: ShaderSource<'a>,
        capabilities: naga::valid::Capabilities,
        features: wgt::Features,
        cooperative_matrices: &[wgt::CooperativeMatrixProperties],
    ) -> Result<Self, ShaderError> {
        let feature = wgt::Features::PASSTHROUGH_SHADERS;
        if matches!(source, ShaderSource::SpirVUnchecked(_)) && !features.contains(feature) {
            return Err(ShaderError::MissingFeature {
                what: "unchecked SPIR-V",
                feature,
            });
        }
        let input = Self::new(source, capabilities)?;
        let validated = match &input {
            Self::Naga(module) => Some(&**module),
            Self::SpirV { module, .. } => module.as_deref(),
        };
        if let Some(v) = validated {
            cooperative::check(v.module(), v.info(), cooperative_matrices)?;
        }
        Ok(input)
    }

    /// Runs the front end on `source`: [`parse_and_validate`] for WGSL,
    /// naga modules and SPIR-V (with `capabilities`; SPIR-V after
    /// [`check_spirv`]), [`check_spirv`] alone for unchecked SPIR-V.
    pub(crate) fn new(
        source: ShaderSource<'a>,
        capabilities: naga::valid::Capabilities,
    ) -> Result<Self, ShaderError> {
        match source {
            ShaderSource::SpirV(words) => {
                let module = parse_spirv(&words, capabilities)?;
                Ok(Self::SpirV {
                    words,
                    module: Some(Box::new(module)),
                })
            }
            ShaderSource::SpirVUnchecked(unchecked) => {
                let words = unchecked.into_words();
                check_spirv(&words)?;
                Ok(Self::SpirV {
                    words,
                    module: None,
                })
            }
            other => parse_and_validate(other, capabilities).map(|m| Self::Naga(Box::new(m))),
        }
    }

    /// The same input owning its words (what a shader module keeps); out
    /// of memory is an error, not an abort.
    pub(crate) fn into_static(self) -> Result<ShaderInput<'static>, crate::DeviceError> {
        Ok(match self {
            Self::Naga(module) => ShaderInput::Naga(module),
            Self::SpirV { words, module } => {
                let mut owned = Vec::new();
                owned
                    .try_reserve_exact(words.len())
                    .map_err(|_| crate::DeviceError::OutOfMemory)?;
                owned.extend_from_slice(&words);
                ShaderInput::SpirV {
                    words: Cow::Owned(owned),
                    module,
                }
            }
        })
    }
}

/// A naga module that passed validation, with its validation results.
///
/// Only [`parse_and_validate`] and [`resolve_overrides`] make one, so the
/// `info` always belongs to the `module`.
#[derive(Clone, Debug)]
pub(crate) struct ValidatedModule {
    module: naga::Module,
    info: naga::valid::ModuleInfo,
    /// The WGSL text the module was parsed from, kept for SPIR-V debug info.
    wgsl: Option<String>,
}

impl ValidatedModule {
    /// The naga IR.
    pub(crate) fn module(&self) -> &naga::Module {
        &self.module
    }

    /// naga's validation results for [`Self::module`].
    pub(crate) fn info(&self) -> &naga::valid::ModuleInfo {
        &self.info
    }

    /// The WGSL text, when the module came from WGSL.
    pub(crate) fn wgsl(&self) -> Option<&str> {
        self.wgsl.as_deref()
    }

    /// This module after naga's `process_overrides` answered `ir` and
    /// `info`: itself when nothing changed, else the new module with the
    /// same WGSL text (resolving copies spans, which still index it).
    pub(crate) fn resolved<'m>(
        &'m self,
        ir: Cow<'_, naga::Module>,
        info: Cow<'_, naga::valid::ModuleInfo>,
    ) -> Cow<'m, ValidatedModule> {
        match (ir, info) {
            (Cow::Borrowed(_), Cow::Borrowed(_)) => Cow::Borrowed(self),
            (ir, info) => Cow::Owned(ValidatedModule {
                module: ir.into_owned(),
                info: info.into_owned(),
                wgsl: self.wgsl.clone(),
            }),
        }
    }
}

/// Parses (WGSL, SPIR-V) and validates (all but unchecked SPIR-V) with naga.
///
/// `capabilities` are what the device allows; WGSL `enable` directives for
/// anything else fail to parse, and a module that uses anything else fails
/// validation. SPIR-V goes through [`parse_spirv`]. Unchecked SPIR-V is not
/// read: it returns [`ShaderError::Unsupported`]; use [`ShaderInput::new`].
pub(crate) fn parse_and_validate(
    source: ShaderSource<'_>,
    capabilities: naga::valid::Capabilities,
) -> Result<ValidatedModule, ShaderError> {
    match source {
        ShaderSource::Wgsl(text) => {
            let module = parse_wgsl(&text, capabilities)
                .map_err(|err| refused_enable(err, &text, capabilities))?;
            let info = validate(&module, capabilities, Some(&text))?;
            Ok(ValidatedModule {
                module,
                info,
                wgsl: Some(text.into_owned()),
            })
        }
        ShaderSource::Naga(module) => {
            let info = validate(&module, capabilities, None)?;
            Ok(ValidatedModule {
                module: module.into_owned(),
                info,
                wgsl: None,
            })
        }
        ShaderSource::SpirV(words) => parse_spirv(&words, capabilities),
        ShaderSource::SpirVUnchecked(_) => Err(ShaderError::Unsupported(
            "unchecked SPIR-V is passed through, not read into naga IR",
        )),
    }
}

/// Reads SPIR-V with naga's front end and validates what it read with
/// `capabilities`, after the structural check ([`check_spirv`]).
///
/// The front end runs with strict capabilities: a module declaring a
/// capability naga does not know is refused rather than half-understood.
/// Its failures (and a panic inside it, should naga have such a bug) are
/// [`ShaderError::SpirVParse`] with naga's message; validation failures are
/// [`ShaderError::Validation`] (or [`ShaderError::MissingCapabilities`]) at 0:0.
pub(crate) fn parse_spirv(
    words: &[u32],
    capabilities: naga::valid::Capabilities,
) -> Result<ValidatedModule, ShaderError> {
    check_spirv(words)?;
    let options = naga::front::spv::Options {
        // The words go to the driver unchanged; the IR is only reflected.
        adjust_coordinate_space: false,
        strict_capabilities: true,
        block_ctx_dump_prefix: None,
    };
    let parsed = std::panic::catch_unwind(|| {
        naga::front::spv::Frontend::new(words.iter().copied(), &options).parse()
    });
    let module = match parsed {
        Ok(Ok(module)) => module,
        Ok(Err(err)) => return Err(ShaderError::SpirVParse(error_chain(&err))),
        Err(_) => {
            return Err(ShaderError::SpirVParse(
                "naga's SPIR-V front end panicked on this module".into(),
            ))
        }
    };
    check_spirv_entry_points(words, &module)?;
    let info = validate(&module, capabilities, None)?;
    Ok(ValidatedModule {
        module,
        info,
        wgsl: None,
    })
}

/// Fails unless every `OpEntryPoint` of `words` is an entry point of the
/// module naga read from them: naga's front end drops one whose function
/// it never met (as in a module of a lone `OpEntryPoint`), which the driver
/// would be handed all the same.
fn check_spirv_entry_points(words: &[u32], module: &naga::Module) -> Result<(), ShaderError> {
    use spirv::ExecutionModel as X;
    for (at, op, count) in spirv_fixups::instructions(words) {
        if op != Some(spirv::Op::EntryPoint) {
            continue;
        }
        let instruction = &words[at..at + count];
        let model = instruction.get(1).copied().unwrap_or(u32::MAX);
        let name = spirv_literal(instruction.get(3..).unwrap_or_default());
        let stage = match X::from_u32(model) {
            Some(X::Vertex) => Some(naga::ShaderStage::Vertex),
            Some(X::Fragment) => Some(naga::ShaderStage::Fragment),
            Some(X::GLCompute) => Some(naga::ShaderStage::Compute),
            _ => None,
        };
        let found = stage.is_some_and(|stage| {
            module
                .entry_points
                .iter()
                .any(|ep| ep.stage == stage && ep.name == name)
        });
        if !found {
            return Err(ShaderError::SpirVParse(format!(
                "OpEntryPoint {name:?} (execution model {model}) did not become an entry point: \
                 its function is missing, or naga does not read its execution model"
            )));
        }
    }
    Ok(())
}

/// A SPIR-V literal string: UTF-8 bytes, lowest byte of each word first,
/// up to the first NUL (lossy where it is not UTF-8).
fn spirv_literal(words: &[u32]) -> String {
    let bytes: Vec<u8> = words
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .take_while(|&b| b != 0)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Parses WGSL. Errors carry the 1-based line and column of naga's first
/// label, and naga's message followed by its labels and notes.
fn parse_wgsl(
    text: &str,
    capabilities: naga::valid::Capabilities,
) -> Result<naga::Module, ShaderError> {
    let options = naga::front::wgsl::Options {
        parse_doc_comments: false,
        capabilities,
    };
    naga::front::wgsl::Frontend::new_with_options(options)
        .parse(text)
        .map_err(|err| {
            let mut message = err.message().to_owned();
            let mut first = None;
            for (span, label) in err.labels() {
                let at = span_location(text, span);
                first = first.or(at);
                if !label.is_empty() && !err.message().contains(label) {
                    let (line, column) = at.unwrap_or((0, 0));
                    message.push_str(&format!("; {line}:{column}: {label}"));
                }
            }
            for note in err.notes() {
                message.push_str("; note: ");
                message.push_str(note);
            }
            let (line, column) = first.unwrap_or((0, 0));
            ShaderError::Parse {
                message,
                line,
                column,
            }
        })
}

/// Validates a module with every validation flag and `capabilities`.
/// `text` is the WGSL the module came from, if any: it gives the error's
/// position (0:0 without it). A module that only fails for want of
/// capabilities is [`ShaderError::MissingCapabilities`], naming them.
fn validate(
    module: &naga::Module,
    capabilities: naga::valid::Capabilities,
    text: Option<&str>,
) -> Result<naga::valid::ModuleInfo, ShaderError> {
    let info = validator(capabilities).validate(module).map_err(|err| {
        let (line, column) = text
            .and_then(|text| err.spans().find_map(|&(span, _)| span_location(text, span)))
            .unwrap_or((0, 0));
        let needed = missing_capabilities(module, capabilities);
        missing_or(
            needed,
            capabilities,
            error_chain(&err),
            (line, column),
            |m, l, c| ShaderError::Validation {
                message: m,
                line: l,
                column: c,
            },
        )
    })?;
    let ungated = ungated_capabilities(module).difference(capabilities);
    if !ungated.is_empty() {
        return Err(ShaderError::MissingCapabilities {
            needed: ungated,
            available: capabilities,
            message: format!("the module uses {ungated:?}, which the device was not opened with"),
            line: 0,
            column: 0,
        });
    }
    Ok(info)
}

/// Capabilities `module` needs that naga 30's validator does not check
/// (its WGSL front end gates them through `enable` directives, SPIR-V and
/// naga IR reach the validator unchecked): cooperative matrices (their
/// types and the expressions that make them).
fn ungated_capabilities(module: &naga::Module) -> naga::valid::Capabilities {
    let coop_type = module
        .types
        .iter()
        .any(|(_, ty)| matches!(ty.inner, naga::TypeInner::CooperativeMatrix { .. }));
    // A matrix loaded and stored straight away has no type in the arena:
    // its expressions say it.
    let functions = module
        .functions
        .iter()
        .map(|(_, f)| f)
        .chain(module.entry_points.iter().map(|e| &e.function));
    let coop_expression = || {
        functions.flat_map(|f| f.expressions.iter()).any(|(_, e)| {
            matches!(
                e,
                naga::Expression::CooperativeLoad { .. }
                    | naga::Expression::CooperativeMultiplyAdd { .. }
            )
        })
    };
    if coop_type || coop_expression() {
        naga::valid::Capabilities::COOPERATIVE_MATRIX
    } else {
        naga::valid::Capabilities::empty()
    }
}

/// A WGSL parse error, as [`ShaderError::MissingCapabilities`] when it is
/// an `enable` directive (or what it gates) refused for want of
/// capabilities the module then needs; `err` unchanged otherwise.
fn refused_enable(
    err: ShaderError,
    text: &str,
    capabilities: naga::valid::Capabilities,
) -> ShaderError {
    let ShaderError::Parse {
        message,
        line,
        column,
    } = err
    else {
        return err;
    };
    let all = naga::valid::Capabilities::all();
    let needed = parse_wgsl(text, all).ok().map(|module| {
        // The fewest capabilities the parse itself needs (its `enable`
        // directives), dropping the highest first, then what validation
        // needs beside them.
        let parses = |caps| parse_wgsl(text, caps).is_ok();
        let mut needed = all.difference(capabilities);
        let extra: Vec<_> = needed.iter().collect();
        for cap in extra.into_iter().rev() {
            if parses(capabilities | needed.difference(cap)) {
                needed.remove(cap);
            }
        }
        let beside = capabilities | needed;
        needed
            | missing_capabilities(&module, beside).unwrap_or_default()
            | ungated_capabilities(&module).difference(beside)
    });
    let needed = needed.filter(|needed| !needed.is_empty());
    missing_or(needed, capabilities, message, (line, column), |m, l, c| {
        ShaderError::Parse {
            message: m,
            line: l,
            column: c,
        }
    })
}

/// [`ShaderError::MissingCapabilities`] when `needed` names some, else
/// what `otherwise` makes of the message and position.
fn missing_or(
    needed: Option<naga::valid::Capabilities>,
    available: naga::valid::Capabilities,
    message: String,
    (line, column): (u32, u32),
    otherwise: impl FnOnce(String, u32, u32) -> ShaderError,
) -> ShaderError {
    match needed {
        Some(needed) => ShaderError::MissingCapabilities {
            needed,
            available,
            message,
            line,
            column,
        },
        None => otherwise(message, line, column),
    }
}

/// naga's validator with every validation flag and `capabilities`; with
/// `SUBGROUP`, subgroup operations of every kind in compute and fragment
/// shaders (vertex ones too with `SUBGROUP_VERTEX_STAGE`), which is what the
/// `SUBGROUP` feature stands for.
fn validator(capabilities: naga::valid::Capabilities) -> naga::valid::Validator {
    use naga::valid::{Capabilities as C, ShaderStages as St, SubgroupOperationSet};
    let mut validator =
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), capabilities);
    if capabilities.contains(C::SUBGROUP) {
        let mut stages = St::COMPUTE | St::FRAGMENT;
        stages.set(St::VERTEX, capabilities.contains(C::SUBGROUP_VERTEX_STAGE));
        validator
            .subgroup_stages(stages)
            .subgroup_operations(SubgroupOperationSet::all());
    }
    validator
}

/// The capabilities beyond `capabilities` that `module` (which failed
/// validation with them) needs: `None` when it fails with every capability
/// too, i.e. for another reason; empty when it passes with `capabilities`.
/// Runs only on an error path: a few more validations find the
/// capabilities whose absence alone fails the module.
fn missing_capabilities(
    module: &naga::Module,
    capabilities: naga::valid::Capabilities,
) -> Option<naga::valid::Capabilities> {
    let passes = |caps| validator(caps).validate(module).is_ok();
    let all = naga::valid::Capabilities::all();
    if !passes(all) {
        return None;
    }
    // Drop each extra capability the module still validates without,
    // highest first: where two would do (`SHADER_INT64_ATOMIC_MIN_MAX` or
    // the `…_ALL_OPS` that includes it), the lesser one is named.
    let mut needed = all.difference(capabilities);
    let extra: Vec<_> = needed.iter().collect();
    for cap in extra.into_iter().rev() {
        if passes(capabilities | needed.difference(cap)) {
            needed.remove(cap);
        }
    }
    Some(needed)
}

/// An error's message followed by its chain of causes, `: `-separated.
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut message = err.to_string();
    let mut cause = err.source();
    while let Some(next) = cause {
        message.push_str(": ");
        message.push_str(&next.to_string());
        cause = next.source();
    }
    message
}

/// The 1-based line and column (in characters) where `span` starts in
/// `text`; `None` for an unknown span or one that does not fit `text`.
fn span_location(text: &str, span: naga::Span) -> Option<(u32, u32)> {
    let start = span.to_range()?.start;
    let before = text.get(..start)?;
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Some((saturate(line), saturate(column)))
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Checks that `words` look like a SPIR-V module a Vulkan 1.3 driver can
/// be handed: the magic number in host order, a 5-word header with version
/// 1.0 to 1.6 and a non-zero id bound, an instruction stream in which every
/// instruction's word count is at least 1 and ends inside the stream, and at
/// least one `OpEntryPoint`. This is no validator (the module's meaning is
/// not checked); it stops the driver from reading past the code.
pub(crate) fn check_spirv(words: &[u32]) -> Result<(), ShaderError> {
    let invalid = |reason| Err(ShaderError::InvalidSpirV(reason));
    let Some(&magic) = words.first() else {
        return invalid("no words");
    };
    if magic != spirv::MAGIC_NUMBER {
        if magic.swap_bytes() == spirv::MAGIC_NUMBER {
            return invalid("the words are byte-swapped (magic number in the wrong endianness)");
        }
        return invalid("the first word is not the SPIR-V magic number 0x07230203");
    }
    if words.len() < spirv_fixups::HEADER {
        return invalid("shorter than the 5-word header");
    }
    let version = words[1];
    let (major, minor) = ((version >> 16) & 0xff, (version >> 8) & 0xff);
    if version & 0xff00_00ff != 0 || major != 1 {
        return invalid("the version word is not a SPIR-V 1.x version");
    }
    if minor > 6 {
        return invalid("version above 1.6");
    }
    if words[3] == 0 {
        return invalid("the id bound is zero");
    }
    let mut entry_points = 0usize;
    let mut at = spirv_fixups::HEADER;
    while let Some(&first) = words.get(at) {
        let count = (first >> 16) as usize;
        if count == 0 {
            return invalid("an instruction has a word count of zero");
        }
        if count > words.len() - at {
            return invalid("an instruction runs past the end of the code");
        }
        if first & 0xffff == spirv::Op::EntryPoint as u32 {
            entry_points += 1;
        }
        at += count;
    }
    if entry_points == 0 {
        return invalid("no OpEntryPoint");
    }
    Ok(())
}

/// Whether SPIR-V `words` (which passed the structural check) declare an
/// `OpEntryPoint` of `stage`'s execution model named `name`. Its interface
/// is not read, but a misspelt entry point is caught here rather than by
/// the driver.
pub(crate) fn spirv_has_entry_point(words: &[u32], stage: naga::ShaderStage, name: &str) -> bool {
    use spirv::ExecutionModel as X;
    let model = match stage {
        naga::ShaderStage::Vertex => X::Vertex,
        naga::ShaderStage::Fragment => X::Fragment,
        naga::ShaderStage::Compute => X::GLCompute,
        _ => return false,
    };
    spirv_has_entry_point_model(words, model, name)
}

/// Whether SPIR-V `words` (which passed the structural check) declare an
/// `OpEntryPoint` of execution model `model` named `name`.
pub(crate) fn spirv_has_entry_point_model(
    words: &[u32],
    model: spirv::ExecutionModel,
    name: &str,
) -> bool {
    // The name is a literal string: UTF-8 bytes, lowest byte of each word
    // first, NUL-terminated, padded with NULs to a whole word.
    let matches = |literal: &[u32]| {
        let mut bytes = literal.iter().flat_map(|w| w.to_le_bytes());
        name.bytes().all(|b| bytes.next() == Some(b)) && bytes.next() == Some(0)
    };
    spirv_fixups::instructions(words).any(|(at, op, count)| {
        let instruction = &words[at..at + count];
        op == Some(spirv::Op::EntryPoint)
            && instruction.get(1) == Some(&(model as u32))
            && instruction.get(3..).is_some_and(matches)
    })
}

/// The SPIR-V version generated for Vulkan (1.5: Vulkan 1.2 and later).
pub(crate) const SPIRV_VERSION: (u8, u8) = (1, 5);

/// How [`to_spirv`] translates a module.
#[derive(Clone, Debug)]
pub(crate) struct SpirvOptions<'a> {
    /// Emit only this entry point (and what it reaches); `None`: all of them.
    pub entry_point: Option<(naga::ShaderStage, &'a str)>,
    /// Where bindings go (from the pipeline layout, see
    /// [`interface::binding_map`]): gives each binding array its layout's
    /// element count. Bindings not in the map keep group g / binding b as
    /// set g / binding b. A `binding_array<T>` without a size must be in it.
    pub binding_map: Option<&'a naga::back::spv::BindingMap>,
    /// Use `StorageInputOutput16` for `f16` entry-point inputs and outputs
    /// (only where the device enabled `storageInputOutput16`); otherwise
    /// naga passes them as `f32` and converts.
    pub storage_input_output_16: bool,
    /// Values for the module's `override` declarations, by name or id.
    /// Overrides without a value use their default; one without either is
    /// an error.
    pub constants: Option<&'a naga::back::PipelineConstants>,
    /// Emit debug info (names; for WGSL modules the source text and line
    /// numbers too) under this file name. `None`: no debug info.
    pub debug_file_name: Option<&'a str>,
    /// Flip Y and remap depth in vertex outputs (for a non-flipped viewport).
    pub adjust_coordinate_space: bool,
    /// Write `PointSize` in vertex shaders (needed for point-list topology).
    pub force_point_size: bool,
    /// Bounds-check policies for indexing and image accesses.
    pub bounds_checks: naga::proc::BoundsCheckPolicies,
    /// How workgroup memory is zero-initialised.
    pub zero_initialize_workgroup_memory: naga::back::spv::ZeroInitializeWorkgroupMemoryMode,
}

impl Default for SpirvOptions<'_> {
    fn default() -> Self {
        Self {
            entry_point: None,
            binding_map: None,
            storage_input_output_16: false,
            constants: None,
            debug_file_name: None,
            adjust_coordinate_space: false,
            force_point_size: true,
            bounds_checks: naga::proc::BoundsCheckPolicies::default(),
            zero_initialize_workgroup_memory:
                naga::back::spv::ZeroInitializeWorkgroupMemoryMode::Polyfill,
        }
    }
}

/// Resolves `override` declarations with `constants` and, when
/// `entry_point` is given, keeps only that entry point. Borrows `module`
/// back when there is nothing to do.
pub(crate) fn resolve_overrides<'m>(
    module: &'m ValidatedModule,
    entry_point: Option<(naga::ShaderStage, &str)>,
    constants: &naga::back::PipelineConstants,
) -> Result<Cow<'m, ValidatedModule>, ShaderError> {
    let (ir, info) = naga::back::pipeline_constants::process_overrides(
        &module.module,
        &module.info,
        entry_point,
        constants,
    )
    .map_err(|err| ShaderError::Translation(error_chain(&err)))?;
    Ok(module.resolved(ir, info))
}

/// Translates a validated module to SPIR-V 1.5 for Vulkan.
///
/// Bind group `g`, binding `b` becomes descriptor set `g`, binding `b`, with
/// binding arrays sized by `options.binding_map`; a `binding_array<T>`
/// without a size that the entry point uses and the map does not size is a
/// [`ShaderError::Translation`] (naga would emit a runtime array without the
/// `RuntimeDescriptorArray` capability);
/// immediates (`var<immediate>`) become a push-constant block at offset 0.
/// Every SPIR-V capability the module needs is allowed: the validator has
/// already held the module to the device's capabilities (ray queries
/// included). Overrides are resolved first (see [`resolve_overrides`]).
pub(crate) fn to_spirv(
    module: &ValidatedModule,
    options: &SpirvOptions<'_>,
) -> Result<Vec<u32>, ShaderError> {
    use naga::back::spv;

    let empty = naga::back::PipelineConstants::default();
    let resolved = resolve_overrides(
        module,
        options.entry_point,
        options.constants.unwrap_or(&empty),
    )?;
    check_array_sizes(&resolved, options)?;
    let mut flags = spv::WriterFlags::LABEL_VARYINGS;
    flags.set(spv::WriterFlags::DEBUG, options.debug_file_name.is_some());
    flags.set(
        spv::WriterFlags::ADJUST_COORDINATE_SPACE,
        options.adjust_coordinate_space,
    );
    flags.set(spv::WriterFlags::FORCE_POINT_SIZE, options.force_point_size);
    // Resolving overrides copies spans, so they still index the WGSL text.
    let debug_info =
        options
            .debug_file_name
            .zip(resolved.wgsl())
            .map(|(file_name, source_code)| spv::DebugInfo {
                source_code,
                file_name,
                language: spv::SourceLanguage::WGSL,
            });
    let spv_options = spv::Options {
        lang_version: SPIRV_VERSION,
        flags,
        // Bindings outside the map: group g / binding b map to set g / binding b.
        fake_missing_bindings: true,
        binding_map: options.binding_map.cloned().unwrap_or_default(),
        use_storage_input_output_16: options.storage_input_output_16,
        capabilities: None,
        bounds_check_policies: options.bounds_checks,
        zero_initialize_workgroup_memory: options.zero_initialize_workgroup_memory,
        debug_info,
        ..spv::Options::default()
    };
    let pipeline_options = options
        .entry_point
        .map(|(shader_stage, name)| spv::PipelineOptions {
            shader_stage,
            entry_point: name.to_owned(),
        });
    let mut words = spv::write_vec(
        &resolved.module,
        &resolved.info,
        &spv_options,
        pipeline_options.as_ref(),
    )
    .map_err(|err| ShaderError::Translation(error_chain(&err)))?;
    // What naga writes that SPIR-V for Vulkan forbids (`shader/spirv_fixups.rs`).
    spirv_fixups::apply(&mut words);
    Ok(words)
}

/// Fails when a `binding_array<T>` without a size, used by the entry point
/// (or by any, when all are emitted), gets no size from the binding map.
fn check_array_sizes(
    module: &ValidatedModule,
    options: &SpirvOptions<'_>,
) -> Result<(), ShaderError> {
    let ir = &module.module;
    let entry = options.entry_point.and_then(|(stage, name)| {
        let index = ir
            .entry_points
            .iter()
            .position(|ep| ep.stage == stage && ep.name == name)?;
        Some(module.info.get_entry_point(index))
    });
    for (handle, var) in ir.global_variables.iter() {
        let unbounded = matches!(
            ir.types[var.ty].inner,
            naga::TypeInner::BindingArray {
                size: naga::ArraySize::Dynamic,
                ..
            }
        );
        let (Some(rb), true) = (var.binding.as_ref(), unbounded) else {
            continue;
        };
        if entry.is_some_and(|uses| uses[handle].is_empty()) {
            continue;
        }
        let sized = options
            .binding_map
            .and_then(|map| map.get(rb))
            .is_some_and(|info| info.binding_array_size.is_some());
        if !sized {
            return Err(ShaderError::Translation(format!(
                "group {} binding {}: binding_array without a size needs its element count \
                 from the pipeline layout",
                rb.group, rb.binding
            )));
        }
    }
    Ok(())
}
