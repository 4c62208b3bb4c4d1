//! The Vulkan instance: loader, layers, the debug messenger, adapter enumeration.
//!
//! keel-hal asks the loader for Vulkan 1.3. `VK_EXT_debug_utils` is enabled
//! wherever it exists (object names and command-buffer labels use it);
//! [`crate::InstanceFlags::VALIDATION`] adds `VK_LAYER_KHRONOS_validation`
//! and a messenger that routes every message to `log` and counts errors.
//! `VK_KHR_surface` and the window-system surface extensions are enabled
//! where the loader has them (see `surface.rs`); a headless system has none.

use std::ffi::{c_void, CStr, CString};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ash::vk;

use crate::{ExposedAdapter, InstanceDescriptor, InstanceError, InstanceFlags};

/// The Vulkan version keel-hal requests and requires.
pub(crate) const API_VERSION: u32 = vk::API_VERSION_1_3;

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// Validation messages that are not counted as errors: the allow-list.
///
/// Two layers are run against keel-hal: Debian 12's (1.3.239), two years
/// older than the driver (lavapipe 25, Vulkan 1.4), and Debian 13's
/// (1.4.309). Each can report as errors things it does not know or cannot
/// know. An entry is added only for such a false report, keyed by the
/// message's id name or its id number (as text), with the layer versions
/// it applies to, the narrowest scope it is ignored in, and the reason.
/// Ignored messages are still logged, at `debug` level.
const IGNORED_VALIDATION_MESSAGES: &[Ignored] = &[
    Ignored {
        id: "UNASSIGNED-CoreValidation-DrawState-InvalidImageLayout",
        layers: LayerRange::Before(vk::make_api_version(0, 1, 4, 304)),
        scope: Scope::ExternalImage,
        reason: "The layer tracks every VkImage's layout from its creation (UNDEFINED) and \
                 checks the first layout each submitted command buffer expects against it. The \
                 memory of an image with external memory may have been written and left in \
                 another layout by another device, API or process, which the layer cannot see: \
                 the VK_QUEUE_FAMILY_EXTERNAL acquire barrier then names that layout as its \
                 oldLayout, as the specification requires for the contents to be kept, and this \
                 layer reports it against its own UNDEFINED. Layers since December 2024 skip \
                 this check for images with external memory (Vulkan-ValidationLayers #8940, \
                 fixed by #8960, in 1.4.304); the entry does the same, and only for images \
                 keel-hal created or imported with external memory (the message names the \
                 VkImage).",
    },
    Ignored {
        id: "VUID-vkCmdCopyBufferToImage-pRegions-00173",
        layers: LayerRange::Any,
        scope: Scope::ImageWithABufferAfter,
        reason: "The layer reports an overlap between a copy's buffer and image when the buffer \
                 is bound right after the image in the same VkDeviceMemory: it measures the \
                 image's footprint past its bound size (Vulkan-ValidationLayers #9276, #9537; \
                 seen with 1.4.309). The message names the image only. Ignored only when \
                 keel-hal bound that image, no object keel-hal bound overlaps the image's \
                 range [offset, offset + size), and an object is bound after it in the same \
                 memory, so a real overlap is still an error.",
    },
    Ignored {
        id: "VUID-VkSemaphoreSignalInfo-value-03259",
        layers: LayerRange::Before(vk::make_api_version(0, 1, 3, 296)),
        scope: Scope::HostReadSemaphoreValue,
        reason: "Layers before August 2024 record a value read by vkGetSemaphoreCounterValue \
                 or reached by vkWaitSemaphores as a signal operation still pending (an \
                 'orphaned signal', Vulkan-ValidationLayers #8212, fixed by #8396), so a later \
                 vkSignalSemaphore above that value is reported as not below a pending signal. \
                 keel-hal's host signal reads the value first (to refuse values that do not \
                 increase), so every host signal of a timeline semaphore met it (seen with \
                 1.3.239 on NVIDIA). Ignored only when the 'pending' value the message names \
                 is one the host read from that semaphore through keel-hal.",
    },
    // VK_KHR_ray_tracing_position_fetch (EXPERIMENTAL_RAY_HIT_VERTEX_RETURN)
    // came with Vulkan headers 1.3.250; Debian 12's layer (1.3.239) knows
    // none of it and reports each use as invalid, although the driver
    // exposes the extension and keel-hal enabled it. Five entries, each for
    // that layer only and only for the extension's own structure, flag,
    // SPIR-V capability or SPIR-V extension.
    Ignored {
        id: "VUID-VkDeviceCreateInfo-pNext-pNext",
        layers: BEFORE_POSITION_FETCH,
        scope: Scope::MessageNames("unknown VkStructureType (1000481000)"),
        reason: "VkPhysicalDeviceRayTracingPositionFetchFeaturesKHR (1000481000) in \
                 vkCreateDevice's pNext chain is reported as an unknown structure: the layer's \
                 headers predate the extension that defines it.",
    },
    Ignored {
        id: "VUID-VkAccelerationStructureBuildGeometryInfoKHR-flags-parameter",
        layers: BEFORE_POSITION_FETCH,
        scope: Scope::DeviceWith(
            NewerExtension::PositionFetch,
            "not recognized members of VkBuildAccelerationStructureFlagBitsKHR",
        ),
        reason: "VK_BUILD_ACCELERATION_STRUCTURE_ALLOW_DATA_ACCESS_BIT_KHR, the extension's \
                 build flag, unknown to the layer; only on a device keel-hal opened with the \
                 extension.",
    },
    Ignored {
        id: "UNASSIGNED-CoreValidation-Shader-InconsistentSpirv",
        layers: BEFORE_POSITION_FETCH,
        scope: Scope::MessageNames("Invalid capability operand: 5391"),
        reason: "SPIR-V capability RayQueryPositionFetchKHR (5391), which naga declares for \
                 getCommittedHitVertexPositions, is unknown to the layer's SPIR-V validator.",
    },
    Ignored {
        id: "VUID-VkShaderModuleCreateInfo-pCode-01090",
        layers: BEFORE_POSITION_FETCH,
        scope: Scope::DeviceWith(NewerExtension::PositionFetch, "Unhandled OpCapability"),
        reason: "The same RayQueryPositionFetchKHR capability, reported again by the layer as \
                 an unhandled capability it cannot name; only on a device keel-hal opened with \
                 the extension.",
    },
    Ignored {
        id: "VUID-VkShaderModuleCreateInfo-pCode-04146",
        layers: BEFORE_POSITION_FETCH,
        scope: Scope::MessageNames("(SPV_KHR_ray_tracing_position_fetch)"),
        reason: "SPV_KHR_ray_tracing_position_fetch, the SPIR-V extension naga declares with \
                 the capability, is reported as not supported by Vulkan: the layer predates it.",
    },
    // VK_KHR_cooperative_matrix (EXPERIMENTAL_COOPERATIVE_MATRIX) came with
    // Vulkan headers 1.3.255; Debian 12's layer (1.3.239) knows none of it.
    // Four entries, each for that layer only and only for the extension's
    // own structure, SPIR-V capability or SPIR-V extension.
    Ignored {
        id: "VUID-VkDeviceCreateInfo-pNext-pNext",
        layers: BEFORE_COOPERATIVE_MATRIX,
        scope: Scope::MessageNames("unknown VkStructureType (1000506000)"),
        reason: "VkPhysicalDeviceCooperativeMatrixFeaturesKHR (1000506000) in vkCreateDevice's \
                 pNext chain is reported as an unknown structure: the layer's headers predate \
                 the extension that defines it.",
    },
    Ignored {
        id: "UNASSIGNED-CoreValidation-Shader-InconsistentSpirv",
        layers: BEFORE_COOPERATIVE_MATRIX,
        scope: Scope::MessageNames("Invalid capability operand: 6022"),
        reason: "SPIR-V capability CooperativeMatrixKHR (6022), which naga declares for \
                 cooperative matrices, is unknown to the layer's SPIR-V validator.",
    },
    Ignored {
        id: "VUID-VkShaderModuleCreateInfo-pCode-01090",
        layers: BEFORE_COOPERATIVE_MATRIX,
        scope: Scope::DeviceWith(NewerExtension::CooperativeMatrix, "Unhandled OpCapability"),
        reason: "The same CooperativeMatrixKHR capability, reported again by the layer as an \
                 unhandled capability it cannot name; only on a device keel-hal opened with \
                 the extension.",
    },
    Ignored {
        id: "VUID-VkShaderModuleCreateInfo-pCode-04146",
        layers: BEFORE_COOPERATIVE_MATRIX,
        scope: Scope::MessageNames("(SPV_KHR_cooperative_matrix)"),
        reason: "SPV_KHR_cooperative_matrix, the SPIR-V extension declared with the \
                 capability, is reported as not supported by Vulkan: the layer predates it.",
    },
    Ignored {
        id: "VUID-vkCmdCopyImageToBuffer-pRegions-00184",
        layers: LayerRange::Any,
        scope: Scope::ImageWithABufferAfter,
        reason: "The same false overlap as VUID-vkCmdCopyBufferToImage-pRegions-00173, for \
                 copies from an image into a buffer bound right after it (#9276, #9537).",
    },
];

/// Layers older than `VK_KHR_ray_tracing_position_fetch` (headers 1.3.250).
const BEFORE_POSITION_FETCH: LayerRange = LayerRange::Before(vk::make_api_version(0, 1, 3, 250));
/// Layers older than `VK_KHR_cooperative_matrix` (headers 1.3.255).
const BEFORE_COOPERATIVE_MATRIX: LayerRange =
    LayerRange::Before(vk::make_api_version(0, 1, 3, 255));

/// Device extensions newer than the oldest layer keel-hal is tested
/// under: the allow-list's [`Scope::DeviceWith`] names devices opened with
/// one of them.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum NewerExtension {
    /// `VK_KHR_ray_tracing_position_fetch` (`EXPERIMENTAL_RAY_HIT_VERTEX_RETURN`).
    PositionFetch,
    /// `VK_KHR_cooperative_matrix` (`EXPERIMENTAL_COOPERATIVE_MATRIX`).
    CooperativeMatrix,
}

impl NewerExtension {
    /// Every one, with the feature that enables it.
    pub(crate) const ALL: [(Self, wgt::Features); 2] = [
        (
            Self::PositionFetch,
            wgt::Features::EXPERIMENTAL_RAY_HIT_VERTEX_RETURN,
        ),
        (
            Self::CooperativeMatrix,
            wgt::Features::EXPERIMENTAL_COOPERATIVE_MATRIX,
        ),
    ];
}

/// One allow-list entry.
struct Ignored {
    /// The message's id name, or its id number as text.
    id: &'static str,
    /// The layer versions (the layer's `specVersion`) the entry applies to.
    layers: LayerRange,
    /// Which messages of that id are ignored.
    scope: Scope,
    /// Why the layer is wrong about them.
    reason: &'static str,
}

/// Layer versions an allow-list entry applies to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum LayerRange {
    /// Every version.
    Any,
    /// Versions older than this one, which fixed the false report.
    Before(u32),
}

impl LayerRange {
    fn contains(self, version: u32) -> bool {
        match self {
            LayerRange::Any => true,
            LayerRange::Before(fixed) => version < fixed,
        }
    }
}

/// Which messages of an allow-listed id are ignored.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Scope {
    /// Only those naming a `VkImage` keel-hal made with external memory.
    ExternalImage,
    /// Only those naming one `VkSemaphore` whose "pending signal operation
    /// (N)" is a value N the host read from it through keel-hal.
    HostReadSemaphoreValue,
    /// Only those naming one `VkImage` whose memory keel-hal bound, with no
    /// object keel-hal bound overlapping it and another object bound after
    /// it in the same `VkDeviceMemory`.
    ImageWithABufferAfter,
    /// Only those whose text contains this (naming what the layer does not
    /// know: a structure type, a SPIR-V capability or extension).
    MessageNames(&'static str),
    /// Only those whose text contains this and that name a device keel-hal
    /// opened with this extension.
    DeviceWith(NewerExtension, &'static str),
}

/// Where an object's memory is bound: `(VkDeviceMemory, offset, size)`.
pub(crate) type Binding = (u64, u64, u64);

/// State the debug messenger's callback reads, at a stable address.
#[derive(Debug, Default)]
pub(crate) struct MessengerState {
    /// ERROR-severity messages seen (not counting ignored ones).
    errors: AtomicU64,
    /// Raw handles of live images with external memory (kept only with
    /// validation on), for [`Scope::ExternalImage`].
    external_images: parking_lot::Mutex<Vec<u64>>,
    /// Memory bindings of live buffers and images keel-hal bound (kept only
    /// with validation on), for [`Scope::ImageWithABufferAfter`].
    bindings: parking_lot::Mutex<std::collections::HashMap<u64, Binding>>,
    /// Values the host read from (or waited for on) each timeline
    /// semaphore keel-hal made, the last few per semaphore (kept only with
    /// validation on), for [`Scope::HostReadSemaphoreValue`].
    semaphore_reads: parking_lot::Mutex<std::collections::HashMap<u64, Vec<u64>>>,
    /// Devices opened with a [`NewerExtension`], one element per extension
    /// (kept only with validation on), for [`Scope::DeviceWith`].
    newer_extension_devices: parking_lot::Mutex<Vec<(u64, NewerExtension)>>,
    /// The validation layer's `specVersion`, for [`LayerRange`]; 0 when
    /// validation is off.
    layer_version: std::sync::atomic::AtomicU32,
}

/// The validation-error count of an instance, readable after the instance
/// is gone: messages sent while `vkDestroyInstance` runs (objects a device
/// leaked, reported when the device or instance is destroyed) are counted
/// too. Cheap to clone; every clone reads the same count.
#[derive(Clone, Debug)]
pub struct ValidationCounter(Arc<MessengerState>);

impl ValidationCounter {
    /// ERROR-severity validation messages so far (allow-listed ones not counted).
    pub fn errors(&self) -> u64 {
        self.0.errors.load(Ordering::Relaxed)
    }
}

/// `VK_EXT_debug_utils` at instance level, and the messenger if validation is on.
pub(crate) struct DebugUtils {
    pub(crate) fns: ash::ext::debug_utils::Instance,
    messenger: vk::DebugUtilsMessengerEXT,
}

/// What a Vulkan instance owns; shared by the instance, its adapters and devices.
pub(crate) struct InstanceShared {
    /// Function table of the instance (wrapped by fault injection when that is on).
    pub(crate) raw: ash::Instance,
    /// `VK_EXT_debug_utils`, when the loader has it.
    pub(crate) debug_utils: Option<DebugUtils>,
    /// `VK_KHR_surface` and the window-system extensions, when the loader has them.
    pub(crate) surface: Option<super::surface::SurfaceExtensions>,
    /// Messenger state, at a stable address the callback's pointer names;
    /// shared with [`ValidationCounter`]s, so it outlives the instance.
    messenger_state: Arc<MessengerState>,
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
        let surface_extensions = super::surface::SurfaceExtensions::wanted(&extensions);
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
        let surface = super::surface::SurfaceExtensions::load(&entry, &raw, &surface_extensions);
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

/// Whether `name` is among the extension properties.
pub(crate) fn has_extension(list: &[vk::ExtensionProperties], name: &CStr) -> bool {
    list.iter().any(|e| e.extension_name_as_c_str() == Ok(name))
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

/// The messenger description: every severity and type, to [`debug_callback`].
fn messenger_create_info(state: &MessengerState) -> vk::DebugUtilsMessengerCreateInfoEXT<'static> {
    let user_data = std::ptr::from_ref(state).cast_mut().cast::<c_void>();
    vk::DebugUtilsMessengerCreateInfoEXT::default()
        .message_severity(
            vk::DebugUtilsMessageSeverityFlagsEXT::VERBOSE
                | vk::DebugUtilsMessageSeverityFlagsEXT::INFO
                | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
        )
        .message_type(
            vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
        )
        .pfn_user_callback(Some(debug_callback))
        .user_data(user_data)
}

/// Whether a message is on the allow-list: its id (name or number) is, the
/// layer's version is in the entry's range, and the message falls in the
/// entry's scope (`objects` are the handles the message names).
fn is_ignored(
    id_name: &str,
    id_number: i32,
    message: &str,
    objects: &[(vk::ObjectType, u64)],
    state: Option<&MessengerState>,
) -> Option<&'static Ignored> {
    let state = state?;
    let layer = state.layer_version.load(Ordering::Relaxed);
    IGNORED_VALIDATION_MESSAGES.iter().find(|entry| {
        let id = entry.id == id_name || entry.id.parse::<i32>().ok() == Some(id_number);
        id && entry.layers.contains(layer)
            && match entry.scope {
                Scope::ExternalImage => names_external_image(message, state),
                Scope::ImageWithABufferAfter => names_image_with_a_buffer_after(objects, state),
                Scope::HostReadSemaphoreValue => {
                    names_a_read_semaphore_value(message, objects, state)
                }
                Scope::MessageNames(text) => message.contains(text),
                Scope::DeviceWith(extension, text) => {
                    message.contains(text) && names_device_with(extension, objects, state)
                }
            }
    })
}

/// Whether the message names one image whose memory keel-hal bound, no
/// object keel-hal bound overlaps it, and a buffer is bound after it in the
/// same `VkDeviceMemory`: the layout in which the layer measures the copy's
/// image past its end. (The layer names only the command buffer and the
/// image, not the buffer, so the buffer is found through the bindings.)
fn names_image_with_a_buffer_after(
    objects: &[(vk::ObjectType, u64)],
    state: &MessengerState,
) -> bool {
    let mut images = objects.iter().filter(|(t, _)| *t == vk::ObjectType::IMAGE);
    let (Some(&(_, image)), None) = (images.next(), images.next()) else {
        return false;
    };
    let bindings = state.bindings.lock();
    let Some(&bound) = bindings.get(&image) else {
        return false;
    };
    let (memory, offset, size) = bound;
    let others = bindings.iter().filter(|(&object, _)| object != image);
    let mut buffer_after = false;
    for (_, &other) in others {
        if !disjoint(bound, other) {
            return false;
        }
        let (other_memory, other_offset, _) = other;
        buffer_after |= other_memory == memory && other_offset >= offset.saturating_add(size);
    }
    buffer_after
}

/// Whether the message names one semaphore and, as the value of a "pending
/// signal operation (N)", a value the host read from it.
fn names_a_read_semaphore_value(
    message: &str,
    objects: &[(vk::ObjectType, u64)],
    state: &MessengerState,
) -> bool {
    let mut semaphores = objects
        .iter()
        .filter(|(t, _)| *t == vk::ObjectType::SEMAPHORE);
    let (Some(&(_, semaphore)), None) = (semaphores.next(), semaphores.next()) else {
        return false;
    };
    const KEY: &str = "pending signal operation (";
    let Some(at) = message.find(KEY) else {
        return false;
    };
    let digits: String = message[at + KEY.len()..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let Ok(pending) = digits.parse::<u64>() else {
        return false;
    };
    state
        .semaphore_reads
        .lock()
        .get(&semaphore)
        .is_some_and(|values| values.contains(&pending))
}

/// Whether the message names a device opened with `extension`.
fn names_device_with(
    extension: NewerExtension,
    objects: &[(vk::ObjectType, u64)],
    state: &MessengerState,
) -> bool {
    let devices = state.newer_extension_devices.lock();
    objects
        .iter()
        .any(|&(t, h)| t == vk::ObjectType::DEVICE && devices.contains(&(h, extension)))
}

/// Whether two bound ranges share no byte.
fn disjoint(a: Binding, b: Binding) -> bool {
    let (a_memory, a_offset, a_size) = a;
    let (b_memory, b_offset, b_size) = b;
    a_memory != b_memory
        || a_offset.saturating_add(a_size) <= b_offset
        || b_offset.saturating_add(b_size) <= a_offset
}

/// Whether `message` names (as `VkImage 0x…`) an image with external memory.
fn names_external_image(message: &str, state: &MessengerState) -> bool {
    let images = state.external_images.lock();
    message.match_indices("VkImage 0x").any(|(at, key)| {
        let hex: String = message[at + key.len()..]
            .chars()
            .take_while(char::is_ascii_hexdigit)
            .collect();
        u64::from_str_radix(&hex, 16).is_ok_and(|h| images.contains(&h))
    })
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

/// Routes a driver or layer message to `log` and counts errors.
///
/// # Safety
/// Called by the loader with valid callback data and the `MessengerState`
/// pointer given at creation, which outlives the messenger.
unsafe extern "system" fn debug_callback(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user_data: *mut c_void,
) -> vk::Bool32 {
    // SAFETY: the loader passes valid callback data or null.
    let Some(data) = (unsafe { data.as_ref() }) else {
        return vk::FALSE;
    };
    let text = |p: *const std::ffi::c_char| {
        if p.is_null() {
            String::new()
        } else {
            // SAFETY: non-null strings in callback data are NUL-terminated.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    let id_name = text(data.p_message_id_name);
    let message = text(data.p_message);
    let level = if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) {
        log::Level::Error
    } else if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::WARNING) {
        log::Level::Warn
    } else if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::INFO) {
        log::Level::Info
    } else {
        log::Level::Trace
    };
    // SAFETY: `user_data` is the `MessengerState` given at creation.
    let state = unsafe { user_data.cast::<MessengerState>().as_ref() };
    let objects: Vec<(vk::ObjectType, u64)> = if data.p_objects.is_null() {
        Vec::new()
    } else {
        // SAFETY: the loader passes `object_count` valid entries at `p_objects`.
        unsafe { std::slice::from_raw_parts(data.p_objects, data.object_count as usize) }
            .iter()
            .map(|o| (o.object_type, o.object_handle))
            .collect()
    };
    if let Some(entry) = is_ignored(&id_name, data.message_id_number, &message, &objects, state) {
        log::debug!(
            "[vulkan, ignored] {types:?} {id_name}: {message} (allow-listed: {})",
            entry.reason
        );
        return vk::FALSE;
    }
    log::log!(level, "[vulkan] {types:?} {id_name}: {message}");
    if level == log::Level::Error {
        if let Some(state) = state {
            state.errors.fetch_add(1, Ordering::Relaxed);
        }
    }
    vk::FALSE
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state_with(bindings: &[(u64, Binding)], layer: u32) -> MessengerState {
        let state = MessengerState::default();
        state.bindings.lock().extend(bindings.iter().copied());
        state.layer_version.store(layer, Ordering::Relaxed);
        state
    }

    const NEW_LAYER: u32 = vk::make_api_version(0, 1, 4, 309);
    const OLD_LAYER: u32 = vk::make_api_version(0, 1, 3, 239);
    const COPY_VUID: &str = "VUID-vkCmdCopyBufferToImage-pRegions-00173";

    fn names_image(image: u64) -> Vec<(vk::ObjectType, u64)> {
        vec![
            (vk::ObjectType::COMMAND_BUFFER, 1),
            (vk::ObjectType::IMAGE, image),
        ]
    }

    #[test]
    fn copy_overlap_is_ignored_only_for_an_image_with_a_buffer_after_it() {
        // Image 10 at [0, 4096) of memory 7, buffer 11 right after it.
        let state = state_with(&[(10, (7, 0, 4096)), (11, (7, 4096, 256))], NEW_LAYER);
        assert!(is_ignored(COPY_VUID, 0, "", &names_image(10), Some(&state)).is_some());
        // A real overlap stays an error.
        let state = state_with(&[(10, (7, 0, 4096)), (11, (7, 4000, 256))], NEW_LAYER);
        assert!(is_ignored(COPY_VUID, 0, "", &names_image(10), Some(&state)).is_none());
        // Nothing after the image in its memory: not the layer's bug.
        let state = state_with(&[(10, (7, 256, 4096)), (11, (7, 0, 256))], NEW_LAYER);
        assert!(is_ignored(COPY_VUID, 0, "", &names_image(10), Some(&state)).is_none());
        // The buffer is in another memory object.
        let state = state_with(&[(10, (7, 0, 4096)), (11, (8, 4096, 256))], NEW_LAYER);
        assert!(is_ignored(COPY_VUID, 0, "", &names_image(10), Some(&state)).is_none());
        // An image keel-hal did not bind.
        let state = state_with(&[(11, (7, 4096, 256))], NEW_LAYER);
        assert!(is_ignored(COPY_VUID, 0, "", &names_image(10), Some(&state)).is_none());
        // Another id in the same situation.
        let state = state_with(&[(10, (7, 0, 4096)), (11, (7, 4096, 256))], NEW_LAYER);
        assert!(is_ignored("VUID-other", 0, "", &names_image(10), Some(&state)).is_none());
    }

    #[test]
    fn external_image_layout_entry_is_for_old_layers_only() {
        let id = "UNASSIGNED-CoreValidation-DrawState-InvalidImageLayout";
        let message = "Submitted command buffer expects VkImage 0xab (subresource: ...)";
        for (layer, ignored) in [(OLD_LAYER, true), (NEW_LAYER, false)] {
            let state = state_with(&[], layer);
            state.external_images.lock().push(0xab);
            assert_eq!(
                is_ignored(id, 0, message, &[], Some(&state)).is_some(),
                ignored,
                "layer {layer:#x}"
            );
            // An image without external memory is never ignored.
            state.external_images.lock().clear();
            assert!(is_ignored(id, 0, message, &[], Some(&state)).is_none());
        }
    }

    #[test]
    fn position_fetch_entries_name_the_extension_on_old_layers_only() {
        let id = "VUID-VkDeviceCreateInfo-pNext-pNext";
        let known = "vkCreateDevice: pCreateInfo->pNext chain includes a structure with \
                     unknown VkStructureType (1000481000); Allowed structures are [...]";
        let other = "vkCreateDevice: pCreateInfo->pNext chain includes a structure with \
                     unknown VkStructureType (1000999000); Allowed structures are [...]";
        let old = state_with(&[], OLD_LAYER);
        assert!(is_ignored(id, 0, known, &[], Some(&old)).is_some());
        assert!(is_ignored(id, 0, other, &[], Some(&old)).is_none());
        let new = state_with(&[], NEW_LAYER);
        assert!(is_ignored(id, 0, known, &[], Some(&new)).is_none());
        // The flag report counts unless it names a device with the extension.
        let id = "VUID-VkAccelerationStructureBuildGeometryInfoKHR-flags-parameter";
        let flags = "vkCmdBuildAccelerationStructuresKHR: value of pInfos[0].flags contains \
                     flag bits that are not recognized members of \
                     VkBuildAccelerationStructureFlagBitsKHR";
        let device = [(vk::ObjectType::DEVICE, 0x77)];
        assert!(is_ignored(id, 0, flags, &device, Some(&old)).is_none());
        let coop = (0x77, NewerExtension::CooperativeMatrix);
        old.newer_extension_devices.lock().push(coop);
        assert!(is_ignored(id, 0, flags, &device, Some(&old)).is_none());
        old.newer_extension_devices
            .lock()
            .push((0x77, NewerExtension::PositionFetch));
        assert!(is_ignored(id, 0, flags, &device, Some(&old)).is_some());
        let elsewhere = [(vk::ObjectType::DEVICE, 0x78)];
        assert!(is_ignored(id, 0, flags, &elsewhere, Some(&old)).is_none());
        new.newer_extension_devices
            .lock()
            .push((0x77, NewerExtension::PositionFetch));
        assert!(is_ignored(id, 0, flags, &device, Some(&new)).is_none());
    }

    #[test]
    fn cooperative_matrix_entries_name_the_extension_on_old_layers_only() {
        let old = state_with(&[], OLD_LAYER);
        let new = state_with(&[], NEW_LAYER);
        let device = [(vk::ObjectType::DEVICE, 0x55)];
        let id = "VUID-VkDeviceCreateInfo-pNext-pNext";
        let known = "includes a structure with unknown VkStructureType (1000506000)";
        assert!(is_ignored(id, 0, known, &[], Some(&old)).is_some());
        assert!(is_ignored(id, 0, known, &[], Some(&new)).is_none());
        let id = "UNASSIGNED-CoreValidation-Shader-InconsistentSpirv";
        let capability = "SPIR-V module not valid: Invalid capability operand: 6022";
        assert!(is_ignored(id, 0, capability, &device, Some(&old)).is_some());
        let other = "SPIR-V module not valid: Invalid capability operand: 6023";
        assert!(is_ignored(id, 0, other, &device, Some(&old)).is_none());
        // The unnamed capability only on a device opened with the extension.
        let id = "VUID-VkShaderModuleCreateInfo-pCode-01090";
        let unhandled = "A SPIR-V Capability (Unhandled OpCapability) was declared";
        assert!(is_ignored(id, 0, unhandled, &device, Some(&old)).is_none());
        old.newer_extension_devices
            .lock()
            .push((0x55, NewerExtension::CooperativeMatrix));
        assert!(is_ignored(id, 0, unhandled, &device, Some(&old)).is_some());
        new.newer_extension_devices
            .lock()
            .push((0x55, NewerExtension::CooperativeMatrix));
        assert!(is_ignored(id, 0, unhandled, &device, Some(&new)).is_none());
    }

    #[test]
    fn pending_signal_entry_needs_a_value_the_host_read() {
        let id = "VUID-VkSemaphoreSignalInfo-value-03259";
        let message = "vkSignalSemaphore(): value (7) must be less than value of any pending \
                       signal operation (5) for semaphore VkSemaphore 0x30d";
        let objects = [(vk::ObjectType::SEMAPHORE, 0x30d)];
        let state = state_with(&[], OLD_LAYER);
        // No read noted: an error.
        assert!(is_ignored(id, 0, message, &objects, Some(&state)).is_none());
        state.semaphore_reads.lock().insert(0x30d, vec![3]);
        assert!(is_ignored(id, 0, message, &objects, Some(&state)).is_none());
        state.semaphore_reads.lock().insert(0x30d, vec![3, 5]);
        assert!(is_ignored(id, 0, message, &objects, Some(&state)).is_some());
        // Another semaphore, or a layer with the fix: an error.
        let other = [(vk::ObjectType::SEMAPHORE, 0x31d)];
        assert!(is_ignored(id, 0, message, &other, Some(&state)).is_none());
        let fixed = state_with(&[], NEW_LAYER);
        fixed.semaphore_reads.lock().insert(0x30d, vec![5]);
        assert!(is_ignored(id, 0, message, &objects, Some(&fixed)).is_none());
    }

    #[test]
    fn every_entry_says_why() {
        for entry in IGNORED_VALIDATION_MESSAGES {
            assert!(entry.reason.len() > 80, "{}: give the reason", entry.id);
        }
    }
}
