//! Test-only fault injection (feature `fault-injection`): make the Nth
//! fallible Vulkan call fail with a chosen `VkResult`.
//!
//! With the feature on, the instance's and every device's function tables
//! are built with *hooks* in place of the fallible functions keel-hal's
//! create paths use — including those VMA calls on our behalf, since
//! vk-mem 0.5 takes its function pointers from the `ash::Device` and
//! `ash::Instance` we hand it (`Allocator::new` copies `fp_v1_0()` etc.).
//! Each hook counts the call against the calling thread's plan, returns the
//! planned error when the count reaches it, and otherwise forwards to the
//! real function.
//!
//! The plan is thread-local ([`arm`], [`disarm`]), so tests running in
//! parallel do not disturb one another; VMA runs on the caller's thread.
//! Without the feature, none of this is compiled: normal builds pay nothing.
//!
//! ```text
//! keel_hal::vulkan::fault::arm(3, ash::vk::Result::ERROR_OUT_OF_DEVICE_MEMORY);
//! let result = device.create_buffer(&desc); // the 3rd fallible call fails
//! let report = keel_hal::vulkan::fault::disarm();
//! ```

use std::cell::Cell;
use std::ffi::{c_void, CStr};
use std::sync::atomic::{AtomicPtr, Ordering};

use ash::vk;

/// What happened while a plan was armed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultReport {
    /// Hooked calls made on this thread while armed.
    pub calls: u64,
    /// Whether the planned failure was injected.
    pub fired: bool,
}

#[derive(Clone, Copy)]
struct Plan {
    fail_at: u64,
    result: vk::Result,
    calls: u64,
    fired: bool,
}

thread_local! {
    static PLAN: Cell<Option<Plan>> = const { Cell::new(None) };
}

/// Makes the `fail_at`-th hooked call on this thread (counting from 1)
/// return `result`. Later calls succeed again. Replaces any armed plan.
pub fn arm(fail_at: u64, result: vk::Result) {
    PLAN.with(|p| {
        p.set(Some(Plan {
            fail_at,
            result,
            calls: 0,
            fired: false,
        }))
    });
}

/// Ends this thread's plan and reports what happened.
pub fn disarm() -> FaultReport {
    PLAN.with(|p| p.take())
        .map_or(FaultReport::default(), |p| FaultReport {
            calls: p.calls,
            fired: p.fired,
        })
}

/// Counts a hooked call; `Some(error)` if this is the one to fail.
fn intercept() -> Option<vk::Result> {
    PLAN.try_with(|p| {
        let mut plan = p.get()?;
        plan.calls += 1;
        let fire = plan.calls == plan.fail_at;
        plan.fired |= fire;
        p.set(Some(plan));
        fire.then_some(plan.result)
    })
    .ok()
    .flatten()
}

/// Generates one hook per function: a module holding the real pointer and
/// an `extern "system"` function with the Vulkan signature.
///
/// The real pointers are process-wide statics. That is sound because they
/// are always obtained through `vkGetInstanceProcAddr` (see
/// [`wrap_device`]): for device-level commands the loader returns its
/// *trampolines*, which dispatch on the dispatchable handle passed as the
/// first argument, so one pointer serves every device and instance of the
/// process. Every store writes the address of the same loader symbol; the
/// loader library stays mapped while any instance (whose `ash::Entry` holds
/// it) lives, and a hook only runs for a live device of a live instance.
macro_rules! hooks {
    ($($module:ident = $name:literal: $pfn:ty = fn($($arg:ident: $ty:ty),* $(,)?);)*) => {
        $(
            #[allow(non_snake_case)]
            mod $module {
                use super::*;

                /// The real function, set when a table is built.
                pub(super) static REAL: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

                /// Counts the call; fails it as planned or forwards it.
                ///
                /// # Safety
                /// Called by Vulkan users with the arguments of the real function.
                pub(super) unsafe extern "system" fn hook($($arg: $ty),*) -> vk::Result {
                    if let Some(result) = intercept() {
                        return result;
                    }
                    let real = REAL.load(Ordering::Acquire);
                    if real.is_null() {
                        return vk::Result::ERROR_INITIALIZATION_FAILED;
                    }
                    // SAFETY: `REAL` only ever holds the loader's pointer for
                    // this very command (see the macro's docs), whose type is `$pfn`.
                    let real: $pfn = unsafe { std::mem::transmute::<*mut c_void, $pfn>(real) };
                    // SAFETY: forwarded contract.
                    unsafe { real($($arg),*) }
                }
            }
        )*

        /// The hook for a command name, with the slot its real pointer goes in.
        fn lookup(name: &CStr) -> Option<(&'static AtomicPtr<c_void>, *const c_void)> {
            let name = name.to_bytes();
            $(
                if name == $name.as_bytes() {
                    return Some((&$module::REAL, $module::hook as *const c_void));
                }
            )*
            None
        }
    };
}

hooks! {
    CreateDevice = "vkCreateDevice": vk::PFN_vkCreateDevice = fn(
        pd: vk::PhysicalDevice, info: *const vk::DeviceCreateInfo<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::Device);
    CreateBuffer = "vkCreateBuffer": vk::PFN_vkCreateBuffer = fn(
        d: vk::Device, info: *const vk::BufferCreateInfo<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::Buffer);
    CreateImage = "vkCreateImage": vk::PFN_vkCreateImage = fn(
        d: vk::Device, info: *const vk::ImageCreateInfo<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::Image);
    AllocateMemory = "vkAllocateMemory": vk::PFN_vkAllocateMemory = fn(
        d: vk::Device, info: *const vk::MemoryAllocateInfo<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::DeviceMemory);
    BindBufferMemory = "vkBindBufferMemory": vk::PFN_vkBindBufferMemory = fn(
        d: vk::Device, buffer: vk::Buffer, memory: vk::DeviceMemory, offset: vk::DeviceSize);
    BindImageMemory = "vkBindImageMemory": vk::PFN_vkBindImageMemory = fn(
        d: vk::Device, image: vk::Image, memory: vk::DeviceMemory, offset: vk::DeviceSize);
    BindBufferMemory2 = "vkBindBufferMemory2": vk::PFN_vkBindBufferMemory2 = fn(
        d: vk::Device, count: u32, infos: *const vk::BindBufferMemoryInfo<'_>);
    BindImageMemory2 = "vkBindImageMemory2": vk::PFN_vkBindImageMemory2 = fn(
        d: vk::Device, count: u32, infos: *const vk::BindImageMemoryInfo<'_>);
    MapMemory = "vkMapMemory": vk::PFN_vkMapMemory = fn(
        d: vk::Device, memory: vk::DeviceMemory, offset: vk::DeviceSize,
        size: vk::DeviceSize, flags: vk::MemoryMapFlags, out: *mut *mut c_void);
    CreateImageView = "vkCreateImageView": vk::PFN_vkCreateImageView = fn(
        d: vk::Device, info: *const vk::ImageViewCreateInfo<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::ImageView);
    CreateSampler = "vkCreateSampler": vk::PFN_vkCreateSampler = fn(
        d: vk::Device, info: *const vk::SamplerCreateInfo<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::Sampler);
    CreateQueryPool = "vkCreateQueryPool": vk::PFN_vkCreateQueryPool = fn(
        d: vk::Device, info: *const vk::QueryPoolCreateInfo<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::QueryPool);
    CreateSemaphore = "vkCreateSemaphore": vk::PFN_vkCreateSemaphore = fn(
        d: vk::Device, info: *const vk::SemaphoreCreateInfo<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::Semaphore);
    CreateCommandPool = "vkCreateCommandPool": vk::PFN_vkCreateCommandPool = fn(
        d: vk::Device, info: *const vk::CommandPoolCreateInfo<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::CommandPool);
    ResetCommandPool = "vkResetCommandPool": vk::PFN_vkResetCommandPool = fn(
        d: vk::Device, pool: vk::CommandPool, flags: vk::CommandPoolResetFlags);
    AllocateCommandBuffers = "vkAllocateCommandBuffers": vk::PFN_vkAllocateCommandBuffers = fn(
        d: vk::Device, info: *const vk::CommandBufferAllocateInfo<'_>, out: *mut vk::CommandBuffer);
    BeginCommandBuffer = "vkBeginCommandBuffer": vk::PFN_vkBeginCommandBuffer = fn(
        cb: vk::CommandBuffer, info: *const vk::CommandBufferBeginInfo<'_>);
    EndCommandBuffer = "vkEndCommandBuffer": vk::PFN_vkEndCommandBuffer = fn(cb: vk::CommandBuffer);
    ResetCommandBuffer = "vkResetCommandBuffer": vk::PFN_vkResetCommandBuffer = fn(
        cb: vk::CommandBuffer, flags: vk::CommandBufferResetFlags);
    QueueSubmit2 = "vkQueueSubmit2": vk::PFN_vkQueueSubmit2 = fn(
        q: vk::Queue, count: u32, submits: *const vk::SubmitInfo2<'_>, fence: vk::Fence);
    GetSemaphoreCounterValue = "vkGetSemaphoreCounterValue": vk::PFN_vkGetSemaphoreCounterValue = fn(
        d: vk::Device, semaphore: vk::Semaphore, out: *mut u64);
    WaitSemaphores = "vkWaitSemaphores": vk::PFN_vkWaitSemaphores = fn(
        d: vk::Device, info: *const vk::SemaphoreWaitInfo<'_>, timeout: u64);
    DeviceWaitIdle = "vkDeviceWaitIdle": vk::PFN_vkDeviceWaitIdle = fn(d: vk::Device);
}

/// Returns the hook for `name` (recording `real` as its target), or `real`
/// itself for commands that are not hooked or not available.
fn substitute(name: &CStr, real: vk::PFN_vkVoidFunction) -> *const c_void {
    let real = real.map_or(std::ptr::null(), |f| f as *const c_void);
    match lookup(name) {
        Some((slot, hook)) if !real.is_null() => {
            slot.store(real.cast_mut(), Ordering::Release);
            hook
        }
        _ => real,
    }
}

/// Builds the instance's function table with hooks (`vkCreateDevice`).
///
/// # Safety
/// `instance` was created from `entry` and is live.
pub(crate) unsafe fn wrap_instance(entry: &ash::Entry, instance: vk::Instance) -> ash::Instance {
    // SAFETY: the loader returns pointers for this live instance; the
    // closure returns either those or hooks with identical signatures.
    unsafe {
        ash::Instance::load_with(
            |name| substitute(name, entry.get_instance_proc_addr(instance, name.as_ptr())),
            instance,
        )
    }
}

/// Builds a device's function table with hooks, loading every command
/// through `vkGetInstanceProcAddr` so that the stored real pointers are the
/// loader's handle-dispatching trampolines (valid for every device).
///
/// # Safety
/// `device` was created from `instance` and is live.
pub(crate) unsafe fn wrap_device(
    instance: &super::instance::InstanceShared,
    device: vk::Device,
) -> ash::Device {
    let handle = instance.raw.handle();
    // SAFETY: as for `wrap_instance`; device-level commands obtained from
    // vkGetInstanceProcAddr are valid for every device of the instance.
    unsafe {
        ash::Device::load_with(
            |name| {
                substitute(
                    name,
                    instance.entry.get_instance_proc_addr(handle, name.as_ptr()),
                )
            },
            device,
        )
    }
}
