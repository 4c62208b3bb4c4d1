//! The swapchain of a configured surface: creation and re-creation,
//! acquire, discard, present, and the semaphores that order
//! acquire → submit → present.
//!
//! Synchronisation, per swapchain:
//! * one binary **present** semaphore per image: the submit that names the
//!   texture signals it, present waits on it. It is signalled again only
//!   after the image was acquired again, so after presentation consumed it.
//! * a pool of binary **acquire** semaphores: acquire signals one, the first
//!   submit naming the texture waits on it. When the texture is presented or
//!   discarded, the semaphore goes back to the pool tagged with a value of
//!   the swapchain's **frame timeline**, a timeline semaphore that every
//!   submit naming one of its textures also signals. A pooled semaphore is
//!   reused only once the timeline reached its tag, that is once the submit
//!   that waited on it has completed (Vulkan forbids signalling a binary
//!   semaphore with a wait still pending).
//! * Vulkan 1.3 cannot give an acquired image back without presenting it,
//!   so a discarded texture stays acquired: the next acquire hands it out
//!   again, with its pending semaphore state.
//!
//! `vkAcquireNextImageKHR` and `vkQueuePresentKHR` need the swapchain
//! externally synchronised: both run under the surface's lock (an acquire
//! that waits holds up presents to the same surface). The surface lock is
//! always taken before the queue lock.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use arrayvec::ArrayVec;
use ash::vk;

use super::conv::map_err;
use super::surface::{map_alpha_mode, map_present_mode, remaining_ns, RawCapabilities};
use super::{conv, memory::Block, DeviceShared};
use crate::{AcquiredSurfaceTexture, DeviceError, SurfaceConfiguration, SurfaceError};

/// A timeline semaphore that every submit naming a texture of one swapchain signals.
#[derive(Debug)]
pub(crate) struct FrameTimeline {
    pub(crate) raw: vk::Semaphore,
    /// The last value a successful submit signals. Updated under the queue
    /// lock, so values are handed out in submission order.
    pub(crate) last: AtomicU64,
}

/// The synchronisation state of one acquired texture.
#[derive(Debug)]
pub(crate) struct ImageSync {
    /// The swapchain the image belongs to.
    pub(crate) swapchain: vk::SwapchainKHR,
    /// The image index.
    pub(crate) index: u32,
    /// Signalled by the acquire; null for a discarded texture handed out
    /// again after a submit already waited on it.
    pub(crate) acquire: vk::Semaphore,
    /// The acquire semaphore is signalled and nothing has waited on it yet.
    pub(crate) acquire_pending: AtomicBool,
    /// The image's present semaphore.
    pub(crate) present: vk::Semaphore,
    /// A submit signalled `present` and nothing has waited on it yet.
    pub(crate) present_pending: AtomicBool,
    /// The frame-timeline value of the last submit naming the texture (0: none).
    pub(crate) submitted: AtomicU64,
    pub(crate) timeline: Arc<FrameTimeline>,
}

impl ImageSync {
    /// The stages of a submit that wait for the acquire: those that may
    /// first touch an image of these usages.
    pub(crate) fn acquire_wait_stages(usage: wgt::TextureUsages) -> vk::PipelineStageFlags2 {
        use vk::PipelineStageFlags2 as S;
        use wgt::TextureUsages as U;
        let mut stages = S::COLOR_ATTACHMENT_OUTPUT;
        if usage.intersects(U::COPY_DST | U::COPY_SRC) {
            stages |= S::ALL_TRANSFER;
        }
        if usage.intersects(U::STORAGE_BINDING | U::TEXTURE_BINDING) {
            stages |= S::FRAGMENT_SHADER | S::COMPUTE_SHADER;
        }
        stages
    }
}

/// The swapchain settings chosen for a configuration.
pub(super) struct Params {
    format: wgt::TextureFormat,
    vk_format: vk::Format,
    present_mode: vk::PresentModeKHR,
    alpha: vk::CompositeAlphaFlagsKHR,
    extent: vk::Extent2D,
    image_count: u32,
    usage: wgt::TextureUsages,
    vk_usage: vk::ImageUsageFlags,
    transform: vk::SurfaceTransformFlagsKHR,
}

impl Params {
    /// Checks a configuration against what the surface supports. The
    /// swapchain gets exactly `config.extent`: where the window system fixes
    /// the size (`current_extent`) and it differs (a window resized since
    /// the caller looked), the answer is `Outdated`.
    pub(super) fn choose(
        config: &SurfaceConfiguration,
        raw: &RawCapabilities,
        formats: &[wgt::TextureFormat],
    ) -> Result<Self, SurfaceError> {
        let caps = &raw.caps;
        if config.extent.width == 0 || config.extent.height == 0 {
            return Err(SurfaceError::Unsupported("the extent has a zero dimension"));
        }
        if caps.max_image_extent.width == 0 || caps.max_image_extent.height == 0 {
            // A minimised window: no swapchain can be made until it is restored.
            return Err(SurfaceError::Outdated);
        }
        if !formats.contains(&config.format) {
            return Err(SurfaceError::Unsupported(
                "the format is not one of the surface's formats",
            ));
        }
        let supports = |mode| raw.present_modes.contains(&mode);
        let present_mode = match config.present_mode {
            wgt::PresentMode::AutoVsync => [vk::PresentModeKHR::FIFO_RELAXED]
                .into_iter()
                .find(|m| supports(*m))
                .unwrap_or(vk::PresentModeKHR::FIFO),
            wgt::PresentMode::AutoNoVsync => {
                [vk::PresentModeKHR::IMMEDIATE, vk::PresentModeKHR::MAILBOX]
                    .into_iter()
                    .find(|m| supports(*m))
                    .unwrap_or(vk::PresentModeKHR::FIFO)
            }
            wanted => raw
                .present_modes
                .iter()
                .copied()
                .find(|m| map_present_mode(*m) == Some(wanted))
                .ok_or(SurfaceError::Unsupported(
                    "the present mode is not supported by the surface",
                ))?,
        };
        let alpha = match config.composite_alpha_mode {
            wgt::CompositeAlphaMode::Auto => [
                vk::CompositeAlphaFlagsKHR::OPAQUE,
                vk::CompositeAlphaFlagsKHR::INHERIT,
            ]
            .into_iter()
            .find(|a| caps.supported_composite_alpha.contains(*a))
            .ok_or(SurfaceError::Unsupported(
                "the surface supports neither opaque nor inherited alpha",
            ))?,
            mode => map_alpha_mode(mode)
                .filter(|a| caps.supported_composite_alpha.contains(*a))
                .ok_or(SurfaceError::Unsupported(
                    "the composite alpha mode is not supported by the surface",
                ))?,
        };
        let vk_usage = conv::map_texture_usage(config.usage, config.format);
        if vk_usage.is_empty() || !caps.supported_usage_flags.contains(vk_usage) {
            return Err(SurfaceError::Unsupported(
                "the usage is empty or not supported by the surface",
            ));
        }
        let max_images = match caps.max_image_count {
            0 => u32::MAX,
            n => n,
        };
        let extent = vk::Extent2D {
            width: config.extent.width,
            height: config.extent.height,
        };
        let fixed = caps.current_extent;
        if fixed.width != u32::MAX && (fixed.width, fixed.height) != (extent.width, extent.height) {
            return Err(SurfaceError::Outdated);
        }
        let (min, max) = (caps.min_image_extent, caps.max_image_extent);
        if !(min.width..=max.width).contains(&extent.width)
            || !(min.height..=max.height).contains(&extent.height)
        {
            return Err(SurfaceError::Unsupported(
                "the extent is outside the surface's range",
            ));
        }
        Ok(Self {
            format: config.format,
            vk_format: conv::map_texture_format(config.format),
            present_mode,
            alpha,
            extent,
            image_count: config
                .maximum_frame_latency
                .clamp(caps.min_image_count.max(1), max_images),
            usage: config.usage,
            vk_usage,
            transform: caps.current_transform,
        })
    }
}

/// A swapchain and everything made for it.
pub(crate) struct Swapchain {
    device: Arc<DeviceShared>,
    fns: ash::khr::swapchain::Device,
    pub(crate) raw: vk::SwapchainKHR,
    images: Vec<vk::Image>,
    /// One per image, by index.
    present_semaphores: Vec<vk::Semaphore>,
    /// Every acquire semaphore made (pooled or held by a texture).
    acquire_semaphores: Vec<vk::Semaphore>,
    /// Acquire semaphores not held by a texture, each with the frame-timeline
    /// value to reach before it may be signalled again (0: none), oldest first.
    free_acquire: VecDeque<(vk::Semaphore, u64)>,
    /// Textures given back unpresented; still acquired in Vulkan's eyes.
    discarded: VecDeque<ImageSync>,
    timeline: Arc<FrameTimeline>,
    format: wgt::TextureFormat,
    extent: vk::Extent2D,
    usage: wgt::TextureUsages,
}

impl Swapchain {
    /// The device the swapchain was made on.
    pub(crate) fn device(&self) -> &DeviceShared {
        &self.device
    }
}

impl std::fmt::Debug for Swapchain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Swapchain")
            .field("raw", &self.raw)
            .field("images", &self.images.len())
            .field("format", &self.format)
            .field("extent", &self.extent)
            .finish_non_exhaustive()
    }
}

/// Maps the error of a swapchain creation.
fn create_error(e: vk::Result) -> SurfaceError {
    match e {
        vk::Result::ERROR_SURFACE_LOST_KHR => SurfaceError::Lost,
        vk::Result::ERROR_OUT_OF_DATE_KHR => SurfaceError::Outdated,
        vk::Result::ERROR_NATIVE_WINDOW_IN_USE_KHR => {
            SurfaceError::Unsupported("the window is in use by another swapchain or API")
        }
        other => SurfaceError::Device(map_err(other)),
    }
}

/// Maps the error of an acquire or a present.
fn frame_error(e: vk::Result) -> SurfaceError {
    match e {
        vk::Result::ERROR_OUT_OF_DATE_KHR
        | vk::Result::ERROR_FULL_SCREEN_EXCLUSIVE_MODE_LOST_EXT => SurfaceError::Outdated,
        vk::Result::ERROR_SURFACE_LOST_KHR => SurfaceError::Lost,
        vk::Result::TIMEOUT | vk::Result::NOT_READY => SurfaceError::Timeout,
        other => SurfaceError::Device(map_err(other)),
    }
}

/// Creates a binary (or, with `timeline`, a timeline) semaphore.
///
/// # Safety
/// `device` is live.
unsafe fn create_semaphore(
    device: &DeviceShared,
    timeline: bool,
) -> Result<vk::Semaphore, vk::Result> {
    let mut ty = vk::SemaphoreTypeCreateInfo::default()
        .semaphore_type(vk::SemaphoreType::TIMELINE)
        .initial_value(0);
    let mut info = vk::SemaphoreCreateInfo::default();
    if timeline {
        info = info.push_next(&mut ty);
    }
    // SAFETY: forwarded contract; timeline semaphores are core 1.2.
    unsafe { device.raw.create_semaphore(&info, None) }
}

impl Swapchain {
    /// Creates the swapchain for `params`, handing `old` over (it is retired
    /// and destroyed whether or not creation succeeds).
    ///
    /// # Safety
    /// `surface` belongs to the device's instance and the device's queue
    /// family can present to it; no pending GPU work uses `old`'s textures
    /// and none of them is still held by the caller.
    pub(super) unsafe fn create(
        device: &Arc<DeviceShared>,
        surface: vk::SurfaceKHR,
        params: &Params,
        old: Option<Swapchain>,
    ) -> Result<Self, SurfaceError> {
        // The old swapchain can only be handed over on the same device.
        let old = match old {
            Some(old) if Arc::ptr_eq(&old.device, device) => {
                // SAFETY: forwarded contract.
                unsafe { old.quiesce() };
                Some(old)
            }
            Some(old) => {
                // SAFETY: forwarded contract.
                unsafe { old.destroy() };
                None
            }
            None => None,
        };
        let fns = ash::khr::swapchain::Device::new(&device.instance.raw, &device.raw);
        let info = vk::SwapchainCreateInfoKHR::default()
            .surface(surface)
            .min_image_count(params.image_count)
            .image_format(params.vk_format)
            .image_color_space(vk::ColorSpaceKHR::SRGB_NONLINEAR)
            .image_extent(params.extent)
            .image_array_layers(1)
            .image_usage(params.vk_usage)
            .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
            .pre_transform(params.transform)
            .composite_alpha(params.alpha)
            .present_mode(params.present_mode)
            .clipped(true)
            .old_swapchain(old.as_ref().map_or(vk::SwapchainKHR::null(), |o| o.raw));
        // SAFETY: the device enabled VK_KHR_swapchain (checked by the
        // caller); the parameters were checked against the surface.
        let created = unsafe { fns.create_swapchain(&info, None) };
        if let Some(old) = old {
            // SAFETY: retired by the call above whatever its result, and idle.
            unsafe { old.release() };
        }
        let raw = created.map_err(create_error)?;
        // From here `swapchain` owns every handle made; on an error its
        // `release` destroys them (nothing was submitted yet).
        let mut swapchain = Swapchain {
            device: device.clone(),
            fns,
            raw,
            images: Vec::new(),
            present_semaphores: Vec::new(),
            acquire_semaphores: Vec::new(),
            free_acquire: VecDeque::new(),
            discarded: VecDeque::new(),
            timeline: Arc::new(FrameTimeline {
                raw: vk::Semaphore::null(),
                last: AtomicU64::new(0),
            }),
            format: params.format,
            extent: params.extent,
            usage: params.usage,
        };
        // SAFETY: the swapchain and device are live.
        match unsafe { swapchain.create_objects() } {
            Ok(()) => Ok(swapchain),
            Err(e) => {
                // SAFETY: nothing of it was used.
                unsafe { swapchain.release() };
                Err(SurfaceError::Device(map_err(e)))
            }
        }
    }

    /// Reads the images and makes the semaphores, into `self`.
    ///
    /// # Safety
    /// `self.raw` is live.
    unsafe fn create_objects(&mut self) -> Result<(), vk::Result> {
        // SAFETY: forwarded contract.
        self.images = unsafe { self.fns.get_swapchain_images(self.raw) }?;
        // SAFETY: live device (here and below).
        let timeline = unsafe { create_semaphore(&self.device, true) }?;
        self.timeline = Arc::new(FrameTimeline {
            raw: timeline,
            last: AtomicU64::new(0),
        });
        self.present_semaphores.reserve(self.images.len());
        for _ in 0..self.images.len() {
            // SAFETY: as above.
            let semaphore = unsafe { create_semaphore(&self.device, false) }?;
            self.present_semaphores.push(semaphore);
        }
        Ok(())
    }

    /// Waits until no queue work uses the swapchain's images or semaphores.
    /// Acquire semaphores of discarded textures that were never waited on
    /// are waited on first, so no signal from the presentation engine is
    /// left pending. Failures (a lost device) are logged: there is nothing
    /// left to wait for then.
    ///
    /// # Safety
    /// The caller's textures of this swapchain were all presented or discarded.
    unsafe fn quiesce(&self) {
        // Rare (reconfiguration), so a heap list is fine.
        let pending: Vec<vk::SemaphoreSubmitInfo<'_>> = self
            .discarded
            .iter()
            .filter(|s| s.acquire_pending.load(Ordering::Relaxed))
            .map(|s| {
                vk::SemaphoreSubmitInfo::default()
                    .semaphore(s.acquire)
                    .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
            })
            .collect();
        let _queue = self.device.queue_lock.lock();
        if !pending.is_empty() {
            let submit = [vk::SubmitInfo2::default().wait_semaphore_infos(&pending)];
            let queue = self.queue();
            // SAFETY: the semaphores are signalled (or about to be) by
            // acquires and nothing waits on them; the queue lock is held.
            if let Err(e) = unsafe {
                self.device
                    .raw
                    .queue_submit2(queue, &submit, vk::Fence::null())
            } {
                log::error!(
                    "waiting on the acquire semaphores of discarded textures failed: {e:?}"
                );
            }
        }
        // SAFETY: live device; the queue lock is held.
        if let Err(e) = unsafe { self.device.raw.device_wait_idle() } {
            log::error!("vkDeviceWaitIdle before dropping a swapchain failed: {e:?}");
        }
    }

    /// The device's one queue.
    fn queue(&self) -> vk::Queue {
        // SAFETY: the device was created with one queue of this family.
        unsafe {
            self.device
                .raw
                .get_device_queue(self.device.queue_family_index, 0)
        }
    }

    /// Destroys every handle of the swapchain, which must be idle.
    ///
    /// # Safety
    /// No queue work uses the swapchain, its images or semaphores
    /// ([`Swapchain::quiesce`], or nothing was ever submitted).
    unsafe fn release(self) {
        let raw = &self.device.raw;
        // SAFETY: forwarded contract: all idle, all made from this device.
        unsafe {
            for semaphore in self
                .acquire_semaphores
                .iter()
                .chain(&self.present_semaphores)
            {
                raw.destroy_semaphore(*semaphore, None);
            }
            if self.timeline.raw != vk::Semaphore::null() {
                raw.destroy_semaphore(self.timeline.raw, None);
            }
            self.fns.destroy_swapchain(self.raw, None);
        }
    }

    /// Waits for the swapchain's work, then destroys it.
    ///
    /// # Safety
    /// As [`Swapchain::quiesce`].
    pub(super) unsafe fn destroy(self) {
        // SAFETY: forwarded contract; `quiesce` makes it idle.
        unsafe {
            self.quiesce();
            self.release();
        }
    }

    /// The hal texture of image `index` (not owned: the swapchain is).
    fn texture(&self, index: u32) -> super::Texture {
        super::Texture {
            raw: self
                .images
                .get(index as usize)
                .copied()
                .unwrap_or(vk::Image::null()),
            block: Block::CallerOwned,
            format: self.format,
            dimension: wgt::TextureDimension::D2,
            size: wgt::Extent3d {
                width: self.extent.width,
                height: self.extent.height,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            usage: self.usage,
            view_formats: Vec::new(),
        }
    }

    /// Takes an acquire semaphore from the pool, waiting (until `deadline`)
    /// for the submit that last waited on it; makes one when the pool is empty.
    fn acquire_semaphore(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<vk::Semaphore, SurfaceError> {
        if let Some((semaphore, value)) = self.free_acquire.pop_front() {
            if value > 0 {
                let semaphores = [self.timeline.raw];
                let values = [value];
                let info = vk::SemaphoreWaitInfo::default()
                    .semaphores(&semaphores)
                    .values(&values);
                // SAFETY: the timeline is live; `value` was given to a submit.
                if let Err(e) = unsafe {
                    self.device
                        .raw
                        .wait_semaphores(&info, remaining_ns(deadline))
                } {
                    self.free_acquire.push_front((semaphore, value));
                    return Err(frame_error(e));
                }
            }
            return Ok(semaphore);
        }
        self.acquire_semaphores.reserve(1);
        // SAFETY: live device.
        let semaphore = unsafe { create_semaphore(&self.device, false) }
            .map_err(|e| SurfaceError::Device(map_err(e)))?;
        self.acquire_semaphores.push(semaphore);
        Ok(semaphore)
    }

    /// Acquires the next image (or hands a discarded one out again).
    ///
    /// # Safety
    /// Called under the surface lock; the caller holds fewer textures than
    /// the swapchain can give.
    pub(super) unsafe fn acquire(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<AcquiredSurfaceTexture<super::SurfaceTexture>, SurfaceError> {
        if let Some(sync) = self.discarded.pop_front() {
            return Ok(AcquiredSurfaceTexture {
                texture: super::SurfaceTexture {
                    texture: self.texture(sync.index),
                    sync,
                },
                suboptimal: false,
            });
        }
        let semaphore = self.acquire_semaphore(deadline)?;
        // SAFETY: the semaphore is unsignalled with no pending operation
        // (its last wait completed); the surface lock synchronises the swapchain.
        let acquired = unsafe {
            self.fns.acquire_next_image(
                self.raw,
                remaining_ns(deadline),
                semaphore,
                vk::Fence::null(),
            )
        };
        let (index, suboptimal) = match acquired {
            Ok(acquired) => acquired,
            Err(e) => {
                // Not signalled: reusable at once.
                self.free_acquire.push_front((semaphore, 0));
                return Err(frame_error(e));
            }
        };
        let Some(&present) = self.present_semaphores.get(index as usize) else {
            // A driver bug; the semaphore is signalled, so it is not pooled again.
            log::error!(
                "vkAcquireNextImageKHR returned image {index} of {}",
                self.images.len()
            );
            return Err(SurfaceError::Device(DeviceError::Unexpected));
        };
        let sync = ImageSync {
            swapchain: self.raw,
            index,
            acquire: semaphore,
            acquire_pending: AtomicBool::new(true),
            present,
            present_pending: AtomicBool::new(false),
            submitted: AtomicU64::new(0),
            timeline: self.timeline.clone(),
        };
        Ok(AcquiredSurfaceTexture {
            texture: super::SurfaceTexture {
                texture: self.texture(index),
                sync,
            },
            suboptimal,
        })
    }

    /// Returns a texture's acquire semaphore to the pool once a submit
    /// waited on it. One never waited on by a submit is not pooled again
    /// (its wait cannot be tracked); it is destroyed with the swapchain.
    fn recycle_acquire(&mut self, sync: &mut ImageSync) {
        if sync.acquire != vk::Semaphore::null() && !sync.acquire_pending.load(Ordering::Relaxed) {
            let value = sync.submitted.load(Ordering::Relaxed);
            self.free_acquire.push_back((sync.acquire, value));
            sync.acquire = vk::Semaphore::null();
        }
    }

    /// Keeps a discarded texture's image for the next acquire.
    pub(super) fn discard(&mut self, mut sync: ImageSync) {
        self.recycle_acquire(&mut sync);
        self.discarded.push_back(sync);
    }

    /// Presents a texture on `queue`, waiting on its present semaphore.
    ///
    /// # Safety
    /// Called under the surface lock; the texture is of this swapchain and
    /// in `PRESENT` after the submits that named it.
    pub(super) unsafe fn present(
        &mut self,
        queue: vk::Queue,
        mut sync: ImageSync,
    ) -> Result<(), SurfaceError> {
        let mut waits = ArrayVec::<vk::Semaphore, 2>::new();
        if sync.present_pending.load(Ordering::Relaxed) {
            waits.push(sync.present);
        }
        if sync.acquire_pending.load(Ordering::Relaxed) {
            log::warn!("presenting a surface texture that no submit named");
            waits.push(sync.acquire);
        }
        let swapchains = [self.raw];
        let indices = [sync.index];
        let info = vk::PresentInfoKHR::default()
            .wait_semaphores(&waits)
            .swapchains(&swapchains)
            .image_indices(&indices);
        let result = {
            let _queue = self.device.queue_lock.lock();
            // SAFETY: the queue lock and the surface lock give the external
            // synchronisation; the semaphores are signalled by submits made.
            unsafe { self.fns.queue_present(queue, &info) }
        };
        // The waits are enqueued even when presentation is refused as out of
        // date or lost, so the semaphores are consumed either way.
        self.recycle_acquire(&mut sync);
        result.map(|_suboptimal| ()).map_err(frame_error)
    }
}
