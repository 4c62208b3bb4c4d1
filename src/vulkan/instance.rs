//! The Vulkan instance: loader, layers, instance creation with the debug
//! messenger (its messages: `validation.rs`; what it owns:
//! `instance_shared.rs`), adapter enumeration.
//!
//! keel-hal asks the loader for Vulkan 1.3. `VK_EXT_debug_utils` is enabled
//! wherever it exists (object names and command-buffer labels use it);
//! [`crate::InstanceFlags::VALIDATION`] adds `VK_LAYER_KHRONOS_validation`
//! and a messenger that routes every message to `log` and counts errors.
//! `VK_KHR_surface` and the window-system surface extensions are enabled
//! where the loader has them (see `surface.rs`); a headless system has none.

use std::ffi::CString;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use ash::vk;

use super::instance_shared::{has_extension, DebugUtils, InstanceShared, API_VERSION};
use super::validation::{
    messenger_create_info, MessengerState, ValidationCounter, VALIDATION_LAYER,
};
use crate::{ExposedAdapter, InstanceDescriptor, InstanceError, InstanceFlags};

/// A Vulkan instance.
#[derive(Debug)]
pub struct Instance {
    pub(crate) shared: Arc<InstanceShared>,
}

impl Instance {
    /// The raw `VkInstance`. The hal still owns it: do not destroy it.
    pub fn raw(&self) -> vk::Instance {
        self.shared.raw.handle()
    }

    /// Whether validation is on *and reported*: `VK_LAYER_KHRONOS_validation`
    /// is enabled and a debug messenger counts its errors. It is off when
    /// [`InstanceFlags::VALIDATION`] was not asked for, the layer is not
    /// installed, or `VK_EXT_debug_utils` is missing (a warning is logged
    /// then); tests that rely on validation should insist on this.
    pub fn validation_enabled(&self) -> bool {
        self.shared.validation
            && self
                .shared
                .debug_utils
                .as_ref()
                .is_some_and(|du| du.messenger != vk::DebugUtilsMessengerEXT::null())
    }

    /// Whether the validation layer's synchronization validation is on
    /// (hazards are reported, and counted, as errors): with
    /// [`InstanceFlags::VALIDATION`] unless
    /// [`InstanceFlags::NO_SYNC_VALIDATION`], where the layer has
    /// `VK_EXT_validation_features`.
    pub fn sync_validation_enabled(&self) -> bool {
        self.validation_enabled() && self.shared.sync_validation
    }

    /// The version (`specVersion`, a `VK_MAKE_API_VERSION` value) of the
    /// validation layer this instance enabled; `None` without validation.
    /// Callers use it to work around bugs of particular layer versions.
    pub fn validation_layer_version(&self) -> Option<u32> {
        let version = self
            .shared
            .messenger_state
            .layer_version
            .load(Ordering::Relaxed);
        (self.shared.validation && version != 0).then_some(version)
    }

    /// The validation-error counter, which stays readable after the
    /// instance and all its devices are dropped (so leaks reported at
    /// `vkDestroyDevice`/`vkDestroyInstance` are seen). Always 0 when
    /// [`Instance::validation_enabled`] is false.
    pub fn validation_counter(&self) -> ValidationCounter {
        ValidationCounter(self.shared.messenger_state.clone())
    }

    /// [`crate::Instance::init`] with the given Vulkan loader entry in place
    /// of the system's (`ash::Entry::load()`). Every function keel-hal (and
    /// its allocator) calls is looked up through `entry`'s
    /// `vkGetInstanceProcAddr`, so an entry that wraps the loader's can count
    /// or trace calls: the `bench/` crate counts `vkAllocateMemory` and
    /// `vkCreateQueryPool` this way.
    ///
    /// # Safety
    /// As for [`crate::Instance::init`]; besides, `entry`'s
    /// `vkGetInstanceProcAddr` is a Vulkan loader's or forwards to one, and
    /// every function it returns (or that the functions it returns return)
    /// has the Vulkan command's signature and behaviour.
    pub unsafe fn init_with_entry(
        desc: &InstanceDescriptor,
        entry: ash::Entry,
    ) -> Result<Self, InstanceError> {
        // SAFETY: `entry` is a loaded loader; this is a global command.
        let loader_version = match unsafe { entry.try_enumerate_instance_version() } {
            Ok(v) => v.unwrap_or(vk::API_VERSION_1_0),
            Err(e) => return Err(InstanceError::Device(super::conv::map_err(e))),
        };
        if loader_version < API_VERSION {
            return Err(InstanceError::NotAvailable(format!(
                "the Vulkan loader is {}.{}, keel-hal needs 1.3",
                vk::api_version_major(loader_version),
                vk::api_version_minor(loader_version)
            )));
        }

        // SAFETY: global commands on a loaded loader.
        let layers = unsafe { entry.enumerate_instance_layer_properties() }
            .map_err(|e| InstanceError::Device(super::conv::map_err(e)))?;
        // SAFETY: as above.
        let extensions = unsafe { entry.enumerate_instance_extension_properties(None) }
            .map_err(|e| InstanceError::Device(super::conv::map_err(e)))?;

        let want_validation = desc.flags.contains(InstanceFlags::VALIDATION);
        let layer_version = layers
            .iter()
            .find(|l| l.layer_name_as_c_str() == Ok(VALIDATION_LAYER))
            .map(|l| l.spec_version);
        let validation = want_validation && layer_version.is_some();
        if want_validation && !validation {
            log::warn!("validation asked for, but {VALIDATION_LAYER:?} is not installed");
        }
        let from_layer = if validation {
            // SAFETY: global command; the layer name is valid.
            unsafe { entry.enumerate_instance_extension_properties(Some(VALIDATION_LAYER)) }
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let debug_utils = has_extension(&extensions, ash::ext::debug_utils::NAME)
            || has_extension(&from_layer, ash::ext::debug_utils::NAME);
        // Synchronization validation, through VK_EXT_validation_features
        // (which both the 1.3 and the 1.4 layers implement).
        let sync_validation = validation
            && !desc.flags.contains(InstanceFlags::NO_SYNC_VALIDATION)
            && has_extension(&from_layer, ash::ext::validation_features::NAME);
        if validation && !desc.flags.contains(InstanceFlags::NO_SYNC_VALIDATION) && !sync_validation
        {
            log::warn!(
                "the validation layer lacks VK_EXT_validation_features: synchronization \
                 validation is off"
            );
        }
        if validation && !debug_utils {
            log::warn!(
                "validation asked for, but VK_EXT_debug_utils is missing: its messages \
                 cannot be counted"
            );
        }

        let mut layer_names = Vec::new();
        if validation {
            layer_names.push(VALIDATION_LAYER.as_ptr());
        }
        let mut extension_names = Vec::new();
        if debug_utils {
            extension_names.push(ash::ext::debug_utils::NAME.as_ptr());
        }
        if sync_validation {
            extension_names.push(ash::ext::validation_features::NAME.as_ptr());
        }
        let surface_extensions = super::instance_shared::SurfaceExtensions::wanted(&extensions);
        extension_names.extend(surface_extensions.iter().map(|name| name.as_ptr()));

        let app_name = CString::new(desc.name).unwrap_or_else(|_| c"keel-hal".to_owned());
        let app_info = vk::ApplicationInfo::default()
            .application_name(&app_name)
            .engine_name(c"keel-hal")
            .engine_version(vk::make_api_version(0, 0, 1, 0))
            .api_version(API_VERSION);

        let messenger_state = Arc::<MessengerState>::default();
        if validation {
            messenger_state
                .layer_version
                .store(layer_version.unwrap_or(0), Ordering::Relaxed);
        }
        let mut messenger_info = messenger_create_info(&messenger_state);
        let enabled_validation = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION];
        let mut validation_features =
            vk::ValidationFeaturesEXT::default().enabled_validation_features(&enabled_validation);
        let mut create_info = vk::InstanceCreateInfo::default()
            .application_info(&app_info)
            .enabled_layer_names(&layer_names)
            .enabled_extension_names(&extension_names);
        if debug_utils && validation {
            // Also catch messages from vkCreateInstance/vkDestroyInstance.
            create_info = create_info.push_next(&mut messenger_info);
        }
        if sync_validation {
            create_info = create_info.push_next(&mut validation_features);
        }

        // SAFETY: every pointer in `create_info` outlives the call.
        let created = unsafe { create_instance(&entry, &create_info) };
        let raw = created.map_err(|e| match e {
            vk::Result::ERROR_INCOMPATIBLE_DRIVER => {
                InstanceError::NotAvailable("no Vulkan 1.3 driver".into())
            }
            vk::Result::ERROR_LAYER_NOT_PRESENT | vk::Result::ERROR_EXTENSION_NOT_PRESENT => {
                InstanceError::MissingExtension(format!("{e:?}"))
            }
            other => InstanceError::Device(super::conv::map_err(other)),
        })?;
        #[cfg(feature = "fault-injection")]
        // SAFETY: `raw` was just created from `entry`.
        let raw = unsafe { super::fault::wrap_instance(&entry, raw.handle()) };

        // From here on, `shared`'s Drop destroys the instance on any error.
        let surface =
            super::instance_shared::SurfaceExtensions::load(&entry, &raw, &surface_extensions);
        let mut shared = InstanceShared {
            raw,
            debug_utils: None,
            surface,
            messenger_state,
            flags: desc.flags,
            api_version: API_VERSION,
            validation,
            sync_validation,
            entry,
        };
        if debug_utils {
            let fns = ash::ext::debug_utils::Instance::new(&shared.entry, &shared.raw);
            let mut messenger = vk::DebugUtilsMessengerEXT::null();
            if validation {
                let info = messenger_create_info(&shared.messenger_state);
                #[cfg(feature = "fault-injection")]
                if let Some(e) = super::fault::intercept() {
                    return Err(InstanceError::Device(super::conv::map_err(e)));
                }
                // SAFETY: the instance has debug utils enabled; the user data
                // (the shared state) lives as long as the instance.
                messenger = unsafe { fns.create_debug_utils_messenger(&info, None) }
                    .map_err(|e| InstanceError::Device(super::conv::map_err(e)))?;
                #[cfg(feature = "fault-injection")]
                super::fault::note(1);
            }
            shared.debug_utils = Some(DebugUtils { fns, messenger });
        }
        Ok(Instance {
            shared: Arc::new(shared),
        })
    }
}

impl crate::Instance for Instance {
    type A = super::Api;

    fn backend(&self) -> crate::Backend {
        crate::Backend::Vulkan
    }

    unsafe fn init(desc: &InstanceDescriptor) -> Result<Self, InstanceError> {
        // SAFETY: the caller vouches for the system's loader.
        let entry = unsafe { ash::Entry::load() }
            .map_err(|e| InstanceError::NotAvailable(format!("no Vulkan loader: {e}")))?;
        // SAFETY: the caller's contract; `entry` is the system's loader.
        unsafe { Self::init_with_entry(desc, entry) }
    }

    unsafe fn enumerate_adapters(&self) -> Vec<ExposedAdapter<super::Api>> {
        // SAFETY: live instance.
        let physical_devices = match unsafe { self.shared.raw.enumerate_physical_devices() } {
            Ok(list) => list,
            Err(e) => {
                log::warn!("vkEnumeratePhysicalDevices failed: {e:?}");
                return Vec::new();
            }
        };
        let mut exposed: Vec<_> = physical_devices
            .into_iter()
            // SAFETY: each handle was just enumerated from this instance.
            .filter_map(|pd| unsafe { super::adapter::expose(&self.shared, pd) })
            .collect();
        exposed.sort_by_key(|e| device_type_rank(e.info.device_type));
        exposed
    }

    fn validation_error_count(&self) -> u64 {
        self.shared.messenger_state.errors.load(Ordering::Relaxed)
    }

    unsafe fn create_surface(
        &self,
        display: raw_window_handle::RawDisplayHandle,
        window: raw_window_handle::RawWindowHandle,
    ) -> Result<super::Surface, InstanceError> {
        // SAFETY: forwarded contract.
        unsafe { super::surface::create_surface(&self.shared, display, window) }
    }

    unsafe fn destroy_surface(&self, surface: super::Surface) {
        // SAFETY: forwarded contract.
        unsafe { super::surface::destroy_surface(&self.shared, surface) }
    }
}

/// `vkCreateInstance` (an injection point with the feature `fault-injection`).
///
/// # Safety
/// Every pointer in `info` is valid for the call.
unsafe fn create_instance(
    entry: &ash::Entry,
    info: &vk::InstanceCreateInfo<'_>,
) -> Result<ash::Instance, vk::Result> {
    #[cfg(feature = "fault-injection")]
    if let Some(e) = super::fault::intercept() {
        return Err(e);
    }
    // SAFETY: forwarded contract.
    let instance = unsafe { entry.create_instance(info, None) }?;
    #[cfg(feature = "fault-injection")]
    super::fault::note(1);
    Ok(instance)
}

/// Order of preference: discrete, integrated, virtual, CPU, other.
fn device_type_rank(ty: wgt::DeviceType) -> u8 {
    match ty {
        wgt::DeviceType::DiscreteGpu => 0,
        wgt::DeviceType::IntegratedGpu => 1,
        wgt::DeviceType::VirtualGpu => 2,
        wgt::DeviceType::Cpu => 3,
        wgt::DeviceType::Other => 4,
    }
}
