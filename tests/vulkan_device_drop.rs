//! A device dropped while its resources are still alive (the caller's
//! mistake, or a test unwinding from a panic) must log and carry on, never
//! abort the process: VMA's own assertion used to abort when its allocator
//! was destroyed with allocations left, before any panic message was
//! printed. Runs in its own binary, so an abort here cannot hide another
//! test's result.
#![cfg(feature = "vulkan")]

use keel_hal::vulkan;
use keel_hal::wgt;
use keel_hal::{Adapter as _, Device as _, Instance as _};
use keel_hal::{BufferDescriptor, DeviceDescriptor, InstanceDescriptor, Memory, TextureDescriptor};

#[test]
fn dropping_a_device_with_live_resources_does_not_abort() {
    // No validation: the layer rightly reports the objects left alive.
    let desc = InstanceDescriptor {
        name: "device-drop",
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
    for memory in [Memory::Device, Memory::Upload, Memory::Readback] {
        let buffer_desc = BufferDescriptor {
            label: Some("left alive"),
            size: 64 << 10,
            usage: wgt::BufferUsages::COPY_DST | wgt::BufferUsages::COPY_SRC,
            memory,
        };
        // SAFETY: live device; the buffer is deliberately never destroyed.
        // Never destroyed: the handle goes out of scope, which frees nothing.
        let _buffer = unsafe { open.device.create_buffer(&buffer_desc) }.expect("buffer");
    }
    let texture_desc = TextureDescriptor {
        label: Some("left alive"),
        size: wgt::Extent3d {
            width: 64,
            height: 64,
            depth_or_array_layers: 1,
        },
        format: wgt::TextureFormat::Rgba8Unorm,
        usage: wgt::TextureUsages::COPY_DST,
        ..Default::default()
    };
    // SAFETY: live device; the texture is deliberately never destroyed.
    let _texture = unsafe { open.device.create_texture(&texture_desc) }.expect("texture");
    assert_ne!(open.device.live_counts(), keel_hal::LiveCounts::default());
    // The mistake under test: the device goes first. This returns.
    drop(open);
    drop((exposed.adapter, instance));
}
