//! Submission (`vkQueueSubmit2`, signalling a fence's timeline semaphore)
//! and presentation (`vkQueuePresentKHR`).
//!
//! A submit that names surface textures also waits on each one's acquire
//! semaphore and signals its present semaphore and its swapchain's frame
//! timeline (see `swapchain.rs` for why).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use arrayvec::ArrayVec;
use ash::vk;

use super::conv::map_err;
use super::swapchain::ImageSync;
use crate::{DeviceError, FenceValue, SurfaceError};

/// Command buffers one submit describes without a heap allocation.
const INLINE_COMMAND_BUFFERS: usize = 32;
/// Surface textures one submit describes without a heap allocation.
const INLINE_SURFACE_TEXTURES: usize = 4;
/// Semaphore operations for that many: at most two waits, or two signals
/// plus the fence, per texture.
const INLINE_SEMAPHORES: usize = 2 * INLINE_SURFACE_TEXTURES + 1;

/// A list of semaphore operations: inline ([`ArrayVec`], sized so it never
/// overflows for the counts it is used with) or on the heap.
trait SemaphoreList<'a>:
    Default + Extend<vk::SemaphoreSubmitInfo<'a>> + AsRef<[vk::SemaphoreSubmitInfo<'a>]>
{
}
impl<'a, T> SemaphoreList<'a> for T where
    T: Default + Extend<vk::SemaphoreSubmitInfo<'a>> + AsRef<[vk::SemaphoreSubmitInfo<'a>]>
{
}

/// Whether texture `i` is the first of `textures` on its frame timeline
/// (each timeline is signalled once per submit).
fn first_on_timeline(textures: &[&super::SurfaceTexture], i: usize) -> bool {
    let timeline = &textures[i].sync.timeline;
    !textures[..i]
        .iter()
        .any(|t| Arc::ptr_eq(&t.sync.timeline, timeline))
}

/// A semaphore operation.
fn semaphore_op<'a>(
    semaphore: vk::Semaphore,
    value: u64,
    stages: vk::PipelineStageFlags2,
) -> vk::SemaphoreSubmitInfo<'a> {
    vk::SemaphoreSubmitInfo::default()
        .semaphore(semaphore)
        .value(value)
        .stage_mask(stages)
}

impl super::Queue {
    /// Submits one batch under the queue lock, with the semaphore
    /// operations of `surface_textures` (of which there are at most as many
    /// as `S` holds: see [`INLINE_SEMAPHORES`]).
    fn submit_infos<'a, S: SemaphoreList<'a>>(
        &self,
        command_buffers: &[vk::CommandBufferSubmitInfo<'_>],
        surface_textures: &[&super::SurfaceTexture],
        fence: &super::Fence,
        value: FenceValue,
    ) -> Result<(), DeviceError> {
        let device = &self.device;
        let mut waits = S::default();
        let mut signals = S::default();
        signals.extend([semaphore_op(
            fence.raw,
            value,
            vk::PipelineStageFlags2::ALL_COMMANDS,
        )]);
        let _queue = device.queue_lock.lock();
        // Under the queue lock: frame-timeline values follow submission order.
        for (i, texture) in surface_textures.iter().enumerate() {
            if surface_textures[..i]
                .iter()
                .any(|t| std::ptr::eq(*t, *texture))
            {
                continue; // Named twice: its semaphores are handled once.
            }
            let sync: &ImageSync = &texture.sync;
            if sync.acquire_pending.load(Ordering::Relaxed) {
                let stages = ImageSync::acquire_wait_stages(texture.texture.usage);
                waits.extend([semaphore_op(sync.acquire, 0, stages)]);
            }
            if sync.present_pending.load(Ordering::Relaxed) {
                // Named by an earlier submit that was not presented: chain it.
                let all = vk::PipelineStageFlags2::ALL_COMMANDS;
                waits.extend([semaphore_op(sync.present, 0, all)]);
            }
            let all = vk::PipelineStageFlags2::ALL_COMMANDS;
            signals.extend([semaphore_op(sync.present, 0, all)]);
            if first_on_timeline(surface_textures, i) {
                let next = sync.timeline.last.load(Ordering::Relaxed) + 1;
                signals.extend([semaphore_op(sync.timeline.raw, next, all)]);
            }
        }
        let submit = [vk::SubmitInfo2::default()
            .wait_semaphore_infos(waits.as_ref())
            .command_buffer_infos(command_buffers)
            .signal_semaphore_infos(signals.as_ref())];
        // SAFETY: the caller's contract (see `crate::Queue::submit`) makes the
        // command buffers, fence and surface textures valid for this device;
        // the semaphore states tracked by the textures make every wait match
        // a signal; the queue lock gives the external synchronisation
        // vkQueueSubmit2 needs.
        unsafe {
            device
                .raw
                .queue_submit2(self.raw, &submit, vk::Fence::null())
        }
        .map_err(map_err)?;
        for texture in surface_textures {
            let sync = &texture.sync;
            let next = sync.timeline.last.load(Ordering::Relaxed) + 1;
            sync.submitted.store(next, Ordering::Relaxed);
            sync.acquire_pending.store(false, Ordering::Relaxed);
            sync.present_pending.store(true, Ordering::Relaxed);
        }
        for (i, texture) in surface_textures.iter().enumerate() {
            if first_on_timeline(surface_textures, i) {
                texture.sync.timeline.last.fetch_add(1, Ordering::Relaxed);
            }
        }
        Ok(())
    }

    /// Picks inline or heap storage for the semaphore operations.
    fn submit_with_surfaces(
        &self,
        command_buffers: &[vk::CommandBufferSubmitInfo<'_>],
        surface_textures: &[&super::SurfaceTexture],
        fence: &super::Fence,
        value: FenceValue,
    ) -> Result<(), DeviceError> {
        if surface_textures.len() <= INLINE_SURFACE_TEXTURES {
            type Inline<'a> = ArrayVec<vk::SemaphoreSubmitInfo<'a>, INLINE_SEMAPHORES>;
            self.submit_infos::<Inline<'_>>(command_buffers, surface_textures, fence, value)
        } else {
            self.submit_infos::<Vec<_>>(command_buffers, surface_textures, fence, value)
        }
    }
}

impl crate::Queue for super::Queue {
    type A = super::Api;

    unsafe fn submit(
        &self,
        command_buffers: &[&super::CommandBuffer],
        surface_textures: &[&super::SurfaceTexture],
        fence: &super::Fence,
        value: FenceValue,
    ) -> Result<(), DeviceError> {
        self.device.guard(|| {
            let info = |cb: &&super::CommandBuffer| {
                vk::CommandBufferSubmitInfo::default().command_buffer(cb.raw)
            };
            if command_buffers.len() <= INLINE_COMMAND_BUFFERS {
                let infos: ArrayVec<_, INLINE_COMMAND_BUFFERS> =
                    command_buffers.iter().map(info).collect();
                self.submit_with_surfaces(&infos, surface_textures, fence, value)
            } else {
                let infos: Vec<_> = command_buffers.iter().map(info).collect();
                self.submit_with_surfaces(&infos, surface_textures, fence, value)
            }
        })
    }

    unsafe fn present(
        &self,
        surface: &super::Surface,
        texture: super::SurfaceTexture,
    ) -> Result<(), SurfaceError> {
        self.device.guard(|| {
            let mut slot = surface.swapchain.lock();
            match slot.as_mut() {
                // SAFETY: the surface lock is held; the caller's contract makes
                // the texture this swapchain's, written by submits that named it.
                Some(swapchain) if swapchain.raw == texture.sync.swapchain => unsafe {
                    swapchain.present(self.raw, texture.sync)
                },
                // Reconfigured or unconfigured since the acquire: the image and
                // its semaphores are gone.
                _ => Err(SurfaceError::Outdated),
            }
        })
    }

    fn timestamp_period(&self) -> f32 {
        self.device.timestamp_period
    }
    unsafe fn submit_external(
        &self,
        submission: &crate::ExternalSubmissionOf<'_, super::Api>,
    ) -> Result<(), DeviceError> {
        self.device.guard(|| {
            // SAFETY: forwarded contract.
            unsafe { super::external_sync::submit_external(self, submission) }
        })
    }
}
