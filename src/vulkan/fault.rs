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
//! `vkCreateInstance` and `vkCreateDebugUtilsMessengerEXT` do not come from
//! a table keel-hal builds (the loader's global table and ash's extension
//! loader), so the instance code asks `intercept` right before calling
//! them: they are injection points like the rest.
//!
//! Leak accounting: the hooks also keep a per-thread *net create count*
//! ([`net_creates`]): +1 for every successful create or allocate of a Vulkan
//! object or memory (instance, messenger, device, buffer, image, memory,
//! view, sampler, query pool, semaphore, command pool, descriptor set
//! layout, descriptor pool, pipeline layout, shader module, pipeline
//! (ray-tracing ones included), −1
//! for every destroy or free of a non-null one. A failure path that leaks
//! leaves it above where it started, even when the hal's own counters never
//! saw the object.
//! (Command buffers and descriptor sets are freed with their pool and not
//! counted.)
//!
//! Acceleration structures (`vkCreateAccelerationStructureKHR`, loaded into
//! their extension table through the same hooks) count like the rest.
//!
//! Call counts: every hook also counts its calls per thread, by command
//! ([`calls`]), so a test can assert how often the driver was asked for
//! something (`vkAllocateMemory` during steady-state buffer churn: never).
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
    /// Whether an injected `ERROR_DEVICE_LOST` latches the device lost
    /// ([`arm_lasting`]) or is a one-call failure ([`arm`]).
    lasting: bool,
}

thread_local! {
    static PLAN: Cell<Option<Plan>> = const { Cell::new(None) };
    /// Creates minus destroys of Vulkan objects and memory on this thread.
    static NET: Cell<i64> = const { Cell::new(0) };
}

/// Successful creates minus destroys of Vulkan objects and memory made on
/// this thread so far (armed or not). Compare it before and after a step.
pub fn net_creates() -> i64 {
    NET.try_with(Cell::get).unwrap_or(0)
}

/// How many times this thread has called the hooked command `name` (e.g.
/// `"vkAllocateMemory"`, `"vkFreeMemory"`) so far, armed or not, counting
/// calls that failed (injected or not); `None` for a command without a
/// hook. VMA runs on its caller's thread, so its calls count here too.
/// Compare it before and after a step.
pub fn calls(name: &str) -> Option<u64> {
    calls_fallible(name).or_else(|| calls_destroy(name))
}

/// Adds `delta` to this thread's net create count.
pub(crate) fn note(delta: i64) {
    let _ = NET.try_with(|n| n.set(n.get() + delta));
}

/// Makes the `fail_at`-th hooked call on this thread (counting from 1)
/// return `result`. Later calls succeed again. Replaces any armed plan.
///
/// An injected `ERROR_DEVICE_LOST` is a failure of that one call: the
/// device is not latched lost (see [`arm_lasting`] for a real-looking loss).
pub fn arm(fail_at: u64, result: vk::Result) {
    set_plan(fail_at, result, false);
}

/// Like [`arm`], but an injected `ERROR_DEVICE_LOST` is what a real loss
/// is: the device stays lost, and every later fallible call returns
/// `DeviceError::Lost` without reaching the driver.
pub fn arm_lasting(fail_at: u64, result: vk::Result) {
    set_plan(fail_at, result, true);
}

fn set_plan(fail_at: u64, result: vk::Result, lasting: bool) {
    crate::loss::mark_transient_loss(false);
    PLAN.with(|p| {
        p.set(Some(Plan {
            fail_at,
            result,
            calls: 0,
            fired: false,
            lasting,
        }))
    });
}

/// Ends this thread's plan and reports what happened.
pub fn disarm() -> FaultReport {
    crate::loss::mark_transient_loss(false);
    PLAN.with(|p| p.take())
        .map_or(FaultReport::default(), |p| FaultReport {
            calls: p.calls,
            fired: p.fired,
        })
}

/// Counts a hooked call; `Some(error)` if this is the one to fail. The
/// instance code calls it before the commands it cannot hook by table.
pub(crate) fn intercept() -> Option<vk::Result> {
    PLAN.try_with(|p| {
        let mut plan = p.get()?;
        plan.calls += 1;
        let fire = plan.calls == plan.fail_at;
        plan.fired |= fire;
        p.set(Some(plan));
        if fire && plan.result == vk::Result::ERROR_DEVICE_LOST && !plan.lasting {
            crate::loss::mark_transient_loss(true);
        }
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
    ($($module:ident = $name:literal [$delta:literal]: $pfn:ty = fn($($arg:ident: $ty:ty),* $(,)?);)*) => {
        $(
            #[allow(non_snake_case)]
            mod $module {
                use super::*;

                /// The real function, set when a table is built.
                pub(super) static REAL: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

                thread_local! {
                    /// Calls of this command made on this thread ([`calls`]).
                    pub(super) static CALLS: Cell<u64> = const { Cell::new(0) };
                }

                /// Counts the call; fails it as planned or forwards it (and
                /// counts a successful create in the net count).
                ///
                /// # Safety
                /// Called by Vulkan users with the arguments of the real function.
                pub(super) unsafe extern "system" fn hook($($arg: $ty),*) -> vk::Result {
                    let _ = CALLS.try_with(|c| c.set(c.get() + 1));
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
                    let result = unsafe { real($($arg),*) };
                    if result == vk::Result::SUCCESS {
                        note($delta);
                    }
                    result
                }
            }
        )*

        /// This thread's call count of a fallible command, if it is hooked.
        fn calls_fallible(name: &str) -> Option<u64> {
            $(
                if name == $name {
                    return Some($module::CALLS.try_with(Cell::get).unwrap_or(0));
                }
            )*
            None
        }

        /// The hook of a fallible command, with the slot its real pointer goes in.
        fn lookup_fallible(name: &CStr) -> Option<(&'static AtomicPtr<c_void>, *const c_void)> {
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
    CreateDevice = "vkCreateDevice" [1]: vk::PFN_vkCreateDevice = fn(
        pd: vk::PhysicalDevice, info: *const vk::DeviceCreateInfo<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::Device);
    CreateBuffer = "vkCreateBuffer" [1]: vk::PFN_vkCreateBuffer = fn(
        d: vk::Device, info: *const vk::BufferCreateInfo<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::Buffer);
    CreateImage = "vkCreateImage" [1]: vk::PFN_vkCreateImage = fn(
        d: vk::Device, info: *const vk::ImageCreateInfo<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::Image);
    AllocateMemory = "vkAllocateMemory" [1]: vk::PFN_vkAllocateMemory = fn(
        d: vk::Device, info: *const vk::MemoryAllocateInfo<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::DeviceMemory);
    BindBufferMemory = "vkBindBufferMemory" [0]: vk::PFN_vkBindBufferMemory = fn(
        d: vk::Device, buffer: vk::Buffer, memory: vk::DeviceMemory, offset: vk::DeviceSize);
    BindImageMemory = "vkBindImageMemory" [0]: vk::PFN_vkBindImageMemory = fn(
        d: vk::Device, image: vk::Image, memory: vk::DeviceMemory, offset: vk::DeviceSize);
    BindBufferMemory2 = "vkBindBufferMemory2" [0]: vk::PFN_vkBindBufferMemory2 = fn(
        d: vk::Device, count: u32, infos: *const vk::BindBufferMemoryInfo<'_>);
    BindImageMemory2 = "vkBindImageMemory2" [0]: vk::PFN_vkBindImageMemory2 = fn(
        d: vk::Device, count: u32, infos: *const vk::BindImageMemoryInfo<'_>);
    MapMemory = "vkMapMemory" [0]: vk::PFN_vkMapMemory = fn(
        d: vk::Device, memory: vk::DeviceMemory, offset: vk::DeviceSize,
        size: vk::DeviceSize, flags: vk::MemoryMapFlags, out: *mut *mut c_void);
    CreateImageView = "vkCreateImageView" [1]: vk::PFN_vkCreateImageView = fn(
        d: vk::Device, info: *const vk::ImageViewCreateInfo<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::ImageView);
    CreateSampler = "vkCreateSampler" [1]: vk::PFN_vkCreateSampler = fn(
        d: vk::Device, info: *const vk::SamplerCreateInfo<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::Sampler);
    CreateQueryPool = "vkCreateQueryPool" [1]: vk::PFN_vkCreateQueryPool = fn(
        d: vk::Device, info: *const vk::QueryPoolCreateInfo<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::QueryPool);
    CreateAccelerationStructureKHR = "vkCreateAccelerationStructureKHR" [1]: vk::PFN_vkCreateAccelerationStructureKHR = fn(
        d: vk::Device, info: *const vk::AccelerationStructureCreateInfoKHR<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::AccelerationStructureKHR);
    CreateSemaphore = "vkCreateSemaphore" [1]: vk::PFN_vkCreateSemaphore = fn(
        d: vk::Device, info: *const vk::SemaphoreCreateInfo<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::Semaphore);
    CreateCommandPool = "vkCreateCommandPool" [1]: vk::PFN_vkCreateCommandPool = fn(
        d: vk::Device, info: *const vk::CommandPoolCreateInfo<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::CommandPool);
    ResetCommandPool = "vkResetCommandPool" [0]: vk::PFN_vkResetCommandPool = fn(
        d: vk::Device, pool: vk::CommandPool, flags: vk::CommandPoolResetFlags);
    AllocateCommandBuffers = "vkAllocateCommandBuffers" [0]: vk::PFN_vkAllocateCommandBuffers = fn(
        d: vk::Device, info: *const vk::CommandBufferAllocateInfo<'_>, out: *mut vk::CommandBuffer);
    BeginCommandBuffer = "vkBeginCommandBuffer" [0]: vk::PFN_vkBeginCommandBuffer = fn(
        cb: vk::CommandBuffer, info: *const vk::CommandBufferBeginInfo<'_>);
    EndCommandBuffer = "vkEndCommandBuffer" [0]: vk::PFN_vkEndCommandBuffer = fn(cb: vk::CommandBuffer);
    ResetCommandBuffer = "vkResetCommandBuffer" [0]: vk::PFN_vkResetCommandBuffer = fn(
        cb: vk::CommandBuffer, flags: vk::CommandBufferResetFlags);
    QueueSubmit2 = "vkQueueSubmit2" [0]: vk::PFN_vkQueueSubmit2 = fn(
        q: vk::Queue, count: u32, submits: *const vk::SubmitInfo2<'_>, fence: vk::Fence);
    GetSemaphoreCounterValue = "vkGetSemaphoreCounterValue" [0]: vk::PFN_vkGetSemaphoreCounterValue = fn(
        d: vk::Device, semaphore: vk::Semaphore, out: *mut u64);
    WaitSemaphores = "vkWaitSemaphores" [0]: vk::PFN_vkWaitSemaphores = fn(
        d: vk::Device, info: *const vk::SemaphoreWaitInfo<'_>, timeout: u64);
    DeviceWaitIdle = "vkDeviceWaitIdle" [0]: vk::PFN_vkDeviceWaitIdle = fn(d: vk::Device);
    GetMemoryFdKHR = "vkGetMemoryFdKHR" [0]: vk::PFN_vkGetMemoryFdKHR = fn(
        d: vk::Device, info: *const vk::MemoryGetFdInfoKHR<'_>, fd: *mut i32);
    GetMemoryFdPropertiesKHR = "vkGetMemoryFdPropertiesKHR" [0]: vk::PFN_vkGetMemoryFdPropertiesKHR = fn(
        d: vk::Device, handle_type: vk::ExternalMemoryHandleTypeFlags, fd: i32,
        out: *mut vk::MemoryFdPropertiesKHR<'_>);
    GetMemoryHostPointerPropertiesEXT = "vkGetMemoryHostPointerPropertiesEXT" [0]:
        vk::PFN_vkGetMemoryHostPointerPropertiesEXT = fn(
        d: vk::Device, handle_type: vk::ExternalMemoryHandleTypeFlags, ptr: *const c_void,
        out: *mut vk::MemoryHostPointerPropertiesEXT<'_>);
    GetSemaphoreFdKHR = "vkGetSemaphoreFdKHR" [0]: vk::PFN_vkGetSemaphoreFdKHR = fn(
        d: vk::Device, info: *const vk::SemaphoreGetFdInfoKHR<'_>, fd: *mut i32);
    ImportSemaphoreFdKHR = "vkImportSemaphoreFdKHR" [0]: vk::PFN_vkImportSemaphoreFdKHR = fn(
        d: vk::Device, info: *const vk::ImportSemaphoreFdInfoKHR<'_>);
    GetImageDrmFormatModifierPropertiesEXT = "vkGetImageDrmFormatModifierPropertiesEXT" [0]:
        vk::PFN_vkGetImageDrmFormatModifierPropertiesEXT = fn(
        d: vk::Device, image: vk::Image, out: *mut vk::ImageDrmFormatModifierPropertiesEXT<'_>);
    CreateShaderModule = "vkCreateShaderModule" [1]: vk::PFN_vkCreateShaderModule = fn(
        d: vk::Device, info: *const vk::ShaderModuleCreateInfo<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::ShaderModule);
    // keel-hal creates one pipeline a call, so a success counts one.
    CreateGraphicsPipelines = "vkCreateGraphicsPipelines" [1]: vk::PFN_vkCreateGraphicsPipelines = fn(
        d: vk::Device, cache: vk::PipelineCache, count: u32,
        infos: *const vk::GraphicsPipelineCreateInfo<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::Pipeline);
    CreateComputePipelines = "vkCreateComputePipelines" [1]: vk::PFN_vkCreateComputePipelines = fn(
        d: vk::Device, cache: vk::PipelineCache, count: u32,
        infos: *const vk::ComputePipelineCreateInfo<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::Pipeline);
    CreateDescriptorSetLayout = "vkCreateDescriptorSetLayout" [1]: vk::PFN_vkCreateDescriptorSetLayout = fn(
        d: vk::Device, info: *const vk::DescriptorSetLayoutCreateInfo<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::DescriptorSetLayout);
    CreateDescriptorPool = "vkCreateDescriptorPool" [1]: vk::PFN_vkCreateDescriptorPool = fn(
        d: vk::Device, info: *const vk::DescriptorPoolCreateInfo<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::DescriptorPool);
    AllocateDescriptorSets = "vkAllocateDescriptorSets" [0]: vk::PFN_vkAllocateDescriptorSets = fn(
        d: vk::Device, info: *const vk::DescriptorSetAllocateInfo<'_>, out: *mut vk::DescriptorSet);
    FreeDescriptorSets = "vkFreeDescriptorSets" [0]: vk::PFN_vkFreeDescriptorSets = fn(
        d: vk::Device, pool: vk::DescriptorPool, count: u32, sets: *const vk::DescriptorSet);
    CreatePipelineLayout = "vkCreatePipelineLayout" [1]: vk::PFN_vkCreatePipelineLayout = fn(
        d: vk::Device, info: *const vk::PipelineLayoutCreateInfo<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::PipelineLayout);
    // Ray-tracing pipelines: one a call, like the others (destroyed with vkDestroyPipeline).
    CreateRayTracingPipelinesKHR = "vkCreateRayTracingPipelinesKHR" [1]: vk::PFN_vkCreateRayTracingPipelinesKHR = fn(
        d: vk::Device, deferred: vk::DeferredOperationKHR, cache: vk::PipelineCache, count: u32,
        infos: *const vk::RayTracingPipelineCreateInfoKHR<'_>,
        alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::Pipeline);
    GetRayTracingShaderGroupHandlesKHR = "vkGetRayTracingShaderGroupHandlesKHR" [0]: vk::PFN_vkGetRayTracingShaderGroupHandlesKHR = fn(
        d: vk::Device, pipeline: vk::Pipeline, first: u32, count: u32, size: usize, out: *mut c_void);
}

/// Generates one hook per destroy or free command: it takes one off the
/// net create count when the object is not null, then forwards. Same
/// reasoning about the real pointers as for `hooks!`.
macro_rules! destroy_hooks {
    ($($module:ident = $name:literal ($handle:ident): $pfn:ty = fn($($arg:ident: $ty:ty),* $(,)?);)*) => {
        $(
            #[allow(non_snake_case)]
            mod $module {
                use super::*;
                use ash::vk::Handle as _;

                /// The real function, set when a table is built.
                pub(super) static REAL: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

                thread_local! {
                    /// Calls of this command made on this thread ([`calls`]).
                    pub(super) static CALLS: Cell<u64> = const { Cell::new(0) };
                }

                /// Counts the destroy and forwards it.
                ///
                /// # Safety
                /// Called by Vulkan users with the arguments of the real function.
                pub(super) unsafe extern "system" fn hook($($arg: $ty),*) {
                    let _ = CALLS.try_with(|c| c.set(c.get() + 1));
                    let real = REAL.load(Ordering::Acquire);
                    if real.is_null() {
                        // Never: the hook is only installed with its real pointer.
                        return;
                    }
                    if $handle.as_raw() != 0 {
                        note(-1);
                    }
                    // SAFETY: `REAL` only ever holds the loader's pointer for
                    // this very command, whose type is `$pfn`.
                    let real: $pfn = unsafe { std::mem::transmute::<*mut c_void, $pfn>(real) };
                    // SAFETY: forwarded contract.
                    unsafe { real($($arg),*) }
                }
            }
        )*

        /// This thread's call count of a destroy command, if it is hooked.
        fn calls_destroy(name: &str) -> Option<u64> {
            $(
                if name == $name {
                    return Some($module::CALLS.try_with(Cell::get).unwrap_or(0));
                }
            )*
            None
        }

        /// The hook of a destroy command, with the slot its real pointer goes in.
        fn lookup_destroy(name: &CStr) -> Option<(&'static AtomicPtr<c_void>, *const c_void)> {
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

destroy_hooks! {
    DestroyInstance = "vkDestroyInstance" (instance): vk::PFN_vkDestroyInstance = fn(
        instance: vk::Instance, alloc: *const vk::AllocationCallbacks<'_>);
    DestroyDevice = "vkDestroyDevice" (d): vk::PFN_vkDestroyDevice = fn(
        d: vk::Device, alloc: *const vk::AllocationCallbacks<'_>);
    DestroyBuffer = "vkDestroyBuffer" (buffer): vk::PFN_vkDestroyBuffer = fn(
        d: vk::Device, buffer: vk::Buffer, alloc: *const vk::AllocationCallbacks<'_>);
    DestroyImage = "vkDestroyImage" (image): vk::PFN_vkDestroyImage = fn(
        d: vk::Device, image: vk::Image, alloc: *const vk::AllocationCallbacks<'_>);
    FreeMemory = "vkFreeMemory" (memory): vk::PFN_vkFreeMemory = fn(
        d: vk::Device, memory: vk::DeviceMemory, alloc: *const vk::AllocationCallbacks<'_>);
    DestroyImageView = "vkDestroyImageView" (view): vk::PFN_vkDestroyImageView = fn(
        d: vk::Device, view: vk::ImageView, alloc: *const vk::AllocationCallbacks<'_>);
    DestroySampler = "vkDestroySampler" (sampler): vk::PFN_vkDestroySampler = fn(
        d: vk::Device, sampler: vk::Sampler, alloc: *const vk::AllocationCallbacks<'_>);
    DestroyQueryPool = "vkDestroyQueryPool" (pool): vk::PFN_vkDestroyQueryPool = fn(
        d: vk::Device, pool: vk::QueryPool, alloc: *const vk::AllocationCallbacks<'_>);
    DestroyAccelerationStructureKHR = "vkDestroyAccelerationStructureKHR" (structure): vk::PFN_vkDestroyAccelerationStructureKHR = fn(
        d: vk::Device, structure: vk::AccelerationStructureKHR, alloc: *const vk::AllocationCallbacks<'_>);
    DestroySemaphore = "vkDestroySemaphore" (semaphore): vk::PFN_vkDestroySemaphore = fn(
        d: vk::Device, semaphore: vk::Semaphore, alloc: *const vk::AllocationCallbacks<'_>);
    DestroyCommandPool = "vkDestroyCommandPool" (pool): vk::PFN_vkDestroyCommandPool = fn(
        d: vk::Device, pool: vk::CommandPool, alloc: *const vk::AllocationCallbacks<'_>);
    DestroyShaderModule = "vkDestroyShaderModule" (module): vk::PFN_vkDestroyShaderModule = fn(
        d: vk::Device, module: vk::ShaderModule, alloc: *const vk::AllocationCallbacks<'_>);
    DestroyPipeline = "vkDestroyPipeline" (pipeline): vk::PFN_vkDestroyPipeline = fn(
        d: vk::Device, pipeline: vk::Pipeline, alloc: *const vk::AllocationCallbacks<'_>);
    DestroyDescriptorSetLayout = "vkDestroyDescriptorSetLayout" (layout): vk::PFN_vkDestroyDescriptorSetLayout = fn(
        d: vk::Device, layout: vk::DescriptorSetLayout, alloc: *const vk::AllocationCallbacks<'_>);
    DestroyDescriptorPool = "vkDestroyDescriptorPool" (pool): vk::PFN_vkDestroyDescriptorPool = fn(
        d: vk::Device, pool: vk::DescriptorPool, alloc: *const vk::AllocationCallbacks<'_>);
    DestroyPipelineLayout = "vkDestroyPipelineLayout" (layout): vk::PFN_vkDestroyPipelineLayout = fn(
        d: vk::Device, layout: vk::PipelineLayout, alloc: *const vk::AllocationCallbacks<'_>);
}

/// The hook for a command name, with the slot its real pointer goes in.
fn lookup(name: &CStr) -> Option<(&'static AtomicPtr<c_void>, *const c_void)> {
    lookup_fallible(name).or_else(|| lookup_destroy(name))
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

/// Builds the instance's function table with hooks (`vkCreateDevice`,
/// `vkDestroyInstance`).
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

/// The address of a device-level command for an extension table (e.g.
/// `ash::khr::ray_tracing_pipeline::DeviceFn::load`): its hook where it has
/// one, else the loader's function. Loaded through `vkGetInstanceProcAddr`,
/// as [`wrap_device`] does, so the hooks' real pointers are the loader's
/// trampolines.
///
/// # Safety
/// `instance` is live and was made by `entry`; the command is used only
/// with devices of it.
pub(crate) unsafe fn device_proc_addr(
    entry: &ash::Entry,
    instance: &ash::Instance,
    name: &CStr,
) -> *const c_void {
    let handle = instance.handle();
    // SAFETY: forwarded contract; `name` is NUL-terminated.
    substitute(name, unsafe {
        entry.get_instance_proc_addr(handle, name.as_ptr())
    })
}

/// Builds a device's function table with hooks, loading every command
/// through `vkGetInstanceProcAddr` so that the stored real pointers are the
/// loader's handle-dispatching trampolines (valid for every device).
///
/// # Safety
/// `device` was created from `instance` (made by `entry`) and is live.
pub(crate) unsafe fn wrap_device(
    entry: &ash::Entry,
    instance: &ash::Instance,
    device: vk::Device,
) -> ash::Device {
    let handle = instance.handle();
    // SAFETY: as for `wrap_instance`; device-level commands obtained from
    // vkGetInstanceProcAddr are valid for every device of the instance.
    unsafe {
        ash::Device::load_with(
            |name| substitute(name, entry.get_instance_proc_addr(handle, name.as_ptr())),
            device,
        )
    }
}
