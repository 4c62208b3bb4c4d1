//! The noop instance, its one adapter, what that adapter can do, and
//! opening a device on it.

use std::sync::Arc;

use super::memory::Budget;
use super::{Api, Device, DeviceShared, Queue, Surface};
use crate::{
    AdapterInfo, Backend, Capabilities, DeviceDescriptor, ExposedAdapter, InstanceDescriptor,
    InstanceError, OpenDevice, OpenError,
};

/// The API version the noop adapter reports: (1, 3, 0), keel-hal's
/// baseline (Vulkan 1.3). The noop backend implements no real API; it
/// reports the baseline so code that gates on it treats noop as conforming.
pub const API_VERSION: (u32, u32, u32) = (1, 3, 0);

/// Name (and driver name) of the noop adapter.
pub const ADAPTER_NAME: &str = "keel-hal noop";

/// The noop instance. Creating one always succeeds.
#[derive(Debug)]
pub struct Instance {
    /// The memory budget every device of this instance draws from.
    budget: Arc<Budget>,
}

impl crate::Instance for Instance {
    type A = Api;

    unsafe fn init(desc: &InstanceDescriptor) -> Result<Self, InstanceError> {
        // No runtime to load and no validation layer: the flags change nothing.
        Ok(Self {
            budget: Arc::new(Budget::new(desc.noop_memory_budget)),
        })
    }

    fn backend(&self) -> crate::Backend {
        crate::Backend::Noop
    }

    unsafe fn enumerate_adapters(&self) -> Vec<ExposedAdapter<Api>> {
        vec![ExposedAdapter {
            adapter: Adapter {
                budget: Arc::clone(&self.budget),
            },
            info: adapter_info(),
            capabilities: capabilities(),
        }]
    }

    fn validation_error_count(&self) -> u64 {
        0
    }

    unsafe fn create_surface(
        &self,
        _display: raw_window_handle::RawDisplayHandle,
        _window: raw_window_handle::RawWindowHandle,
    ) -> Result<Surface, InstanceError> {
        // Headless: the handles are not used (see `surface.rs`).
        Ok(Surface::new())
    }

    unsafe fn destroy_surface(&self, surface: Surface) {
        drop(surface);
    }
}

fn adapter_info() -> AdapterInfo {
    AdapterInfo {
        name: ADAPTER_NAME.into(),
        vendor: 0,
        device: 0,
        device_type: wgt::DeviceType::Cpu,
        driver: ADAPTER_NAME.into(),
        driver_info: concat!("keel-hal ", env!("CARGO_PKG_VERSION")).into(),
        api_version: API_VERSION,
        backend: Backend::Noop,
        device_uuid: DEVICE_UUID,
        driver_uuid: DRIVER_UUID,
        device_luid: None,
        device_node_mask: 0,
    }
}

/// The noop adapter's made-up device UUID: the same in every instance and
/// process, as a physical device's is.
const DEVICE_UUID: [u8; 16] = *b"keel-hal noop #0";

/// The noop backend's made-up driver UUID. It names the format of its
/// shared files (`shm.rs`, version 1), as a driver's names what its opaque
/// handles mean: change it with that format.
const DRIVER_UUID: [u8; 16] = *b"keel-noop-shm-v1";

/// What the noop adapter can do, and nothing more:
/// - features: timestamp queries (written from a CPU clock at submit),
///   also inside encoders and passes; push constants (`IMMEDIATES`) and binding
///   arrays (texture, sampler, buffer and storage arrays, partially bound),
///   polygon modes, unclipped depth, `ClampToBorder` address modes (both
///   border-colour features), vertex-stage storage writes, early
///   depth tests, clip distances, primitive and draw indices,
///   dual-source blending, count draws, 64-bit atomics and the format
///   features (32-bit float filtering and blending, Rg11b10Ufloat
///   rendering, Bgra8Unorm storage: WebGPU's guaranteed format features
///   with them), which cost a backend that runs no shader nothing to
///   accept;
/// - of the [`HalFeatures`], only `ACCELERATION_STRUCTURE`: structures are
///   created, sized, built, copied and compacted as bookkeeping (see
///   `acceleration.rs`); there is no `SHADER_EXECUTION`, so no
///   `RAY_QUERY` or `RAY_TRACING_PIPELINE` either: pipelines and passes are
///   checked and recorded, draws, dispatches and ray tracing do nothing;
/// - of the [`HalFeatures`], only the external ones `external.rs` backs
///   with shared files (`EXTERNAL_MEMORY_FD`, `EXTERNAL_MEMORY_HOST`,
///   `EXTERNAL_SEMAPHORE_FD`); in particular no `SHADER_EXECUTION`:
///   pipelines and passes are checked and recorded, draws and dispatches
///   do nothing;
/// - limits: `wgt::Limits::default()`, the WebGPU defaults every backend
///   supports, so code tested on noop does not rely on more than a real
///   adapter gives (noop itself could go higher: its only real limit is
///   the memory budget), plus `max_immediate_size` = 128, the push-constant
///   size every Vulkan device guarantees, and wgt's minimum
///   acceleration-structure limits (`max_blas_primitive_count`,
///   `max_blas_geometry_count`, `max_tlas_instance_count`, one structure
///   binding per stage), wgt's recommended minimum mesh-shader limits
///   (with `EXPERIMENTAL_MESH_SHADER` and its point output: mesh pipelines
///   and draws are checked, nothing runs), and binding arrays of up to
///   1,024 elements;
/// - a timestamp period of 1.0: timestamps are nanoseconds.
pub(crate) fn capabilities() -> Capabilities {
    let (features, hal_features) = crate::features::noop_offers();
    Capabilities {
        // The feature table's noop column.
        features,
        hal_features,
        limits: wgt::Limits {
            max_immediate_size: 128,
            // Binding arrays (the features above) of up to 1,024 elements.
            max_binding_array_elements_per_shader_stage: 1024,
            max_binding_array_sampler_elements_per_shader_stage: 1024,
            ..wgt::Limits::default()
        }
        .using_minimum_supported_acceleration_structure_values()
        .using_recommended_minimum_mesh_shader_values(),
        timestamp_period: 1.0,
        // Noop executes no shaders: it offers no cooperative matrices.
        cooperative_matrix_properties: Vec::new(),
    }
}

/// The noop adapter.
#[derive(Debug)]
pub struct Adapter {
    budget: Arc<Budget>,
}

impl crate::Adapter for Adapter {
    type A = Api;

    unsafe fn open(&self, desc: &DeviceDescriptor) -> Result<OpenDevice<Api>, OpenError> {
        let caps = capabilities();
        let missing = desc.required_features - caps.features;
        if !missing.is_empty() {
            return Err(OpenError::MissingFeatures(missing));
        }
        let missing = desc.required_hal_features - caps.hal_features;
        if !missing.is_empty() {
            return Err(OpenError::MissingCapabilities(missing));
        }
        let limits = match &desc.required_limits {
            Some(requested) => {
                check_limits(requested, &caps.limits)?;
                requested.clone()
            }
            None => caps.limits,
        };

        let shared = Arc::new(DeviceShared {
            // The device's own account, charged to the instance's budget.
            budget: Arc::new(super::memory::Budget::child(&self.budget)),
            features: desc.required_features,
            hal_features: desc.required_hal_features,
            limits,
            counters: crate::HalCounters::default(),
            clock: super::queue::Clock::new(),
            submit_lock: parking_lot::Mutex::new(()),
            next_address: super::acceleration::first_address(),
            allow_no_shader_execution: desc.allow_no_shader_execution,
            lost: Default::default(),
        });
        if desc.allow_no_shader_execution {
            log::info!(
                "noop: device opened with allow_no_shader_execution: pipelines can be created, \
                 but dispatches, draws and ray traces run no shaders"
            );
        }
        Ok(OpenDevice {
            device: Device {
                shared: Arc::clone(&shared),
            },
            queue: Queue { shared },
        })
    }

    fn pipeline_cache_validation_key(&self) -> Option<[u8; 16]> {
        Some(super::PIPELINE_CACHE_KEY)
    }

    fn texture_format_capabilities(
        &self,
        format: wgt::TextureFormat,
    ) -> wgt::TextureFormatFeatures {
        format_features(format, capabilities().features)
    }
    // External memory and semaphores: shared files (external.rs).

    fn external_buffer_capabilities(
        &self,
        _desc: &crate::BufferDescriptor,
        handle_type: crate::ExternalHandleType,
    ) -> crate::ExternalCapabilities {
        super::external::buffer_capabilities(handle_type)
    }

    fn external_texture_capabilities(
        &self,
        desc: &crate::TextureDescriptor,
        handle_type: crate::ExternalHandleType,
    ) -> Result<crate::ExternalCapabilities, crate::DeviceError> {
        Ok(super::external::texture_capabilities(desc, handle_type))
    }

    fn external_semaphore_capabilities(
        &self,
        desc: &crate::ExternalSemaphoreDescriptor,
    ) -> crate::ExternalCapabilities {
        super::external::semaphore_capabilities(desc)
    }

    fn drm_format_modifiers(&self, _format: wgt::TextureFormat) -> Vec<crate::DrmModifierInfo> {
        // No DRM_FORMAT_MODIFIER: noop has no dma-bufs.
        Vec::new()
    }

    unsafe fn surface_capabilities(
        &self,
        _surface: &super::Surface,
    ) -> Result<crate::SurfaceCapabilities, crate::SurfaceError> {
        // Noop surfaces are headless and present anything the adapter can render.
        Ok(super::Surface::capabilities())
    }
}

/// What a format supports on noop: the WebGPU-guaranteed set, except for
/// multi-planar formats, which noop cannot store.
pub(crate) fn format_features(
    format: wgt::TextureFormat,
    device_features: wgt::Features,
) -> wgt::TextureFormatFeatures {
    if format.is_multi_planar_format() {
        return wgt::TextureFormatFeatures {
            allowed_usages: wgt::TextureUsages::empty(),
            flags: wgt::TextureFormatFeatureFlags::empty(),
        };
    }
    let mut features = format.guaranteed_format_features(device_features);
    // The CPU resolves nothing and stores every sample: where a format
    // multisamples at all, every count Vulkan knows up to 16 works.
    use wgt::TextureFormatFeatureFlags as F;
    if features.flags.contains(F::MULTISAMPLE_X4) {
        features.flags |= F::MULTISAMPLE_X2 | F::MULTISAMPLE_X8 | F::MULTISAMPLE_X16;
    }
    features
}

/// Fails with the first limit in `requested` that is better than `allowed`.
fn check_limits(requested: &wgt::Limits, allowed: &wgt::Limits) -> Result<(), OpenError> {
    let mut failure = None;
    requested.check_limits_with_fail_fn(allowed, true, |name, requested, allowed| {
        failure = Some(OpenError::LimitExceeded {
            name,
            requested,
            allowed,
        });
    });
    failure.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Adapter as _, HalFeatures, Instance as _};

    fn adapter() -> ExposedAdapter<Api> {
        // SAFETY: the noop backend loads nothing.
        let instance =
            unsafe { Instance::init(&InstanceDescriptor::default()) }.expect("test fixture");
        // SAFETY: live instance.
        unsafe { instance.enumerate_adapters() }.remove(0)
    }

    #[test]
    fn open_checks_features_and_limits() {
        let exposed = adapter();
        assert_eq!(exposed.info.device_type, wgt::DeviceType::Cpu);
        let open = |desc: &DeviceDescriptor| {
            // SAFETY: one thread.
            unsafe { exposed.adapter.open(desc) }.map(|_| ())
        };
        assert!(open(&DeviceDescriptor::default()).is_ok());
        let desc = DeviceDescriptor {
            required_features: wgt::Features::TIMESTAMP_QUERY
                | wgt::Features::TEXTURE_COMPRESSION_BC,
            ..Default::default()
        };
        assert_eq!(
            open(&desc),
            Err(OpenError::MissingFeatures(
                wgt::Features::TEXTURE_COMPRESSION_BC
            ))
        );
        let desc = DeviceDescriptor {
            required_hal_features: HalFeatures::SHADER_EXECUTION,
            ..Default::default()
        };
        assert_eq!(
            open(&desc),
            Err(OpenError::MissingCapabilities(
                HalFeatures::SHADER_EXECUTION
            ))
        );
        let limits = wgt::Limits {
            max_bind_groups: 1000,
            ..Default::default()
        };
        let desc = DeviceDescriptor {
            required_limits: Some(limits),
            ..Default::default()
        };
        assert!(matches!(
            open(&desc),
            Err(OpenError::LimitExceeded {
                name: "max_bind_groups",
                requested: 1000,
                ..
            })
        ));
    }
}
