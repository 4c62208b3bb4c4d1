//! What a Vulkan instance owns, shared by the instance, its adapters and
//! devices ([`InstanceShared`]): the loader, the instance's function table,
//! debug utils and its messenger, the surface extension functions
//! ([`SurfaceExtensions`]); and the
//! notes of bound memory, read semaphore values and external images that the
//! validation allow-list reads (kept only with validation on).

use std::ffi::CStr;
use std::sync::Arc;

use ash::vk;

use super::validation::{Binding, MessengerState, NewerExtension};
use crate::InstanceFlags;

/// The Vulkan version keel-hal requests and requires.
pub(crate) const API_VERSION: u32 = vk::API_VERSION_1_3;

/// `VK_EXT_debug_utils` at instance level, and the messenger if validation is on.
pub(crate) struct DebugUtils {
    pub(crate) fns: ash::ext::debug_utils::Instance,
    pub(crate) messenger: vk::DebugUtilsMessengerEXT,
}

/// What a Vulkan instance owns; shared by the instance, its adapters and devices.
pub(crate) struct InstanceShared {
    /// Function table of the instance (wrapped by fault injection when that is on).
    pub(crate) raw: ash::Instance,
    /// `VK_EXT_debug_utils`, when the loader has it.
    pub(crate) debug_utils: Option<DebugUtils>,
    /// `VK_KHR_surface` and the window-system extensions, when the loader has them.
    pub(crate) surface: Option<SurfaceExtensions>,
    /// Messenger state, at a stable address the callback's pointer names;
    /// shared with [`ValidationCounter`]s, so it outlives the instance.
    pub(crate) messenger_state: Arc<MessengerState>,
    /// The flags the instance was created with.
    pub(crate) flags: InstanceFlags,
    /// The `apiVersion` the instance was created with.
    pub(crate) api_version: u32,
    /// Whether `VK_LAYER_KHRONOS_validation` is enabled.
    pub(crate) validation: bool,
    /// Whether its synchronization validation is on.
    pub(crate) sync_validation: bool,
    /// The loader. Declared last: it must outlive the instance.
    pub(crate) entry: ash::Entry,
}

impl std::fmt::Debug for InstanceShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InstanceShared")
            .field("raw", &self.raw.handle())
            .field("flags", &self.flags)
            .field("validation", &self.validation)
            .finish_non_exhaustive()
    }
}

impl Drop for InstanceShared {
    fn drop(&mut self) {
        // SAFETY: every adapter and device holds an `Arc` to this, so none is
        // alive; the messenger was created from this instance and goes first.
        unsafe {
            if let Some(du) = &self.debug_utils {
                if du.messenger != vk::DebugUtilsMessengerEXT::null() {
                    du.fns.destroy_debug_utils_messenger(du.messenger, None);
                    #[cfg(feature = "fault-injection")]
                    super::fault::note(-1);
                }
            }
            self.raw.destroy_instance(None);
        }
    }
}

/// Whether `name` is among the extension properties.
pub(crate) fn has_extension(list: &[vk::ExtensionProperties], name: &CStr) -> bool {
    list.iter().any(|e| e.extension_name_as_c_str() == Ok(name))
}

impl InstanceShared {
    /// Notes where a buffer's or image's memory is bound (`Some`), or that
    /// the object is about to be destroyed (`None`), for the allow-list's
    /// [`Scope::ImageWithABufferAfter`]. Nothing is kept without validation.
    #[inline]
    pub(crate) fn note_binding(&self, object: u64, binding: Option<Binding>) {
        if !self.validation {
            return;
        }
        let mut bindings = self.messenger_state.bindings.lock();
        match binding {
            Some(binding) => {
                bindings.insert(object, binding);
            }
            None => {
                bindings.remove(&object);
            }
        }
    }

    /// Notes a value the host read from a timeline semaphore (or waited for
    /// on it): `Some(value)`; `None` when the semaphore is destroyed. For
    /// [`Scope::HostReadSemaphoreValue`]; nothing is kept without validation.
    pub(crate) fn note_semaphore_read(&self, semaphore: vk::Semaphore, value: Option<u64>) {
        /// Values kept per semaphore: the layer's orphaned signal is the
        /// last read before a host signal.
        const KEPT: usize = 8;
        if !self.validation {
            return;
        }
        let raw = ash::vk::Handle::as_raw(semaphore);
        let mut reads = self.messenger_state.semaphore_reads.lock();
        match value {
            Some(value) => {
                let values = reads.entry(raw).or_default();
                if values.len() == KEPT {
                    values.remove(0);
                }
                values.push(value);
            }
            None => {
                reads.remove(&raw);
            }
        }
    }

    /// Notes a device opened with the [`NewerExtension`]s whose features
    /// `features` holds (`live`), or about to be destroyed (every entry of
    /// it goes), for the allow-list's [`Scope::DeviceWith`]. Nothing is
    /// kept without validation.
    pub(crate) fn note_newer_extension_device(
        &self,
        device: vk::Device,
        features: wgt::Features,
        live: bool,
    ) {
        if !self.validation {
            return;
        }
        let raw = ash::vk::Handle::as_raw(device);
        let mut devices = self.messenger_state.newer_extension_devices.lock();
        if live {
            devices.extend(
                NewerExtension::ALL
                    .iter()
                    .filter(|(_, feature)| features.contains(*feature))
                    .map(|&(extension, _)| (raw, extension)),
            );
        } else {
            devices.retain(|&(d, _)| d != raw);
        }
    }

    /// Notes that an image with external memory was made (`live`) or is
    /// about to be destroyed, for the allow-list's [`Scope::ExternalImage`].
    /// Nothing is kept without validation.
    pub(crate) fn note_external_image(&self, image: vk::Image, live: bool) {
        if !self.validation {
            return;
        }
        let raw = ash::vk::Handle::as_raw(image);
        let mut images = self.messenger_state.external_images.lock();
        if live {
            images.push(raw);
        } else {
            images.retain(|&i| i != raw);
        }
    }
}

/// The window-system surface extensions keel-hal can create surfaces with.
const WINDOW_SYSTEM_EXTENSIONS: [&CStr; 3] = [
    ash::khr::xlib_surface::NAME,
    ash::khr::xcb_surface::NAME,
    ash::khr::wayland_surface::NAME,
];

/// Surface-related instance functions, for the extensions that were enabled.
pub(crate) struct SurfaceExtensions {
    /// `VK_KHR_surface`.
    pub(crate) surface: ash::khr::surface::Instance,
    pub(crate) xlib: Option<ash::khr::xlib_surface::Instance>,
    pub(crate) xcb: Option<ash::khr::xcb_surface::Instance>,
    pub(crate) wayland: Option<ash::khr::wayland_surface::Instance>,
}

impl std::fmt::Debug for SurfaceExtensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SurfaceExtensions")
            .field("xlib", &self.xlib.is_some())
            .field("xcb", &self.xcb.is_some())
            .field("wayland", &self.wayland.is_some())
            .finish_non_exhaustive()
    }
}

impl SurfaceExtensions {
    /// The instance extensions to enable: `VK_KHR_surface` and every
    /// window-system extension the loader offers; none without `VK_KHR_surface`.
    pub(crate) fn wanted(available: &[vk::ExtensionProperties]) -> Vec<&'static CStr> {
        if !has_extension(available, ash::khr::surface::NAME) {
            return Vec::new();
        }
        std::iter::once(ash::khr::surface::NAME)
            .chain(
                WINDOW_SYSTEM_EXTENSIONS
                    .into_iter()
                    .filter(|name| has_extension(available, name)),
            )
            .collect()
    }

    /// Loads the functions of the `enabled` extensions (those of
    /// [`SurfaceExtensions::wanted`]); `None` when `VK_KHR_surface` is not among them.
    pub(crate) fn load(
        entry: &ash::Entry,
        instance: &ash::Instance,
        enabled: &[&CStr],
    ) -> Option<Self> {
        let on = |name: &CStr| enabled.contains(&name);
        if !on(ash::khr::surface::NAME) {
            return None;
        }
        Some(Self {
            surface: ash::khr::surface::Instance::new(entry, instance),
            xlib: on(ash::khr::xlib_surface::NAME)
                .then(|| ash::khr::xlib_surface::Instance::new(entry, instance)),
            xcb: on(ash::khr::xcb_surface::NAME)
                .then(|| ash::khr::xcb_surface::Instance::new(entry, instance)),
            wayland: on(ash::khr::wayland_surface::NAME)
                .then(|| ash::khr::wayland_surface::Instance::new(entry, instance)),
        })
    }
}
