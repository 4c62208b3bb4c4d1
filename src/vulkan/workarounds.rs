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
//! | [`Workarounds::SERIALIZE_DEVICE_LIFETIME`] | NVIDIA proprietary (vendor `0x10de`) | all (seen on 580.159) | one process-wide lock around `vkCreateRayTracingPipelinesKHR`, `vkDestroyPipeline` of a ray-tracing pipeline, `vkCreateDevice` and `vkDestroyDevice` |

use std::ops::RangeInclusive;
use std::sync::{Mutex, MutexGuard};

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
           of a ray-tracing pipeline, vkCreateDevice and vkDestroyDevice",
    why: "creating or destroying a ray-tracing pipeline on one device deadlocks with \
          vkCreateDevice or vkDestroyDevice of another device on another thread (NVIDIA \
          580.159 on an H200: the pipeline call holds the CUDA layer's lock and waits for the \
          driver's global one, device destruction holds them the other way round)",
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
    /// `vkDestroyDevice`, and around nothing that may take it again.
    pub(crate) fn serialize_device_lifetime(self) -> Option<MutexGuard<'static, ()>> {
        /// One lock for the process: the bug is between devices.
        static DRIVER_LOCK: Mutex<()> = Mutex::new(());
        self.contains(Self::SERIALIZE_DEVICE_LIFETIME)
            // A panic while held poisons nothing the lock protects (it
            // guards driver calls, not data).
            .then(|| DRIVER_LOCK.lock().unwrap_or_else(|e| e.into_inner()))
    }
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

    #[test]
    fn every_row_says_what_and_why() {
        for row in TABLE {
            assert!(!row.workaround.is_empty());
            assert!(!row.what.is_empty() && !row.why.is_empty());
            assert!(!row.versions.is_empty());
        }
    }
}
