//! Helpers for the binding, shader, compute and render tests: layout
//! entries, shader modules, and the skip for adapters that run no shaders.

use keel_hal::wgt;
use keel_hal::{
    Api, BindGroupLayoutDescriptor, Device, HalFeatures, PipelineLayoutDescriptor,
    PushConstantRange, ShaderModuleDescriptor,
};

use crate::harness::{skip, Ctx, Failure, TestResult};

/// `Some(skip)` where the adapter executes no shaders (noop).
pub fn needs_shaders<A: Api>(ctx: &Ctx<A>) -> Option<TestResult> {
    (!ctx
        .caps
        .hal_features
        .contains(HalFeatures::SHADER_EXECUTION))
    .then(|| skip("no SHADER_EXECUTION"))
}

/// A layout entry for one binding.
pub fn entry(
    binding: u32,
    visibility: wgt::ShaderStages,
    ty: wgt::BindingType,
) -> wgt::BindGroupLayoutEntry {
    wgt::BindGroupLayoutEntry {
        binding,
        visibility,
        ty,
        count: None,
    }
}

/// A storage buffer binding type.
pub fn storage(read_only: bool, dynamic: bool) -> wgt::BindingType {
    wgt::BindingType::Buffer {
        ty: wgt::BufferBindingType::Storage { read_only },
        has_dynamic_offset: dynamic,
        min_binding_size: None,
    }
}

/// A uniform buffer binding type.
pub fn uniform() -> wgt::BindingType {
    wgt::BindingType::Buffer {
        ty: wgt::BufferBindingType::Uniform,
        has_dynamic_offset: false,
        min_binding_size: None,
    }
}

/// Creates a shader module from WGSL.
///
/// # Safety
/// `ctx.device` is live; the caller destroys the module.
pub unsafe fn wgsl<A: Api>(ctx: &Ctx<A>, source: &str) -> Result<A::ShaderModule, Failure> {
    // SAFETY: live device.
    Ok(unsafe {
        ctx.device
            .create_shader_module(&ShaderModuleDescriptor::wgsl(source))
    }?)
}

/// A bind group layout and a pipeline layout of it alone (plus push constants).
pub struct Layouts<A: Api> {
    /// The one bind group layout (`None`: the pipeline layout has no group).
    pub group: Option<A::BindGroupLayout>,
    /// The pipeline layout.
    pub pipeline: A::PipelineLayout,
}

impl<A: Api> Layouts<A> {
    /// Makes the layouts.
    ///
    /// # Safety
    /// `ctx.device` is live; the caller calls [`Self::destroy`].
    pub unsafe fn new(
        ctx: &Ctx<A>,
        entries: Option<&[wgt::BindGroupLayoutEntry]>,
        push_constant_ranges: &[PushConstantRange],
    ) -> Result<Self, Failure> {
        let group = match entries {
            Some(entries) => {
                let desc = BindGroupLayoutDescriptor {
                    label: Some("conformance"),
                    entries,
                    ..Default::default()
                };
                // SAFETY: live device.
                Some(unsafe { ctx.device.create_bind_group_layout(&desc) }?)
            }
            None => None,
        };
        let groups: Vec<&A::BindGroupLayout> = group.iter().collect();
        let desc = PipelineLayoutDescriptor {
            label: Some("conformance"),
            bind_group_layouts: &groups,
            push_constant_ranges,
        };
        // SAFETY: the group layout came from this device.
        match unsafe { ctx.device.create_pipeline_layout(&desc) } {
            Ok(pipeline) => Ok(Self { group, pipeline }),
            Err(e) => {
                if let Some(group) = group {
                    // SAFETY: nothing uses it.
                    unsafe { ctx.device.destroy_bind_group_layout(group) };
                }
                Err(e.into())
            }
        }
    }

    /// Destroys both layouts.
    ///
    /// # Safety
    /// Pipelines and bind groups using them are destroyed.
    pub unsafe fn destroy(self, ctx: &Ctx<A>) {
        // SAFETY: forwarded contract.
        unsafe {
            ctx.device.destroy_pipeline_layout(self.pipeline);
            if let Some(group) = self.group {
                ctx.device.destroy_bind_group_layout(group);
            }
        }
    }
}

/// Little-endian bytes of `u32`s.
pub fn words_to_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// `u32`s from little-endian bytes.
pub fn bytes_to_words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Little-endian bytes of `f32`s.
pub fn floats_to_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}
