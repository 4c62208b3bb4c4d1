//! The allocator on the real driver, with the validation layer watching:
//! checks the `ash::Device` implementation of [`DescriptorDevice`].

use ash::vk;

use super::{Rng, MAX_IDLE_SETS_PER_LAYOUT};
use crate::vulkan::descriptor::{BucketKey, DescriptorAllocator, DescriptorCounts};
use crate::{Adapter as _, Instance as _, InstanceDescriptor, InstanceFlags};

/// A set layout of `n` bindings of `ty` (binding i, one descriptor each).
fn set_layout(
    device: &ash::Device,
    bindings: &[(vk::DescriptorType, u32)],
) -> vk::DescriptorSetLayout {
    let bindings: Vec<_> = bindings
        .iter()
        .enumerate()
        .map(|(i, &(ty, count))| {
            vk::DescriptorSetLayoutBinding::default()
                .binding(i as u32)
                .descriptor_type(ty)
                .descriptor_count(count)
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
        })
        .collect();
    let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
    // SAFETY: a valid create info for this device.
    unsafe { device.create_descriptor_set_layout(&info, None) }.expect("set layout")
}

/// An instance with validation and a device on its first adapter, or
/// `None` (printed as a skip) where there is none.
fn open_validated() -> Option<(
    crate::vulkan::Instance,
    crate::OpenDevice<crate::vulkan::Api>,
)> {
    let desc = InstanceDescriptor {
        flags: InstanceFlags::VALIDATION,
        ..Default::default()
    };
    // SAFETY: the system's Vulkan loader is trusted to be conforming.
    let instance = match unsafe { crate::vulkan::Instance::init(&desc) } {
        Ok(instance) => instance,
        Err(err) => {
            println!("skipped: no Vulkan instance with validation ({err})");
            return None;
        }
    };
    // SAFETY: the instance is live.
    let Some(exposed) = unsafe { instance.enumerate_adapters() }.into_iter().next() else {
        println!("skipped: no Vulkan adapter");
        return None;
    };
    // SAFETY: default descriptor, adapter of this instance.
    let open = unsafe { exposed.adapter.open(&Default::default()) }.expect("open device");
    assert!(
        instance.validation_enabled() || std::env::var_os("KEEL_ALLOW_NO_VALIDATION").is_some(),
        "validation layer missing (KEEL_ALLOW_NO_VALIDATION=1 runs without it)"
    );
    Some((instance, open))
}

/// Unregisters and destroys `layouts`, which leaves no pool.
fn unregister_all(
    a: &DescriptorAllocator,
    device: &ash::Device,
    layouts: Vec<(
        vk::DescriptorSetLayout,
        crate::vulkan::descriptor::LayoutToken,
    )>,
) {
    for (raw, token) in layouts {
        // SAFETY: no set is in use by the GPU.
        unsafe { a.unregister_layout(device, token) }.expect("unregister");
        // SAFETY: the layout is ours and unregistered.
        unsafe { device.destroy_descriptor_set_layout(raw, None) };
    }
    assert_eq!(a.stats().pools, 0);
}

#[test]
fn churn_on_the_driver_without_validation_errors() {
    let Some((instance, open)) = open_validated() else {
        return;
    };
    let device = &open.device.shared.raw;

    let shapes = [
        (
            vec![
                (vk::DescriptorType::UNIFORM_BUFFER, 1),
                (vk::DescriptorType::SAMPLED_IMAGE, 3),
                (vk::DescriptorType::SAMPLER, 1),
            ],
            DescriptorCounts {
                uniform_buffers: 1,
                sampled_images: 3,
                samplers: 1,
                ..Default::default()
            },
        ),
        (
            vec![(vk::DescriptorType::STORAGE_BUFFER_DYNAMIC, 2)],
            DescriptorCounts {
                storage_buffers_dynamic: 2,
                ..Default::default()
            },
        ),
        (vec![], DescriptorCounts::default()),
    ];
    let a = DescriptorAllocator::default();
    let mut layouts = Vec::new();
    for (bindings, counts) in &shapes {
        for _ in 0..2 {
            let raw = set_layout(device, bindings);
            let key = BucketKey {
                counts: *counts,
                update_after_bind: false,
            };
            // SAFETY: `key` matches the layout just created.
            let token = unsafe { a.register_layout(key) }.expect("register");
            layouts.push((raw, token));
        }
    }
    let mut rng = Rng(0x5eed);
    let mut live = Vec::new();
    for step in 0..6000 {
        let grow = (step / 1000) % 2 == 0;
        if live.is_empty() || rng.chance(if grow { 70 } else { 30 }) {
            let (raw, token) = layouts[rng.below(layouts.len())];
            // SAFETY: `raw` is the layout `token` was registered for.
            live.push(unsafe { a.allocate(device, token, raw) }.expect("allocate"));
        } else {
            let set = live.swap_remove(rng.below(live.len()));
            // SAFETY: the GPU never saw the set.
            unsafe { a.free(device, set) }.expect("free");
        }
    }
    assert!(a.stats().pools > 3);
    for set in live {
        // SAFETY: as above.
        unsafe { a.free(device, set) }.expect("free");
    }
    let stats = a.stats();
    assert!(stats.cached <= (MAX_IDLE_SETS_PER_LAYOUT * layouts.len()) as u64);
    // Cached sets keep their pools until trimmed.
    // SAFETY: the allocator's device; no set is in use by the GPU.
    unsafe { a.trim(device) }.expect("trim");
    let stats = a.stats();
    assert_eq!((stats.pools, stats.cached), (3, 0), "{stats:?}");
    unregister_all(&a, device, layouts);
    drop(open);
    assert_eq!(instance.validation_error_count(), 0, "see the log above");
}

/// Threads allocating and freeing sets of two layouts (hits and misses:
/// bursts past the cache) while another trims: no set is handed to two
/// holders at once, the counts end at zero, and the driver sees no misuse
/// of a pool (validation's thread-safety checks are on).
#[test]
fn threads_share_the_allocator_and_the_cache() {
    let Some((instance, open)) = open_validated() else {
        return;
    };
    let device = &open.device.shared.raw;
    let bindings = [(vk::DescriptorType::UNIFORM_BUFFER, 1)];
    let key = BucketKey {
        counts: DescriptorCounts {
            uniform_buffers: 1,
            ..Default::default()
        },
        update_after_bind: false,
    };
    let a = DescriptorAllocator::default();
    let layouts: Vec<_> = (0..2)
        .map(|_| {
            let raw = set_layout(device, &bindings);
            // SAFETY: `key` matches the layout just created.
            (raw, unsafe { a.register_layout(key) }.expect("register"))
        })
        .collect();
    let held = parking_lot::Mutex::new(std::collections::HashSet::new());
    std::thread::scope(|scope| {
        for thread in 0..4u64 {
            let (a, layouts, held) = (&a, &layouts, &held);
            scope.spawn(move || {
                let mut rng = Rng(0x5eed + thread);
                let mut mine = Vec::new();
                for step in 0..6000 {
                    // Bursts of about 800 sets a thread, 1,600 a layout:
                    // past the 1,024 a layout caches, so frees also go
                    // back to their pools and allocations miss.
                    let grow = (step / 1000) % 2 == 0;
                    if mine.is_empty() || rng.chance(if grow { 90 } else { 10 }) {
                        let (raw, token) = layouts[rng.below(layouts.len())];
                        // SAFETY: `raw` is the layout `token` was registered for.
                        let set = unsafe { a.allocate(device, token, raw) }.expect("allocate");
                        assert!(held.lock().insert(set.raw()), "a set handed out twice");
                        mine.push(set);
                    } else {
                        let set = mine.swap_remove(rng.below(mine.len()));
                        held.lock().remove(&set.raw());
                        // SAFETY: the GPU never saw the set.
                        unsafe { a.free(device, set) }.expect("free");
                    }
                }
                for set in mine {
                    held.lock().remove(&set.raw());
                    // SAFETY: as above.
                    unsafe { a.free(device, set) }.expect("free");
                }
            });
        }
        scope.spawn(|| {
            for _ in 0..50 {
                // SAFETY: the allocator's device; no set is in use by the GPU.
                unsafe { a.trim(device) }.expect("trim");
                std::thread::yield_now();
            }
        });
    });
    assert_eq!(a.live_sets(), 0);
    assert_eq!(a.stats().in_use, 0, "{:?}", a.stats());
    // SAFETY: as above.
    unsafe { a.trim(device) }.expect("trim");
    assert_eq!(a.stats().cached, 0);
    unregister_all(&a, device, layouts);
    drop(open);
    assert_eq!(instance.validation_error_count(), 0, "see the log above");
}
