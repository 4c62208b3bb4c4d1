//! Known driver bugs the hal absorbs, one row per workaround: which driver
//! (`VkDriverId`, PCI vendor id and a `driverVersion` range), what keel-hal
//! does about it, and why. The set that applies to an adapter is decided
//! once, when the adapter is exposed ([`Workarounds::for_driver`], from
//! `VkPhysicalDeviceDriverProperties` and the device properties), and kept
//! in its `PhysicalInfo`, so every device of it carries it.
//!
//! A workaround lives here only while the bug is the driver's; callers of
//! keel-hal never see it. Bugs outside the hal (a validation layer's, a
//! loader's) are not absorbed: the test harness names those where it works
//! around them.
//!
//! | workaround | driver | versions | what keel-hal does |
//! |---|---|---|---|
//! | [`Workarounds::SERIALIZE_DEVICE_LIFETIME`] | NVIDIA proprietary (vendor `0x10de`) | all (seen on 580.159) | one process-wide lock around `vkCreateRayTracingPipelinesKHR`, `vkDestroyPipeline` of a ray-tracing pipeline, `vkCreateDevice`, `vkDestroyDevice`, and (Linux) the driver's own destructor when a thread that called it exits |

use std::ops::RangeInclusive;

use parking_lot::lock_api::RawReentrantMutex;

use ash::vk;

bitflags::bitflags! {
    /// The driver workarounds an adapter needs.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub(crate) struct Workarounds: u32 {
        /// Serialise, process-wide, ray-tracing pipeline creation and
        /// destruction with the creation and destruction of devices: see
        /// [`TABLE`].
        const SERIALIZE_DEVICE_LIFETIME = 1 << 0;
    }
}

/// One known driver bug and what keel-hal does about it.
#[derive(Debug)]
pub(crate) struct Row {
    /// The workaround.
    pub(crate) workaround: Workarounds,
    /// The driver it applies to (`VkPhysicalDeviceDriverProperties::driverID`).
    pub(crate) driver: vk::DriverId,
    /// The PCI vendor id (`VkPhysicalDeviceProperties::vendorID`).
    pub(crate) vendor: u32,
    /// `VkPhysicalDeviceProperties::driverVersion` values it applies to,
    /// in the driver's own encoding ([`nvidia_version`] for NVIDIA).
    pub(crate) versions: RangeInclusive<u32>,
    /// What keel-hal does.
    pub(crate) what: &'static str,
    /// Why: the bug, where it was seen.
    pub(crate) why: &'static str,
}

/// PCI vendor id of NVIDIA.
const NVIDIA: u32 = 0x10de;

#[cfg(test)]
/// NVIDIA's `driverVersion` encoding: 10 bits major, 8 minor, 8
/// secondary, 6 tertiary (580.159 is `nvidia_version(580, 159)`); the tests use it.
pub(crate) const fn nvidia_version(major: u32, minor: u32) -> u32 {
    (major << 22) | (minor << 14)
}

/// Every known driver bug keel-hal works around.
pub(crate) const TABLE: &[Row] = &[Row {
    workaround: Workarounds::SERIALIZE_DEVICE_LIFETIME,
    driver: vk::DriverId::NVIDIA_PROPRIETARY,
    vendor: NVIDIA,
    // Seen on 580.159 (H200); no fixed version is known, so every version.
    versions: 0..=u32::MAX,
    what: "one process-wide lock held around vkCreateRayTracingPipelinesKHR, vkDestroyPipeline \
           of a ray-tracing pipeline, vkCreateDevice and vkDestroyDevice, and, on Linux, around \
           the driver's thread-specific-data destructor when a thread that called the driver \
           through keel-hal exits",
    why: "creating or destroying a ray-tracing pipeline on one device deadlocks with \
          vkCreateDevice or vkDestroyDevice of another device on another thread (NVIDIA \
          580.159 on an H200: the pipeline call holds the CUDA layer's lock and waits for the \
          driver's global one, device destruction holds them the other way round); and \
          vkDestroyDevice deadlocks with a thread exiting through the driver's destructor \
          (docs/nvidia-ray-tracing-hang.md §5)",
}];

impl Workarounds {
    /// The workarounds a driver needs: the union of the [`TABLE`] rows that
    /// match its id, vendor and version (each logged, with its reason).
    pub(crate) fn for_driver(driver: vk::DriverId, vendor: u32, version: u32) -> Self {
        TABLE
            .iter()
            .filter(|r| r.driver == driver && r.vendor == vendor && r.versions.contains(&version))
            .inspect(|r| {
                log::info!(
                    "vulkan: driver workaround for {driver:?} {version:#x}: {} (because {})",
                    r.what,
                    r.why
                )
            })
            .fold(Self::empty(), |acc, r| acc | r.workaround)
    }

    /// Holds the process-wide driver lock while the guard lives, when this
    /// set has [`Workarounds::SERIALIZE_DEVICE_LIFETIME`]; `None` (no lock)
    /// otherwise. Take it around `vkCreateRayTracingPipelinesKHR`,
    /// `vkDestroyPipeline` of a ray-tracing pipeline, `vkCreateDevice` and
    /// `vkDestroyDevice`. The lock is reentrant: a thread that holds it
    /// while it exits (see [`Workarounds::enter_driver`]) may still destroy
    /// devices from its remaining thread-local destructors.
    pub(crate) fn serialize_device_lifetime(self) -> Option<SerialGuard> {
        self.contains(Self::SERIALIZE_DEVICE_LIFETIME).then(|| {
            DRIVER_LOCK.lock();
            SerialGuard(std::marker::PhantomData)
        })
    }

    /// Call on every keel-hal entry that reaches the driver. With
    /// [`Workarounds::SERIALIZE_DEVICE_LIFETIME`] (Linux), the calling
    /// thread's exit then runs the driver's thread-specific-data destructor
    /// under the driver lock, so it never overlaps `vkDestroyDevice` on
    /// another thread: a thread-local guard takes the lock when the
    /// thread's thread-local destructors run (glibc runs them before any
    /// pthread key destructor), and a pthread key created after the
    /// driver's (that is, after a device exists) releases it in its own
    /// destructor, which glibc runs after the driver's (keys run in the
    /// order they were created). Costs one flag test elsewhere, and one
    /// thread-local access per call on that driver.
    #[inline]
    pub(crate) fn enter_driver(self) {
        if self.contains(Self::SERIALIZE_DEVICE_LIFETIME) {
            thread_exit::register();
        }
    }
}

/// The process-wide driver lock: the bug is between devices and threads.
/// Reentrant, so the thread that holds it at exit may still destroy devices.
static DRIVER_LOCK: RawReentrantMutex<parking_lot::RawMutex, parking_lot::RawThreadId> =
    RawReentrantMutex::INIT;

/// The driver lock, held until dropped (on the thread that took it: the
/// marker keeps the guard from being sent).
#[derive(Debug)]
pub(crate) struct SerialGuard(std::marker::PhantomData<*const ()>);

impl Drop for SerialGuard {
    fn drop(&mut self) {
        // SAFETY: made only by `serialize_device_lifetime`, which locked
        // once on this thread; the guard is not `Send` (below), so it is
        // dropped on the thread that locked.
        unsafe { DRIVER_LOCK.unlock() };
    }
}

#[cfg(target_os = "linux")]
mod thread_exit {
    use std::ffi::c_void;
    use std::sync::OnceLock;

    pub(super) use libc::{pthread_key_create, pthread_key_t, pthread_setspecific};

    /// The key whose destructor releases the lock (`None`: creation failed,
    /// and the thread-exit part of the workaround is off).
    static KEY: OnceLock<Option<pthread_key_t>> = OnceLock::new();

    /// The pthread key destructor: the driver's ran before it, under the lock.
    unsafe extern "C" fn release(_value: *mut c_void) {
        // SAFETY: the value is set only by `ExitGuard::drop` on this
        // (exiting) thread, right after it took the lock once.
        unsafe { super::DRIVER_LOCK.unlock() };
    }

    /// Takes the lock when the thread's thread-local destructors run.
    pub(super) struct ExitGuard;

    impl Drop for ExitGuard {
        fn drop(&mut self) {
            let Some(Some(key)) = KEY.get() else { return };
            super::DRIVER_LOCK.lock();
            // SAFETY: `key` is a live key of this process; a non-null
            // value makes glibc call `release` for this thread.
            if unsafe {
                pthread_setspecific(*key, std::ptr::NonNull::<u8>::dangling().as_ptr().cast())
            } != 0
            {
                // No destructor will run: release now.
                // SAFETY: locked just above, on this thread.
                unsafe { super::DRIVER_LOCK.unlock() };
            }
        }
    }

    thread_local! {
        static GUARD: ExitGuard = const { ExitGuard };
    }

    /// Makes the calling thread's exit take the lock (idempotent).
    pub(super) fn register() {
        KEY.get_or_init(|| {
            let mut key: pthread_key_t = 0;
            // SAFETY: `key` is a valid out-pointer; `release` has the
            // destructor signature.
            (unsafe { pthread_key_create(&mut key, Some(release)) } == 0).then_some(key)
        });
        // First access registers the guard's destructor for this thread;
        // after the thread's thread-locals are gone, there is nothing to do.
        let _ = GUARD.try_with(|_| ());
    }

    #[cfg(test)]
    pub(super) fn key() -> Option<pthread_key_t> {
        KEY.get().copied().flatten()
    }
}

#[cfg(not(target_os = "linux"))]
mod thread_exit {
    /// Elsewhere the driver's thread exit has not been seen to deadlock.
    pub(super) fn register() {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvidia_proprietary_drivers_serialise_device_lifetime() {
        let w = Workarounds::for_driver(
            vk::DriverId::NVIDIA_PROPRIETARY,
            NVIDIA,
            nvidia_version(580, 159),
        );
        assert_eq!(w, Workarounds::SERIALIZE_DEVICE_LIFETIME);
        let guard = w.serialize_device_lifetime();
        assert!(guard.is_some());
        drop(guard);
        // Older and newer versions too: no fixed version is known.
        for version in [nvidia_version(535, 0), nvidia_version(999, 255)] {
            assert_eq!(
                Workarounds::for_driver(vk::DriverId::NVIDIA_PROPRIETARY, NVIDIA, version),
                Workarounds::SERIALIZE_DEVICE_LIFETIME
            );
        }
    }

    #[test]
    fn other_drivers_need_nothing() {
        let v = nvidia_version(580, 159);
        // lavapipe, and Mesa's NVK on NVIDIA hardware: not the proprietary driver.
        assert_eq!(
            Workarounds::for_driver(vk::DriverId::MESA_LLVMPIPE, 0x10005, v),
            Workarounds::empty()
        );
        assert_eq!(
            Workarounds::for_driver(vk::DriverId::MESA_NVK, NVIDIA, v),
            Workarounds::empty()
        );
        // The proprietary id with another vendor (never seen) is not matched.
        assert_eq!(
            Workarounds::for_driver(vk::DriverId::NVIDIA_PROPRIETARY, 0x1002, v),
            Workarounds::empty()
        );
        assert!(Workarounds::empty().serialize_device_lifetime().is_none());
    }

    /// The guard is held while the destructor of a pthread key made before
    /// keel-hal's (the driver's, in real life) runs at thread exit, and
    /// released after: another thread can take the lock again.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_thread_exits_through_earlier_key_destructors_under_the_lock() {
        use std::ffi::c_void;
        use std::sync::atomic::{AtomicU8, Ordering};
        static SEEN: AtomicU8 = AtomicU8::new(0);
        unsafe extern "C" fn driver_destructor(_value: *mut c_void) {
            // 2: held by this thread; 1: not.
            let held = super::DRIVER_LOCK.is_owned_by_current_thread();
            SEEN.store(if held { 2 } else { 1 }, Ordering::SeqCst);
        }
        let mut driver_key = 0;
        // SAFETY: a valid out-pointer and destructor.
        assert_eq!(
            unsafe { thread_exit::pthread_key_create(&mut driver_key, Some(driver_destructor)) },
            0
        );
        let nvidia = Workarounds::SERIALIZE_DEVICE_LIFETIME;
        std::thread::spawn(move || {
            // The driver's data for this thread, then keel-hal's first call.
            // SAFETY: a live key; any non-null value.
            unsafe {
                thread_exit::pthread_setspecific(
                    driver_key,
                    &SEEN as *const AtomicU8 as *const c_void,
                )
            };
            nvidia.enter_driver();
            // The lock is not held while the thread lives.
            assert!(!super::DRIVER_LOCK.is_owned_by_current_thread());
        })
        .join()
        .expect("the thread exits");
        assert!(thread_exit::key().is_some_and(|k| k > driver_key));
        assert_eq!(
            SEEN.load(Ordering::SeqCst),
            2,
            "the driver's destructor ran under the lock"
        );
        // Released by keel-hal's key destructor: this thread can take it.
        assert!(
            super::DRIVER_LOCK.try_lock(),
            "the exiting thread released the lock"
        );
        // SAFETY: locked just above, on this thread.
        unsafe { super::DRIVER_LOCK.unlock() };
    }

    #[test]
    fn every_row_says_what_and_why() {
        for row in TABLE {
            assert!(!row.workaround.is_empty());
            assert!(!row.what.is_empty() && !row.why.is_empty());
            assert!(!row.versions.is_empty());
        }
    }
}
