//! `vulkan::Instance::init_with_entry`: every device function keel-hal (and
//! VMA) uses is looked up through the given entry's `vkGetInstanceProcAddr`,
//! so a wrapping entry sees them (the bench counts `vkAllocateMemory` so).
#![cfg(feature = "vulkan")]

use std::ffi::{c_char, CStr};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::OnceLock;

use ash::vk;
use keel_hal::vulkan;
use keel_hal::{Adapter as _, Device as _, Instance as _};
use keel_hal::{BufferDescriptor, DeviceDescriptor, InstanceDescriptor, Memory};

static LOADER: OnceLock<ash::Entry> = OnceLock::new();
static REAL_GDPA: AtomicPtr<std::ffi::c_void> = AtomicPtr::new(std::ptr::null_mut());
/// Lookups of `vkAllocateMemory` through the wrapped `vkGetDeviceProcAddr`.
static ALLOCATE_LOOKUPS: AtomicUsize = AtomicUsize::new(0);

unsafe extern "system" fn gipa(
    instance: vk::Instance,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    let loader = LOADER.get()?;
    // SAFETY: forwarded with the caller's arguments.
    let real = unsafe { (loader.static_fn().get_instance_proc_addr)(instance, name) };
    // SAFETY: Vulkan passes a NUL-terminated name.
    if instance != vk::Instance::null() && unsafe { CStr::from_ptr(name) } == c"vkGetDeviceProcAddr"
    {
        let real = real?;
        REAL_GDPA.store(real as *mut _, Ordering::Release);
        // SAFETY: same signature as the real vkGetDeviceProcAddr.
        return Some(unsafe {
            std::mem::transmute::<vk::PFN_vkGetDeviceProcAddr, unsafe extern "system" fn()>(gdpa)
        });
    }
    real
}

unsafe extern "system" fn gdpa(device: vk::Device, name: *const c_char) -> vk::PFN_vkVoidFunction {
    // SAFETY: Vulkan passes a NUL-terminated name.
    if unsafe { CStr::from_ptr(name) } == c"vkAllocateMemory" {
        ALLOCATE_LOOKUPS.fetch_add(1, Ordering::Relaxed);
    }
    let real = REAL_GDPA.load(Ordering::Acquire);
    if real.is_null() {
        return None;
    }
    // SAFETY: `REAL_GDPA` holds the loader's vkGetDeviceProcAddr.
    let real =
        unsafe { std::mem::transmute::<*mut std::ffi::c_void, vk::PFN_vkGetDeviceProcAddr>(real) };
    // SAFETY: forwarded with the caller's arguments.
    unsafe { real(device, name) }
}

#[test]
fn device_functions_are_looked_up_through_the_given_entry() {
    // SAFETY: the system loader is trusted.
    let Ok(loader) = (unsafe { ash::Entry::load() }) else {
        println!("skipped: no Vulkan");
        return;
    };
    let _ = LOADER.set(loader);
    // SAFETY: `gipa` forwards to the loader, swapping in `gdpa`, which forwards too.
    let entry = unsafe {
        ash::Entry::from_static_fn(ash::StaticFn {
            get_instance_proc_addr: gipa,
        })
    };
    let desc = InstanceDescriptor {
        name: "init-with-entry",
        ..Default::default()
    };
    // SAFETY: the entry forwards to the system loader.
    let Ok(instance) = (unsafe { vulkan::Instance::init_with_entry(&desc, entry) }) else {
        println!("skipped: no Vulkan 1.3 instance");
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
    let before = ALLOCATE_LOOKUPS.load(Ordering::Relaxed);
    // SAFETY: the device is dropped before the instance.
    let open = unsafe { exposed.adapter.open(&DeviceDescriptor::default()) }.expect("open");
    assert!(
        ALLOCATE_LOOKUPS.load(Ordering::Relaxed) > before,
        "the device table did not look vkAllocateMemory up through the entry"
    );
    let desc = BufferDescriptor {
        label: None,
        size: 1 << 20,
        usage: keel_hal::wgt::BufferUsages::COPY_DST,
        memory: Memory::Device,
    };
    // SAFETY: valid descriptor; never used by the GPU.
    unsafe {
        let buffer = open
            .device
            .create_buffer(&desc)
            .expect("buffer through the wrapped entry");
        open.device.destroy_buffer(buffer);
    }
}
