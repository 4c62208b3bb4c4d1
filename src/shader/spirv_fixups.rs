//! Fix-ups of the SPIR-V naga writes, where it breaks a rule of SPIR-V for
//! Vulkan. Each is a pass over the words that changes only what the rule
//! forbids.
//!
//! - **Barrier semantics** (`VUID-StandaloneSpirv-OpControlBarrier-04650`,
//!   reported by validation layer 1.4.309): a barrier whose memory
//!   semantics order memory (acquire, release, …) must name a storage
//!   class Vulkan knows (uniform, workgroup, image or output memory). naga
//!   30 translates `subgroupBarrier` with subgroup memory only, which
//!   Vulkan does not count; the fix-up adds uniform, workgroup and image
//!   memory, what a barrier among a subgroup's invocations orders in a
//!   Vulkan shader.
//! - **Extensions of capabilities** (`VUID-VkShaderModuleCreateInfo-pCode-08737`,
//!   layer 1.4.309: a capability needs one of its extensions declared):
//!   naga 30 declares `CooperativeMatrixKHR` for a matrix it loads without
//!   `OpExtension "SPV_KHR_cooperative_matrix"` (its type path declares the
//!   extension, its load path does not); the fix-up declares the missing
//!   extension after the capabilities ([`CAPABILITY_EXTENSIONS`]).
//! - **Blocks of uniform binding arrays** (`VUID-StandaloneSpirv-Uniform-06676`:
//!   a uniform variable's struct must be decorated `Block`): naga 30
//!   decorates the element struct of a binding array in storage memory but
//!   not in uniform memory, so every uniform buffer binding array
//!   (`UNIFORM_BUFFER_BINDING_ARRAYS`) broke the rule and its pipeline's
//!   layout did not match. The fix-up decorates each such struct `Block`.

use spirv::{Capability, Decoration, MemorySemantics as M, Op, StorageClass};

/// Acquire, Release, AcquireRelease, SequentiallyConsistent.
const ORDERING: M = M::ACQUIRE
    .union(M::RELEASE)
    .union(M::ACQUIRE_RELEASE)
    .union(M::SEQUENTIALLY_CONSISTENT);
/// The storage classes of memory semantics Vulkan knows.
const VULKAN_STORAGE: M = M::UNIFORM_MEMORY
    .union(M::WORKGROUP_MEMORY)
    .union(M::IMAGE_MEMORY)
    .union(M::OUTPUT_MEMORY);
/// What the fix-up adds: uniform, workgroup and image memory.
const ADDED: M = M::UNIFORM_MEMORY
    .union(M::WORKGROUP_MEMORY)
    .union(M::IMAGE_MEMORY);

/// The SPIR-V header's length in words; word 3 is the id bound.
pub(crate) const HEADER: usize = 5;

/// Whether the module declares `capability` (an `OpCapability`).
pub(crate) fn declares_capability(words: &[u32], capability: Capability) -> bool {
    instructions(words).any(|(at, op, count)| {
        op == Some(Op::Capability) && count == 2 && words[at + 1] == capability as u32
    })
}

/// Applies every fix-up to a module's words. Words that do not parse as a
/// module are left as they are (naga wrote them; the driver's checks stay).
pub(crate) fn apply(words: &mut Vec<u32>) {
    fix_barrier_semantics(words);
    declare_capability_extensions(words);
    decorate_uniform_array_blocks(words);
}

/// Decorates `Block` the element struct of every array variable in uniform
/// memory that lacks it (before the module's first type declaration, the
/// end of its annotations).
fn decorate_uniform_array_blocks(words: &mut Vec<u32>) {
    let mut structs = Vec::new();
    let mut arrays = Vec::new();
    let mut pointers = Vec::new();
    let mut uniform_pointers = Vec::new();
    let mut blocks = Vec::new();
    let mut first_type = None;
    let block = [Decoration::Block as u32, Decoration::BufferBlock as u32];
    // Type declarations run from OpTypeVoid to OpTypeForwardPointer.
    let types = Op::TypeVoid as u32..=Op::TypeForwardPointer as u32;
    for (at, op, count) in instructions(words) {
        let w = &words[at..at + count];
        match op {
            Some(Op::Decorate) if count >= 3 && block.contains(&w[2]) => blocks.push(w[1]),
            Some(Op::TypeStruct) if count >= 2 => structs.push(w[1]),
            Some(Op::TypeArray | Op::TypeRuntimeArray) if count >= 3 => arrays.push((w[1], w[2])),
            Some(Op::TypePointer) if count == 4 => pointers.push((w[1], w[3])),
            Some(Op::Variable) if count >= 4 && w[3] == StorageClass::Uniform as u32 => {
                uniform_pointers.push(w[1]);
            }
            _ => {}
        }
        if first_type.is_none() && op.is_some_and(|op| types.contains(&(op as u32))) {
            first_type = Some(at);
        }
    }
    let Some(insert_at) = first_type else {
        return;
    };
    let mut decorations = Vec::new();
    for pointer in uniform_pointers {
        let Some(&(_, array)) = pointers.iter().find(|(id, _)| *id == pointer) else {
            continue;
        };
        let Some(&(_, element)) = arrays.iter().find(|(id, _)| *id == array) else {
            continue;
        };
        if structs.contains(&element) && !blocks.contains(&element) {
            blocks.push(element);
            decorations.extend([
                word_count_and_op(3, Op::Decorate),
                element,
                Decoration::Block as u32,
            ]);
        }
    }
    if !decorations.is_empty() {
        words.splice(insert_at..insert_at, decorations);
    }
}

/// SPIR-V capabilities naga may declare without the extension SPIR-V 1.5
/// needs for them: (capability, extension).
const CAPABILITY_EXTENSIONS: &[(Capability, &str)] = &[(
    Capability::CooperativeMatrixKHR,
    "SPV_KHR_cooperative_matrix",
)];

/// The words of `OpExtension "name"`.
fn op_extension(name: &str) -> Vec<u32> {
    let mut bytes = name.as_bytes().to_vec();
    // NUL-terminated, padded to whole words.
    bytes.resize((bytes.len() / 4 + 1) * 4, 0);
    let mut out = vec![0];
    out.extend(
        bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
    );
    out[0] = word_count_and_op(out.len(), Op::Extension);
    out
}

/// An instruction's first word.
fn word_count_and_op(count: usize, op: Op) -> u32 {
    ((count as u32) << 16) | op as u32
}

/// Declares the extension of each capability in [`CAPABILITY_EXTENSIONS`]
/// the module declares without it, after its last `OpCapability`.
fn declare_capability_extensions(words: &mut Vec<u32>) {
    let mut capabilities = Vec::new();
    let mut extensions = Vec::new();
    let mut after_capabilities = None;
    for (at, op, count) in instructions(words) {
        match op {
            Some(Op::Capability) if count == 2 => {
                capabilities.push(words[at + 1]);
                after_capabilities = Some(at + count);
            }
            Some(Op::Extension) => {
                extensions.push(super::spirv_literal(&words[at + 1..at + count]))
            }
            _ => {}
        }
    }
    let Some(insert_at) = after_capabilities else {
        return;
    };
    let missing: Vec<u32> = CAPABILITY_EXTENSIONS
        .iter()
        .filter(|(cap, ext)| {
            capabilities.contains(&(*cap as u32)) && !extensions.iter().any(|e| e == ext)
        })
        .flat_map(|(_, ext)| op_extension(ext))
        .collect();
    if !missing.is_empty() {
        words.splice(insert_at..insert_at, missing);
    }
}

/// One instruction after the header: where it starts, its opcode (`None`
/// for one the `spirv` crate does not know) and word count. The walk ends
/// at the end of the words or at an instruction that does not fit in them.
pub(crate) fn instructions(words: &[u32]) -> impl Iterator<Item = (usize, Option<Op>, usize)> + '_ {
    let mut at = HEADER;
    std::iter::from_fn(move || {
        let first = *words.get(at)?;
        let count = (first >> 16) as usize;
        if count == 0 || at + count > words.len() {
            return None;
        }
        let this = (at, Op::from_u32(first & 0xffff), count);
        at += count;
        Some(this)
    })
}

fn fix_barrier_semantics(words: &mut Vec<u32>) {
    if words.len() < HEADER {
        return;
    }
    // 32-bit integer types; their constants (id → (type, value, where)).
    let mut int32 = Vec::new();
    let mut constants = std::collections::HashMap::new();
    // (position of a semantics operand, the constant it names)
    let mut operands = Vec::new();
    for (at, op, count) in instructions(words) {
        match (op, count) {
            (Some(Op::TypeInt), 4) if words[at + 2] == 32 => int32.push(words[at + 1]),
            (Some(Op::Constant), 4) if int32.contains(&words[at + 1]) => {
                constants.insert(words[at + 2], (words[at + 1], words[at + 3], at));
            }
            (Some(Op::ControlBarrier), 4) => operands.push((at + 3, words[at + 3])),
            (Some(Op::MemoryBarrier), 3) => operands.push((at + 2, words[at + 2])),
            _ => {}
        }
    }
    // The constants to add: (insert after this instruction, type, id, value).
    let mut added: Vec<(usize, u32, u32, u32)> = Vec::new();
    let mut bound = words[3];
    for (operand, id) in operands {
        let Some(&(ty, value, at)) = constants.get(&id) else {
            continue;
        };
        let semantics = M::from_bits_retain(value);
        if !semantics.intersects(ORDERING) || semantics.intersects(VULKAN_STORAGE) {
            continue;
        }
        let wanted = (semantics | ADDED).bits();
        let existing = constants
            .iter()
            .find(|(_, &(t, v, _))| t == ty && v == wanted)
            .map(|(&id, _)| id)
            .or_else(|| {
                added
                    .iter()
                    .find(|&&(_, t, _, v)| t == ty && v == wanted)
                    .map(|&(_, _, id, _)| id)
            });
        let id = match existing {
            Some(id) => id,
            None => {
                let id = bound;
                bound += 1;
                added.push((at + 4, ty, id, wanted));
                id
            }
        };
        words[operand] = id;
    }
    if added.is_empty() {
        return;
    }
    words[3] = bound;
    added.sort_by_key(|&(after, ..)| after);
    let mut out = Vec::with_capacity(words.len() + 4 * added.len());
    let mut from = 0;
    for (after, ty, id, value) in added {
        out.extend_from_slice(&words[from..after]);
        out.extend_from_slice(&[word_count_and_op(4, Op::Constant), ty, id, value]);
        from = after;
    }
    out.extend_from_slice(&words[from..]);
    *words = out;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spirv(wgsl: &str) -> Vec<u32> {
        let module = naga::front::wgsl::parse_str(wgsl).expect("test WGSL");
        let info = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&module)
        .expect("valid test WGSL");
        naga::back::spv::write_vec(&module, &info, &Default::default(), None)
            .expect("naga writes SPIR-V")
    }

    /// Every barrier's semantics, as values.
    fn barrier_semantics(words: &[u32]) -> Vec<M> {
        let mut constants = std::collections::HashMap::new();
        let mut out = Vec::new();
        for (at, op, _) in instructions(words) {
            match op {
                Some(Op::Constant) => {
                    constants.insert(words[at + 2], M::from_bits_retain(words[at + 3]));
                }
                Some(Op::ControlBarrier) => out.push(constants[&words[at + 3]]),
                Some(Op::MemoryBarrier) => out.push(constants[&words[at + 2]]),
                _ => {}
            }
        }
        out
    }

    #[test]
    fn subgroup_barriers_get_vulkan_storage_classes() {
        let mut words = spirv("@compute @workgroup_size(64) fn main() { subgroupBarrier(); }");
        let before = barrier_semantics(&words);
        assert!(
            before
                .iter()
                .any(|v| v.intersects(ORDERING) && !v.intersects(VULKAN_STORAGE)),
            "naga's subgroup barrier names no Vulkan storage class: {before:x?}"
        );
        let bound = words[3];
        apply(&mut words);
        let after = barrier_semantics(&words);
        assert!(after
            .iter()
            .all(|v| !v.intersects(ORDERING) || v.intersects(VULKAN_STORAGE)));
        assert_eq!(words[3], bound + 1, "one constant added");
        // Still a module naga reads back.
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        naga::front::spv::parse_u8_slice(&bytes, &Default::default()).expect("valid SPIR-V");
    }

    /// Capabilities and extensions a module declares.
    fn declared(words: &[u32]) -> (Vec<u32>, Vec<String>) {
        let (mut caps, mut exts) = (Vec::new(), Vec::new());
        for (at, op, count) in instructions(words) {
            match op {
                Some(Op::Capability) => caps.push(words[at + 1]),
                Some(Op::Extension) => {
                    exts.push(crate::shader::spirv_literal(&words[at + 1..at + count]));
                }
                _ => {}
            }
        }
        (caps, exts)
    }

    #[test]
    fn cooperative_matrix_capability_gets_its_extension() {
        let wgsl = "enable wgpu_cooperative_matrix;
            @group(0) @binding(0) var<storage, read_write> d: array<f32>;
            @compute @workgroup_size(64) fn main() {
                coopStore(coopLoad<coop_mat8x8<f32, C>>(&d[0], 8u), &d[0], 8u);
            }";
        let options = naga::front::wgsl::Options {
            parse_doc_comments: false,
            capabilities: naga::valid::Capabilities::all(),
        };
        let module = naga::front::wgsl::Frontend::new_with_options(options)
            .parse(wgsl)
            .expect("test WGSL");
        let info = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&module)
        .expect("valid test WGSL");
        let mut words = naga::back::spv::write_vec(&module, &info, &Default::default(), None)
            .expect("naga writes SPIR-V");
        let extension = "SPV_KHR_cooperative_matrix".to_owned();
        let (caps, exts) = declared(&words);
        assert!(
            caps.contains(&(Capability::CooperativeMatrixKHR as u32)),
            "{caps:?}"
        );
        assert!(
            !exts.contains(&extension),
            "naga now declares it: drop the fix-up"
        );
        apply(&mut words);
        let (caps_after, exts_after) = declared(&words);
        assert_eq!(caps_after, caps);
        assert_eq!(exts_after.iter().filter(|e| **e == extension).count(), 1);
        // Applying again adds nothing; the words still form a module
        // (naga's SPIR-V reader knows no cooperative matrices).
        let len = words.len();
        apply(&mut words);
        assert_eq!(words.len(), len);
        crate::shader::check_spirv(&words).expect("a well-formed module");
    }

    /// The ids decorated `Block`.
    fn blocks(words: &[u32]) -> Vec<u32> {
        instructions(words)
            .filter(|&(at, op, n)| {
                op == Some(Op::Decorate) && n >= 3 && words[at + 2] == Decoration::Block as u32
            })
            .map(|(at, _, _)| words[at + 1])
            .collect()
    }

    #[test]
    fn uniform_binding_array_structs_become_blocks() {
        let wgsl = "enable wgpu_binding_array;
            struct U { v: vec4<f32> }
            @group(0) @binding(0) var<uniform> u: binding_array<U, 4>;
            @group(0) @binding(1) var<storage, read_write> out: vec4<f32>;
            @compute @workgroup_size(1) fn main() { out = u[2].v; }";
        let mut words = spirv(wgsl);
        let before = blocks(&words);
        apply(&mut words);
        let after = blocks(&words);
        // Fails once naga decorates the struct itself: drop the fix-up then.
        assert_eq!(after.len(), before.len() + 1, "one struct decorated");
        let mut again = words.clone();
        apply(&mut again);
        assert_eq!(again, words, "applying twice changes nothing more");
    }

    #[test]
    fn other_barriers_are_left_alone() {
        let wgsl = "var<workgroup> w: u32;
            @compute @workgroup_size(64) fn main() { workgroupBarrier(); storageBarrier(); w = 1u; }";
        let mut words = spirv(wgsl);
        let copy = words.clone();
        apply(&mut words);
        assert_eq!(words, copy);
    }

    #[test]
    fn words_that_are_not_a_module_are_left_alone() {
        let mut words = vec![0x0723_0203, 0x0001_0000, 0, 1];
        apply(&mut words);
        assert_eq!(words, [0x0723_0203, 0x0001_0000, 0, 1]);
    }
}
