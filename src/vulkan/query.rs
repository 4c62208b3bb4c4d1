//! Shared query pools for compacted-size reads of acceleration structures.
//!
//! Reading a BLAS's compacted size takes one
//! `ACCELERATION_STRUCTURE_COMPACTED_SIZE_KHR` query. Rather than one
//! `VkQueryPool` per structure (costly to create, and drivers keep memory per
//! pool), the device owns a few large pools of [`COMPACTION_POOL_SLOTS`]
//! queries each and hands out *contiguous slot ranges*:
//!
//! * `take` looks for the first free range of a pool that holds the whole
//!   request (first fit); failing that it takes the largest free range of at
//!   least [`MIN_FRAGMENT`] slots (the caller asks again for the rest); only
//!   when there is none does it create a new pool. A batch larger than a pool
//!   is so split into a few ranges, each read with one reset, one write and
//!   one copy.
//! * The encoder that recorded the reads keeps its ranges until its command
//!   buffers are reset (`reset_all`) or it is destroyed: only then is the GPU
//!   done with them. `give_back` merges a range into its pool's free list.
//! * A pool left with every slot free is *idle*: up to [`KEEP_IDLE_POOLS`]
//!   idle pools are kept for the next batch, so build-compact rounds create
//!   no pool after the first; an idle pool beyond that is destroyed, and
//!   `Device::trim_memory` destroys them all. `LiveCounts::compaction_query_pools`
//!   counts the pools with a slot in use, so it returns to its start when
//!   everything is released.
//!
//! The slot bookkeeping is plain data (unit-tested below); the Vulkan calls
//! are the pool creation in `take` and the destructions in `give_back`,
//! `trim` and `destroy_all`.

use std::ops::Range;

use ash::vk;

use crate::{Counter, DeviceError};

/// Queries in each shared pool. 512 slots of 8 bytes is a few KiB of driver
/// memory per pool, large enough that a batch of hundreds of BLASes reads its
/// sizes from one range, small enough that an idle pool costs little.
pub(crate) const COMPACTION_POOL_SLOTS: u32 = 512;

/// Idle pools (every slot free) kept for the next reads: four pools are
/// 2,048 queries, a few KiB of driver memory, and hold the slots of a
/// thousand-BLAS compaction round twice over.
pub(crate) const KEEP_IDLE_POOLS: usize = 4;

/// The smallest fragment worth splitting a batch for: below this, a request
/// that no free range holds whole gets a new pool instead.
pub(crate) const MIN_FRAGMENT: u32 = 32;

/// A contiguous range of queries of one shared pool, owned by one encoder
/// until its command buffers are reset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SlotRange {
    /// The pool.
    pub(crate) pool: vk::QueryPool,
    /// Its first query.
    pub(crate) first: u32,
    /// Number of queries (at least 1).
    pub(crate) count: u32,
}

/// One shared pool and its free slots.
#[derive(Debug)]
struct Pool {
    raw: vk::QueryPool,
    /// Free slots: sorted, disjoint, never adjacent (merged on return).
    free: Vec<Range<u32>>,
}

impl Pool {
    fn new(raw: vk::QueryPool) -> Self {
        let mut free = Vec::with_capacity(4);
        free.push(0..COMPACTION_POOL_SLOTS);
        Self { raw, free }
    }

    fn all_free(&self) -> bool {
        self.free.len() == 1 && self.free[0] == (0..COMPACTION_POOL_SLOTS)
    }

    /// Takes `count` slots from the start of free range `index`.
    fn carve(&mut self, index: usize, count: u32) -> SlotRange {
        let range = &mut self.free[index];
        let first = range.start;
        range.start += count;
        if range.start == range.end {
            self.free.remove(index);
        }
        SlotRange {
            pool: self.raw,
            first,
            count,
        }
    }

    /// Returns slots, merging them with their neighbours.
    fn release(&mut self, first: u32, count: u32) {
        let end = first + count;
        let at = self.free.partition_point(|r| r.start < first);
        let joins_prev = at > 0 && self.free[at - 1].end == first;
        let joins_next = self.free.get(at).is_some_and(|r| r.start == end);
        match (joins_prev, joins_next) {
            (true, true) => {
                let next_end = self.free[at].end;
                self.free[at - 1].end = next_end;
                self.free.remove(at);
            }
            (true, false) => self.free[at - 1].end = end,
            (false, true) => self.free[at].start = first,
            (false, false) => self.free.insert(at, first..end),
        }
    }
}

/// The device's shared compacted-size query pools.
#[derive(Debug, Default)]
pub(crate) struct CompactionPools {
    pools: Vec<Pool>,
}

impl CompactionPools {
    /// Number of live pools.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.pools.len()
    }

    /// Number of idle pools (every slot free).
    fn idle(&self) -> usize {
        self.pools.iter().filter(|p| p.all_free()).count()
    }

    /// Up to `want` (≥ 1) contiguous slots from the existing pools, and
    /// whether their pool was idle; `None` when a new pool should be made
    /// (see the module docs).
    fn take_existing(&mut self, want: u32) -> Option<(SlotRange, bool)> {
        let whole = want.min(COMPACTION_POOL_SLOTS);
        let mut largest: Option<(usize, usize, u32)> = None;
        for (p, pool) in self.pools.iter().enumerate() {
            for (i, range) in pool.free.iter().enumerate() {
                let len = range.end - range.start;
                if len >= whole {
                    let was_idle = pool.all_free();
                    return Some((self.pools[p].carve(i, whole), was_idle));
                }
                if largest.is_none_or(|(_, _, l)| len > l) {
                    largest = Some((p, i, len));
                }
            }
        }
        // A fragment is part of a pool in use (an idle pool holds any
        // request whole), so it never wakes an idle pool.
        let (p, i, len) = largest.filter(|&(_, _, len)| len >= MIN_FRAGMENT)?;
        Some((self.pools[p].carve(i, len), false))
    }

    /// Adds a new, entirely free pool and takes up to `want` slots of it.
    fn take_new(&mut self, raw: vk::QueryPool, want: u32) -> SlotRange {
        let mut pool = Pool::new(raw);
        let range = pool.carve(0, want.clamp(1, COMPACTION_POOL_SLOTS));
        self.pools.push(pool);
        range
    }

    /// Returns a range: says whether its pool is still in use, now idle and
    /// kept, or now idle beyond [`KEEP_IDLE_POOLS`] (removed from the list:
    /// the caller destroys it).
    fn release(&mut self, range: SlotRange) -> Released {
        let Some(index) = self.pools.iter().position(|p| p.raw == range.pool) else {
            crate::refusal::refused!(
                "keel-hal: compaction query range {range:?} names no live pool; ignored"
            );
            return Released::InUse;
        };
        let pool = &mut self.pools[index];
        pool.release(range.first, range.count);
        if !pool.all_free() {
            Released::InUse
        } else if self.idle() > KEEP_IDLE_POOLS {
            Released::Surplus(self.pools.swap_remove(index).raw)
        } else {
            Released::Kept
        }
    }

    /// Up to `want` (≥ 1) contiguous slots, creating a pool if needed.
    ///
    /// # Safety
    /// `device` is the device that owns these pools.
    pub(crate) unsafe fn take(
        &mut self,
        device: &ash::Device,
        counter: &Counter,
        want: u32,
    ) -> Result<SlotRange, DeviceError> {
        if let Some((range, was_idle)) = self.take_existing(want) {
            if was_idle {
                counter.add();
            }
            return Ok(range);
        }
        let info = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::ACCELERATION_STRUCTURE_COMPACTED_SIZE_KHR)
            .query_count(COMPACTION_POOL_SLOTS);
        // SAFETY: a valid description; the device has acceleration
        // structures enabled (the only callers check it).
        let raw = unsafe { device.create_query_pool(&info, None) }.map_err(super::conv::map_err)?;
        counter.add();
        Ok(self.take_new(raw, want))
    }

    /// Returns ranges taken with [`Self::take`]; keeps pools left idle, up
    /// to [`KEEP_IDLE_POOLS`], and destroys the rest.
    ///
    /// # Safety
    /// `device` owns the pools; no pending GPU work uses the ranges.
    pub(crate) unsafe fn give_back(
        &mut self,
        device: &ash::Device,
        counter: &Counter,
        ranges: impl IntoIterator<Item = SlotRange>,
    ) {
        for range in ranges {
            match self.release(range) {
                Released::InUse => {}
                Released::Kept => counter.sub(),
                Released::Surplus(raw) => {
                    // SAFETY: forwarded contract: no slot of it is in use.
                    unsafe { device.destroy_query_pool(raw, None) };
                    counter.sub();
                }
            }
        }
    }

    /// Destroys every idle pool; returns how many.
    ///
    /// # Safety
    /// `device` owns the pools.
    pub(crate) unsafe fn trim(&mut self, device: &ash::Device) -> usize {
        let before = self.pools.len();
        self.pools.retain(|pool| {
            if pool.all_free() {
                // SAFETY: forwarded contract; no slot of it is in use, so
                // no pending GPU work uses it.
                unsafe { device.destroy_query_pool(pool.raw, None) };
            }
            !pool.all_free()
        });
        before - self.pools.len()
    }

    /// Destroys every pool (device teardown).
    ///
    /// # Safety
    /// `device` owns the pools; no pending GPU work uses them.
    pub(crate) unsafe fn destroy_all(&mut self, device: &ash::Device, counter: &Counter) {
        for pool in self.pools.drain(..) {
            if !pool.all_free() {
                counter.sub();
            }
            // SAFETY: forwarded contract.
            unsafe { device.destroy_query_pool(pool.raw, None) };
        }
    }
}

/// What returning a range did to its pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Released {
    /// The pool still has slots in use.
    InUse,
    /// The pool is idle and kept.
    Kept,
    /// The pool is idle and beyond [`KEEP_IDLE_POOLS`]: destroy it.
    Surplus(vk::QueryPool),
}

#[cfg(test)]
mod tests {
    use super::*;
    use ash::vk::Handle as _;

    /// Takes `want` slots with fake pool handles, as `take` would.
    fn take_all(pools: &mut CompactionPools, next: &mut u64, want: u32) -> Vec<SlotRange> {
        let mut out = Vec::new();
        let mut remaining = want;
        while remaining > 0 {
            let range = pools.take_existing(remaining).map_or_else(
                || {
                    *next += 1;
                    pools.take_new(vk::QueryPool::from_raw(*next), remaining)
                },
                |(range, _)| range,
            );
            assert!(range.count >= 1 && range.count <= remaining);
            remaining -= range.count;
            out.push(range);
        }
        out
    }

    #[test]
    fn thousand_slots_in_batches_use_two_pools_and_all_come_back() {
        let mut pools = CompactionPools::default();
        let mut next = 0;
        let mut taken = Vec::new();
        for batch in [256, 256, 256, 232] {
            taken.extend(take_all(&mut pools, &mut next, batch));
        }
        assert_eq!(pools.len(), 2);
        assert_eq!(taken.iter().map(|r| r.count).sum::<u32>(), 1000);
        let released: Vec<_> = taken.into_iter().map(|r| pools.release(r)).collect();
        // Both pools end idle and are kept: the next round makes none.
        assert_eq!(released.iter().filter(|r| **r == Released::Kept).count(), 2);
        assert_eq!((pools.len(), pools.idle()), (2, 2));
        let made = next;
        for batch in [256, 256, 256, 232] {
            take_all(&mut pools, &mut next, batch);
        }
        assert_eq!((next, pools.len(), pools.idle()), (made, 2, 0));
    }

    #[test]
    fn idle_pools_beyond_the_kept_few_are_destroyed() {
        let mut pools = CompactionPools::default();
        let mut next = 0;
        let count = KEEP_IDLE_POOLS as u32 + 2;
        let taken = take_all(&mut pools, &mut next, count * COMPACTION_POOL_SLOTS);
        assert_eq!(pools.len(), count as usize);
        let surplus = taken
            .into_iter()
            .filter(|r| matches!(pools.release(*r), Released::Surplus(_)))
            .count();
        assert_eq!((surplus, pools.len()), (2, KEEP_IDLE_POOLS));
        assert_eq!(pools.idle(), KEEP_IDLE_POOLS);
    }

    #[test]
    fn odd_batches_fill_fragments_before_making_pools() {
        let mut pools = CompactionPools::default();
        let mut next = 0;
        let mut taken = Vec::new();
        for _ in 0..4 {
            taken.extend(take_all(&mut pools, &mut next, 300));
        }
        // 1,200 slots: three pools, not four.
        assert_eq!(pools.len(), 3);
        // A batch larger than a pool is split.
        let big = take_all(&mut pools, &mut next, 1100);
        assert!(big.len() >= 3);
        for r in taken.into_iter().chain(big) {
            pools.release(r);
        }
        assert!(pools.len() <= KEEP_IDLE_POOLS);
        assert_eq!(pools.idle(), pools.len());
    }

    #[test]
    fn released_ranges_merge_and_are_reused_first_fit() {
        let mut pools = CompactionPools::default();
        let mut next = 0;
        let a = take_all(&mut pools, &mut next, 100);
        let b = take_all(&mut pools, &mut next, 100);
        let c = take_all(&mut pools, &mut next, 100);
        assert_eq!((a[0].first, b[0].first, c[0].first), (0, 100, 200));
        assert_eq!(pools.release(b[0]), Released::InUse);
        assert_eq!(pools.release(a[0]), Released::InUse);
        // 0..200 is free again, merged: a request of 150 fits at 0.
        let d = take_all(&mut pools, &mut next, 150);
        assert_eq!((d.len(), d[0].first), (1, 0));
        assert_eq!(pools.release(c[0]), Released::InUse);
        assert_eq!(pools.release(d[0]), Released::Kept);
    }

    #[test]
    fn small_fragments_are_not_worth_splitting_for() {
        let mut pools = CompactionPools::default();
        let mut next = 0;
        let _full = take_all(&mut pools, &mut next, COMPACTION_POOL_SLOTS - 10);
        let r = take_all(&mut pools, &mut next, 64);
        assert_eq!(r.len(), 1, "a 10-slot fragment is skipped");
        assert_eq!(pools.len(), 2);
    }
}
