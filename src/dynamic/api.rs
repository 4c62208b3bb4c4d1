//! [`DynApi`]: the dyn mirror seen as one more backend.
//!
//! Implementing [`crate::Api`] for boxed dyn objects means code written once,
//! generic over `A: Api`, runs on a statically chosen backend *and* on a
//! backend chosen at run time. The conformance suite uses this to run every
//! test through both paths.

use std::ops::Range;
use std::time::Duration;

use super::{
    DynAdapter, DynBuffer, DynCommandBuffer, DynCommandEncoder, DynDevice, DynFence, DynInstance,
    DynQuerySet, DynQueue, DynSampler, DynTexture, DynTextureView,
};
use super::{DynExternalSemaphore, DynExternalSubmission};
use crate::*;

/// The backend chosen at run time. `Instance::init` picks with
/// [`BackendChoice::Auto`]; wrap an instance from [`crate::instance`] to choose.
#[derive(Clone, Debug)]
pub struct DynApi;

impl Api for DynApi {
    type Instance = Box<dyn DynInstance>;
    type Adapter = Box<dyn DynAdapter>;
    type Device = Box<dyn DynDevice>;
    type Queue = Box<dyn DynQueue>;
    type CommandEncoder = Box<dyn DynCommandEncoder>;
    type CommandBuffer = Box<dyn DynCommandBuffer>;
    type Buffer = Box<dyn DynBuffer>;
    type Texture = Box<dyn DynTexture>;
    type TextureView = Box<dyn DynTextureView>;
    type Sampler = Box<dyn DynSampler>;
    type QuerySet = Box<dyn DynQuerySet>;
    type Fence = Box<dyn DynFence>;
    type ExternalSemaphore = Box<dyn DynExternalSemaphore>;
}

impl DynBuffer for Box<dyn DynBuffer> {}
impl DynTexture for Box<dyn DynTexture> {}
impl DynTextureView for Box<dyn DynTextureView> {}
impl DynSampler for Box<dyn DynSampler> {}
impl DynQuerySet for Box<dyn DynQuerySet> {}
impl DynFence for Box<dyn DynFence> {}
impl DynCommandBuffer for Box<dyn DynCommandBuffer> {}
impl DynExternalSemaphore for Box<dyn DynExternalSemaphore> {}

impl Instance for Box<dyn DynInstance> {
    type A = DynApi;
    unsafe fn init(desc: &InstanceDescriptor) -> Result<Self, InstanceError> {
        Ok(crate::instance(BackendChoice::Auto, desc)?.instance)
    }
    fn backend(&self) -> Backend {
        DynInstance::backend(&**self)
    }
    unsafe fn enumerate_adapters(&self) -> Vec<ExposedAdapter<DynApi>> {
        // SAFETY: forwarded contract.
        unsafe { DynInstance::enumerate_adapters(&**self) }
            .into_iter()
            .map(|e| ExposedAdapter {
                adapter: e.adapter,
                info: e.info,
                capabilities: e.capabilities,
            })
            .collect()
    }
    fn validation_error_count(&self) -> u64 {
        DynInstance::validation_error_count(&**self)
    }
}

impl Adapter for Box<dyn DynAdapter> {
    type A = DynApi;
    unsafe fn open(&self, desc: &DeviceDescriptor) -> Result<OpenDevice<DynApi>, OpenError> {
        // SAFETY: forwarded contract.
        let open = unsafe { DynAdapter::open(&**self, desc) }?;
        Ok(OpenDevice {
            device: open.device,
            queue: open.queue,
        })
    }
    fn texture_format_capabilities(
        &self,
        format: wgt::TextureFormat,
    ) -> wgt::TextureFormatFeatures {
        DynAdapter::texture_format_capabilities(&**self, format)
    }
    fn external_buffer_capabilities(
        &self,
        desc: &BufferDescriptor,
        handle_type: ExternalHandleType,
    ) -> ExternalCapabilities {
        DynAdapter::external_buffer_capabilities(&**self, desc, handle_type)
    }
    fn external_texture_capabilities(
        &self,
        desc: &TextureDescriptor,
        handle_type: ExternalHandleType,
    ) -> Result<ExternalCapabilities, DeviceError> {
        DynAdapter::external_texture_capabilities(&**self, desc, handle_type)
    }
    fn external_semaphore_capabilities(
        &self,
        desc: &ExternalSemaphoreDescriptor,
    ) -> ExternalCapabilities {
        DynAdapter::external_semaphore_capabilities(&**self, desc)
    }
    fn drm_format_modifiers(&self, format: wgt::TextureFormat) -> Vec<DrmModifierInfo> {
        DynAdapter::drm_format_modifiers(&**self, format)
    }
}

// SAFETY (all methods below): each forwards to the boxed object's method,
// whose contract is the same as the one the caller promised here.
impl Device for Box<dyn DynDevice> {
    type A = DynApi;
    unsafe fn create_buffer(
        &self,
        desc: &BufferDescriptor,
    ) -> Result<Box<dyn DynBuffer>, BufferError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::create_buffer(&**self, desc) }
    }
    unsafe fn destroy_buffer(&self, buffer: Box<dyn DynBuffer>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_buffer(&**self, buffer) }
    }
    unsafe fn map_buffer(&self, buffer: &Box<dyn DynBuffer>) -> Result<BufferMapping, MapError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::map_buffer(&**self, &**buffer) }
    }
    unsafe fn unmap_buffer(&self, buffer: &Box<dyn DynBuffer>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::unmap_buffer(&**self, &**buffer) }
    }
    unsafe fn create_texture(
        &self,
        desc: &TextureDescriptor,
    ) -> Result<Box<dyn DynTexture>, TextureError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::create_texture(&**self, desc) }
    }
    unsafe fn destroy_texture(&self, texture: Box<dyn DynTexture>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_texture(&**self, texture) }
    }
    unsafe fn create_texture_view(
        &self,
        texture: &Box<dyn DynTexture>,
        desc: &TextureViewDescriptor,
    ) -> Result<Box<dyn DynTextureView>, TextureError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::create_texture_view(&**self, &**texture, desc) }
    }
    unsafe fn destroy_texture_view(&self, view: Box<dyn DynTextureView>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_texture_view(&**self, view) }
    }
    unsafe fn create_sampler(
        &self,
        desc: &SamplerDescriptor,
    ) -> Result<Box<dyn DynSampler>, SamplerError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::create_sampler(&**self, desc) }
    }
    unsafe fn destroy_sampler(&self, sampler: Box<dyn DynSampler>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_sampler(&**self, sampler) }
    }
    unsafe fn create_command_encoder(
        &self,
        desc: &CommandEncoderDescriptor,
    ) -> Result<Box<dyn DynCommandEncoder>, DeviceError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::create_command_encoder(&**self, desc) }
    }
    unsafe fn destroy_command_encoder(&self, encoder: Box<dyn DynCommandEncoder>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_command_encoder(&**self, encoder) }
    }
    unsafe fn create_query_set(
        &self,
        desc: &QuerySetDescriptor,
    ) -> Result<Box<dyn DynQuerySet>, QuerySetError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::create_query_set(&**self, desc) }
    }
    unsafe fn destroy_query_set(&self, set: Box<dyn DynQuerySet>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_query_set(&**self, set) }
    }
    unsafe fn create_fence(&self) -> Result<Box<dyn DynFence>, DeviceError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::create_fence(&**self) }
    }
    unsafe fn destroy_fence(&self, fence: Box<dyn DynFence>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_fence(&**self, fence) }
    }
    unsafe fn get_fence_value(&self, fence: &Box<dyn DynFence>) -> Result<FenceValue, DeviceError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::get_fence_value(&**self, &**fence) }
    }
    unsafe fn wait(
        &self,
        fence: &Box<dyn DynFence>,
        value: FenceValue,
        timeout: Option<Duration>,
    ) -> Result<bool, DeviceError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::wait(&**self, &**fence, value, timeout) }
    }
    unsafe fn wait_idle(&self) -> Result<(), DeviceError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::wait_idle(&**self) }
    }
    fn live_counts(&self) -> LiveCounts {
        DynDevice::live_counts(&**self)
    }
    unsafe fn import_buffer(
        &self,
        desc: &BufferDescriptor,
        handle: ExternalHandle,
    ) -> Result<Box<dyn DynBuffer>, BufferError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::import_buffer(&**self, desc, handle) }
    }
    unsafe fn import_texture(
        &self,
        desc: &TextureDescriptor,
        handle: ExternalHandle,
    ) -> Result<Box<dyn DynTexture>, TextureError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::import_texture(&**self, desc, handle) }
    }
    unsafe fn export_buffer_memory(
        &self,
        buffer: &Box<dyn DynBuffer>,
        handle_type: ExternalHandleType,
    ) -> Result<ExportedMemory, ExternalError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::export_buffer_memory(&**self, &**buffer, handle_type) }
    }
    unsafe fn export_texture_memory(
        &self,
        texture: &Box<dyn DynTexture>,
        handle_type: ExternalHandleType,
    ) -> Result<ExportedMemory, ExternalError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::export_texture_memory(&**self, &**texture, handle_type) }
    }
    unsafe fn create_external_semaphore(
        &self,
        desc: &ExternalSemaphoreDescriptor,
    ) -> Result<Box<dyn DynExternalSemaphore>, ExternalError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::create_external_semaphore(&**self, desc) }
    }
    unsafe fn import_semaphore(
        &self,
        desc: &ExternalSemaphoreDescriptor,
        fd: std::os::fd::OwnedFd,
    ) -> Result<Box<dyn DynExternalSemaphore>, ExternalError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::import_semaphore(&**self, desc, fd) }
    }
    unsafe fn export_semaphore(
        &self,
        semaphore: &Box<dyn DynExternalSemaphore>,
    ) -> Result<std::os::fd::OwnedFd, ExternalError> {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::export_semaphore(&**self, &**semaphore) }
    }
    unsafe fn destroy_external_semaphore(&self, semaphore: Box<dyn DynExternalSemaphore>) {
        // SAFETY: forwarded contract.
        unsafe { DynDevice::destroy_external_semaphore(&**self, semaphore) }
    }
}

impl Queue for Box<dyn DynQueue> {
    type A = DynApi;
    unsafe fn submit(
        &self,
        command_buffers: &[&Box<dyn DynCommandBuffer>],
        fence: &Box<dyn DynFence>,
        value: FenceValue,
    ) -> Result<(), DeviceError> {
        let queue = &**self;
        super::map_inline(
            command_buffers,
            |cb| Some::<&dyn DynCommandBuffer>(&***cb),
            // SAFETY: forwarded contract.
            |buffers| unsafe { DynQueue::submit(queue, buffers, &**fence, value) },
        )
        // The mapping above never fails, so this fallback is never taken.
        .unwrap_or(Err(DeviceError::ForeignResource))
    }
    fn timestamp_period(&self) -> f32 {
        DynQueue::timestamp_period(&**self)
    }
    unsafe fn submit_external(
        &self,
        submission: &ExternalSubmissionOf<'_, DynApi>,
    ) -> Result<(), DeviceError> {
        let queue = &**self;
        let fence = submission.fence.map(|(f, v)| (&**f as &dyn DynFence, v));
        super::map_inline(
            submission.command_buffers,
            |cb| Some::<&dyn DynCommandBuffer>(&***cb),
            |command_buffers| {
                super::map_inline(
                    submission.waits,
                    |w| {
                        Some(SemaphoreWait::<'_, dyn DynExternalSemaphore> {
                            semaphore: &**w.semaphore,
                            value: w.value,
                            stages: w.stages,
                        })
                    },
                    |waits| {
                        super::map_inline(
                            submission.signals,
                            |s| {
                                Some(SemaphoreSignal::<'_, dyn DynExternalSemaphore> {
                                    semaphore: &**s.semaphore,
                                    value: s.value,
                                    stages: s.stages,
                                })
                            },
                            |signals| {
                                let own: DynExternalSubmission<'_> = ExternalSubmission {
                                    command_buffers,
                                    waits,
                                    signals,
                                    fence,
                                };
                                // SAFETY: forwarded contract.
                                unsafe { DynQueue::submit_external(queue, &own) }
                            },
                        )
                    },
                )
            },
        )
        .flatten()
        .flatten()
        // The mappings above never fail, so this fallback is never taken.
        .unwrap_or(Err(DeviceError::ForeignResource))
    }
}

impl CommandEncoder for Box<dyn DynCommandEncoder> {
    type A = DynApi;
    unsafe fn begin_encoding(&mut self, label: Option<&str>) -> Result<(), DeviceError> {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::begin_encoding(&mut **self, label) }
    }
    unsafe fn discard_encoding(&mut self) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::discard_encoding(&mut **self) }
    }
    unsafe fn end_encoding(&mut self) -> Result<Box<dyn DynCommandBuffer>, DeviceError> {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::end_encoding(&mut **self) }
    }
    unsafe fn reset_all<I>(&mut self, command_buffers: I)
    where
        I: IntoIterator<Item = Box<dyn DynCommandBuffer>>,
    {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::reset_all(&mut **self, &mut command_buffers.into_iter()) }
    }
    unsafe fn transition_buffers(&mut self, barriers: &[BufferBarrier<'_, Box<dyn DynBuffer>>]) {
        let encoder = &mut **self;
        super::map_inline(
            barriers,
            |b| {
                Some(BufferBarrier::<'_, dyn DynBuffer> {
                    buffer: &**b.buffer,
                    usage: b.usage,
                })
            },
            // SAFETY: forwarded contract.
            |own| unsafe { DynCommandEncoder::transition_buffers(encoder, own) },
        );
    }
    unsafe fn transition_textures(&mut self, barriers: &[TextureBarrier<'_, Box<dyn DynTexture>>]) {
        let encoder = &mut **self;
        super::map_inline(
            barriers,
            |b| {
                Some(TextureBarrier::<'_, dyn DynTexture> {
                    texture: &**b.texture,
                    range: b.range,
                    usage: b.usage,
                })
            },
            // SAFETY: forwarded contract.
            |own| unsafe { DynCommandEncoder::transition_textures(encoder, own) },
        );
    }
    unsafe fn clear_buffer(&mut self, buffer: &Box<dyn DynBuffer>, range: Range<u64>) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::clear_buffer(&mut **self, &**buffer, range) }
    }
    unsafe fn copy_buffer_to_buffer(
        &mut self,
        src: &Box<dyn DynBuffer>,
        dst: &Box<dyn DynBuffer>,
        regions: &[BufferCopy],
    ) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::copy_buffer_to_buffer(&mut **self, &**src, &**dst, regions) }
    }
    unsafe fn copy_buffer_to_texture(
        &mut self,
        src: &Box<dyn DynBuffer>,
        dst: &Box<dyn DynTexture>,
        regions: &[BufferTextureCopy],
    ) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::copy_buffer_to_texture(&mut **self, &**src, &**dst, regions) }
    }
    unsafe fn copy_texture_to_buffer(
        &mut self,
        src: &Box<dyn DynTexture>,
        src_usage: TextureUses,
        dst: &Box<dyn DynBuffer>,
        regions: &[BufferTextureCopy],
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            DynCommandEncoder::copy_texture_to_buffer(
                &mut **self,
                &**src,
                src_usage,
                &**dst,
                regions,
            )
        }
    }
    unsafe fn copy_texture_to_texture(
        &mut self,
        src: &Box<dyn DynTexture>,
        src_usage: TextureUses,
        dst: &Box<dyn DynTexture>,
        regions: &[TextureCopy],
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            DynCommandEncoder::copy_texture_to_texture(
                &mut **self,
                &**src,
                src_usage,
                &**dst,
                regions,
            )
        }
    }
    unsafe fn begin_debug_marker(&mut self, label: &str) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::begin_debug_marker(&mut **self, label) }
    }
    unsafe fn end_debug_marker(&mut self) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::end_debug_marker(&mut **self) }
    }
    unsafe fn insert_debug_marker(&mut self, label: &str) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::insert_debug_marker(&mut **self, label) }
    }
    unsafe fn reset_queries(&mut self, set: &Box<dyn DynQuerySet>, range: Range<u32>) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::reset_queries(&mut **self, &**set, range) }
    }
    unsafe fn begin_query(&mut self, set: &Box<dyn DynQuerySet>, index: u32) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::begin_query(&mut **self, &**set, index) }
    }
    unsafe fn end_query(&mut self, set: &Box<dyn DynQuerySet>, index: u32) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::end_query(&mut **self, &**set, index) }
    }
    unsafe fn write_timestamp(&mut self, set: &Box<dyn DynQuerySet>, index: u32) {
        // SAFETY: forwarded contract.
        unsafe { DynCommandEncoder::write_timestamp(&mut **self, &**set, index) }
    }
    unsafe fn copy_query_results(
        &mut self,
        set: &Box<dyn DynQuerySet>,
        range: Range<u32>,
        buffer: &Box<dyn DynBuffer>,
        offset: u64,
        stride: u64,
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            DynCommandEncoder::copy_query_results(
                &mut **self,
                &**set,
                range,
                &**buffer,
                offset,
                stride,
            )
        }
    }
    unsafe fn transfer_ownership(
        &mut self,
        direction: OwnershipTransfer,
        buffers: &[BufferBarrier<'_, Box<dyn DynBuffer>>],
        textures: &[TextureBarrier<'_, Box<dyn DynTexture>>],
    ) {
        let encoder = &mut **self;
        super::map_inline(
            buffers,
            |b| {
                Some(BufferBarrier::<'_, dyn DynBuffer> {
                    buffer: &**b.buffer,
                    usage: b.usage,
                })
            },
            |buffers| {
                super::map_inline(
                    textures,
                    |b| {
                        Some(TextureBarrier::<'_, dyn DynTexture> {
                            texture: &**b.texture,
                            range: b.range,
                            usage: b.usage,
                        })
                    },
                    // SAFETY: forwarded contract.
                    |textures| unsafe {
                        DynCommandEncoder::transfer_ownership(encoder, direction, buffers, textures)
                    },
                )
            },
        );
    }
}
