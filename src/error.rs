//! Typed errors. Every fallible hal call returns one of these; none panics.
//!
//! [`DeviceError`] is the common core (out of memory, device lost, unexpected
//! driver answer); each area adds the cheap-to-check mistakes it detects and
//! wraps `DeviceError` through `From`.

use crate::Memory;

/// A failure of the device itself, shared by every area.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    /// Host or device memory ran out (or the noop backend's budget did).
    #[error("out of memory")]
    OutOfMemory,
    /// The device was lost. Unrecoverable: drop everything and reopen.
    #[error("device lost")]
    Lost,
    /// The driver answered in a way the hal did not expect.
    #[error("unexpected driver error")]
    Unexpected,
    /// The dyn path was handed a resource created by another backend.
    #[error("a resource from another backend was passed to this device")]
    ForeignResource,
    /// The caller broke a life-cycle rule the hal checks (for one,
    /// `end_encoding` without `begin_encoding`); the string says which.
    #[error("invalid use: {0}")]
    InvalidState(&'static str),
}

/// Failure to create an instance.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InstanceError {
    /// The backend's runtime (for Vulkan: the loader) could not be loaded.
    #[error("backend not available: {0}")]
    NotAvailable(String),
    /// A layer or extension the descriptor demands is missing.
    #[error("missing instance layer or extension: {0}")]
    MissingExtension(String),
    /// The driver failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
}

/// Failure to open a device on an adapter.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    /// The adapter lacks requested `wgpu-types` features.
    #[error("the adapter does not support the requested features {0}")]
    MissingFeatures(wgt::Features),
    /// The adapter lacks requested keel-hal capabilities.
    #[error(
        "the adapter does not have the requested capabilities {}",
        crate::validate::flag_names(*.0)
    )]
    MissingCapabilities(crate::HalFeatures),
    /// A requested limit exceeds what the adapter supports.
    #[error("requested limit {name} = {requested} exceeds the adapter's {allowed}")]
    LimitExceeded {
        /// Name of the limit (field name in `wgt::Limits`).
        name: &'static str,
        /// Value requested.
        requested: u64,
        /// Value the adapter supports.
        allowed: u64,
    },
    /// The adapter does not meet keel-hal's baseline (for Vulkan: 1.3).
    #[error("adapter unsupported: {0}")]
    Unsupported(String),
    /// The driver failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
}

/// Failure to create a buffer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BufferError {
    /// Size zero is not a buffer.
    #[error("buffer size is 0: a buffer needs at least 1 byte (up to max_buffer_size)")]
    ZeroSize,
    /// Larger than the device's `max_buffer_size`.
    #[error("buffer size {size} exceeds the device's max_buffer_size {max}")]
    TooLarge {
        /// Requested size in bytes.
        size: u64,
        /// The device's `max_buffer_size`.
        max: u64,
    },
    /// `MAP_READ`/`MAP_WRITE` usage asked of memory the CPU cannot map.
    #[error(
        "map usage {} needs mappable memory (Memory::Upload or Memory::Readback), not {memory:?}",
        crate::validate::flag_names(*.usage)
    )]
    MapUsageNeedsHostMemory {
        /// The map usages requested (`MAP_READ`, `MAP_WRITE` or both).
        usage: wgt::BufferUsages,
        /// The memory kind requested.
        memory: Memory,
    },
    /// No memory type satisfies the request (e.g. no HOST_VISIBLE|HOST_COHERENT type).
    #[error("no memory type fits {memory:?}")]
    NoSuitableMemory {
        /// The memory kind requested.
        memory: Memory,
    },
    /// External memory could not be made, exported or imported.
    #[error(transparent)]
    External(#[from] ExternalError),
    /// The driver failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
}

/// Failure to create a texture or texture view.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TextureError {
    /// A dimension of zero.
    #[error("texture extent {0:?} has a zero dimension")]
    ZeroExtent(wgt::Extent3d),
    /// Larger than the device's limit for this dimension.
    #[error(
        "texture extent {}x{}x{} exceeds {limit} = {max}",
        extent.width,
        extent.height,
        extent.depth_or_array_layers
    )]
    TooLarge {
        /// Requested extent.
        extent: wgt::Extent3d,
        /// The limit that was exceeded: a `wgt::Limits` field name (e.g.
        /// `"max_texture_dimension_2d"`), or what else bounds it (the height
        /// of a 1D texture, the format's image properties on this adapter).
        limit: &'static str,
        /// Its value.
        max: u32,
    },
    /// Mip count is zero or more than the extent allows.
    #[error("mip level count {requested} is not in 1..={max}")]
    InvalidMipCount {
        /// Requested mip level count.
        requested: u32,
        /// The most the extent allows.
        max: u32,
    },
    /// Sample count is not 1, 2, 4, 8, 16, 32 or 64; above 1 on a texture
    /// that is not 2D, has more than one mip level or has storage usage; or
    /// not supported by the format on this adapter.
    #[error("sample count {count} is not allowed: {reason}")]
    InvalidSampleCount {
        /// The sample count asked for.
        count: u32,
        /// Which rule it breaks, and what is allowed.
        reason: &'static str,
    },
    /// The format cannot be used with this usage or dimension on this adapter.
    #[error(
        "format {format:?} does not support usage {} on this device",
        crate::validate::flag_names(*.usage)
    )]
    UnsupportedFormat {
        /// The format.
        format: wgt::TextureFormat,
        /// The usage requested.
        usage: wgt::TextureUsages,
    },
    /// Textures cannot use this memory kind (mapped textures are not supported).
    #[error("textures cannot live in {0:?} memory: only Memory::Device or Memory::External")]
    UnsupportedMemory(Memory),
    /// A multi-planar texture (NV12, P010) that breaks their rules: 2D, one
    /// mip level, layer and sample, an even width and height, sampled and
    /// copied only.
    #[error("multi-planar texture: {asked}; allowed: {allowed}")]
    InvalidPlanar {
        /// What the description asks, with its values.
        asked: String,
        /// What multi-planar textures allow.
        allowed: &'static str,
    },
    /// A view's mip levels or array layers lie outside the texture, or are none.
    #[error(
        "view {what} {} are outside the texture's 0..{total}",
        range_text(*.base, *.count)
    )]
    InvalidRange {
        /// `"mip levels"` or `"array layers"`.
        what: &'static str,
        /// The first one asked for.
        base: u32,
        /// How many were asked for (`None`: to the end).
        count: Option<u32>,
        /// How many the texture has.
        total: u32,
    },
    /// A view of an aspect the texture's format lacks (the depth aspect of
    /// a colour texture, for one).
    #[error("format {format:?} has no {aspect:?} aspect")]
    InvalidAspect {
        /// The aspect asked for.
        aspect: wgt::TextureAspect,
        /// The texture's format.
        format: wgt::TextureFormat,
    },
    /// A view's dimension, layer count or format is incompatible with the
    /// texture, or the texture has no usage a view serves.
    #[error("view is incompatible with the texture: {asked}; allowed: {allowed}")]
    IncompatibleView {
        /// What the view (or its texture) asks, with its values.
        asked: String,
        /// What the texture and device allow, with their values.
        allowed: String,
    },
    /// A texture's view format (`TextureDescriptor::view_formats`) differs
    /// from its format in more than sRGB-ness.
    #[error(
        "view format {view_format:?} of a {format:?} texture differs in more than sRGB-ness: \
         allowed are {format:?} and its sRGB or linear counterpart"
    )]
    IncompatibleViewFormat {
        /// The texture's format.
        format: wgt::TextureFormat,
        /// The view format asked for.
        view_format: wgt::TextureFormat,
    },
    /// The command needs a feature the device was not opened with
    /// (`clear_texture` needs `CLEAR_TEXTURE`).
    #[error(
        "feature {feature} is not enabled on this device (enabled: {})",
        features_text(*.enabled)
    )]
    MissingFeature {
        /// The feature needed.
        feature: wgt::Features,
        /// The features the device was opened with.
        enabled: wgt::Features,
    },
    /// The texture lacks a usage the command needs (`clear_texture`
    /// needs `COPY_DST`).
    #[error(
        "the texture needs usage {} and has {}",
        crate::validate::flag_names(*.needed),
        crate::validate::flag_names(*.usage)
    )]
    MissingUsage {
        /// The usage needed.
        needed: wgt::TextureUsages,
        /// The usages the texture was created with.
        usage: wgt::TextureUsages,
    },
    /// `clear_texture` of a block-compressed or multi-planar format: zero
    /// those by copying zeros from a buffer (`copy_buffer_to_texture`).
    #[error(
        "clear_texture cannot clear {0:?}: block-compressed and multi-planar textures are \
         zeroed with copy_buffer_to_texture"
    )]
    NotClearable(wgt::TextureFormat),
    /// No memory type satisfies the request.
    #[error("no memory type fits the texture")]
    NoSuitableMemory,
    /// External memory could not be made, exported or imported.
    #[error(transparent)]
    External(#[from] ExternalError),
    /// The driver failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
}

/// Failure to create a sampler.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SamplerError {
    /// Anisotropy clamp of zero, or above 1 without linear filtering everywhere.
    #[error(
        "anisotropy clamp {0} is invalid: it must be at least 1, and above 1 only with \
         linear min, mag and mipmap filters on an adapter with anisotropic filtering"
    )]
    InvalidAnisotropy(u16),
    /// LOD clamp range is reversed, negative or NaN. The bounds are kept as
    /// their bits (`f32::to_bits`) so that the error stays `Eq`; the
    /// message prints them as numbers.
    #[error(
        "LOD clamp {}..{} is invalid: it must satisfy 0 <= start <= end",
        f32::from_bits(*.start_bits),
        f32::from_bits(*.end_bits)
    )]
    InvalidLodClamp {
        /// `lod_clamp.start.to_bits()`.
        start_bits: u32,
        /// `lod_clamp.end.to_bits()`.
        end_bits: u32,
    },
    /// The sampler needs a feature the device was not opened with
    /// (`ClampToBorder` needs `ADDRESS_MODE_CLAMP_TO_BORDER`, or
    /// `ADDRESS_MODE_CLAMP_TO_ZERO` with the `Zero` border colour).
    #[error("{what} needs {feature:?}, which this device was not opened with")]
    MissingFeature {
        /// What needs it.
        what: &'static str,
        /// The feature.
        feature: wgt::Features,
    },
    /// The driver failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
}

/// Failure to create a query set.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QuerySetError {
    /// Zero queries, or more than [`crate::MAX_QUERIES`].
    #[error("query count {0} is not in 1..={max}", max = crate::MAX_QUERIES)]
    InvalidCount(u32),
    /// The query type needs a feature the device was not opened with.
    #[error(
        "feature {feature} is not enabled on this device (enabled: {})",
        features_text(*.enabled)
    )]
    MissingFeature {
        /// The feature the query type needs.
        feature: wgt::Features,
        /// The features the device was opened with.
        enabled: wgt::Features,
    },
    /// A pipeline-statistics set that counts no statistic.
    #[error("a pipeline-statistics query set must count at least one statistic")]
    NoStatistics,
    /// The driver failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
}

/// Failure to make a pipeline cache.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PipelineCacheError {
    /// The device was not opened with `PIPELINE_CACHE`.
    #[error(
        "feature {feature} is not enabled on this device (enabled: {})",
        features_text(*.enabled)
    )]
    MissingFeature {
        /// `PIPELINE_CACHE`.
        feature: wgt::Features,
        /// The features the device was opened with.
        enabled: wgt::Features,
    },
    /// The data is not a pipeline cache of this adapter and driver (and no
    /// fallback was asked for); the reason says which check it failed.
    #[error("pipeline cache data refused: {0}")]
    Invalid(&'static str),
    /// The driver failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
}

/// Failure to map a buffer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MapError {
    /// The buffer lives in memory the CPU cannot see.
    #[error("buffer in {0:?} memory cannot be mapped")]
    NotMappable(Memory),
    /// The driver failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
}

/// A typed read or write of a mapping ([`BufferMapping::write_slice`](crate::BufferMapping::write_slice),
/// [`BufferMapping::read_vec`](crate::BufferMapping::read_vec)) that would leave the mapping.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{len} bytes at offset {offset} do not fit in a mapping of {size} bytes")]
pub struct MappedRangeError {
    /// Byte offset asked for.
    pub offset: u64,
    /// Bytes asked for (`u64::MAX` when the count overflows).
    pub len: u64,
    /// Size of the mapping.
    pub size: u64,
}

/// Failure to create, export or import external memory or semaphores.
///
/// Whatever the failure, an imported handle was consumed (its fd closed).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExternalError {
    /// The adapter or device cannot do this (the extension is missing or not
    /// enabled, or the capability query says no for this description).
    #[error("{handle}: {reason}")]
    Unsupported {
        /// The handle type asked for.
        handle: &'static str,
        /// Why it is not supported.
        reason: &'static str,
    },
    /// A host pointer or size is not a multiple of the adapter's minimum
    /// imported host pointer alignment.
    #[error("{what} {value:#x} is not a multiple of the required alignment {alignment:#x}")]
    Misaligned {
        /// `"pointer"` or `"size"`.
        what: &'static str,
        /// The misaligned value.
        value: u64,
        /// The alignment required.
        alignment: u64,
    },
    /// The imported memory is smaller than the resource needs: for a
    /// buffer, its `desc.size` (the same number on every backend).
    #[error("imported memory of {size} bytes is smaller than the {required} bytes needed")]
    TooSmall {
        /// Size of the imported memory.
        size: u64,
        /// Size the resource needs.
        required: u64,
    },
    /// The imported memory holds the buffer's size but not what the driver
    /// asks for it (Vulkan's memory requirements, which round the size up):
    /// import at least `required` bytes.
    #[error(
        "imported memory of {size} bytes holds the buffer, but the driver's memory \
         requirement for it is {required} bytes"
    )]
    BelowDriverRequirement {
        /// Size of the imported memory.
        size: u64,
        /// The driver's memory requirement for the resource.
        required: u64,
    },
    /// The driver rejected the handle (`VK_ERROR_INVALID_EXTERNAL_HANDLE`):
    /// not a handle of this type, or from an incompatible device or driver.
    #[error("the driver rejected the external handle")]
    InvalidHandle,
    /// The resource was not created exportable as this handle type.
    #[error("the resource was not created for export as {0}")]
    NotExportable(&'static str),
    /// No memory type fits both the handle and the resource.
    #[error("no memory type fits both the external handle and the resource")]
    NoSuitableMemory,
    /// A host operation that needs a timeline semaphore (reading its value,
    /// signalling or waiting for it from the host) on a binary one.
    #[error(
        "{0}: the semaphore is binary; only timeline semaphores have a value the host can use"
    )]
    NotTimeline(&'static str),
    /// A host signal of a timeline semaphore with a value not above its
    /// current one (a timeline only moves forward).
    #[error("cannot signal the semaphore with {value}: its value is already {current}")]
    ValueNotIncreasing {
        /// The value asked for.
        value: u64,
        /// The semaphore's value when asked.
        current: u64,
    },
    /// The driver failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
}

/// Failure to create a bind group layout, bind group or pipeline layout.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BindingError {
    /// A binding type the adapter or backend cannot express.
    #[error("binding {binding}: {reason}")]
    Unsupported {
        /// The binding number.
        binding: u32,
        /// Why.
        reason: &'static str,
    },
    /// Two layout entries share a binding number.
    #[error("binding {0} appears twice in the layout")]
    DuplicateBinding(u32),
    /// A binding of the layout has no entry in the bind group.
    #[error("binding {0} of the layout has no entry")]
    MissingBinding(u32),
    /// An entry names a binding the layout lacks.
    #[error("binding {0} is not in the layout")]
    UnknownBinding(u32),
    /// An entry's resource is not of the layout's binding type.
    #[error("binding {binding}: {got} given; the layout expects {expected}")]
    WrongType {
        /// The binding number.
        binding: u32,
        /// What the layout expects.
        expected: &'static str,
        /// What the entry gave (`"a sampler"`, `"a bottom-level acceleration
        /// structure"`, …).
        got: &'static str,
    },
    /// An array entry has the wrong number of elements.
    #[error("binding {binding}: {got} elements, layout says {expected}")]
    WrongCount {
        /// The binding number.
        binding: u32,
        /// Elements given.
        got: usize,
        /// Elements the layout declares.
        expected: u32,
    },
    /// A buffer range runs past the end of its buffer, is empty, is
    /// misaligned, or is longer or shorter than the limits and layout allow.
    #[error("binding {binding}: buffer range {offset}..{} {reason}", offset.saturating_add(*size))]
    InvalidBufferRange {
        /// The binding number.
        binding: u32,
        /// Offset of the range.
        offset: u64,
        /// Size of the range.
        size: u64,
        /// Size of the buffer.
        buffer_size: u64,
        /// What is wrong with it, and what is allowed.
        reason: String,
    },
    /// A resource lacks the usage its binding needs (a buffer without
    /// `UNIFORM` for a uniform binding, a view of a texture without
    /// `TEXTURE_BINDING` for a sampled one, …).
    #[error("binding {binding}: the resource needs {needed} usage; it has {has}")]
    MissingUsage {
        /// The binding number.
        binding: u32,
        /// The usage the binding needs.
        needed: &'static str,
        /// The usages the resource has.
        has: String,
    },
    /// A view's sample type, format, dimension, sample count or aspect, or
    /// a sampler's kind, does not fit the binding.
    #[error("binding {binding}: {property} is {got}; the layout needs {expected}")]
    IncompatibleResource {
        /// The binding number.
        binding: u32,
        /// What does not fit (`"sample type"`, `"view dimension"`, …).
        property: &'static str,
        /// What the layout allows.
        expected: String,
        /// What the resource has.
        got: String,
    },
    /// More bind group layouts, dynamic buffers or push-constant bytes
    /// than the limits allow, or a binding number past them.
    #[error("{what} is {requested}, above {limit} = {allowed}")]
    LimitExceeded {
        /// What was counted (`"bind group layouts"`, `"push-constant range end"`, …).
        what: &'static str,
        /// The `wgt::Limits` field that bounds it.
        limit: &'static str,
        /// The value asked for.
        requested: u64,
        /// The most the limit allows.
        allowed: u64,
    },
    /// A push-constant range that is empty, not 4-byte aligned, without
    /// stages, or naming a stage another range names.
    #[error(
        "push-constant range {}..{} for stages {}: {reason}",
        range.start,
        range.end,
        crate::validate::flag_names(*.stages)
    )]
    InvalidPushConstantRange {
        /// The range asked for, in bytes.
        range: std::ops::Range<u32>,
        /// Its stages.
        stages: wgt::ShaderStages,
        /// Which rule it breaks.
        reason: &'static str,
    },
    /// The driver failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
}

/// Failure to create a shader module.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShaderError {
    /// WGSL that does not parse. `line` and `column` are 1-based.
    #[error("{line}:{column}: {message}")]
    Parse {
        /// naga's message.
        message: String,
        /// Line of the first error.
        line: u32,
        /// Column of the first error.
        column: u32,
    },
    /// A module that naga's validator rejects (position 0:0 when unknown).
    #[error("{line}:{column}: validation: {message}")]
    Validation {
        /// naga's message, with its chain of causes.
        message: String,
        /// Line of the first span, 0 when none.
        line: u32,
        /// Column of the first span, 0 when none.
        column: u32,
    },
    /// A module that is valid but uses what this device does not support:
    /// `needed` are the shader capabilities it lacks (naga's names: e.g.
    /// `MULTISAMPLED_SHADING` for `@builtin(sample_index)`, `SUBGROUP`),
    /// `available` what the device has
    /// ([`Device::shader_capabilities`](crate::Device::shader_capabilities)).
    #[error(
        "{line}:{column}: the shader needs {needed:?}, which this device does not support \
         (it has {available:?}): {message}"
    )]
    MissingCapabilities {
        /// Capabilities the module needs and the device lacks.
        needed: naga::valid::Capabilities,
        /// The device's capabilities.
        available: naga::valid::Capabilities,
        /// naga's message, with its chain of causes.
        message: String,
        /// Line of the first span, 0 when none.
        line: u32,
        /// Column of the first span, 0 when none.
        column: u32,
    },
    /// naga could not translate the module for this backend.
    #[error("translation failed: {0}")]
    Translation(String),
    /// SPIR-V that fails the structural check.
    #[error("invalid SPIR-V: {0}")]
    InvalidSpirV(&'static str),
    /// SPIR-V that naga's SPIR-V front end cannot read: malformed (e.g. an
    /// `OpEntryPoint` naming no function), or using something the front end
    /// does not support (e.g. ray-tracing stages, a capability it does not
    /// know). SPIR-V the caller vouches for can be passed as
    /// [`ShaderSource::SpirVUnchecked`](crate::ShaderSource::SpirVUnchecked).
    #[error("SPIR-V not accepted by naga's front end: {0}")]
    SpirVParse(String),
    /// The backend cannot use this kind of source.
    #[error("unsupported shader source: {0}")]
    Unsupported(&'static str),
    /// The source needs a feature the device was not opened with
    /// (unchecked SPIR-V needs `PASSTHROUGH_SHADERS`).
    #[error("{what} needs {feature}, which this device was not opened with")]
    MissingFeature {
        /// What needs it.
        what: &'static str,
        /// The feature.
        feature: wgt::Features,
    },
    /// The module uses a cooperative matrix that no configuration the
    /// device offers fits (`Capabilities::cooperative_matrix_properties`):
    /// role A is M × K, B is K × N, C M × N.
    #[error(
        "a {rows}×{columns} cooperative matrix of {scalar:?} in role {role:?} fits no \
         configuration the device offers ({offered:?})"
    )]
    UnsupportedCooperativeMatrix {
        /// The matrix's role.
        role: naga::CooperativeRole,
        /// Its rows.
        rows: u32,
        /// Its columns.
        columns: u32,
        /// Its element type.
        scalar: naga::Scalar,
        /// What the device offers.
        offered: Vec<wgt::CooperativeMatrixProperties>,
    },
    /// The driver failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
}

/// Failure to create a pipeline.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PipelineError {
    /// The module has no entry point of that name for that stage.
    #[error("no {stage:?} entry point named {name:?}")]
    EntryPoint {
        /// The stage.
        stage: naga::ShaderStage,
        /// The name asked for.
        name: String,
    },
    /// The shader uses a binding or push constants the layout does not provide, or with another type.
    #[error("shader interface does not match the layout: {0}")]
    InterfaceMismatch(String),
    /// A fixed-function setting the adapter or backend does not support.
    #[error("unsupported pipeline state: {0}")]
    Unsupported(String),
    /// A shader group, or a shader binding table's entry, names a stage or
    /// group that does not exist or is of the wrong kind.
    #[error("shader group {group}: {reason}")]
    InvalidShaderGroup {
        /// Index of the group (in the pipeline's groups).
        group: u32,
        /// What is wrong.
        reason: &'static str,
    },
    /// An entry point needs a device feature the device does not have (or
    /// was not opened with), e.g. a fragment shader that writes a storage
    /// buffer on a device without `fragmentStoresAndAtomics`.
    #[error("{stage:?} entry point {name:?}: {what} needs the device feature {feature}, which this device lacks")]
    MissingShaderFeature {
        /// The entry point's stage.
        stage: naga::ShaderStage,
        /// The entry point's name.
        name: String,
        /// What in the shader needs the feature.
        what: String,
        /// The feature: a `wgpu-types` feature's name when the device can
        /// be opened with it (`VERTEX_WRITABLE_STORAGE`), else the Vulkan
        /// one the adapter lacks (`fragmentStoresAndAtomics`).
        feature: &'static str,
    },
    /// Pipeline state that needs a `wgpu-types` feature the device was not
    /// opened with (e.g. polygon mode `Line` without `POLYGON_MODE_LINE`).
    #[error("{what} needs the feature {feature:?}, which the device was not opened with")]
    MissingFeature {
        /// What in the description needs it.
        what: &'static str,
        /// The feature.
        feature: wgt::Features,
    },
    /// A compute, render or ray-tracing pipeline was asked of an adapter
    /// that executes no shaders (the noop backend), on a device not opened
    /// with `DeviceDescriptor::allow_no_shader_execution`: its dispatches,
    /// draws and traces would silently do nothing.
    #[error(
        "the adapter executes no shaders: pipelines would do nothing (open the device with \
         DeviceDescriptor::allow_no_shader_execution where they only need to exist)"
    )]
    NoShaderExecution,
    /// A stage's value for a pipeline-overridable constant is refused.
    #[error("{stage:?} entry point {entry_point:?}: pipeline constant {name:?}: {problem}")]
    Constant {
        /// The stage.
        stage: naga::ShaderStage,
        /// Its entry point.
        entry_point: String,
        /// The constant's identifier as given (or as the module names it);
        /// empty where naga names none.
        name: String,
        /// What is wrong.
        problem: ConstantProblem,
    },
    /// The driver failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
}

/// Why a pipeline-overridable constant's value is refused
/// ([`PipelineError::Constant`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConstantProblem {
    /// The module declares no override with this identifier (its `@id`
    /// when it has one, else its name).
    #[error("the module declares no override with this identifier (its @id, else its name)")]
    NotDeclared,
    /// The entry point uses an override that has no default, and no value
    /// was given.
    #[error("the override has no default and no value was given")]
    Missing,
    /// NaN or an infinity for a numeric override.
    #[error("the value is not finite")]
    NotFinite,
    /// The value does not fit the override's type.
    #[error("the value does not fit the override's type {ty}")]
    OutOfRange {
        /// The type, in WGSL.
        ty: &'static str,
    },
    /// A value with a fraction for an integer override: the hal takes the
    /// values its types hold exactly (WebGPU's truncation is the upper
    /// layer's conversion to make before).
    #[error("the value {value} has a fraction; the override's type {ty} holds integers only")]
    NotAnInteger {
        /// The value given.
        value: String,
        /// The type, in WGSL.
        ty: &'static str,
    },
    /// Values are given to WGSL and naga modules; this stage's module is
    /// SPIR-V.
    #[error("pipeline constants are given to WGSL and naga modules; this module is SPIR-V")]
    SpirV,
    /// The module with these values is invalid (naga's message: e.g. a
    /// workgroup size that is not positive).
    #[error("the module with these values is invalid: {0}")]
    Invalid(String),
}

/// Failure of a surface operation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SurfaceError {
    /// The surface changed (resize): reconfigure it.
    #[error("surface is outdated; reconfigure it")]
    Outdated,
    /// The surface is gone: recreate it.
    #[error("surface lost")]
    Lost,
    /// No texture became available within the timeout.
    #[error("timed out acquiring a surface texture")]
    Timeout,
    /// The configuration is not supported by the surface.
    #[error("unsupported surface configuration: {0}")]
    Unsupported(&'static str),
    /// The driver failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
}

/// Failure of an acceleration-structure operation.
///
/// Every check that needs no driver is written once
/// (`src/validate/acceleration.rs`) and run in the same order by every
/// backend, so a misuse is the same error on noop and on Vulkan.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AccelerationStructureError {
    /// The device, or keel-hal, does not do what was asked (acceleration
    /// structures on a device opened without them, a build flag keel-hal
    /// does not support, …).
    #[error("{what} is not supported: {allowed}")]
    Unsupported {
        /// What was asked.
        what: &'static str,
        /// What is allowed instead.
        allowed: &'static str,
    },
    /// More of something than the device's limit allows.
    #[error("{given} {what} exceed {limit} = {max}")]
    LimitExceeded {
        /// What was counted (`"geometries"`, `"primitives"`, `"instances"`,
        /// `"bytes"`, `"structures"`).
        what: &'static str,
        /// The limit: a `wgt::Limits` field name, or what else bounds it.
        limit: &'static str,
        /// How many were asked for.
        given: u64,
        /// The most allowed.
        max: u64,
    },
    /// A triangle geometry's vertex format is not one acceleration
    /// structures take on this device.
    #[error("{}", vertex_format_text(*.geometry, *.format, *.extended))]
    UnsupportedVertexFormat {
        /// Index of the geometry in the build entries.
        geometry: usize,
        /// The format given.
        format: wgt::VertexFormat,
        /// Whether the device has
        /// `Features::EXTENDED_ACCELERATION_STRUCTURE_VERTEX_FORMATS`.
        extended: bool,
    },
    /// A structure of zero bytes was asked for.
    #[error(
        "an acceleration structure of 0 bytes: its size must be at least 1 (the size query's \
         acceleration_structure_size)"
    )]
    ZeroSize,
    /// The structure is smaller than the build (or copy) needs.
    #[error("structure of {size} bytes is smaller than the {required} bytes needed")]
    TooSmall {
        /// Bytes needed (the size query's answer, or a clone's source size).
        required: u64,
        /// Bytes the structure has.
        size: u64,
    },
    /// The scratch range does not serve the build: its offset is not a
    /// multiple of `alignment` (checked first), or fewer than `required`
    /// bytes follow it.
    #[error("{}", scratch_text(*.offset, *.available, *.required, *.alignment))]
    Scratch {
        /// The scratch offset given.
        offset: u64,
        /// Bytes of the scratch buffer from the offset.
        available: u64,
        /// Bytes the build (or update) needs.
        required: u64,
        /// What the offset must be a multiple of: the adapter's
        /// `minAccelerationStructureScratchOffsetAlignment` (256 on noop).
        alignment: u64,
    },
    /// Bottom-level geometry for a top-level structure, or the reverse; a
    /// copy between structures of different kinds; a compacted-size read of
    /// a top-level structure.
    #[error("{what}: {given:?} given where {expected:?} is needed")]
    WrongKind {
        /// What was of the wrong kind (`"build entries"`, `"copy destination"`, …).
        what: &'static str,
        /// The kind it has.
        given: crate::AccelerationStructureKind,
        /// The kind the operation needs.
        expected: crate::AccelerationStructureKind,
    },
    /// A build flag the operation needs is missing (compaction without
    /// `ALLOW_COMPACTION`, update without `ALLOW_UPDATE`).
    #[error("the structure was not built with {0}")]
    MissingFlag(&'static str),
    /// A build entry without its buffer (`None` where the build reads one).
    #[error("build input missing: {0} is None; a build needs it")]
    MissingInput(StructureBuffer),
    /// An update without a source structure.
    #[error(
        "an update needs source_acceleration_structure (a structure built with ALLOW_UPDATE); \
         None was given"
    )]
    MissingSource,
    /// A buffer lacks the usage its role needs.
    #[error(
        "{role} has usage {}; it needs one of {}",
        crate::validate::flag_names(*.usage),
        crate::validate::flag_names(*.allowed)
    )]
    BufferUsage {
        /// What the buffer serves as.
        role: StructureBuffer,
        /// The usages it was created with.
        usage: wgt::BufferUsages,
        /// The usages that would do (any one of them).
        allowed: wgt::BufferUsages,
    },
    /// A range placed in a buffer (a structure, compacted sizes, a build
    /// input) whose offset is not a multiple of `alignment` (checked
    /// first), or that runs past the buffer's end.
    #[error("{}", range_text_of(*.role, *.offset, *.size, *.buffer_size, *.alignment))]
    InvalidPlacement {
        /// What the range holds.
        role: StructureBuffer,
        /// The offset given.
        offset: u64,
        /// Bytes from the offset the range needs.
        size: u64,
        /// Bytes of the buffer.
        buffer_size: u64,
        /// What the offset must be a multiple of.
        alignment: u64,
    },
    /// A stride that is not allowed (vertex strides: a multiple of the
    /// format's component size; box strides: a multiple of 8, at least 24).
    #[error(
        "{role}: stride {stride} is not allowed; allowed are multiples of {multiple_of} in \
         {min}..={max}"
    )]
    InvalidStride {
        /// Whose stride.
        role: StructureBuffer,
        /// The stride given.
        stride: u64,
        /// What it must be a multiple of.
        multiple_of: u64,
        /// The least allowed.
        min: u64,
        /// The most allowed.
        max: u64,
    },
    /// An indexed triangle geometry whose index count is not a multiple of 3.
    #[error("geometry {geometry}: index count {count} is not a multiple of 3")]
    InvalidIndexCount {
        /// Index of the geometry in the build entries.
        geometry: usize,
        /// The index count given.
        count: u32,
    },
    /// The driver failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
}

/// What a buffer named in an [`AccelerationStructureError`] serves as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StructureBuffer {
    /// The vertex buffer of triangle geometry `n` of the entries.
    Vertices(usize),
    /// The index buffer of triangle geometry `n`.
    Indices(usize),
    /// The transform buffer of triangle geometry `n`.
    Transform(usize),
    /// The box buffer of box geometry `n`.
    Aabbs(usize),
    /// The instance buffer of a top-level build.
    Instances,
    /// A build's scratch buffer.
    Scratch,
    /// A buffer a structure is placed in.
    Placement,
    /// The destination of a compacted-size read.
    CompactedSizes,
}

impl std::fmt::Display for StructureBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Vertices(n) => write!(f, "geometry {n}'s vertex buffer"),
            Self::Indices(n) => write!(f, "geometry {n}'s index buffer"),
            Self::Transform(n) => write!(f, "geometry {n}'s transform buffer"),
            Self::Aabbs(n) => write!(f, "geometry {n}'s box buffer"),
            Self::Instances => f.write_str("the instance buffer"),
            Self::Scratch => f.write_str("the scratch buffer"),
            Self::Placement => f.write_str("the buffer holding the structure"),
            Self::CompactedSizes => f.write_str("the compacted-size buffer"),
        }
    }
}

/// The vertex formats acceleration structures take with
/// `Features::EXTENDED_ACCELERATION_STRUCTURE_VERTEX_FORMATS`, besides
/// `Float32x3` (which they always take).
pub(crate) const EXTENDED_AS_VERTEX_FORMATS: [wgt::VertexFormat; 5] = [
    wgt::VertexFormat::Float32x2,
    wgt::VertexFormat::Float16x2,
    wgt::VertexFormat::Float16x4,
    wgt::VertexFormat::Snorm16x2,
    wgt::VertexFormat::Snorm16x4,
];

/// The message of `UnsupportedVertexFormat`.
fn vertex_format_text(geometry: usize, format: wgt::VertexFormat, extended: bool) -> String {
    let others = EXTENDED_AS_VERTEX_FORMATS
        .map(|f| format!("{f:?}"))
        .join(", ");
    if extended {
        format!(
            "geometry {geometry}: vertex format {format:?} is not allowed; allowed are \
             Float32x3, {others}"
        )
    } else if EXTENDED_AS_VERTEX_FORMATS.contains(&format) {
        format!(
            "geometry {geometry}: vertex format {format:?} needs \
             Features::EXTENDED_ACCELERATION_STRUCTURE_VERTEX_FORMATS; allowed is Float32x3"
        )
    } else {
        format!(
            "geometry {geometry}: vertex format {format:?} is not allowed; allowed is Float32x3"
        )
    }
}

/// The message of `Scratch`: which rule the range breaks.
fn scratch_text(offset: u64, available: u64, required: u64, alignment: u64) -> String {
    if offset % alignment.max(1) != 0 {
        format!(
            "scratch offset {offset} is not a multiple of the scratch alignment {alignment} \
             (minAccelerationStructureScratchOffsetAlignment)"
        )
    } else {
        format!(
            "scratch range of {available} bytes at offset {offset} is below the {required} \
             bytes the build needs"
        )
    }
}

/// The message of `InvalidPlacement`: which rule the range breaks.
fn range_text_of(
    role: StructureBuffer,
    offset: u64,
    size: u64,
    buffer_size: u64,
    alignment: u64,
) -> String {
    if offset % alignment.max(1) != 0 {
        format!("{role}: offset {offset} is not a multiple of {alignment}")
    } else {
        format!("{role}: {size} bytes at offset {offset} run past the buffer's {buffer_size} bytes")
    }
}

/// `a..b` for a range of `count` from `base`, or `from a to the end`.
fn range_text(base: u32, count: Option<u32>) -> String {
    match count {
        Some(0) => format!("{base}..{base} (none)"),
        Some(count) => format!("{base}..{}", u64::from(base) + u64::from(count)),
        None => format!("from {base} to the end"),
    }
}

/// The features a device was opened with, for messages: their names, or
/// `none`.
fn features_text(enabled: wgt::Features) -> String {
    if enabled.is_empty() {
        "none".to_owned()
    } else {
        enabled.to_string()
    }
}
