//! Randomised tests: churn, and sequences checked against a model.

use std::collections::HashSet;

use ash::vk::{self, Handle};

use super::*;

#[test]
fn churn_keeps_pools_few_and_shrinks_back() {
    const ALLOCATIONS: u32 = 100_000;
    let d = MockDevice::default();
    let mut a = DescriptorAllocator::default();
    let keys = [key_a(), key_a(), key_b(), key_b()];
    let layouts: Vec<_> = keys.iter().map(|k| d.layout(k.counts)).collect();
    let tokens: Vec<_> = keys
        .iter()
        .map(|&k| register(&mut a, k).expect("register"))
        .collect();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut live: Vec<DescriptorSet> = Vec::new();
    let mut live_raw = HashSet::new();
    let (mut allocations, mut ops, mut peak_live, mut peak_pools) = (0, 0u32, 0, 0);
    while allocations < ALLOCATIONS {
        // Phases of growth and decline, so pools are both opened and closed.
        let grow = (ops / 10_000) % 2 == 0;
        ops += 1;
        if live.is_empty() || rng.chance(if grow { 70 } else { 30 }) {
            let l = rng.below(4);
            let set = allocate(&mut a, &d, tokens[l], layouts[l]).expect("allocate");
            assert!(live_raw.insert(set.raw), "set handed out twice");
            live.push(set);
            allocations += 1;
        } else {
            let set = live.swap_remove(rng.below(live.len()));
            live_raw.remove(&set.raw);
            free(&mut a, &d, set).expect("free");
        }
        peak_live = peak_live.max(live.len());
        peak_pools = peak_pools.max(d.live_pools());
    }
    let bound = peak_live.div_ceil(64) + 2;
    println!("churn: peak {peak_live} live sets, peak {peak_pools} pools (bound {bound})");
    assert!(
        peak_pools <= bound,
        "peak {peak_pools} pools for {peak_live} live sets (bound {bound})"
    );
    assert!(
        peak_live > 2000,
        "the walk should reach thousands of sets: {peak_live}"
    );
    for set in live.drain(..) {
        free(&mut a, &d, set).expect("free");
    }
    // Freed sets stay cached for reuse until trimmed.
    // SAFETY: the mock is the allocator's device.
    unsafe { a.trim(&d) }.expect("trim");
    let stats = a.stats();
    assert_eq!(stats.buckets.len(), 2);
    for b in &stats.buckets {
        assert_eq!((b.pools, b.in_use), (1, 0), "{b:?}");
    }
    for t in tokens {
        unregister(&mut a, &d, t).expect("unregister");
    }
    assert_eq!((d.live_pools(), d.live_sets()), (0, 0));
}

/// Random register/allocate/free/unregister sequences, checked against a
/// model after every step.
#[test]
fn model_based_sequences() {
    let keys = [key_a(), key_b(), key_empty()];
    for seed in 1..=8u64 {
        let d = MockDevice::default();
        let mut a = DescriptorAllocator::default();
        let mut rng = Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) | 1);
        // Model: registered layouts (token, raw layout, key index) and live sets.
        let mut registered: Vec<(LayoutToken, vk::DescriptorSetLayout, usize)> = Vec::new();
        let mut live: Vec<(usize, DescriptorSet)> = Vec::new();
        let mut dead: Vec<DescriptorSet> = Vec::new();
        for _ in 0..4000 {
            match rng.below(12) {
                0 | 1 if registered.len() < 8 => {
                    let k = rng.below(keys.len());
                    let t = register(&mut a, keys[k]).expect("register");
                    registered.push((t, d.layout(keys[k].counts), k));
                }
                2 if !registered.is_empty() => {
                    let (t, _, k) = registered.swap_remove(rng.below(registered.len()));
                    unregister(&mut a, &d, t).expect("unregister");
                    if !registered.iter().any(|r| r.2 == k) {
                        // The bucket is gone, and its sets with it.
                        let (gone, kept) = live.drain(..).partition(|(lk, _)| *lk == k);
                        live = kept;
                        dead.extend(gone.into_iter().map(|(_, s): (usize, DescriptorSet)| s));
                    }
                }
                3..=7 if !registered.is_empty() => {
                    let (t, l, k) = registered[rng.below(registered.len())];
                    let set = allocate(&mut a, &d, t, l).expect("allocate");
                    assert!(
                        live.iter().all(|(_, s)| s.raw != set.raw),
                        "set handed out twice"
                    );
                    live.push((k, set));
                }
                8..=10 if !live.is_empty() => {
                    let (_, set) = live.swap_remove(rng.below(live.len()));
                    free(&mut a, &d, set).expect("free");
                }
                11 if !dead.is_empty() => {
                    let frees = d.state.borrow().free_calls;
                    free(&mut a, &d, dead.swap_remove(0)).expect("dead set");
                    assert_eq!(d.state.borrow().free_calls, frees);
                }
                _ => {}
            }
            check_model(&a, &d, &keys, &registered, &live);
        }
        for (t, _, _) in registered.drain(..) {
            unregister(&mut a, &d, t).expect("unregister");
        }
        assert_eq!((d.live_pools(), d.live_sets()), (0, 0), "seed {seed}");
        assert_eq!(a.stats(), DescriptorStats::default());
    }
}

fn check_model(
    a: &DescriptorAllocator,
    d: &MockDevice,
    keys: &[BucketKey],
    registered: &[(LayoutToken, vk::DescriptorSetLayout, usize)],
    live: &[(usize, DescriptorSet)],
) {
    let stats = a.stats();
    let state = d.state.borrow();
    assert_eq!(stats.in_use, live.len() as u64);
    assert_eq!(stats.in_use + stats.cached, state.sets.len() as u64);
    assert_eq!(stats.pools as usize, state.pools.len());
    let capacity: u64 = state.pools.values().map(|p| u64::from(p.max_sets)).sum();
    assert_eq!(stats.capacity, capacity);
    for (k, key) in keys.iter().enumerate() {
        let layouts = registered.iter().filter(|r| r.2 == k).count() as u32;
        let in_use = live.iter().filter(|(lk, _)| *lk == k).count() as u64;
        match stats.buckets.iter().find(|b| b.key == *key) {
            Some(b) => {
                assert_eq!((b.layouts, b.in_use), (layouts, in_use));
                // Sets in use keep a pool (registration alone makes none).
                assert!(b.pools >= 1 || in_use == 0);
                assert!(b.cached <= MAX_IDLE_SETS_PER_LAYOUT as u64 * u64::from(layouts));
            }
            None => assert_eq!((layouts, in_use), (0, 0)),
        }
    }
    for (_, set) in live {
        assert!(
            state.sets.contains_key(&set.raw.as_raw()),
            "live set not live in its pool"
        );
    }
}

/// After a warm-up cycle, allocation and free make no heap allocation,
/// through the cache, through the pools, and across pool growth and
/// shrinking.
#[test]
fn steady_state_makes_no_heap_allocation() {
    let d = NullDevice::default();
    let mut a = DescriptorAllocator::default();
    let keys = [key_a(), key_a(), key_b()];
    let layouts = [1u64, 2, 3].map(vk::DescriptorSetLayout::from_raw);
    let tokens = keys.map(|k| {
        // SAFETY: the null device has no GPU and checks nothing.
        unsafe { a.register_layout(k) }.expect("register")
    });
    let mut live: Vec<DescriptorSet> = Vec::with_capacity(2048);
    let mut rng = Rng(7);
    // One cycle: up to 1500 live sets and back to none.
    let mut cycle = |a: &mut DescriptorAllocator, live: &mut Vec<DescriptorSet>| {
        for phase in [80, 20] {
            for _ in 0..6000 {
                if live.is_empty() || (live.len() < 1500 && rng.chance(phase)) {
                    let l = rng.below(3);
                    // SAFETY: as above.
                    let set = unsafe { a.allocate(&d, tokens[l], layouts[l]) };
                    live.push(set.expect("allocate"));
                } else {
                    let set = live.swap_remove(rng.below(live.len()));
                    // SAFETY: as above.
                    unsafe { a.free(&d, set) }.expect("free");
                }
            }
        }
        while let Some(set) = live.pop() {
            // SAFETY: as above.
            unsafe { a.free(&d, set) }.expect("free");
        }
    };
    // Warm-up: the caches' and pools' lists reach their peak sizes.
    for _ in 0..4 {
        cycle(&mut a, &mut live);
    }
    let before = allocations();
    let pools_before = d.pools_created.get();
    for _ in 0..3 {
        cycle(&mut a, &mut live);
    }
    assert!(
        d.next.get() > pools_before,
        "the cycles did reach the pools"
    );
    assert_eq!(
        allocations() - before,
        0,
        "heap allocations in steady state"
    );
    for t in tokens {
        // SAFETY: as above.
        unsafe { a.unregister_layout(&d, t) }.expect("unregister");
    }
}
