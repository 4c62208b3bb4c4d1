//! Shader modules and compute/render pipelines.
//!
//! A [`ShaderModule`] is the shader front end's output (`crate::shader`):
//! validated naga IR (from WGSL or a naga module), SPIR-V with the validated
//! naga IR its front end read, or unchecked SPIR-V that passed the
//! structural check. It owns no Vulkan object. A pipeline, for each stage:
//! - naga IR: finds the entry point, checks its interface against the
//!   pipeline layout (bindings and push constants) and the device's stage
//!   rules ([`stage_stores`]), translates just that entry point to SPIR-V
//!   with the layout's binding map (binding arrays get the layout's sizes);
//! - checked SPIR-V: the same checks on the IR read from it, then the words
//!   as they are;
//! - unchecked SPIR-V: the words as they are, once the entry point is found
//!   (the caller vouched for the rest);
//!
//! then makes a `VkShaderModule` from the words, creates the pipeline, and
//! destroys the module right after, on success and on every error path
//! ([`StageModule`] owns it). SPIR-V modules are not cached as
//! `VkShaderModule`s at module creation: one path for both kinds of
//! source, and a shader module that never holds a driver object.
//!
//! naga's validator runs with the capabilities of the device's enabled
//! features ([`shader_capabilities`]). Y is not flipped in the shaders:
//! passes flip it with a negative viewport height (`pass.rs`). No pipeline
//! cache is used.

use std::borrow::Cow;
use std::ffi::CString;

use arrayvec::ArrayVec;
use ash::vk;

use super::conv::map_err;
use super::object_name::set_object_name;
use super::pipeline_state::{FixedState, DYNAMIC_STATES};
use super::{ComputePipeline, DeviceShared, PipelineLayout, RenderPipeline, ShaderModule};
use crate::features::vulkan_column::Bit;
use crate::shader::interface::{
    binding_map, check_layout, check_stage_stores, find_entry_point, EntryPointInterface,
};
pub(super) use crate::shader::spirv_has_entry_point_model;
use crate::shader::{
    constants, spirv_has_entry_point, to_spirv, ShaderInput, SpirvOptions, StageStores,
};
use crate::validate::draw::Geometry;
use crate::{
    ComputePipelineDescriptor, DeviceError, MeshPipelineDescriptor, PipelineError,
    ProgrammableStage, RenderPipelineDescriptor, ShaderError, ShaderModuleDescriptor,
};

/// The naga capabilities a device's shaders may use: the rule every backend
/// shares ([`crate::shader::capabilities`]), with cube arrays and per-sample
/// shading where the device has `imageCubeArray` and `sampleRateShading`
/// (both enabled wherever supported).
pub(super) fn shader_capabilities(shared: &DeviceShared) -> naga::valid::Capabilities {
    crate::shader::capabilities(
        shared.features,
        shared.hal_features,
        crate::shader::ShaderSupport {
            cube_arrays: shared.enabled.has(Bit::ImageCubeArray),
            sample_rate_shading: shared.enabled.has(Bit::SampleRateShading),
        },
    )
}

/// Which stages may write storage: those whose feature the device has
/// (`open` enables `vertexPipelineStoresAndAtomics` and
/// `fragmentStoresAndAtomics` wherever supported).
pub(super) fn stage_stores(shared: &DeviceShared) -> StageStores {
    StageStores {
        vertex: shared
            .features
            .contains(wgt::Features::VERTEX_WRITABLE_STORAGE),
        fragment: shared.enabled.has(Bit::FragmentStoresAndAtomics),
    }
}

/// Whether naga may use `StorageInputOutput16` for `f16` entry-point
/// inputs and outputs: the device enabled `storageInputOutput16` (with
/// `SHADER_F16` or `SHADER_I16` where supported: `features.rs`).
pub(super) fn storage_input_output_16(shared: &DeviceShared) -> bool {
    shared.enabled.has(Bit::StorageInputOutput16)
}

/// Creates a shader module: runs the front end, keeps its result. The
/// label names nothing (no Vulkan object exists for the module).
///
/// # Safety
/// As `Device::create_shader_module`.
pub(super) unsafe fn create_shader_module(
    device: &super::Device,
    desc: &ShaderModuleDescriptor,
) -> Result<ShaderModule, ShaderError> {
    let shared = &*device.shared;
    let input = ShaderInput::for_device(
        desc.source.clone(),
        shader_capabilities(shared),
        shared.features,
        &shared.physical.cooperative_matrices,
    )?
    .into_static()?;
    shared.counters.shader_modules.add();
    Ok(ShaderModule { input })
}

/// Destroys a shader module (it owns no Vulkan object).
///
/// # Safety
/// As `Device::destroy_shader_module`.
pub(super) unsafe fn destroy_shader_module(device: &super::Device, module: ShaderModule) {
    drop(module);
    device.shared.counters.shader_modules.sub();
}

/// A `VkShaderModule` made for one pipeline stage; destroyed when dropped,
/// so it goes on every path once the pipeline is created (or not).
pub(super) struct StageModule<'d> {
    pub(super) device: &'d ash::Device,
    pub(super) raw: vk::ShaderModule,
    pub(super) entry_point: CString,
    pub(super) stage: vk::ShaderStageFlags,
}

impl Drop for StageModule<'_> {
    fn drop(&mut self) {
        // SAFETY: `raw` was created on `device` by `stage_module` and is
        // only referenced by pipeline create infos, which are done with it
        // (a pipeline does not need its modules after creation).
        unsafe { self.device.destroy_shader_module(self.raw, None) };
    }
}

impl StageModule<'_> {
    pub(super) fn info(&self) -> vk::PipelineShaderStageCreateInfo<'_> {
        vk::PipelineShaderStageCreateInfo::default()
            .stage(self.stage)
            .module(self.raw)
            .name(&self.entry_point)
    }
}

/// Translation and SPIR-V front-end failures become pipeline errors.
pub(super) fn translation_error(err: ShaderError) -> PipelineError {
    match err {
        ShaderError::Device(d) => PipelineError::Device(d),
        ShaderError::Translation(message) => PipelineError::Unsupported(message),
        other => PipelineError::Unsupported(other.to_string()),
    }
}

/// What a checked stage leaves besides its module: the entry point's
/// workgroup size (zeros for unchecked SPIR-V, whose interface is not read)
/// and a mesh stage's output topology (`None`: another stage, or not read).
type Checked<'d> = (StageModule<'d>, [u32; 3], Option<wgt::PrimitiveTopology>);

/// Finds the entry point in a validated module and checks it against the
/// layout and the device's stage rules.
pub(super) fn check_entry_point(
    shared: &DeviceShared,
    module: &crate::shader::ValidatedModule,
    name: &str,
    naga_stage: naga::ShaderStage,
    layout: &PipelineLayout,
) -> Result<EntryPointInterface, PipelineError> {
    let interface = find_entry_point(module, name, naga_stage)?;
    check_layout(&interface, layout)?;
    check_stage_stores(&interface, stage_stores(shared))?;
    Ok(interface)
}

/// Translates a checked entry point of naga IR to SPIR-V for `layout`.
/// How `var<workgroup>` memory is zeroed: by the driver wherever the device
/// has `shaderZeroInitializeWorkgroupMemory` (Vulkan 1.3; enabled wherever
/// supported), which naga's native mode relies on (`OpVariable` with a
/// null initializer), else by naga's polyfill, which zeroes it in the
/// shader with a barrier (as wgpu-hal chooses). Task and mesh stages always
/// use the native mode: mesh shaders come with the bit enabled, and the
/// polyfill would declare a second `LocalInvocationIndex` input beside the
/// mesh output's.
pub(super) fn zero_init_mode(
    shared: &DeviceShared,
    naga_stage: naga::ShaderStage,
) -> naga::back::spv::ZeroInitializeWorkgroupMemoryMode {
    use naga::back::spv::ZeroInitializeWorkgroupMemoryMode as Mode;
    match naga_stage {
        naga::ShaderStage::Task | naga::ShaderStage::Mesh => Mode::Native,
        _ if shared.enabled.has(Bit::ZeroInitializeWorkgroupMemory) => Mode::Native,
        _ => Mode::Polyfill,
    }
}

impl super::Device {
    /// Whether compute and graphics shaders leave zeroing `var<workgroup>`
    /// memory to the driver (`shaderZeroInitializeWorkgroupMemory`), rather
    /// than zeroing it themselves with naga's polyfill: the cheaper path,
    /// chosen wherever the device has it ([`zero_init_mode`]).
    pub fn zeroes_workgroup_memory_natively(&self) -> bool {
        matches!(
            zero_init_mode(&self.shared, naga::ShaderStage::Compute),
            naga::back::spv::ZeroInitializeWorkgroupMemoryMode::Native
        )
    }
}

pub(super) fn translate(
    shared: &DeviceShared,
    module: &crate::shader::ValidatedModule,
    name: &str,
    naga_stage: naga::ShaderStage,
    layout: &PipelineLayout,
    point_list: bool,
) -> Result<Vec<u32>, PipelineError> {
    let binding_map = binding_map(layout);
    // No debug info: naga marks its source as WGSL (source
    // language 10), which validation layers before SPIR-V 1.6's
    // revision with WGSL (e.g. 1.3.239) reject as invalid SPIR-V.
    let zero_init = zero_init_mode(shared, naga_stage);
    let options = SpirvOptions {
        entry_point: Some((naga_stage, name)),
        binding_map: Some(&binding_map),
        storage_input_output_16: storage_input_output_16(shared),
        force_point_size: point_list,
        zero_initialize_workgroup_memory: zero_init,
        // Indices into arrays, vectors and matrices are clamped (WGSL's
        // rule, and wgpu-hal's): an index past a `var<workgroup>` or
        // private array never reaches the driver.
        bounds_checks: naga::proc::BoundsCheckPolicies {
            index: naga::proc::BoundsCheckPolicy::Restrict,
            ..Default::default()
        },
        ..Default::default()
    };
    let words = to_spirv(module, &options).map_err(translation_error)?;
    // naga writes 8-bit integers (`Int8`) for the packed 4×8-bit builtins
    // wherever it is not told otherwise; a device without `shaderInt8`
    // cannot take them.
    if !shared.enabled.has(Bit::ShaderInt8)
        && crate::shader::spirv_fixups::declares_capability(&words, spirv::Capability::Int8)
    {
        return Err(PipelineError::MissingShaderFeature {
            stage: naga_stage,
            name: name.to_owned(),
            what: "8-bit integers (the packed 4×8-bit builtins)".into(),
            feature: "shaderInt8",
        });
    }
    Ok(words)
}

/// Checks a stage against the layout (naga IR) and makes its module.
///
/// # Safety
/// The stage's module came from this device.
unsafe fn stage_module<'d>(
    shared: &'d DeviceShared,
    stage: &ProgrammableStage<super::Api>,
    naga_stage: naga::ShaderStage,
    layout: &PipelineLayout,
    point_list: bool,
) -> Result<Checked<'d>, PipelineError> {
    let entry_point = CString::new(stage.entry_point).map_err(|_| PipelineError::EntryPoint {
        stage: naga_stage,
        name: stage.entry_point.to_owned(),
    })?;
    let module = stage.module;
    let name = stage.entry_point;
    let (words, workgroup_size, mesh_topology) = match &module.input {
        ShaderInput::Naga(validated) => {
            let resolved = constants::resolve(validated, naga_stage, name, stage.constants)?;
            let interface = check_entry_point(shared, &resolved, name, naga_stage, layout)?;
            let words = translate(shared, &resolved, name, naga_stage, layout, point_list)?;
            (
                Cow::Owned(words),
                interface.workgroup_size,
                interface.mesh_topology,
            )
        }
        ShaderInput::SpirV {
            words,
            module: Some(validated),
        } => {
            constants::refuse_for_spirv(naga_stage, name, stage.constants)?;
            let interface = check_entry_point(shared, validated, name, naga_stage, layout)?;
            (
                Cow::Borrowed(&words[..]),
                interface.workgroup_size,
                interface.mesh_topology,
            )
        }
        ShaderInput::SpirV {
            words,
            module: None,
        } => {
            constants::refuse_for_spirv(naga_stage, name, stage.constants)?;
            if !spirv_has_entry_point(words, naga_stage, name) {
                return Err(PipelineError::EntryPoint {
                    stage: naga_stage,
                    name: stage.entry_point.to_owned(),
                });
            }
            (Cow::Borrowed(&words[..]), [0; 3], None)
        }
    };
    let info = vk::ShaderModuleCreateInfo::default().code(&words);
    // SAFETY: `words` is SPIR-V from naga's writer, SPIR-V that naga's
    // front end read and its validator accepted with this device's
    // capabilities, or SPIR-V the caller vouched for (`UncheckedSpirV`);
    // all passed the structural check, so the driver reads no further than
    // their end.
    let raw = unsafe { shared.raw.create_shader_module(&info, None) }.map_err(map_err)?;
    let stage = match naga_stage {
        naga::ShaderStage::Vertex => vk::ShaderStageFlags::VERTEX,
        naga::ShaderStage::Fragment => vk::ShaderStageFlags::FRAGMENT,
        naga::ShaderStage::Task => vk::ShaderStageFlags::TASK_EXT,
        naga::ShaderStage::Mesh => vk::ShaderStageFlags::MESH_EXT,
        _ => vk::ShaderStageFlags::COMPUTE,
    };
    Ok((
        StageModule {
            device: &shared.raw,
            raw,
            entry_point,
            stage,
        },
        workgroup_size,
        mesh_topology,
    ))
}

/// Takes the one pipeline out of a `vkCreate*Pipelines` answer for one
/// create info. On failure that pipeline was not made (the driver sets its
/// handle to null), so there is nothing to destroy; the handles returned
/// are not even read, as a failing layer or hook may leave them unwritten.
pub(super) fn single_pipeline(
    result: Result<Vec<vk::Pipeline>, (Vec<vk::Pipeline>, vk::Result)>,
) -> Result<vk::Pipeline, PipelineError> {
    match result {
        Ok(pipelines) => pipelines
            .first()
            .copied()
            .ok_or(PipelineError::Device(DeviceError::Unexpected)),
        Err((_, err)) => Err(PipelineError::Device(map_err(err))),
    }
}

/// Creates a render pipeline (dynamic rendering: formats from the targets).
///
/// # Safety
/// As `Device::create_render_pipeline`.
pub(super) unsafe fn create_render_pipeline(
    device: &super::Device,
    desc: &RenderPipelineDescriptor<super::Api>,
) -> Result<RenderPipeline, PipelineError> {
    let shared = &*device.shared;
    // Every check of the fixed-function state runs before any object exists.
    let fixed = FixedState::new(shared, desc.raster())?;
    let point_list = desc.primitive.topology == wgt::PrimitiveTopology::PointList;
    let mut modules = ArrayVec::<StageModule<'_>, 3>::new();
    // SAFETY: the modules came from this device (the caller's contract).
    let (vertex, _, _) = unsafe {
        stage_module(
            shared,
            &desc.vertex_stage,
            naga::ShaderStage::Vertex,
            desc.layout,
            point_list,
        )
    }?;
    modules.push(vertex);
    // SAFETY: as above. On failure `modules` drops the vertex module.
    unsafe { push_fragment(shared, &desc.fragment_stage, desc.layout, &mut modules) }?;
    let graphics = Graphics {
        fixed: &fixed,
        layout: desc.layout,
        cache: desc.cache,
        label: desc.label,
        geometry: Geometry::Vertex,
    };
    // SAFETY: the modules and layout came from this device.
    unsafe { graphics_pipeline(shared, graphics, modules) }
}

/// Creates a mesh pipeline: a render pipeline whose geometry comes from an
/// optional task stage and a mesh stage (no vertex input or assembly).
///
/// # Safety
/// As `Device::create_mesh_pipeline`.
pub(super) unsafe fn create_mesh_pipeline(
    device: &super::Device,
    desc: &MeshPipelineDescriptor<super::Api>,
) -> Result<RenderPipeline, PipelineError> {
    let shared = &*device.shared;
    crate::validate::pipeline::check_mesh_pipeline(shared.features, desc.multiview_mask)?;
    let fixed = FixedState::new(shared, desc.raster())?;
    let point_list = desc.primitive.topology == wgt::PrimitiveTopology::PointList;
    let mut modules = ArrayVec::<StageModule<'_>, 3>::new();
    let stages = [
        (desc.task_stage.as_ref(), naga::ShaderStage::Task),
        (Some(&desc.mesh_stage), naga::ShaderStage::Mesh),
    ];
    for (stage, naga_stage) in stages {
        let Some(stage) = stage else { continue };
        // SAFETY: the modules came from this device (the caller's
        // contract). On failure `modules` drops those made before.
        let (module, size, topology) =
            unsafe { stage_module(shared, stage, naga_stage, desc.layout, point_list) }?;
        modules.push(module);
        crate::validate::pipeline::check_mesh_workgroup_size(&shared.limits, naga_stage, size)?;
        crate::validate::pipeline::check_mesh_topology(topology, desc.primitive.topology)?;
    }
    // SAFETY: as above.
    unsafe { push_fragment(shared, &desc.fragment_stage, desc.layout, &mut modules) }?;
    let graphics = Graphics {
        fixed: &fixed,
        layout: desc.layout,
        cache: desc.cache,
        label: desc.label,
        geometry: if desc.task_stage.is_some() {
            Geometry::Task
        } else {
            Geometry::Mesh
        },
    };
    // SAFETY: the modules and layout came from this device.
    unsafe { graphics_pipeline(shared, graphics, modules) }
}

/// Makes the fragment stage's module, if there is one, into `modules`.
///
/// # Safety
/// The stage's module came from this device.
unsafe fn push_fragment<'d>(
    shared: &'d DeviceShared,
    fragment: &Option<ProgrammableStage<'_, super::Api>>,
    layout: &PipelineLayout,
    modules: &mut ArrayVec<StageModule<'d>, 3>,
) -> Result<(), PipelineError> {
    if let Some(fragment) = fragment {
        // SAFETY: forwarded contract.
        let (module, _, _) =
            unsafe { stage_module(shared, fragment, naga::ShaderStage::Fragment, layout, false) }?;
        modules.push(module);
    }
    Ok(())
}

/// What a render or mesh pipeline adds to its stages.
struct Graphics<'a> {
    fixed: &'a FixedState,
    layout: &'a PipelineLayout,
    cache: Option<&'a super::PipelineCache>,
    label: Option<&'a str>,
    /// Where the geometry comes from (task and mesh stages: no vertex
    /// input or input assembly state).
    geometry: Geometry,
}

/// Creates a graphics pipeline from checked stages and state; the stage
/// modules are destroyed whatever happens.
///
/// # Safety
/// The modules and the layout came from `shared`'s device.
unsafe fn graphics_pipeline(
    shared: &DeviceShared,
    g: Graphics<'_>,
    modules: ArrayVec<StageModule<'_>, 3>,
) -> Result<RenderPipeline, PipelineError> {
    let fixed = g.fixed;
    let stages: ArrayVec<_, 3> = modules.iter().map(StageModule::info).collect();
    let vertex_input = vk::PipelineVertexInputStateCreateInfo::default()
        .vertex_binding_descriptions(&fixed.vertex_bindings)
        .vertex_attribute_descriptions(&fixed.vertex_attributes);
    let viewport = vk::PipelineViewportStateCreateInfo::default()
        .viewport_count(1)
        .scissor_count(1);
    let multisample = vk::PipelineMultisampleStateCreateInfo::default()
        .rasterization_samples(fixed.samples)
        .sample_mask(fixed.sample_mask())
        .alpha_to_coverage_enable(fixed.alpha_to_coverage);
    let blend =
        vk::PipelineColorBlendStateCreateInfo::default().attachments(&fixed.blend_attachments);
    let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&DYNAMIC_STATES);
    let mut rendering = vk::PipelineRenderingCreateInfo::default()
        .color_attachment_formats(&fixed.color_formats)
        .depth_attachment_format(fixed.depth_format)
        .stencil_attachment_format(fixed.stencil_format)
        .view_mask(fixed.view_mask);
    let mut conservative = vk::PipelineRasterizationConservativeStateCreateInfoEXT::default()
        .conservative_rasterization_mode(vk::ConservativeRasterizationModeEXT::OVERESTIMATE);
    let mut rasterization = fixed.rasterization;
    if fixed.conservative {
        rasterization = rasterization.push_next(&mut conservative);
    }
    let mut info = vk::GraphicsPipelineCreateInfo::default()
        .push_next(&mut rendering)
        .stages(&stages)
        .viewport_state(&viewport)
        .rasterization_state(&rasterization)
        .multisample_state(&multisample)
        .depth_stencil_state(&fixed.depth_stencil)
        .color_blend_state(&blend)
        .dynamic_state(&dynamic)
        .layout(g.layout.raw);
    if g.geometry == Geometry::Vertex {
        info = info
            .vertex_input_state(&vertex_input)
            .input_assembly_state(&fixed.input_assembly);
    }
    // SAFETY: every state was checked against the device's features and
    // limits; the layout came from this device (the caller's contract);
    // every pointer in `info` outlives the call.
    let result = unsafe {
        shared
            .raw
            .create_graphics_pipelines(super::pipeline_cache::raw(g.cache), &[info], None)
    };
    drop(stages);
    drop(modules);
    let raw = single_pipeline(result)?;
    shared.counters.render_pipelines.add();
    if let Some(label) = g.label {
        // SAFETY: `raw` is live.
        unsafe { set_object_name(shared, raw, label) };
    }
    Ok(RenderPipeline {
        raw,
        view_mask: fixed.view_mask,
        geometry: g.geometry,
    })
}

/// Destroys a render pipeline.
///
/// # Safety
/// As `Device::destroy_render_pipeline`.
pub(super) unsafe fn destroy_render_pipeline(device: &super::Device, pipeline: RenderPipeline) {
    // SAFETY: the caller guarantees it is ours and idle.
    unsafe { device.shared.raw.destroy_pipeline(pipeline.raw, None) };
    device.shared.counters.render_pipelines.sub();
}

/// Creates a compute pipeline.
///
/// # Safety
/// As `Device::create_compute_pipeline`.
pub(super) unsafe fn create_compute_pipeline(
    device: &super::Device,
    desc: &ComputePipelineDescriptor<super::Api>,
) -> Result<ComputePipeline, PipelineError> {
    let shared = &*device.shared;
    // SAFETY: the module came from this device (the caller's contract).
    let (module, size, _) = unsafe {
        stage_module(
            shared,
            &desc.stage,
            naga::ShaderStage::Compute,
            desc.layout,
            false,
        )
    }?;
    // `module` is dropped (destroyed) on this early return too.
    check_workgroup_size(&shared.limits, size)?;
    let info = vk::ComputePipelineCreateInfo::default()
        .stage(module.info())
        .layout(desc.layout.raw);
    // SAFETY: the interface was checked against the layout (naga IR), the
    // layout came from this device; `info` outlives the call.
    let result = unsafe {
        shared
            .raw
            .create_compute_pipelines(super::pipeline_cache::raw(desc.cache), &[info], None)
    };
    drop(module);
    let raw = single_pipeline(result)?;
    shared.counters.compute_pipelines.add();
    if let Some(label) = desc.label {
        // SAFETY: `raw` is live.
        unsafe { set_object_name(shared, raw, label) };
    }
    Ok(ComputePipeline { raw })
}

/// Destroys a compute pipeline.
///
/// # Safety
/// As `Device::destroy_compute_pipeline`.
pub(super) unsafe fn destroy_compute_pipeline(device: &super::Device, pipeline: ComputePipeline) {
    // SAFETY: the caller guarantees it is ours and idle.
    unsafe { device.shared.raw.destroy_pipeline(pipeline.raw, None) };
    device.shared.counters.compute_pipelines.sub();
}

/// A workgroup size within the device's limits (zeros: not known, SPIR-V).
fn check_workgroup_size(limits: &wgt::Limits, size: [u32; 3]) -> Result<(), PipelineError> {
    let max = [
        limits.max_compute_workgroup_size_x,
        limits.max_compute_workgroup_size_y,
        limits.max_compute_workgroup_size_z,
    ];
    let invocations = size.iter().try_fold(1u32, |acc, &n| acc.checked_mul(n));
    let too_big = size.iter().zip(max).any(|(&n, m)| n > m)
        || invocations.is_none_or(|n| n > limits.max_compute_invocations_per_workgroup);
    if too_big {
        return Err(PipelineError::Unsupported(format!(
            "workgroup size {size:?} exceeds the limits {max:?} or {} invocations",
            limits.max_compute_invocations_per_workgroup
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workgroup_sizes_respect_each_limit() {
        let limits = wgt::Limits::default();
        assert!(check_workgroup_size(&limits, [64, 1, 1]).is_ok());
        assert!(check_workgroup_size(&limits, [0, 0, 0]).is_ok(), "unknown");
        assert!(check_workgroup_size(&limits, [257, 1, 1]).is_err());
        assert!(
            check_workgroup_size(&limits, [16, 16, 2]).is_err(),
            "512 invocations"
        );
        assert!(check_workgroup_size(&limits, [u32::MAX, u32::MAX, 2]).is_err());
    }
}
