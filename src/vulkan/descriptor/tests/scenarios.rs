//! One behaviour a test, on the simulated device.

use std::collections::HashSet;
use std::num::NonZeroU32;

use ash::vk::{self, Handle};

use super::*;

#[test]
fn counts_from_layout_entries() {
    let entry = |binding, ty, count| wgt::BindGroupLayoutEntry {
        binding,
        visibility: wgt::ShaderStages::COMPUTE,
        ty,
        count: NonZeroU32::new(count),
    };
    let buffer = |ty, has_dynamic_offset| wgt::BindingType::Buffer {
        ty,
        has_dynamic_offset,
        min_binding_size: None,
    };
    let storage = wgt::BufferBindingType::Storage { read_only: true };
    let entries = [
        entry(0, buffer(wgt::BufferBindingType::Uniform, false), 0),
        entry(1, buffer(wgt::BufferBindingType::Uniform, true), 0),
        entry(2, buffer(storage, false), 3),
        entry(3, buffer(storage, true), 0),
        entry(
            4,
            wgt::BindingType::Sampler(wgt::SamplerBindingType::Filtering),
            2,
        ),
        entry(
            5,
            wgt::BindingType::Texture {
                sample_type: wgt::TextureSampleType::Float { filterable: true },
                view_dimension: wgt::TextureViewDimension::D2,
                multisampled: false,
            },
            8,
        ),
        entry(
            6,
            wgt::BindingType::StorageTexture {
                access: wgt::StorageTextureAccess::WriteOnly,
                format: wgt::TextureFormat::Rgba8Unorm,
                view_dimension: wgt::TextureViewDimension::D2,
            },
            0,
        ),
        entry(
            7,
            wgt::BindingType::AccelerationStructure {
                vertex_return: false,
            },
            0,
        ),
    ];
    let counts = DescriptorCounts::from_layout_entries(&entries).expect("supported");
    assert_eq!(
        counts,
        DescriptorCounts {
            samplers: 2,
            sampled_images: 8,
            storage_images: 1,
            uniform_buffers: 1,
            storage_buffers: 3,
            uniform_buffers_dynamic: 1,
            storage_buffers_dynamic: 1,
            acceleration_structures: 1,
        }
    );
    let sizes = counts.pool_sizes(16);
    assert_eq!(sizes.len(), 8);
    let sampled = sizes
        .iter()
        .find(|s| s.ty == vk::DescriptorType::SAMPLED_IMAGE)
        .expect("sampled images");
    assert_eq!(sampled.descriptor_count, 128);

    let empty = DescriptorCounts::default().pool_sizes(64);
    assert_eq!(empty.len(), 1);
    assert!(empty[0].descriptor_count > 0);

    let external = [entry(0, wgt::BindingType::ExternalTexture, 0)];
    assert_eq!(DescriptorCounts::from_layout_entries(&external), None);
}

#[test]
fn pools_grow_geometrically() {
    let d = MockDevice::default();
    let mut a = DescriptorAllocator::default();
    let layout = d.layout(key_a().counts);
    let t = register(&mut a, key_a()).expect("register");
    assert!(d.pool_sizes().is_empty(), "registration makes no pool");
    let mut sets = Vec::new();
    for _ in 0..(16 + 16 + 32 + 64 + 128 + 256 + 512 + 1024 + 1024 + 1) {
        sets.push(allocate(&mut a, &d, t, layout).expect("allocate"));
    }
    assert_eq!(
        d.pool_sizes(),
        [16, 16, 32, 64, 128, 256, 512, 1024, 1024, 1024]
    );
    assert_eq!(
        a.stats().capacity,
        16 + 16 + 32 + 64 + 128 + 256 + 512 + 3 * 1024
    );
    for set in sets {
        free(&mut a, &d, set).expect("free");
    }
    unregister(&mut a, &d, t).expect("unregister");
    assert_eq!((d.live_pools(), d.live_sets()), (0, 0));
}

/// `live_sets` (the device's live bind groups) counts sets handed out and
/// not freed, from pools and from the cache alike.
#[test]
fn live_sets_count_what_is_handed_out() {
    let d = MockDevice::default();
    let mut a = DescriptorAllocator::default();
    let layout = d.layout(key_a().counts);
    let t = register(&mut a, key_a()).expect("register");
    let sets: Vec<_> = (0..40)
        .map(|_| allocate(&mut a, &d, t, layout).expect("allocate"))
        .collect();
    assert_eq!(a.live_sets(), 40);
    for set in sets {
        free(&mut a, &d, set).expect("free");
    }
    assert_eq!(a.live_sets(), 0, "freed sets are cached, not live");
    let again = allocate(&mut a, &d, t, layout).expect("a cache hit");
    assert_eq!(a.live_sets(), 1);
    free(&mut a, &d, again).expect("free");
    assert_eq!(a.live_sets(), 0);
    unregister(&mut a, &d, t).expect("unregister");
}

/// Registers two layouts of `key`, fills `n` sets with the first and
/// unregisters it, so later frees go straight to the pools (no caching).
fn uncached_sets(
    a: &mut DescriptorAllocator,
    d: &MockDevice,
    key: BucketKey,
    n: usize,
) -> (LayoutToken, Vec<DescriptorSet>) {
    let layout = d.layout(key.counts);
    let keeper = register(a, key).expect("register");
    let t = register(a, key).expect("register");
    let sets = (0..n)
        .map(|_| allocate(a, d, t, layout).expect("allocate"))
        .collect();
    unregister(a, d, t).expect("unregister");
    (keeper, sets)
}

#[test]
fn oldest_pool_with_room_first() {
    let d = MockDevice::default();
    let mut a = DescriptorAllocator::default();
    let (keeper, mut sets) = uncached_sets(&mut a, &d, key_a(), 64);
    let layout = d.layout(key_a().counts);
    assert_eq!(d.pool_sizes(), [16, 16, 32]);
    // Free one set of the newest pool, then one of the oldest.
    let newest = sets.remove(40);
    let (newest_pool, oldest_pool) = (newest.pool, sets[0].pool);
    free(&mut a, &d, newest).expect("free");
    free(&mut a, &d, sets.remove(0)).expect("free");
    let s1 = allocate(&mut a, &d, keeper, layout).expect("allocate");
    let s2 = allocate(&mut a, &d, keeper, layout).expect("allocate");
    assert_eq!((s1.pool, s2.pool), (oldest_pool, newest_pool));
    assert_eq!(d.live_pools(), 3);
    sets.extend([s1, s2]);
    for set in sets {
        free(&mut a, &d, set).expect("free");
    }
    unregister(&mut a, &d, keeper).expect("unregister");
    assert_eq!((d.live_pools(), d.live_sets()), (0, 0));
}

#[test]
fn idle_pool_waits_for_a_quarter_free_elsewhere() {
    let d = MockDevice::default();
    let mut a = DescriptorAllocator::default();
    let (keeper, sets) = uncached_sets(&mut a, &d, key_a(), 128);
    assert_eq!(d.pool_sizes(), [16, 16, 32, 64]);
    let mut by_pool: Vec<Vec<DescriptorSet>> = Vec::new();
    for set in sets {
        let rank = a
            .pools
            .lock()
            .buckets
            .iter()
            .next()
            .expect("bucket")
            .2
            .pools
            .get_current(set.pool)
            .expect("pool")
            .rank;
        if by_pool.len() <= rank as usize {
            by_pool.resize_with(rank as usize + 1, Vec::new);
        }
        by_pool[rank as usize].push(set);
    }
    let [first, second, third, fourth]: [Vec<DescriptorSet>; 4] =
        by_pool.try_into().expect("four pools");
    // Empty the second pool (not the newest): nothing free elsewhere, kept.
    for set in second {
        free(&mut a, &d, set).expect("free");
    }
    assert_eq!(d.pool_sizes(), [16, 16, 32, 64]);
    // 31 sets free elsewhere: 31 * 4 < 128, still kept.
    let mut fourth = fourth.into_iter();
    for set in fourth.by_ref().take(31) {
        free(&mut a, &d, set).expect("free");
    }
    assert_eq!(d.pool_sizes(), [16, 16, 32, 64]);
    // The 32nd: a quarter of the capacity is free in other pools.
    free(&mut a, &d, fourth.next().expect("set")).expect("free");
    assert_eq!(d.pool_sizes(), [16, 32, 64]);
    for set in first.into_iter().chain(third).chain(fourth) {
        free(&mut a, &d, set).expect("free");
    }
    assert_eq!(bucket(&a, key_a()).pools, 1);
    unregister(&mut a, &d, keeper).expect("unregister");
    assert_eq!((d.live_pools(), d.live_sets()), (0, 0));
}

#[test]
fn freed_sets_are_cached_per_layout_and_bounded() {
    let d = MockDevice::default();
    let mut a = DescriptorAllocator::default();
    let layout = d.layout(key_b().counts);
    let t = register(&mut a, key_b()).expect("register");
    let keeper = register(&mut a, key_b()).expect("register");
    // Interleave with sets of another layout, so no pool goes idle (and
    // shrinking stays out of this test).
    let mut sets = Vec::new();
    let mut kept = Vec::new();
    // More than the cache holds, so the bound is exercised.
    const N: usize = MAX_IDLE_SETS_PER_LAYOUT + 100;
    for _ in 0..N {
        sets.push(allocate(&mut a, &d, t, layout).expect("allocate"));
        kept.push(allocate(&mut a, &d, keeper, layout).expect("allocate"));
    }
    let cached: HashSet<_> = sets
        .iter()
        .take(MAX_IDLE_SETS_PER_LAYOUT)
        .map(|s| s.raw)
        .collect();
    for set in sets {
        free(&mut a, &d, set).expect("free");
    }
    let b = bucket(&a, key_b());
    assert_eq!(
        (b.in_use, b.cached),
        (N as u64, MAX_IDLE_SETS_PER_LAYOUT as u64)
    );
    assert_eq!(d.state.borrow().free_calls, 100);
    // Reuse costs no Vulkan call and hands back the cached sets, still live.
    let calls = d.state.borrow().allocate_calls;
    let again: Vec<_> = (0..MAX_IDLE_SETS_PER_LAYOUT)
        .map(|_| allocate(&mut a, &d, t, layout).expect("allocate"))
        .collect();
    assert_eq!(d.state.borrow().allocate_calls, calls);
    assert_eq!(again.iter().map(|s| s.raw).collect::<HashSet<_>>(), cached);
    assert!(again
        .iter()
        .all(|s| d.state.borrow().sets.contains_key(&s.raw.as_raw())));
    assert_eq!(bucket(&a, key_b()).cached, 0);
    for set in again.into_iter().chain(kept) {
        free(&mut a, &d, set).expect("free");
    }
    unregister(&mut a, &d, t).expect("unregister");
    unregister(&mut a, &d, keeper).expect("unregister");
    assert_eq!((d.live_pools(), d.live_sets()), (0, 0));
}

/// A layout keeps as many freed sets as it had in use at once (past the
/// floor of a pool's worth), so a repeated burst larger than a pool costs
/// no Vulkan call after the first; `trim` returns them and lowers the peak.
#[test]
fn a_layout_keeps_its_peak_burst_until_trimmed() {
    let d = MockDevice::default();
    let mut a = DescriptorAllocator::default();
    let layout = d.layout(key_b().counts);
    let t = register(&mut a, key_b()).expect("register");
    const BURST: usize = MIN_IDLE_SETS_PER_LAYOUT * 3;
    let mut calls = (0, 0);
    for round in 0..3 {
        let sets: Vec<_> = (0..BURST)
            .map(|_| allocate(&mut a, &d, t, layout).expect("allocate"))
            .collect();
        for set in sets {
            free(&mut a, &d, set).expect("free");
        }
        let state = d.state.borrow();
        let now = (state.allocate_calls, state.free_calls);
        if round == 0 {
            assert_eq!(now.1, 0, "the first burst's sets are all kept");
        } else {
            assert_eq!(
                now, calls,
                "round {round}: a repeated burst made Vulkan calls"
            );
        }
        calls = now;
        assert_eq!(bucket(&a, key_b()).cached, BURST as u64);
    }
    let peak = |a: &DescriptorAllocator| a.peak(t);
    assert_eq!(peak(&a), Some(BURST as u32));
    // Trimming with two sets in use returns the rest and lowers the peak to two.
    let held: Vec<_> = (0..2)
        .map(|_| allocate(&mut a, &d, t, layout).expect("allocate"))
        .collect();
    // SAFETY: the mock is the allocator's device.
    unsafe { a.trim(&d) }.expect("trim");
    assert_eq!(peak(&a), Some(2));
    assert_eq!((bucket(&a, key_b()).cached, d.live_sets()), (0, 2));
    for set in held {
        free(&mut a, &d, set).expect("free");
    }
    // Past the ceiling, freed sets go back to their pool.
    let sets: Vec<_> = (0..MAX_IDLE_SETS_PER_LAYOUT + 10)
        .map(|_| allocate(&mut a, &d, t, layout).expect("allocate"))
        .collect();
    for set in sets {
        free(&mut a, &d, set).expect("free");
    }
    assert_eq!(bucket(&a, key_b()).cached, MAX_IDLE_SETS_PER_LAYOUT as u64);
    unregister(&mut a, &d, t).expect("unregister");
    assert_eq!((d.live_pools(), d.live_sets()), (0, 0));
}

#[test]
fn unregistering_returns_cached_sets_or_drops_the_bucket() {
    let d = MockDevice::default();
    let mut a = DescriptorAllocator::default();
    let layout = d.layout(key_a().counts);
    let t1 = register(&mut a, key_a()).expect("register");
    let t2 = register(&mut a, key_a()).expect("register");
    assert_eq!(
        bucket(&a, key_a()).layouts,
        2,
        "layouts of one key share a bucket"
    );
    let sets: Vec<_> = (0..10)
        .map(|_| allocate(&mut a, &d, t1, layout).expect("allocate"))
        .collect();
    let held = allocate(&mut a, &d, t2, layout).expect("allocate");
    for set in sets {
        free(&mut a, &d, set).expect("free");
    }
    assert_eq!(a.stats().cached, 10);
    unregister(&mut a, &d, t1).expect("unregister");
    assert_eq!((a.stats().cached, d.live_sets()), (0, 1));
    // Stale tokens are refused, not trusted.
    assert_eq!(
        allocate(&mut a, &d, t1, layout).err(),
        Some(DeviceError::Unexpected)
    );
    assert_eq!(unregister(&mut a, &d, t1), Err(DeviceError::Unexpected));
    // The last layout takes the pools with it; the held set died with them.
    unregister(&mut a, &d, t2).expect("unregister");
    assert_eq!((d.live_pools(), d.live_sets()), (0, 0));
    let frees = d.state.borrow().free_calls;
    free(&mut a, &d, held).expect("a dead set frees as a no-op");
    assert_eq!(d.state.borrow().free_calls, frees);
    assert_eq!(a.stats(), DescriptorStats::default());
}

/// Registration makes no pool: the first allocation does, and when the
/// driver refuses it the allocation fails (the layout stays registered and
/// the next allocation tries again).
#[test]
fn failed_first_pool_fails_the_allocation_not_the_layout() {
    let d = MockDevice::default();
    let mut a = DescriptorAllocator::default();
    let layout = d.layout(key_a().counts);
    let t = register(&mut a, key_a()).expect("registration makes no Vulkan call");
    assert_eq!((d.live_pools(), bucket(&a, key_a()).pools), (0, 0));
    d.state
        .borrow_mut()
        .fail_create
        .push_back(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY);
    assert_eq!(
        allocate(&mut a, &d, t, layout).err(),
        Some(DeviceError::OutOfMemory)
    );
    d.state
        .borrow_mut()
        .fail_create
        .push_back(vk::Result::ERROR_FRAGMENTATION);
    assert_eq!(
        allocate(&mut a, &d, t, layout).err(),
        Some(DeviceError::OutOfMemory)
    );
    assert_eq!(d.live_pools(), 0);
    assert_eq!((bucket(&a, key_a()).layouts, a.live_sets()), (1, 0));
    let set = allocate(&mut a, &d, t, layout).expect("the next allocation works");
    assert_eq!(d.live_pools(), 1);
    free(&mut a, &d, set).expect("free");
    unregister(&mut a, &d, t).expect("unregister");
    assert_eq!((d.live_pools(), d.live_sets()), (0, 0));
}

fn retry_after(error: vk::Result) {
    let d = MockDevice::default();
    let mut a = DescriptorAllocator::default();
    let (keeper, mut sets) = uncached_sets(&mut a, &d, key_a(), 2);
    let layout = d.layout(key_a().counts);
    d.state.borrow_mut().fail_allocate.push_back(error);
    let set = allocate(&mut a, &d, keeper, layout).expect("retried in a new pool");
    assert_eq!(d.pool_sizes(), [16, 16]);
    assert_ne!(set.pool, sets[0].pool);
    // The refusing pool is set aside until one of its sets returns.
    let next = allocate(&mut a, &d, keeper, layout).expect("allocate");
    assert_eq!(next.pool, set.pool);
    let old_pool = sets[0].pool;
    free(&mut a, &d, sets.remove(0)).expect("free");
    let back = allocate(&mut a, &d, keeper, layout).expect("allocate");
    assert_eq!(back.pool, old_pool);
    // Refused twice: an error, not a panic, and no empty pool left behind.
    d.state.borrow_mut().fail_allocate.extend([error, error]);
    assert_eq!(
        allocate(&mut a, &d, keeper, layout).err(),
        Some(DeviceError::OutOfMemory)
    );
    assert_eq!(d.live_pools(), 2);
    assert_eq!(a.stats().in_use, 4);
    for s in sets.into_iter().chain([set, next, back]) {
        free(&mut a, &d, s).expect("free");
    }
    unregister(&mut a, &d, keeper).expect("unregister");
    assert_eq!((d.live_pools(), d.live_sets()), (0, 0));
}

#[test]
fn out_of_pool_memory_opens_a_pool_and_retries() {
    retry_after(vk::Result::ERROR_OUT_OF_POOL_MEMORY);
}

#[test]
fn fragmented_pool_opens_a_pool_and_retries() {
    retry_after(vk::Result::ERROR_FRAGMENTED_POOL);
}

#[test]
fn other_allocation_and_growth_failures_are_errors() {
    let d = MockDevice::default();
    let mut a = DescriptorAllocator::default();
    let layout = d.layout(key_a().counts);
    let t = register(&mut a, key_a()).expect("register");
    d.state
        .borrow_mut()
        .fail_allocate
        .push_back(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY);
    assert_eq!(
        allocate(&mut a, &d, t, layout).err(),
        Some(DeviceError::OutOfMemory)
    );
    let sets: Vec<_> = (0..16)
        .map(|_| allocate(&mut a, &d, t, layout).expect("allocate"))
        .collect();
    d.state
        .borrow_mut()
        .fail_create
        .push_back(vk::Result::ERROR_OUT_OF_HOST_MEMORY);
    assert_eq!(
        allocate(&mut a, &d, t, layout).err(),
        Some(DeviceError::OutOfMemory)
    );
    assert_eq!((d.live_pools(), a.stats().in_use), (1, 16));
    let more = allocate(&mut a, &d, t, layout).expect("growth works again");
    for set in sets.into_iter().chain([more]) {
        free(&mut a, &d, set).expect("free");
    }
    unregister(&mut a, &d, t).expect("unregister");
    assert_eq!((d.live_pools(), d.live_sets()), (0, 0));
}

#[test]
fn failed_free_reports_lost() {
    let d = MockDevice::default();
    let mut a = DescriptorAllocator::default();
    let (keeper, mut sets) = uncached_sets(&mut a, &d, key_a(), 2);
    d.state
        .borrow_mut()
        .fail_free
        .push_back(vk::Result::ERROR_UNKNOWN);
    assert_eq!(free(&mut a, &d, sets.remove(0)), Err(DeviceError::Lost));
    assert_eq!(a.stats().in_use, 1);
    // Cached sets that fail to go back on unregister: Lost, but unregistered.
    let layout = d.layout(key_a().counts);
    let t = register(&mut a, key_a()).expect("register");
    let s = allocate(&mut a, &d, t, layout).expect("allocate");
    free(&mut a, &d, s).expect("cached");
    d.state
        .borrow_mut()
        .fail_free
        .push_back(vk::Result::ERROR_DEVICE_LOST);
    assert_eq!(unregister(&mut a, &d, t), Err(DeviceError::Lost));
    assert_eq!((bucket(&a, key_a()).layouts, a.stats().cached), (1, 0));
    free(&mut a, &d, sets.remove(0)).expect("free");
    unregister(&mut a, &d, keeper).expect("unregister");
    assert_eq!((d.live_pools(), d.live_sets()), (0, 0));
}

#[test]
fn destroy_all_releases_everything_and_stales_handles() {
    let d = MockDevice::default();
    let mut a = DescriptorAllocator::default();
    let (la, lb) = (d.layout(key_a().counts), d.layout(key_b().counts));
    let ta = register(&mut a, key_a()).expect("register");
    let tb = register(&mut a, key_b()).expect("register");
    let sa = allocate(&mut a, &d, ta, la).expect("allocate");
    let sb = allocate(&mut a, &d, tb, lb).expect("allocate");
    assert_ne!(sa.raw(), sb.raw());
    free(&mut a, &d, sb).expect("cached");
    // SAFETY: the mock has no GPU.
    unsafe { a.destroy_all(&d) };
    assert_eq!((d.live_pools(), d.live_sets()), (0, 0));
    assert_eq!(a.stats(), DescriptorStats::default());
    // Old tokens and sets are stale, even once slots are reused.
    let tc = register(&mut a, key_a()).expect("register");
    assert_eq!(
        allocate(&mut a, &d, ta, la).err(),
        Some(DeviceError::Unexpected)
    );
    free(&mut a, &d, sa).expect("a dead set frees as a no-op");
    // Registration makes no pool.
    assert_eq!(bucket(&a, key_a()).pools, 0);
    unregister(&mut a, &d, tc).expect("unregister");
    assert_eq!(d.live_pools(), 0);
}

/// A layout joins the allocator when its first set is allocated, once, even
/// when threads race to allocate its first sets.
#[test]
fn a_layout_registers_with_its_first_set_once() {
    let a = DescriptorAllocator::default();
    let lazy = LazyToken::default();
    assert_eq!((lazy.get(), a.stats().buckets.len()), (None, 0));
    // SAFETY: `key_a` is the layout's key; `lazy` is only used here.
    let t = unsafe { a.token_for(&lazy, key_a()) }.expect("register");
    assert_eq!(lazy.get(), Some(t));
    // SAFETY: as above.
    assert_eq!(unsafe { a.token_for(&lazy, key_a()) }, Ok(t));
    assert_eq!(bucket(&a, key_a()).layouts, 1);
    let raced = LazyToken::default();
    let tokens: Vec<_> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..4)
            .map(|_| {
                // SAFETY: as above, for `key_b`.
                scope.spawn(|| unsafe { a.token_for(&raced, key_b()) }.expect("register"))
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().expect("a thread panicked"))
            .collect()
    });
    assert!(tokens.iter().all(|&t| Some(t) == raced.get()));
    assert_eq!(bucket(&a, key_b()).layouts, 1);
}
