//! Presentation surfaces: configuration, capabilities, acquired textures.

/// Describes how a surface presents.
#[derive(Clone, Debug)]
pub struct SurfaceConfiguration {
    /// Swapchain length wished for (clamped to the surface's range).
    pub maximum_frame_latency: u32,
    /// Vsync behaviour.
    pub present_mode: wgt::PresentMode,
    /// Alpha compositing.
    pub composite_alpha_mode: wgt::CompositeAlphaMode,
    /// Texel format, one of the capabilities' formats.
    pub format: wgt::TextureFormat,
    /// Size in pixels; both non-zero.
    pub extent: wgt::Extent3d,
    /// Usage of the acquired textures (at least `RENDER_ATTACHMENT`).
    pub usage: wgt::TextureUsages,
}

/// What a surface supports on an adapter.
#[derive(Clone, Debug)]
pub struct SurfaceCapabilities {
    /// Formats, preferred first.
    pub formats: Vec<wgt::TextureFormat>,
    /// Allowed swapchain lengths.
    pub maximum_frame_latency: std::ops::RangeInclusive<u32>,
    /// Current size, when the window system fixes it.
    pub current_extent: Option<wgt::Extent3d>,
    /// Usages acquired textures may have.
    pub usage: wgt::TextureUsages,
    /// Present modes.
    pub present_modes: Vec<wgt::PresentMode>,
    /// Alpha modes.
    pub composite_alpha_modes: Vec<wgt::CompositeAlphaMode>,
}

/// A texture acquired from a surface.
#[derive(Debug)]
pub struct AcquiredSurfaceTexture<T> {
    /// The texture; present it or discard it.
    pub texture: T,
    /// The surface still works but no longer matches the window: reconfigure soon.
    pub suboptimal: bool,
}
