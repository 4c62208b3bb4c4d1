//! What the validation layer says: the debug messenger's callback routes
//! each message to `log` and counts errors ([`ValidationCounter`]), and the
//! one documented allow-list of the old layer's false positives, each entry
//! scoped as narrowly as it can be (layer versions, the objects a message
//! names, what the host read).

use std::ffi::{c_void, CStr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ash::vk;

pub(crate) const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

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
    pub(crate) errors: AtomicU64,
    /// Raw handles of live images with external memory (kept only with
    /// validation on), for [`Scope::ExternalImage`].
    pub(crate) external_images: parking_lot::Mutex<Vec<u64>>,
    /// Memory bindings of live buffers and images keel-hal bound (kept only
    /// with validation on), for [`Scope::ImageWithABufferAfter`].
    pub(crate) bindings: parking_lot::Mutex<std::collections::HashMap<u64, Binding>>,
    /// Values the host read from (or waited for on) each timeline
    /// semaphore keel-hal made, the last few per semaphore (kept only with
    /// validation on), for [`Scope::HostReadSemaphoreValue`].
    pub(crate) semaphore_reads: parking_lot::Mutex<std::collections::HashMap<u64, Vec<u64>>>,
    /// Devices opened with a [`NewerExtension`], one element per extension
    /// (kept only with validation on), for [`Scope::DeviceWith`].
    pub(crate) newer_extension_devices: parking_lot::Mutex<Vec<(u64, NewerExtension)>>,
    /// The validation layer's `specVersion`, for [`LayerRange`]; 0 when
    /// validation is off.
    pub(crate) layer_version: std::sync::atomic::AtomicU32,
}

/// The validation-error count of an instance, readable after the instance
/// is gone: messages sent while `vkDestroyInstance` runs (objects a device
/// leaked, reported when the device or instance is destroyed) are counted
/// too. Cheap to clone; every clone reads the same count.
#[derive(Clone, Debug)]
pub struct ValidationCounter(pub(crate) Arc<MessengerState>);

impl ValidationCounter {
    /// ERROR-severity validation messages so far (allow-listed ones not counted).
    pub fn errors(&self) -> u64 {
        self.0.errors.load(Ordering::Relaxed)
    }
}

/// The messenger description: every severity and type, to [`debug_callback`].
pub(crate) fn messenger_create_info(
    state: &MessengerState,
) -> vk::DebugUtilsMessengerCreateInfoEXT<'static> {
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
