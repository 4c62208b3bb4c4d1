//! Memory that keeps what it will need again (vulkan/memory.rs): steady
//! create/destroy churn of buffers makes no `vkAllocateMemory` and no
//! `vkFreeMemory` once warm, for every mappable and unmappable kind and for
//! small, medium, large and dedicated sizes; `trim_memory` gives it all
//! back; the retention limit bounds what is kept; a kept buffer comes back
//! as it was, with no driver call. Driver calls are counted by the
//! fault-injection hooks (`fault::calls`), per thread.
#![cfg(all(feature = "vulkan", feature = "fault-injection"))]

use keel_hal::vulkan::{self, fault};
use keel_hal::wgt;
use keel_hal::{Adapter as _, Device as _, Instance as _};
use keel_hal::{BufferDescriptor, DeviceDescriptor, InstanceDescriptor, InstanceFlags, Memory};

/// Opens the first adapter with validation on, runs `test`, then checks
/// that nothing is left alive and the layer reported no error.
fn with_device(name: &str, test: impl FnOnce(&vulkan::Device)) {
    let desc = InstanceDescriptor {
        name,
        flags: InstanceFlags::VALIDATION,
        ..Default::default()
    };
    // SAFETY: the system loader is trusted.
    let Ok(instance) = (unsafe { vulkan::Instance::init(&desc) }) else {
        println!("skipped: no Vulkan");
        return;
    };
    // SAFETY: live instance.
    let Some(exposed) = (unsafe { instance.enumerate_adapters() })
        .into_iter()
        .next()
    else {
        println!("skipped: no Vulkan 1.3 adapter");
        return;
    };
    // SAFETY: the device is dropped before the instance.
    let open = unsafe { exposed.adapter.open(&DeviceDescriptor::default()) }.expect("open");
    test(&open.device);
    assert_eq!(
        open.device.live_counts(),
        keel_hal::LiveCounts::default(),
        "objects left alive"
    );
    let validation = instance.validation_counter();
    drop((open, exposed.adapter, instance));
    assert_eq!(validation.errors(), 0, "validation errors (see the log)");
}

fn allocs() -> u64 {
    fault::calls("vkAllocateMemory").expect("vkAllocateMemory is hooked")
}

fn frees() -> u64 {
    fault::calls("vkFreeMemory").expect("vkFreeMemory is hooked")
}

fn creates() -> u64 {
    fault::calls("vkCreateBuffer").expect("vkCreateBuffer is hooked")
}

fn desc(memory: Memory, size: u64) -> BufferDescriptor<'static> {
    use wgt::BufferUsages as U;
    let usage = match memory {
        Memory::Upload => U::MAP_WRITE | U::COPY_SRC,
        Memory::Readback => U::MAP_READ | U::COPY_DST,
        _ => U::STORAGE | U::COPY_SRC | U::COPY_DST,
    };
    BufferDescriptor {
        label: None,
        size,
        usage,
        memory,
    }
}

/// One round: `count` buffers created, then all destroyed.
fn round(device: &vulkan::Device, desc: &BufferDescriptor, count: usize) {
    let mut buffers = Vec::with_capacity(count);
    for _ in 0..count {
        // SAFETY: live device; destroyed below.
        buffers.push(unsafe { device.create_buffer(desc) }.expect("buffer"));
    }
    for buffer in buffers {
        // SAFETY: made above, never used by the GPU.
        unsafe { device.destroy_buffer(buffer) };
    }
}

/// Warm-up round, then `rounds` more; returns the `vkAllocateMemory` and
/// `vkFreeMemory` calls of the steady-state rounds.
fn churn(
    device: &vulkan::Device,
    desc: &BufferDescriptor,
    count: usize,
    rounds: usize,
) -> (u64, u64) {
    round(device, desc, count);
    let (a, f) = (allocs(), frees());
    for _ in 0..rounds {
        round(device, desc, count);
    }
    (allocs() - a, frees() - f)
}

/// Trims and checks that everything is given back: no live buffer is left,
/// so nothing stays reserved (textures and VMA's default pools are unused).
fn trim_returns_everything(device: &vulkan::Device, what: &str) {
    let kept = device.memory_report();
    let f = frees();
    let released = device.trim_memory();
    let after = device.memory_report();
    println!(
        "{what}: trim_memory released {released} bytes ({} retained, {} reserved before; \
         {} vkFreeMemory)",
        kept.retained_bytes,
        kept.reserved_bytes,
        frees() - f
    );
    assert!(frees() > f, "{what}: trim_memory called no vkFreeMemory");
    assert_eq!(after.retained_bytes, 0, "{what}: retained after trim");
    assert_eq!(after.live_bytes, 0, "{what}: live after trim");
    assert_eq!(
        after.reserved_bytes, 0,
        "{what}: reserved after trim: {after:?}"
    );
    assert_eq!(after.block_count, 0, "{what}: blocks after trim");
    assert_eq!(
        released, kept.reserved_bytes,
        "{what}: trim_memory's answer"
    );
}

#[test]
fn steady_churn_allocates_nothing_and_trim_gives_it_back() {
    with_device("vulkan_memory churn", |device| {
        for memory in [Memory::Device, Memory::Upload, Memory::Readback] {
            for size in [256u64, 64 << 10, 4 << 20] {
                let desc = desc(memory, size);
                let what = format!("{memory:?} {size} B x 1000");
                let c = creates();
                let (a, f) = churn(device, &desc, 1000, 3);
                assert_eq!(
                    creates() - c,
                    1000,
                    "{what}: vkCreateBuffer beyond the warm-up round (kept buffers come back as they are)"
                );
                let report = device.memory_report();
                println!(
                    "{what}: {a} vkAllocateMemory, {f} vkFreeMemory in 3 steady rounds; \
                     {} retained, {} reserved, {} blocks",
                    report.retained_bytes, report.reserved_bytes, report.block_count
                );
                assert_eq!(
                    (a, f),
                    (0, 0),
                    "{what}: allocate/free calls in steady state"
                );
                assert!(report.retained_bytes >= size * 1000, "{what}: {report:?}");
                assert_eq!(report.live_bytes, 0, "{what}: {report:?}");
                trim_returns_everything(device, &what);
            }
        }
    });
}

#[test]
fn dedicated_large_buffers_are_kept_with_their_buffer() {
    with_device("vulkan_memory dedicated", |device| {
        // Over half of VMA's 256 MiB block: dedicated memory, one
        // vkAllocateMemory a buffer when made.
        let desc = desc(Memory::Device, 160 << 20);
        let a = allocs();
        round(device, &desc, 2);
        assert!(allocs() - a >= 2, "the warm-up allocates each buffer");
        let (a, f) = churn(device, &desc, 2, 3);
        assert_eq!(
            (a, f),
            (0, 0),
            "dedicated churn: allocate/free calls in steady state"
        );
        trim_returns_everything(device, "dedicated 160 MiB x 2");
    });
}

#[test]
fn without_retention_churn_allocates_every_round() {
    // What VMA's own policy does (it keeps one empty block per memory
    // type): the counter sees the blocks come and go, so the steady-state
    // zero above is the retention's doing.
    with_device("vulkan_memory off", |device| {
        device.set_memory_retention(0);
        for (size, count) in [(64u64 << 10, 1000usize), (4 << 20, 1000)] {
            let desc = desc(Memory::Device, size);
            let (a, f) = churn(device, &desc, count, 3);
            println!("retention off, {size} B x {count}: {a} vkAllocateMemory, {f} vkFreeMemory in 3 rounds");
            assert!(a >= 3 && f >= 3, "{size} B: {a} allocations, {f} frees");
            assert_eq!(device.memory_report().retained_bytes, 0);
        }
        device.trim_memory();
    });
}

#[test]
fn the_retention_limit_bounds_what_is_kept() {
    with_device("vulkan_memory limit", |device| {
        let limit = 1 << 20;
        device.set_memory_retention(limit);
        round(device, &desc(Memory::Upload, 64 << 10), 100);
        let report = device.memory_report();
        assert_eq!(report.retention_limit, limit);
        assert!(
            report.retained_bytes <= limit && report.retained_bytes >= limit / 2,
            "{report:?}"
        );
        // A lower limit lets the excess go at once.
        device.set_memory_retention(limit / 4);
        let lower = device.memory_report();
        assert!(lower.retained_bytes <= limit / 4, "{lower:?}");
        // Kept memory is reused: one more buffer of the same description
        // allocates nothing.
        let a = allocs();
        round(device, &desc(Memory::Upload, 64 << 10), 1);
        assert_eq!(allocs(), a);
        device.trim_memory();
        assert_eq!(device.memory_report().reserved_bytes, 0);
    });
}

#[test]
fn a_kept_buffer_comes_back_as_is() {
    with_device("vulkan_memory reuse", |device| {
        for memory in [Memory::Device, Memory::Upload, Memory::Readback] {
            let desc = desc(memory, 64 << 10);
            // SAFETY: live device; destroyed below, never used by the GPU.
            let first = unsafe { device.create_buffer(&desc) }.expect("buffer");
            let raw = first.raw();
            // SAFETY: made above, never used by the GPU.
            unsafe { device.destroy_buffer(first) };
            let kept = device.memory_report().retained_bytes;
            assert!(kept >= 64 << 10, "{memory:?}: {kept} bytes kept");
            // Reuse asks the driver for nothing: the first hooked call
            // would fail, and none is made.
            let net = fault::net_creates();
            fault::arm(1, ash::vk::Result::ERROR_OUT_OF_DEVICE_MEMORY);
            // SAFETY: live device; destroyed below.
            let again = unsafe { device.create_buffer(&desc) };
            let report = fault::disarm();
            assert_eq!(report.calls, 0, "{memory:?}: driver calls on reuse");
            let again = again.expect("reused buffer");
            assert_eq!(again.raw(), raw, "{memory:?}: the kept VkBuffer itself");
            assert_eq!(fault::net_creates(), net, "{memory:?}: objects made");
            assert!(
                device.memory_report().retained_bytes < kept,
                "{memory:?}: still counted as kept"
            );
            if memory != Memory::Device {
                // The persistent mapping comes back with it.
                // SAFETY: a mappable buffer of this device, unknown to the GPU.
                let mapping = unsafe { device.map_buffer(&again) }.expect("map");
                assert_eq!(mapping.size, 64 << 10);
                // SAFETY: as above.
                unsafe { device.unmap_buffer(&again) };
            }
            // SAFETY: made above, never used by the GPU.
            unsafe { device.destroy_buffer(again) };
        }
        device.trim_memory();
    });
}
