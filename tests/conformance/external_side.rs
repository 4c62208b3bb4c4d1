//! Helpers of the external-memory tests: a second (and third) device of
//! the configuration's adapter opened with external hal features, one-shot
//! copies on it, and the open-fd count that leak checks compare.

use std::time::{Duration, Instant};

use keel_hal::wgt;
use keel_hal::{
    Adapter, Api, BufferCopy, BufferDescriptor, BufferTextureCopy, BufferUses, CommandEncoder,
    Device, DeviceDescriptor, ExternalSubmission, HalFeatures, LiveCounts, Memory,
    OwnershipTransfer, Queue, SemaphoreSignal, SemaphoreWait, TextureUses,
};

use crate::harness::{Ctx, Failure};
use crate::helpers::{buffer_barrier, texture_barrier, SENTINEL};

pub use crate::fds::open_fds;

/// Checks that the process has no more fds open than `baseline`. Tests run
/// in parallel, and another test may hold a transient fd (a Vulkan loader
/// reading its manifests) for a moment, so the count is given a second to
/// settle; a leaked fd never goes.
pub fn check_fds(baseline: usize, what: &str) -> Result<(), Failure> {
    let deadline = Instant::now() + Duration::from_secs(1);
    loop {
        let now = open_fds();
        if now <= baseline {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "{what}: {} fd(s) leaked ({baseline} → {now})",
                now - baseline
            )
            .into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A device and its queue, opened for a test with external hal features.
pub struct Side<A: Api> {
    pub device: A::Device,
    pub queue: A::Queue,
}

impl<A: Api> Side<A> {
    /// Opens a device on the configuration's adapter with `features`, or
    /// `None` when the adapter lacks them.
    pub fn open(ctx: &Ctx<A>, features: HalFeatures) -> Result<Option<Self>, Failure> {
        Self::open_with(ctx, wgt::Features::empty(), features)
    }

    /// As [`Self::open`], asking for `wgpu-types` features too.
    pub fn open_with(
        ctx: &Ctx<A>,
        wgt_features: wgt::Features,
        features: HalFeatures,
    ) -> Result<Option<Self>, Failure> {
        if !ctx.caps.hal_features.contains(features) || !ctx.caps.features.contains(wgt_features) {
            return Ok(None);
        }
        let desc = DeviceDescriptor {
            label: Some("external"),
            required_features: wgt_features,
            required_hal_features: features,
            ..Default::default()
        };
        // SAFETY: the adapter is live; the device is dropped before it.
        let open = unsafe { ctx.adapter.open(&desc) }?;
        Ok(Some(Self {
            device: open.device,
            queue: open.queue,
        }))
    }

    /// Fails unless every object made on this device is gone.
    pub fn check_clean(&self, what: &str) -> Result<(), Failure> {
        let live = self.device.live_counts();
        check_eq!(
            live,
            LiveCounts::default(),
            "{what}: objects left on the device"
        );
        Ok(())
    }

    /// Records with `record`, submits (through `submit_external` when there
    /// are waits or signals), and waits for the fence.
    ///
    /// # Safety
    /// Everything recorded or named came from this device and is in the
    /// states the commands expect; binary waits have their signal submitted.
    pub unsafe fn run(
        &self,
        waits: &[SemaphoreWait<'_, A::ExternalSemaphore>],
        signals: &[SemaphoreSignal<'_, A::ExternalSemaphore>],
        record: impl FnOnce(&mut A::CommandEncoder),
    ) -> Result<(), Failure> {
        // SAFETY: live device.
        let mut encoder = unsafe { self.device.create_command_encoder(&Default::default()) }?;
        // SAFETY: idle encoder.
        let begun = unsafe { encoder.begin_encoding(Some("external")) };
        let result = begun.map_err(Failure::from).and_then(|()| {
            record(&mut encoder);
            // SAFETY: recording.
            let commands = unsafe { encoder.end_encoding() }?;
            // SAFETY: live device.
            let fence = unsafe { self.device.create_fence() };
            let done = fence.map_err(Failure::from).and_then(|fence| {
                let submission = ExternalSubmission {
                    command_buffers: &[&commands],
                    waits,
                    signals,
                    fence: Some((&fence, 1)),
                };
                // SAFETY: forwarded contract; the fence is new (0 < 1).
                let submitted = if waits.is_empty() && signals.is_empty() {
                    unsafe { self.queue.submit(&[&commands], &[], &fence, 1) }
                } else {
                    unsafe { self.queue.submit_external(&submission) }
                };
                // SAFETY: the submission signals 1.
                let waited = submitted.and_then(|()| unsafe { self.device.wait(&fence, 1, None) });
                // SAFETY: waited for, or nothing is pending.
                unsafe { self.device.destroy_fence(fence) };
                match waited {
                    Ok(true) => Ok(()),
                    Ok(false) => Err("an unbounded wait returned early".into()),
                    Err(e) => Err(e.into()),
                }
            });
            // SAFETY: the command buffer is done (or was never submitted).
            unsafe { encoder.reset_all([commands]) };
            done
        });
        // SAFETY: nothing it recorded is pending.
        unsafe { self.device.destroy_command_encoder(encoder) };
        result
    }

    /// A mappable buffer of `memory` kind holding `bytes` (or `size`
    /// sentinel bytes when `bytes` is empty).
    ///
    /// # Safety
    /// The caller destroys the buffer on this device.
    pub unsafe fn staging(
        &self,
        memory: Memory,
        size: u64,
        bytes: &[u8],
    ) -> Result<A::Buffer, Failure> {
        let usage = wgt::BufferUsages::COPY_SRC
            | wgt::BufferUsages::COPY_DST
            | if memory == Memory::Upload {
                wgt::BufferUsages::MAP_WRITE
            } else {
                wgt::BufferUsages::MAP_READ
            };
        let desc = BufferDescriptor {
            label: Some("external staging"),
            size,
            usage,
            memory,
        };
        // SAFETY: live device.
        let buffer = unsafe { self.device.create_buffer(&desc) }?;
        let fill = if bytes.is_empty() {
            vec![SENTINEL; size as usize]
        } else {
            bytes.to_vec()
        };
        // SAFETY: a new mappable buffer the GPU does not use.
        match unsafe { self.device.map_buffer(&buffer) } {
            Ok(map) if map.size >= fill.len() as u64 => {
                // SAFETY: the mapping holds `fill.len()` bytes.
                unsafe {
                    std::ptr::copy_nonoverlapping(fill.as_ptr(), map.ptr.as_ptr(), fill.len())
                };
                Ok(buffer)
            }
            other => {
                // SAFETY: never used.
                unsafe { self.device.destroy_buffer(buffer) };
                Err(format!("mapping the staging buffer: {other:?}").into())
            }
        }
    }

    /// Reads a mappable buffer's first `size` bytes.
    ///
    /// # Safety
    /// Mappable, of this device, no GPU work pending on it.
    pub unsafe fn mapped(&self, buffer: &A::Buffer, size: u64) -> Result<Vec<u8>, Failure> {
        // SAFETY: forwarded contract.
        let map = unsafe { self.device.map_buffer(buffer) }?;
        check!(
            map.size >= size,
            "mapping of {} bytes, {size} wanted",
            map.size
        );
        // SAFETY: the mapping covers `size` bytes; nothing writes them now.
        Ok(unsafe { std::slice::from_raw_parts(map.ptr.as_ptr(), size as usize) }.to_vec())
    }

    /// Copies `bytes` into `dst` (through an upload buffer), then releases
    /// `dst` to the outside world in `COPY_DST`, signalling `signals`.
    ///
    /// # Safety
    /// `dst` came from this device, has room and external memory; nothing
    /// else uses it meanwhile.
    pub unsafe fn write_buffer(
        &self,
        dst: &A::Buffer,
        bytes: &[u8],
        signals: &[SemaphoreSignal<'_, A::ExternalSemaphore>],
    ) -> Result<(), Failure> {
        let size = bytes.len() as u64;
        // SAFETY: destroyed below, after the wait.
        let src = unsafe { self.staging(Memory::Upload, size, bytes) }?;
        // SAFETY: both buffers are this device's; the copy is waited for.
        let done = unsafe {
            self.run(&[], signals, |e| {
                e.transition_buffers(&[
                    buffer_barrier(&src, BufferUses::empty(), BufferUses::COPY_SRC),
                    buffer_barrier(dst, BufferUses::empty(), BufferUses::COPY_DST),
                ]);
                e.copy_buffer_to_buffer(&src, dst, &[copy(size)]);
                e.transfer_ownership(
                    OwnershipTransfer::Release,
                    &[buffer_barrier(
                        dst,
                        BufferUses::COPY_DST,
                        BufferUses::COPY_DST,
                    )],
                    &[],
                );
            })
        };
        // SAFETY: waited for (or never submitted).
        unsafe { self.device.destroy_buffer(src) };
        done
    }

    /// Acquires `src` from the outside world (after `waits`) and reads its
    /// first `size` bytes back.
    ///
    /// # Safety
    /// `src` came from this device and has external memory written by the
    /// other side, which finished (a fence waited for, or `waits`).
    pub unsafe fn read_buffer(
        &self,
        src: &A::Buffer,
        size: u64,
        waits: &[SemaphoreWait<'_, A::ExternalSemaphore>],
    ) -> Result<Vec<u8>, Failure> {
        // SAFETY: destroyed below, after the wait.
        let dst = unsafe { self.staging(Memory::Readback, size, &[]) }?;
        // SAFETY: both buffers are this device's; the copy is waited for.
        let done = unsafe {
            self.run(waits, &[], |e| {
                e.transfer_ownership(
                    OwnershipTransfer::Acquire,
                    &[buffer_barrier(
                        src,
                        BufferUses::COPY_DST,
                        BufferUses::COPY_SRC,
                    )],
                    &[],
                );
                e.transition_buffers(&[buffer_barrier(
                    &dst,
                    BufferUses::empty(),
                    BufferUses::COPY_DST,
                )]);
                e.copy_buffer_to_buffer(src, &dst, &[copy(size)]);
                e.transition_buffers(&[buffer_barrier(
                    &dst,
                    BufferUses::COPY_DST,
                    BufferUses::MAP_READ,
                )]);
            })
        };
        // SAFETY: the copy finished.
        let bytes = done.and_then(|()| unsafe { self.mapped(&dst, size) });
        // SAFETY: waited for (or never submitted).
        unsafe { self.device.destroy_buffer(dst) };
        bytes
    }

    /// Writes `bytes` into a 2D texture of `extent` (4-byte texels, rows of
    /// 256-byte multiples) and releases it in `COPY_SRC`; or, with `bytes`
    /// empty, acquires it from `COPY_SRC` and reads it back.
    ///
    /// # Safety
    /// The texture came from this device with external memory, copy usages
    /// and a 4-byte format; the other side's work on it finished.
    pub unsafe fn texture_bytes(
        &self,
        texture: &A::Texture,
        width: u32,
        height: u32,
        bytes: &[u8],
    ) -> Result<Vec<u8>, Failure> {
        let row = u64::from(width) * 4;
        check!(
            row % 256 == 0,
            "texture rows must be multiples of 256 bytes"
        );
        let size = row * u64::from(height);
        let region = BufferTextureCopy {
            buffer_layout: wgt::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(row as u32),
                rows_per_image: Some(height),
            },
            texture_base: Default::default(),
            size: wgt::Extent3d {
                width,
                height,
                depth_or_array_layers: 1,
            },
        };
        let writing = !bytes.is_empty();
        let memory = if writing {
            Memory::Upload
        } else {
            Memory::Readback
        };
        // SAFETY: destroyed below, after the wait.
        let staging = unsafe { self.staging(memory, size, bytes) }?;
        let t = |from, to| texture_barrier(texture, from, to);
        // SAFETY: all this device's; waited for.
        let done = unsafe {
            self.run(&[], &[], |e| {
                if writing {
                    e.transition_buffers(&[buffer_barrier(
                        &staging,
                        BufferUses::empty(),
                        BufferUses::COPY_SRC,
                    )]);
                    e.transition_textures(&[t(TextureUses::UNINITIALIZED, TextureUses::COPY_DST)]);
                    e.copy_buffer_to_texture(&staging, texture, &[region]);
                    e.transition_textures(&[t(TextureUses::COPY_DST, TextureUses::COPY_SRC)]);
                    e.transfer_ownership(
                        OwnershipTransfer::Release,
                        &[],
                        &[t(TextureUses::COPY_SRC, TextureUses::COPY_SRC)],
                    );
                } else {
                    e.transfer_ownership(
                        OwnershipTransfer::Acquire,
                        &[],
                        &[t(TextureUses::COPY_SRC, TextureUses::COPY_SRC)],
                    );
                    e.transition_buffers(&[buffer_barrier(
                        &staging,
                        BufferUses::empty(),
                        BufferUses::COPY_DST,
                    )]);
                    e.copy_texture_to_buffer(texture, TextureUses::COPY_SRC, &staging, &[region]);
                    e.transition_buffers(&[buffer_barrier(
                        &staging,
                        BufferUses::COPY_DST,
                        BufferUses::MAP_READ,
                    )]);
                }
            })
        };
        // SAFETY: the copy finished.
        let out = done.and_then(|()| unsafe { self.mapped(&staging, size) });
        // SAFETY: waited for (or never submitted).
        unsafe { self.device.destroy_buffer(staging) };
        out
    }
}

/// A whole-buffer copy of `size` bytes.
pub fn copy(size: u64) -> BufferCopy {
    BufferCopy {
        src_offset: 0,
        dst_offset: 0,
        size,
    }
}
