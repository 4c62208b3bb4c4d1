//! Shader modules and pipelines on noop, through the backend-independent
//! shader front end (`crate::shader`): WGSL, naga modules and SPIR-V are
//! read and validated exactly as on Vulkan (unchecked SPIR-V gets the same
//! structural check), and a pipeline's entry points are found and checked
//! against its layout and the stage rules ([`stage_stores`]). The noop
//! backend runs no shaders, so nothing is translated.
//!
//! Pipelines need the device to have been opened with
//! `DeviceDescriptor::allow_no_shader_execution` (noop runs no shaders;
//! [`crate::PipelineError::NoShaderExecution`] otherwise). Pipeline checks,
//! besides the shader interface: compute workgroup sizes
//! against the compute limits; render pipelines' vertex buffers, attributes
//! and strides, colour target count and formats, depth/stencil format and
//! sample count (`PipelineError::Unsupported`).

use super::{ComputePipeline, DeviceShared, RenderPipeline, ShaderModule};
use crate::shader::interface::{
    check_layout, check_stage_stores, find_entry_point, EntryPointInterface,
};
use std::borrow::Cow;

use crate::pipeline::RasterState;
use crate::shader::{constants, spirv_has_entry_point, ShaderInput, StageStores};
use crate::validate::draw::Geometry;
use crate::{
    ComputePipelineDescriptor, MeshPipelineDescriptor, PipelineError, ProgrammableStage,
    RenderPipelineDescriptor, ShaderError, ShaderModuleDescriptor,
};

/// What shaders may use on a noop device: the rule every backend shares
/// ([`crate::shader::capabilities`]), with cube arrays and per-sample
/// shading always allowed.
pub(crate) fn naga_capabilities(shared: &DeviceShared) -> naga::valid::Capabilities {
    // Noop runs no shader, so neither costs it anything.
    let support = crate::shader::ShaderSupport {
        cube_arrays: true,
        sample_rate_shading: true,
    };
    crate::shader::capabilities(shared.features, shared.hal_features, support)
}

/// Which stages may write storage on a noop device: all of them. It runs
/// no shaders, so it has no such limit (Vulkan's comes from
/// `vertexPipelineStoresAndAtomics` / `fragmentStoresAndAtomics`); the
/// check itself is the shared one.
pub(crate) fn stage_stores(shared: &DeviceShared) -> StageStores {
    StageStores {
        vertex: shared
            .features
            .contains(wgt::Features::VERTEX_WRITABLE_STORAGE),
        fragment: true,
    }
}

/// Runs the front end on the module's source and keeps the result.
pub(crate) fn create_shader_module(
    shared: &DeviceShared,
    desc: &ShaderModuleDescriptor,
) -> Result<ShaderModule, ShaderError> {
    let input = ShaderInput::for_device(
        desc.source.clone(),
        naga_capabilities(shared),
        shared.features,
        // Noop offers no cooperative matrices (nor their capability).
        &[],
    )?
    .into_static()?;
    Ok(ShaderModule { input })
}

/// Finds a stage's entry point and checks it against the layout and the
/// stage rules; `None` for unchecked SPIR-V, whose interface the hal does
/// not know (its entry point is still looked up, as on Vulkan).
fn check_stage(
    shared: &DeviceShared,
    stage: &ProgrammableStage<'_, super::Api>,
    naga_stage: naga::ShaderStage,
    layout: &super::PipelineLayout,
) -> Result<Option<EntryPointInterface>, PipelineError> {
    let module = match &stage.module.input {
        ShaderInput::SpirV {
            words,
            module: None,
        } => {
            constants::refuse_for_spirv(naga_stage, stage.entry_point, stage.constants)?;
            if !spirv_has_entry_point(words, naga_stage, stage.entry_point) {
                return Err(PipelineError::EntryPoint {
                    stage: naga_stage,
                    name: stage.entry_point.to_owned(),
                });
            }
            return Ok(None);
        }
        ShaderInput::SpirV {
            module: Some(module),
            ..
        } => {
            constants::refuse_for_spirv(naga_stage, stage.entry_point, stage.constants)?;
            Cow::Borrowed(&**module)
        }
        ShaderInput::Naga(module) => {
            constants::resolve(module, naga_stage, stage.entry_point, stage.constants)?
        }
    };
    let interface = find_entry_point(&module, stage.entry_point, naga_stage)?;
    check_layout(&interface, layout)?;
    check_stage_stores(&interface, stage_stores(shared))?;
    Ok(Some(interface))
}

/// Checks a compute pipeline's stage and workgroup size.
pub(crate) fn create_compute_pipeline(
    shared: &DeviceShared,
    desc: &ComputePipelineDescriptor<super::Api>,
) -> Result<ComputePipeline, PipelineError> {
    crate::adapter::check_shader_execution(shared.hal_features, shared.allow_no_shader_execution)?;
    if let Some(interface) =
        check_stage(shared, &desc.stage, naga::ShaderStage::Compute, desc.layout)?
    {
        let l = &shared.limits;
        let [x, y, z] = interface.workgroup_size;
        let invocations = u64::from(x) * u64::from(y) * u64::from(z);
        if x > l.max_compute_workgroup_size_x
            || y > l.max_compute_workgroup_size_y
            || z > l.max_compute_workgroup_size_z
            || invocations > u64::from(l.max_compute_invocations_per_workgroup)
        {
            return Err(PipelineError::Unsupported(format!(
                "workgroup size {x}x{y}x{z} exceeds the device's compute limits"
            )));
        }
    }
    Ok(ComputePipeline { _private: () })
}

/// Checks a render pipeline's stages and fixed-function state.
pub(crate) fn create_render_pipeline(
    shared: &DeviceShared,
    desc: &RenderPipelineDescriptor<super::Api>,
) -> Result<RenderPipeline, PipelineError> {
    crate::adapter::check_shader_execution(shared.hal_features, shared.allow_no_shader_execution)?;
    check_stage(
        shared,
        &desc.vertex_stage,
        naga::ShaderStage::Vertex,
        desc.layout,
    )?;
    if let Some(fragment) = &desc.fragment_stage {
        check_stage(shared, fragment, naga::ShaderStage::Fragment, desc.layout)?;
    }
    check_raster(shared, desc.raster())?;
    Ok(RenderPipeline {
        geometry: Geometry::Vertex,
    })
}

/// Checks a mesh pipeline: the mesh-shader features, its task, mesh and
/// fragment stages, their workgroup sizes and its fixed-function state.
pub(crate) fn create_mesh_pipeline(
    shared: &DeviceShared,
    desc: &MeshPipelineDescriptor<super::Api>,
) -> Result<RenderPipeline, PipelineError> {
    crate::adapter::check_shader_execution(shared.hal_features, shared.allow_no_shader_execution)?;
    crate::validate::pipeline::check_mesh_pipeline(shared.features, desc.multiview_mask)?;
    let stages = [
        (desc.task_stage.as_ref(), naga::ShaderStage::Task),
        (Some(&desc.mesh_stage), naga::ShaderStage::Mesh),
    ];
    for (stage, naga_stage) in stages {
        let Some(stage) = stage else { continue };
        if let Some(interface) = check_stage(shared, stage, naga_stage, desc.layout)? {
            crate::validate::pipeline::check_mesh_workgroup_size(
                &shared.limits,
                naga_stage,
                interface.workgroup_size,
            )?;
            crate::validate::pipeline::check_mesh_topology(
                interface.mesh_topology,
                desc.primitive.topology,
            )?;
        }
    }
    if let Some(fragment) = &desc.fragment_stage {
        check_stage(shared, fragment, naga::ShaderStage::Fragment, desc.layout)?;
    }
    check_raster(shared, desc.raster())?;
    Ok(RenderPipeline {
        geometry: if desc.task_stage.is_some() {
            Geometry::Task
        } else {
            Geometry::Mesh
        },
    })
}

/// The fixed-function checks render and mesh pipelines share.
fn check_raster(shared: &DeviceShared, raster: RasterState<'_>) -> Result<(), PipelineError> {
    crate::validate::pipeline::check_primitive(shared.features, raster.primitive)?;
    crate::validate::pipeline::check_blend(shared.features, raster.color_targets)?;
    crate::validate::multiview::check_view_mask(
        raster.multiview_mask,
        shared.features,
        shared.limits.max_multiview_view_count,
    )?;
    check_fixed_function(shared, &raster).map_err(|what| PipelineError::Unsupported(what.into()))
}

fn check_fixed_function(shared: &DeviceShared, desc: &RasterState<'_>) -> Result<(), &'static str> {
    let l = &shared.limits;
    if desc.vertex_buffers.len() > l.max_vertex_buffers as usize {
        return Err("more vertex buffers than max_vertex_buffers");
    }
    let mut attributes = 0usize;
    for buffer in desc.vertex_buffers {
        if buffer.array_stride > u64::from(l.max_vertex_buffer_array_stride) {
            return Err("a vertex buffer stride exceeds max_vertex_buffer_array_stride");
        }
        for a in buffer.attributes {
            if a.shader_location >= l.max_vertex_attributes {
                return Err("a vertex attribute location is at or above max_vertex_attributes");
            }
            if buffer.array_stride != 0 && a.offset + a.format.size() > buffer.array_stride {
                return Err("a vertex attribute runs past its buffer's stride");
            }
        }
        attributes += buffer.attributes.len();
    }
    if attributes > l.max_vertex_attributes as usize {
        return Err("more vertex attributes than max_vertex_attributes");
    }
    if desc.color_targets.len() > l.max_color_attachments as usize {
        return Err("more colour targets than max_color_attachments");
    }
    let caps = |format| super::instance::format_features(format, shared.features);
    for target in desc.color_targets.iter().flatten() {
        let features = caps(target.format);
        if target.format.is_depth_stencil_format()
            || !features
                .allowed_usages
                .contains(wgt::TextureUsages::RENDER_ATTACHMENT)
        {
            return Err("a colour target format cannot be rendered to");
        }
        if target.blend.is_some()
            && !features
                .flags
                .contains(wgt::TextureFormatFeatureFlags::BLENDABLE)
        {
            return Err("a colour target format with blending is not blendable");
        }
    }
    if let Some(ds) = desc.depth_stencil {
        if !ds.format.is_depth_stencil_format() {
            return Err("the depth/stencil format is not a depth or stencil format");
        }
    }
    let samples = desc.multisample.count;
    if !matches!(samples, 1 | 2 | 4 | 8 | 16) {
        return Err("the sample count is not 1, 2, 4, 8 or 16");
    }
    let formats = desc
        .color_targets
        .iter()
        .flatten()
        .map(|t| t.format)
        .chain(desc.depth_stencil.map(|ds| ds.format));
    for format in formats {
        if samples > 1 && !caps(format).flags.sample_count_supported(samples) {
            return Err("an attachment format does not support the sample count");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{Device, Instance};
    use crate::{
        Adapter as _, ComputePipelineDescriptor, Device as _, DeviceDescriptor, Instance as _,
        PipelineError, PipelineLayoutDescriptor, ProgrammableStage, ShaderModuleDescriptor,
    };

    fn open(allow_no_shader_execution: bool) -> Device {
        // SAFETY: the noop backend loads nothing.
        unsafe {
            let instance = Instance::init(&Default::default()).expect("test setup");
            let adapter = instance.enumerate_adapters().remove(0).adapter;
            let desc = DeviceDescriptor {
                allow_no_shader_execution,
                ..Default::default()
            };
            adapter.open(&desc).expect("test setup").device
        }
    }

    /// A compute pipeline on `device`, destroyed again; the creation's result.
    fn compute_pipeline(device: &Device) -> Result<(), PipelineError> {
        // SAFETY: everything is made and destroyed here.
        unsafe {
            let layout = device
                .create_pipeline_layout(&PipelineLayoutDescriptor {
                    label: None,
                    bind_group_layouts: &[],
                    push_constant_ranges: &[],
                })
                .expect("test setup");
            let module = device
                .create_shader_module(&ShaderModuleDescriptor::wgsl(
                    "@compute @workgroup_size(1) fn main() {}",
                ))
                .expect("test setup");
            let made = device.create_compute_pipeline(&ComputePipelineDescriptor {
                label: None,
                layout: &layout,
                stage: ProgrammableStage {
                    module: &module,
                    entry_point: "main",
                    constants: &[],
                },
                cache: None,
            });
            let result = made.map(|p| device.destroy_compute_pipeline(p));
            device.destroy_shader_module(module);
            device.destroy_pipeline_layout(layout);
            result
        }
    }

    /// Noop runs no shaders: a pipeline is a typed error unless the device
    /// was opened knowing it.
    #[test]
    fn pipelines_need_the_no_shader_execution_opt_in() {
        let device = open(false);
        assert_eq!(
            compute_pipeline(&device),
            Err(PipelineError::NoShaderExecution)
        );
        assert_eq!(device.live_counts(), Default::default());
        let device = open(true);
        assert_eq!(compute_pipeline(&device), Ok(()));
        assert_eq!(device.live_counts(), Default::default());
    }
}
