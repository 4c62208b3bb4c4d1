//! Headless surfaces. `Instance::create_surface` accepts any window
//! handles (they are not used), and a configured surface hands out CPU
//! textures of the configured format and size: render passes clear them,
//! copies read them, and presenting one only counts a frame
//! ([`Surface::presented_frames`]). Upper layers can so run their
//! acquire/render/present loop on noop.
//!
//! Surface textures belong to their surface: they are charged to the
//! memory budget but not counted in the device's live counters, and
//! presented or discarded textures are kept for the next acquire.

use std::borrow::Borrow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::{Api, Device, DeviceShared, Texture};
use crate::{
    AcquiredSurfaceTexture, DeviceError, Memory, SurfaceCapabilities, SurfaceConfiguration,
    SurfaceError, TextureDescriptor, TextureError,
};

/// Formats a noop surface offers, preferred first.
const FORMATS: [wgt::TextureFormat; 4] = [
    wgt::TextureFormat::Bgra8UnormSrgb,
    wgt::TextureFormat::Rgba8UnormSrgb,
    wgt::TextureFormat::Bgra8Unorm,
    wgt::TextureFormat::Rgba8Unorm,
];

/// A headless surface.
#[derive(Debug, Default)]
pub struct Surface {
    swapchain: Mutex<Option<Swapchain>>,
    presented: AtomicU64,
}

/// The configured state of a surface.
#[derive(Debug)]
struct Swapchain {
    shared: Arc<DeviceShared>,
    config: SurfaceConfiguration,
    /// Textures presented or discarded, ready to be acquired again.
    free: Vec<Texture>,
    /// Textures acquired and not yet given back.
    acquired: u32,
    /// Changes with every `configure`, so textures of an older
    /// configuration are dropped instead of reused.
    generation: u64,
}

/// A texture acquired from a noop surface: a CPU texture.
#[derive(Debug)]
pub struct SurfaceTexture {
    texture: Texture,
    generation: u64,
}

impl Borrow<Texture> for SurfaceTexture {
    fn borrow(&self) -> &Texture {
        &self.texture
    }
}

impl Surface {
    /// A new, unconfigured surface.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// What a noop surface supports: four 8-bit RGBA/BGRA formats (sRGB
    /// first), 1 to 16 textures held at once, any size, every present mode
    /// and alpha mode, and the usages a colour attachment can have.
    pub fn capabilities() -> SurfaceCapabilities {
        SurfaceCapabilities {
            formats: FORMATS.to_vec(),
            maximum_frame_latency: 1..=16,
            current_extent: None,
            usage: wgt::TextureUsages::RENDER_ATTACHMENT
                | wgt::TextureUsages::COPY_SRC
                | wgt::TextureUsages::COPY_DST
                | wgt::TextureUsages::TEXTURE_BINDING,
            present_modes: vec![
                wgt::PresentMode::Fifo,
                wgt::PresentMode::FifoRelaxed,
                wgt::PresentMode::Immediate,
                wgt::PresentMode::Mailbox,
            ],
            composite_alpha_modes: vec![
                wgt::CompositeAlphaMode::Opaque,
                wgt::CompositeAlphaMode::PreMultiplied,
                wgt::CompositeAlphaMode::PostMultiplied,
                wgt::CompositeAlphaMode::Inherit,
            ],
        }
    }

    /// How many textures have been presented on this surface.
    pub fn presented_frames(&self) -> u64 {
        self.presented.load(Ordering::Relaxed)
    }

    /// Takes a texture back from `present` (counting a frame) or `discard`.
    pub(crate) fn give_back(&self, texture: SurfaceTexture, presented: bool) {
        let mut swapchain = self.swapchain.lock();
        let Some(chain) = swapchain.as_mut() else {
            log::error!("noop: a surface texture came back to an unconfigured surface; dropped");
            return;
        };
        chain.acquired = chain.acquired.saturating_sub(1);
        if presented {
            self.presented.fetch_add(1, Ordering::Relaxed);
        }
        if texture.generation == chain.generation && chain.free.try_reserve(1).is_ok() {
            chain.free.push(texture.texture);
        }
    }
}

fn check_config(config: &SurfaceConfiguration) -> Result<(), SurfaceError> {
    let caps = Surface::capabilities();
    let e = config.extent;
    if e.width == 0 || e.height == 0 || e.depth_or_array_layers != 1 {
        return Err(SurfaceError::Unsupported(
            "the extent must be non-zero with one layer",
        ));
    }
    if !caps.formats.contains(&config.format) {
        return Err(SurfaceError::Unsupported(
            "format not offered by the surface",
        ));
    }
    if !caps
        .maximum_frame_latency
        .contains(&config.maximum_frame_latency)
    {
        return Err(SurfaceError::Unsupported(
            "maximum_frame_latency outside 1..=16",
        ));
    }
    if !config.usage.contains(wgt::TextureUsages::RENDER_ATTACHMENT)
        || !caps.usage.contains(config.usage)
    {
        return Err(SurfaceError::Unsupported(
            "usage must include RENDER_ATTACHMENT and stay within the surface's usages",
        ));
    }
    Ok(())
}

impl crate::Surface for Surface {
    type A = Api;

    unsafe fn configure(
        &self,
        device: &Device,
        config: &SurfaceConfiguration,
    ) -> Result<(), SurfaceError> {
        check_config(config)?;
        let mut swapchain = self.swapchain.lock();
        let generation = swapchain.as_ref().map_or(0, |c| c.generation + 1);
        *swapchain = Some(Swapchain {
            shared: Arc::clone(&device.shared),
            config: config.clone(),
            free: Vec::new(),
            acquired: 0,
            generation,
        });
        Ok(())
    }

    unsafe fn unconfigure(&self, _device: &Device) {
        *self.swapchain.lock() = None;
    }

    unsafe fn acquire_texture(
        &self,
        _timeout: Option<Duration>,
    ) -> Result<AcquiredSurfaceTexture<SurfaceTexture>, SurfaceError> {
        let mut swapchain = self.swapchain.lock();
        let Some(chain) = swapchain.as_mut() else {
            log::error!("noop: acquire_texture on an unconfigured surface");
            return Err(SurfaceError::Outdated);
        };
        // Nothing else gives textures back: waiting would never end.
        if chain.acquired >= chain.config.maximum_frame_latency {
            return Err(SurfaceError::Timeout);
        }
        let texture = match chain.free.pop() {
            Some(texture) => texture,
            None => {
                let desc = TextureDescriptor {
                    label: Some("noop surface texture"),
                    size: chain.config.extent,
                    mip_level_count: 1,
                    sample_count: 1,
                    dimension: wgt::TextureDimension::D2,
                    format: chain.config.format,
                    usage: chain.config.usage,
                    memory: Memory::Device,
                    view_formats: &[],
                };
                super::device::new_texture(&chain.shared, &desc).map_err(|e| match e {
                    TextureError::Device(d) => SurfaceError::Device(d),
                    _ => SurfaceError::Device(DeviceError::Unexpected),
                })?
            }
        };
        chain.acquired += 1;
        Ok(AcquiredSurfaceTexture {
            texture: SurfaceTexture {
                texture,
                generation: chain.generation,
            },
            suboptimal: false,
        })
    }

    unsafe fn discard_texture(&self, texture: SurfaceTexture) {
        self.give_back(texture, false);
    }
}
