//! Surfaces: keel-hal's surface behind `wgpu::Surface`. A frame from
//! `get_current_texture` is a texture like any other to the tracker; each
//! submit that uses it names it (keel-hal waits for its acquire there), and
//! `Queue::present` moves it to `PRESENT` in one last submit and hands it
//! back to keel-hal.

use std::sync::Arc;

use keel_hal::dynamic::{ChosenInstance, DynSurface, SurfaceTextureBox};
use keel_hal::{StateTransition, TextureBarrier, TextureUses};
use parking_lot::Mutex;
use wgpu::custom as cu;

use crate::device::KeelDevice;
use crate::error::KeelError;
use crate::handles::KTexture;
use crate::instance::KeelAdapter;
use crate::resource::Texture;
use crate::shared::DeviceShared;

type Configured = (Arc<DeviceShared>, wgpu::SurfaceConfiguration);

/// A keel-hal surface and the device it is configured with.
#[derive(Debug)]
pub(crate) struct SurfaceInner {
    instance: Option<Arc<ChosenInstance>>,
    raw: Option<Box<dyn DynSurface>>,
    configured: Mutex<Option<Configured>>,
    /// The frame handed out last: another may be acquired only once it is
    /// presented or discarded (wgpu-core's `SurfaceError::AlreadyAcquired`).
    acquired: Mutex<std::sync::Weak<Texture>>,
}

impl SurfaceInner {
    fn raw(&self) -> Option<&dyn DynSurface> {
        self.raw.as_deref()
    }

    fn unconfigure(&self) {
        let configured = self.configured.lock().take();
        if let (Some(raw), Some((shared, _))) = (self.raw(), configured) {
            if let Err(e) = shared.wait_for(None, None) {
                shared.report(e);
            }
            // SAFETY: the device is the one configured and the GPU is idle.
            unsafe { raw.unconfigure(shared.hal()) };
        }
    }

    /// Gives an unpresented frame back to keel-hal.
    pub(crate) fn discard(&self, frame: SurfaceTextureBox) {
        if let Some(raw) = self.raw() {
            // SAFETY: the frame was acquired from this surface and is not
            // presented; no submit is recording it (the caller holds the
            // submit lock or is its last owner).
            unsafe { raw.discard_texture(frame) };
        }
    }
}

impl Drop for SurfaceInner {
    fn drop(&mut self) {
        self.unconfigure();
        if let (Some(raw), Some(instance)) = (self.raw.take(), &self.instance) {
            // SAFETY: unconfigured above; the instance made it.
            unsafe { instance.instance.destroy_surface(raw) };
        }
    }
}

/// A `wgpu::Surface`.
#[derive(Debug)]
pub(crate) struct KSurface(Arc<SurfaceInner>);

impl KSurface {
    pub(crate) fn new(instance: Arc<ChosenInstance>, raw: Box<dyn DynSurface>) -> Self {
        Self(Arc::new(SurfaceInner {
            instance: Some(instance),
            raw: Some(raw),
            configured: Mutex::new(None),
            acquired: Mutex::new(std::sync::Weak::new()),
        }))
    }

    /// A surface that could not be made (logged): no adapter supports it.
    pub(crate) fn unusable() -> Self {
        Self(Arc::new(SurfaceInner {
            instance: None,
            raw: None,
            configured: Mutex::new(None),
            acquired: Mutex::new(std::sync::Weak::new()),
        }))
    }

    /// Whether `adapter` can present to it.
    pub(crate) fn supported_by(&self, adapter: &KeelAdapter) -> bool {
        let Some(raw) = self.0.raw() else {
            return false;
        };
        // SAFETY: the surface and the adapter come from the same instance.
        unsafe { adapter.raw().surface_capabilities(raw) }.is_ok_and(|c| !c.formats.is_empty())
    }
}

/// The frame `get_current_texture` handed out, for `present` or discard.
#[derive(Debug)]
pub(crate) struct KSurfaceOutput {
    frame: Option<Arc<Texture>>,
}

impl cu::SurfaceInterface for KSurface {
    fn get_capabilities(&self, adapter: &cu::DispatchAdapter) -> wgpu::SurfaceCapabilities {
        let (Some(raw), Some(adapter)) = (self.0.raw(), adapter.as_custom::<KeelAdapter>()) else {
            return wgpu::SurfaceCapabilities::default();
        };
        // SAFETY: the surface and the adapter come from the same instance.
        match unsafe { adapter.raw().surface_capabilities(raw) } {
            Ok(caps) => wgpu::SurfaceCapabilities {
                formats: caps.formats,
                present_modes: caps.present_modes,
                alpha_modes: caps.composite_alpha_modes,
                usages: caps.usage,
                ..Default::default()
            },
            Err(e) => {
                log::warn!("keel-wgpu: surface capabilities: {e}");
                wgpu::SurfaceCapabilities::default()
            }
        }
    }

    fn configure(&self, device: &cu::DispatchDevice, config: &wgpu::SurfaceConfiguration) {
        let Some(device) = device.as_custom::<KeelDevice>() else {
            log::error!("keel-wgpu: Surface::configure with a device of another backend");
            return;
        };
        let shared = device.handle.shared.clone();
        let Some(raw) = self.0.raw() else {
            return shared.report(KeelError::validation(
                "Surface::configure",
                "the surface could not be created (see the log)",
            ));
        };
        if let Err(e) = check_configuration(config) {
            return shared.report(KeelError::validation("Surface::configure", e));
        }
        self.0.unconfigure();
        let hal_config = keel_hal::SurfaceConfiguration {
            maximum_frame_latency: config.desired_maximum_frame_latency.max(1),
            present_mode: config.present_mode,
            composite_alpha_mode: config.alpha_mode,
            format: config.format,
            extent: wgpu::Extent3d {
                width: config.width,
                height: config.height,
                depth_or_array_layers: 1,
            },
            usage: config.usage,
        };
        // SAFETY: the device is alive; the surface is unconfigured (above).
        match unsafe { raw.configure(shared.hal(), &hal_config) } {
            Ok(()) => *self.0.configured.lock() = Some((shared, config.clone())),
            Err(e) => shared.report(KeelError::from_hal("Surface::configure", &e)),
        }
    }

    fn get_current_texture(
        &self,
    ) -> (
        Option<cu::DispatchTexture>,
        wgpu::SurfaceStatus,
        cu::DispatchSurfaceOutputDetail,
    ) {
        let nothing = |status| {
            (
                None,
                status,
                cu::DispatchSurfaceOutputDetail::custom(KSurfaceOutput { frame: None }),
            )
        };
        let configured = self.0.configured.lock().clone();
        let (Some(raw), Some((shared, config))) = (self.0.raw(), configured) else {
            log::error!("keel-wgpu: get_current_texture on a surface that is not configured");
            return nothing(wgpu::SurfaceStatus::Validation);
        };
        let outstanding = self.0.acquired.lock().upgrade();
        if outstanding.is_some_and(|f| f.frame.lock().is_some()) {
            // wgpu-core reports it and returns no texture.
            shared.report(KeelError::validation(
                "get_current_texture",
                "Surface image is already acquired",
            ));
            return nothing(wgpu::SurfaceStatus::Validation);
        }
        // SAFETY: configured with `shared`'s device.
        let acquired = match unsafe { raw.acquire_texture(None) } {
            Ok(a) => a,
            Err(keel_hal::SurfaceError::Outdated) => return nothing(wgpu::SurfaceStatus::Outdated),
            Err(keel_hal::SurfaceError::Lost) => return nothing(wgpu::SurfaceStatus::Lost),
            Err(e) => {
                shared.report(KeelError::from_hal("get_current_texture", &e));
                return nothing(wgpu::SurfaceStatus::Lost);
            }
        };
        let texture = Arc::new(Texture::from_frame(
            &shared,
            acquired.texture,
            self.0.clone(),
            &config,
        ));
        *self.0.acquired.lock() = Arc::downgrade(&texture);
        let status = if acquired.suboptimal {
            wgpu::SurfaceStatus::Suboptimal
        } else {
            wgpu::SurfaceStatus::Good
        };
        (
            Some(cu::DispatchTexture::custom(KTexture(texture.clone()))),
            status,
            cu::DispatchSurfaceOutputDetail::custom(KSurfaceOutput {
                frame: Some(texture),
            }),
        )
    }
}

impl cu::SurfaceOutputDetailInterface for KSurfaceOutput {
    fn texture_discard(&self) {
        if let Some(frame) = &self.frame {
            let _order = frame.shared.submit_lock.lock();
            frame.discard_frame();
        }
    }
    fn texture_release(&self) {
        self.texture_discard();
    }
}

/// The configuration's rules keel-hal does not make (wgpu-core's
/// `configure_surface`): view formats differ from the format only in
/// sRGB-ness (`ConfigureSurfaceError::InvalidViewFormat`); the colour space
/// is one keel-hal presents in, sRGB (`UnsupportedColorSpace`; `Auto`
/// resolves to it).
fn check_configuration(config: &wgpu::SurfaceConfiguration) -> Result<(), String> {
    for &view in &config.view_formats {
        if view != config.format && view.remove_srgb_suffix() != config.format.remove_srgb_suffix()
        {
            return Err(format!(
                "The view format {view:?} is not compatible with texture format {:?}, only \
                 changing srgb-ness is allowed.",
                config.format
            ));
        }
    }
    if !matches!(
        config.color_space,
        wgpu::SurfaceColorSpace::Auto | wgpu::SurfaceColorSpace::Srgb
    ) {
        return Err(format!(
            "Surface does not support the color space {:?} for format {:?}; keel-wgpu presents \
             in Srgb only",
            config.color_space, config.format
        ));
    }
    Ok(())
}

/// `Queue::present`: one last submit moves the frame to `PRESENT` (and
/// consumes its acquire if nothing used it), then keel-hal presents it.
pub(crate) fn present(shared: &Arc<DeviceShared>, detail: &cu::DispatchSurfaceOutputDetail) {
    let Some(frame) = detail
        .as_custom::<KSurfaceOutput>()
        .and_then(|d| d.frame.clone())
    else {
        return shared.report(KeelError::validation("present", "no frame to present"));
    };
    let Some(surface) = frame.surface.clone() else {
        return shared.report(KeelError::validation(
            "present",
            "the texture is not a surface frame",
        ));
    };
    let _order = shared.submit_lock.lock();
    let submitted = crate::queue::submit_locked(shared, |enc, _| {
        let Ok(raw) = frame.raw() else {
            return Vec::new();
        };
        let mut states = frame.states.lock();
        let from = states
            .first()
            .copied()
            .unwrap_or(TextureUses::UNINITIALIZED);
        let barrier = TextureBarrier {
            texture: raw,
            range: wgpu::ImageSubresourceRange::default(),
            usage: StateTransition::new(from, TextureUses::PRESENT),
        };
        // SAFETY: recording outside passes; the frame is in `from`.
        unsafe { enc.transition_textures(&[barrier]) };
        states.iter_mut().for_each(|s| *s = TextureUses::PRESENT);
        vec![frame.clone()]
    });
    if !submitted {
        frame.discard_frame();
        return;
    }
    frame.mark_destroyed();
    let Some(taken) = frame.frame.lock().take() else {
        return shared.report(KeelError::validation(
            "present",
            "the frame was already presented",
        ));
    };
    let Some(raw) = surface.raw() else {
        return;
    };
    // SAFETY: the frame is this surface's, in PRESENT, named by the
    // submit that wrote it last (just above).
    match unsafe { shared.queue().present(raw, taken) } {
        Ok(()) => {}
        Err(keel_hal::SurfaceError::Outdated) => log::info!("keel-wgpu: present: surface outdated"),
        Err(e) => shared.report(KeelError::from_hal("present", &e)),
    }
}
