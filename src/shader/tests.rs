//! Unit tests of the shader front end and the interface check.

use std::borrow::Cow;
use std::num::{NonZeroU32, NonZeroU64};

use naga::valid::Capabilities;
use wgt::{BindGroupLayoutEntry, BindingType, ShaderStages};

use super::interface::*;
use super::*;
use crate::{PipelineError, ShaderError};

fn caps() -> Capabilities {
    Capabilities::default() | Capabilities::IMMEDIATES
}

fn wgsl(text: &str) -> Result<ValidatedModule, ShaderError> {
    parse_and_validate(ShaderSource::Wgsl(Cow::Borrowed(text)), caps())
}

fn valid(text: &str) -> ValidatedModule {
    wgsl(text).expect("the test shader is valid")
}

const COMPUTE: &str = "\
@group(0) @binding(0) var<storage, read_write> data: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    data[id.x] = data[id.x] * 2u;
}
";

#[test]
fn syntax_error_is_parse_with_position() {
    let text = "fn main() {\n    let x = 1.0 +;\n}\n";
    match wgsl(text) {
        Err(ShaderError::Parse {
            message,
            line,
            column,
        }) => {
            // `;` is the offending token: line 2, column 18.
            assert_eq!((line, column), (2, 18), "{message}");
            assert!(message.contains("expected"), "{message}");
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
}

#[test]
fn lowering_type_error_is_parse_with_position() {
    let text = "fn f() {\n  let x: f32 = 1u;\n}\n";
    match wgsl(text) {
        Err(ShaderError::Parse { line, .. }) => assert_eq!(line, 2),
        other => panic!("expected a parse error, got {other:?}"),
    }
}

#[test]
fn missing_capability_is_named_with_position() {
    let text = "\
struct Pc { v: vec4<f32> }
var<immediate> pc: Pc;
@compute @workgroup_size(1)
fn main() { let x = pc.v; }
";
    let err = parse_and_validate(
        ShaderSource::Wgsl(Cow::Borrowed(text)),
        Capabilities::default(),
    )
    .expect_err("immediates need the IMMEDIATES capability");
    match err {
        ShaderError::MissingCapabilities {
            needed,
            available,
            message,
            line,
            ..
        } => {
            assert_eq!(needed, Capabilities::IMMEDIATES, "{message}");
            assert_eq!(available, Capabilities::default());
            assert!(line >= 1, "a WGSL module's error has a position: {message}");
        }
        other => panic!("expected missing capabilities, got {other:?}"),
    }
}

/// The capabilities every device gets, from the shared rule.
fn device_caps(sample_rate_shading: bool) -> Capabilities {
    crate::shader::capabilities(
        wgt::Features::empty(),
        crate::HalFeatures::empty(),
        crate::shader::ShaderSupport {
            cube_arrays: true,
            sample_rate_shading,
        },
    )
}

#[test]
fn pack2x16float_is_core_wgsl_on_every_device() {
    let text = "\
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@compute @workgroup_size(1)
fn main() {
    let v = unpack2x16float(data[0]);
    data[1] = pack2x16float(v * 2.0);
}
";
    parse_and_validate(ShaderSource::Wgsl(Cow::Borrowed(text)), device_caps(false))
        .expect("pack2x16float needs nothing beyond the baseline");
}

#[test]
fn sample_rate_shading_comes_from_the_device() {
    let text = "\
@fragment
fn main(@builtin(sample_index) i: u32, @builtin(sample_mask) m: u32) -> @location(0) vec4<f32> {
    return vec4<f32>(f32(i), f32(m), 0.0, 1.0);
}
";
    parse_and_validate(ShaderSource::Wgsl(Cow::Borrowed(text)), device_caps(true))
        .expect("a device with sample-rate shading takes sample_index");
    let err = parse_and_validate(ShaderSource::Wgsl(Cow::Borrowed(text)), device_caps(false))
        .expect_err("sample_index needs per-sample shading");
    assert!(
        matches!(
            err,
            ShaderError::MissingCapabilities { needed, .. }
                if needed == Capabilities::MULTISAMPLED_SHADING
        ),
        "{err:?}"
    );
}

#[test]
fn naga_module_type_error_is_validation_without_position() {
    let mut module = valid("fn f() -> f32 { return 1.0; }\n").module().clone();
    let u32_ty = module.types.insert(
        naga::Type {
            name: None,
            inner: naga::TypeInner::Scalar(naga::Scalar::U32),
        },
        naga::Span::UNDEFINED,
    );
    for (_, function) in module.functions.iter_mut() {
        if let Some(result) = function.result.as_mut() {
            result.ty = u32_ty;
        }
    }
    let err = parse_and_validate(ShaderSource::Naga(Cow::Owned(module)), caps())
        .expect_err("returning f32 from a u32 function is a type error");
    match err {
        ShaderError::Validation {
            message,
            line,
            column,
        } => {
            assert_eq!((line, column), (0, 0), "no source text, no position");
            // The chain names the function and the cause.
            assert!(message.contains(": "), "{message}");
        }
        other => panic!("expected a validation error, got {other:?}"),
    }
}

const COOPERATIVE: &str = "enable wgpu_cooperative_matrix;
@group(0) @binding(0) var<storage, read_write> d: array<f32>;
@compute @workgroup_size(64)
fn main() {
    let m = coopLoad<coop_mat8x8<f32, C>>(&d[0], 8u);
    coopStore(m, &d[0], 8u);
}
";

/// A cooperative matrix needs `COOPERATIVE_MATRIX`, named whether it comes
/// as WGSL (whose `enable` directive naga refuses at parse time) or as a
/// naga module (which naga 30's validator passes unchecked).
#[test]
fn cooperative_matrices_need_their_capability_from_every_source() {
    let named = |r: Result<ValidatedModule, ShaderError>| match r {
        Err(ShaderError::MissingCapabilities { needed, .. }) => needed,
        other => panic!("expected MissingCapabilities, got {other:?}"),
    };
    assert_eq!(named(wgsl(COOPERATIVE)), Capabilities::COOPERATIVE_MATRIX);
    let with = caps() | Capabilities::COOPERATIVE_MATRIX;
    let module = parse_and_validate(ShaderSource::Wgsl(Cow::Borrowed(COOPERATIVE)), with)
        .expect("valid with the capability")
        .module()
        .clone();
    let from_ir = parse_and_validate(ShaderSource::Naga(Cow::Borrowed(&module)), caps());
    assert_eq!(named(from_ir), Capabilities::COOPERATIVE_MATRIX);
    assert!(parse_and_validate(ShaderSource::Naga(Cow::Owned(module)), with).is_ok());
}

#[test]
fn naga_module_passes() {
    let module = valid(COMPUTE).module().clone();
    let validated = parse_and_validate(ShaderSource::Naga(Cow::Borrowed(&module)), caps())
        .expect("a valid naga module validates");
    assert!(validated.wgsl().is_none());
    assert_eq!(validated.module().entry_points.len(), 1);
}

#[test]
fn compute_shader_becomes_spirv() {
    let module = valid(COMPUTE);
    let words = to_spirv(&module, &SpirvOptions::default()).expect("translates");
    assert_eq!(words.first(), Some(&spirv::MAGIC_NUMBER));
    assert_eq!(words[1], 0x0001_0500, "SPIR-V 1.5");
    check_spirv(&words).expect("naga's output passes the structural check");

    // One entry point, with debug info from the WGSL text.
    let debug = to_spirv(
        &module,
        &SpirvOptions {
            entry_point: Some((naga::ShaderStage::Compute, "main")),
            debug_file_name: Some("compute.wgsl"),
            ..SpirvOptions::default()
        },
    )
    .expect("translates with debug info");
    check_spirv(&debug).expect("passes");
    assert!(debug.len() > words.len(), "debug info adds words");
}

#[test]
fn overrides_resolve_before_translation() {
    let text = "\
override size: u32 = 8u;
override scale: f32;
@group(0) @binding(0) var<storage, read_write> data: array<f32>;
@compute @workgroup_size(size)
fn main(@builtin(global_invocation_id) id: vec3<u32>) { data[id.x] *= scale; }
";
    let module = valid(text);
    let err = to_spirv(&module, &SpirvOptions::default());
    assert!(
        matches!(err, Err(ShaderError::Translation(_))),
        "an override without value or default: {err:?}"
    );
    let mut constants = naga::back::PipelineConstants::default();
    constants.insert("scale".to_owned(), 2.0);
    let options = SpirvOptions {
        entry_point: Some((naga::ShaderStage::Compute, "main")),
        constants: Some(&constants),
        debug_file_name: Some("overrides.wgsl"),
        ..SpirvOptions::default()
    };
    check_spirv(&to_spirv(&module, &options).expect("translates")).expect("passes");
    let resolved = resolve_overrides(&module, options.entry_point, &constants).expect("resolves");
    let interface = find_entry_point(&resolved, "main", naga::ShaderStage::Compute).expect("found");
    assert_eq!(interface.workgroup_size, [8, 1, 1]);
}

#[test]
fn ray_query_needs_the_capability_and_translates() {
    let text = "\
enable wgpu_ray_query;
@group(0) @binding(0) var acc: acceleration_structure;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1)
fn main() {
    var rq: ray_query;
    rayQueryInitialize(&rq, acc, RayDesc(0u, 0xFFu, 0.001, 100.0, vec3<f32>(0.0), vec3<f32>(0.0, 0.0, 1.0)));
    rayQueryProceed(&rq);
    out[0] = rayQueryGetCommittedIntersection(&rq).kind;
}
";
    let without = parse_and_validate(ShaderSource::Wgsl(Cow::Borrowed(text)), caps());
    assert!(
        matches!(without, Err(ShaderError::MissingCapabilities { needed, line: 1, .. })
            if needed == Capabilities::RAY_QUERY),
        "{without:?}"
    );
    let module = parse_and_validate(
        ShaderSource::Wgsl(Cow::Borrowed(text)),
        caps() | Capabilities::RAY_QUERY,
    )
    .expect("valid with RAY_QUERY");
    check_spirv(&to_spirv(&module, &SpirvOptions::default()).expect("translates")).expect("ok");
    let interface = find_entry_point(&module, "main", naga::ShaderStage::Compute).expect("found");
    assert_eq!(
        interface.bindings[0].kind,
        BindingKind::AccelerationStructure {
            vertex_return: false
        }
    );
}

#[test]
fn ray_query_in_a_fragment_shader_translates() {
    let text = "\
enable wgpu_ray_query;
@group(0) @binding(0) var acc: acceleration_structure;
@fragment
fn main(@builtin(position) pos: vec4<f32>) -> @location(0) vec4<f32> {
    var rq: ray_query;
    rayQueryInitialize(&rq, acc, RayDesc(0u, 0xFFu, 0.0, 10.0, vec3<f32>(pos.xy, -1.0), vec3<f32>(0.0, 0.0, 1.0)));
    rayQueryProceed(&rq);
    let hit = rayQueryGetCommittedIntersection(&rq).kind != RAY_QUERY_INTERSECTION_NONE;
    return select(vec4<f32>(0.0), vec4<f32>(1.0), hit);
}
";
    let module = parse_and_validate(
        ShaderSource::Wgsl(Cow::Borrowed(text)),
        caps() | Capabilities::RAY_QUERY,
    )
    .expect("valid with RAY_QUERY");
    let options = SpirvOptions {
        entry_point: Some((naga::ShaderStage::Fragment, "main")),
        ..SpirvOptions::default()
    };
    check_spirv(&to_spirv(&module, &options).expect("translates")).expect("ok");
    let interface = find_entry_point(&module, "main", naga::ShaderStage::Fragment).expect("found");
    assert_eq!(interface.bindings.len(), 1);
}

/// A ray-tracing pipeline's stages: ray generation tracing into an
/// acceleration structure and writing a buffer, miss and closest hit
/// writing the payload.
const RAY_TRACING: &str = "\
enable wgpu_ray_tracing_pipeline;

struct Payload { hit: u32 }

@group(0) @binding(0) var acc: acceleration_structure;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;

var<ray_payload> payload: Payload;
var<incoming_ray_payload> incoming: Payload;

@ray_generation
fn rgen(@builtin(ray_invocation_id) id: vec3<u32>, @builtin(num_ray_invocations) n: vec3<u32>) {
    payload = Payload(7u);
    let origin = vec3<f32>(f32(id.x) / f32(n.x), f32(id.y) / f32(n.y), -1.0);
    traceRay(acc, RayDesc(0u, 0xFFu, 0.0, 10.0, origin, vec3<f32>(0.0, 0.0, 1.0)), &payload);
    out[id.y * n.x + id.x] = payload.hit;
}

@miss
@incoming_payload(incoming)
fn miss() { incoming.hit = 0u; }

@closest_hit
@incoming_payload(incoming)
fn chit(@builtin(ray_t_current_max) t: f32) { incoming.hit = 1u + u32(t); }
";

#[test]
fn ray_tracing_stages_validate_reflect_and_translate() {
    let source = || ShaderSource::Wgsl(Cow::Borrowed(RAY_TRACING));
    let without = parse_and_validate(source(), caps());
    assert!(
        matches!(without, Err(ShaderError::MissingCapabilities { needed, line: 1, .. })
            if needed == Capabilities::RAY_TRACING_PIPELINE),
        "{without:?}"
    );
    let module = parse_and_validate(source(), caps() | Capabilities::RAY_TRACING_PIPELINE)
        .expect("valid with RAY_TRACING_PIPELINE");
    use naga::ShaderStage as S;
    let rgen = find_entry_point(&module, "rgen", S::RayGeneration).expect("ray generation");
    let kinds: Vec<_> = rgen.bindings.iter().map(|b| (b.binding, b.kind)).collect();
    assert_eq!(
        kinds,
        [
            (
                0,
                BindingKind::AccelerationStructure {
                    vertex_return: false
                }
            ),
            (
                1,
                BindingKind::StorageBuffer {
                    read_only: false,
                    min_size: 4
                }
            ),
        ]
    );
    let miss = find_entry_point(&module, "miss", S::Miss).expect("miss");
    let chit = find_entry_point(&module, "chit", S::ClosestHit).expect("closest hit");
    assert!(
        miss.bindings.is_empty() && chit.bindings.is_empty(),
        "payloads are no bindings"
    );
    assert!(matches!(
        find_entry_point(&module, "rgen", S::Miss),
        Err(PipelineError::EntryPoint { stage: S::Miss, .. })
    ));
    assert_eq!(stage_flag(S::RayGeneration), ShaderStages::RAY_GENERATION);
    assert_eq!(stage_flag(S::Miss), ShaderStages::MISS);
    assert_eq!(stage_flag(S::ClosestHit), ShaderStages::CLOSEST_HIT);
    assert_eq!(stage_flag(S::AnyHit), ShaderStages::ANY_HIT);

    // The layout must show the bindings to the ray-generation stage.
    let as_entry = |visibility| {
        entry(
            0,
            visibility,
            BindingType::AccelerationStructure {
                vertex_return: false,
            },
        )
    };
    let group = [
        as_entry(ShaderStages::RAY_GENERATION),
        entry(1, ShaderStages::RAY_GENERATION, storage(false)),
    ];
    let layout = |entries: &[BindGroupLayoutEntry]| {
        check_layout(
            &rgen,
            &LayoutSlices {
                bind_groups: &[entries],
                push_constant_ranges: &[],
            },
        )
    };
    layout(&group).expect("matches");
    let hidden = [
        as_entry(ShaderStages::COMPUTE),
        entry(1, ShaderStages::RAY_GENERATION, storage(false)),
    ];
    assert!(mismatch(layout(&hidden)).contains("RayGeneration"));

    for (stage, name) in [
        (S::RayGeneration, "rgen"),
        (S::Miss, "miss"),
        (S::ClosestHit, "chit"),
    ] {
        let options = SpirvOptions {
            entry_point: Some((stage, name)),
            ..SpirvOptions::default()
        };
        let words = to_spirv(&module, &options).expect("translates");
        check_spirv(&words).expect("passes");
        assert!(
            words[1] >= 0x0001_0400,
            "ray tracing needs SPIR-V 1.4 or later"
        );
    }
}

/// A structurally fine module: header and one `OpEntryPoint GLCompute %1 "m"`.
fn minimal_spirv() -> Vec<u32> {
    vec![
        spirv::MAGIC_NUMBER,
        0x0001_0500,
        0,
        2,
        0,
        (4 << 16) | 15,
        5,
        1,
        u32::from(b'm'),
    ]
}

#[test]
fn spirv_structural_check() {
    check_spirv(&minimal_spirv()).expect("minimal module passes");
    let reason = |words: &[u32]| match check_spirv(words) {
        Err(ShaderError::InvalidSpirV(reason)) => reason,
        other => panic!("expected InvalidSpirV, got {other:?}"),
    };
    assert_eq!(reason(&[]), "no words");
    assert!(reason(&[0xdead_beef, 1, 2, 3, 4, 5]).contains("magic"));
    let mut swapped = minimal_spirv();
    swapped.iter_mut().for_each(|w| *w = w.swap_bytes());
    assert!(reason(&swapped).contains("byte-swapped"));
    assert!(reason(&minimal_spirv()[..4]).contains("header"));
    let mut v = minimal_spirv();
    v[1] = 0x0001_0700;
    assert_eq!(reason(&v), "version above 1.6");
    v[1] = 0x0002_0000;
    assert!(reason(&v).contains("version word"));
    let mut v = minimal_spirv();
    v[3] = 0;
    assert!(reason(&v).contains("bound"));
    let mut v = minimal_spirv();
    v[5] = 15; // word count 0
    assert!(reason(&v).contains("word count of zero"));
    let mut v = minimal_spirv();
    v[5] = (9 << 16) | 15;
    assert!(reason(&v).contains("past the end"));
    assert_eq!(reason(&minimal_spirv()[..5]), "no OpEntryPoint");
    let mut v = minimal_spirv();
    v[5] = (4 << 16) | 16; // OpExecutionMode, not an entry point
    assert_eq!(reason(&v), "no OpEntryPoint");
}

#[test]
fn shader_input_routes_by_source() {
    // naga's own SPIR-V of COMPUTE: read back and validated, words kept.
    let spirv = to_spirv(&valid(COMPUTE), &SpirvOptions::default()).expect("translates");
    match ShaderInput::new(ShaderSource::SpirV(Cow::Borrowed(&spirv)), caps()) {
        Ok(ShaderInput::SpirV {
            words,
            module: Some(module),
        }) => {
            assert_eq!(&*words, &spirv[..]);
            let interface = find_entry_point(&module, "main", naga::ShaderStage::Compute)
                .expect("the entry point is reflected");
            assert_eq!(interface.workgroup_size, [64, 1, 1]);
            assert_eq!(interface.bindings.len(), 1);
        }
        other => panic!("expected checked SPIR-V, got {other:?}"),
    }
    assert!(matches!(
        ShaderInput::new(ShaderSource::SpirV(Cow::Borrowed(&[1, 2])), caps()),
        Err(ShaderError::InvalidSpirV(_))
    ));
    // SAFETY: not handed to any driver; only routed.
    let unchecked = unsafe { crate::UncheckedSpirV::new(minimal_spirv()) };
    match ShaderInput::new(ShaderSource::SpirVUnchecked(unchecked), caps()) {
        Ok(ShaderInput::SpirV {
            words,
            module: None,
        }) => assert_eq!(&*words, &minimal_spirv()[..]),
        other => panic!("expected unchecked SPIR-V, got {other:?}"),
    }
    // SAFETY: as above.
    let bad = unsafe { crate::UncheckedSpirV::new(vec![1, 2]) };
    assert!(matches!(
        ShaderInput::new(ShaderSource::SpirVUnchecked(bad), caps()),
        Err(ShaderError::InvalidSpirV(_))
    ));
    match ShaderInput::new(ShaderSource::Wgsl(Cow::Borrowed(COMPUTE)), caps()) {
        Ok(ShaderInput::Naga(module)) => assert_eq!(module.wgsl(), Some(COMPUTE)),
        other => panic!("expected naga IR, got {other:?}"),
    }
    // SAFETY: as above.
    let unchecked = unsafe { crate::UncheckedSpirV::new(minimal_spirv()) };
    assert!(matches!(
        parse_and_validate(ShaderSource::SpirVUnchecked(unchecked), caps()),
        Err(ShaderError::Unsupported(_))
    ));
}

/// A header and a lone `OpEntryPoint` (naming no function) pass the
/// structural check but not naga's front end: a typed error, not a driver
/// crash.
#[test]
fn lone_entry_point_spirv_is_a_parse_error() {
    check_spirv(&minimal_spirv()).expect("structurally fine");
    match parse_spirv(&minimal_spirv(), caps()) {
        Err(ShaderError::SpirVParse(message)) => assert!(!message.is_empty()),
        other => panic!("expected SpirVParse, got {other:?}"),
    }
}

/// SPIR-V is validated with the device's capabilities: f16 needs
/// SHADER_FLOAT16.
#[test]
fn spirv_is_validated_with_the_capabilities() {
    let f16 = "enable f16;
@group(0) @binding(0) var<storage, read_write> data: array<f16>;
@compute @workgroup_size(1) fn main() { data[0] = data[1] * 2.0h; }
";
    let with = caps() | Capabilities::SHADER_FLOAT16;
    let module = parse_and_validate(ShaderSource::Wgsl(Cow::Borrowed(f16)), with).expect("valid");
    let words = to_spirv(&module, &SpirvOptions::default()).expect("translates");
    parse_spirv(&words, with).expect("accepted with SHADER_FLOAT16");
    assert!(matches!(
        parse_spirv(&words, caps()),
        Err(ShaderError::MissingCapabilities { needed, .. })
            if needed.contains(Capabilities::SHADER_FLOAT16)
    ));
}

/// Capabilities declared by `words`' `OpCapability` instructions.
fn declared_capabilities(words: &[u32]) -> Vec<u32> {
    instructions(words, spirv::Op::Capability)
        .iter()
        .map(|operands| operands[0])
        .collect()
}

/// The instructions of `words` with opcode `op`, operands only.
fn instructions(words: &[u32], op: spirv::Op) -> Vec<&[u32]> {
    super::spirv_fixups::instructions(words)
        .filter(|&(_, o, _)| o == Some(op))
        .map(|(at, _, count)| &words[at + 1..at + count])
        .collect()
}

/// f16 entry-point I/O uses `StorageInputOutput16` only when asked (the
/// device enabled it); otherwise naga passes it as f32.
#[test]
fn f16_io_needs_storage_input_output_16_only_when_enabled() {
    use spirv::Capability as Cap;
    let text = "enable f16;
@fragment fn fs(@location(0) v: f16) -> @location(0) vec4<f32> { return vec4<f32>(f32(v)); }
";
    let with = caps() | Capabilities::SHADER_FLOAT16;
    let module = parse_and_validate(ShaderSource::Wgsl(Cow::Borrowed(text)), with).expect("valid");
    let translate = |native| {
        let options = SpirvOptions {
            entry_point: Some((naga::ShaderStage::Fragment, "fs")),
            storage_input_output_16: native,
            ..SpirvOptions::default()
        };
        declared_capabilities(&to_spirv(&module, &options).expect("translates"))
    };
    let polyfilled = translate(false);
    assert!(
        !polyfilled.contains(&(Cap::StorageInputOutput16 as u32)),
        "{polyfilled:?}"
    );
    assert!(polyfilled.contains(&(Cap::StorageBuffer16BitAccess as u32)));
    assert!(translate(true).contains(&(Cap::StorageInputOutput16 as u32)));
}

/// `binding_array<T>` gets the layout's element count from the binding
/// map; without one it is an error, never a runtime array without the
/// `RuntimeDescriptorArray` capability.
#[test]
fn unbounded_binding_arrays_take_the_layout_size() {
    use spirv::Op;
    let text = "enable wgpu_binding_array;
@group(0) @binding(0) var textures: binding_array<texture_2d<f32>>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4<f32>>;
@compute @workgroup_size(1) fn main() {
    out[0] = textureLoad(textures[1], vec2<u32>(0u), 0);
}
";
    let with = caps() | Capabilities::TEXTURE_AND_SAMPLER_BINDING_ARRAY;
    let module = parse_and_validate(ShaderSource::Wgsl(Cow::Borrowed(text)), with).expect("valid");
    let entry_point = Some((naga::ShaderStage::Compute, "main"));
    let no_map = SpirvOptions {
        entry_point,
        ..SpirvOptions::default()
    };
    match to_spirv(&module, &no_map) {
        Err(ShaderError::Translation(message)) => {
            assert!(message.contains("group 0 binding 0"), "{message}")
        }
        other => panic!("expected a translation error, got {other:?}"),
    }
    let texture = BindGroupLayoutEntry {
        binding: 0,
        visibility: ShaderStages::COMPUTE,
        ty: BindingType::Texture {
            sample_type: wgt::TextureSampleType::Float { filterable: true },
            view_dimension: wgt::TextureViewDimension::D2,
            multisampled: false,
        },
        count: NonZeroU32::new(4),
    };
    let out = entry(1, ShaderStages::COMPUTE, storage(false));
    let group = [texture, out];
    let layout = LayoutSlices {
        bind_groups: &[&group],
        push_constant_ranges: &[],
    };
    let map = binding_map(&layout);
    assert_eq!(map.len(), 1, "only the array is mapped");
    let sized = SpirvOptions {
        entry_point,
        binding_map: Some(&map),
        ..SpirvOptions::default()
    };
    let words = to_spirv(&module, &sized).expect("translates");
    check_spirv(&words).expect("passes");
    // The variable's pointer type: to an array of images, not a runtime
    // array (which would need RuntimeDescriptorArray). naga may still
    // declare the unsized type, unused.
    let images: Vec<u32> = instructions(&words, Op::TypeImage)
        .iter()
        .map(|i| i[0])
        .collect();
    let arrays_of_images = |opcode| -> Vec<u32> {
        instructions(&words, opcode)
            .into_iter()
            .filter(|i| images.contains(&i[1]))
            .map(|i| i[0])
            .collect()
    };
    let (sized, runtime) = (
        arrays_of_images(Op::TypeArray),
        arrays_of_images(Op::TypeRuntimeArray),
    );
    let pointees: Vec<u32> = instructions(&words, Op::TypePointer)
        .iter()
        .map(|i| i[2])
        .collect();
    assert!(
        pointees.iter().any(|p| sized.contains(p)),
        "a pointer to the sized array"
    );
    assert!(
        !pointees.iter().any(|p| runtime.contains(p)),
        "no pointer to a runtime array"
    );
}

/// Vertex and fragment entry points that may write storage need the
/// stage's stores feature; compute never does, read-only storage never does.
#[test]
fn stage_stores_need_the_stage_feature() {
    let text = "
@group(0) @binding(0) var<storage, read_write> hits: array<atomic<u32>>;
@group(0) @binding(1) var<storage, read> input: array<f32>;
@fragment fn writes() -> @location(0) vec4<f32> {
    atomicAdd(&hits[0], 1u);
    return vec4<f32>(1.0);
}
@fragment fn reads() -> @location(0) vec4<f32> { return vec4<f32>(input[0]); }
@vertex fn vs() -> @builtin(position) vec4<f32> {
    atomicAdd(&hits[0], 1u);
    return vec4<f32>(0.0);
}
@compute @workgroup_size(1) fn cs() { atomicAdd(&hits[0], 1u); }
";
    let module = valid(text);
    let all = StageStores {
        vertex: true,
        fragment: true,
    };
    let none = StageStores {
        vertex: false,
        fragment: false,
    };
    let interface = |name, stage| find_entry_point(&module, name, stage).expect("entry point");
    use naga::ShaderStage as S;
    let writes = interface("writes", S::Fragment);
    check_stage_stores(&writes, all).expect("supported");
    match check_stage_stores(&writes, none) {
        Err(PipelineError::MissingShaderFeature {
            stage: S::Fragment,
            name,
            what,
            feature: "fragmentStoresAndAtomics",
        }) => {
            assert_eq!(name, "writes");
            assert!(what.contains("group 0 binding 0"), "{what}");
        }
        other => panic!("expected MissingShaderFeature, got {other:?}"),
    }
    check_stage_stores(&interface("reads", S::Fragment), none).expect("read-only storage");
    let vs = interface("vs", S::Vertex);
    assert!(matches!(
        check_stage_stores(&vs, none),
        Err(PipelineError::MissingShaderFeature {
            feature: "VERTEX_WRITABLE_STORAGE",
            ..
        })
    ));
    check_stage_stores(
        &vs,
        StageStores {
            vertex: true,
            fragment: false,
        },
    )
    .expect("vertex stores supported");
    check_stage_stores(&interface("cs", S::Compute), none).expect("compute always may");
}

const RESOURCES: &str = "\
struct Params { scale: f32, count: u32 }
struct Pc { offset: vec4<f32>, extra: vec4<f32> }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> input: array<f32>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;
@group(1) @binding(0) var tex: texture_2d<f32>;
@group(1) @binding(1) var samp: sampler;
@group(1) @binding(2) var unused: texture_2d<f32>;
var<immediate> pc: Pc;

fn sample() -> f32 {
    return textureSampleLevel(tex, samp, vec2<f32>(0.5), 0.0).x;
}

@compute @workgroup_size(8, 4, 1)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    output[id.x] = input[id.x] * params.scale + sample() + pc.offset.x;
}
";

fn resources() -> EntryPointInterface {
    find_entry_point(&valid(RESOURCES), "main", naga::ShaderStage::Compute).expect("found")
}

#[test]
fn reflection_reads_used_bindings_immediates_and_workgroup() {
    let interface = resources();
    assert_eq!(interface.name, "main");
    assert_eq!(interface.workgroup_size, [8, 4, 1]);
    assert_eq!(interface.immediate_size, 32);
    let single = BindingCount::Single;
    let expected = [
        (0, 0, BindingKind::UniformBuffer { min_size: 8 }),
        (
            0,
            1,
            BindingKind::StorageBuffer {
                read_only: true,
                min_size: 4,
            },
        ),
        (
            0,
            2,
            BindingKind::StorageBuffer {
                read_only: false,
                min_size: 4,
            },
        ),
        (
            1,
            0,
            BindingKind::SampledTexture {
                dimension: wgt::TextureViewDimension::D2,
                multisampled: false,
                sample_kind: SampleKind::Float,
            },
        ),
        (1, 1, BindingKind::Sampler { comparison: false }),
    ];
    let got: Vec<_> = interface
        .bindings
        .iter()
        .map(|b| {
            assert_eq!(b.count, single);
            (b.group, b.binding, b.kind)
        })
        .collect();
    assert_eq!(got, expected, "binding 1/2 is declared but unused");
}

fn entry(binding: u32, visibility: ShaderStages, ty: BindingType) -> BindGroupLayoutEntry {
    BindGroupLayoutEntry {
        binding,
        visibility,
        ty,
        count: None,
    }
}

fn buffer(ty: wgt::BufferBindingType) -> BindingType {
    BindingType::Buffer {
        ty,
        has_dynamic_offset: false,
        min_binding_size: None,
    }
}

fn storage(read_only: bool) -> BindingType {
    buffer(wgt::BufferBindingType::Storage { read_only })
}

fn matching_groups() -> (Vec<BindGroupLayoutEntry>, Vec<BindGroupLayoutEntry>) {
    let c = ShaderStages::COMPUTE;
    let group0 = vec![
        entry(0, c, buffer(wgt::BufferBindingType::Uniform)),
        entry(1, c, storage(true)),
        entry(2, c, storage(false)),
    ];
    let group1 = vec![
        entry(
            0,
            c | ShaderStages::FRAGMENT,
            BindingType::Texture {
                sample_type: wgt::TextureSampleType::Float { filterable: true },
                view_dimension: wgt::TextureViewDimension::D2,
                multisampled: false,
            },
        ),
        entry(
            1,
            c,
            BindingType::Sampler(wgt::SamplerBindingType::Filtering),
        ),
    ];
    (group0, group1)
}

const PUSH: &[(ShaderStages, std::ops::Range<u32>)] = &[(ShaderStages::COMPUTE, 0..32)];

/// Checks the resources shader against groups 0 and 1 and `push`.
fn check(
    group0: &[BindGroupLayoutEntry],
    group1: &[BindGroupLayoutEntry],
    push: &[(ShaderStages, std::ops::Range<u32>)],
) -> Result<(), PipelineError> {
    let groups = [group0, group1];
    check_layout(
        &resources(),
        &LayoutSlices {
            bind_groups: &groups,
            push_constant_ranges: push,
        },
    )
}

fn mismatch(result: Result<(), PipelineError>) -> String {
    match result {
        Err(PipelineError::InterfaceMismatch(message)) => message,
        other => panic!("expected InterfaceMismatch, got {other:?}"),
    }
}

#[test]
fn matching_layout_passes() {
    let (g0, g1) = matching_groups();
    check(&g0, &g1, PUSH).expect("matches");
    // A read-write layout serves a read-only shader binding; a depth layout a
    // float texture; a larger push-constant range covers.
    let mut g0 = g0;
    g0[1].ty = storage(false);
    let mut g1 = g1;
    g1[0].ty = BindingType::Texture {
        sample_type: wgt::TextureSampleType::Depth,
        view_dimension: wgt::TextureViewDimension::D2,
        multisampled: false,
    };
    check(&g0, &g1, &[(ShaderStages::all(), 0..128)]).expect("compatible");
}

#[test]
fn missing_binding_and_group() {
    let (g0, g1) = matching_groups();
    let message = mismatch(check(&g0[..2], &g1, PUSH));
    assert!(message.starts_with("group 0 binding 2:"), "{message}");
    assert!(message.contains("no such binding"), "{message}");
    let groups: [&[BindGroupLayoutEntry]; 1] = [&g0];
    let message = mismatch(check_layout(
        &resources(),
        &LayoutSlices {
            bind_groups: &groups,
            push_constant_ranges: PUSH,
        },
    ));
    assert!(message.contains("only 1 bind groups"), "{message}");
}

#[test]
fn wrong_type() {
    let (mut g0, g1) = matching_groups();
    g0[2].ty = buffer(wgt::BufferBindingType::Uniform);
    assert_eq!(
        mismatch(check(&g0, &g1, PUSH)),
        "group 0 binding 2: the shader uses a read-write storage buffer, \
         the layout has a uniform buffer"
    );
    let (mut g0, g1) = matching_groups();
    g0[2].ty = storage(true);
    let message = mismatch(check(&g0, &g1, PUSH));
    assert!(
        message.contains("has a read-only storage buffer"),
        "{message}"
    );
    let (g0, mut g1) = matching_groups();
    g1[1].ty = BindingType::Sampler(wgt::SamplerBindingType::Comparison);
    let message = mismatch(check(&g0, &g1, PUSH));
    assert!(message.contains("comparison sampler"), "{message}");
    let (g0, mut g1) = matching_groups();
    g1[0].ty = BindingType::Texture {
        sample_type: wgt::TextureSampleType::Uint,
        view_dimension: wgt::TextureViewDimension::D2,
        multisampled: false,
    };
    let message = mismatch(check(&g0, &g1, PUSH));
    assert!(
        message.contains("a 2d float texture, the layout has a 2d uint texture"),
        "{message}"
    );
    let (g0, mut g1) = matching_groups();
    g1[0].count = NonZeroU32::new(4);
    let message = mismatch(check(&g0, &g1, PUSH));
    assert!(message.contains("array of 4"), "{message}");
}

#[test]
fn min_binding_size_too_small() {
    let (mut g0, g1) = matching_groups();
    g0[0].ty = BindingType::Buffer {
        ty: wgt::BufferBindingType::Uniform,
        has_dynamic_offset: false,
        min_binding_size: NonZeroU64::new(4),
    };
    let message = mismatch(check(&g0, &g1, PUSH));
    assert!(message.contains("min_binding_size 4"), "{message}");
}

#[test]
fn wrong_visibility() {
    let (mut g0, g1) = matching_groups();
    g0[1].visibility = ShaderStages::VERTEX_FRAGMENT;
    assert_eq!(
        mismatch(check(&g0, &g1, PUSH)),
        "group 0 binding 1: visible to VERTEX | FRAGMENT only, \
         not to the Compute stage that uses it"
    );
}

#[test]
fn push_constants_uncovered() {
    let (g0, g1) = matching_groups();
    for push in [
        &[][..],
        &[(ShaderStages::COMPUTE, 0..16)][..],
        &[(ShaderStages::VERTEX, 0..32)][..],
        &[(ShaderStages::COMPUTE, 4..64)][..],
    ] {
        let message = mismatch(check(&g0, &g1, push));
        assert!(message.starts_with("push constants:"), "{message}");
        assert!(message.contains("0..32"), "{message}");
    }
}

#[test]
fn vertex_and_fragment_entry_points() {
    let text = "\
@group(0) @binding(0) var<uniform> tint: vec4<f32>;
@vertex
fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let x = f32(i & 1u) * 2.0 - 1.0;
    return vec4<f32>(x, f32(i >> 1u), 0.0, 1.0);
}
@fragment
fn fs() -> @location(0) vec4<f32> { return tint; }
";
    let module = valid(text);
    let vs = find_entry_point(&module, "vs", naga::ShaderStage::Vertex).expect("vertex");
    assert!(
        vs.bindings.is_empty(),
        "the vertex stage does not read tint"
    );
    assert_eq!(vs.workgroup_size, [0, 0, 0]);
    let fs = find_entry_point(&module, "fs", naga::ShaderStage::Fragment).expect("fragment");
    assert_eq!(fs.bindings.len(), 1);
    assert_eq!(fs.immediate_size, 0);

    // The fragment stage needs FRAGMENT visibility; the vertex stage needs nothing.
    let visible_to_vertex = [entry(
        0,
        ShaderStages::VERTEX,
        buffer(wgt::BufferBindingType::Uniform),
    )];
    let groups: [&[BindGroupLayoutEntry]; 1] = [&visible_to_vertex];
    let layout = LayoutSlices {
        bind_groups: &groups,
        push_constant_ranges: &[],
    };
    check_layout(&vs, &layout).expect("vertex stage uses nothing");
    mismatch(check_layout(&fs, &layout));

    match find_entry_point(&module, "vs", naga::ShaderStage::Fragment) {
        Err(PipelineError::EntryPoint { stage, name }) => {
            assert_eq!((stage, name.as_str()), (naga::ShaderStage::Fragment, "vs"));
        }
        other => panic!("expected EntryPoint, got {other:?}"),
    }
    for (stage, name) in [
        (naga::ShaderStage::Vertex, "vs"),
        (naga::ShaderStage::Fragment, "fs"),
    ] {
        let options = SpirvOptions {
            entry_point: Some((stage, name)),
            ..SpirvOptions::default()
        };
        check_spirv(&to_spirv(&module, &options).expect("translates")).expect("passes");
    }
}

#[test]
fn storage_texture_access_and_format() {
    let text = "\
@group(0) @binding(0) var img: texture_storage_2d<rgba8unorm, write>;
@compute @workgroup_size(1)
fn main() { textureStore(img, vec2<i32>(0), vec4<f32>(1.0)); }
";
    let interface =
        find_entry_point(&valid(text), "main", naga::ShaderStage::Compute).expect("found");
    let layout_with = |access, format| {
        [entry(
            0,
            ShaderStages::COMPUTE,
            BindingType::StorageTexture {
                access,
                format,
                view_dimension: wgt::TextureViewDimension::D2,
            },
        )]
    };
    let run = |entries: &[BindGroupLayoutEntry]| {
        let groups = [entries];
        check_layout(
            &interface,
            &LayoutSlices {
                bind_groups: &groups,
                push_constant_ranges: &[],
            },
        )
    };
    use wgt::StorageTextureAccess as A;
    use wgt::TextureFormat as F;
    run(&layout_with(A::WriteOnly, F::Rgba8Unorm)).expect("same");
    run(&layout_with(A::ReadWrite, F::Rgba8Unorm)).expect("read-write allows write");
    let message = mismatch(run(&layout_with(A::ReadOnly, F::Rgba8Unorm)));
    assert!(
        message.contains("write-only 2d storage texture"),
        "{message}"
    );
    mismatch(run(&layout_with(A::WriteOnly, F::Rgba16Float)));
}

#[test]
fn spirv_entry_points_are_found_by_model_and_name() {
    // Header, then `OpEntryPoint GLCompute %1 "main"` and
    // `OpEntryPoint Vertex %2 "vs_main_long"`.
    let name = |s: &str| {
        let mut bytes = s.as_bytes().to_vec();
        bytes.resize((s.len() / 4 + 1) * 4, 0);
        bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect::<Vec<_>>()
    };
    let mut words = vec![spirv::MAGIC_NUMBER, 0x0001_0500, 0, 8, 0];
    for (model, id, entry) in [(5u32, 1u32, "main"), (0, 2, "vs_main_long")] {
        let literal = name(entry);
        words.push(((3 + literal.len() as u32) << 16) | 15);
        words.extend([model, id]);
        words.extend(literal);
    }
    use naga::ShaderStage as S;
    assert!(spirv_has_entry_point(&words, S::Compute, "main"));
    assert!(spirv_has_entry_point(&words, S::Vertex, "vs_main_long"));
    assert!(!spirv_has_entry_point(&words, S::Vertex, "main"));
    assert!(!spirv_has_entry_point(&words, S::Compute, "mai"));
    assert!(!spirv_has_entry_point(&words, S::Vertex, "vs_main_longer"));
}
