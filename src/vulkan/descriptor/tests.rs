//! Tests of the descriptor allocator: a simulated device and helpers here;
//! scenarios, randomised stress tests and a run on the real driver below.

mod lavapipe;
mod scenarios;
mod stress;

use std::cell::RefCell;
use std::collections::{HashMap, HashSet, VecDeque};

use ash::vk::{self, Handle};

use super::*;

/// One simulated pool: remaining descriptors per type and its live sets.
struct MockPool {
    max_sets: u32,
    remaining: HashMap<vk::DescriptorType, u32>,
    live: HashSet<u64>,
}

#[derive(Default)]
struct MockState {
    next_handle: u64,
    pools: HashMap<u64, MockPool>,
    /// Live set → its pool and its descriptor counts.
    sets: HashMap<u64, (u64, DescriptorCounts)>,
    /// Fake layouts and their descriptor counts.
    layouts: HashMap<u64, DescriptorCounts>,
    fail_create: VecDeque<vk::Result>,
    fail_allocate: VecDeque<vk::Result>,
    fail_free: VecDeque<vk::Result>,
    allocate_calls: u64,
    free_calls: u64,
}

/// A device that simulates descriptor pools (capacity in sets and in
/// descriptors per type), injects planned failures and panics on misuse:
/// unknown or destroyed pools, sets freed twice or into the wrong pool.
#[derive(Default)]
struct MockDevice {
    state: RefCell<MockState>,
}

impl MockDevice {
    fn handle(state: &mut MockState) -> u64 {
        state.next_handle += 1;
        state.next_handle
    }

    /// A fake set layout with these counts.
    fn layout(&self, counts: DescriptorCounts) -> vk::DescriptorSetLayout {
        let mut state = self.state.borrow_mut();
        let raw = Self::handle(&mut state);
        state.layouts.insert(raw, counts);
        vk::DescriptorSetLayout::from_raw(raw)
    }

    fn live_pools(&self) -> usize {
        self.state.borrow().pools.len()
    }

    fn live_sets(&self) -> usize {
        self.state.borrow().sets.len()
    }

    fn pool_sizes(&self) -> Vec<u32> {
        let mut sizes: Vec<u32> = self
            .state
            .borrow()
            .pools
            .values()
            .map(|p| p.max_sets)
            .collect();
        sizes.sort_unstable();
        sizes
    }
}

impl DescriptorDevice for MockDevice {
    unsafe fn create_pool(
        &self,
        info: &vk::DescriptorPoolCreateInfo<'_>,
    ) -> Result<vk::DescriptorPool, vk::Result> {
        let mut state = self.state.borrow_mut();
        if let Some(err) = state.fail_create.pop_front() {
            return Err(err);
        }
        assert!(info
            .flags
            .contains(vk::DescriptorPoolCreateFlags::FREE_DESCRIPTOR_SET));
        assert!(info.max_sets > 0 && info.pool_size_count > 0);
        // SAFETY: the create info points at `pool_size_count` sizes.
        let sizes =
            unsafe { std::slice::from_raw_parts(info.p_pool_sizes, info.pool_size_count as usize) };
        let mut remaining = HashMap::new();
        for size in sizes {
            assert!(size.descriptor_count > 0);
            *remaining.entry(size.ty).or_insert(0) += size.descriptor_count;
        }
        let raw = Self::handle(&mut state);
        state.pools.insert(
            raw,
            MockPool {
                max_sets: info.max_sets,
                remaining,
                live: HashSet::new(),
            },
        );
        Ok(vk::DescriptorPool::from_raw(raw))
    }

    unsafe fn destroy_pool(&self, pool: vk::DescriptorPool) {
        let mut state = self.state.borrow_mut();
        let dead = state
            .pools
            .remove(&pool.as_raw())
            .expect("destroying an unknown pool");
        for set in dead.live {
            state.sets.remove(&set);
        }
    }

    unsafe fn allocate_set(
        &self,
        pool: vk::DescriptorPool,
        layout: vk::DescriptorSetLayout,
    ) -> Result<vk::DescriptorSet, vk::Result> {
        let mut state = self.state.borrow_mut();
        state.allocate_calls += 1;
        let counts = *state.layouts.get(&layout.as_raw()).expect("unknown layout");
        assert!(
            state.pools.contains_key(&pool.as_raw()),
            "allocating from a dead pool"
        );
        if let Some(err) = state.fail_allocate.pop_front() {
            return Err(err);
        }
        let raw = Self::handle(&mut state);
        let p = state
            .pools
            .get_mut(&pool.as_raw())
            .expect("pool checked above");
        if p.live.len() >= p.max_sets as usize {
            return Err(vk::Result::ERROR_OUT_OF_POOL_MEMORY);
        }
        let needs: Vec<_> = counts
            .by_type()
            .into_iter()
            .filter(|&(_, n)| n > 0)
            .collect();
        if needs
            .iter()
            .any(|&(ty, n)| p.remaining.get(&ty).copied().unwrap_or(0) < n)
        {
            return Err(vk::Result::ERROR_OUT_OF_POOL_MEMORY);
        }
        for (ty, n) in needs {
            *p.remaining.get_mut(&ty).expect("checked above") -= n;
        }
        p.live.insert(raw);
        state.sets.insert(raw, (pool.as_raw(), counts));
        Ok(vk::DescriptorSet::from_raw(raw))
    }

    unsafe fn free_sets(
        &self,
        pool: vk::DescriptorPool,
        sets: &[vk::DescriptorSet],
    ) -> Result<(), vk::Result> {
        let mut state = self.state.borrow_mut();
        state.free_calls += 1;
        let failure = state.fail_free.pop_front();
        for set in sets {
            let (owner, counts) = state.sets.remove(&set.as_raw()).expect("set freed twice");
            assert_eq!(owner, pool.as_raw(), "set freed into the wrong pool");
            let p = state.pools.get_mut(&owner).expect("set of a dead pool");
            p.live.remove(&set.as_raw());
            for (ty, n) in counts.by_type() {
                if n > 0 {
                    *p.remaining.get_mut(&ty).expect("allocated from this pool") += n;
                }
            }
        }
        failure.map_or(Ok(()), Err)
    }
}

// Thin wrappers: one SAFETY argument for all tests. The mock has no GPU, and
// every test passes the layout each token was registered for.

fn register(a: &mut DescriptorAllocator, key: BucketKey) -> Result<LayoutToken, DeviceError> {
    // SAFETY: see above.
    unsafe { a.register_layout(key) }
}

fn unregister(
    a: &mut DescriptorAllocator,
    d: &MockDevice,
    t: LayoutToken,
) -> Result<(), DeviceError> {
    // SAFETY: see above.
    unsafe { a.unregister_layout(d, t) }
}

fn allocate(
    a: &mut DescriptorAllocator,
    d: &MockDevice,
    t: LayoutToken,
    l: vk::DescriptorSetLayout,
) -> Result<DescriptorSet, DeviceError> {
    // SAFETY: see above.
    unsafe { a.allocate(d, t, l) }
}

fn free(a: &mut DescriptorAllocator, d: &MockDevice, s: DescriptorSet) -> Result<(), DeviceError> {
    // SAFETY: see above.
    unsafe { a.free(d, s) }
}

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

fn key_a() -> BucketKey {
    BucketKey {
        counts: DescriptorCounts {
            samplers: 1,
            sampled_images: 2,
            uniform_buffers: 1,
            ..Default::default()
        },
        update_after_bind: false,
    }
}

fn key_b() -> BucketKey {
    BucketKey {
        counts: DescriptorCounts {
            storage_buffers: 2,
            uniform_buffers_dynamic: 1,
            ..Default::default()
        },
        update_after_bind: true,
    }
}

fn key_empty() -> BucketKey {
    BucketKey::default()
}

fn bucket(a: &DescriptorAllocator, key: BucketKey) -> BucketStats {
    a.stats()
        .buckets
        .into_iter()
        .find(|b| b.key == key)
        .expect("bucket exists")
}

/// Counts this thread's heap allocations, to check that steady-state
/// `allocate`/`free` make none. Forwards to the system allocator.
struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

// SAFETY: forwards every call unchanged to `System`; the counter is a
// const-initialised thread-local without destructor, so touching it never
// allocates or re-enters the allocator.
unsafe impl std::alloc::GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: forwarded contract.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: forwarded contract.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: forwarded contract.
        unsafe { std::alloc::System.realloc(ptr, layout, size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// Heap allocations made by this thread so far.
fn allocations() -> u64 {
    ALLOCATIONS.with(|n| n.get())
}

/// A device that hands out handles and keeps no books (so it allocates
/// nothing itself): for measuring the allocator alone.
#[derive(Default)]
struct NullDevice {
    next: std::cell::Cell<u64>,
    pools_created: std::cell::Cell<u64>,
}

impl NullDevice {
    fn handle(&self) -> u64 {
        self.next.set(self.next.get() + 1);
        self.next.get()
    }
}

impl DescriptorDevice for NullDevice {
    unsafe fn create_pool(
        &self,
        _: &vk::DescriptorPoolCreateInfo<'_>,
    ) -> Result<vk::DescriptorPool, vk::Result> {
        self.pools_created.set(self.pools_created.get() + 1);
        Ok(vk::DescriptorPool::from_raw(self.handle()))
    }
    unsafe fn destroy_pool(&self, _: vk::DescriptorPool) {}
    unsafe fn allocate_set(
        &self,
        _: vk::DescriptorPool,
        _: vk::DescriptorSetLayout,
    ) -> Result<vk::DescriptorSet, vk::Result> {
        Ok(vk::DescriptorSet::from_raw(self.handle()))
    }
    unsafe fn free_sets(
        &self,
        _: vk::DescriptorPool,
        _: &[vk::DescriptorSet],
    ) -> Result<(), vk::Result> {
        Ok(())
    }
}
