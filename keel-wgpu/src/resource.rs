//! Buffers, textures, views, samplers and query sets: a keel-hal object, the
//! state the usage tracker keeps for it, and its place in the destruction
//! queue.

use std::ops::Range;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use keel_hal::dynamic::{
    DynBindGroup, DynBuffer, DynQuerySet, DynSampler, DynTexture, DynTextureView, SurfaceTextureBox,
};
use keel_hal::{BufferUses, Memory, TextureUses};
use parking_lot::Mutex;

use crate::error::KeelError;
use crate::shared::{Dead, DeviceShared};
use crate::surface::SurfaceInner;

/// The submission that last used an object; objects that own others pass
/// theirs on when they go, so an owned object never outlives its user's
/// last submission.
#[derive(Debug, Default)]
pub(crate) struct LastUse(AtomicU64);

impl LastUse {
    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
    pub(crate) fn bump(&self, submission: u64) {
        self.0.fetch_max(submission, Ordering::AcqRel);
    }
}

/// Where a buffer's mapping stands.
#[derive(Debug, Default)]
pub(crate) enum MapState {
    #[default]
    Idle,
    /// `map_async` was called; the callback waits for the GPU.
    Pending { range: Range<u64> },
    /// Mapped: `ptr` is the buffer's offset 0.
    Mapped {
        ptr: usize,
        range: Range<u64>,
        /// For `mapped_at_creation` of a buffer the CPU cannot see: the
        /// staging buffer written instead, copied at `unmap`.
        staging: Option<Arc<Buffer>>,
    },
}

/// A buffer.
#[derive(Debug)]
pub(crate) struct Buffer {
    pub shared: Arc<DeviceShared>,
    pub raw: Option<Box<dyn DynBuffer>>,
    /// The program's label (empty without one), for error messages.
    pub label: String,
    pub size: u64,
    pub usage: wgpu::BufferUsages,
    pub memory: Memory,
    pub last_use: LastUse,
    /// The tracker's state: the usage the last recorded command left.
    pub state: Mutex<BufferUses>,
    pub map: Mutex<MapState>,
    /// `map_async` was called since the last `unmap`, whatever came of it:
    /// wgpu's own bookkeeping then takes the buffer for mapped, and leaves
    /// `get_mapped_range` to keel-wgpu.
    pub map_asked: AtomicBool,
    pub destroyed: AtomicBool,
    /// The byte ranges no command has written yet (device memory; sorted,
    /// disjoint, 4-aligned): the replay clears those a command would read
    /// before it runs, and a command that writes a whole range takes it
    /// out without a clear (wgpu-core's per-range init tracking).
    pub uninit: Mutex<Vec<Range<u64>>>,
    /// An indirect buffer's bind group for the device's indirect dispatch
    /// check (`indirect_check.rs`), made at its first checked dispatch.
    pub indirect_source: OnceLock<Box<dyn DynBindGroup>>,
}

impl Buffer {
    /// How wgpu names the buffer in its messages.
    pub(crate) fn ident(&self) -> String {
        format!("Buffer with '{}' label", self.label)
    }

    pub(crate) fn last_use(&self) -> u64 {
        self.last_use.get()
    }

    /// Takes `range` (which a command writes all of) out of the
    /// uninitialised ranges.
    pub(crate) fn mark_written(&self, range: Range<u64>) {
        let mut uninit = self.uninit.lock();
        if uninit.is_empty() || range.is_empty() {
            return;
        }
        let mut kept = Vec::with_capacity(uninit.len() + 1);
        for r in uninit.drain(..) {
            if r.end <= range.start || r.start >= range.end {
                kept.push(r);
                continue;
            }
            // Keep what lies outside `range`, widened to 4 bytes so the
            // clear stays aligned (over-clearing a written byte is never
            // seen: the clear runs before the write).
            if r.start < range.start {
                kept.push(r.start..range.start.next_multiple_of(4).min(r.end));
            }
            if range.end < r.end {
                kept.push((range.end / 4 * 4).max(r.start)..r.end);
            }
        }
        *uninit = kept;
    }

    /// Takes every uninitialised range, leaving none.
    pub(crate) fn take_uninit(&self) -> Vec<Range<u64>> {
        std::mem::take(&mut *self.uninit.lock())
    }

    /// The keel-hal buffer whatever its state (destroyed or mapped: a
    /// command buffer encoded with it is refused at submit, and the handle
    /// lives as long as this object), or why there is none.
    pub(crate) fn handle(&self) -> Result<&dyn DynBuffer, String> {
        self.raw
            .as_deref()
            .ok_or_else(|| format!("{} is invalid", self.ident()))
    }

    /// The keel-hal buffer for a bind group: not destroyed, mapped or not
    /// (wgpu-core's `Buffer::binding` checks `try_raw` only; a submit that
    /// uses the buffer while mapped is refused).
    pub(crate) fn bindable(&self) -> Result<&dyn DynBuffer, String> {
        if self.destroyed.load(Ordering::Acquire) {
            return Err(format!("{} has been destroyed", self.ident()));
        }
        self.raw
            .as_deref()
            .ok_or_else(|| format!("{} is invalid", self.ident()))
    }

    /// The keel-hal buffer, or the reason it cannot be used.
    pub(crate) fn raw(&self) -> Result<&dyn DynBuffer, String> {
        if self.destroyed.load(Ordering::Acquire) {
            return Err(format!("{} has been destroyed", self.ident()));
        }
        if !matches!(*self.map.lock(), MapState::Idle) {
            return Err("the buffer is mapped (or a mapping is pending): unmap it first".into());
        }
        self.raw
            .as_deref()
            .ok_or_else(|| format!("{} is invalid", self.ident()))
    }

    /// Runs a mapping that the GPU no longer stands in the way of.
    pub(crate) fn finish_map(&self, callback: wgpu::custom::BufferMapCallback) {
        let mut map = self.map.lock();
        let range = match &*map {
            MapState::Pending { range, .. } => range.clone(),
            // Unmapped (or destroyed) before the GPU got there.
            _ => {
                drop(map);
                callback(Err(wgpu::BufferAsyncError));
                return;
            }
        };
        let Some(raw) = self.raw.as_deref() else {
            *map = MapState::Idle;
            drop(map);
            callback(Err(wgpu::BufferAsyncError));
            return;
        };
        if self.destroyed.load(Ordering::Acquire) {
            *map = MapState::Idle;
            drop(map);
            callback(Err(wgpu::BufferAsyncError));
            return;
        }
        // SAFETY: the buffer came from this device and no pending
        // submission uses it (its last use is complete).
        match unsafe { self.shared.hal().map_buffer(raw) } {
            Ok(mapping) => {
                *map = MapState::Mapped {
                    ptr: mapping.ptr.as_ptr() as usize,
                    range,
                    staging: None,
                };
                drop(map);
                callback(Ok(()));
            }
            Err(e) => {
                *map = MapState::Idle;
                drop(map);
                self.shared.report(KeelError::from_hal("map_async", &e));
                callback(Err(wgpu::BufferAsyncError));
            }
        }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        let map = std::mem::take(self.map.get_mut());
        if let MapState::Mapped { staging, .. } = map {
            if let Some(raw) = self.raw.as_deref() {
                if self.memory.is_mappable() {
                    // SAFETY: mapped by this device; nothing uses the pointer now.
                    unsafe { self.shared.hal().unmap_buffer(raw) };
                }
            }
            drop(staging);
        }
        // The check's group over the buffer goes with it.
        if let Some(group) = self.indirect_source.take() {
            self.shared
                .bury(self.last_use.get(), Dead::BindGroup(group));
        }
        if let Some(raw) = self.raw.take() {
            self.shared.bury(self.last_use.get(), Dead::Buffer(raw));
        }
    }
}

/// A texture.
#[derive(Debug)]
pub(crate) struct Texture {
    pub shared: Arc<DeviceShared>,
    pub raw: Option<Box<dyn DynTexture>>,
    /// The program's label (empty without one), for error messages.
    pub label: String,
    pub size: wgpu::Extent3d,
    pub mip_level_count: u32,
    pub sample_count: u32,
    pub dimension: wgpu::TextureDimension,
    pub format: wgpu::TextureFormat,
    pub usage: wgpu::TextureUsages,
    /// The formats views of it may have besides its own.
    pub view_formats: Vec<wgpu::TextureFormat>,
    pub last_use: LastUse,
    /// The tracker's state per subresource, `layer * mips + mip`;
    /// `UNINITIALIZED` until first written (reads of it clear it first).
    pub states: Mutex<Vec<TextureUses>>,
    pub destroyed: AtomicBool,
    /// For a surface frame: the frame (until presented or discarded) and
    /// its surface.
    pub frame: Mutex<Option<SurfaceTextureBox>>,
    pub surface: Option<Arc<SurfaceInner>>,
}

impl Texture {
    /// A texture over a frame acquired from `surface`.
    pub(crate) fn from_frame(
        shared: &Arc<DeviceShared>,
        frame: SurfaceTextureBox,
        surface: Arc<SurfaceInner>,
        config: &wgpu::SurfaceConfiguration,
    ) -> Self {
        Self {
            shared: shared.clone(),
            raw: None,
            label: "surface frame".into(),
            size: wgpu::Extent3d {
                width: config.width,
                height: config.height,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: config.format,
            usage: config.usage,
            view_formats: config.view_formats.clone(),
            last_use: LastUse::default(),
            states: Mutex::new(vec![TextureUses::UNINITIALIZED]),
            destroyed: AtomicBool::new(false),
            frame: Mutex::new(Some(frame)),
            surface: Some(surface),
        }
    }

    /// How wgpu names the texture in its messages.
    pub(crate) fn ident(&self) -> String {
        format!("Texture with '{}' label", self.label)
    }

    /// Whether this is a surface frame.
    pub(crate) fn is_frame(&self) -> bool {
        self.surface.is_some()
    }

    /// Marks the texture unusable (destroyed or presented).
    pub(crate) fn mark_destroyed(&self) {
        self.destroyed.store(true, Ordering::Release);
    }

    /// Gives an unpresented frame back to its surface. The caller holds the
    /// device's submit lock (or owns the last reference).
    pub(crate) fn discard_frame(&self) {
        self.mark_destroyed();
        let frame = self.frame.lock().take();
        if let (Some(frame), Some(surface)) = (frame, &self.surface) {
            surface.discard(frame);
        }
    }

    /// Array layers (a 3D texture has one).
    pub(crate) fn layers(&self) -> u32 {
        match self.dimension {
            wgpu::TextureDimension::D3 => 1,
            _ => self.size.depth_or_array_layers,
        }
    }

    /// The keel-hal texture even if destroyed (a command buffer encoded
    /// with it is refused at submit), or why there is none. For a surface
    /// frame, as [`Texture::raw`].
    pub(crate) fn handle(&self) -> Result<&dyn DynTexture, String> {
        if self.is_frame() {
            return self.raw();
        }
        self.raw
            .as_deref()
            .ok_or_else(|| format!("{} is invalid", self.ident()))
    }

    /// The keel-hal texture, or why it cannot be used. For a surface
    /// frame, the caller holds the device's submit lock.
    pub(crate) fn raw(&self) -> Result<&dyn DynTexture, String> {
        if self.destroyed.load(Ordering::Acquire) {
            return Err(format!(
                "{} has been destroyed (or presented)",
                self.ident()
            ));
        }
        if self.is_frame() {
            let frame = self.frame.lock();
            let texture: *const dyn DynTexture = frame
                .as_ref()
                .ok_or("the frame was presented or discarded")?
                .texture();
            drop(frame);
            // SAFETY: a frame leaves its slot only in `present` and
            // `discard_frame`, which hold the submit lock (as the caller
            // does) and mark the texture destroyed first; the box's
            // contents do not move while it stays in the slot.
            return Ok(unsafe { &*texture });
        }
        self.raw
            .as_deref()
            .ok_or_else(|| format!("{} is invalid", self.ident()))
    }

    /// The physical size of mip level `mip`: its size rounded up to whole
    /// texel blocks (wgpu's term; the 1×1 mip of a BC texture is 4×4).
    pub(crate) fn physical_mip_size(&self, mip: u32) -> wgpu::Extent3d {
        let (bw, bh) = self.format.block_dimensions();
        let size = self.mip_size(mip);
        wgpu::Extent3d {
            width: size.width.next_multiple_of(bw.max(1)),
            height: size.height.next_multiple_of(bh.max(1)),
            ..size
        }
    }

    /// The one check of a copy region on this texture (every copy command
    /// and `Queue::write_texture` call it, with wgpu-core's words): the mip
    /// level exists, origin and size are whole blocks, and the region lies
    /// in the level's physical size and the texture's layers (or depth).
    pub(crate) fn check_copy(
        &self,
        mip_level: u32,
        origin: wgpu::Origin3d,
        size: &wgpu::Extent3d,
        side: &str,
    ) -> Result<(), String> {
        if mip_level >= self.mip_level_count {
            return Err(format!(
                "Unable to select texture mip level {mip_level} out of {}",
                self.mip_level_count
            ));
        }
        let (bw, bh) = self.format.block_dimensions();
        if !origin.x.is_multiple_of(bw) {
            return Err("Copy origin's x component is not a multiple of block width".into());
        }
        if !origin.y.is_multiple_of(bh) {
            return Err("Copy origin's y component is not a multiple of block height".into());
        }
        if !size.width.is_multiple_of(bw) {
            return Err("Copy width is not a multiple of block width".into());
        }
        if !size.height.is_multiple_of(bh) {
            return Err("Copy height is not a multiple of block height".into());
        }
        let physical = self.physical_mip_size(mip_level);
        for (dimension, start, len, total) in [
            ("X", origin.x, size.width, physical.width),
            ("Y", origin.y, size.height, physical.height),
            (
                "Z",
                origin.z,
                size.depth_or_array_layers,
                physical.depth_or_array_layers,
            ),
        ] {
            if start.checked_add(len).is_none_or(|end| end > total) {
                return Err(format!(
                    "Copy of {dimension} {start}..{} would end up overrunning the bounds of \
                     the {side} texture of {dimension} size {total}",
                    start.saturating_add(len)
                ));
            }
        }
        Ok(())
    }

    /// The size of mip level `mip`.
    pub(crate) fn mip_size(&self, mip: u32) -> wgpu::Extent3d {
        let shift = |v: u32| v.checked_shr(mip).unwrap_or(0).max(1);
        wgpu::Extent3d {
            width: shift(self.size.width),
            height: shift(self.size.height),
            depth_or_array_layers: match self.dimension {
                wgpu::TextureDimension::D3 => shift(self.size.depth_or_array_layers),
                _ => self.size.depth_or_array_layers,
            },
        }
    }
}

impl Drop for Texture {
    fn drop(&mut self) {
        // A frame never presented: its surface takes it back (no one else
        // holds this texture now).
        self.discard_frame();
        if let Some(raw) = self.raw.take() {
            self.shared.bury(self.last_use.get(), Dead::Texture(raw));
        }
    }
}

/// A texture view: which mips, layers and aspect of which texture.
#[derive(Debug)]
pub(crate) struct TextureView {
    pub shared: Arc<DeviceShared>,
    pub raw: Option<Box<dyn DynTextureView>>,
    pub texture: Arc<Texture>,
    /// The view's format (the texture's unless the view names another).
    pub format: wgpu::TextureFormat,
    /// The view's dimension, resolved as wgpu-core resolves it.
    pub dimension: wgpu::TextureViewDimension,
    /// The view's usage (the texture's unless the view names a subset):
    /// bindings and attachments check this one, as wgpu-core does.
    pub usage: wgpu::TextureUsages,
    pub aspect: wgpu::TextureAspect,
    pub mips: Range<u32>,
    pub layers: Range<u32>,
    pub last_use: LastUse,
}

impl TextureView {
    /// As [`Texture::handle`], for the view.
    pub(crate) fn handle(&self) -> Result<&dyn DynTextureView, String> {
        self.texture.handle()?;
        self.raw
            .as_deref()
            .ok_or_else(|| "the texture view is invalid".into())
    }

    pub(crate) fn raw(&self) -> Result<&dyn DynTextureView, String> {
        self.texture.raw()?;
        self.raw
            .as_deref()
            .ok_or_else(|| "the texture view is invalid".into())
    }

    /// The extent of the view's first mip level.
    pub(crate) fn extent(&self) -> wgpu::Extent3d {
        let mut size = self.texture.mip_size(self.mips.start);
        if self.texture.dimension != wgpu::TextureDimension::D3 {
            size.depth_or_array_layers = self.layers.end - self.layers.start;
        }
        size
    }
}

impl Drop for TextureView {
    fn drop(&mut self) {
        let last = self.last_use.get();
        self.texture.last_use.bump(last);
        if let Some(raw) = self.raw.take() {
            self.shared.bury(last, Dead::View(raw));
        }
    }
}

/// A sampler.
#[derive(Debug)]
pub(crate) struct Sampler {
    pub shared: Arc<DeviceShared>,
    pub raw: Option<Box<dyn DynSampler>>,
    pub last_use: LastUse,
    /// Whether it filters (any linear filter), checked against a
    /// non-filtering binding as wgpu-core does.
    pub filtering: bool,
}

impl Drop for Sampler {
    fn drop(&mut self) {
        if let Some(raw) = self.raw.take() {
            self.shared.bury(self.last_use.get(), Dead::Sampler(raw));
        }
    }
}

/// A query set.
#[derive(Debug)]
pub(crate) struct QuerySet {
    pub shared: Arc<DeviceShared>,
    pub raw: Option<Box<dyn DynQuerySet>>,
    /// The program's label (empty without one), for error messages.
    pub label: String,
    pub ty: wgpu::QueryType,
    pub count: u32,
    pub last_use: LastUse,
    /// `QuerySet::destroy` was called: a submit that uses the set fails
    /// (wgpu-core's `try_raw` at submit). The keel-hal set stays until the
    /// last reference goes.
    pub destroyed: AtomicBool,
    /// The queries submitted work has written (one flag per query): a
    /// resolve of a query no work wrote reads zeros instead (wgpu-core's
    /// deferred resolves), never an unwritten Vulkan query.
    pub written: Mutex<Vec<bool>>,
}

impl QuerySet {
    /// How wgpu names the set in its messages.
    pub(crate) fn ident(&self) -> String {
        format!("QuerySet with '{}' label", self.label)
    }
}

impl Drop for QuerySet {
    fn drop(&mut self) {
        if let Some(raw) = self.raw.take() {
            self.shared.bury(self.last_use.get(), Dead::QuerySet(raw));
        }
    }
}

/// A mapped range handed to wgpu.
#[derive(Debug)]
pub(crate) struct MappedRange {
    pub ptr: NonNull<u8>,
    pub len: usize,
}

// SAFETY: the range points into a mapping that wgpu keeps alive (and
// exclusive) for the range's lifetime; it is plain memory.
unsafe impl Send for MappedRange {}
// SAFETY: as above.
unsafe impl Sync for MappedRange {}
