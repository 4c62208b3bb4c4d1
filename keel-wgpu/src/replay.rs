//! The usage tracker: replays recorded commands into a keel-hal encoder at
//! submit, in submission order, and puts a keel-hal barrier before every
//! command whose resources were last left in another usage (buffers whole,
//! textures per mip level and array layer). What wgpu-core's trackers do,
//! with the states kept on the resources themselves.
//!
//! Textures start `UNINITIALIZED`; the first read of such a subresource
//! clears it to zero first (wgpu's rule), while a write that covers it
//! (a cleared or discarded attachment, `clear_texture`) does not.

use std::ops::Range;
use std::sync::Arc;

use arrayvec::ArrayVec;
use keel_hal::dynamic::{DynBuffer, DynCommandEncoder, DynResources};
use keel_hal::{BufferBarrier, BufferUses, StateTransition, TextureBarrier, TextureUses};

use crate::binding::BindGroup;
use crate::command::Encoded;
use crate::command::{
    Cmd, ComputePassRecord, DrawFamily, GroupTable, PassCmd, PassTimestamps, RenderPassRecord,
    TexelBase,
};
use crate::error::KeelError;
use crate::indirect_check::{CheckedDraws, DrawPlan};
use crate::ptr_map::PtrMap;
use crate::resource::{Buffer, QuerySet, Texture, TextureView};
use crate::shared::DeviceShared;
use crate::tracker::{Tracker, Used};

pub(crate) const BUFFER_WRITES: BufferUses = BufferUses::COPY_DST
    .union(BufferUses::STORAGE_READ_WRITE)
    .union(BufferUses::QUERY_RESOLVE)
    .union(BufferUses::MAP_WRITE);
pub(crate) const TEXTURE_WRITES: TextureUses = TextureUses::COPY_DST
    .union(TextureUses::COLOR_TARGET)
    .union(TextureUses::DEPTH_STENCIL_WRITE)
    .union(TextureUses::STORAGE_READ_WRITE);

/// The resources one usage scope (a dispatch, a render pass, a copy) uses.
/// A render pass may name the same groups and buffers thousands of times:
/// [`Replay::render_scope`] takes each bind group once, and buffers are
/// found through an index once there are more than a few. (A compute pass
/// keeps one scope and clears it before each dispatch, so its lists grow
/// on the pass's first dispatches and then reuse their storage.)
#[derive(Default)]
struct Scope<'c> {
    buffers: Vec<(&'c Arc<Buffer>, BufferUses)>,
    views: Vec<(&'c Arc<TextureView>, TextureUses, bool)>,
    /// Buffer → position in `buffers`, built past [`Scope::LINEAR`] buffers.
    buffer_index: PtrMap<usize>,
}

impl<'c> Scope<'c> {
    /// Up to this many buffers a linear search is cheaper than the index.
    const LINEAR: usize = 8;

    fn buffer(&mut self, buffer: &'c Arc<Buffer>, usage: BufferUses) {
        let key = Arc::as_ptr(buffer) as usize;
        let found = if self.buffers.len() <= Self::LINEAR {
            self.buffers
                .iter()
                .position(|(b, _)| Arc::ptr_eq(b, buffer))
        } else {
            if self.buffer_index.is_empty() {
                for (i, (b, _)) in self.buffers.iter().enumerate() {
                    self.buffer_index.insert(Arc::as_ptr(b) as usize, i);
                }
            }
            self.buffer_index.get(&key).copied()
        };
        match found {
            Some(i) => self.buffers[i].1 |= usage,
            None => {
                if !self.buffer_index.is_empty() {
                    self.buffer_index.insert(key, self.buffers.len());
                }
                self.buffers.push((buffer, usage));
            }
        }
    }
    /// Empties the scope, keeping its storage (a compute pass reuses one
    /// scope for every dispatch).
    fn clear(&mut self) {
        self.buffers.clear();
        self.views.clear();
        self.buffer_index.clear();
    }
    fn group(&mut self, group: &'c Arc<BindGroup>) {
        for b in &group.buffers {
            self.buffer(&b.buffer, b.usage);
        }
        for (view, usage) in &group.views {
            self.views.push((view, *usage, false));
        }
    }
}

/// One submission's replay.
pub(crate) struct Replay<'a> {
    enc: &'a mut dyn DynCommandEncoder,
    submission: u64,
    readbacks: Vec<Arc<Buffer>>,
    /// Surface frames used: the submit names them.
    frames: Vec<Arc<Texture>>,
    errors: Vec<String>,
    /// A buffer whose unwritten ranges the current scope leaves alone (the
    /// destination of a command that writes a whole range of it).
    exempt: Option<usize>,
    /// Encoding a command buffer on its own (`finish`): the uses it makes,
    /// resolved against the device's states at submit. `None`: replaying
    /// at submit against those states directly.
    tracker: Option<Tracker>,
    /// A surface frame was met while encoding on its own: frames are used
    /// under the submit lock, so such a command buffer is replayed at submit.
    pub met_frame: bool,
    /// The render pass being replayed had its indirect draws checked:
    /// where each reads its checked arguments (`indirect_check.rs`).
    draws: Option<CheckedDraws>,
}

impl<'a> Replay<'a> {
    pub(crate) fn new(enc: &'a mut dyn DynCommandEncoder, submission: u64) -> Self {
        Self {
            enc,
            submission,
            readbacks: Vec::new(),
            frames: Vec::new(),
            errors: Vec::new(),
            exempt: None,
            tracker: None,
            met_frame: false,
            draws: None,
        }
    }

    /// A replay that encodes one command buffer on its own, tracking its
    /// uses instead of reading the device's states.
    pub(crate) fn local(enc: &'a mut dyn DynCommandEncoder) -> Self {
        let mut replay = Self::new(enc, 0);
        replay.tracker = Some(Tracker::default());
        replay
    }

    /// The uses a local replay tracked.
    pub(crate) fn take_tracker(&mut self) -> Option<Tracker> {
        self.tracker.take()
    }

    /// The encoder, to record outside the replayed commands (submit).
    pub(crate) fn encoder(&mut self) -> &mut dyn DynCommandEncoder {
        &mut *self.enc
    }

    /// Buffers the CPU may map for reading that the replay (or a resolved
    /// command buffer) used: `finish` moves them to `MAP_READ`.
    pub(crate) fn readbacks(&mut self) -> &mut Vec<Arc<Buffer>> {
        &mut self.readbacks
    }

    /// Marks `obj` used by this submission (locally: kept until submit).
    fn used<T: Used + 'static>(&mut self, obj: &Arc<T>) {
        match &mut self.tracker {
            None => obj.last_use().bump(self.submission),
            Some(t) => t.used(obj),
        }
    }

    /// The state `buffer` is in before the next use: the device's, or
    /// locally the last use so far (`None` before the first).
    fn buffer_state(&self, buffer: &Arc<Buffer>) -> Option<BufferUses> {
        match &self.tracker {
            None => Some(*buffer.state.lock()),
            Some(t) => t
                .buffers
                .get(&(Arc::as_ptr(buffer) as usize))
                .and_then(|b| b.first.map(|_| b.last)),
        }
    }

    fn set_buffer_state(&mut self, buffer: &Arc<Buffer>, usage: BufferUses) {
        match &mut self.tracker {
            None => *buffer.state.lock() = usage,
            Some(t) => {
                let b = t.buffer(buffer);
                b.first.get_or_insert(usage);
                b.last = usage;
            }
        }
    }

    /// The surface frames the replayed commands used.
    pub(crate) fn take_frames(&mut self) -> Vec<Arc<Texture>> {
        std::mem::take(&mut self.frames)
    }

    /// The errors met; each skipped its command.
    pub(crate) fn errors(&self) -> &[String] {
        &self.errors
    }

    /// Moves every buffer the CPU may map for reading to `MAP_READ` at the
    /// end of the submission (keel-hal's host-visibility rule).
    pub(crate) fn finish(&mut self) {
        let readbacks = std::mem::take(&mut self.readbacks);
        let mut barriers = Vec::new();
        for buffer in &readbacks {
            let Some(raw) = buffer.raw.as_deref() else {
                continue;
            };
            let mut state = buffer.state.lock();
            if *state != BufferUses::MAP_READ {
                barriers.push(BufferBarrier {
                    buffer: raw,
                    usage: StateTransition::new(*state, BufferUses::MAP_READ),
                });
                *state = BufferUses::MAP_READ;
            }
        }
        if !barriers.is_empty() {
            // SAFETY: recording; each buffer is in the state the tracker kept.
            unsafe { self.enc.transition_buffers(&barriers) };
        }
    }

    fn fail(&mut self, what: &str, why: impl std::fmt::Display) {
        self.errors.push(format!("{what}: {why}"));
    }

    /// Transitions `scope`'s resources, returning whether any barrier was
    /// recorded (`Err` when a resource is unusable).
    fn apply(&mut self, scope: &Scope<'_>) -> Result<bool, String> {
        // A dispatch's few barriers need no allocation; a pass's many
        // spill over (a second barrier call).
        let mut buffers: ArrayVec<BufferBarrier<'_, dyn DynBuffer>, 8> = ArrayVec::new();
        let mut spill: Vec<BufferBarrier<'_, dyn DynBuffer>> = Vec::new();
        let mut push = |barrier| {
            if let Err(full) = buffers.try_push(barrier) {
                spill.push(full.element());
            }
        };
        let exempt = self.exempt;
        if let Some(t) = &mut self.tracker {
            // Encoding at `finish`: what `zero_new_buffers`, `used_buffer`,
            // `buffer_state` and `set_buffer_state` do locally, with one
            // lookup of the buffer's track instead of four (a dispatch
            // applies every buffer of its groups).
            for &(buffer, usage) in &scope.buffers {
                let raw = buffer.handle()?;
                let track = t.buffer(buffer);
                if exempt != Some(Arc::as_ptr(buffer) as usize) {
                    track.reads_uninit = true;
                }
                if track.first.is_some() && (track.last != usage || usage.intersects(BUFFER_WRITES))
                {
                    push(BufferBarrier {
                        buffer: raw,
                        usage: StateTransition::new(track.last, usage),
                    });
                }
                track.first.get_or_insert(usage);
                track.last = usage;
            }
        } else {
            // Encoding at submit: the device's states.
            self.zero_new_buffers(scope)?;
            for &(buffer, usage) in &scope.buffers {
                let raw = buffer.raw()?;
                self.used_buffer(buffer);
                if let Some(state) = self.buffer_state(buffer) {
                    if state != usage || usage.intersects(BUFFER_WRITES) {
                        push(BufferBarrier {
                            buffer: raw,
                            usage: StateTransition::new(state, usage),
                        });
                    }
                }
                self.set_buffer_state(buffer, usage);
            }
        }
        let mut any = !buffers.is_empty();
        if any {
            // SAFETY: recording, outside render passes (keel-hal takes
            // barriers in compute passes); each buffer is in `from`.
            unsafe {
                self.enc.transition_buffers(&buffers);
                if !spill.is_empty() {
                    self.enc.transition_buffers(&spill);
                }
            }
        }
        for &(view, usage, overwrite) in &scope.views {
            self.used(view);
            let mips = view.mips.clone();
            let layers = view.layers.clone();
            any |= self.texture(&view.texture, mips, layers, usage, overwrite)?;
        }
        Ok(any)
    }

    /// A buffer used by the replay: by this submission, and read back at
    /// its end if the CPU may map it for reading.
    fn used_buffer(&mut self, buffer: &Arc<Buffer>) {
        match &mut self.tracker {
            // Locally the buffer's track keeps it; the submit marks it.
            Some(t) => {
                t.buffer(buffer);
            }
            None => {
                buffer.last_use.bump(self.submission);
                if buffer.usage.contains(wgpu::BufferUsages::MAP_READ)
                    && !self.readbacks.iter().any(|b| Arc::ptr_eq(b, buffer))
                {
                    self.readbacks.push(buffer.clone());
                }
            }
        }
    }

    /// Zeroes buffers the GPU has not touched yet (wgpu's rule: new
    /// buffers read as zeros), before their first use. Locally: notes that
    /// the use reads what was never written, and the submit zeroes it.
    fn zero_new_buffers(&mut self, scope: &Scope<'_>) -> Result<(), String> {
        for &(buffer, _) in &scope.buffers {
            if self.exempt == Some(Arc::as_ptr(buffer) as usize) {
                continue;
            }
            if let Some(t) = &mut self.tracker {
                t.buffer(buffer).reads_uninit = true;
                continue;
            }
            let ranges = buffer.take_uninit();
            if ranges.is_empty() {
                continue;
            }
            let raw = buffer.raw()?;
            let mut state = buffer.state.lock();
            let barrier = BufferBarrier {
                buffer: raw,
                usage: StateTransition::new(*state, BufferUses::COPY_DST),
            };
            *state = BufferUses::COPY_DST;
            // SAFETY: recording outside passes; the buffer is moved to
            // COPY_DST first; the ranges are 4-aligned and inside the
            // (4-aligned) hal buffer.
            unsafe {
                self.enc.transition_buffers(&[barrier]);
                for range in ranges {
                    self.enc.clear_buffer(raw, range);
                }
            }
        }
        Ok(())
    }

    /// Moves subresources of `texture` to `usage`, clearing uninitialised
    /// ones first unless `overwrite` says the use writes all of them.
    fn texture(
        &mut self,
        texture: &Arc<Texture>,
        mips: Range<u32>,
        layers: Range<u32>,
        usage: TextureUses,
        overwrite: bool,
    ) -> Result<bool, String> {
        if self.tracker.is_some() {
            return self.local_texture(texture, mips, layers, usage, overwrite);
        }
        let raw = texture.raw()?;
        texture.last_use.bump(self.submission);
        if texture.is_frame() && !self.frames.iter().any(|f| Arc::ptr_eq(f, texture)) {
            self.frames.push(texture.clone());
        }
        let mut states = texture.states.lock();
        let count = texture.mip_level_count;
        // Block-compressed textures were zeroed by a copy queued at
        // creation (`queue::zero_compressed`); `clear_texture` takes the rest.
        let clearable = !texture.format.is_compressed();
        let mut clears = Vec::new();
        if !overwrite && clearable {
            clears = merged_ranges(mips.clone(), layers.clone(), |mip, layer| {
                let i = layer as usize * count as usize + mip as usize;
                (states.get(i) == Some(&TextureUses::UNINITIALIZED))
                    .then_some(TextureUses::UNINITIALIZED)
            });
            for (range, _) in &clears {
                for_each_subresource(range, |mip, layer| {
                    states[layer as usize * count as usize + mip as usize] = TextureUses::COPY_DST;
                });
            }
        }
        let mut recorded = false;
        if !clears.is_empty() {
            let barriers: Vec<_> = clears
                .iter()
                .map(|(range, _)| TextureBarrier {
                    texture: raw,
                    range: *range,
                    usage: StateTransition::new(TextureUses::UNINITIALIZED, TextureUses::COPY_DST),
                })
                .collect();
            // SAFETY: recording outside passes; the subresources are new.
            unsafe { self.enc.transition_textures(&barriers) };
            for (range, _) in &clears {
                // SAFETY: recording outside passes; in COPY_DST (above).
                if let Err(e) = unsafe { self.enc.clear_texture(raw, range) } {
                    self.fail("zero-initialising a texture", e);
                }
            }
            recorded = true;
        }
        if mips.end > count || layers.end as usize * count as usize > states.len() {
            return Err(format!(
                "mips {mips:?} layers {layers:?} are outside the texture ({count} mips, {} layers)",
                states.len() / count.max(1) as usize
            ));
        }
        let changes = merged_ranges(mips.clone(), layers.clone(), |mip, layer| {
            let state = states[layer as usize * count as usize + mip as usize];
            (state != usage || usage.intersects(TEXTURE_WRITES)).then_some(state)
        });
        for layer in layers {
            for mip in mips.clone() {
                states[layer as usize * count as usize + mip as usize] = usage;
            }
        }
        let barriers: Vec<_> = changes
            .into_iter()
            .map(|(range, from)| TextureBarrier {
                texture: raw,
                range,
                usage: StateTransition::new(from, usage),
            })
            .collect();
        if !barriers.is_empty() {
            // SAFETY: recording outside passes; each subresource is in `from`.
            unsafe { self.enc.transition_textures(&barriers) };
            recorded = true;
        }
        Ok(recorded)
    }

    /// [`Self::texture`] for a local replay: barriers between the command
    /// buffer's own uses; the first use of each subresource is kept for
    /// the submit (with whether it reads, for zeroing).
    fn local_texture(
        &mut self,
        texture: &Arc<Texture>,
        mips: Range<u32>,
        layers: Range<u32>,
        usage: TextureUses,
        overwrite: bool,
    ) -> Result<bool, String> {
        if texture.is_frame() {
            self.met_frame = true;
            return Err("a surface frame: replayed at submit".into());
        }
        let raw = texture.handle()?;
        let Some(tracker) = &mut self.tracker else {
            return Ok(false);
        };
        let count = texture.mip_level_count;
        let track = tracker.texture(texture);
        if mips.end > count || layers.end as usize * count as usize > track.last.len() {
            return Err(format!(
                "mips {mips:?} layers {layers:?} are outside {} ({count} mips, {} layers)",
                texture.ident(),
                texture.layers()
            ));
        }
        let at = |mip: u32, layer: u32| layer as usize * count as usize + mip as usize;
        let changes = merged_ranges(mips.clone(), layers.clone(), |mip, layer| {
            track.last[at(mip, layer)]
                .filter(|state| *state != usage || usage.intersects(TEXTURE_WRITES))
        });
        let reads = !overwrite;
        for layer in layers {
            for mip in mips.clone() {
                let i = at(mip, layer);
                if track.first[i].is_none() {
                    track.first[i] = Some((usage, reads));
                }
                track.last[i] = Some(usage);
            }
        }
        let barriers: Vec<_> = changes
            .into_iter()
            .map(|(range, from)| TextureBarrier {
                texture: raw,
                range,
                usage: StateTransition::new(from, usage),
            })
            .collect();
        if barriers.is_empty() {
            return Ok(false);
        }
        // SAFETY: recording, outside render passes; each subresource is in
        // `from` (this command buffer's own last use of it).
        unsafe { self.enc.transition_textures(&barriers) };
        Ok(true)
    }

    fn buffer_scope(&mut self, uses: &[(&Arc<Buffer>, BufferUses)]) -> Result<(), String> {
        let mut scope = Scope::default();
        for &(b, u) in uses {
            scope.buffer(b, u);
        }
        self.apply(&scope).map(|_| ())
    }

    /// As [`Self::buffer_scope`] for a command that writes all of `range`
    /// of `written` (and reads none of it): the range counts as written,
    /// and what else of that buffer is unwritten stays so, uncleared.
    fn writing_scope(
        &mut self,
        uses: &[(&Arc<Buffer>, BufferUses)],
        written: &Arc<Buffer>,
        range: Range<u64>,
    ) -> Result<(), String> {
        if uses.iter().filter(|(b, _)| Arc::ptr_eq(b, written)).count() > 1 {
            // It is also read (a copy within one buffer): clear as usual.
            return self.buffer_scope(uses);
        }
        match &mut self.tracker {
            None => written.mark_written(range),
            Some(t) => {
                let track = t.buffer(written);
                if !track.reads_uninit {
                    track.pre_written.push(range);
                }
            }
        }
        self.exempt = Some(Arc::as_ptr(written) as usize);
        let result = self.buffer_scope(uses);
        self.exempt = None;
        result
    }

    fn texture_copy_use(
        &mut self,
        texture: &Arc<Texture>,
        base: &TexelBase,
        size: &wgpu::Extent3d,
        usage: TextureUses,
    ) -> Result<(), String> {
        let layers = if texture.dimension == wgpu::TextureDimension::D3 {
            0..1
        } else {
            base.origin.z..base.origin.z.saturating_add(size.depth_or_array_layers)
        };
        let mips = base.mip_level..base.mip_level + 1;
        // A copy into the whole of a subresource overwrites it.
        let mip_size = texture.mip_size(base.mip_level);
        let whole = usage == TextureUses::COPY_DST
            && base.origin.x == 0
            && base.origin.y == 0
            && size.width >= mip_size.width
            && size.height >= mip_size.height
            && (texture.dimension != wgpu::TextureDimension::D3
                || (base.origin.z == 0
                    && size.depth_or_array_layers >= mip_size.depth_or_array_layers));
        self.texture(texture, mips, layers, usage, whole)
            .map(|_| ())
    }

    fn hal_base(texture: &Texture, base: &TexelBase) -> keel_hal::TextureCopyBase {
        let d3 = texture.dimension == wgpu::TextureDimension::D3;
        keel_hal::TextureCopyBase {
            mip_level: base.mip_level,
            array_layer: if d3 { 0 } else { base.origin.z },
            origin: wgpu::Origin3d {
                x: base.origin.x,
                y: base.origin.y,
                z: if d3 { base.origin.z } else { 0 },
            },
            aspect: base.aspect,
        }
    }

    /// Replays one command.
    pub(crate) fn cmd(&mut self, cmd: &Cmd) {
        if let Err(e) = self.try_cmd(cmd) {
            self.fail("submit", e);
        }
    }

    fn try_cmd(&mut self, cmd: &Cmd) -> Result<(), String> {
        match cmd {
            Cmd::CopyBufferToBuffer {
                src,
                src_offset,
                dst,
                dst_offset,
                size,
            } => {
                self.writing_scope(
                    &[(src, BufferUses::COPY_SRC), (dst, BufferUses::COPY_DST)],
                    dst,
                    *dst_offset..dst_offset + size,
                )?;
                let region = keel_hal::BufferCopy {
                    src_offset: *src_offset,
                    dst_offset: *dst_offset,
                    size: *size,
                };
                // SAFETY: recording outside passes; in COPY_SRC / COPY_DST;
                // the range was checked when recorded.
                unsafe {
                    self.enc
                        .copy_buffer_to_buffer(src.handle()?, dst.handle()?, &[region])
                };
            }
            Cmd::CopyBufferToTexture {
                src,
                layout,
                dst,
                base,
                size,
            } => {
                self.buffer_scope(&[(src, BufferUses::COPY_SRC)])?;
                self.texture_copy_use(dst, base, size, TextureUses::COPY_DST)?;
                let region = keel_hal::BufferTextureCopy {
                    buffer_layout: *layout,
                    texture_base: Self::hal_base(dst, base),
                    size: *size,
                };
                // SAFETY: recording outside passes; states set above.
                unsafe {
                    self.enc
                        .copy_buffer_to_texture(src.handle()?, dst.handle()?, &[region])
                };
            }
            Cmd::CopyTextureToBuffer {
                src,
                base,
                dst,
                layout,
                size,
            } => {
                self.texture_copy_use(src, base, size, TextureUses::COPY_SRC)?;
                self.buffer_scope(&[(dst, BufferUses::COPY_DST)])?;
                let region = keel_hal::BufferTextureCopy {
                    buffer_layout: *layout,
                    texture_base: Self::hal_base(src, base),
                    size: *size,
                };
                // SAFETY: recording outside passes; states set above.
                unsafe {
                    self.enc.copy_texture_to_buffer(
                        src.handle()?,
                        TextureUses::COPY_SRC,
                        dst.handle()?,
                        &[region],
                    )
                };
            }
            Cmd::CopyTextureToTexture {
                src,
                src_base,
                dst,
                dst_base,
                size,
            } => {
                self.texture_copy_use(src, src_base, size, TextureUses::COPY_SRC)?;
                self.texture_copy_use(dst, dst_base, size, TextureUses::COPY_DST)?;
                let region = keel_hal::TextureCopy {
                    src_base: Self::hal_base(src, src_base),
                    dst_base: Self::hal_base(dst, dst_base),
                    size: *size,
                };
                // SAFETY: recording outside passes; states set above.
                unsafe {
                    self.enc.copy_texture_to_texture(
                        src.handle()?,
                        TextureUses::COPY_SRC,
                        dst.handle()?,
                        &[region],
                    )
                };
            }
            Cmd::ClearBuffer { buffer, range } => {
                self.writing_scope(&[(buffer, BufferUses::COPY_DST)], buffer, range.clone())?;
                if !range.is_empty() {
                    // SAFETY: recording outside passes; in COPY_DST; the
                    // range was checked (4-aligned, inside) when recorded.
                    unsafe { self.enc.clear_buffer(buffer.handle()?, range.clone()) };
                }
            }
            Cmd::ClearTexture { texture, range } => {
                let mips = range.base_mip_level
                    ..range.mip_level_count.map_or(texture.mip_level_count, |c| {
                        range.base_mip_level.saturating_add(c)
                    });
                let layers = range.base_array_layer
                    ..range.array_layer_count.map_or(texture.layers(), |c| {
                        range.base_array_layer.saturating_add(c)
                    });
                self.texture(texture, mips, layers, TextureUses::COPY_DST, true)?;
                // SAFETY: recording outside passes; in COPY_DST.
                unsafe { self.enc.clear_texture(texture.handle()?, range) }
                    .map_err(|e| e.to_string())?;
            }
            Cmd::WriteTimestamp { set, index } => self.timestamp(set, *index),
            Cmd::ResolveQuerySet {
                set,
                queries,
                dst,
                offset,
            } => {
                self.buffer_scope(&[(dst, BufferUses::QUERY_RESOLVE)])?;
                self.used(set);
                let raw = set.raw.as_deref().ok_or("the query set is invalid")?;
                // wgpu's layout: one u64 per value, a statistics query's
                // values next to each other.
                let stride = match set.ty {
                    wgpu::QueryType::PipelineStatistics(s) => 8 * u64::from(s.bits().count_ones()),
                    _ => 8,
                };
                // SAFETY: recording outside passes; the range and the
                // destination were checked when recorded.
                unsafe {
                    self.enc.copy_query_results(
                        raw,
                        queries.clone(),
                        dst.handle()?,
                        *offset,
                        stride,
                    )
                };
            }
            // SAFETY (three arms): recording; markers nest as wgpu checked.
            Cmd::PushDebugGroup(label) => unsafe { self.enc.begin_debug_marker(label) },
            Cmd::PopDebugGroup => unsafe { self.enc.end_debug_marker() },
            Cmd::InsertDebugMarker(label) => unsafe { self.enc.insert_debug_marker(label) },
            Cmd::ComputePass(pass) => self.compute_pass(pass),
            Cmd::RenderPass(pass) => self.render_pass(pass),
        }
        Ok(())
    }

    /// Resets and writes one timestamp, outside passes.
    fn timestamp(&mut self, set: &Arc<QuerySet>, index: u32) {
        self.used(set);
        let Some(raw) = set.raw.as_deref() else {
            self.fail("write_timestamp", "the query set is invalid");
            return;
        };
        // SAFETY: recording outside passes; `index` was checked against
        // the set's count when recorded.
        unsafe {
            self.enc.reset_queries(raw, index..index + 1);
            self.enc.write_timestamp(raw, index);
        }
    }

    fn pass_timestamp(&mut self, ts: &Option<PassTimestamps>, begin: bool) {
        if let Some(ts) = ts {
            if let Some(index) = if begin { ts.begin } else { ts.end } {
                self.timestamp(&ts.set, index);
            }
        }
    }

    fn compute_pass(&mut self, pass: &ComputePassRecord) {
        self.pass_timestamp(&pass.timestamps, true);
        let desc = keel_hal::ComputePassDescriptor {
            label: pass.label.as_deref(),
        };
        let mut in_pass = false;
        let mut state = BindState::default();
        // One dispatch's scope, its storage reused by the next.
        let mut scope = Scope::default();
        // What the pass sets is used, once per group.
        for group in pass.groups.all() {
            self.used(group);
        }
        for cmd in &pass.cmds {
            match cmd {
                PassCmd::SetComputePipeline(p) => {
                    // Used once set (a pipeline no dispatch uses is kept
                    // alive a little longer: nothing else changes).
                    self.used(p);
                    state.compute = Some(p);
                    state.dirty_all();
                }
                PassCmd::SetBindGroup {
                    index,
                    group,
                    offsets,
                } => state.set_group(*index, group.and_then(|g| pass.groups.get(g)), offsets),
                PassCmd::SetImmediates { offset, data } => state.immediates(*offset, data),
                PassCmd::Dispatch(_) | PassCmd::DispatchIndirect { .. } => {
                    let Some(pipeline) = state.compute else {
                        self.fail("dispatch_workgroups", "no compute pipeline is set");
                        continue;
                    };
                    let (Some(raw), Some(layout)) = (pipeline.raw.as_deref(), &pipeline.layout)
                    else {
                        self.fail("dispatch_workgroups", "the compute pipeline is invalid");
                        continue;
                    };
                    scope.clear();
                    for (group, _) in state.groups.iter().take(layout.groups.len()).flatten() {
                        scope.group(group);
                    }
                    // An indirect dispatch's counts are checked first where
                    // the device checks them; it then reads the checked
                    // copy instead of the program's buffer.
                    let mut checked = None;
                    if let PassCmd::DispatchIndirect { buffer, offset } = cmd {
                        match self.check_indirect(buffer, *offset, &mut in_pass) {
                            Ok(Some(args)) => checked = Some(args),
                            Ok(None) => scope.buffer(buffer, BufferUses::INDIRECT),
                            Err(e) => {
                                self.fail("dispatch_workgroups_indirect", e);
                                continue;
                            }
                        }
                    }
                    // keel-hal takes barriers inside a compute pass and keeps
                    // its bindings, so the pass stays open between
                    // dispatches; only encoding at submit (no tracker),
                    // which may zero buffers and textures inline, closes it.
                    if in_pass && self.tracker.is_none() && self.scope_needs_barrier(&scope) {
                        // SAFETY: inside the compute pass opened below.
                        unsafe { self.enc.end_compute_pass() };
                        in_pass = false;
                    }
                    if let Err(e) = self.apply(&scope) {
                        self.fail("dispatch_workgroups", e);
                        continue;
                    }
                    if !in_pass {
                        // SAFETY: recording, outside any pass.
                        unsafe { self.enc.begin_compute_pass(&desc) };
                        in_pass = true;
                        state.dirty_all();
                    }
                    if state.pipeline_dirty {
                        // SAFETY: inside a compute pass; the pipeline is alive.
                        unsafe { self.enc.set_compute_pipeline(raw) };
                        state.pipeline_dirty = false;
                    }
                    if let Err(e) = self.flush_groups(&mut state, layout) {
                        self.fail("dispatch_workgroups", e);
                        continue;
                    }
                    match cmd {
                        // SAFETY: inside a compute pass with a pipeline and
                        // its groups bound, resources in their states.
                        PassCmd::Dispatch(count) => unsafe { self.enc.dispatch(*count) },
                        PassCmd::DispatchIndirect { buffer, offset } => match checked {
                            // SAFETY: as above; the checked counts are in
                            // INDIRECT (`IndirectCheck::record`), 12 bytes.
                            Some(args) => unsafe { self.enc.dispatch_indirect(args, 0) },
                            None => {
                                if let Ok(b) = buffer.handle() {
                                    // SAFETY: as above; the buffer is in INDIRECT.
                                    unsafe { self.enc.dispatch_indirect(b, *offset) };
                                }
                            }
                        },
                        _ => {}
                    }
                }
                PassCmd::WriteTimestamp { set, index } => {
                    if in_pass {
                        // SAFETY: inside the compute pass.
                        unsafe { self.enc.end_compute_pass() };
                        in_pass = false;
                    }
                    self.timestamp(set, *index);
                }
                PassCmd::BeginStatisticsQuery { set, index } => {
                    if in_pass {
                        // SAFETY: inside the compute pass.
                        unsafe { self.enc.end_compute_pass() };
                        in_pass = false;
                    }
                    self.used(set);
                    if let Some(raw) = set.raw.as_deref() {
                        // SAFETY: outside passes; index checked when recorded.
                        unsafe {
                            self.enc.reset_queries(raw, *index..*index + 1);
                            self.enc.begin_query(raw, *index);
                        }
                        state.statistics = Some((set, *index));
                    }
                }
                PassCmd::EndStatisticsQuery => {
                    if in_pass {
                        // SAFETY: inside the compute pass.
                        unsafe { self.enc.end_compute_pass() };
                        in_pass = false;
                    }
                    if let Some((set, index)) = state.statistics.take() {
                        if let Some(raw) = set.raw.as_deref() {
                            // SAFETY: the query was begun above.
                            unsafe { self.enc.end_query(raw, index) };
                        }
                    }
                }
                // SAFETY (three arms): markers may be recorded in and out of passes.
                PassCmd::PushDebugGroup(l) => unsafe { self.enc.begin_debug_marker(l) },
                PassCmd::PopDebugGroup => unsafe { self.enc.end_debug_marker() },
                PassCmd::InsertDebugMarker(l) => unsafe { self.enc.insert_debug_marker(l) },
                other => self.fail(
                    "compute pass",
                    format!("{other:?} is not a compute command"),
                ),
            }
        }
        if in_pass {
            // SAFETY: inside the compute pass.
            unsafe { self.enc.end_compute_pass() };
        }
        self.pass_timestamp(&pass.timestamps, false);
    }

    /// Records the device's check of the counts at `offset` of `buffer`
    /// (`indirect_check.rs`) outside the pass, closing it if open, and
    /// returns the checked counts the dispatch then reads (at offset 0).
    /// `Ok(None)`: no check (off on this device, or an offset it cannot
    /// reach): the dispatch reads `buffer`.
    fn check_indirect<'b>(
        &mut self,
        buffer: &'b Arc<Buffer>,
        offset: u64,
        in_pass: &mut bool,
    ) -> Result<Option<&'b dyn DynBuffer>, String> {
        let Some(check) = buffer.shared.indirect_check()? else {
            return Ok(None);
        };
        let Some(source) = check.source(buffer, offset)? else {
            return Ok(None);
        };
        if *in_pass {
            // SAFETY: inside the compute pass the caller opened.
            unsafe { self.enc.end_compute_pass() };
            *in_pass = false;
        }
        let mut scope = Scope::default();
        scope.buffer(buffer, BufferUses::STORAGE_READ_ONLY);
        self.apply(&scope)?;
        // SAFETY: recording outside passes; `buffer` was moved to
        // STORAGE_READ_ONLY just above. The caller opens its pass again and
        // sets its state anew (`BindState::dirty_all`).
        unsafe { check.record(&mut *self.enc, &source) };
        Ok(Some(check.checked()))
    }

    /// Whether applying `scope` would record a barrier (cheap, no change).
    fn scope_needs_barrier(&self, scope: &Scope<'_>) -> bool {
        let texture_state = |v: &TextureView, i: usize| match &self.tracker {
            None => v.texture.states.lock().get(i).copied(),
            Some(t) => t
                .textures
                .get(&(Arc::as_ptr(&v.texture) as usize))
                .and_then(|t| t.last.get(i).copied().flatten()),
        };
        scope.buffers.iter().any(|(b, u)| {
            self.buffer_state(b)
                .is_some_and(|s| s != *u || u.intersects(BUFFER_WRITES))
        }) || scope.views.iter().any(|(v, u, _)| {
            let count = v.texture.mip_level_count;
            v.layers.clone().any(|layer| {
                v.mips.clone().any(|mip| {
                    texture_state(v, layer as usize * count as usize + mip as usize)
                        .is_some_and(|s| s != *u || u.intersects(TEXTURE_WRITES))
                })
            })
        })
    }

    fn flush_groups(
        &mut self,
        state: &mut BindState<'_>,
        layout: &crate::binding::PipelineLayout,
    ) -> Result<(), String> {
        let raw_layout = layout
            .raw
            .as_deref()
            .ok_or("the pipeline layout is invalid")?;
        for (i, slot) in state.groups.iter().enumerate().take(layout.groups.len()) {
            if state.dirty & (1 << i) == 0 {
                continue;
            }
            let Some((group, offsets)) = slot else {
                return Err(format!("no bind group is set at index {i}"));
            };
            // (Marked used with its pass's or bundle's table.)
            let raw = group.raw.as_deref().ok_or("the bind group is invalid")?;
            // SAFETY: inside a pass; the group matches the layout's slot
            // (checked by keel-hal) and its resources are in their states.
            unsafe { self.enc.set_bind_group(raw_layout, i as u32, raw, offsets) };
        }
        state.dirty = 0;
        if let (true, Some(data)) = (state.immediate_dirty, &state.immediate_data) {
            let words: Vec<u32> = data
                .chunks(4)
                .map(|c| {
                    let mut w = [0u8; 4];
                    w[..c.len()].copy_from_slice(c);
                    u32::from_le_bytes(w)
                })
                .collect();
            // SAFETY: inside a pass with the layout's pipeline bound.
            unsafe {
                self.enc.set_push_constants(
                    raw_layout,
                    crate::device::IMMEDIATE_STAGES,
                    state.immediate_offset,
                    &words,
                )
            };
            state.immediate_dirty = false;
        }
        Ok(())
    }

    /// The scope of a whole render pass: every resource any command or
    /// bundle in it uses, and the queries it writes (reset before it).
    ///
    /// The same walk plans the GPU check of the pass's indirect draws, its
    /// bundles' among them, in replay order ([`plan_draw`]).
    fn render_scope<'c>(
        pass: &'c RenderPassRecord,
        scope: &mut Scope<'c>,
        resets: &mut Vec<(&'c Arc<QuerySet>, u32)>,
        plan: &mut Option<DrawPlan<'c>>,
    ) -> Result<(), String> {
        // Each group once, however often it is set: the pass's table.
        for group in pass.groups.all() {
            scope.group(group);
        }
        let occlusion = pass.occlusion.as_ref();
        for cmd in &pass.cmds {
            match cmd {
                PassCmd::SetVertexBuffer {
                    buffer: Some(b), ..
                } => scope.buffer(b, BufferUses::VERTEX),
                PassCmd::SetIndexBuffer { buffer, .. } => scope.buffer(buffer, BufferUses::INDEX),
                PassCmd::DrawIndirect { buffer, .. } => {
                    scope.buffer(buffer, BufferUses::INDIRECT);
                    plan_draw(cmd, plan, scope)?;
                }
                PassCmd::DrawMeshTasksIndirect { buffer, .. } => {
                    scope.buffer(buffer, BufferUses::INDIRECT)
                }
                PassCmd::DrawIndirectCount {
                    buffer,
                    count_buffer,
                    ..
                } => {
                    scope.buffer(buffer, BufferUses::INDIRECT);
                    scope.buffer(count_buffer, BufferUses::INDIRECT);
                }
                PassCmd::WriteTimestamp { set, index }
                | PassCmd::BeginStatisticsQuery { set, index } => resets.push((set, *index)),
                PassCmd::BeginOcclusionQuery(index) => {
                    if let Some(set) = occlusion {
                        resets.push((set, *index));
                    }
                }
                // A bundle's scope was built once, at its `finish`; bundles
                // write no queries.
                PassCmd::ExecuteBundles(bundles) => {
                    for bundle in bundles {
                        for (buffer, usage) in &bundle.scope.buffers {
                            scope.buffer(buffer, *usage);
                        }
                        for (view, usage) in &bundle.scope.views {
                            scope.views.push((view, *usage, false));
                        }
                        if bundle.indirect_draws {
                            for cmd in &bundle.cmds {
                                plan_draw(cmd, plan, scope)?;
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn render_pass(&mut self, pass: &RenderPassRecord) {
        let done = self.try_render_pass(pass);
        self.draws = None;
        if let Err(e) = done {
            self.fail("render pass", e);
        }
    }

    fn try_render_pass(&mut self, pass: &RenderPassRecord) -> Result<(), String> {
        let mut scope = Scope::default();
        let mut resets = Vec::new();
        let mut plan = None;
        Self::render_scope(pass, &mut scope, &mut resets, &mut plan)?;
        let mut extent = None;
        let mut sample_count = 1;
        for color in pass.colors.iter().flatten() {
            let overwrite = !matches!(color.load, wgpu::LoadOp::Load);
            scope
                .views
                .push((&color.view, TextureUses::COLOR_TARGET, overwrite));
            if let Some(resolve) = &color.resolve {
                scope.views.push((resolve, TextureUses::COLOR_TARGET, true));
            }
            extent.get_or_insert(color.view.extent());
            sample_count = color.view.texture.sample_count;
        }
        let depth_usage = match &pass.depth {
            Some(depth) => {
                let writes = depth.depth.is_some_and(|o| o.store == wgpu::StoreOp::Store)
                    || depth
                        .stencil
                        .is_some_and(|o| o.store == wgpu::StoreOp::Store)
                    || depth
                        .depth
                        .is_some_and(|o| matches!(o.load, wgpu::LoadOp::Clear(_)))
                    || depth
                        .stencil
                        .is_some_and(|o| matches!(o.load, wgpu::LoadOp::Clear(_)))
                    // A discard is a write: the zeroing pass after clears it.
                    || depth
                        .depth
                        .is_some_and(|o| o.store == wgpu::StoreOp::Discard)
                    || depth
                        .stencil
                        .is_some_and(|o| o.store == wgpu::StoreOp::Discard);
                let usage = if writes {
                    TextureUses::DEPTH_STENCIL_WRITE
                } else {
                    TextureUses::DEPTH_STENCIL_READ
                };
                let loads = depth.depth.is_some_and(|o| o.load == wgpu::LoadOp::Load)
                    || depth.stencil.is_some_and(|o| o.load == wgpu::LoadOp::Load)
                    || (depth.depth.is_none() && depth.stencil.is_none());
                scope.views.push((&depth.view, usage, !loads));
                extent.get_or_insert(depth.view.extent());
                sample_count = depth.view.texture.sample_count;
                usage
            }
            None => TextureUses::DEPTH_STENCIL_READ,
        };
        let extent = extent.ok_or("a render pass needs at least one attachment")?;
        self.apply(&scope)?;
        for (set, index) in resets {
            self.used(set);
            if let Some(raw) = set.raw.as_deref() {
                // SAFETY: outside passes; the index was checked when recorded.
                unsafe { self.enc.reset_queries(raw, index..index + 1) };
            }
        }
        if let Some(plan) = plan.filter(|p| !p.is_empty()) {
            // SAFETY: recording, outside passes; every buffer the plan
            // reads is in STORAGE_READ_ONLY (`plan_draw`, applied above).
            // The render pass begun below sets its state anew.
            let draws = unsafe { plan.record(&mut *self.enc) }?;
            self.used(draws.args());
            self.draws = Some(draws);
        }
        self.pass_timestamp(&pass.timestamps, true);

        let mut colors = Vec::with_capacity(pass.colors.len());
        for color in &pass.colors {
            let Some(color) = color else {
                colors.push(None);
                continue;
            };
            let mut ops = keel_hal::AttachmentOps::empty();
            if color.load == wgpu::LoadOp::Load {
                ops |= keel_hal::AttachmentOps::LOAD;
            }
            if color.store == wgpu::StoreOp::Store {
                ops |= keel_hal::AttachmentOps::STORE;
            }
            let clear_value = match color.load {
                wgpu::LoadOp::Clear(c) => c,
                _ => wgpu::Color::TRANSPARENT,
            };
            let resolve_target = match &color.resolve {
                Some(r) => Some(keel_hal::Attachment {
                    view: r.handle()?,
                    usage: TextureUses::COLOR_TARGET,
                }),
                None => None,
            };
            colors.push(Some(keel_hal::ColorAttachment {
                target: keel_hal::Attachment {
                    view: color.view.handle()?,
                    usage: TextureUses::COLOR_TARGET,
                },
                resolve_target,
                ops,
                clear_value,
            }));
        }
        let depth_stencil_attachment = match &pass.depth {
            Some(depth) => {
                let ops = |load: bool, store: bool| {
                    let mut ops = keel_hal::AttachmentOps::empty();
                    if load {
                        ops |= keel_hal::AttachmentOps::LOAD;
                    }
                    if store {
                        ops |= keel_hal::AttachmentOps::STORE;
                    }
                    ops
                };
                let depth_ops = match depth.depth {
                    Some(o) => ops(
                        o.load == wgpu::LoadOp::Load,
                        o.store == wgpu::StoreOp::Store,
                    ),
                    None => ops(true, true),
                };
                let stencil_ops = match depth.stencil {
                    Some(o) => ops(
                        o.load == wgpu::LoadOp::Load,
                        o.store == wgpu::StoreOp::Store,
                    ),
                    None => ops(true, true),
                };
                let depth_clear = match depth.depth.map(|o| o.load) {
                    Some(wgpu::LoadOp::Clear(v)) => v,
                    _ => 1.0,
                };
                let stencil_clear = match depth.stencil.map(|o| o.load) {
                    Some(wgpu::LoadOp::Clear(v)) => v,
                    _ => 0,
                };
                Some(keel_hal::DepthStencilAttachment {
                    target: keel_hal::Attachment {
                        view: depth.view.handle()?,
                        usage: depth_usage,
                    },
                    depth_ops,
                    stencil_ops,
                    clear_value: (depth_clear, stencil_clear),
                })
            }
            None => None,
        };
        let desc = keel_hal::RenderPassDescriptor::<DynResources> {
            label: pass.label.as_deref(),
            extent: wgpu::Extent3d {
                depth_or_array_layers: 1,
                ..extent
            },
            sample_count,
            color_attachments: &colors,
            depth_stencil_attachment,
            multiview_mask: pass.multiview_mask,
        };
        // SAFETY: recording outside passes; every attachment is in the
        // usage it names (applied above) and covers the extent.
        unsafe { self.enc.begin_render_pass(&desc) };
        let mut state = BindState::default();
        for group in pass.groups.all() {
            self.used(group);
        }
        self.render_cmds(
            &pass.cmds,
            &pass.groups,
            &mut state,
            pass.occlusion.as_ref(),
        );
        // SAFETY: inside the render pass begun above.
        unsafe { self.enc.end_render_pass() };
        self.pass_timestamp(&pass.timestamps, false);
        self.zero_discarded(pass, extent, sample_count, depth_usage)
    }

    /// What a pass discarded (`StoreOp::Discard`) reads as zeros after it,
    /// as wgpu-core's init tracking makes it: a second pass clears the
    /// discarded attachments (and aspects) to zero, keeping the rest. The
    /// attachments are in the usages the pass put them in.
    fn zero_discarded(
        &mut self,
        pass: &RenderPassRecord,
        extent: wgpu::Extent3d,
        sample_count: u32,
        depth_usage: TextureUses,
    ) -> Result<(), String> {
        let depth = pass.depth.as_ref().filter(|d| {
            d.depth.is_some_and(|o| o.store == wgpu::StoreOp::Discard)
                || d.stencil.is_some_and(|o| o.store == wgpu::StoreOp::Discard)
        });
        let any_color = pass
            .colors
            .iter()
            .flatten()
            .any(|c| c.store == wgpu::StoreOp::Discard);
        if !any_color && depth.is_none() {
            return Ok(());
        }
        let mut colors = Vec::with_capacity(pass.colors.len());
        for color in &pass.colors {
            match color {
                Some(c) if c.store == wgpu::StoreOp::Discard => {
                    colors.push(Some(keel_hal::ColorAttachment {
                        target: keel_hal::Attachment {
                            view: c.view.handle()?,
                            usage: TextureUses::COLOR_TARGET,
                        },
                        resolve_target: None,
                        ops: keel_hal::AttachmentOps::STORE,
                        clear_value: wgpu::Color::TRANSPARENT,
                    }))
                }
                _ => colors.push(None),
            }
        }
        let keep = keel_hal::AttachmentOps::LOAD | keel_hal::AttachmentOps::STORE;
        let ops = |o: Option<wgpu::Operations<f32>>| match o {
            Some(o) if o.store == wgpu::StoreOp::Discard => keel_hal::AttachmentOps::STORE,
            _ => keep,
        };
        let stencil_ops = |o: Option<wgpu::Operations<u32>>| match o {
            Some(o) if o.store == wgpu::StoreOp::Discard => keel_hal::AttachmentOps::STORE,
            _ => keep,
        };
        let depth_stencil_attachment = match depth {
            Some(d) => Some(keel_hal::DepthStencilAttachment {
                target: keel_hal::Attachment {
                    view: d.view.handle()?,
                    usage: depth_usage,
                },
                depth_ops: ops(d.depth),
                stencil_ops: stencil_ops(d.stencil),
                clear_value: (0.0, 0),
            }),
            None => None,
        };
        let desc = keel_hal::RenderPassDescriptor::<DynResources> {
            label: Some("keel-wgpu: zeroing what a pass discarded"),
            extent: wgpu::Extent3d {
                depth_or_array_layers: 1,
                ..extent
            },
            sample_count,
            color_attachments: &colors,
            depth_stencil_attachment,
            multiview_mask: pass.multiview_mask,
        };
        // SAFETY: recording outside passes; the attachments are those of
        // the pass just ended, in the usages it left them in.
        unsafe {
            self.enc.begin_render_pass(&desc);
            self.enc.end_render_pass();
        }
        Ok(())
    }

    fn render_cmds<'c>(
        &mut self,
        cmds: &'c [PassCmd],
        groups: &'c GroupTable,
        state: &mut BindState<'c>,
        occlusion: Option<&Arc<QuerySet>>,
    ) {
        for cmd in cmds {
            if let Err(e) = self.render_cmd(cmd, groups, state, occlusion) {
                self.fail("render pass", e);
            }
        }
    }

    fn render_cmd<'c>(
        &mut self,
        cmd: &'c PassCmd,
        groups: &'c GroupTable,
        state: &mut BindState<'c>,
        occlusion: Option<&Arc<QuerySet>>,
    ) -> Result<(), String> {
        let enc = &mut *self.enc;
        // SAFETY (every call below): inside the render pass; every resource
        // is alive and was moved to its usage before the pass began.
        unsafe {
            match cmd {
                PassCmd::SetRenderPipeline(p) => {
                    let raw = p.raw.as_deref().ok_or("the render pipeline is invalid")?;
                    match &mut self.tracker {
                        None => p.last_use.bump(self.submission),
                        Some(t) => t.used(p),
                    }
                    enc.set_render_pipeline(raw);
                    state.render = Some(p);
                    state.dirty_all();
                }
                PassCmd::SetBindGroup {
                    index,
                    group,
                    offsets,
                } => state.set_group(*index, group.and_then(|g| groups.get(g)), offsets),
                PassCmd::SetImmediates { offset, data } => state.immediates(*offset, data),
                PassCmd::SetIndexBuffer {
                    buffer,
                    format,
                    offset,
                    size,
                } => {
                    state.index_set = true;
                    enc.set_index_buffer(
                        keel_hal::BufferBinding {
                            buffer: buffer.handle()?,
                            offset: *offset,
                            size: *size,
                        },
                        *format,
                    )
                }
                PassCmd::SetVertexBuffer {
                    slot,
                    buffer: Some(buffer),
                    offset,
                    size,
                } => {
                    if *slot < 64 {
                        state.vertex_set |= 1 << slot;
                    }
                    enc.set_vertex_buffer(
                        *slot,
                        keel_hal::BufferBinding {
                            buffer: buffer.handle()?,
                            offset: *offset,
                            size: *size,
                        },
                    )
                }
                PassCmd::SetVertexBuffer {
                    slot, buffer: None, ..
                } => {
                    if *slot < 64 {
                        state.vertex_set &= !(1 << slot);
                    }
                }
                PassCmd::SetBlendConstant(c) => {
                    enc.set_blend_constants(&[c.r as f32, c.g as f32, c.b as f32, c.a as f32])
                }
                PassCmd::SetScissorRect([x, y, w, h]) => enc.set_scissor_rect(&keel_hal::Rect {
                    x: *x,
                    y: *y,
                    w: *w,
                    h: *h,
                }),
                PassCmd::SetViewport { rect, depth } => enc.set_viewport(
                    &keel_hal::Rect {
                        x: rect[0],
                        y: rect[1],
                        w: rect[2],
                        h: rect[3],
                    },
                    depth.clone(),
                ),
                PassCmd::SetStencilReference(v) => enc.set_stencil_reference(*v),
                PassCmd::Draw { .. }
                | PassCmd::DrawIndexed { .. }
                | PassCmd::DrawIndirect { .. }
                | PassCmd::DrawIndirectCount { .. }
                | PassCmd::DrawMeshTasks(_)
                | PassCmd::DrawMeshTasksIndirect { .. } => {
                    // Taken first, so that every indirect draw takes its
                    // own, whatever happens below.
                    let checked = match cmd {
                        PassCmd::DrawIndirect { .. } => {
                            self.draws.as_mut().and_then(CheckedDraws::next)
                        }
                        _ => None,
                    };
                    let pipeline = state.render.ok_or("Render pipeline must be set")?;
                    // wgpu's draw checks: every slot the pipeline reads has
                    // a buffer; an indexed draw has an index buffer.
                    let missing = pipeline.vertex_slots & !state.vertex_set;
                    if missing != 0 {
                        return Err(format!(
                            "Currently set RenderPipeline requires vertex buffer {} to be set",
                            missing.trailing_zeros()
                        ));
                    }
                    let indexed = match cmd {
                        PassCmd::DrawIndexed { .. } => true,
                        PassCmd::DrawIndirect { indexed, .. } => *indexed,
                        PassCmd::DrawIndirectCount { family, .. } => *family == DrawFamily::Indexed,
                        _ => false,
                    };
                    if indexed && !state.index_set {
                        return Err("Index buffer must be set".into());
                    }
                    let layout = pipeline
                        .layout
                        .as_ref()
                        .ok_or("the render pipeline is invalid")?;
                    self.flush_groups(state, layout)?;
                    let enc = &mut *self.enc;
                    match cmd {
                        PassCmd::Draw {
                            vertices,
                            instances,
                        } => enc.draw(
                            vertices.start,
                            vertices.len() as u32,
                            instances.start,
                            instances.len() as u32,
                        ),
                        PassCmd::DrawIndexed {
                            indices,
                            base_vertex,
                            instances,
                        } => enc.draw_indexed(
                            indices.start,
                            indices.len() as u32,
                            *base_vertex,
                            instances.start,
                            instances.len() as u32,
                        ),
                        PassCmd::DrawIndirect {
                            buffer,
                            offset,
                            count,
                            indexed,
                            ..
                        } => {
                            if let (Some(range), Some(draws)) = (checked, &self.draws) {
                                // The checked arguments, in INDIRECT
                                // (`DrawPlan::record`), in runs.
                                for (args, at, n) in draws.runs(range) {
                                    if *indexed {
                                        enc.draw_indexed_indirect(args, at, n)
                                    } else {
                                        enc.draw_indirect(args, at, n)
                                    }
                                }
                            } else if *indexed {
                                enc.draw_indexed_indirect(buffer.handle()?, *offset, *count)
                            } else {
                                enc.draw_indirect(buffer.handle()?, *offset, *count)
                            }
                        }
                        PassCmd::DrawIndirectCount {
                            buffer,
                            offset,
                            count_buffer,
                            count_offset,
                            max_count,
                            family,
                        } => {
                            let (args, count) = (buffer.handle()?, count_buffer.handle()?);
                            let (at, n, max) = (*offset, *count_offset, *max_count);
                            match family {
                                DrawFamily::Draw => {
                                    enc.draw_indirect_count(args, at, count, n, max)
                                }
                                DrawFamily::Indexed => {
                                    enc.draw_indexed_indirect_count(args, at, count, n, max)
                                }
                                DrawFamily::Mesh => {
                                    enc.draw_mesh_tasks_indirect_count(args, at, count, n, max)
                                }
                            }
                        }
                        PassCmd::DrawMeshTasks([x, y, z]) => enc.draw_mesh_tasks(*x, *y, *z),
                        PassCmd::DrawMeshTasksIndirect {
                            buffer,
                            offset,
                            count,
                        } => enc.draw_mesh_tasks_indirect(buffer.handle()?, *offset, *count),
                        _ => {}
                    }
                }
                PassCmd::PushDebugGroup(l) => enc.begin_debug_marker(l),
                PassCmd::PopDebugGroup => enc.end_debug_marker(),
                PassCmd::InsertDebugMarker(l) => enc.insert_debug_marker(l),
                PassCmd::WriteTimestamp { set, index } => {
                    let raw = set.raw.as_deref().ok_or("the query set is invalid")?;
                    enc.write_timestamp(raw, *index);
                }
                PassCmd::BeginOcclusionQuery(index) => {
                    let set = occlusion.ok_or("the pass has no occlusion query set")?;
                    let raw = set.raw.as_deref().ok_or("the query set is invalid")?;
                    enc.begin_query(raw, *index);
                    state.occlusion = Some(*index);
                }
                PassCmd::EndOcclusionQuery => {
                    let set = occlusion.ok_or("the pass has no occlusion query set")?;
                    let raw = set.raw.as_deref().ok_or("the query set is invalid")?;
                    let index = state.occlusion.take().ok_or("no occlusion query is open")?;
                    enc.end_query(raw, index);
                }
                PassCmd::BeginStatisticsQuery { set, index } => {
                    let raw = set.raw.as_deref().ok_or("the query set is invalid")?;
                    enc.begin_query(raw, *index);
                    state.statistics = Some((set, *index));
                }
                PassCmd::EndStatisticsQuery => {
                    let (set, index) = state
                        .statistics
                        .take()
                        .ok_or("no statistics query is open")?;
                    let raw = set.raw.as_deref().ok_or("the query set is invalid")?;
                    enc.end_query(raw, index);
                }
                PassCmd::ExecuteBundles(bundles) => {
                    for bundle in bundles {
                        let mut bundle_state = BindState::default();
                        for group in bundle.groups.all() {
                            self.used(group);
                        }
                        self.render_cmds(
                            &bundle.cmds,
                            &bundle.groups,
                            &mut bundle_state,
                            occlusion,
                        );
                    }
                    // wgpu's rule: after bundles, the pass state is reset.
                    *state = BindState {
                        occlusion: state.occlusion,
                        statistics: state.statistics.take(),
                        ..Default::default()
                    };
                }
                other => return Err(format!("{other:?} is not a render command")),
            }
        }
        Ok(())
    }
}

/// How `finish` encoded a command buffer.
pub(crate) enum Encoding {
    /// Into its own keel-hal command buffer.
    Done(Encoded),
    /// It uses a surface frame: it is replayed at submit instead.
    AtSubmit,
    /// It cannot be encoded (what the replay or keel-hal refused, or the
    /// encoder failed): the command buffer is invalid.
    Failed(KeelError),
}

/// Encodes `cmds` into a keel-hal command buffer of their own, with the
/// uses a submit resolves (`tracker.rs`): `finish`'s work, on its thread.
pub(crate) fn encode(shared: &Arc<DeviceShared>, cmds: &[Cmd]) -> Encoding {
    let call = "CommandEncoder::finish";
    let mut encoder = match shared.begin_encoder("keel-wgpu command buffer") {
        Ok(e) => e,
        Err(e) => return Encoding::Failed(e),
    };
    let ((tracker, error, met_frame), refusals) = keel_hal::refusal::capture(|| {
        let mut replay = Replay::local(&mut *encoder);
        for cmd in cmds {
            replay.cmd(cmd);
            if replay.met_frame {
                break;
            }
        }
        let error = replay.errors().first().cloned();
        (replay.take_tracker(), error, replay.met_frame)
    });
    // SAFETY: recording (begun above), outside any pass: every pass the
    // replay opened it closed.
    let buffer = match unsafe { encoder.as_mut().end_encoding() } {
        Ok(b) => b,
        Err(e) => {
            // SAFETY: nothing of this encoder was submitted.
            unsafe { shared.recycle_encoder(encoder, Vec::new()) };
            return Encoding::Failed(KeelError::from_hal(call, &e));
        }
    };
    let failure = match (met_frame, error, refusals.first(), tracker) {
        (true, ..) => None,
        (_, Some(e), ..) => Some(Encoding::Failed(KeelError::validation(call, e))),
        (_, None, Some(r), _) => Some(Encoding::Failed(KeelError::validation(
            call,
            format!("keel-hal refused a command: {r}"),
        ))),
        (_, None, None, Some(tracker)) => {
            return Encoding::Done(Encoded {
                encoder,
                buffer,
                tracker,
            })
        }
        (_, None, None, None) => Some(Encoding::Failed(KeelError::validation(
            call,
            "the replay kept no uses",
        ))),
    };
    // SAFETY: the buffer came from this encoder and was never submitted.
    unsafe { shared.recycle_encoder(encoder, vec![buffer]) };
    failure.unwrap_or(Encoding::AtSubmit)
}

/// Pipeline and bind-group state inside one pass.
/// It borrows from the commands it encodes: nothing is cloned per command.
#[derive(Default)]
struct BindState<'c> {
    compute: Option<&'c Arc<crate::pipeline::ComputePipeline>>,
    render: Option<&'c Arc<crate::pipeline::RenderPipeline>>,
    pipeline_dirty: bool,
    groups: [Option<(&'c Arc<BindGroup>, &'c [u32])>; 8],
    dirty: u32,
    immediate_offset: u32,
    immediate_data: Option<&'c [u8]>,
    immediate_dirty: bool,
    occlusion: Option<u32>,
    statistics: Option<(&'c Arc<QuerySet>, u32)>,
    /// Vertex buffer slots with a buffer set (bit per slot).
    vertex_set: u64,
    /// Whether an index buffer is set.
    index_set: bool,
}

impl<'c> BindState<'c> {
    fn dirty_all(&mut self) {
        self.pipeline_dirty = true;
        self.dirty = u32::MAX;
        self.immediate_dirty = true;
    }
    fn set_group(&mut self, index: u32, group: Option<&'c Arc<BindGroup>>, offsets: &'c [u32]) {
        if let Some(slot) = self.groups.get_mut(index as usize) {
            *slot = group.map(|g| (g, offsets));
            self.dirty |= 1 << index;
        }
    }
    fn immediates(&mut self, offset: u32, data: &'c [u8]) {
        self.immediate_offset = offset;
        self.immediate_data = Some(data);
        self.immediate_dirty = true;
    }
}

/// The subresources of `mips` × `layers` for which `state` is `Some`,
/// merged into as few ranges as share one state: runs of mips within a
/// layer, then runs of layers with the same runs (wgpu-core's merged
/// texture barriers, rather than one per subresource).
pub(crate) fn merged_ranges(
    mips: Range<u32>,
    layers: Range<u32>,
    state: impl Fn(u32, u32) -> Option<TextureUses>,
) -> Vec<(wgpu::ImageSubresourceRange, TextureUses)> {
    let mut out: Vec<(wgpu::ImageSubresourceRange, TextureUses)> = Vec::new();
    // The runs of the layers merged so far, and where they started.
    let mut open: Vec<(Range<u32>, TextureUses)> = Vec::new();
    let mut open_from = layers.start;
    let flush = |out: &mut Vec<_>, runs: &[(Range<u32>, TextureUses)], from: u32, to: u32| {
        for (run, s) in runs {
            out.push((
                wgpu::ImageSubresourceRange {
                    aspect: wgpu::TextureAspect::All,
                    base_mip_level: run.start,
                    mip_level_count: Some(run.end - run.start),
                    base_array_layer: from,
                    array_layer_count: Some(to - from),
                },
                *s,
            ));
        }
    };
    for layer in layers.clone() {
        let mut runs: Vec<(Range<u32>, TextureUses)> = Vec::new();
        for mip in mips.clone() {
            let Some(s) = state(mip, layer) else {
                continue;
            };
            match runs.last_mut() {
                Some((run, last)) if run.end == mip && *last == s => run.end = mip + 1,
                _ => runs.push((mip..mip + 1, s)),
            }
        }
        if runs != open {
            flush(&mut out, &open, open_from, layer);
            open = runs;
            open_from = layer;
        }
    }
    flush(&mut out, &open, open_from, layers.end);
    out
}

/// Calls `f` with every (mip, layer) of `range` (counts given).
fn for_each_subresource(range: &wgpu::ImageSubresourceRange, mut f: impl FnMut(u32, u32)) {
    let mips = range.mip_level_count.unwrap_or(0);
    let layers = range.array_layer_count.unwrap_or(0);
    for layer in range.base_array_layer..range.base_array_layer + layers {
        for mip in range.base_mip_level..range.base_mip_level + mips {
            f(mip, layer);
        }
    }
}

/// Plans the GPU check of `cmd` if it is an indirect draw
/// (`indirect_check.rs`; none where the device does not check them): a
/// checked draw's buffer joins `scope` as `STORAGE_READ_ONLY`, read by the
/// check (wgpu-core's rule).
fn plan_draw<'c>(
    cmd: &'c PassCmd,
    plan: &mut Option<DrawPlan<'c>>,
    scope: &mut Scope<'c>,
) -> Result<(), String> {
    let PassCmd::DrawIndirect {
        buffer,
        offset,
        count,
        indexed,
        limits,
    } = cmd
    else {
        return Ok(());
    };
    if plan.is_none() {
        let Some(check) = buffer.shared.indirect_check()? else {
            return Ok(());
        };
        *plan = Some(DrawPlan::new(check, &buffer.shared));
    }
    if let Some(plan) = plan {
        if plan.add(buffer, *offset, *count, *indexed, *limits)? {
            scope.buffer(buffer, BufferUses::STORAGE_READ_ONLY);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn barriers_merge_into_ranges() {
        // A 4-mip, 3-layer texture: mips 0..2 of every layer in one state,
        // mip 3 of layer 1 in another, mip 2 nowhere (no barrier).
        let state = |mip: u32, layer: u32| match (mip, layer) {
            (2, _) => None,
            (3, 1) => Some(TextureUses::COPY_DST),
            (3, _) => Some(TextureUses::RESOURCE),
            _ => Some(TextureUses::RESOURCE),
        };
        let ranges = merged_ranges(0..4, 0..3, state);
        let flat: Vec<_> = ranges
            .iter()
            .map(|(r, s)| {
                (
                    r.base_mip_level..r.base_mip_level + r.mip_level_count.unwrap(),
                    r.base_array_layer..r.base_array_layer + r.array_layer_count.unwrap(),
                    *s,
                )
            })
            .collect();
        assert_eq!(
            flat,
            vec![
                (0..2, 0..1, TextureUses::RESOURCE),
                (3..4, 0..1, TextureUses::RESOURCE),
                (0..2, 1..2, TextureUses::RESOURCE),
                (3..4, 1..2, TextureUses::COPY_DST),
                (0..2, 2..3, TextureUses::RESOURCE),
                (3..4, 2..3, TextureUses::RESOURCE),
            ]
        );
        // Every subresource alike: one range.
        let all = merged_ranges(0..4, 0..3, |_, _| Some(TextureUses::RESOURCE));
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].0.mip_level_count, Some(4));
        assert_eq!(all[0].0.array_layer_count, Some(3));
        // Nothing: no range.
        assert!(merged_ranges(0..4, 0..3, |_, _| None).is_empty());
    }
}
