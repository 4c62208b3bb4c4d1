//! The driver-dependent part of texture and view creation: which usages a
//! view format's features allow. Texture descriptions are checked in
//! `validate/texture.rs` and views in `validate/view.rs` (shared with every
//! backend; cube compatibility is decided there too); what the format's
//! image properties allow is checked in `device.rs`'s `texture_plan`.

use ash::vk;

use super::conv;

/// The usages a view may have: those of its image (`image_usage`) whose
/// format features the view's format has. An sRGB view of a storage
/// texture, for one, drops `STORAGE` (VUID-VkImageViewCreateInfo-usage-02275).
pub(super) fn view_usage(
    image_usage: vk::ImageUsageFlags,
    view_features: vk::FormatFeatureFlags,
) -> vk::ImageUsageFlags {
    let mut usage = vk::ImageUsageFlags::empty();
    for bit in 0..u32::BITS {
        let flag = vk::ImageUsageFlags::from_raw(image_usage.as_raw() & (1 << bit));
        if !flag.is_empty() && view_features.contains(conv::usage_format_features(flag)) {
            usage |= flag;
        }
    }
    usage
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srgb_views_of_storage_textures_drop_storage() {
        use vk::FormatFeatureFlags as F;
        use vk::ImageUsageFlags as U;
        let image = U::SAMPLED | U::STORAGE | U::TRANSFER_DST;
        let srgb = F::SAMPLED_IMAGE | F::TRANSFER_DST | F::COLOR_ATTACHMENT;
        assert_eq!(view_usage(image, srgb), U::SAMPLED | U::TRANSFER_DST);
        assert_eq!(view_usage(image, srgb | F::STORAGE_IMAGE), image);
    }
}
