//! Submission: `vkQueueSubmit2`, signalling a fence's timeline semaphore.

use arrayvec::ArrayVec;
use ash::vk;

use super::map_err;
use crate::{DeviceError, FenceValue};

/// Command buffers one submit describes without a heap allocation.
const INLINE_COMMAND_BUFFERS: usize = 32;

impl super::Queue {
    /// Submits one batch under the queue lock.
    fn submit_infos(
        &self,
        command_buffers: &[vk::CommandBufferSubmitInfo<'_>],
        fence: &super::Fence,
        value: FenceValue,
    ) -> Result<(), DeviceError> {
        let signal = [vk::SemaphoreSubmitInfo::default()
            .semaphore(fence.raw)
            .value(value)
            .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)];
        let submit = [vk::SubmitInfo2::default()
            .command_buffer_infos(command_buffers)
            .signal_semaphore_infos(&signal)];
        let device = &self.device;
        let _queue = device.queue_lock.lock();
        // SAFETY: the caller's contract (see `crate::Queue::submit`) makes the
        // command buffers and fence valid for this device; the queue lock
        // gives the external synchronisation vkQueueSubmit2 needs.
        unsafe {
            device
                .raw
                .queue_submit2(self.raw, &submit, vk::Fence::null())
        }
        .map_err(map_err)
    }
}

impl crate::Queue for super::Queue {
    type A = super::Api;

    unsafe fn submit(
        &self,
        command_buffers: &[&super::CommandBuffer],
        fence: &super::Fence,
        value: FenceValue,
    ) -> Result<(), DeviceError> {
        let info = |cb: &&super::CommandBuffer| {
            vk::CommandBufferSubmitInfo::default().command_buffer(cb.raw)
        };
        if command_buffers.len() <= INLINE_COMMAND_BUFFERS {
            let infos: ArrayVec<_, INLINE_COMMAND_BUFFERS> =
                command_buffers.iter().map(info).collect();
            self.submit_infos(&infos, fence, value)
        } else {
            let infos: Vec<_> = command_buffers.iter().map(info).collect();
            self.submit_infos(&infos, fence, value)
        }
    }

    fn timestamp_period(&self) -> f32 {
        self.device.timestamp_period
    }
    unsafe fn submit_external(
        &self,
        submission: &crate::ExternalSubmissionOf<'_, super::Api>,
    ) -> Result<(), DeviceError> {
        // SAFETY: forwarded contract.
        unsafe { super::external_sync::submit_external(self, submission) }
    }
}
