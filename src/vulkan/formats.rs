//! Per-device cache of format queries.
//!
//! `create_texture` needs a format's features and the image limits for its
//! (format, type, usage, flags) combination. The answers never change for a
//! physical device, so each is asked of the driver once and then read from
//! a map under a read lock (no driver call, no allocation on a hit).

use std::collections::HashMap;

use ash::vk;
use parking_lot::RwLock;

/// The key of an image-format query.
type ImageKey = (
    vk::Format,
    vk::ImageType,
    vk::ImageUsageFlags,
    vk::ImageCreateFlags,
);

/// Cached `vkGetPhysicalDeviceFormatProperties` and
/// `vkGetPhysicalDeviceImageFormatProperties` answers of one physical device.
#[derive(Debug, Default)]
pub(crate) struct FormatCache {
    formats: RwLock<HashMap<vk::Format, vk::FormatProperties>>,
    /// `None`: the combination is not supported (`VK_ERROR_FORMAT_NOT_SUPPORTED`).
    images: RwLock<HashMap<ImageKey, Option<vk::ImageFormatProperties>>>,
}

impl FormatCache {
    /// The format's properties.
    ///
    /// # Safety
    /// `pd` belongs to `instance`, and is the same physical device on every call.
    pub(crate) unsafe fn format_properties(
        &self,
        instance: &ash::Instance,
        pd: vk::PhysicalDevice,
        format: vk::Format,
    ) -> vk::FormatProperties {
        if let Some(props) = self.formats.read().get(&format) {
            return *props;
        }
        // SAFETY: forwarded contract.
        let props = unsafe { instance.get_physical_device_format_properties(pd, format) };
        self.formats.write().insert(format, props);
        props
    }

    /// The image limits of a combination, `Ok(None)` when it is not
    /// supported; other driver errors are returned and not cached.
    ///
    /// # Safety
    /// As for [`FormatCache::format_properties`]; the arguments are valid enum values.
    pub(crate) unsafe fn image_properties(
        &self,
        instance: &ash::Instance,
        pd: vk::PhysicalDevice,
        key: ImageKey,
    ) -> Result<Option<vk::ImageFormatProperties>, vk::Result> {
        if let Some(props) = self.images.read().get(&key) {
            return Ok(*props);
        }
        let (format, ty, usage, flags) = key;
        // SAFETY: forwarded contract.
        let props = match unsafe {
            instance.get_physical_device_image_format_properties(
                pd,
                format,
                ty,
                vk::ImageTiling::OPTIMAL,
                usage,
                flags,
            )
        } {
            Ok(props) => Some(props),
            Err(vk::Result::ERROR_FORMAT_NOT_SUPPORTED) => None,
            Err(other) => return Err(other),
        };
        self.images.write().insert(key, props);
        Ok(props)
    }
}
