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

/// The opcodes the fix-ups read or write.
const OP_EXTENSION: u32 = 10;
const OP_CAPABILITY: u32 = 17;
const OP_TYPE_INT: u32 = 21;
const OP_TYPE_ARRAY: u32 = 28;
const OP_TYPE_RUNTIME_ARRAY: u32 = 29;
const OP_TYPE_STRUCT: u32 = 30;
const OP_TYPE_POINTER: u32 = 32;
const OP_CONSTANT: u32 = 43;
const OP_VARIABLE: u32 = 59;
const OP_DECORATE: u32 = 71;
const OP_CONTROL_BARRIER: u32 = 224;
const OP_MEMORY_BARRIER: u32 = 225;
/// The `Uniform` storage class; the `Block` and `BufferBlock` decorations.
const UNIFORM: u32 = 2;
const BLOCK: u32 = 2;
const BUFFER_BLOCK: u32 = 3;

/// Acquire, Release, AcquireRelease, SequentiallyConsistent.
const ORDERING: u32 = 0x2 | 0x4 | 0x8 | 0x10;
/// UniformMemory, WorkgroupMemory, ImageMemory, OutputMemory.
const VULKAN_STORAGE: u32 = 0x40 | 0x100 | 0x800 | 0x1000;
/// What the fix-up adds: UniformMemory, WorkgroupMemory, ImageMemory.
const ADDED: u32 = 0x40 | 0x100 | 0x800;

/// The SPIR-V header's length in words; word 3 is the id bound.
const HEADER: usize = 5;

/// SPIR-V's `Int8` capability (8-bit integer types).
pub(crate) const INT8: u32 = 39;

/// Whether the module declares `capability` (an `OpCapability`).
pub(crate) fn declares_capability(words: &[u32], capability: u32) -> bool {
    instructions(words).any(|(at, opcode, count)| {
        opcode == OP_CAPABILITY && count == 2 && words[at + 1] == capability
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
    for (at, opcode, count) in instructions(words) {
        let w = &words[at..at + count];
        match opcode {
            OP_DECORATE if count >= 3 && (w[2] == BLOCK || w[2] == BUFFER_BLOCK) => {
                blocks.push(w[1]);
            }
            OP_TYPE_STRUCT if count >= 2 => structs.push(w[1]),
            OP_TYPE_ARRAY | OP_TYPE_RUNTIME_ARRAY if count >= 3 => arrays.push((w[1], w[2])),
            OP_TYPE_POINTER if count == 4 => pointers.push((w[1], w[3])),
            OP_VARIABLE if count >= 4 && w[3] == UNIFORM => uniform_pointers.push(w[1]),
            _ => {}
        }
        // Type declarations run from OpTypeVoid (19) to OpTypeForwardPointer (39).
        if first_type.is_none() && (19..=39).contains(&opcode) {
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
            decorations.extend([(3 << 16) | OP_DECORATE, element, BLOCK]);
        }
    }
    if !decorations.is_empty() {
        words.splice(insert_at..insert_at, decorations);
    }
}

/// SPIR-V capabilities naga may declare without the extension SPIR-V 1.5
/// needs for them: (capability, extension).
const CAPABILITY_EXTENSIONS: &[(u32, &str)] = &[(6022, "SPV_KHR_cooperative_matrix")];

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
    out[0] = ((out.len() as u32) << 16) | OP_EXTENSION;
    out
}

/// Declares the extension of each capability in [`CAPABILITY_EXTENSIONS`]
/// the module declares without it, after its last `OpCapability`.
fn declare_capability_extensions(words: &mut Vec<u32>) {
    let mut capabilities = Vec::new();
    let mut extensions = Vec::new();
    let mut after_capabilities = None;
    for (at, opcode, count) in instructions(words) {
        match opcode {
            OP_CAPABILITY if count == 2 => {
                capabilities.push(words[at + 1]);
                after_capabilities = Some(at + count);
            }
            OP_EXTENSION => extensions.push(super::spirv_literal(&words[at + 1..at + count])),
            _ => {}
        }
    }
    let Some(insert_at) = after_capabilities else {
        return;
    };
    let missing: Vec<u32> = CAPABILITY_EXTENSIONS
        .iter()
        .filter(|(cap, ext)| capabilities.contains(cap) && !extensions.iter().any(|e| e == ext))
        .flat_map(|(_, ext)| op_extension(ext))
        .collect();
    if !missing.is_empty() {
        words.splice(insert_at..insert_at, missing);
    }
}

/// One instruction: where it starts, its opcode and word count.
fn instructions(words: &[u32]) -> impl Iterator<Item = (usize, u32, usize)> + '_ {
    let mut at = HEADER;
    std::iter::from_fn(move || {
        let first = *words.get(at)?;
        let (count, opcode) = ((first >> 16) as usize, first & 0xffff);
        if count == 0 || at + count > words.len() {
            return None;
        }
        let this = (at, opcode, count);
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
    for (at, opcode, count) in instructions(words) {
        match (opcode, count) {
            (OP_TYPE_INT, 4) if words[at + 2] == 32 => int32.push(words[at + 1]),
            (OP_CONSTANT, 4) if int32.contains(&words[at + 1]) => {
                constants.insert(words[at + 2], (words[at + 1], words[at + 3], at));
            }
            (OP_CONTROL_BARRIER, 4) => operands.push((at + 3, words[at + 3])),
            (OP_MEMORY_BARRIER, 3) => operands.push((at + 2, words[at + 2])),
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
        if value & ORDERING == 0 || value & VULKAN_STORAGE != 0 {
            continue;
        }
        let wanted = value | ADDED;
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
        out.extend_from_slice(&[(4 << 16) | OP_CONSTANT, ty, id, value]);
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
    fn barrier_semantics(words: &[u32]) -> Vec<u32> {
        let mut constants = std::collections::HashMap::new();
        let mut out = Vec::new();
        for (at, opcode, _) in instructions(words) {
            match opcode {
                OP_CONSTANT => {
                    constants.insert(words[at + 2], words[at + 3]);
                }
                OP_CONTROL_BARRIER => out.push(constants[&words[at + 3]]),
                OP_MEMORY_BARRIER => out.push(constants[&words[at + 2]]),
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
                .any(|v| v & ORDERING != 0 && v & VULKAN_STORAGE == 0),
            "naga's subgroup barrier names no Vulkan storage class: {before:x?}"
        );
        let bound = words[3];
        apply(&mut words);
        let after = barrier_semantics(&words);
        assert!(after
            .iter()
            .all(|v| v & ORDERING == 0 || v & VULKAN_STORAGE != 0));
        assert_eq!(words[3], bound + 1, "one constant added");
        // Still a module naga reads back.
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        naga::front::spv::parse_u8_slice(&bytes, &Default::default()).expect("valid SPIR-V");
    }

    /// Capabilities and extensions a module declares.
    fn declared(words: &[u32]) -> (Vec<u32>, Vec<String>) {
        let (mut caps, mut exts) = (Vec::new(), Vec::new());
        for (at, opcode, count) in instructions(words) {
            match opcode {
                OP_CAPABILITY => caps.push(words[at + 1]),
                OP_EXTENSION => exts.push(crate::shader::spirv_literal(&words[at + 1..at + count])),
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
        assert!(caps.contains(&6022), "{caps:?}");
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
            .filter(|&(at, op, n)| op == OP_DECORATE && n >= 3 && words[at + 2] == BLOCK)
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
