//! The descriptor allocator: descriptor pools and sets for bind groups
//! (docs/design.md §5).
//!
//! # Shape
//!
//! - A **bucket** holds the pools for every bind-group layout with the same
//!   [`BucketKey`] (per-type descriptor counts plus update-after-bind). A
//!   layout joins its bucket with [`DescriptorAllocator::register_layout`]
//!   and gets a [`LayoutToken`]; the bucket's first set allocation creates
//!   its first pool (a layout never used costs no pool), and the last
//!   layout to leave destroys all of them.
//! - **Pools** grow geometrically: each new pool holds as many sets as the
//!   whole bucket already does, clamped to [`POOL_MIN_SETS`]..=[`POOL_MAX_SETS`].
//! - **Allocation** takes the *oldest* pool with room (old pools are the
//!   small, full ones), so sets pack into few pools and newer pools drain and
//!   can go. Finding that pool costs two `trailing_zeros`, not a scan.
//! - **Shrinking**: a pool whose sets are all free (idle) is kept until the
//!   bucket has at least a quarter of its capacity free in *other* pools,
//!   then destroyed — any idle pool, not only the newest.
//! - **Recycling**: each layout keeps freed sets and hands them out again
//!   without a Vulkan call, so a burst of bind groups destroyed and
//!   re-created each frame costs one `vkUpdateDescriptorSets` per group. A
//!   layout keeps as many as it has had in use at once since the last trim
//!   (its peak: the size of the burst it will see again), at least
//!   [`MIN_IDLE_SETS_PER_LAYOUT`] (1,024, a full pool's worth) and at most
//!   [`MAX_IDLE_SETS_PER_LAYOUT`] (16,384); sets freed past that go back to
//!   their pool. Cached sets stay allocated from their pools (they hold no
//!   memory beyond the pool's, which the peak already filled), so they keep
//!   those pools alive; [`DescriptorAllocator::trim`] returns them and
//!   lowers each peak to what is in use then (the Vulkan device's
//!   `trim_descriptor_caches`), and unregistering the layout drops them.
//!
//! Steady-state `allocate`/`free` do no heap allocation and no hashing: tokens
//! and sets carry slab indices with generations, checked on every use.
//!
//! # Locking
//!
//! The allocator is shared by the device's threads and locks itself, with
//! two locks taken in one order (pools, then layouts):
//!
//! - **layouts** (a `parking_lot::Mutex`): every layout's entry
//!   (its bucket, its cached sets, its counts) and the live-set count. A
//!   cache hit (`allocate` popping a cached set, `free` pushing one) takes
//!   only this lock, for a pop or a push (an uncontended `parking_lot`
//!   lock and unlock: two atomic read-modify-writes). It is never held across a driver call or while taking the
//!   other lock.
//! - **pools** (`parking_lot::Mutex`): the buckets and their pools. Misses,
//!   frees past the cache, layout registration and `trim` take it, and
//!   hold it across the driver calls they make; they take the layouts lock
//!   inside it, briefly, to read or update entries.
//!
//! The Vulkan calls go through [`DescriptorDevice`], implemented for
//! `ash::Device` and, in tests, by a mock that simulates pools.
//!
//! | file | concept |
//! |---|---|
//! | `descriptor.rs` | the allocator: layouts, sets, recycling, stats |
//! | `descriptor/counts.rs` | [`DescriptorCounts`] and [`BucketKey`] |
//! | `descriptor/bucket.rs` | one bucket's pools and their policy |
//! | `descriptor/slots.rs` | the slab and the rank set behind O(1) lookups |
//! | `descriptor/raw.rs` | [`DescriptorDevice`] and its `ash` implementation |

mod bucket;
mod counts;
mod raw;
mod slots;

use ash::vk;

use crate::DeviceError;
use bucket::Bucket;
use parking_lot::Mutex;
// `DescriptorCounts` is wired in by bind groups; until then only the tests use it.
#[cfg_attr(not(test), allow(unused_imports))]
pub(crate) use counts::{BucketKey, DescriptorCounts};
pub(crate) use raw::DescriptorDevice;
use slots::Slab;

/// Sets in a bucket's first pool, and the least any pool holds.
pub(crate) const POOL_MIN_SETS: u32 = 16;
/// The most sets one pool holds; past this a bucket grows by pools of this size.
pub(crate) const POOL_MAX_SETS: u32 = 1024;
/// Freed sets a layout may keep for reuse whatever its peak.
pub(crate) const MIN_IDLE_SETS_PER_LAYOUT: usize = 1024;
/// The most freed sets a layout keeps for reuse, whatever its peak; more
/// go back to their pool.
pub(crate) const MAX_IDLE_SETS_PER_LAYOUT: usize = 16 * 1024;

/// How many freed sets a layout whose peak (sets in use at once since the
/// last trim) is `peak` keeps for reuse.
fn idle_bound(peak: u32) -> usize {
    (peak as usize).clamp(MIN_IDLE_SETS_PER_LAYOUT, MAX_IDLE_SETS_PER_LAYOUT)
}

/// A registered layout, returned by [`DescriptorAllocator::register_layout`].
/// Stale tokens (after `unregister_layout`) are detected, not trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LayoutToken {
    index: u32,
    generation: u32,
}

/// A layout's registration, made when its first set is allocated
/// ([`DescriptorAllocator::token_for`]): a layout that never gets a bind
/// group costs the allocator nothing. One word, read without a lock once
/// set.
#[derive(Debug, Default)]
pub(crate) struct LazyToken(std::sync::atomic::AtomicU64);

impl LazyToken {
    /// The token, once registered.
    #[inline(always)]
    pub(crate) fn get(&self) -> Option<LayoutToken> {
        let packed = self.0.load(std::sync::atomic::Ordering::Acquire);
        // Index + 1 in the low half: 0 is "not registered".
        let index = (packed as u32).checked_sub(1)?;
        Some(LayoutToken {
            index,
            generation: (packed >> 32) as u32,
        })
    }

    /// Records the token (`token.index` is below `u32::MAX`: the slab
    /// holds fewer entries than that).
    fn set(&self, token: LayoutToken) {
        let packed = u64::from(token.generation) << 32 | u64::from(token.index.wrapping_add(1));
        self.0.store(packed, std::sync::atomic::Ordering::Release);
    }
}

/// A descriptor set handed out by [`DescriptorAllocator::allocate`]. Give it
/// back with [`DescriptorAllocator::free`] (it is deliberately not `Clone`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct DescriptorSet {
    raw: vk::DescriptorSet,
    layout: LayoutToken,
    bucket: u32,
    bucket_generation: u32,
    pool: u32,
    pool_generation: u32,
}

impl DescriptorSet {
    /// The raw set. The allocator still owns it.
    #[inline(always)]
    pub(crate) fn raw(&self) -> vk::DescriptorSet {
        self.raw
    }

    /// The raw set as a one-element slice (for `vkCmdBindDescriptorSets`).
    #[inline(always)]
    pub(crate) fn raw_slice(&self) -> &[vk::DescriptorSet] {
        std::slice::from_ref(&self.raw)
    }
}

/// A freed set kept for reuse by its layout.
#[derive(Debug, Clone, Copy)]
struct IdleSet {
    raw: vk::DescriptorSet,
    pool: u32,
    pool_generation: u32,
}

/// A registered layout.
#[derive(Debug)]
struct LayoutEntry {
    bucket: u32,
    bucket_generation: u32,
    /// Index in the bucket's `layouts`.
    position: u32,
    /// Freed sets of this layout, still allocated from their pools.
    idle: Vec<IdleSet>,
    /// Sets of this layout handed out and not freed.
    in_use: u32,
    /// The most sets of this layout in use at once since the last trim.
    peak: u32,
    /// How many freed sets it keeps: [`idle_bound`] of `peak`.
    keep: usize,
}

impl LayoutEntry {
    /// A new entry in its bucket at `position`.
    fn new(bucket: u32, bucket_generation: u32, position: u32) -> Self {
        Self {
            bucket,
            bucket_generation,
            position,
            idle: Vec::new(),
            in_use: 0,
            peak: 0,
            keep: idle_bound(0),
        }
    }

    /// Counts one more set in use (and a new peak, if it is one).
    #[inline(always)]
    fn count_use(&mut self) {
        self.in_use = self.in_use.saturating_add(1);
        if self.in_use > self.peak {
            self.peak = self.in_use;
            self.keep = idle_bound(self.peak);
        }
    }

    /// Lowers the peak to the sets in use now (`trim`).
    fn reset_peak(&mut self) {
        self.peak = self.in_use;
        self.keep = idle_bound(self.peak);
    }
}

/// Every registered layout's entry and the live-set count: what a cache
/// hit reads and writes, behind the allocator's layouts lock.
#[derive(Debug, Default)]
pub(super) struct Layouts {
    entries: Slab<LayoutEntry>,
    /// Sets handed out by `allocate` and not yet given to `free`: the
    /// device's live bind groups.
    live: u64,
}

impl Layouts {
    /// Drops the cached sets of pool `pool` from layout `layout`'s idle
    /// list (the pool is being destroyed).
    fn evict_pool(&mut self, layout: u32, pool: u32) {
        if let Some(entry) = self.entries.get_current_mut(layout) {
            entry.idle.retain(|s| s.pool != pool);
        }
    }
}

/// The buckets and their pools, behind the allocator's mutex.
#[derive(Default)]
struct Pools {
    buckets: Slab<Bucket>,
    /// Bucket index by key; used only by `register_layout`.
    by_key: rustc_hash::FxHashMap<BucketKey, u32>,
}

/// Counters of one bucket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BucketStats {
    /// The bucket's key.
    pub(crate) key: BucketKey,
    /// Registered layouts.
    pub(crate) layouts: u32,
    /// Live pools.
    pub(crate) pools: u32,
    /// Sets the pools can hold (sum of `maxSets`).
    pub(crate) capacity: u64,
    /// Sets handed out and not freed.
    pub(crate) in_use: u64,
    /// Freed sets kept by layouts for reuse.
    pub(crate) cached: u64,
}

/// Counters of the whole allocator, per bucket and in total.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct DescriptorStats {
    /// One entry per bucket, in no particular order.
    pub(crate) buckets: Vec<BucketStats>,
    /// Live pools.
    pub(crate) pools: u32,
    /// Sets the pools can hold.
    pub(crate) capacity: u64,
    /// Sets handed out and not freed.
    pub(crate) in_use: u64,
    /// Freed sets kept for reuse.
    pub(crate) cached: u64,
}

/// Descriptor pools and sets of one device (see the module docs). It
/// locks itself (module docs, "Locking").
///
/// Every method takes the device: pass the same one each time. Before the
/// device is destroyed, unregister every layout or call
/// [`DescriptorAllocator::destroy_all`]; dropping the allocator with live
/// pools leaks them (and logs it).
#[derive(Default)]
pub(crate) struct DescriptorAllocator {
    pools: parking_lot::Mutex<Pools>,
    layouts: Mutex<Layouts>,
}

impl DescriptorAllocator {
    /// Registers a layout with this key (tests; a bind group layout
    /// registers through [`Self::token_for`] when its first set is
    /// allocated). The first layout of a bucket creates the bucket, without
    /// a pool: the bucket's first set allocation makes its first pool. No
    /// Vulkan call.
    ///
    /// On error nothing stays registered: the caller destroys its
    /// `VkDescriptorSetLayout` directly and must not call
    /// [`Self::unregister_layout`].
    ///
    /// # Safety
    /// `key` matches the layout's bindings and its update-after-bind flag.
    #[cfg(test)]
    pub(crate) unsafe fn register_layout(
        &self,
        key: BucketKey,
    ) -> Result<LayoutToken, DeviceError> {
        self.register_in(&mut self.pools.lock(), key)
    }

    /// [`Self::register_layout`] under the pools lock.
    fn register_in(&self, pools: &mut Pools, key: BucketKey) -> Result<LayoutToken, DeviceError> {
        let bucket_index = match pools.by_key.get(&key) {
            Some(&index) => index,
            None => {
                // No pool yet: the first set allocated makes the first one
                // (`Bucket::allocate_new`), so a layout that never gets a
                // bind group costs no pool.
                let (index, _) = pools.buckets.insert(Bucket::new(key));
                pools.by_key.insert(key, index);
                index
            }
        };
        let Some(generation) = pools.buckets.generation(bucket_index) else {
            return Err(DeviceError::Unexpected);
        };
        let Some(bucket) = pools.buckets.get_mut(bucket_index, generation) else {
            return Err(DeviceError::Unexpected);
        };
        let position = bucket.layouts.len() as u32;
        let (index, layout_generation) = self.layouts.lock().entries.insert(LayoutEntry::new(
            bucket_index,
            generation,
            position,
        ));
        bucket.layouts.push(index);
        Ok(LayoutToken {
            index,
            generation: layout_generation,
        })
    }

    /// The token of a layout of this key, registering it first if `lazy`
    /// holds none yet (then under the pools lock, so two threads making a
    /// layout's first bind groups register it once). Inlined: after the
    /// first call this is one load.
    ///
    /// # Safety
    /// As for [`Self::register_layout`]; `lazy` is the layout's own, read
    /// only through this allocator.
    #[inline(always)]
    pub(crate) unsafe fn token_for(
        &self,
        lazy: &LazyToken,
        key: BucketKey,
    ) -> Result<LayoutToken, DeviceError> {
        match lazy.get() {
            Some(token) => Ok(token),
            // SAFETY: forwarded contract.
            None => unsafe { self.register_lazily(lazy, key) },
        }
    }

    /// [`Self::token_for`] for a layout not registered yet.
    ///
    /// # Safety
    /// As for [`Self::token_for`].
    #[cold]
    #[inline(never)]
    unsafe fn register_lazily(
        &self,
        lazy: &LazyToken,
        key: BucketKey,
    ) -> Result<LayoutToken, DeviceError> {
        let mut pools = self.pools.lock();
        // Another thread may have registered it while this one waited.
        if let Some(token) = lazy.get() {
            return Ok(token);
        }
        let token = self.register_in(&mut pools, key)?;
        lazy.set(token);
        Ok(token)
    }

    /// Unregisters a layout. Its cached sets go back to their pools; if it
    /// was the bucket's last layout, every pool of the bucket is destroyed
    /// instead, and sets still held by callers die with them (a later
    /// [`Self::free`] of such a set does nothing).
    ///
    /// The layout is unregistered even on error: `Lost` if returning a cached
    /// set failed, `Unexpected` for a stale token.
    ///
    /// # Safety
    /// `device` is the allocator's device. If this is the last layout of its
    /// bucket, no set allocated for the bucket is in use by the GPU.
    pub(crate) unsafe fn unregister_layout<D: DescriptorDevice>(
        &self,
        device: &D,
        token: LayoutToken,
    ) -> Result<(), DeviceError> {
        let mut pools = self.pools.lock();
        let pools = &mut *pools;
        let entry = {
            let mut layouts = self.layouts.lock();
            let Some(entry) = layouts.entries.remove(token.index, token.generation) else {
                return Err(DeviceError::Unexpected);
            };
            let Some(bucket) = pools.buckets.get_mut(entry.bucket, entry.bucket_generation) else {
                return Err(DeviceError::Unexpected);
            };
            let pos = entry.position as usize;
            if pos < bucket.layouts.len() {
                bucket.layouts.swap_remove(pos);
                if let Some(&moved) = bucket.layouts.get(pos) {
                    if let Some(other) = layouts.entries.get_current_mut(moved) {
                        other.position = pos as u32;
                    }
                }
            }
            entry
        };
        let Some(bucket) = pools.buckets.get_mut(entry.bucket, entry.bucket_generation) else {
            return Err(DeviceError::Unexpected);
        };
        if bucket.layouts.is_empty() {
            if let Some(bucket) = pools.buckets.remove(entry.bucket, entry.bucket_generation) {
                pools.by_key.remove(&bucket.key);
                bucket.destroy(device);
            }
            return Ok(());
        }
        let mut result = Ok(());
        for idle in &entry.idle {
            if let Err(err) = bucket.return_set(device, idle.pool, idle.raw) {
                result = Err(err);
            }
        }
        bucket.shrink(device, &self.layouts);
        result
    }

    /// Allocates a set for a registered layout: a cached set of this layout
    /// when there is one (no Vulkan call, and only the layouts lock), else
    /// a fresh one from the oldest pool with room. Either way the caller
    /// writes every binding (`vkUpdateDescriptorSets`) before use: a cached
    /// set holds old contents.
    ///
    /// # Safety
    /// `device` is the allocator's device; `set_layout` is the live layout
    /// `token` was registered for.
    #[inline]
    pub(crate) unsafe fn allocate<D: DescriptorDevice>(
        &self,
        device: &D,
        token: LayoutToken,
        set_layout: vk::DescriptorSetLayout,
    ) -> Result<DescriptorSet, DeviceError> {
        {
            let mut layouts = self.layouts.lock();
            let layouts = &mut *layouts;
            if let Some(entry) = layouts.entries.get_mut(token.index, token.generation) {
                if let Some(idle) = entry.idle.pop() {
                    // A cached set stays allocated from its pool, and a
                    // registered layout's bucket is live: nothing else changes.
                    entry.count_use();
                    layouts.live += 1;
                    return Ok(DescriptorSet {
                        raw: idle.raw,
                        layout: token,
                        bucket: entry.bucket,
                        bucket_generation: entry.bucket_generation,
                        pool: idle.pool,
                        pool_generation: idle.pool_generation,
                    });
                }
            }
        }
        // SAFETY: forwarded contract.
        unsafe { self.allocate_new(device, token, set_layout) }
    }

    /// [`Self::allocate`] when the layout has no cached set (or the token
    /// is stale): a fresh set from the oldest pool with room. Kept out of
    /// line, so the cache hit stays small.
    ///
    /// # Safety
    /// As for [`Self::allocate`].
    #[inline(never)]
    unsafe fn allocate_new<D: DescriptorDevice>(
        &self,
        device: &D,
        token: LayoutToken,
        set_layout: vk::DescriptorSetLayout,
    ) -> Result<DescriptorSet, DeviceError> {
        let mut pools = self.pools.lock();
        // The entry stays while the pools lock is held: only
        // `unregister_layout` and `destroy_all` remove entries, under it.
        let (bucket_index, bucket_generation) = {
            let layouts = self.layouts.lock();
            let Some(entry) = layouts.entries.get(token.index, token.generation) else {
                return Err(DeviceError::Unexpected);
            };
            (entry.bucket, entry.bucket_generation)
        };
        let Some(bucket) = pools.buckets.get_mut(bucket_index, bucket_generation) else {
            return Err(DeviceError::Unexpected);
        };
        let (pool, raw) = bucket.allocate_new(device, set_layout)?;
        let pool_generation = bucket.pools.generation(pool).unwrap_or_default();
        let mut layouts = self.layouts.lock();
        if let Some(entry) = layouts.entries.get_mut(token.index, token.generation) {
            entry.count_use();
        }
        layouts.live += 1;
        Ok(DescriptorSet {
            raw,
            layout: token,
            bucket: bucket_index,
            bucket_generation,
            pool,
            pool_generation,
        })
    }

    /// Frees a set. While its layout is registered and keeps fewer idle
    /// sets than its bound (its peak, clamped to
    /// [`MIN_IDLE_SETS_PER_LAYOUT`]..=[`MAX_IDLE_SETS_PER_LAYOUT`]), the
    /// set is cached for reuse (only the layouts lock);
    /// otherwise it goes back to its pool (`vkFreeDescriptorSets`; a failure
    /// is [`DeviceError::Lost`], with the set forgotten all the same). A set
    /// whose bucket is gone died with its pools: nothing to do.
    ///
    /// # Safety
    /// `device` is the allocator's device; the GPU is done with the set
    /// (no pending command buffer uses it).
    #[inline]
    pub(crate) unsafe fn free<D: DescriptorDevice>(
        &self,
        device: &D,
        set: DescriptorSet,
    ) -> Result<(), DeviceError> {
        {
            let mut layouts = self.layouts.lock();
            let layouts = &mut *layouts;
            if let Some(entry) = layouts
                .entries
                .get_mut(set.layout.index, set.layout.generation)
            {
                if entry.in_use != 0 && entry.idle.len() < entry.keep {
                    // A cached set stays allocated from its pool (which a
                    // set allocated from it keeps alive), so no pool
                    // changes: `shrink`, which only destroys pools with
                    // nothing allocated, would find no victim it did not
                    // find before.
                    entry.in_use -= 1;
                    layouts.live = layouts.live.saturating_sub(1);
                    entry.idle.push(IdleSet {
                        raw: set.raw,
                        pool: set.pool,
                        pool_generation: set.pool_generation,
                    });
                    return Ok(());
                }
            }
        }
        // SAFETY: forwarded contract.
        unsafe { self.free_to_pool(device, set) }
    }

    /// [`Self::free`] when the set is not cached: a double free, a layout
    /// that keeps enough, or one unregistered. Kept out of line.
    ///
    /// # Safety
    /// As for [`Self::free`].
    #[inline(never)]
    unsafe fn free_to_pool<D: DescriptorDevice>(
        &self,
        device: &D,
        set: DescriptorSet,
    ) -> Result<(), DeviceError> {
        let mut pools = self.pools.lock();
        {
            let mut layouts = self.layouts.lock();
            layouts.live = layouts.live.saturating_sub(1);
            if let Some(entry) = layouts
                .entries
                .get_mut(set.layout.index, set.layout.generation)
            {
                if entry.in_use == 0 {
                    drop(layouts);
                    log::error!("descriptor set {:?} freed twice", set.raw);
                    return Err(DeviceError::Unexpected);
                }
                entry.in_use -= 1;
            }
        }
        let Some(bucket) = pools.buckets.get_mut(set.bucket, set.bucket_generation) else {
            return Ok(());
        };
        // A pool goes only once nothing is allocated from it, so a set
        // handed out keeps its pool alive.
        if !bucket.pools.contains(set.pool, set.pool_generation) {
            log::error!("descriptor set {:?} freed after its pool", set.raw);
            return Err(DeviceError::Unexpected);
        }
        let result = bucket.return_set(device, set.pool, set.raw);
        if !bucket.idle_pools.is_empty() {
            bucket.shrink(device, &self.layouts);
        }
        result
    }

    /// Destroys every pool and forgets every layout and set (device
    /// teardown). Tokens and sets handed out before become stale.
    ///
    /// # Safety
    /// `device` is the allocator's device; no set is in use by the GPU.
    pub(crate) unsafe fn destroy_all<D: DescriptorDevice>(&mut self, device: &D) {
        // Remove slot by slot so generations advance and old tokens and sets
        // stay stale.
        let entries = &mut self.layouts.get_mut().entries;
        let layouts: Vec<(u32, u32)> = entries.iter().map(|(i, g, _)| (i, g)).collect();
        for (index, generation) in layouts {
            entries.remove(index, generation);
        }
        let pools = self.pools.get_mut();
        let buckets: Vec<(u32, u32)> = pools.buckets.iter().map(|(i, g, _)| (i, g)).collect();
        for (index, generation) in buckets {
            if let Some(bucket) = pools.buckets.remove(index, generation) {
                bucket.destroy(device);
            }
        }
        pools.by_key.clear();
    }

    /// Returns every cached idle set to its pool, lowers each layout's peak
    /// to the sets it has in use now, and shrinks the buckets (pools left
    /// with no set follow the usual quarter-free rule).
    ///
    /// # Safety
    /// `device` is the allocator's device.
    pub(crate) unsafe fn trim<D: DescriptorDevice>(&self, device: &D) -> Result<(), DeviceError> {
        let mut pools = self.pools.lock();
        let mut result = Ok(());
        // Each layout's cached sets, taken under the layouts lock and
        // returned to their pools after it.
        let taken: Vec<(u32, u32, Vec<IdleSet>)> = {
            let mut layouts = self.layouts.lock();
            layouts
                .entries
                .iter_mut()
                .map(|entry| {
                    entry.reset_peak();
                    let idle = std::mem::take(&mut entry.idle);
                    (entry.bucket, entry.bucket_generation, idle)
                })
                .collect()
        };
        for (bucket_index, bucket_generation, idle) in taken {
            let Some(bucket) = pools.buckets.get_mut(bucket_index, bucket_generation) else {
                continue;
            };
            for set in idle {
                if bucket.pools.contains(set.pool, set.pool_generation) {
                    if let Err(err) = bucket.return_set(device, set.pool, set.raw) {
                        result = Err(err);
                    }
                }
            }
        }
        let buckets: Vec<(u32, u32)> = pools.buckets.iter().map(|(i, g, _)| (i, g)).collect();
        for (index, generation) in buckets {
            if let Some(bucket) = pools.buckets.get_mut(index, generation) {
                if !bucket.idle_pools.is_empty() {
                    bucket.shrink(device, &self.layouts);
                }
            }
        }
        result
    }

    /// Sets handed out and not yet freed (every call to `free` counts, an
    /// erroneous one too: the caller's object is gone either way).
    pub(crate) fn live_sets(&self) -> u64 {
        self.layouts.lock().live
    }

    /// Counters per bucket and in total.
    pub(crate) fn stats(&self) -> DescriptorStats {
        let pools = self.pools.lock();
        let layouts = self.layouts.lock();
        let mut stats = DescriptorStats::default();
        for (_, _, bucket) in pools.buckets.iter() {
            let pools = bucket.order.len() as u32;
            // Counted here rather than kept: allocation and freeing touch
            // only the layout's entry.
            let cached: u64 = bucket
                .layouts
                .iter()
                .filter_map(|&l| layouts.entries.get_current(l))
                .map(|e| e.idle.len() as u64)
                .sum();
            let in_use = bucket.allocated.saturating_sub(cached);
            stats.pools += pools;
            stats.capacity += bucket.capacity;
            stats.in_use += in_use;
            stats.cached += cached;
            stats.buckets.push(BucketStats {
                key: bucket.key,
                layouts: bucket.layouts.len() as u32,
                pools,
                capacity: bucket.capacity,
                in_use,
                cached,
            });
        }
        stats
    }

    /// The peak of a registered layout (tests).
    #[cfg(test)]
    fn peak(&self, token: LayoutToken) -> Option<u32> {
        let layouts = self.layouts.lock();
        layouts
            .entries
            .get(token.index, token.generation)
            .map(|e| e.peak)
    }
}

impl std::fmt::Debug for DescriptorAllocator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DescriptorAllocator")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl Drop for DescriptorAllocator {
    fn drop(&mut self) {
        let stats = self.stats();
        if stats.pools > 0 {
            log::warn!(
                "descriptor allocator dropped with {} live pools (leaked); call destroy_all",
                stats.pools
            );
        }
    }
}

#[cfg(test)]
mod tests;
