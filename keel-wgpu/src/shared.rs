//! What every object of one device shares: the keel-hal device and queue,
//! the submission fence, the error sink, work recorded for the next submit
//! (`Queue::write_*`, zero-initialisation, mapped-at-creation uploads), and
//! the objects waiting for the GPU before they are destroyed.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use keel_hal::dynamic::{
    DynBindGroup, DynBindGroupLayout, DynBuffer, DynCommandBuffer, DynCommandEncoder,
    DynComputePipeline, DynDevice, DynFence, DynPipelineLayout, DynQuerySet, DynQueue,
    DynRenderPipeline, DynSampler, DynShaderModule, DynTexture, DynTextureView,
};
use parking_lot::Mutex;

use crate::command::Cmd;
use crate::error::{ErrorSink, KeelError};
use crate::resource::Buffer;

/// A keel-hal object whose wgpu handle is gone, kept until the submissions
/// that use it are done.
#[derive(Debug)]
pub(crate) enum Dead {
    Buffer(Box<dyn DynBuffer>),
    Texture(Box<dyn DynTexture>),
    View(Box<dyn DynTextureView>),
    Sampler(Box<dyn DynSampler>),
    QuerySet(Box<dyn DynQuerySet>),
    BindGroupLayout(Box<dyn DynBindGroupLayout>),
    BindGroup(Box<dyn DynBindGroup>),
    PipelineLayout(Box<dyn DynPipelineLayout>),
    ShaderModule(Box<dyn DynShaderModule>),
    ComputePipeline(Box<dyn DynComputePipeline>),
    RenderPipeline(Box<dyn DynRenderPipeline>),
}

/// A mapping request waiting for the GPU to finish with its buffer.
pub(crate) struct PendingMap {
    pub buffer: Arc<Buffer>,
    pub callback: wgpu::custom::BufferMapCallback,
}

/// A keel-hal encoder with the command buffers it recorded, in flight until
/// `done_at` completes.
#[derive(Debug)]
pub(crate) struct InFlight {
    pub encoder: Box<dyn DynCommandEncoder>,
    pub buffers: Vec<Box<dyn DynCommandBuffer>>,
    pub done_at: u64,
}

/// Mutable submission-side state, under one lock.
#[derive(Default)]
pub(crate) struct Submissions {
    /// The value the last submit signals.
    pub last_submitted: u64,
    /// Work to run at the start of the next submit.
    pub pending: Vec<Cmd>,
    /// Objects to destroy once the fence reaches the value.
    pub graveyard: Vec<(u64, Dead)>,
    /// Encoders whose command buffers are in flight.
    pub in_flight: Vec<InFlight>,
    /// Encoders ready for reuse.
    pub free_encoders: Vec<Box<dyn DynCommandEncoder>>,
    /// Mapping requests.
    pub maps: Vec<PendingMap>,
    /// Staging buffers for `Queue::write_*`: the one being filled (with its
    /// cursor), and those in flight or free for reuse.
    pub staging: crate::queue::StagingBelt,
    /// `on_submitted_work_done` callbacks with the submission they wait for.
    pub work_done: Vec<(u64, wgpu::custom::BoxSubmittedWorkDoneCallback)>,
}

/// One device's shared state.
pub(crate) struct DeviceShared {
    device: Box<dyn DynDevice>,
    queue: Box<dyn DynQueue>,
    pub fence: std::mem::ManuallyDrop<Box<dyn DynFence>>,
    pub features: wgpu::Features,
    pub limits: wgpu::Limits,
    pub info: wgpu::AdapterInfo,
    pub errors: ErrorSink,
    pub subs: Mutex<Submissions>,
    /// The fence value known complete (a cache of the fence).
    completed: AtomicU64,
    lost: AtomicBool,
    pub lost_callback: Mutex<Option<wgpu::custom::BoxDeviceLostCallback>>,
    /// Serialises submits so trackers see submissions in order.
    pub submit_lock: Mutex<()>,
    /// The GPU-side check of indirect dispatch counts (made at the first
    /// indirect dispatch; off where the adapter runs no shaders).
    pub indirect: crate::indirect_check::IndirectSlot,
    /// The buffers and textures alive, for the allocator report.
    pub live: crate::allocator_report::LiveResources,
    /// The keel-hal instance, dropped after the device (fields drop in order).
    _instance: Arc<keel_hal::dynamic::ChosenInstance>,
}

impl std::fmt::Debug for DeviceShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceShared")
            .field("info", &self.info.name)
            .field("completed", &self.completed.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl DeviceShared {
    pub(crate) fn new(
        hal: Box<dyn DynDevice>,
        queue: Box<dyn DynQueue>,
        fence: Box<dyn DynFence>,
        features: wgpu::Features,
        limits: wgpu::Limits,
        info: wgpu::AdapterInfo,
        instance: Arc<keel_hal::dynamic::ChosenInstance>,
    ) -> Self {
        Self {
            device: hal,
            queue,
            fence: std::mem::ManuallyDrop::new(fence),
            features,
            limits,
            info,
            errors: ErrorSink::default(),
            subs: Mutex::new(Submissions::default()),
            completed: AtomicU64::new(0),
            lost: AtomicBool::new(false),
            lost_callback: Mutex::new(None),
            submit_lock: Mutex::new(()),
            indirect: crate::indirect_check::IndirectSlot::new(false),
            live: Default::default(),
            _instance: instance,
        }
    }

    /// The state of a device whose indirect dispatches are checked on the
    /// GPU (`indirect_check::hal_limits` says where).
    pub(crate) fn with_indirect_check(mut self, enabled: bool) -> Self {
        self.indirect = crate::indirect_check::IndirectSlot::new(enabled);
        self
    }

    /// The keel-hal device. (Called on the `dyn` object itself: the boxes
    /// implement keel-hal's traits too, through `DynApi`, one layer up.)
    pub(crate) fn hal(&self) -> &dyn DynDevice {
        &*self.device
    }

    /// The keel-hal queue.
    pub(crate) fn queue(&self) -> &dyn DynQueue {
        &*self.queue
    }

    /// The device's indirect dispatch check, made at the first call
    /// (`None` where it is off: `indirect_check.rs`).
    pub(crate) fn indirect_check(
        &self,
    ) -> Result<Option<&crate::indirect_check::IndirectCheck>, String> {
        self.indirect.get(self.hal(), &self.limits, self.features)
    }

    /// Reports an error through the sink; a lost device also fires the
    /// device-lost callback once.
    ///
    /// As on wgpu-core, a lost (or destroyed) device reports nothing: its
    /// errors are `DeviceLost`, which wgpu drops, the lost callback telling
    /// the program instead.
    pub(crate) fn report(&self, error: KeelError) {
        if self.is_lost() {
            return;
        }
        if error.message.contains("device lost") {
            self.mark_lost("the driver reported the device lost");
            return;
        }
        self.errors.report(error);
    }

    pub(crate) fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// Latches loss and fires the device-lost callback once.
    pub(crate) fn mark_lost(&self, why: &str) {
        if self.lost.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some(callback) = self.lost_callback.lock().take() {
            callback(wgpu::DeviceLostReason::Unknown, why.to_string());
        }
    }

    /// Marks the device destroyed by its owner.
    pub(crate) fn destroy(&self) {
        if self.lost.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some(callback) = self.lost_callback.lock().take() {
            callback(wgpu::DeviceLostReason::Destroyed, String::new());
        }
    }

    /// The fence value last read complete (no fence query).
    pub(crate) fn known_complete(&self) -> u64 {
        self.completed.load(Ordering::Acquire)
    }

    /// The fence value known complete, read from the fence.
    pub(crate) fn completed(&self) -> u64 {
        // SAFETY: the fence belongs to this device and lives as long as it.
        match unsafe { self.hal().get_fence_value(&**self.fence) } {
            Ok(value) => {
                self.completed.fetch_max(value, Ordering::AcqRel);
                value
            }
            Err(e) => {
                self.report(KeelError::from_hal("poll", &e));
                self.completed.load(Ordering::Acquire)
            }
        }
    }

    /// Queues `dead` for destruction after submission `last_use`, or
    /// destroys it now when that is already done.
    pub(crate) fn bury(&self, last_use: u64, dead: Dead) {
        if last_use <= self.completed.load(Ordering::Acquire) {
            // SAFETY: no submission that can use the object is pending.
            unsafe { self.destroy_dead(dead) };
        } else {
            self.subs.lock().graveyard.push((last_use, dead));
        }
    }

    /// # Safety
    /// No pending submission uses the object.
    pub(crate) unsafe fn destroy_dead(&self, dead: Dead) {
        let hal = self.hal();
        // SAFETY: the caller's contract; every object came from `hal`.
        unsafe {
            match dead {
                Dead::Buffer(o) => hal.destroy_buffer(o),
                Dead::Texture(o) => hal.destroy_texture(o),
                Dead::View(o) => hal.destroy_texture_view(o),
                Dead::Sampler(o) => hal.destroy_sampler(o),
                Dead::QuerySet(o) => hal.destroy_query_set(o),
                Dead::BindGroupLayout(o) => hal.destroy_bind_group_layout(o),
                Dead::BindGroup(o) => hal.destroy_bind_group(o),
                Dead::PipelineLayout(o) => hal.destroy_pipeline_layout(o),
                Dead::ShaderModule(o) => hal.destroy_shader_module(o),
                Dead::ComputePipeline(o) => hal.destroy_compute_pipeline(o),
                Dead::RenderPipeline(o) => hal.destroy_render_pipeline(o),
            }
        }
    }

    /// Frees what completed submissions no longer need, recycles their
    /// encoders, and returns the map requests and callbacks now due (to be
    /// run without the lock held).
    pub(crate) fn maintain(&self) -> Vec<Box<dyn FnOnce() + Send>> {
        let done = self.completed();
        let mut fire: Vec<Box<dyn FnOnce() + Send>> = Vec::new();
        let mut dead = Vec::new();
        {
            let mut subs = self.subs.lock();
            let mut i = 0;
            while i < subs.graveyard.len() {
                if subs.graveyard[i].0 <= done {
                    dead.push(subs.graveyard.swap_remove(i).1);
                } else {
                    i += 1;
                }
            }
            let mut i = 0;
            while i < subs.in_flight.len() {
                if subs.in_flight[i].done_at <= done {
                    let mut flight = subs.in_flight.swap_remove(i);
                    // SAFETY: the fence passed `done_at`: none of these
                    // command buffers is pending; all came from this encoder.
                    unsafe {
                        flight
                            .encoder
                            .as_mut()
                            .reset_all(&mut flight.buffers.into_iter())
                    };
                    subs.free_encoders.push(flight.encoder);
                } else {
                    i += 1;
                }
            }
            subs.staging.recycle(done);
            let mut i = 0;
            while i < subs.maps.len() {
                if subs.maps[i].buffer.last_use() <= done {
                    let map = subs.maps.swap_remove(i);
                    fire.push(Box::new(move || map.buffer.finish_map(map.callback)));
                } else {
                    i += 1;
                }
            }
            let mut i = 0;
            while i < subs.work_done.len() {
                if subs.work_done[i].0 <= done {
                    let (_, callback) = subs.work_done.swap_remove(i);
                    fire.push(Box::new(callback));
                } else {
                    i += 1;
                }
            }
        }
        for dead in dead {
            // SAFETY: the fence passed the object's last use.
            unsafe { self.destroy_dead(dead) };
        }
        fire
    }

    /// Waits for submission `value` (all when `None`), up to `timeout`.
    pub(crate) fn wait_for(
        &self,
        value: Option<u64>,
        timeout: Option<std::time::Duration>,
    ) -> Result<bool, KeelError> {
        let last = self.subs.lock().last_submitted;
        let target = value.unwrap_or(last).min(last);
        if target == 0 {
            return Ok(true);
        }
        // SAFETY: the fence belongs to this device; `target` was submitted.
        unsafe { self.hal().wait(&**self.fence, target, timeout) }
            .map_err(|e| KeelError::from_hal("poll", &e))
    }

    /// An idle keel-hal encoder (from the pool, or new), begun with `label`.
    pub(crate) fn begin_encoder(
        &self,
        label: &str,
    ) -> Result<Box<dyn DynCommandEncoder>, KeelError> {
        let pooled = self.subs.lock().free_encoders.pop();
        let mut encoder = match pooled {
            Some(e) => e,
            // SAFETY: a plain creation on a live device.
            None => unsafe { self.hal().create_command_encoder(&Default::default()) }
                .map_err(|e| KeelError::from_hal("create_command_encoder", &e))?,
        };
        // SAFETY: the encoder is not recording (new or reset).
        if let Err(e) = unsafe { encoder.as_mut().begin_encoding(Some(label)) } {
            self.subs.lock().free_encoders.push(encoder);
            return Err(KeelError::from_hal("begin_encoding", &e));
        }
        Ok(encoder)
    }

    /// Resets `encoder` with `buffers` and puts it back in the pool.
    ///
    /// # Safety
    /// The buffers came from `encoder`, which is not recording, and none is
    /// pending on the GPU (never submitted, or done).
    pub(crate) unsafe fn recycle_encoder(
        &self,
        mut encoder: Box<dyn DynCommandEncoder>,
        buffers: Vec<Box<dyn DynCommandBuffer>>,
    ) {
        // SAFETY: the caller's contract.
        unsafe { encoder.as_mut().reset_all(&mut buffers.into_iter()) };
        self.subs.lock().free_encoders.push(encoder);
    }

    /// Destroys idle encoders and free staging memory (kept for reuse).
    pub(crate) fn release_caches(&self) {
        let (encoders, staging) = {
            let mut subs = self.subs.lock();
            (
                std::mem::take(&mut subs.free_encoders),
                subs.staging.take_free(),
            )
        };
        for encoder in encoders {
            // SAFETY: idle: not recording, nothing pending.
            unsafe { self.hal().destroy_command_encoder(encoder) };
        }
        drop(staging);
    }

    /// Runs what `maintain` found due.
    pub(crate) fn fire(callbacks: Vec<Box<dyn FnOnce() + Send>>) {
        for callback in callbacks {
            callback();
        }
    }
}

impl Drop for DeviceShared {
    fn drop(&mut self) {
        // Every wgpu object of this device is gone (each holds the shared
        // state); wait for the GPU, then free what remains.
        if let Err(e) = self.wait_for(None, None) {
            log::error!("keel-wgpu: waiting for the GPU at device drop: {e}");
        }
        let subs = std::mem::take(&mut *self.subs.lock());
        for (_, dead) in subs.graveyard {
            // SAFETY: the GPU is idle (waited above) or lost.
            unsafe { self.destroy_dead(dead) };
        }
        for mut flight in subs.in_flight {
            // SAFETY: as above; the buffers came from this encoder.
            unsafe {
                flight
                    .encoder
                    .as_mut()
                    .reset_all(&mut flight.buffers.into_iter());
                self.hal().destroy_command_encoder(flight.encoder);
            }
        }
        for encoder in subs.free_encoders {
            // SAFETY: not recording; nothing pending.
            unsafe { self.hal().destroy_command_encoder(encoder) };
        }
        drop(subs.pending);
        for map in subs.maps {
            (map.callback)(Err(wgpu::BufferAsyncError));
        }
        let hal = &*self.device;
        // SAFETY: the GPU is idle (waited above) or lost, every command
        // buffer and buffer (with its source group) is gone: each held
        // this state.
        unsafe { self.indirect.destroy(hal) };
        // SAFETY: `drop` runs once and nothing reads the fence after this.
        let fence = unsafe { std::mem::ManuallyDrop::take(&mut self.fence) };
        // SAFETY: nothing waits on the fence any more.
        unsafe { self.hal().destroy_fence(fence) };
    }
}
