//! Surfaces. keel-wgpu does not present yet: `create_surface` gives a
//! surface that no adapter supports, whose capabilities are empty and whose
//! `configure` and `get_current_texture` report a validation error (wgpu's
//! custom interface has no way to refuse `create_surface` itself).

use wgpu::custom as cu;

use crate::device::KeelDevice;
use crate::error::KeelError;

/// A `wgpu::Surface` no adapter supports.
#[derive(Debug)]
pub(crate) struct KSurface;

/// The output detail of a frame that never comes.
#[derive(Debug)]
pub(crate) struct KSurfaceOutput;

const WHY: &str = "surfaces are not supported by keel-wgpu yet";

impl cu::SurfaceInterface for KSurface {
    fn get_capabilities(&self, _adapter: &cu::DispatchAdapter) -> wgpu::SurfaceCapabilities {
        wgpu::SurfaceCapabilities::default()
    }

    fn configure(&self, device: &cu::DispatchDevice, _config: &wgpu::SurfaceConfiguration) {
        if let Some(device) = device.as_custom::<KeelDevice>() {
            device
                .handle
                .shared
                .report(KeelError::validation("Surface::configure", WHY));
        }
    }

    fn get_current_texture(
        &self,
    ) -> (
        Option<cu::DispatchTexture>,
        wgpu::SurfaceStatus,
        cu::DispatchSurfaceOutputDetail,
    ) {
        log::error!("keel-wgpu: get_current_texture: {WHY}");
        (
            None,
            wgpu::SurfaceStatus::Validation,
            cu::DispatchSurfaceOutputDetail::custom(KSurfaceOutput),
        )
    }
}

impl cu::SurfaceOutputDetailInterface for KSurfaceOutput {
    fn texture_discard(&self) {}
    fn texture_release(&self) {}
}
