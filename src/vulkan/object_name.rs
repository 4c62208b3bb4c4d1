//! Debug names of Vulkan objects (`VK_EXT_debug_utils`), attached where
//! the instance enabled it: what labels become in the validation layer's
//! messages and in capture tools.

use std::ffi::CString;

use ash::vk;

use super::DeviceShared;

/// Attaches a debug name to an object, when debug utils are on.
///
/// # Safety
/// `handle` is a live object of this device.
pub(crate) unsafe fn set_object_name<H: vk::Handle>(shared: &DeviceShared, handle: H, label: &str) {
    if let Some(du) = &shared.debug_utils {
        // SAFETY: forwarded contract.
        unsafe { name_object(du, handle, label) };
    }
}

/// Attaches a debug name to an object (an empty `label` removes its name).
///
/// # Safety
/// `handle` is a live object of the device `du` was loaded for.
pub(crate) unsafe fn name_object<H: vk::Handle>(
    du: &ash::ext::debug_utils::Device,
    handle: H,
    label: &str,
) {
    // A label with a NUL byte is cut there rather than rejected.
    let text = label.split('\0').next().unwrap_or_default();
    let Ok(name) = CString::new(text) else {
        return;
    };
    let info = vk::DebugUtilsObjectNameInfoEXT::default()
        .object_handle(handle)
        .object_name(&name);
    // SAFETY: forwarded contract; names are advisory, so failure is ignored.
    if let Err(e) = unsafe { du.set_debug_utils_object_name(&info) } {
        log::debug!("vkSetDebugUtilsObjectNameEXT failed: {e:?}");
    }
}
