//! A command buffer's own usage tracker (wgpu-core's model): a command
//! encoder is encoded into its own keel-hal command buffer at `finish`, on
//! the thread that finishes it, knowing nothing of the device's current
//! resource states. The tracker keeps, per resource, the first use the
//! command buffer makes (and, for textures, per subresource) and the last;
//! barriers inside the command buffer come from its own uses. At submit,
//! [`Tracker::resolve`] records what the first uses need against the
//! device's states (barriers, and the zeroing of memory never written) in a
//! short command buffer in front of it, and leaves the last uses as the
//! device's states. Nothing on the encoding path takes a lock another
//! encoder takes.
//!
//! The tracker also holds every object the command buffer uses until its
//! submit, which marks them used by that submission.

use std::ops::Range;
use std::sync::Arc;

use keel_hal::dynamic::{DynBuffer, DynCommandEncoder};
use keel_hal::{BufferBarrier, BufferUses, StateTransition, TextureBarrier, TextureUses};

use crate::ptr_map::PtrMap;
use crate::resource::{Buffer, LastUse, MapState, Texture};

/// An object whose last use a submission moves.
pub(crate) trait Used: std::fmt::Debug + Send + Sync {
    fn last_use(&self) -> &LastUse;
}

macro_rules! used {
    ($($t:ty),*) => {$(
        impl Used for $t {
            fn last_use(&self) -> &LastUse {
                &self.last_use
            }
        }
    )*};
}

used!(
    crate::resource::TextureView,
    crate::resource::QuerySet,
    crate::binding::BindGroup,
    crate::pipeline::RenderPipeline,
    crate::pipeline::ComputePipeline
);

/// One buffer's uses in a command buffer.
#[derive(Debug)]
pub(crate) struct BufferTrack {
    pub buffer: Arc<Buffer>,
    /// The first use (`None` until one).
    pub first: Option<BufferUses>,
    /// The last use so far.
    pub last: BufferUses,
    /// Ranges written whole before any use that reads what was never
    /// written: those need no zeroing.
    pub pre_written: Vec<Range<u64>>,
    /// A use that reads whatever was never written (every use but a whole
    /// write): everything still unwritten at submit is zeroed first.
    pub reads_uninit: bool,
}

/// One texture's uses in a command buffer, per subresource
/// (`layer * mips + mip`).
#[derive(Debug)]
pub(crate) struct TextureTrack {
    pub texture: Arc<Texture>,
    /// The first use, and whether it reads (so a never-written
    /// subresource must be zeroed before it).
    pub first: Vec<Option<(TextureUses, bool)>>,
    pub last: Vec<Option<TextureUses>>,
}

/// What one command buffer uses, first and last.
#[derive(Debug, Default)]
pub(crate) struct Tracker {
    pub buffers: PtrMap<BufferTrack>,
    pub textures: PtrMap<TextureTrack>,
    used: PtrMap<Arc<dyn Used>>,
}

impl Tracker {
    /// Keeps `obj` until the submit, which marks it used.
    pub(crate) fn used<T: Used + 'static>(&mut self, obj: &Arc<T>) {
        self.used
            .entry(Arc::as_ptr(obj) as *const () as usize)
            .or_insert_with(|| obj.clone());
    }

    pub(crate) fn buffer(&mut self, buffer: &Arc<Buffer>) -> &mut BufferTrack {
        self.buffers
            .entry(Arc::as_ptr(buffer) as usize)
            .or_insert_with(|| BufferTrack {
                buffer: buffer.clone(),
                first: None,
                last: BufferUses::empty(),
                pre_written: Vec::new(),
                reads_uninit: false,
            })
    }

    pub(crate) fn texture(&mut self, texture: &Arc<Texture>) -> &mut TextureTrack {
        self.textures
            .entry(Arc::as_ptr(texture) as usize)
            .or_insert_with(|| {
                let n = texture.layers() as usize * texture.mip_level_count as usize;
                TextureTrack {
                    texture: texture.clone(),
                    first: vec![None; n],
                    last: vec![None; n],
                }
            })
    }

    /// What makes the command buffer unsubmittable now: a resource it uses
    /// was destroyed, or a buffer is mapped (wgpu's submit-time checks).
    pub(crate) fn check_submit(&self) -> Result<(), String> {
        for t in self.buffers.values() {
            let b = &t.buffer;
            if b.destroyed.load(std::sync::atomic::Ordering::Acquire) {
                return Err(format!("{} has been destroyed", b.ident()));
            }
            if !matches!(*b.map.lock(), MapState::Idle) {
                return Err(format!("{} is still mapped", b.ident()));
            }
        }
        for t in self.textures.values() {
            t.texture
                .raw()
                .map_err(|e| format!("{}: {e}", t.texture.ident()))?;
        }
        Ok(())
    }

    /// Records in `enc` (outside passes) what the first uses need against
    /// the device's states, leaves the last uses as those states, and
    /// marks everything used by `submission`. Buffers the CPU may map for
    /// reading are added to `readbacks`. The caller checked
    /// [`Tracker::check_submit`] and holds the submit lock.
    pub(crate) fn resolve(
        &self,
        enc: &mut dyn DynCommandEncoder,
        submission: u64,
        readbacks: &mut Vec<Arc<Buffer>>,
        mut fail: impl FnMut(String),
    ) {
        let mut barriers: Vec<BufferBarrier<'_, dyn DynBuffer>> = Vec::new();
        let mut zeroes: Vec<(&dyn DynBuffer, Vec<Range<u64>>)> = Vec::new();
        let mut zero_barriers: Vec<BufferBarrier<'_, dyn DynBuffer>> = Vec::new();
        for t in self.buffers.values() {
            let b = &t.buffer;
            b.last_use.bump(submission);
            if b.usage.contains(wgpu::BufferUsages::MAP_READ)
                && !readbacks.iter().any(|r| Arc::ptr_eq(r, b))
            {
                readbacks.push(b.clone());
            }
            let Some(raw) = b.raw.as_deref() else {
                continue;
            };
            for range in &t.pre_written {
                b.mark_written(range.clone());
            }
            let mut state = b.state.lock();
            if t.reads_uninit {
                let ranges = b.take_uninit();
                if !ranges.is_empty() {
                    zero_barriers.push(BufferBarrier {
                        buffer: raw,
                        usage: StateTransition::new(*state, BufferUses::COPY_DST),
                    });
                    *state = BufferUses::COPY_DST;
                    zeroes.push((raw, ranges));
                }
            }
            if let Some(first) = t.first {
                if *state != first || first.intersects(crate::replay::BUFFER_WRITES) {
                    barriers.push(BufferBarrier {
                        buffer: raw,
                        usage: StateTransition::new(*state, first),
                    });
                }
                *state = t.last;
            }
        }
        // SAFETY (three blocks): recording outside passes; each buffer is in
        // the `from` state the device's tracker kept; the zeroed ranges are
        // 4-aligned and inside their (4-aligned) buffers.
        if !zero_barriers.is_empty() {
            unsafe { enc.transition_buffers(&zero_barriers) };
            for (raw, ranges) in zeroes {
                for range in ranges {
                    unsafe { enc.clear_buffer(raw, range) };
                }
            }
        }
        if !barriers.is_empty() {
            unsafe { enc.transition_buffers(&barriers) };
        }
        for t in self.textures.values() {
            let texture = &t.texture;
            texture.last_use.bump(submission);
            let Ok(raw) = texture.raw() else {
                continue;
            };
            let mut states = texture.states.lock();
            let count = texture.mip_level_count;
            let (mips, layers) = (0..count, 0..texture.layers());
            let at = |mip: u32, layer: u32| layer as usize * count as usize + mip as usize;
            // Never-written subresources read first: zeroed before.
            let clearable = !texture.format.is_compressed();
            let clears = crate::replay::merged_ranges(mips.clone(), layers.clone(), |m, l| {
                let i = at(m, l);
                (clearable
                    && states.get(i) == Some(&TextureUses::UNINITIALIZED)
                    && t.first[i].is_some_and(|(_, reads)| reads))
                .then_some(TextureUses::UNINITIALIZED)
            });
            if !clears.is_empty() {
                let to_dst: Vec<_> = clears
                    .iter()
                    .map(|(range, _)| TextureBarrier {
                        texture: raw,
                        range: *range,
                        usage: StateTransition::new(
                            TextureUses::UNINITIALIZED,
                            TextureUses::COPY_DST,
                        ),
                    })
                    .collect();
                // SAFETY: outside passes; the subresources are new.
                unsafe { enc.transition_textures(&to_dst) };
                for (range, _) in &clears {
                    // SAFETY: outside passes; in COPY_DST (above).
                    if let Err(e) = unsafe { enc.clear_texture(raw, range) } {
                        fail(format!("zero-initialising {}: {e}", texture.ident()));
                    }
                    for layer in range.base_array_layer
                        ..range.base_array_layer + range.array_layer_count.unwrap_or(0)
                    {
                        for mip in range.base_mip_level
                            ..range.base_mip_level + range.mip_level_count.unwrap_or(0)
                        {
                            states[at(mip, layer)] = TextureUses::COPY_DST;
                        }
                    }
                }
            }
            // First uses against the device's states, as merged ranges of
            // one (from, to) pair each.
            let mut pairs: Vec<(TextureUses, TextureUses)> = Vec::new();
            for i in 0..t.first.len() {
                if let (Some((first, _)), Some(state)) = (t.first[i], states.get(i)) {
                    if (*state != first || first.intersects(crate::replay::TEXTURE_WRITES))
                        && !pairs.contains(&(*state, first))
                    {
                        pairs.push((*state, first));
                    }
                }
            }
            let mut barriers = Vec::new();
            for (from, to) in pairs {
                for (range, _) in
                    crate::replay::merged_ranges(mips.clone(), layers.clone(), |m, l| {
                        let i = at(m, l);
                        (states.get(i) == Some(&from) && t.first[i].is_some_and(|(f, _)| f == to))
                            .then_some(from)
                    })
                {
                    barriers.push(TextureBarrier {
                        texture: raw,
                        range,
                        usage: StateTransition::new(from, to),
                    });
                }
            }
            if !barriers.is_empty() {
                // SAFETY: outside passes; each subresource is in `from`.
                unsafe { enc.transition_textures(&barriers) };
            }
            for (i, last) in t.last.iter().enumerate() {
                if let (Some(last), Some(state)) = (last, states.get_mut(i)) {
                    *state = *last;
                }
            }
        }
        for obj in self.used.values() {
            obj.last_use().bump(submission);
        }
    }
}
