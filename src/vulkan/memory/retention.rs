//! The retention policy: which freed buffer memory is kept for the next
//! buffer of the same description, and which is let go. Plain data, no
//! Vulkan: `memory.rs` keeps VMA allocations in it, the unit tests below
//! keep numbers.
//!
//! * Kept: the memory of a destroyed buffer, filed under its [`BufferKey`]
//!   (memory kind, create flags, usage, size, placement alignment). A later
//!   buffer of the same key takes the most recently kept one (last in,
//!   first out: its pages are the warmest).
//! * Bounded: the bytes kept never exceed the limit. Keeping more evicts
//!   the oldest kept memory first, whatever its key, so a working set that
//!   moves on (other sizes, other kinds) displaces the one before it.
//! * Not kept: memory larger than the limit, and memory offered while its
//!   heap is under pressure (the caller says so: `keep == false`).
//! * Let go: on eviction, on a lower limit ([`Retention::set_limit`]) and
//!   all at once on [`Retention::drain`] (`Device::trim_memory`).
//!
//! Taking and offering are on every buffer create and destroy, so both are
//! a hash lookup and a push or pop: the age order of all kept entries is a
//! queue of sequence numbers from which a take removes nothing (the entry
//! it took becomes a stale record, skipped when the queue reaches it and
//! dropped when stale records outnumber live ones).

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

/// What makes the memory of two buffers interchangeable.
///
/// The Vulkan specification (Resource Memory Association,
/// `VkMemoryRequirements`) guarantees that buffers created with identical
/// creation parameters have identical requirements: "The `size` member is
/// identical for all `VkBuffer` objects created with the same combination
/// of creation parameters specified in `VkBufferCreateInfo` and its `pNext`
/// chain"; `memoryTypeBits` is identical for the same `flags` and `usage`
/// (and external handle types); `alignment` is identical for the same
/// `usage` and `flags`. Keys are only made for an empty `pNext` chain and
/// exclusive sharing, so equal keys mean equal `VkBufferCreateInfo`s, and
/// memory bound to one buffer can be bound to the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct BufferKey {
    /// The memory kind (`Device`, `Upload`, `Readback`), as a small number.
    pub(crate) kind: u8,
    /// `VkBufferCreateInfo::flags`.
    pub(crate) flags: u32,
    /// `VkBufferCreateInfo::usage`.
    pub(crate) usage: u32,
    /// `VkBufferCreateInfo::size`.
    pub(crate) size: u64,
    /// The placement alignment asked for beyond the buffer's own (0: none).
    pub(crate) alignment: u64,
}

/// One kept piece of memory.
#[derive(Debug)]
pub(crate) struct Kept<T> {
    /// What is kept (a VMA allocation, in `memory.rs`).
    pub(crate) value: T,
    /// Its size in bytes.
    pub(crate) bytes: u64,
    /// The Vulkan memory type it lives in.
    pub(crate) memory_type: u32,
}

/// The kept memory of one device (see the module docs).
#[derive(Debug)]
pub(crate) struct Retention<T> {
    /// The most bytes kept at once.
    limit: u64,
    /// Bytes kept now.
    bytes: u64,
    /// Bytes kept now, by memory type.
    by_type: [u64; ash::vk::MAX_MEMORY_TYPES],
    /// Kept memory by key, oldest first; each entry carries its sequence
    /// number (ascending within a key).
    by_key: FxHashMap<BufferKey, VecDeque<(u64, Kept<T>)>>,
    /// A record per offer, by ascending sequence number: the kept entries'
    /// age order across keys, plus stale records of entries since taken.
    /// A record `(seq, key)` is live exactly when `by_key[key]` holds `seq`.
    order: VecDeque<(u64, BufferKey)>,
    /// Entries kept now (live records of `order`).
    entries: usize,
    /// The next sequence number.
    next: u64,
}

impl<T> Retention<T> {
    /// Keeps nothing yet; at most `limit` bytes.
    pub(crate) fn new(limit: u64) -> Self {
        Self {
            limit,
            bytes: 0,
            by_type: [0; ash::vk::MAX_MEMORY_TYPES],
            by_key: FxHashMap::default(),
            order: VecDeque::new(),
            entries: 0,
            next: 0,
        }
    }

    /// The limit in force.
    pub(crate) fn limit(&self) -> u64 {
        self.limit
    }

    /// Bytes kept now.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Bytes kept now in memory type `index` (0 for an index out of range).
    pub(crate) fn bytes_of_type(&self, index: usize) -> u64 {
        self.by_type.get(index).copied().unwrap_or(0)
    }

    /// Entries kept now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries
    }

    /// Records in the eviction order, stale ones included.
    #[cfg(test)]
    fn records(&self) -> usize {
        self.order.len()
    }

    /// Takes the most recently kept memory filed under `key`, if any.
    pub(crate) fn take(&mut self, key: &BufferKey) -> Option<Kept<T>> {
        // An emptied list stays in the map: the next round of the same
        // churn refills it without allocating.
        let (seq, kept) = self.by_key.get_mut(key)?.pop_back()?;
        // Its record in `order` goes stale (see `order`), unless it is the
        // newest record, as when the memory freed last is taken next (one
        // buffer at a time, or a burst of one description): then it goes
        // too, so churn leaves no stale records to sweep.
        if self.order.back() == Some(&(seq, *key)) {
            self.order.pop_back();
        }
        self.entries -= 1;
        self.forget_bytes(&kept);
        Some(kept)
    }

    /// Offers the memory of a destroyed buffer. Returns what the caller must
    /// free now: `kept` itself when it is not kept (`keep` is false, or it
    /// is larger than the limit), else the oldest entries evicted to make
    /// room for it (often none).
    pub(crate) fn offer(&mut self, key: BufferKey, kept: Kept<T>, keep: bool) -> Vec<T> {
        if !keep || kept.bytes > self.limit {
            return vec![kept.value];
        }
        let mut released = Vec::new();
        while self.bytes + kept.bytes > self.limit {
            match self.evict_oldest() {
                Some(value) => released.push(value),
                None => break,
            }
        }
        let seq = self.next;
        self.next += 1;
        self.bytes += kept.bytes;
        if let Some(slot) = self.by_type.get_mut(kept.memory_type as usize) {
            *slot += kept.bytes;
        }
        self.order.push_back((seq, key));
        self.by_key.entry(key).or_default().push_back((seq, kept));
        self.entries += 1;
        self.drop_stale_records();
        released
    }

    /// Sets the limit; returns the oldest entries evicted to fit under it.
    pub(crate) fn set_limit(&mut self, limit: u64) -> Vec<T> {
        self.limit = limit;
        let mut released = Vec::new();
        while self.bytes > self.limit {
            match self.evict_oldest() {
                Some(value) => released.push(value),
                None => break,
            }
        }
        released
    }

    /// Lets everything go: returns every kept entry, oldest first.
    pub(crate) fn drain(&mut self) -> Vec<T> {
        let mut released = Vec::with_capacity(self.entries);
        while let Some(value) = self.evict_oldest() {
            released.push(value);
        }
        self.by_key.clear();
        self.order.clear();
        released
    }

    /// Removes the oldest entry of all, skipping stale records.
    fn evict_oldest(&mut self) -> Option<T> {
        while let Some((seq, key)) = self.order.pop_front() {
            // Every record before this one is gone, so every entry of this
            // key is at least as new: the record is live exactly when the
            // key's oldest entry is it.
            let Some(list) = self.by_key.get_mut(&key) else {
                continue;
            };
            if list.front().is_none_or(|&(front, _)| front != seq) {
                continue;
            }
            let Some((_, kept)) = list.pop_front() else {
                continue;
            };
            if list.is_empty() {
                // A key that was evicted from is going stale: drop its list.
                self.by_key.remove(&key);
            }
            self.entries -= 1;
            self.forget_bytes(&kept);
            return Some(kept.value);
        }
        None
    }

    /// Drops the stale records once they outnumber the live ones (so
    /// `order` stays within twice the entries kept, plus a little), in one
    /// pass whose cost the takes since the last one have paid for.
    fn drop_stale_records(&mut self) {
        if self.order.len() <= 2 * self.entries + 64 {
            return;
        }
        let by_key = &self.by_key;
        self.order.retain(|(seq, key)| {
            by_key
                .get(key)
                .is_some_and(|list| list.binary_search_by_key(seq, |(s, _)| *s).is_ok())
        });
    }

    fn forget_bytes(&mut self, kept: &Kept<T>) {
        self.bytes -= kept.bytes;
        if let Some(slot) = self.by_type.get_mut(kept.memory_type as usize) {
            *slot -= kept.bytes;
        }
    }
}

/// Frees that may be offered on one read of the heap budgets.
pub(crate) const BUDGET_READ_EVERY: u32 = 32;
/// Bytes that may be offered on one read of the heap budgets: one of
/// VMA's large-heap blocks (the unit in which memory is given back), so
/// that big buffers do not read the budgets much more often than small ones.
pub(crate) const BUDGET_READ_BYTES: u64 = 256 << 20;

/// The last read of "which heaps are under pressure", so that a free does
/// not read every heap's budget (VMA's `vmaGetHeapBudgets`, which the
/// `vk-mem` wrapper returns in a fresh `Vec`).
///
/// The budgets are read again once [`BUDGET_READ_EVERY`] frees or
/// [`BUDGET_READ_BYTES`] bytes have been offered since the last read, on
/// every free while some heap was under pressure at the last read (so
/// keeping resumes as soon as the pressure is gone), and after
/// [`BudgetCache::invalidate`] (`Device::trim_memory`). Between two reads
/// a heap that crosses its 90% mark can still be offered at most that
/// many frees' worth of memory, which the retention limit bounds anyway.
#[derive(Debug, Default)]
pub(crate) struct BudgetCache {
    /// Heaps under pressure at the last read, one bit per heap index.
    pressured: u32,
    /// Frees offered since the last read.
    frees: u32,
    /// Bytes offered since the last read.
    bytes: u64,
    /// Whether there was a read since the last invalidation.
    fresh: bool,
}

impl BudgetCache {
    /// Whether `heap` is under pressure for a free of `bytes`, reading the
    /// budgets with `read` (which returns the heaps under pressure as bits)
    /// when the last read is too old (see the type's docs).
    pub(crate) fn under_pressure(
        &mut self,
        heap: u32,
        bytes: u64,
        read: impl FnOnce() -> u32,
    ) -> bool {
        if !self.fresh
            || self.pressured != 0
            || self.frees >= BUDGET_READ_EVERY
            || self.bytes >= BUDGET_READ_BYTES
        {
            self.pressured = read();
            self.frees = 0;
            self.bytes = 0;
            self.fresh = true;
        }
        self.frees += 1;
        self.bytes = self.bytes.saturating_add(bytes);
        // Heaps past the bitmask (more than Vulkan's 16) count as pressured.
        1u32.checked_shl(heap)
            .is_none_or(|bit| self.pressured & bit != 0)
    }

    /// Forgets the last read: the next free reads the budgets.
    pub(crate) fn invalidate(&mut self) {
        self.fresh = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(size: u64) -> BufferKey {
        BufferKey {
            kind: 0,
            flags: 0,
            usage: 1,
            size,
            alignment: 0,
        }
    }

    fn kept(value: u32, bytes: u64) -> Kept<u32> {
        Kept {
            value,
            bytes,
            memory_type: 1,
        }
    }

    #[test]
    fn a_round_of_churn_is_kept_and_reused_newest_first() {
        let mut r = Retention::new(1 << 20);
        for i in 0..10 {
            assert!(r.offer(key(256), kept(i, 256), true).is_empty());
        }
        assert_eq!((r.bytes(), r.len(), r.bytes_of_type(1)), (2560, 10, 2560));
        assert_eq!(r.take(&key(256)).map(|k| k.value), Some(9));
        assert!(r.take(&key(512)).is_none(), "another size is another key");
        let mut other_kind = key(256);
        other_kind.kind = 1;
        assert!(r.take(&other_kind).is_none(), "another kind is another key");
        for _ in 0..9 {
            assert!(r.take(&key(256)).is_some());
        }
        assert!(r.take(&key(256)).is_none());
        assert_eq!((r.bytes(), r.len(), r.bytes_of_type(1)), (0, 0, 0));
    }

    #[test]
    fn taking_back_what_was_just_kept_leaves_no_stale_record() {
        let mut r = Retention::new(1 << 20);
        // One buffer at a time: each free is taken by the next create.
        for i in 0..1000 {
            assert!(r.offer(key(256), kept(i, 256), true).is_empty());
            assert_eq!(r.take(&key(256)).map(|k| k.value), Some(i));
        }
        assert_eq!((r.len(), r.records()), (0, 0));
        // A burst of one description, freed then made again.
        for i in 0..100 {
            assert!(r.offer(key(256), kept(i, 256), true).is_empty());
        }
        for _ in 0..100 {
            assert!(r.take(&key(256)).is_some());
        }
        assert_eq!((r.len(), r.records()), (0, 0));
        // Interleaved keys still leave stale records, swept as before;
        // eviction skips them.
        assert!(r.offer(key(256), kept(1, 256), true).is_empty());
        assert!(r.offer(key(512), kept(2, 512), true).is_empty());
        assert!(r.take(&key(256)).is_some());
        assert_eq!((r.len(), r.records()), (1, 2));
        assert_eq!(r.set_limit(0), vec![2]);
        assert_eq!((r.len(), r.bytes()), (0, 0));
    }

    #[test]
    fn the_limit_evicts_the_oldest_first_across_keys() {
        let mut r = Retention::new(1000);
        assert!(r.offer(key(400), kept(1, 400), true).is_empty());
        assert!(r.offer(key(300), kept(2, 300), true).is_empty());
        assert!(r.offer(key(400), kept(3, 300), true).is_empty());
        // 1,000 kept; 200 more evicts the oldest (400 bytes of key 400).
        assert_eq!(r.offer(key(200), kept(4, 200), true), vec![1]);
        assert_eq!(r.bytes(), 800);
        assert_eq!(r.take(&key(400)).map(|k| k.value), Some(3));
        assert_eq!(r.offer(key(900), kept(5, 900), true), vec![2, 4]);
        assert_eq!((r.bytes(), r.len()), (900, 1));
    }

    #[test]
    fn takes_leave_records_that_eviction_skips_and_churn_does_not_grow() {
        let mut r = Retention::new(1000);
        // Offered 1, 2 (key 100), 3 (key 200); 2 is taken: its record is stale.
        assert!(r.offer(key(100), kept(1, 100), true).is_empty());
        assert!(r.offer(key(100), kept(2, 100), true).is_empty());
        assert!(r.offer(key(200), kept(3, 200), true).is_empty());
        assert_eq!(r.take(&key(100)).map(|k| k.value), Some(2));
        // Offered again under key 100 (newer than 3).
        assert!(r.offer(key(100), kept(4, 100), true).is_empty());
        // Evicting in age order: 1, then 3 (2's record skipped), then 4.
        assert_eq!(r.set_limit(300), vec![1]);
        assert_eq!(r.set_limit(100), vec![3]);
        assert_eq!(r.set_limit(0), vec![4]);
        assert_eq!((r.bytes(), r.len()), (0, 0));
        // Steady churn under the limit: records stay bounded.
        let mut r = Retention::new(1 << 30);
        for round in 0..1000u32 {
            for i in 0..10 {
                assert!(r
                    .offer(key(256), kept(round * 10 + i, 256), true)
                    .is_empty());
            }
            for _ in 0..10 {
                assert!(r.take(&key(256)).is_some());
            }
        }
        assert_eq!(r.len(), 0);
        assert!(r.order.len() <= 2 * r.entries + 64 + 1, "{}", r.order.len());
        // And what is kept afterwards is still evicted oldest first.
        for i in 0..3 {
            assert!(r.offer(key(256), kept(i, 256), true).is_empty());
        }
        assert_eq!(r.drain(), vec![0, 1, 2]);
    }

    #[test]
    fn memory_over_the_limit_or_under_pressure_is_not_kept() {
        let mut r = Retention::new(1000);
        assert_eq!(r.offer(key(2000), kept(1, 2000), true), vec![1]);
        assert_eq!(r.offer(key(10), kept(2, 10), false), vec![2]);
        assert_eq!(r.len(), 0);
        let mut none = Retention::new(0);
        assert_eq!(none.offer(key(1), kept(3, 1), true), vec![3]);
    }

    #[test]
    fn a_lower_limit_and_drain_let_memory_go() {
        let mut r = Retention::new(1000);
        for i in 0..5 {
            assert!(r.offer(key(100), kept(i, 100), true).is_empty());
        }
        assert_eq!(r.set_limit(250), vec![0, 1, 2]);
        assert_eq!((r.bytes(), r.limit()), (200, 250));
        assert_eq!(r.drain(), vec![3, 4]);
        assert_eq!((r.bytes(), r.len(), r.bytes_of_type(1)), (0, 0, 0));
        assert!(r.take(&key(100)).is_none());
        // Usable again after a drain.
        assert!(r.offer(key(100), kept(7, 100), true).is_empty());
        assert_eq!(r.take(&key(100)).map(|k| k.value), Some(7));
    }

    #[test]
    fn budgets_are_read_again_after_enough_frees_or_bytes() {
        let mut cache = BudgetCache::default();
        let mut reads = 0;
        for _ in 0..BUDGET_READ_EVERY {
            assert!(!cache.under_pressure(0, 256, || {
                reads += 1;
                0
            }));
        }
        assert_eq!(reads, 1, "one read for the first {BUDGET_READ_EVERY} frees");
        // The next free reads again and sees heap 0 under pressure.
        assert!(cache.under_pressure(0, 256, || 0b1));
        assert!(!cache.under_pressure(1, 256, || 0b1));
        // While a heap is under pressure, every free reads.
        let mut reads = 0;
        assert!(!cache.under_pressure(0, 256, || {
            reads += 1;
            0
        }));
        assert_eq!(reads, 1);
        // A large free makes the next one read.
        assert!(!cache.under_pressure(0, BUDGET_READ_BYTES, || 0));
        assert!(cache.under_pressure(0, 256, || 0b1));
        // An invalidated cache reads on the next free.
        let _ = cache.under_pressure(0, 256, || 0);
        cache.invalidate();
        assert!(cache.under_pressure(0, 256, || 0b1));
        // A heap index past the bitmask counts as under pressure.
        assert!(cache.under_pressure(40, 256, || 0));
    }
}
