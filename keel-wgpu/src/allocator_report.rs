//! `Device::generate_allocator_report`: every live buffer and texture the
//! program made, where keel-hal placed its memory, grouped by block.
//!
//! A [`LiveResources`] list holds a weak reference to each buffer and
//! texture made with memory; creation pushes one (a lock and a push), and
//! dead entries are pruned when the list has doubled since the last prune
//! (amortised O(1), at most twice the live count kept). Nothing happens at
//! destruction. The report asks keel-hal where each live resource's memory
//! lies (`Device::buffer_placement`, a query of the allocator), so it costs
//! only when asked for.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use crate::resource::{Buffer, Texture};
use crate::shared::DeviceShared;

/// The buffers and textures alive on a device (weakly held).
#[derive(Debug, Default)]
pub(crate) struct LiveResources {
    inner: Mutex<Lists>,
}

#[derive(Debug, Default)]
struct Lists {
    buffers: Vec<Weak<Buffer>>,
    textures: Vec<Weak<Texture>>,
    /// Entries after the last prune: the next prune is at twice as many.
    kept: usize,
}

impl Lists {
    fn prune_if_doubled(&mut self) {
        if self.buffers.len() + self.textures.len() >= (2 * self.kept).max(64) {
            self.buffers.retain(|b| b.strong_count() > 0);
            self.textures.retain(|t| t.strong_count() > 0);
            self.kept = self.buffers.len() + self.textures.len();
        }
    }
}

impl LiveResources {
    /// Lists a new buffer.
    pub(crate) fn buffer(&self, buffer: &Arc<Buffer>) {
        let mut lists = self.inner.lock();
        lists.buffers.push(Arc::downgrade(buffer));
        lists.prune_if_doubled();
    }

    /// Lists a new texture.
    pub(crate) fn texture(&self, texture: &Arc<Texture>) {
        let mut lists = self.inner.lock();
        lists.textures.push(Arc::downgrade(texture));
        lists.prune_if_doubled();
    }

    /// The live ones, held strongly (outside the lock: dropping the last
    /// reference of one must not find the list locked).
    fn alive(&self) -> (Vec<Arc<Buffer>>, Vec<Arc<Texture>>) {
        let lists = self.inner.lock();
        (
            lists.buffers.iter().filter_map(Weak::upgrade).collect(),
            lists.textures.iter().filter_map(Weak::upgrade).collect(),
        )
    }
}

/// One allocation of the report, before grouping.
struct Placed {
    name: String,
    placement: keel_hal::MemoryPlacement,
}

/// wgpu's allocator report for `shared`: each live buffer's and texture's
/// allocation (named by its label, else as wgpu-hal names it), in blocks ordered by
/// identity with their allocations by offset; the totals are keel-hal's
/// (so they also count keel-wgpu's own staging and retained memory).
pub(crate) fn report(shared: &DeviceShared) -> wgpu::AllocatorReport {
    let (buffers, textures) = shared.live.alive();
    let hal = shared.hal();
    let mut placed: Vec<Placed> = Vec::with_capacity(buffers.len() + textures.len());
    for buffer in &buffers {
        let Some(raw) = buffer.raw.as_deref() else {
            continue;
        };
        if buffer.destroyed.load(Ordering::Relaxed) {
            continue;
        }
        // SAFETY: the buffer came from this device and is alive (held).
        if let Some(placement) = unsafe { hal.buffer_placement(raw) } {
            placed.push(Placed {
                name: name_of(&buffer.label, "buffer"),
                placement,
            });
        }
    }
    for texture in &textures {
        let Some(raw) = texture.raw.as_deref() else {
            continue;
        };
        if texture.destroyed.load(Ordering::Relaxed) {
            continue;
        }
        // SAFETY: the texture came from this device and is alive (held).
        if let Some(placement) = unsafe { hal.texture_placement(raw) } {
            placed.push(Placed {
                name: name_of(&texture.label, "texture"),
                placement,
            });
        }
    }
    placed.sort_by_key(|p| (p.placement.block, p.placement.offset));
    let mut allocations = Vec::with_capacity(placed.len());
    let mut blocks: Vec<wgpu::wgt::MemoryBlockReport> = Vec::new();
    let mut current = None;
    for p in placed {
        let index = allocations.len();
        if current != Some(p.placement.block) {
            current = Some(p.placement.block);
            blocks.push(wgpu::wgt::MemoryBlockReport {
                size: p.placement.block_size,
                allocations: index..index,
            });
        }
        if let Some(block) = blocks.last_mut() {
            block.allocations.end = index + 1;
        }
        allocations.push(wgpu::wgt::AllocationReport {
            name: p.name,
            offset: p.placement.offset,
            size: p.placement.size,
        });
    }
    let totals = hal.memory_report();
    wgpu::AllocatorReport {
        allocations,
        blocks,
        total_allocated_bytes: totals.live_bytes,
        total_reserved_bytes: totals.reserved_bytes,
    }
}

/// The program's label, else wgpu-hal's name for an unlabelled one.
fn name_of(label: &str, kind: &str) -> String {
    if label.is_empty() {
        format!("Unlabeled {kind}")
    } else {
        label.to_string()
    }
}
