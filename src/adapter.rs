//! Instance, adapter and device descriptions: what a backend offers and what a caller asks for.

use std::fmt;

/// Which backend an object belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// The CPU-backed noop backend.
    Noop,
    /// The Vulkan backend.
    Vulkan,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Noop => "noop",
            Backend::Vulkan => "vulkan",
        })
    }
}

bitflags::bitflags! {
    /// Instance-wide switches.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct InstanceFlags: u32 {
        /// Turn on the backend's validation (Vulkan: `VK_LAYER_KHRONOS_validation`
        /// with synchronization validation, plus a debug messenger that routes
        /// every message to `log` and counts errors and hazards).
        const VALIDATION = 1 << 0;
        /// Attach debug labels to objects and command buffers.
        const DEBUG = 1 << 1;
        /// With [`InstanceFlags::VALIDATION`]: leave the layer's
        /// synchronization validation off. It is on by default, because
        /// barriers are the caller's contract and hazards between them are
        /// the errors an upper layer most needs to see; it costs CPU time
        /// per recorded command, which this flag saves.
        const NO_SYNC_VALIDATION = 1 << 2;
    }
}

/// Describes an instance. `Default` gives a usable one.
#[derive(Clone, Debug)]
pub struct InstanceDescriptor<'a> {
    /// Application name reported to the driver.
    pub name: &'a str,
    /// Validation and debug switches.
    pub flags: InstanceFlags,
    /// Noop only: bytes of memory its devices may hold before `OutOfMemory`.
    /// `None` is unlimited.
    pub noop_memory_budget: Option<u64>,
}

impl Default for InstanceDescriptor<'_> {
    fn default() -> Self {
        Self {
            name: "keel-hal",
            flags: InstanceFlags::empty(),
            noop_memory_budget: None,
        }
    }
}

impl InstanceDescriptor<'_> {
    /// The default descriptor with `flags`, e.g.
    /// `InstanceDescriptor::with_flags(InstanceFlags::VALIDATION)`.
    pub fn with_flags(flags: InstanceFlags) -> Self {
        Self {
            flags,
            ..Self::default()
        }
    }
}

bitflags::bitflags! {
    /// Capabilities keel-hal reports beyond `wgt::Features`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct HalFeatures: u32 {
        /// The adapter executes shaders (the noop backend does not).
        const SHADER_EXECUTION = 1 << 0;
        /// Acceleration structures (`VK_KHR_acceleration_structure`).
        const ACCELERATION_STRUCTURE = 1 << 1;
        /// Ray queries in shaders (`VK_KHR_ray_query`).
        const RAY_QUERY = 1 << 2;
        /// Ray-tracing pipelines (`VK_KHR_ray_tracing_pipeline`).
        const RAY_TRACING_PIPELINE = 1 << 3;
        /// Export and import of memory as opaque file descriptors.
        const EXTERNAL_MEMORY_FD = 1 << 4;
        /// Export and import of memory as dma-bufs.
        const EXTERNAL_MEMORY_DMA_BUF = 1 << 5;
        /// Import of host allocations (`VK_EXT_external_memory_host`).
        const EXTERNAL_MEMORY_HOST = 1 << 6;
        /// Export and import of semaphores as file descriptors.
        const EXTERNAL_SEMAPHORE_FD = 1 << 7;
        /// Images with explicit DRM format modifiers.
        const DRM_FORMAT_MODIFIER = 1 << 8;
    }
}

/// What an adapter is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterInfo {
    /// Device name, e.g. `llvmpipe (LLVM 19.1.7, 256 bits)`.
    pub name: String,
    /// PCI vendor id (0 where there is none).
    pub vendor: u32,
    /// PCI device id (0 where there is none).
    pub device: u32,
    /// Integrated, discrete, CPU …
    pub device_type: wgt::DeviceType,
    /// Driver name, e.g. `llvmpipe`.
    pub driver: String,
    /// Driver version text, e.g. `Mesa 25.0.7`.
    pub driver_info: String,
    /// API version the adapter supports (Vulkan: major, minor, patch).
    pub api_version: (u32, u32, u32),
    /// The backend.
    pub backend: Backend,
    /// The device's UUID (Vulkan's `VkPhysicalDeviceIDProperties::deviceUUID`):
    /// the same for every API and process on this physical device, so it
    /// matches the adapter to another API's device (CUDA's
    /// `cudaDeviceProp::uuid`) before sharing memory. Noop reports a fixed
    /// made-up one.
    pub device_uuid: [u8; 16],
    /// The driver's UUID (`driverUUID`): opaque fds and other opaque
    /// handles work only between two sides whose driver UUIDs match.
    pub driver_uuid: [u8; 16],
    /// The device's LUID where the platform has them (Windows; Vulkan's
    /// `deviceLUID` when `deviceLUIDValid`), else `None`.
    pub device_luid: Option<[u8; 8]>,
    /// The node mask of the LUID (`deviceNodeMask`; 0 without a LUID).
    pub device_node_mask: u32,
}

/// What an adapter can do.
#[derive(Clone, Debug)]
pub struct Capabilities {
    /// `wgpu-types` features the adapter supports.
    pub features: wgt::Features,
    /// keel-hal capabilities beyond those.
    pub hal_features: HalFeatures,
    /// Limits.
    pub limits: wgt::Limits,
    /// Nanoseconds per timestamp tick.
    pub timestamp_period: f32,
    /// The cooperative-matrix configurations shaders may use (empty
    /// without `EXPERIMENTAL_COOPERATIVE_MATRIX`).
    pub cooperative_matrix_properties: Vec<wgt::CooperativeMatrixProperties>,
}

/// An adapter with its description, as enumeration returns it.
#[derive(Debug)]
pub struct ExposedAdapter<A: crate::Api> {
    /// The adapter, ready to open a device.
    pub adapter: A::Adapter,
    /// What it is.
    pub info: AdapterInfo,
    /// What it can do.
    pub capabilities: Capabilities,
}

/// Describes a device to open. `Default` asks for nothing beyond the baseline.
#[derive(Clone, Debug, Default)]
pub struct DeviceDescriptor<'a> {
    /// Debug label.
    pub label: Option<&'a str>,
    /// `wgpu-types` features to enable; each must be in the adapter's capabilities.
    pub required_features: wgt::Features,
    /// keel-hal capabilities to enable.
    pub required_hal_features: HalFeatures,
    /// Limits to enforce; `None` takes the adapter's.
    pub required_limits: Option<wgt::Limits>,
    /// Lets pipelines be created on an adapter that executes no shaders
    /// (one without [`HalFeatures::SHADER_EXECUTION`]: the noop backend).
    ///
    /// On such an adapter a dispatch, draw or ray trace does nothing, so
    /// `create_compute_pipeline`, `create_render_pipeline` and
    /// `create_ray_tracing_pipeline` return
    /// [`PipelineError::NoShaderExecution`](crate::PipelineError::NoShaderExecution)
    /// unless this is `true`: set it where pipelines only need to exist
    /// (tests of checks, bindings, recording), never where their results
    /// are read. Opening a device with it logs that once. It changes
    /// nothing on an adapter that executes shaders.
    pub allow_no_shader_execution: bool,
}

/// Whether a device may create pipelines: on an adapter without
/// [`HalFeatures::SHADER_EXECUTION`] only when opened with
/// [`DeviceDescriptor::allow_no_shader_execution`]. Every backend's
/// pipeline creation calls it first.
pub(crate) fn check_shader_execution(
    enabled: HalFeatures,
    allow_no_shader_execution: bool,
) -> Result<(), crate::PipelineError> {
    if enabled.contains(HalFeatures::SHADER_EXECUTION) || allow_no_shader_execution {
        Ok(())
    } else {
        Err(crate::PipelineError::NoShaderExecution)
    }
}

/// A freshly opened device and its queue.
#[derive(Debug)]
pub struct OpenDevice<A: crate::Api> {
    /// The device.
    pub device: A::Device,
    /// Its one queue (graphics + compute + transfer).
    pub queue: A::Queue,
}
