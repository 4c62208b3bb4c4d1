//! Counting the Vulkan calls that matter, on every side alike, measured
//! (never written down by hand).
//!
//! Every side's device function table sends `vkAllocateMemory`,
//! `vkFreeMemory`, `vkCreateQueryPool`, `vkDestroyQueryPool` and
//! `vkAllocateDescriptorSets` through the trampolines below, which count the
//! call and forward it to the loader; every other command goes straight to
//! the driver as usual. How each side gets such a table:
//!
//! - keel-hal: its instance is made with [`entry`], an `ash::Entry` whose
//!   `vkGetInstanceProcAddr` answers `vkGetDeviceProcAddr` (and the counted
//!   names) with ours, so every device table keel-hal loads — and the one
//!   VMA copies from it — counts
//!   (`keel_hal::vulkan::Instance::init_with_entry`).
//! - raw `ash`: the same [`entry`].
//! - wgpu-hal: the bench creates the `VkDevice` as wgpu-hal's `open` does
//!   and hands wgpu-hal a table from [`device`]
//!   (`wgpu_hal::vulkan::Adapter::device_from_raw`).
//!
//! The real functions are the loader's trampolines (looked up with
//! `vkGetInstanceProcAddr` on a live instance), which dispatch on the device
//! handle: one pointer serves every device of the process.
//!
//! Counts are process-wide atomics; [`Timer`] adds what happened between its
//! start and stop to [`take_timed`], so a sample reports the calls of its
//! timed region only (set-up outside the timing is not counted).

use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use ash::vk;

/// The counted calls (successful ones; frees and destroys of non-null handles).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counts {
    /// `vkAllocateMemory`.
    pub allocs: u64,
    /// `vkFreeMemory`.
    pub frees: u64,
    /// `vkCreateQueryPool`.
    pub query_pools: u64,
    /// `vkDestroyQueryPool`.
    pub query_pool_destroys: u64,
    /// `vkAllocateDescriptorSets` calls.
    pub set_allocs: u64,
}

impl Counts {
    /// The named numbers, in report order.
    pub const NAMES: [&'static str; 5] = [
        "vkAllocateMemory",
        "vkFreeMemory",
        "vkCreateQueryPool",
        "vkDestroyQueryPool",
        "vkAllocateDescriptorSets",
    ];

    /// The numbers in [`Counts::NAMES`] order.
    pub fn values(&self) -> [u64; 5] {
        [
            self.allocs,
            self.frees,
            self.query_pools,
            self.query_pool_destroys,
            self.set_allocs,
        ]
    }

    /// The calls of one cycle of a sample that ran `cycles` (at least 1),
    /// rounded up: a call made in any cycle shows.
    pub fn per_cycle(&self, cycles: u32) -> Counts {
        let c = u64::from(cycles.max(1));
        Counts {
            allocs: self.allocs.div_ceil(c),
            frees: self.frees.div_ceil(c),
            query_pools: self.query_pools.div_ceil(c),
            query_pool_destroys: self.query_pool_destroys.div_ceil(c),
            set_allocs: self.set_allocs.div_ceil(c),
        }
    }

    fn since(&self, earlier: &Counts) -> Counts {
        Counts {
            allocs: self.allocs - earlier.allocs,
            frees: self.frees - earlier.frees,
            query_pools: self.query_pools - earlier.query_pools,
            query_pool_destroys: self.query_pool_destroys - earlier.query_pool_destroys,
            set_allocs: self.set_allocs - earlier.set_allocs,
        }
    }

    /// Adds `other`'s calls to these.
    pub fn add(&mut self, other: &Counts) {
        self.allocs += other.allocs;
        self.frees += other.frees;
        self.query_pools += other.query_pools;
        self.query_pool_destroys += other.query_pool_destroys;
        self.set_allocs += other.set_allocs;
    }
}

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static FREES: AtomicU64 = AtomicU64::new(0);
static QUERY_POOLS: AtomicU64 = AtomicU64::new(0);
static QUERY_POOL_DESTROYS: AtomicU64 = AtomicU64::new(0);
static SET_ALLOCS: AtomicU64 = AtomicU64::new(0);

/// Everything counted so far in the process.
pub fn now() -> Counts {
    Counts {
        allocs: ALLOCS.load(Ordering::Relaxed),
        frees: FREES.load(Ordering::Relaxed),
        query_pools: QUERY_POOLS.load(Ordering::Relaxed),
        query_pool_destroys: QUERY_POOL_DESTROYS.load(Ordering::Relaxed),
        set_allocs: SET_ALLOCS.load(Ordering::Relaxed),
    }
}

/// The calls made inside [`Timer`]s since the last `take_timed`.
static TIMED: std::sync::Mutex<Counts> = std::sync::Mutex::new(Counts {
    allocs: 0,
    frees: 0,
    query_pools: 0,
    query_pool_destroys: 0,
    set_allocs: 0,
});

/// The calls made inside timed regions since the last call; resets them.
pub fn take_timed() -> Counts {
    TIMED
        .lock()
        .map(|mut t| std::mem::take(&mut *t))
        .unwrap_or_default()
}

/// A timed region: wall time and the counted calls inside it.
pub struct Timer {
    start: Instant,
    at: Counts,
}

impl Timer {
    /// Starts timing (and counting).
    pub fn start() -> Timer {
        let at = now();
        Timer {
            start: Instant::now(),
            at,
        }
    }

    /// Stops; the counted calls go to [`take_timed`].
    pub fn stop(self) -> Duration {
        let elapsed = self.start.elapsed();
        let delta = now().since(&self.at);
        if let Ok(mut t) = TIMED.lock() {
            t.add(&delta);
        }
        elapsed
    }
}

/// The loader's entry points and the real counted commands.
struct Real {
    get_device_proc_addr: vk::PFN_vkGetDeviceProcAddr,
    allocate_memory: vk::PFN_vkAllocateMemory,
    free_memory: vk::PFN_vkFreeMemory,
    create_query_pool: vk::PFN_vkCreateQueryPool,
    destroy_query_pool: vk::PFN_vkDestroyQueryPool,
    allocate_descriptor_sets: vk::PFN_vkAllocateDescriptorSets,
}

/// The system's Vulkan loader (kept loaded for the whole process).
static LOADER: OnceLock<Result<ash::Entry, String>> = OnceLock::new();
static REAL: OnceLock<Real> = OnceLock::new();

fn loader() -> Result<&'static ash::Entry, String> {
    LOADER
        // SAFETY: the system's Vulkan loader is a conforming one.
        .get_or_init(|| unsafe { ash::Entry::load() }.map_err(|e| format!("Vulkan loader: {e}")))
        .as_ref()
        .map_err(Clone::clone)
}

/// The real commands, looked up on `instance` (a live instance of the
/// system's loader) the first time.
fn real(instance: vk::Instance) -> Option<&'static Real> {
    if let Some(r) = REAL.get() {
        return Some(r);
    }
    let loader = loader().ok()?;
    let gipa = loader.static_fn().get_instance_proc_addr;
    // SAFETY: a live instance; each name is a device command, for which the
    // loader returns its trampoline, of that command's type.
    unsafe {
        let get = |name: &CStr| gipa(instance, name.as_ptr());
        let real = Real {
            get_device_proc_addr: std::mem::transmute::<
                unsafe extern "system" fn(),
                vk::PFN_vkGetDeviceProcAddr,
            >(get(c"vkGetDeviceProcAddr")?),
            allocate_memory: std::mem::transmute::<
                unsafe extern "system" fn(),
                vk::PFN_vkAllocateMemory,
            >(get(c"vkAllocateMemory")?),
            free_memory: std::mem::transmute::<unsafe extern "system" fn(), vk::PFN_vkFreeMemory>(
                get(c"vkFreeMemory")?,
            ),
            create_query_pool: std::mem::transmute::<
                unsafe extern "system" fn(),
                vk::PFN_vkCreateQueryPool,
            >(get(c"vkCreateQueryPool")?),
            destroy_query_pool: std::mem::transmute::<
                unsafe extern "system" fn(),
                vk::PFN_vkDestroyQueryPool,
            >(get(c"vkDestroyQueryPool")?),
            allocate_descriptor_sets: std::mem::transmute::<
                unsafe extern "system" fn(),
                vk::PFN_vkAllocateDescriptorSets,
            >(get(c"vkAllocateDescriptorSets")?),
        };
        let _ = REAL.set(real);
    }
    REAL.get()
}

/// Our trampoline for a counted device command, if `name` is one.
fn counted(name: &CStr) -> vk::PFN_vkVoidFunction {
    // SAFETY: only changes the pointer's type; callers call it with the
    // named command's signature, which is the trampoline's.
    unsafe {
        Some(match name.to_bytes() {
            b"vkAllocateMemory" => std::mem::transmute::<
                vk::PFN_vkAllocateMemory,
                unsafe extern "system" fn(),
            >(allocate_memory),
            b"vkFreeMemory" => std::mem::transmute::<
                vk::PFN_vkFreeMemory,
                unsafe extern "system" fn(),
            >(free_memory),
            b"vkCreateQueryPool" => std::mem::transmute::<
                vk::PFN_vkCreateQueryPool,
                unsafe extern "system" fn(),
            >(create_query_pool),
            b"vkDestroyQueryPool" => std::mem::transmute::<
                vk::PFN_vkDestroyQueryPool,
                unsafe extern "system" fn(),
            >(destroy_query_pool),
            b"vkAllocateDescriptorSets" => std::mem::transmute::<
                vk::PFN_vkAllocateDescriptorSets,
                unsafe extern "system" fn(),
            >(allocate_descriptor_sets),
            _ => return None,
        })
    }
}

/// An `ash::Entry` on the system's loader whose device tables count.
pub fn entry() -> Result<ash::Entry, String> {
    loader()?;
    let static_fn = ash::StaticFn {
        get_instance_proc_addr,
    };
    // SAFETY: `get_instance_proc_addr` forwards to the loader (loaded for
    // the rest of the process), substituting trampolines of the same types.
    Ok(unsafe { ash::Entry::from_static_fn(static_fn) })
}

/// A counting function table for `device`, a live device of `instance`.
///
/// # Safety
/// `device` was created from `instance`, an instance of the system's loader.
pub unsafe fn device(instance: &ash::Instance, device: vk::Device) -> Result<ash::Device, String> {
    real(instance.handle()).ok_or("the loader lacks a counted command")?;
    // SAFETY: the caller's contract; every pointer has the named command's type.
    Ok(unsafe {
        ash::Device::load_with(
            |name| {
                let f =
                    counted(name).or_else(|| instance.get_device_proc_addr(device, name.as_ptr()));
                f.map_or(std::ptr::null(), |f| f as *const c_void)
            },
            device,
        )
    })
}

unsafe extern "system" fn get_instance_proc_addr(
    instance: vk::Instance,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    let Ok(loader) = loader() else {
        return None;
    };
    if instance != vk::Instance::null() && !name.is_null() {
        // SAFETY: Vulkan passes a NUL-terminated name.
        let n = unsafe { CStr::from_ptr(name) };
        if real(instance).is_some() {
            if n == c"vkGetDeviceProcAddr" {
                // SAFETY: only changes the pointer's type (same signature).
                return Some(unsafe {
                    std::mem::transmute::<vk::PFN_vkGetDeviceProcAddr, unsafe extern "system" fn()>(
                        get_device_proc_addr,
                    )
                });
            }
            if let Some(f) = counted(n) {
                return Some(f);
            }
        }
    }
    // SAFETY: forwarded with the caller's arguments.
    unsafe { (loader.static_fn().get_instance_proc_addr)(instance, name) }
}

unsafe extern "system" fn get_device_proc_addr(
    device: vk::Device,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    if name.is_null() {
        return None;
    }
    // SAFETY: Vulkan passes a NUL-terminated name.
    let n = unsafe { CStr::from_ptr(name) };
    if let Some(f) = counted(n) {
        return Some(f);
    }
    let real = REAL.get()?;
    // SAFETY: forwarded with the caller's arguments.
    unsafe { (real.get_device_proc_addr)(device, name) }
}

unsafe extern "system" fn allocate_memory(
    device: vk::Device,
    info: *const vk::MemoryAllocateInfo<'_>,
    allocator: *const vk::AllocationCallbacks<'_>,
    memory: *mut vk::DeviceMemory,
) -> vk::Result {
    let Some(real) = REAL.get() else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    // SAFETY: forwarded with the caller's arguments.
    let r = unsafe { (real.allocate_memory)(device, info, allocator, memory) };
    if r == vk::Result::SUCCESS {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
    }
    r
}

unsafe extern "system" fn free_memory(
    device: vk::Device,
    memory: vk::DeviceMemory,
    allocator: *const vk::AllocationCallbacks<'_>,
) {
    let Some(real) = REAL.get() else {
        return;
    };
    if memory != vk::DeviceMemory::null() {
        FREES.fetch_add(1, Ordering::Relaxed);
    }
    // SAFETY: forwarded with the caller's arguments.
    unsafe { (real.free_memory)(device, memory, allocator) }
}

unsafe extern "system" fn create_query_pool(
    device: vk::Device,
    info: *const vk::QueryPoolCreateInfo<'_>,
    allocator: *const vk::AllocationCallbacks<'_>,
    pool: *mut vk::QueryPool,
) -> vk::Result {
    let Some(real) = REAL.get() else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    // SAFETY: forwarded with the caller's arguments.
    let r = unsafe { (real.create_query_pool)(device, info, allocator, pool) };
    if r == vk::Result::SUCCESS {
        QUERY_POOLS.fetch_add(1, Ordering::Relaxed);
    }
    r
}

unsafe extern "system" fn destroy_query_pool(
    device: vk::Device,
    pool: vk::QueryPool,
    allocator: *const vk::AllocationCallbacks<'_>,
) {
    let Some(real) = REAL.get() else {
        return;
    };
    if pool != vk::QueryPool::null() {
        QUERY_POOL_DESTROYS.fetch_add(1, Ordering::Relaxed);
    }
    // SAFETY: forwarded with the caller's arguments.
    unsafe { (real.destroy_query_pool)(device, pool, allocator) }
}

unsafe extern "system" fn allocate_descriptor_sets(
    device: vk::Device,
    info: *const vk::DescriptorSetAllocateInfo<'_>,
    sets: *mut vk::DescriptorSet,
) -> vk::Result {
    let Some(real) = REAL.get() else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    // SAFETY: forwarded with the caller's arguments.
    let r = unsafe { (real.allocate_descriptor_sets)(device, info, sets) };
    if r == vk::Result::SUCCESS {
        SET_ALLOCS.fetch_add(1, Ordering::Relaxed);
    }
    r
}
