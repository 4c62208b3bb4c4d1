//! Shader modules (WGSL parsed once by naga, kept for layout derivation)
//! and compute and render pipelines.

use std::sync::Arc;

use keel_hal::dynamic::{DynComputePipeline, DynPipelineCache, DynRenderPipeline, DynShaderModule};

use crate::binding::PipelineLayout;
use crate::resource::LastUse;
use crate::shared::{Dead, DeviceShared};

/// A shader module: the keel-hal module and the naga module it came from.
#[derive(Debug)]
pub(crate) struct ShaderModule {
    pub shared: Arc<DeviceShared>,
    pub raw: Option<Box<dyn DynShaderModule>>,
    pub naga: Option<(naga::Module, naga::valid::ModuleInfo)>,
    /// Compilation messages (one error when the module is invalid).
    pub messages: Vec<String>,
}

impl ShaderModule {
    /// The entry point of `stage` named `name`, or the only one of `stage`.
    pub(crate) fn entry_point(
        &self,
        name: Option<&str>,
        stage: naga::ShaderStage,
    ) -> Result<(usize, String), String> {
        let Some((module, _)) = &self.naga else {
            return Err("the shader module is invalid".into());
        };
        let mut found = module
            .entry_points
            .iter()
            .enumerate()
            .filter(|(_, ep)| ep.stage == stage && name.is_none_or(|n| ep.name == n));
        match (found.next(), found.next(), name) {
            (Some((i, ep)), None, _) | (Some((i, ep)), Some(_), Some(_)) => {
                Ok((i, ep.name.clone()))
            }
            (Some(_), Some(_), None) => Err(format!(
                "the module has several {stage:?} entry points: name one"
            )),
            (None, _, Some(n)) => Err(format!("the module has no {stage:?} entry point {n:?}")),
            (None, _, None) => Err(format!("the module has no {stage:?} entry point")),
        }
    }
}

impl Drop for ShaderModule {
    fn drop(&mut self) {
        if let Some(raw) = self.raw.take() {
            // Pipelines keep no reference to their modules.
            self.shared.bury(0, Dead::ShaderModule(raw));
        }
    }
}

/// A compute pipeline.
#[derive(Debug)]
pub(crate) struct ComputePipeline {
    pub shared: Arc<DeviceShared>,
    pub raw: Option<Box<dyn DynComputePipeline>>,
    pub layout: Option<Arc<PipelineLayout>>,
    pub last_use: LastUse,
}

impl Drop for ComputePipeline {
    fn drop(&mut self) {
        let last = self.last_use.get();
        if let Some(layout) = &self.layout {
            layout.last_use.bump(last);
        }
        if let Some(raw) = self.raw.take() {
            self.shared.bury(last, Dead::ComputePipeline(raw));
        }
    }
}

/// A render pipeline.
#[derive(Debug)]
pub(crate) struct RenderPipeline {
    pub shared: Arc<DeviceShared>,
    pub raw: Option<Box<dyn DynRenderPipeline>>,
    pub layout: Option<Arc<PipelineLayout>>,
    /// The vertex buffer slots the pipeline reads (bit per slot): each
    /// must have a buffer set before a draw.
    pub vertex_slots: u64,
    pub last_use: LastUse,
}

impl Drop for RenderPipeline {
    fn drop(&mut self) {
        let last = self.last_use.get();
        if let Some(layout) = &self.layout {
            layout.last_use.bump(last);
        }
        if let Some(raw) = self.raw.take() {
            self.shared.bury(last, Dead::RenderPipeline(raw));
        }
    }
}

/// A pipeline cache (keel-hal's, with its checked header).
#[derive(Debug)]
pub(crate) struct PipelineCache {
    pub shared: Arc<DeviceShared>,
    pub raw: Option<Box<dyn DynPipelineCache>>,
}

impl Drop for PipelineCache {
    fn drop(&mut self) {
        if let Some(raw) = self.raw.take() {
            // SAFETY: a pipeline cache is used only while pipelines are
            // created, never by submitted work; it came from this device.
            unsafe { self.shared.hal().destroy_pipeline_cache(raw) };
        }
    }
}
