//! `wgpu::Instance` and `wgpu::Adapter` on keel-hal's dyn path.

use std::pin::Pin;
use std::sync::Arc;

use keel_hal::dynamic::{BackendChoice, ChosenInstance, DynAdapter};
use wgpu::custom as cu;

use crate::device::{DeviceHandle, KeelDevice};
use crate::queue::KeelQueue;
use crate::shared::DeviceShared;

/// wgpu features keel-wgpu does not (yet) carry through, whatever keel-hal
/// offers: they are never advertised, so a program asking for one gets
/// wgpu's "feature not supported" at `request_device`.
pub(crate) fn unsupported_features() -> wgpu::Features {
    wgpu::Features::EXPERIMENTAL_RAY_QUERY
        | wgpu::Features::EXPERIMENTAL_RAY_TRACING_PIPELINES
        | wgpu::Features::EXPERIMENTAL_RAY_HIT_VERTEX_RETURN
        | wgpu::Features::EXTENDED_ACCELERATION_STRUCTURE_VERTEX_FORMATS
        | wgpu::Features::ACCELERATION_STRUCTURE_BINDING_ARRAY
        | wgpu::Features::EXTERNAL_TEXTURE
        | wgpu::Features::VULKAN_EXTERNAL_MEMORY_FD
        | wgpu::Features::VULKAN_EXTERNAL_MEMORY_WIN32
        | wgpu::Features::VULKAN_EXTERNAL_MEMORY_DMA_BUF
}

/// The keel-hal instance behind a `wgpu::Instance`.
#[derive(Debug)]
pub(crate) struct KeelInstance {
    pub chosen: Option<Arc<ChosenInstance>>,
    pub why_none: String,
}

impl KeelInstance {
    pub(crate) fn create(
        choice: BackendChoice,
        validation: bool,
    ) -> Result<Self, keel_hal::InstanceError> {
        let mut flags = keel_hal::InstanceFlags::empty();
        if validation {
            flags |= keel_hal::InstanceFlags::VALIDATION;
        }
        let desc = keel_hal::InstanceDescriptor {
            name: "keel-wgpu",
            flags,
            ..Default::default()
        };
        let chosen = keel_hal::dynamic::instance(choice, &desc)?;
        log::info!("keel-wgpu: {} ({})", chosen.backend, chosen.reason);
        Ok(Self {
            chosen: Some(Arc::new(chosen)),
            why_none: String::new(),
        })
    }

    fn adapters(&self) -> Vec<KeelAdapter> {
        let Some(chosen) = &self.chosen else {
            return Vec::new();
        };
        // SAFETY: the instance is alive (held by every adapter made here).
        unsafe { (*chosen.instance).enumerate_adapters() }
            .into_iter()
            .map(|exposed| KeelAdapter {
                instance: chosen.clone(),
                adapter: Arc::new(exposed.adapter),
                info: exposed.info,
                capabilities: exposed.capabilities,
            })
            .collect()
    }
}

impl cu::InstanceInterface for KeelInstance {
    fn new(desc: wgpu::InstanceDescriptor) -> Self
    where
        Self: Sized,
    {
        let validation = desc.flags.contains(wgpu::InstanceFlags::VALIDATION);
        match Self::create(BackendChoice::Auto, validation) {
            Ok(instance) => instance,
            Err(e) => Self {
                chosen: None,
                why_none: e.to_string(),
            },
        }
    }

    unsafe fn create_surface(
        &self,
        target: wgpu::SurfaceTargetUnsafe,
    ) -> Result<cu::DispatchSurface, wgpu::CreateSurfaceError> {
        let chosen = self.chosen.as_ref();
        let made = match (chosen, target) {
            (
                Some(chosen),
                wgpu::SurfaceTargetUnsafe::RawHandle {
                    raw_display_handle: Some(display),
                    raw_window_handle: window,
                },
            ) => {
                // SAFETY: wgpu's contract for the target: the handles are
                // valid and outlive the surface.
                match unsafe { chosen.instance.create_surface(display, window) } {
                    Ok(raw) => Some(crate::surface::KSurface::new(chosen.clone(), raw)),
                    Err(e) => {
                        log::error!("keel-wgpu: create_surface: {e}");
                        None
                    }
                }
            }
            _ => {
                log::error!(
                    "keel-wgpu: create_surface needs a raw display and window handle and an instance"
                );
                None
            }
        };
        // wgpu's custom interface cannot build a `CreateSurfaceError`: a
        // surface that could not be made is one no adapter supports, whose
        // configure reports the error.
        Ok(cu::DispatchSurface::custom(
            made.unwrap_or_else(crate::surface::KSurface::unusable),
        ))
    }

    fn request_adapter(
        &self,
        options: &wgpu::RequestAdapterOptions<'_, '_>,
    ) -> Pin<Box<dyn cu::RequestAdapterFuture>> {
        let mut adapters = self.adapters();
        let result = if adapters.is_empty() {
            if !self.why_none.is_empty() {
                log::warn!("keel-wgpu: no instance: {}", self.why_none);
            }
            Err(wgpu::RequestAdapterError::NotFound {
                active_backends: wgpu::Backends::empty(),
                requested_backends: wgpu::Backends::all(),
                supported_backends: wgpu::Backends::all(),
                no_fallback_backends: wgpu::Backends::empty(),
                no_adapter_backends: wgpu::Backends::all(),
                incompatible_surface_backends: wgpu::Backends::empty(),
            })
        } else {
            let preferred = match options.power_preference {
                wgpu::PowerPreference::LowPower => wgpu::DeviceType::IntegratedGpu,
                _ => wgpu::DeviceType::DiscreteGpu,
            };
            let index = adapters
                .iter()
                .position(|a| a.info.device_type == preferred)
                .unwrap_or(0);
            Ok(cu::DispatchAdapter::custom(adapters.swap_remove(index)))
        };
        Box::pin(std::future::ready(result))
    }

    fn poll_all_devices(&self, _force_wait: bool) -> bool {
        // Devices are polled through `Device::poll`; none is tracked here.
        true
    }

    fn wgsl_language_features(&self) -> wgpu::WgslLanguageFeatures {
        use naga::front::wgsl::ImplementedLanguageExtension as E;
        E::all()
            .iter()
            .fold(wgpu::WgslLanguageFeatures::empty(), |acc, e| {
                acc | match e {
                    E::ReadOnlyAndReadWriteStorageTextures => {
                        wgpu::WgslLanguageFeatures::ReadOnlyAndReadWriteStorageTextures
                    }
                    E::Packed4x8IntegerDotProduct => {
                        wgpu::WgslLanguageFeatures::Packed4x8IntegerDotProduct
                    }
                    E::PointerCompositeAccess => wgpu::WgslLanguageFeatures::PointerCompositeAccess,
                }
            })
    }

    fn enumerate_adapters(
        &self,
        _backends: wgpu::Backends,
    ) -> Pin<Box<dyn cu::EnumerateAdapterFuture>> {
        let adapters = self
            .adapters()
            .into_iter()
            .map(cu::DispatchAdapter::custom)
            .collect();
        Box::pin(std::future::ready(adapters))
    }
}

/// `wgpu::Adapter`.
#[derive(Debug)]
pub(crate) struct KeelAdapter {
    instance: Arc<ChosenInstance>,
    adapter: Arc<Box<dyn DynAdapter>>,
    info: keel_hal::AdapterInfo,
    capabilities: keel_hal::Capabilities,
}

impl KeelAdapter {
    /// The keel-hal adapter.
    pub(crate) fn raw(&self) -> &dyn DynAdapter {
        &**self.adapter
    }

    fn wgpu_info(&self) -> wgpu::AdapterInfo {
        let mut info = wgpu::AdapterInfo::new(self.info.device_type, wgpu::Backend::Noop);
        info.name = self.info.name.clone();
        info.vendor = self.info.vendor;
        info.device = self.info.device;
        info.driver = self.info.driver.clone();
        info.driver_info = self.info.driver_info.clone();
        info.backend = match self.info.backend {
            keel_hal::Backend::Vulkan => wgpu::Backend::Vulkan,
            keel_hal::Backend::Noop => wgpu::Backend::Noop,
        };
        info
    }
}

impl cu::AdapterInterface for KeelAdapter {
    fn request_device(
        &self,
        desc: &wgpu::DeviceDescriptor<'_>,
    ) -> Pin<Box<dyn cu::RequestDeviceFuture>> {
        let result = self.open(desc);
        Box::pin(std::future::ready(result))
    }

    fn is_surface_supported(&self, surface: &cu::DispatchSurface) -> bool {
        surface
            .as_custom::<crate::surface::KSurface>()
            .is_some_and(|s| s.supported_by(self))
    }

    fn features(&self) -> wgpu::Features {
        self.capabilities.features - unsupported_features()
    }

    fn limits(&self) -> wgpu::Limits {
        self.capabilities.limits.clone()
    }

    fn downlevel_capabilities(&self) -> wgpu::DownlevelCapabilities {
        wgpu::DownlevelCapabilities::default()
    }

    fn get_info(&self) -> wgpu::AdapterInfo {
        self.wgpu_info()
    }

    fn get_texture_format_features(
        &self,
        format: wgpu::TextureFormat,
    ) -> wgpu::TextureFormatFeatures {
        (**self.adapter).texture_format_capabilities(format)
    }

    fn get_presentation_timestamp(&self) -> wgpu::PresentationTimestamp {
        wgpu::PresentationTimestamp(0)
    }

    fn cooperative_matrix_properties(&self) -> Vec<wgpu::wgt::CooperativeMatrixProperties> {
        self.capabilities.cooperative_matrix_properties.clone()
    }
}

impl KeelAdapter {
    fn open(
        &self,
        desc: &wgpu::DeviceDescriptor<'_>,
    ) -> Result<(cu::DispatchDevice, cu::DispatchQueue), wgpu::RequestDeviceError> {
        let missing = desc.required_features - cu::AdapterInterface::features(self);
        if !missing.is_empty() {
            return Err(wgpu::RequestDeviceError::from_message(format!(
                "Unsupported features were requested: {missing}"
            )));
        }
        // wgpu-core's gate: an experimental feature only where the program
        // opted in (`ExperimentalFeatures::enabled`, an unsafe call).
        let experimental = desc.required_features & wgpu::Features::all_experimental_mask();
        if !experimental.is_empty() && !desc.experimental_features.is_enabled() {
            return Err(wgpu::RequestDeviceError::from_message(format!(
                "Some experimental features, {experimental}, were requested, but experimental \
                 features are not enabled"
            )));
        }
        // The keel-hal device gets what the indirect dispatch check needs
        // on top of the program's limits (`indirect_check.rs`); the
        // program sees, and is held to, its own.
        let runs_shaders = self
            .capabilities
            .hal_features
            .contains(keel_hal::HalFeatures::SHADER_EXECUTION);
        let (hal_limits, check_indirect) = crate::indirect_check::hal_limits(
            &desc.required_limits,
            &self.capabilities.limits,
            runs_shaders,
        );
        let hal_desc = keel_hal::DeviceDescriptor {
            label: desc.label,
            // keel-wgpu zeroes new textures with keel-hal's `clear_texture`
            // whatever the program asked for; the program's own
            // `clear_texture` calls are checked against its features.
            required_features: desc.required_features
                | (self.capabilities.features & wgpu::Features::CLEAR_TEXTURE),
            required_limits: Some(hal_limits),
            // A noop device runs no shaders; wgpu programs expect to know.
            allow_no_shader_execution: true,
            ..Default::default()
        };
        // SAFETY: the adapter and its instance are alive (held by `self`).
        let open = unsafe { (**self.adapter).open(&hal_desc) }
            .map_err(|e| wgpu::RequestDeviceError::from_message(format!("keel-wgpu: {e}")))?;
        // SAFETY: the device is new; its fence is destroyed with it.
        let fence = unsafe { (*open.device).create_fence() }
            .map_err(|e| wgpu::RequestDeviceError::from_message(format!("keel-wgpu: {e}")))?;
        let shared = Arc::new(
            DeviceShared::new(
                open.device,
                open.queue,
                fence,
                desc.required_features,
                desc.required_limits.clone(),
                self.wgpu_info(),
                self.instance.clone(),
            )
            .with_indirect_check(check_indirect),
        );
        let handle = Arc::new(DeviceHandle { shared });
        Ok((
            cu::DispatchDevice::custom(KeelDevice {
                handle: handle.clone(),
            }),
            cu::DispatchQueue::custom(KeelQueue { handle }),
        ))
    }
}
