//! Pipeline caches on Vulkan: a `VkPipelineCache`, filled from data only
//! after keel-hal's shared check (`validate/pipeline_cache.rs`: header,
//! this adapter's `pipelineCacheUUID`, length, checksum), and handed out
//! as that header plus `vkGetPipelineCacheData`'s bytes. Every pipeline
//! kind passes its descriptor's cache to the driver.

use ash::vk;

use super::conv::map_err;
use super::object_name::set_object_name;
use crate::validate::pipeline_cache as format;
use crate::{DeviceError, PipelineCacheDescriptor, PipelineCacheError};

/// A Vulkan pipeline cache.
#[derive(Debug)]
pub struct PipelineCache {
    pub(crate) raw: vk::PipelineCache,
}

/// The driver handle of a pipeline's optional cache (null: none).
pub(super) fn raw(cache: Option<&PipelineCache>) -> vk::PipelineCache {
    cache.map_or(vk::PipelineCache::null(), |c| c.raw)
}

/// Creates a pipeline cache (see the module docs).
///
/// # Safety
/// As `Device::create_pipeline_cache`.
pub(super) unsafe fn create(
    device: &super::Device,
    desc: &PipelineCacheDescriptor,
) -> Result<PipelineCache, PipelineCacheError> {
    let shared = &*device.shared;
    format::check_feature(shared.features)?;
    let key = shared.physical.properties.pipeline_cache_uuid;
    let initial = format::initial_data(key, desc.data, desc.fallback)?;
    let info = vk::PipelineCacheCreateInfo::default().initial_data(initial.unwrap_or_default());
    // SAFETY: live device; the initial data passed keel-hal's checks: it is
    // what this adapter and driver's vkGetPipelineCacheData wrote.
    let raw = unsafe { shared.raw.create_pipeline_cache(&info, None) }
        .map_err(|e| PipelineCacheError::Device(map_err(e)))?;
    shared.counters.pipeline_caches.add();
    if let Some(label) = desc.label {
        // SAFETY: `raw` is live.
        unsafe { set_object_name(shared, raw, label) };
    }
    Ok(PipelineCache { raw })
}

/// The cache's data: keel-hal's header and the driver's bytes.
///
/// # Safety
/// As `Device::pipeline_cache_get_data`.
pub(super) unsafe fn data(
    device: &super::Device,
    cache: &PipelineCache,
) -> Result<Vec<u8>, DeviceError> {
    let shared = &*device.shared;
    // SAFETY: the cache is this device's and not in use (the caller's
    // contract); ash sizes the buffer with a first call.
    let bytes = unsafe { shared.raw.get_pipeline_cache_data(cache.raw) }.map_err(map_err)?;
    Ok(format::wrap(
        shared.physical.properties.pipeline_cache_uuid,
        &bytes,
    ))
}

/// Destroys a pipeline cache.
///
/// # Safety
/// As `Device::destroy_pipeline_cache`.
pub(super) unsafe fn destroy(device: &super::Device, cache: PipelineCache) {
    // SAFETY: the cache is this device's and unused (the caller's contract).
    unsafe { device.shared.raw.destroy_pipeline_cache(cache.raw, None) };
    device.shared.counters.pipeline_caches.sub();
}
