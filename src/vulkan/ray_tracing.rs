//! Ray-tracing pipelines and shader binding tables
//! (`VK_KHR_ray_tracing_pipeline`).
//!
//! A pipeline is checked before any object exists: the recursion depth
//! against the adapter's maximum, every group's stage indices against the
//! stages and their kinds (a general group holds a ray-generation or miss
//! shader, a hit group closest-hit, any-hit and, for procedural geometry,
//! intersection shaders). Then each stage gets its `VkShaderModule` as in
//! `pipeline.rs` (naga IR: entry point found, interface checked against the
//! layout, that entry point translated; SPIR-V: passed through after its
//! entry point is found; intersection shaders only come this way, WGSL has
//! none), the pipeline is created, and the modules are destroyed on every
//! path.
//!
//! A shader binding table is laid out with the adapter's numbers: records
//! of `shaderGroupHandleSize` bytes at a stride of that size rounded up to
//! `shaderGroupHandleAlignment`, each region (ray generation, miss, hit)
//! starting at a multiple of `shaderGroupBaseAlignment` in an `Upload`
//! buffer placed at that alignment (so region addresses are aligned too).
//! The group handles are fetched before the buffer is made, so a failure
//! leaves nothing behind. The callable region is always empty (keel-hal has
//! no callable shaders).
//!
//! The extension's functions live in [`RayTracingFns`], loaded at device
//! open when the extension is enabled; under fault injection they come
//! through its hooks like the core table.

use std::borrow::Cow;
use std::ffi::CString;

use ash::vk;

use super::conv::map_err;
use super::memory::AllocError;
use super::object_name::set_object_name;
use super::pipeline::{
    check_entry_point, single_pipeline, spirv_has_entry_point_model, translate, StageModule,
};
use super::{Buffer, DeviceShared, PipelineLayout, RayTracingPipeline};
use crate::shader::ShaderInput;
use crate::{
    HalFeatures, Memory, PipelineError, RayTracingPipelineDescriptor, RayTracingStage,
    RayTracingStageKind, ShaderBindingTable, ShaderBindingTableDescriptor,
    ShaderBindingTableRegion, ShaderGroup,
};

/// What a shader group may be used as in a shader binding table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GroupKind {
    /// A general group holding a ray-generation shader.
    RayGeneration,
    /// A general group holding a miss shader.
    Miss,
    /// A triangles or procedural hit group.
    Hit,
}

/// The device-level functions of `VK_KHR_ray_tracing_pipeline`.
#[derive(Clone)]
pub(crate) struct RayTracingFns {
    fp: ash::khr::ray_tracing_pipeline::DeviceFn,
    device: vk::Device,
}

impl std::fmt::Debug for RayTracingFns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RayTracingFns")
            .field("device", &self.device)
            .finish_non_exhaustive()
    }
}

impl RayTracingFns {
    /// Loads the functions for `device` (through the fault-injection hooks
    /// when that feature is on).
    ///
    /// # Safety
    /// `device` is live, was created from `instance` and has
    /// `VK_KHR_ray_tracing_pipeline` enabled.
    pub(super) unsafe fn load(
        instance: &super::instance_shared::InstanceShared,
        device: &ash::Device,
    ) -> Self {
        let handle = device.handle();
        let fp = ash::khr::ray_tracing_pipeline::DeviceFn::load(|name| {
            #[cfg(feature = "fault-injection")]
            {
                // SAFETY: forwarded contract.
                unsafe { super::fault::device_proc_addr(&instance.entry, &instance.raw, name) }
            }
            #[cfg(not(feature = "fault-injection"))]
            {
                // SAFETY: forwarded contract; `name` is NUL-terminated.
                let f = unsafe { instance.raw.get_device_proc_addr(handle, name.as_ptr()) };
                f.map_or(std::ptr::null(), |f| f as *const std::ffi::c_void)
            }
        });
        Self { fp, device: handle }
    }

    /// `vkCreateRayTracingPipelinesKHR` for one pipeline, with no deferred
    /// operation, through `cache` (null: none).
    ///
    /// # Safety
    /// `info` is valid for this device and every pointer in it outlives the call.
    unsafe fn create_pipeline(
        &self,
        info: &vk::RayTracingPipelineCreateInfoKHR<'_>,
        cache: vk::PipelineCache,
    ) -> Result<Vec<vk::Pipeline>, (Vec<vk::Pipeline>, vk::Result)> {
        let mut out = [vk::Pipeline::null()];
        // SAFETY: forwarded contract; one create info, one output slot.
        let result = unsafe {
            (self.fp.create_ray_tracing_pipelines_khr)(
                self.device,
                vk::DeferredOperationKHR::null(),
                cache,
                1,
                info,
                std::ptr::null(),
                out.as_mut_ptr(),
            )
        };
        match result {
            vk::Result::SUCCESS => Ok(out.to_vec()),
            err => Err((Vec::new(), err)),
        }
    }

    /// `vkGetRayTracingShaderGroupHandlesKHR` for the first `count` groups.
    ///
    /// # Safety
    /// `pipeline` is a live ray-tracing pipeline of this device with at
    /// least `count` groups; `out` holds `count` handles.
    unsafe fn group_handles(
        &self,
        pipeline: vk::Pipeline,
        count: u32,
        out: &mut [u8],
    ) -> Result<(), vk::Result> {
        // SAFETY: forwarded contract.
        let result = unsafe {
            (self.fp.get_ray_tracing_shader_group_handles_khr)(
                self.device,
                pipeline,
                0,
                count,
                out.len(),
                out.as_mut_ptr().cast(),
            )
        };
        result.result()
    }

    /// `vkCmdTraceRaysKHR`.
    ///
    /// # Safety
    /// Recording into `cb` inside a ray-tracing pass with a pipeline bound;
    /// the regions are valid for it.
    pub(super) unsafe fn cmd_trace_rays(
        &self,
        cb: vk::CommandBuffer,
        regions: &[vk::StridedDeviceAddressRegionKHR; 4],
        size: [u32; 3],
    ) {
        let [raygen, miss, hit, callable] = regions;
        // SAFETY: forwarded contract.
        unsafe {
            (self.fp.cmd_trace_rays_khr)(cb, raygen, miss, hit, callable, size[0], size[1], size[2])
        }
    }
}

/// The device's ray-tracing functions, or `Unsupported` without them.
fn fns(shared: &DeviceShared) -> Result<&RayTracingFns, PipelineError> {
    match &shared.ray_tracing {
        Some(fns)
            if shared
                .hal_features
                .contains(HalFeatures::RAY_TRACING_PIPELINE) =>
        {
            Ok(fns)
        }
        _ => Err(PipelineError::Unsupported(
            "the device was not opened with HalFeatures::RAY_TRACING_PIPELINE".into(),
        )),
    }
}

fn group_error(group: usize, reason: &'static str) -> PipelineError {
    PipelineError::InvalidShaderGroup {
        group: u32::try_from(group).unwrap_or(u32::MAX),
        reason,
    }
}

/// The kind of each group, after checking its stage indices against the
/// stages' kinds (`stages`, by stage index).
fn check_groups(
    stages: &[RayTracingStageKind],
    groups: &[ShaderGroup],
) -> Result<Box<[GroupKind]>, PipelineError> {
    use RayTracingStageKind as K;
    groups
        .iter()
        .enumerate()
        .map(|(i, group)| {
            // The stage at `index`, which must be of kind `want`.
            let stage = |index: u32, want: K, wrong: &'static str| {
                let kind = *stages
                    .get(index as usize)
                    .ok_or_else(|| group_error(i, "a stage index is out of range"))?;
                if kind == want {
                    Ok(())
                } else {
                    Err(group_error(i, wrong))
                }
            };
            let optional = |index: Option<u32>, want: K, wrong| match index {
                Some(index) => stage(index, want, wrong),
                None => Ok(()),
            };
            match *group {
                ShaderGroup::General { stage: index } => {
                    match stages.get(index as usize).copied() {
                        None => Err(group_error(i, "a stage index is out of range")),
                        Some(K::RayGeneration) => Ok(GroupKind::RayGeneration),
                        Some(K::Miss) => Ok(GroupKind::Miss),
                        Some(_) => Err(group_error(
                            i,
                            "a general group holds a ray-generation or miss stage",
                        )),
                    }
                }
                ShaderGroup::TrianglesHit {
                    closest_hit,
                    any_hit,
                } => {
                    optional(
                        closest_hit,
                        K::ClosestHit,
                        "closest_hit is not a closest-hit stage",
                    )?;
                    optional(any_hit, K::AnyHit, "any_hit is not an any-hit stage")?;
                    Ok(GroupKind::Hit)
                }
                ShaderGroup::ProceduralHit {
                    intersection,
                    closest_hit,
                    any_hit,
                } => {
                    stage(
                        intersection,
                        K::Intersection,
                        "intersection is not an intersection stage",
                    )?;
                    optional(
                        closest_hit,
                        K::ClosestHit,
                        "closest_hit is not a closest-hit stage",
                    )?;
                    optional(any_hit, K::AnyHit, "any_hit is not an any-hit stage")?;
                    Ok(GroupKind::Hit)
                }
            }
        })
        .collect()
}

/// The Vulkan create info of a checked group.
fn group_info(group: &ShaderGroup) -> vk::RayTracingShaderGroupCreateInfoKHR<'static> {
    let or_unused = |index: Option<u32>| index.unwrap_or(vk::SHADER_UNUSED_KHR);
    let info = vk::RayTracingShaderGroupCreateInfoKHR::default()
        .general_shader(vk::SHADER_UNUSED_KHR)
        .closest_hit_shader(vk::SHADER_UNUSED_KHR)
        .any_hit_shader(vk::SHADER_UNUSED_KHR)
        .intersection_shader(vk::SHADER_UNUSED_KHR);
    match *group {
        ShaderGroup::General { stage } => info
            .ty(vk::RayTracingShaderGroupTypeKHR::GENERAL)
            .general_shader(stage),
        ShaderGroup::TrianglesHit {
            closest_hit,
            any_hit,
        } => info
            .ty(vk::RayTracingShaderGroupTypeKHR::TRIANGLES_HIT_GROUP)
            .closest_hit_shader(or_unused(closest_hit))
            .any_hit_shader(or_unused(any_hit)),
        ShaderGroup::ProceduralHit {
            intersection,
            closest_hit,
            any_hit,
        } => info
            .ty(vk::RayTracingShaderGroupTypeKHR::PROCEDURAL_HIT_GROUP)
            .intersection_shader(intersection)
            .closest_hit_shader(or_unused(closest_hit))
            .any_hit_shader(or_unused(any_hit)),
    }
}

/// A stage kind's naga stage (none for intersection), Vulkan stage bit
/// and SPIR-V execution model.
fn stage_kind(
    kind: RayTracingStageKind,
) -> (
    Option<naga::ShaderStage>,
    vk::ShaderStageFlags,
    spirv::ExecutionModel,
) {
    use naga::ShaderStage as N;
    use spirv::ExecutionModel as X;
    use vk::ShaderStageFlags as V;
    match kind {
        RayTracingStageKind::RayGeneration => {
            (Some(N::RayGeneration), V::RAYGEN_KHR, X::RayGenerationKHR)
        }
        RayTracingStageKind::Intersection => (None, V::INTERSECTION_KHR, X::IntersectionKHR),
        RayTracingStageKind::AnyHit => (Some(N::AnyHit), V::ANY_HIT_KHR, X::AnyHitKHR),
        RayTracingStageKind::ClosestHit => {
            (Some(N::ClosestHit), V::CLOSEST_HIT_KHR, X::ClosestHitKHR)
        }
        RayTracingStageKind::Miss => (Some(N::Miss), V::MISS_KHR, X::MissKHR),
    }
}

/// Checks one stage (naga IR: against the layout) and makes its module.
///
/// # Safety
/// The stage's module came from this device.
unsafe fn stage_module<'d>(
    shared: &'d DeviceShared,
    stage: &RayTracingStage<'_, super::Api>,
    layout: &PipelineLayout,
) -> Result<StageModule<'d>, PipelineError> {
    let (naga_stage, flag, model) = stage_kind(stage.kind);
    let name = stage.stage.entry_point;
    let missing = || match naga_stage {
        Some(stage) => PipelineError::EntryPoint {
            stage,
            name: name.to_owned(),
        },
        None => PipelineError::Unsupported(format!(
            "no intersection entry point named {name:?} in the SPIR-V module"
        )),
    };
    let entry_point = CString::new(name).map_err(|_| missing())?;
    let words = match &stage.stage.module.input {
        ShaderInput::Naga(validated) => {
            let Some(naga_stage) = naga_stage else {
                return Err(PipelineError::Unsupported(
                    "intersection shaders come from SPIR-V modules (WGSL has none)".into(),
                ));
            };
            let constants = stage.stage.constants;
            let resolved =
                crate::shader::constants::resolve(validated, naga_stage, name, constants)?;
            check_entry_point(shared, &resolved, name, naga_stage, layout)?;
            Cow::Owned(translate(
                shared, &resolved, name, naga_stage, layout, false,
            )?)
        }
        ShaderInput::SpirV { words, module } => {
            match naga_stage {
                Some(naga_stage) => crate::shader::constants::refuse_for_spirv(
                    naga_stage,
                    name,
                    stage.stage.constants,
                )?,
                None if !stage.stage.constants.is_empty() => {
                    return Err(PipelineError::Unsupported(
                        "pipeline constants for an intersection shader: values are given to \
                         WGSL and naga modules, and intersection shaders are SPIR-V"
                            .into(),
                    ))
                }
                None => {}
            }
            match (module, naga_stage) {
                // SPIR-V naga's front end read: its interface is checked
                // (naga has no intersection stage).
                (Some(validated), Some(naga_stage)) => {
                    check_entry_point(shared, validated, name, naga_stage, layout)?;
                }
                _ => {
                    if !spirv_has_entry_point_model(words, model, name) {
                        return Err(missing());
                    }
                }
            }
            Cow::Borrowed(&words[..])
        }
    };
    let info = vk::ShaderModuleCreateInfo::default().code(&words);
    // SAFETY: `words` is SPIR-V from naga's writer, SPIR-V that naga's
    // front end read and validated, or SPIR-V the caller vouched for
    // (`UncheckedSpirV`); all passed the structural check (so the driver
    // reads no further than its end).
    let raw = unsafe { shared.raw.create_shader_module(&info, None) }.map_err(map_err)?;
    Ok(StageModule {
        device: &shared.raw,
        raw,
        entry_point,
        stage: flag,
    })
}

/// Creates a ray-tracing pipeline.
///
/// # Safety
/// As `Device::create_ray_tracing_pipeline`.
pub(super) unsafe fn create_pipeline(
    device: &super::Device,
    desc: &RayTracingPipelineDescriptor<super::Api>,
) -> Result<RayTracingPipeline, PipelineError> {
    let shared = &*device.shared;
    let fns = fns(shared)?;
    let max_depth = shared.physical.ray_limits.max_ray_recursion_depth;
    if desc.max_recursion_depth > max_depth {
        return Err(PipelineError::Unsupported(format!(
            "max_recursion_depth {} is above the adapter's {max_depth}",
            desc.max_recursion_depth
        )));
    }
    if desc.stages.is_empty() || desc.groups.is_empty() {
        return Err(PipelineError::Unsupported(
            "a ray-tracing pipeline needs at least one stage and one group".into(),
        ));
    }
    let stage_kinds: Vec<_> = desc.stages.iter().map(|s| s.kind).collect();
    let kinds = check_groups(&stage_kinds, desc.groups)?;

    let mut modules = Vec::with_capacity(desc.stages.len());
    for stage in desc.stages {
        // SAFETY: the modules came from this device (the caller's
        // contract). On failure `modules` drops (destroys) those made.
        modules.push(unsafe { stage_module(shared, stage, desc.layout) }?);
    }
    let stages: Vec<_> = modules.iter().map(StageModule::info).collect();
    let groups: Vec<_> = desc.groups.iter().map(group_info).collect();
    let info = vk::RayTracingPipelineCreateInfoKHR::default()
        .stages(&stages)
        .groups(&groups)
        .max_pipeline_ray_recursion_depth(desc.max_recursion_depth)
        .layout(desc.layout.raw);
    // SAFETY: groups were checked against the stages, the recursion depth
    // against the adapter, each naga stage's interface against the layout;
    // the layout came from this device; every pointer in `info` outlives
    // the call.
    let result = {
        // Some drivers deadlock creating or destroying a ray-tracing
        // pipeline beside a device's creation or destruction
        // (`workarounds.rs`).
        let _serial = shared.physical.workarounds.serialize_device_lifetime();
        // SAFETY: as above.
        unsafe { fns.create_pipeline(&info, super::pipeline_cache::raw(desc.cache)) }
    };
    drop(stages);
    drop(modules);
    let raw = single_pipeline(result)?;
    shared.counters.ray_tracing_pipelines.add();
    if let Some(label) = desc.label {
        // SAFETY: `raw` is live.
        unsafe { set_object_name(shared, raw, label) };
    }
    Ok(RayTracingPipeline { raw, groups: kinds })
}

/// Destroys a ray-tracing pipeline.
///
/// # Safety
/// As `Device::destroy_ray_tracing_pipeline`.
pub(super) unsafe fn destroy_pipeline(device: &super::Device, pipeline: RayTracingPipeline) {
    // As around creation (`workarounds.rs`).
    let _serial = device
        .shared
        .physical
        .workarounds
        .serialize_device_lifetime();
    // SAFETY: the caller guarantees it is ours and idle.
    unsafe { device.shared.raw.destroy_pipeline(pipeline.raw, None) };
    device.shared.counters.ray_tracing_pipelines.sub();
}

/// The adapter's shader-binding-table numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TableLimits {
    handle_size: u64,
    handle_alignment: u64,
    base_alignment: u64,
    max_stride: u64,
}

/// Where a table's regions go, and its total size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TableLayout {
    ray_generation: ShaderBindingTableRegion,
    miss: ShaderBindingTableRegion,
    hit: ShaderBindingTableRegion,
    size: u64,
}

/// `value` rounded up to a multiple of `to` (0 and 1: unchanged).
fn align_up(value: u64, to: u64) -> Option<u64> {
    if to <= 1 {
        return Some(value);
    }
    value.checked_add(to - 1).map(|v| v / to * to)
}

/// Lays out one ray-generation record, `miss` miss records and `hit` hit
/// records; `None` when the numbers overflow or the stride is above the
/// adapter's maximum.
fn table_layout(limits: TableLimits, miss: usize, hit: usize) -> Option<TableLayout> {
    let stride = align_up(limits.handle_size, limits.handle_alignment)?;
    // The ray-generation region's size must equal its stride.
    let raygen_stride = align_up(stride, limits.base_alignment)?;
    if stride == 0 || raygen_stride > limits.max_stride {
        return None;
    }
    let ray_generation = ShaderBindingTableRegion {
        offset: 0,
        stride: raygen_stride,
        size: raygen_stride,
    };
    let region = |offset: u64, count: usize| -> Option<ShaderBindingTableRegion> {
        let size = stride.checked_mul(u64::try_from(count).ok()?)?;
        Some(ShaderBindingTableRegion {
            offset,
            stride,
            size,
        })
    };
    let miss = region(raygen_stride, miss)?;
    let hit_offset = align_up(miss.offset.checked_add(miss.size)?, limits.base_alignment)?;
    let hit = region(hit_offset, hit)?;
    let size = hit.offset.checked_add(hit.size)?;
    Some(TableLayout {
        ray_generation,
        miss,
        hit,
        size,
    })
}

/// Checks that every group the table names exists with the right kind.
fn check_table_groups(
    pipeline: &RayTracingPipeline,
    desc: &ShaderBindingTableDescriptor<'_>,
) -> Result<(), PipelineError> {
    let entries = std::iter::once((desc.ray_generation, GroupKind::RayGeneration))
        .chain(desc.miss.iter().map(|&g| (g, GroupKind::Miss)))
        .chain(desc.hit.iter().map(|&g| (g, GroupKind::Hit)));
    for (group, want) in entries {
        let error = |reason| PipelineError::InvalidShaderGroup { group, reason };
        match pipeline.groups.get(group as usize) {
            None => return Err(error("the pipeline has no such group")),
            Some(&kind) if kind != want => {
                return Err(error(match want {
                    GroupKind::RayGeneration => "not a ray-generation group",
                    GroupKind::Miss => "not a miss group",
                    GroupKind::Hit => "not a hit group",
                }))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Builds a shader binding table.
///
/// # Safety
/// As `Device::create_shader_binding_table`.
pub(super) unsafe fn create_shader_binding_table(
    device: &super::Device,
    pipeline: &RayTracingPipeline,
    desc: &ShaderBindingTableDescriptor,
) -> Result<ShaderBindingTable<Buffer>, PipelineError> {
    let shared = &*device.shared;
    let fns = fns(shared)?;
    check_table_groups(pipeline, desc)?;
    let rl = &shared.physical.ray_limits;
    let limits = TableLimits {
        handle_size: rl.shader_group_handle_size.into(),
        handle_alignment: rl.shader_group_handle_alignment.into(),
        base_alignment: rl.shader_group_base_alignment.into(),
        max_stride: rl.max_shader_group_stride.into(),
    };
    let layout = table_layout(limits, desc.miss.len(), desc.hit.len()).ok_or_else(|| {
        PipelineError::Unsupported(format!(
            "a shader binding table of {} miss and {} hit records does not fit the \
             adapter's limits {limits:?}",
            desc.miss.len(),
            desc.hit.len()
        ))
    })?;

    // The handles first: a failure here leaves nothing to release.
    let handle_size = rl.shader_group_handle_size as usize;
    let group_count = u32::try_from(pipeline.groups.len()).unwrap_or(u32::MAX);
    let mut handles = vec![0u8; pipeline.groups.len() * handle_size];
    // SAFETY: the pipeline came from this device (the caller's contract)
    // and has `group_count` groups; `handles` holds that many handles.
    unsafe { fns.group_handles(pipeline.raw, group_count, &mut handles) }.map_err(map_err)?;

    let info = vk::BufferCreateInfo::default()
        .size(layout.size)
        .usage(
            vk::BufferUsageFlags::SHADER_BINDING_TABLE_KHR
                | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
        )
        .sharing_mode(vk::SharingMode::EXCLUSIVE);
    // SAFETY: `info` is valid: a non-zero size (at least one record) and
    // usages of enabled features (ray tracing implies buffer device address).
    let created = unsafe {
        shared.memory.create_buffer_aligned(
            &info,
            Memory::Upload,
            limits.base_alignment,
            &shared.counters.memory_allocations,
        )
    };
    let (raw, block, mapped) = created.map_err(|e| match e {
        AllocError::NoSuitableMemory => PipelineError::Unsupported(
            "no HOST_VISIBLE | HOST_COHERENT memory for the shader binding table".into(),
        ),
        AllocError::Device(d) => PipelineError::Device(d),
    })?;
    let Some(ptr) = mapped else {
        // Upload memory always comes back mapped (memory.rs).
        // SAFETY: just created; no GPU work uses it.
        unsafe {
            shared
                .memory
                .destroy_buffer(raw, block, &shared.counters.memory_allocations)
        };
        return Err(PipelineError::Device(crate::DeviceError::Unexpected));
    };
    shared.counters.buffers.add();
    let records = std::iter::once((layout.ray_generation.offset, desc.ray_generation))
        .chain(
            desc.miss
                .iter()
                .enumerate()
                .map(|(i, &g)| (layout.miss.offset + i as u64 * layout.miss.stride, g)),
        )
        .chain(
            desc.hit
                .iter()
                .enumerate()
                .map(|(i, &g)| (layout.hit.offset + i as u64 * layout.hit.stride, g)),
        );
    // SAFETY: the mapping covers `layout.size` bytes, coherent and not in
    // use by the GPU (the buffer is new); every record lies inside the
    // layout and every group index was checked against the pipeline's
    // groups, whose handles `handles` holds.
    unsafe {
        std::ptr::write_bytes(ptr.as_ptr(), 0, layout.size as usize);
        for (offset, group) in records {
            let src = &handles[group as usize * handle_size..][..handle_size];
            std::ptr::copy_nonoverlapping(
                src.as_ptr(),
                ptr.as_ptr().add(offset as usize),
                handle_size,
            );
        }
    }
    if let Some(label) = desc.label {
        // SAFETY: `raw` is live.
        unsafe { set_object_name(shared, raw, label) };
    }
    Ok(ShaderBindingTable {
        buffer: Buffer {
            raw,
            block,
            size: layout.size,
            usage: wgt::BufferUsages::empty(),
            memory: Memory::Upload,
            mapped: Some(ptr),
            address: Default::default(),
        },
        ray_generation: layout.ray_generation,
        miss: layout.miss,
        hit: layout.hit,
    })
}

/// Destroys a shader binding table.
///
/// # Safety
/// As `Device::destroy_shader_binding_table`.
pub(super) unsafe fn destroy_shader_binding_table(
    device: &super::Device,
    table: ShaderBindingTable<Buffer>,
) {
    let shared = &*device.shared;
    let buffer = table.buffer;
    // SAFETY: the caller guarantees it is ours and idle; its block came
    // from `create_buffer_aligned`.
    unsafe {
        shared.memory.destroy_buffer(
            buffer.raw,
            buffer.block,
            &shared.counters.memory_allocations,
        )
    };
    shared.counters.buffers.sub();
}

#[cfg(test)]
mod tests {
    use super::*;

    const NVIDIA: TableLimits = TableLimits {
        handle_size: 32,
        handle_alignment: 32,
        base_alignment: 64,
        max_stride: 4096,
    };

    #[test]
    fn regions_start_at_the_base_alignment() {
        let t = table_layout(NVIDIA, 3, 2).expect("fits");
        let r = |offset, stride, size| ShaderBindingTableRegion {
            offset,
            stride,
            size,
        };
        assert_eq!(t.ray_generation, r(0, 64, 64));
        assert_eq!(t.miss, r(64, 32, 96));
        assert_eq!(t.hit, r(192, 32, 64));
        assert_eq!(t.size, 256);
    }

    #[test]
    fn odd_handle_sizes_round_up_to_the_handle_alignment() {
        let limits = TableLimits {
            handle_size: 20,
            handle_alignment: 16,
            base_alignment: 16,
            max_stride: 4096,
        };
        let t = table_layout(limits, 1, 0).expect("fits");
        assert_eq!((t.ray_generation.stride, t.miss.stride), (32, 32));
        assert_eq!((t.miss.offset, t.hit.offset, t.hit.size), (32, 64, 0));
        assert_eq!(t.size, 64);
    }

    #[test]
    fn strides_above_the_limit_and_overflow_are_refused() {
        let tight = TableLimits {
            max_stride: 32,
            ..NVIDIA
        };
        assert_eq!(table_layout(tight, 1, 1), None, "raygen stride 64 > 32");
        assert_eq!(table_layout(NVIDIA, usize::MAX, 0), None);
    }

    #[test]
    fn groups_are_checked_against_stage_kinds() {
        use RayTracingStageKind as K;
        let stages = [K::RayGeneration, K::Miss, K::ClosestHit, K::Intersection];
        let ok = [
            ShaderGroup::General { stage: 0 },
            ShaderGroup::General { stage: 1 },
            ShaderGroup::TrianglesHit {
                closest_hit: Some(2),
                any_hit: None,
            },
            ShaderGroup::ProceduralHit {
                intersection: 3,
                closest_hit: Some(2),
                any_hit: None,
            },
        ];
        assert_eq!(
            &*check_groups(&stages, &ok).expect("valid"),
            &[
                GroupKind::RayGeneration,
                GroupKind::Miss,
                GroupKind::Hit,
                GroupKind::Hit
            ]
        );
        let bad = |group| check_groups(&stages, &[ShaderGroup::General { stage: 0 }, group]);
        assert!(matches!(
            bad(ShaderGroup::General { stage: 9 }),
            Err(PipelineError::InvalidShaderGroup { group: 1, .. })
        ));
        assert!(matches!(
            bad(ShaderGroup::General { stage: 2 }),
            Err(PipelineError::InvalidShaderGroup { group: 1, .. })
        ));
        assert!(matches!(
            bad(ShaderGroup::TrianglesHit {
                closest_hit: Some(1),
                any_hit: None
            }),
            Err(PipelineError::InvalidShaderGroup { group: 1, .. })
        ));
        assert!(matches!(
            bad(ShaderGroup::ProceduralHit {
                intersection: 2,
                closest_hit: None,
                any_hit: None
            }),
            Err(PipelineError::InvalidShaderGroup { group: 1, .. })
        ));
    }
}
