//! A bucket: the pools shared by layouts of one key, and their policy
//! (oldest pool with room first, geometric growth, lazy shrinking).

use ash::vk;

use super::raw::{map_create_err, DescriptorDevice};
use super::slots::{RankSet, Slab};
use super::{BucketKey, Layouts, POOL_MAX_SETS, POOL_MIN_SETS};
use crate::DeviceError;
use parking_lot::Mutex;

/// No position (pool not idle).
pub(super) const NONE: u32 = u32::MAX;

/// One `VkDescriptorPool`.
#[derive(Debug)]
pub(super) struct Pool {
    pub(super) raw: vk::DescriptorPool,
    /// `maxSets` it was created with.
    pub(super) capacity: u32,
    /// Sets taken from the pool: in use plus cached in a layout's idle list.
    pub(super) allocated: u32,
    /// The driver refused an allocation below `capacity`
    /// (`OUT_OF_POOL_MEMORY`/`FRAGMENTED_POOL`); cleared when a set returns.
    pub(super) exhausted: bool,
    /// Index in `Bucket::order` (creation order).
    pub(super) rank: u32,
    /// Index in `Bucket::idle_pools`, or [`NONE`].
    pub(super) idle_pos: u32,
}

impl Pool {
    pub(super) fn has_room(&self) -> bool {
        !self.exhausted && self.allocated < self.capacity
    }
}

/// The pools shared by layouts with one [`BucketKey`].
///
/// Invariants:
/// - `order` lists the live pool ids in creation order, and
///   `pools[order[r]].rank == r`;
/// - `room` holds exactly the ranks whose pool [`Pool::has_room`], so
///   `room.first()` is the oldest pool with room;
/// - `idle_pools` lists exactly the pools with `allocated == 0` (no set in
///   use or cached: the ones shrinking may destroy), and
///   `pools[idle_pools[i]].idle_pos == i`;
/// - `capacity` and `allocated` are the sums over pools; `allocated` is
///   the sets handed out plus those cached in the idle lists of `layouts`.
///   Moving a set between use and a layout's cache touches no pool and no
///   bucket.
#[derive(Debug)]
pub(super) struct Bucket {
    pub(super) key: BucketKey,
    /// Registered layouts (indices into the allocator's layout slab).
    pub(super) layouts: Vec<u32>,
    pub(super) pools: Slab<Pool>,
    pub(super) order: Vec<u32>,
    pub(super) room: RankSet,
    pub(super) idle_pools: Vec<u32>,
    pub(super) capacity: u64,
    pub(super) allocated: u64,
}

impl Bucket {
    pub(super) fn new(key: BucketKey) -> Self {
        Self {
            key,
            layouts: Vec::new(),
            pools: Slab::default(),
            order: Vec::new(),
            room: RankSet::default(),
            idle_pools: Vec::new(),
            capacity: 0,
            allocated: 0,
        }
    }

    pub(super) fn pool_mut(&mut self, id: u32) -> Option<&mut Pool> {
        self.pools.get_current_mut(id)
    }

    /// Creates the next pool: as many sets as the bucket holds, clamped.
    /// Nothing changes on failure.
    pub(super) fn create_pool<D: DescriptorDevice>(
        &mut self,
        device: &D,
    ) -> Result<u32, DeviceError> {
        let sets = self
            .capacity
            .clamp(u64::from(POOL_MIN_SETS), u64::from(POOL_MAX_SETS)) as u32;
        let sizes = self.key.counts.pool_sizes(sets);
        let mut flags = vk::DescriptorPoolCreateFlags::FREE_DESCRIPTOR_SET;
        if self.key.update_after_bind {
            flags |= vk::DescriptorPoolCreateFlags::UPDATE_AFTER_BIND;
        }
        let info = vk::DescriptorPoolCreateInfo::default()
            .flags(flags)
            .max_sets(sets)
            .pool_sizes(&sizes);
        // SAFETY: `info` is valid: non-zero max_sets, non-empty sizes with
        // non-zero counts, flags the device accepts for this key.
        let raw = unsafe { device.create_pool(&info) }.map_err(map_create_err)?;
        // Nothing below can fail: the pool is owned by the bucket from here.
        let rank = self.order.len() as u32;
        let idle_pos = self.idle_pools.len() as u32;
        let (id, _) = self.pools.insert(Pool {
            raw,
            capacity: sets,
            allocated: 0,
            exhausted: false,
            rank,
            idle_pos,
        });
        self.order.push(id);
        self.room.insert(rank as usize);
        self.idle_pools.push(id);
        self.capacity += u64::from(sets);
        Ok(id)
    }

    /// Allocates a fresh set from the oldest pool with room, opening a pool
    /// when none has room. On `OUT_OF_POOL_MEMORY`/`FRAGMENTED_POOL` the pool
    /// is set aside and the allocation retried once in a new pool.
    pub(super) fn allocate_new<D: DescriptorDevice>(
        &mut self,
        device: &D,
        layout: vk::DescriptorSetLayout,
    ) -> Result<(u32, vk::DescriptorSet), DeviceError> {
        let first = match self.room.first().and_then(|r| self.order.get(r)) {
            Some(&id) => id,
            None => self.create_pool(device)?,
        };
        match self.allocate_in(device, first, layout) {
            Ok(raw) => return Ok((first, raw)),
            Err(vk::Result::ERROR_OUT_OF_POOL_MEMORY | vk::Result::ERROR_FRAGMENTED_POOL) => {
                self.refused(device, first);
            }
            Err(other) => return Err(crate::vulkan::conv::map_err(other)),
        }
        let fresh = self.create_pool(device)?;
        match self.allocate_in(device, fresh, layout) {
            Ok(raw) => Ok((fresh, raw)),
            Err(result) => {
                self.refused(device, fresh);
                Err(match result {
                    vk::Result::ERROR_OUT_OF_POOL_MEMORY | vk::Result::ERROR_FRAGMENTED_POOL => {
                        log::error!(
                            "a fresh descriptor pool cannot hold one set of {:?}",
                            self.key
                        );
                        DeviceError::OutOfMemory
                    }
                    other => crate::vulkan::conv::map_err(other),
                })
            }
        }
    }

    /// One `vkAllocateDescriptorSets` in pool `id`, with the bookkeeping.
    fn allocate_in<D: DescriptorDevice>(
        &mut self,
        device: &D,
        id: u32,
        layout: vk::DescriptorSetLayout,
    ) -> Result<vk::DescriptorSet, vk::Result> {
        let pool = self.pool_mut(id).ok_or(vk::Result::ERROR_UNKNOWN)?;
        // SAFETY: the pool is live; the caller of `allocate` guarantees the
        // layout is live and has this bucket's key.
        let raw = unsafe { device.allocate_set(pool.raw, layout) }?;
        pool.allocated += 1;
        let (full, rank, idle_pos) = (!pool.has_room(), pool.rank, pool.idle_pos);
        if full {
            self.room.remove(rank as usize);
        }
        if idle_pos != NONE {
            self.unmark_idle(idle_pos);
        }
        self.allocated += 1;
        Ok(raw)
    }

    /// The driver refused a set in pool `id`: an empty pool is useless and
    /// goes now; another waits, without room, until one of its sets returns.
    fn refused<D: DescriptorDevice>(&mut self, device: &D, id: u32) {
        let Some(pool) = self.pool_mut(id) else {
            return;
        };
        if pool.allocated == 0 {
            // No set of it is cached, so no layout's idle list needs looking at.
            self.destroy_pool(device, id, &Mutex::new(Layouts::default()));
        } else {
            pool.exhausted = true;
            let rank = pool.rank;
            self.room.remove(rank as usize);
        }
    }

    /// Adds pool `id`, whose last allocated set was just returned, to `idle_pools`.
    pub(super) fn mark_idle(&mut self, id: u32) {
        let pos = self.idle_pools.len() as u32;
        if let Some(pool) = self.pool_mut(id) {
            pool.idle_pos = pos;
            self.idle_pools.push(id);
        }
    }

    /// Removes `idle_pools[pos]`, keeping the positions right.
    pub(super) fn unmark_idle(&mut self, pos: u32) {
        let pos = pos as usize;
        if pos >= self.idle_pools.len() {
            return;
        }
        let removed = self.idle_pools.swap_remove(pos);
        if let Some(pool) = self.pool_mut(removed) {
            pool.idle_pos = NONE;
        }
        if let Some(&moved) = self.idle_pools.get(pos) {
            if let Some(pool) = self.pool_mut(moved) {
                pool.idle_pos = pos as u32;
            }
        }
    }

    /// Gives a set back to pool `id` with `vkFreeDescriptorSets`. The
    /// bookkeeping happens even when the driver fails, which is reported as
    /// [`DeviceError::Lost`].
    pub(super) fn return_set<D: DescriptorDevice>(
        &mut self,
        device: &D,
        id: u32,
        raw: vk::DescriptorSet,
    ) -> Result<(), DeviceError> {
        let Some(pool) = self.pool_mut(id) else {
            return Err(DeviceError::Unexpected);
        };
        // SAFETY: the set came from this FREE_DESCRIPTOR_SET pool and is
        // freed once (callers of `free` guarantee the GPU is done with it).
        let result = unsafe { device.free_sets(pool.raw, &[raw]) };
        let had_room = pool.has_room();
        pool.allocated = pool.allocated.saturating_sub(1);
        pool.exhausted = false;
        let (rank, empty) = (pool.rank, pool.allocated == 0);
        if !had_room {
            self.room.insert(rank as usize);
        }
        if empty {
            self.mark_idle(id);
        }
        self.allocated = self.allocated.saturating_sub(1);
        result.map_err(|err| {
            log::error!("vkFreeDescriptorSets failed: {err:?}");
            DeviceError::Lost
        })
    }

    /// Destroys idle pools while the bucket keeps at least a quarter of its
    /// capacity free in other pools. Cached sets of a destroyed pool leave
    /// their layouts' idle lists (they die with the pool).
    pub(super) fn shrink<D: DescriptorDevice>(&mut self, device: &D, layouts: &Mutex<Layouts>) {
        loop {
            let free_total = self.capacity.saturating_sub(self.allocated);
            let victim = self.idle_pools.iter().copied().find(|&id| {
                // A pool whose sets are cached by their layouts is kept: the
                // cache exists so the next burst reuses them (`trim` returns
                // them, after which the pool is truly empty).
                self.pools.get_current(id).is_some_and(|p| {
                    if p.allocated > 0 {
                        return false;
                    }
                    let free_here = u64::from(p.capacity.saturating_sub(p.allocated));
                    let free_other = free_total.saturating_sub(free_here);
                    free_other * 4 >= self.capacity
                })
            });
            match victim {
                Some(id) => self.destroy_pool(device, id, layouts),
                None => return,
            }
        }
    }

    /// Destroys pool `id`, which has no set in use, and evicts its cached
    /// sets from `layouts`.
    pub(super) fn destroy_pool<D: DescriptorDevice>(
        &mut self,
        device: &D,
        id: u32,
        layouts: &Mutex<Layouts>,
    ) {
        let Some(generation) = self.pools.generation(id) else {
            return;
        };
        let Some(pool) = self.pools.remove(id, generation) else {
            return;
        };
        if pool.allocated > 0 {
            let mut layouts = layouts.lock();
            for &layout in &self.layouts {
                layouts.evict_pool(layout, id);
            }
            self.allocated = self.allocated.saturating_sub(u64::from(pool.allocated));
        }
        self.capacity = self.capacity.saturating_sub(u64::from(pool.capacity));
        if pool.idle_pos != NONE {
            self.unmark_idle(pool.idle_pos);
        }
        // Re-rank the younger pools and rebuild `room` (pool destruction is
        // rare and costs a Vulkan call anyway).
        self.order.remove(pool.rank as usize);
        self.room.clear();
        for (rank, &pid) in self.order.iter().enumerate() {
            if let Some(p) = self.pools.get_current_mut(pid) {
                p.rank = rank as u32;
                if p.has_room() {
                    self.room.insert(rank);
                }
            }
        }
        // SAFETY: the pool is ours; no set from it is in use (the set
        // contracts of `free`/`unregister_layout` hold).
        unsafe { device.destroy_pool(pool.raw) };
    }

    /// Destroys every pool; their sets, in use or cached, die with them.
    pub(super) fn destroy<D: DescriptorDevice>(self, device: &D) {
        for (_, _, pool) in self.pools.iter() {
            // SAFETY: the pool is ours; the caller guarantees none of its sets
            // is in use by the GPU.
            unsafe { device.destroy_pool(pool.raw) };
        }
    }
}
