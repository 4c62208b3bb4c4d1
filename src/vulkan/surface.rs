//! Presentation surfaces: `VkSurfaceKHR` from raw-window-handle handles,
//! what a surface supports on an adapter, and the [`crate::Surface`] trait,
//! which drives the swapchain of `swapchain.rs`.
//!
//! The instance enables `VK_KHR_surface` and each of the Xlib, XCB and
//! Wayland surface extensions the loader has. On a system with none of them
//! (headless) nothing is enabled and [`crate::Instance::create_surface`]
//! answers [`InstanceError::MissingExtension`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use ash::vk;
use raw_window_handle::{RawDisplayHandle, RawWindowHandle};

use super::instance_shared::InstanceShared;
use super::swapchain::{self, Swapchain};
use crate::{
    AcquiredSurfaceTexture, InstanceError, SurfaceCapabilities, SurfaceConfiguration, SurfaceError,
};

impl super::Surface {
    /// The raw `VkSurfaceKHR`. The hal still owns it: do not destroy it.
    pub fn raw(&self) -> vk::SurfaceKHR {
        self.raw
    }
}

impl super::SurfaceTexture {
    /// The texture to render into (views, barriers, copies).
    pub fn texture(&self) -> &super::Texture {
        &self.texture
    }

    /// The swapchain image index.
    pub fn index(&self) -> u32 {
        self.sync.index
    }
}

impl std::borrow::Borrow<super::Texture> for super::SurfaceTexture {
    fn borrow(&self) -> &super::Texture {
        &self.texture
    }
}

/// A missing-extension error naming what the platform lacks.
fn missing(what: &str) -> InstanceError {
    InstanceError::MissingExtension(what.to_owned())
}

/// Creates a `VkSurfaceKHR` for a window.
///
/// # Safety
/// The handles are valid and stay valid until the surface is destroyed.
pub(super) unsafe fn create_surface(
    instance: &Arc<InstanceShared>,
    display: RawDisplayHandle,
    window: RawWindowHandle,
) -> Result<super::Surface, InstanceError> {
    let Some(ext) = &instance.surface else {
        return Err(missing(
            "VK_KHR_surface (the loader has no surface support)",
        ));
    };
    let created = match (display, window) {
        (RawDisplayHandle::Xlib(d), RawWindowHandle::Xlib(w)) => {
            let fns = ext
                .xlib
                .as_ref()
                .ok_or_else(|| missing("VK_KHR_xlib_surface"))?;
            let dpy = d
                .display
                .ok_or_else(|| missing("an Xlib display (the display handle is null)"))?;
            let info = vk::XlibSurfaceCreateInfoKHR::default()
                .dpy(dpy.as_ptr().cast())
                .window(w.window);
            // SAFETY: the extension is enabled; the caller vouches for the handles.
            unsafe { fns.create_xlib_surface(&info, None) }
        }
        (RawDisplayHandle::Xcb(d), RawWindowHandle::Xcb(w)) => {
            let fns = ext
                .xcb
                .as_ref()
                .ok_or_else(|| missing("VK_KHR_xcb_surface"))?;
            let connection = d
                .connection
                .ok_or_else(|| missing("an XCB connection (the display handle is null)"))?;
            let info = vk::XcbSurfaceCreateInfoKHR::default()
                .connection(connection.as_ptr())
                .window(w.window.get());
            // SAFETY: as above.
            unsafe { fns.create_xcb_surface(&info, None) }
        }
        (RawDisplayHandle::Wayland(d), RawWindowHandle::Wayland(w)) => {
            let fns = ext
                .wayland
                .as_ref()
                .ok_or_else(|| missing("VK_KHR_wayland_surface"))?;
            let info = vk::WaylandSurfaceCreateInfoKHR::default()
                .display(d.display.as_ptr())
                .surface(w.surface.as_ptr());
            // SAFETY: as above.
            unsafe { fns.create_wayland_surface(&info, None) }
        }
        (display, window) => {
            return Err(InstanceError::MissingExtension(format!(
                "a Vulkan surface extension for {} windows on {} displays (keel-hal supports \
                 Xlib, XCB and Wayland)",
                window_kind(&window),
                display_kind(&display)
            )))
        }
    };
    let raw = created.map_err(|e| InstanceError::Device(super::conv::map_err(e)))?;
    Ok(super::Surface {
        raw,
        instance: instance.clone(),
        swapchain: parking_lot::Mutex::new(None),
    })
}

/// The window system a window handle belongs to, for messages.
fn window_kind(window: &RawWindowHandle) -> &'static str {
    match window {
        RawWindowHandle::Xlib(_) => "Xlib",
        RawWindowHandle::Xcb(_) => "XCB",
        RawWindowHandle::Wayland(_) => "Wayland",
        RawWindowHandle::Win32(_) => "Win32",
        RawWindowHandle::AppKit(_) => "AppKit",
        RawWindowHandle::UiKit(_) => "UIKit",
        RawWindowHandle::AndroidNdk(_) => "Android",
        _ => "other",
    }
}

/// The window system a display handle belongs to, for messages.
fn display_kind(display: &RawDisplayHandle) -> &'static str {
    match display {
        RawDisplayHandle::Xlib(_) => "Xlib",
        RawDisplayHandle::Xcb(_) => "XCB",
        RawDisplayHandle::Wayland(_) => "Wayland",
        RawDisplayHandle::Windows(_) => "Windows",
        RawDisplayHandle::AppKit(_) => "AppKit",
        RawDisplayHandle::UiKit(_) => "UIKit",
        RawDisplayHandle::Android(_) => "Android",
        _ => "other",
    }
}

/// Destroys a surface. A swapchain still configured (a broken contract) is
/// torn down first, with a warning, so nothing leaks.
///
/// # Safety
/// The surface came from `instance`; no pending GPU work uses its textures.
pub(super) unsafe fn destroy_surface(instance: &InstanceShared, surface: super::Surface) {
    if let Some(swapchain) = surface.swapchain.lock().take() {
        log::warn!("destroying a surface that is still configured; unconfiguring it first");
        // SAFETY: forwarded contract.
        unsafe { swapchain.destroy() };
    }
    if let Some(ext) = &instance.surface {
        // SAFETY: the surface came from this instance and has no swapchain.
        unsafe { ext.surface.destroy_surface(surface.raw, None) };
    }
}

/// Everything the driver says about presenting to `surface` from the
/// queue family `family` of `pd`.
pub(super) struct RawCapabilities {
    pub(super) caps: vk::SurfaceCapabilitiesKHR,
    pub(super) formats: Vec<vk::SurfaceFormatKHR>,
    pub(super) present_modes: Vec<vk::PresentModeKHR>,
}

/// Maps a surface query's error.
fn query_error(e: vk::Result) -> SurfaceError {
    match e {
        vk::Result::ERROR_SURFACE_LOST_KHR => SurfaceError::Lost,
        other => SurfaceError::Device(super::conv::map_err(other)),
    }
}

/// Queries what `pd` can do with `surface`; `Unsupported` when its queue
/// family cannot present there.
///
/// # Safety
/// `pd` and `surface` belong to `instance`; `family` is a queue family of `pd`.
pub(super) unsafe fn query(
    instance: &InstanceShared,
    pd: vk::PhysicalDevice,
    family: u32,
    surface: vk::SurfaceKHR,
) -> Result<RawCapabilities, SurfaceError> {
    let Some(ext) = &instance.surface else {
        return Err(SurfaceError::Unsupported("VK_KHR_surface is not enabled"));
    };
    let fns = &ext.surface;
    // SAFETY: forwarded contract (all four queries).
    let supported = unsafe { fns.get_physical_device_surface_support(pd, family, surface) }
        .map_err(query_error)?;
    if !supported {
        return Err(SurfaceError::Unsupported(
            "the adapter's queue family cannot present to this surface",
        ));
    }
    // SAFETY: as above.
    let caps = unsafe { fns.get_physical_device_surface_capabilities(pd, surface) }
        .map_err(query_error)?;
    // SAFETY: as above.
    let formats =
        unsafe { fns.get_physical_device_surface_formats(pd, surface) }.map_err(query_error)?;
    // SAFETY: as above.
    let present_modes = unsafe { fns.get_physical_device_surface_present_modes(pd, surface) }
        .map_err(query_error)?;
    Ok(RawCapabilities {
        caps,
        formats,
        present_modes,
    })
}

/// Formats a swapchain may have, in keel-hal's order of preference when the
/// driver lists `VK_FORMAT_UNDEFINED` (any format).
const SURFACE_FORMATS: [wgt::TextureFormat; 6] = [
    wgt::TextureFormat::Bgra8UnormSrgb,
    wgt::TextureFormat::Rgba8UnormSrgb,
    wgt::TextureFormat::Bgra8Unorm,
    wgt::TextureFormat::Rgba8Unorm,
    wgt::TextureFormat::Rgb10a2Unorm,
    wgt::TextureFormat::Rgba16Float,
];

/// The formats of `raw` keel-hal can name (sRGB colour space only), in the driver's order.
fn map_formats(raw: &[vk::SurfaceFormatKHR]) -> Vec<wgt::TextureFormat> {
    let srgb = raw
        .iter()
        .filter(|f| f.color_space == vk::ColorSpaceKHR::SRGB_NONLINEAR);
    if raw.iter().any(|f| f.format == vk::Format::UNDEFINED) {
        return SURFACE_FORMATS.to_vec();
    }
    let mut out = Vec::new();
    for f in srgb {
        let mapped = SURFACE_FORMATS
            .into_iter()
            .find(|w| super::conv::map_texture_format(*w) == f.format);
        if let Some(w) = mapped.filter(|w| !out.contains(w)) {
            out.push(w);
        }
    }
    out
}

/// Present modes in `wgpu-types` terms.
pub(super) fn map_present_mode(mode: vk::PresentModeKHR) -> Option<wgt::PresentMode> {
    Some(match mode {
        vk::PresentModeKHR::FIFO => wgt::PresentMode::Fifo,
        vk::PresentModeKHR::FIFO_RELAXED => wgt::PresentMode::FifoRelaxed,
        vk::PresentModeKHR::MAILBOX => wgt::PresentMode::Mailbox,
        vk::PresentModeKHR::IMMEDIATE => wgt::PresentMode::Immediate,
        _ => return None,
    })
}

/// Composite alpha modes in `wgpu-types` terms.
const ALPHA_MODES: [(vk::CompositeAlphaFlagsKHR, wgt::CompositeAlphaMode); 4] = [
    (
        vk::CompositeAlphaFlagsKHR::OPAQUE,
        wgt::CompositeAlphaMode::Opaque,
    ),
    (
        vk::CompositeAlphaFlagsKHR::PRE_MULTIPLIED,
        wgt::CompositeAlphaMode::PreMultiplied,
    ),
    (
        vk::CompositeAlphaFlagsKHR::POST_MULTIPLIED,
        wgt::CompositeAlphaMode::PostMultiplied,
    ),
    (
        vk::CompositeAlphaFlagsKHR::INHERIT,
        wgt::CompositeAlphaMode::Inherit,
    ),
];

/// The Vulkan flag of a concrete alpha mode (`None` for the `Auto` mode).
pub(super) fn map_alpha_mode(mode: wgt::CompositeAlphaMode) -> Option<vk::CompositeAlphaFlagsKHR> {
    ALPHA_MODES
        .into_iter()
        .find(|(_, w)| *w == mode)
        .map(|(v, _)| v)
}

/// Image usages in `wgpu-types` terms.
fn map_usage(usage: vk::ImageUsageFlags) -> wgt::TextureUsages {
    use vk::ImageUsageFlags as V;
    use wgt::TextureUsages as U;
    let mut out = U::empty();
    for (v, u) in [
        (V::TRANSFER_SRC, U::COPY_SRC),
        (V::TRANSFER_DST, U::COPY_DST),
        (V::SAMPLED, U::TEXTURE_BINDING),
        (V::STORAGE, U::STORAGE_BINDING),
        (V::COLOR_ATTACHMENT, U::RENDER_ATTACHMENT),
    ] {
        if usage.contains(v) {
            out |= u;
        }
    }
    out
}

/// The driver's answer in keel-hal terms.
fn map_capabilities(raw: &RawCapabilities) -> SurfaceCapabilities {
    let caps = &raw.caps;
    let max_images = match caps.max_image_count {
        0 => u32::MAX,
        n => n,
    };
    let current_extent = (caps.current_extent.width != u32::MAX).then_some(wgt::Extent3d {
        width: caps.current_extent.width,
        height: caps.current_extent.height,
        depth_or_array_layers: 1,
    });
    SurfaceCapabilities {
        formats: map_formats(&raw.formats),
        maximum_frame_latency: caps.min_image_count.max(1)..=max_images,
        current_extent,
        usage: map_usage(caps.supported_usage_flags),
        present_modes: raw
            .present_modes
            .iter()
            .filter_map(|m| map_present_mode(*m))
            .collect(),
        composite_alpha_modes: ALPHA_MODES
            .into_iter()
            .filter(|(v, _)| caps.supported_composite_alpha.contains(*v))
            .map(|(_, w)| w)
            .collect(),
    }
}

impl super::Adapter {
    /// What this adapter can do with `surface`: formats, present and alpha
    /// modes, swapchain lengths, size, usages. `SurfaceError::Unsupported`
    /// when the adapter's queue family cannot present to it. The usages are
    /// the surface's; a format may support fewer of them (an sRGB format is
    /// rarely a storage image), which `configure` reports as `Unsupported`.
    ///
    /// # Safety
    /// The surface came from the instance this adapter came from.
    pub(super) unsafe fn query_surface(
        &self,
        surface: &super::Surface,
    ) -> Result<SurfaceCapabilities, SurfaceError> {
        // SAFETY: forwarded contract; the family is this adapter's.
        let raw = unsafe {
            query(
                &self.instance,
                self.raw,
                self.info.queue_family_index,
                surface.raw,
            )
        }?;
        Ok(map_capabilities(&raw))
    }
}

/// The time left until `deadline` (`None`: no limit), in nanoseconds.
pub(super) fn remaining_ns(deadline: Option<Instant>) -> u64 {
    deadline.map_or(u64::MAX, |d| {
        let left = d.saturating_duration_since(Instant::now());
        u64::try_from(left.as_nanos()).unwrap_or(u64::MAX)
    })
}

impl crate::Surface for super::Surface {
    type A = super::Api;

    unsafe fn configure(
        &self,
        device: &super::Device,
        config: &SurfaceConfiguration,
    ) -> Result<(), SurfaceError> {
        let shared = &device.shared;
        shared.lost.check::<SurfaceError>()?;
        if !shared.swapchain {
            return Err(SurfaceError::Unsupported(
                "the device was opened without VK_KHR_swapchain",
            ));
        }
        // SAFETY: the caller's contract: the device's adapter belongs to the
        // surface's instance.
        let raw_caps = unsafe {
            query(
                &self.instance,
                shared.physical_device,
                shared.queue_family_index,
                self.raw,
            )
        }?;
        let formats = map_formats(&raw_caps.formats);
        let params = swapchain::Params::choose(config, &raw_caps, &formats)?;
        // The surface's usages are not all valid with every format (sRGB
        // formats are rarely storage images): ask for the implied image.
        let key = (
            super::conv::map_texture_format(config.format),
            vk::ImageType::TYPE_2D,
            super::conv::map_texture_usage(config.usage, config.format),
            vk::ImageCreateFlags::empty(),
        );
        // SAFETY: the device's physical device belongs to its instance.
        let image = unsafe {
            shared
                .formats
                .image_properties(&shared.instance.raw, shared.physical_device, key)
        }
        .map_err(|e| SurfaceError::Device(super::conv::map_err(e)))?;
        if image.is_none() {
            return Err(SurfaceError::Unsupported(
                "the format does not support the usage here",
            ));
        }
        let mut slot = self.swapchain.lock();
        // SAFETY: the caller's contract: no pending GPU work uses the old
        // swapchain's textures, and acquired ones were given back.
        let created = unsafe { Swapchain::create(shared, self.raw, &params, slot.take()) };
        *slot = Some(shared.lost.note(created)?);
        Ok(())
    }

    unsafe fn unconfigure(&self, _device: &super::Device) {
        if let Some(swapchain) = self.swapchain.lock().take() {
            // SAFETY: the caller's contract: no pending GPU work uses its textures.
            unsafe { swapchain.destroy() };
        }
    }

    unsafe fn acquire_texture(
        &self,
        timeout: Option<Duration>,
    ) -> Result<AcquiredSurfaceTexture<super::SurfaceTexture>, SurfaceError> {
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        let mut slot = self.swapchain.lock();
        let Some(swapchain) = slot.as_mut() else {
            return Err(SurfaceError::Unsupported("the surface is not configured"));
        };
        swapchain.device().lost.check::<SurfaceError>()?;
        // SAFETY: the swapchain lock gives the external synchronisation
        // vkAcquireNextImageKHR needs; the caller holds few enough textures.
        let acquired = unsafe { swapchain.acquire(deadline) };
        swapchain.device().lost.note(acquired)
    }

    unsafe fn discard_texture(&self, texture: super::SurfaceTexture) {
        let mut slot = self.swapchain.lock();
        match slot.as_mut() {
            Some(swapchain) if swapchain.raw == texture.sync.swapchain => {
                swapchain.discard(texture.sync);
            }
            // Its swapchain is gone, and its semaphores with it.
            _ => log::debug!("discarding a texture of a swapchain that no longer exists"),
        }
    }
}
