//! The object-safe mirror of the trait set, so an upper layer can pick a
//! backend at run time.
//!
//! Every generic trait has a `Dyn*` twin implemented for all its
//! implementors; resources travel as `Box<dyn DynBuffer>` and friends and
//! are downcast back to the backend's type on the way in. Handing one
//! backend's resource to another backend's device is reported as
//! [`DeviceError::ForeignResource`](crate::DeviceError::ForeignResource) (for recording calls: by the next
//! `end_encoding`), never a panic.

#[cfg(test)]
mod acceleration_tests;
mod api;
mod api_encoder;
mod convert;
mod device;
mod encoder;
mod encoder_impl;
mod external;
mod shader_table;
mod surface;

pub use api::DynApi;
pub use device::{DynDevice, DynQueue};
pub use encoder::DynCommandEncoder;
pub use external::{DynExternalSemaphore, DynExternalSubmission};
pub use surface::{DynSurface, SurfaceTextureBox};

use std::any::Any;
use std::fmt::Debug;

use crate::{
    AdapterInfo, Backend, Capabilities, DeviceDescriptor, InstanceDescriptor, InstanceError,
    OpenError,
};

/// Any backend object that can travel through the dyn path.
pub trait DynResource: Any + Send + Sync + Debug + 'static {}
impl<T: Any + Send + Sync + Debug + 'static> DynResource for T {}

macro_rules! resource_traits {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {$(
        $(#[$doc])*
        pub trait $name: DynResource {}
    )*};
}
resource_traits!(
    /// A buffer of some backend.
    DynBuffer,
    /// A texture of some backend.
    DynTexture,
    /// A texture view of some backend.
    DynTextureView,
    /// A sampler of some backend.
    DynSampler,
    /// A query set of some backend.
    DynQuerySet,
    /// A fence of some backend.
    DynFence,
    /// A command buffer of some backend.
    DynCommandBuffer,
    /// A bind group layout of some backend.
    DynBindGroupLayout,
    /// A bind group of some backend.
    DynBindGroup,
    /// A pipeline layout of some backend.
    DynPipelineLayout,
    /// A shader module of some backend.
    DynShaderModule,
    /// A render pipeline of some backend.
    DynRenderPipeline,
    /// A compute pipeline of some backend.
    DynComputePipeline,
    /// A texture acquired from a surface of some backend. On the dyn path
    /// it travels inside a [`SurfaceTextureBox`], which serves as a texture.
    DynSurfaceTexture,
    /// An acceleration structure of some backend.
    DynAccelerationStructure,
    /// A ray-tracing pipeline of some backend.
    DynRayTracingPipeline,
    /// A pipeline cache of some backend.
    DynPipelineCache,
);

/// The dyn path's [`crate::Resources`]: descriptors that name `dyn` resources.
#[derive(Clone, Copy, Debug)]
pub struct DynResources;

impl crate::Resources for DynResources {
    type Buffer = dyn DynBuffer;
    type Texture = dyn DynTexture;
    type TextureView = dyn DynTextureView;
    type Sampler = dyn DynSampler;
    type QuerySet = dyn DynQuerySet;
    type BindGroupLayout = dyn DynBindGroupLayout;
    type PipelineLayout = dyn DynPipelineLayout;
    type ShaderModule = dyn DynShaderModule;
    type AccelerationStructure = dyn DynAccelerationStructure;
    type PipelineCache = dyn DynPipelineCache;
}

/// Downcasts a dyn resource reference to the backend's concrete type.
///
/// `DynApi`'s resources are themselves `Box<dyn Dyn*>`, and such a box is a
/// `Dyn*` object too, so `&boxed` coerces to a doubly boxed object. When the
/// first downcast fails, one such box layer is peeled and the downcast
/// retried; only the failure path pays for it.
#[inline]
pub(crate) fn cast<T: 'static>(r: &dyn Any) -> Option<&T> {
    match r.downcast_ref::<T>() {
        Some(t) => Some(t),
        None => peel_ref(r).and_then(|inner| inner.downcast_ref::<T>()),
    }
}

/// Downcasts an owned dyn resource to the backend's concrete type, peeling
/// one `Box<dyn Dyn*>` layer as [`cast`] does. The object is dropped (not
/// destroyed) when it is of another backend.
#[inline]
pub(crate) fn cast_box<T: 'static>(r: Box<dyn Any>) -> Option<T> {
    match r.downcast::<T>() {
        Ok(t) => Some(*t),
        Err(r) => peel_box(r).and_then(|inner| inner.downcast::<T>().ok().map(|t| *t)),
    }
}

macro_rules! peelers {
    ($($name:ident),* $(,)?) => {
        /// The object inside `r` when `r` is a `Box<dyn Dyn*>`.
        #[cold]
        fn peel_ref(r: &dyn Any) -> Option<&dyn Any> {
            $(if let Some(inner) = r.downcast_ref::<Box<dyn $name>>() {
                let inner: &dyn Any = &**inner;
                return Some(inner);
            })*
            None
        }

        /// The object inside `r` when `r` is a `Box<dyn Dyn*>`.
        #[cold]
        fn peel_box(r: Box<dyn Any>) -> Option<Box<dyn Any>> {
            $(let r = match r.downcast::<Box<dyn $name>>() {
                Ok(inner) => {
                    let inner: Box<dyn Any> = *inner;
                    return Some(inner);
                }
                Err(r) => r,
            };)*
            drop(r);
            None
        }
    };
}
peelers!(
    DynBuffer,
    DynTexture,
    DynTextureView,
    DynSampler,
    DynQuerySet,
    DynFence,
    DynCommandBuffer,
    DynExternalSemaphore,
    DynBindGroupLayout,
    DynBindGroup,
    DynPipelineLayout,
    DynShaderModule,
    DynRenderPipeline,
    DynComputePipeline,
    DynAccelerationStructure,
    DynRayTracingPipeline,
    DynPipelineCache,
    DynDevice,
    DynSurface,
);

/// How many items the per-call lists of the dyn path (submitted command
/// buffers, barriers) hold without touching the heap.
const INLINE: usize = 8;

/// Maps every item through `f` into a list, kept on the stack for up to
/// [`INLINE`] items (a `Vec` beyond), and hands the list to `then`.
/// Returns `None`, without calling `then`, as soon as `f` does.
#[inline]
pub(crate) fn map_inline<'a, T, U, R>(
    items: &'a [T],
    mut f: impl FnMut(&'a T) -> Option<U>,
    then: impl FnOnce(&[U]) -> R,
) -> Option<R> {
    if items.len() <= INLINE {
        let mut list = arrayvec::ArrayVec::<U, INLINE>::new();
        for item in items {
            list.push(f(item)?);
        }
        Some(then(&list))
    } else {
        let list = items.iter().map(f).collect::<Option<Vec<U>>>()?;
        Some(then(&list))
    }
}

/// An instance of some backend.
pub trait DynInstance: Send + Sync + Debug {
    /// Which backend.
    fn backend(&self) -> Backend;
    /// Lists the adapters, best first.
    ///
    /// # Safety
    /// As [`crate::Instance::enumerate_adapters`].
    unsafe fn enumerate_adapters(&self) -> Vec<DynExposedAdapter>;
    /// Validation errors reported so far.
    fn validation_error_count(&self) -> u64;
    /// See [`crate::Instance::create_surface`].
    ///
    /// # Safety
    /// As [`crate::Instance::create_surface`].
    unsafe fn create_surface(
        &self,
        display: raw_window_handle::RawDisplayHandle,
        window: raw_window_handle::RawWindowHandle,
    ) -> Result<Box<dyn DynSurface>, InstanceError>;
    /// See [`crate::Instance::destroy_surface`]; a surface of another
    /// backend is logged and leaked.
    ///
    /// # Safety
    /// As [`crate::Instance::destroy_surface`].
    unsafe fn destroy_surface(&self, surface: Box<dyn DynSurface>);
}

/// An adapter of some backend, with its description.
#[derive(Debug)]
pub struct DynExposedAdapter {
    /// The adapter.
    pub adapter: Box<dyn DynAdapter>,
    /// What it is.
    pub info: AdapterInfo,
    /// What it can do.
    pub capabilities: Capabilities,
}

/// A device and queue of some backend.
#[derive(Debug)]
pub struct DynOpenDevice {
    /// The device.
    pub device: Box<dyn DynDevice>,
    /// Its queue.
    pub queue: Box<dyn DynQueue>,
}

/// An adapter of some backend.
pub trait DynAdapter: Send + Sync + Debug {
    /// Opens a device.
    ///
    /// # Safety
    /// As [`crate::Adapter::open`].
    unsafe fn open(&self, desc: &DeviceDescriptor) -> Result<DynOpenDevice, OpenError>;
    /// What a texture format supports on this adapter.
    fn texture_format_capabilities(&self, format: wgt::TextureFormat)
        -> wgt::TextureFormatFeatures;
    /// See [`crate::Adapter::external_buffer_capabilities`].
    fn external_buffer_capabilities(
        &self,
        desc: &crate::BufferDescriptor,
        handle_type: crate::ExternalHandleType,
    ) -> crate::ExternalCapabilities;
    /// See [`crate::Adapter::external_texture_capabilities`].
    fn external_texture_capabilities(
        &self,
        desc: &crate::TextureDescriptor,
        handle_type: crate::ExternalHandleType,
    ) -> Result<crate::ExternalCapabilities, crate::DeviceError>;
    /// See [`crate::Adapter::external_semaphore_capabilities`].
    fn external_semaphore_capabilities(
        &self,
        desc: &crate::ExternalSemaphoreDescriptor,
    ) -> crate::ExternalCapabilities;
    /// See [`crate::Adapter::drm_format_modifiers`].
    fn drm_format_modifiers(&self, format: wgt::TextureFormat) -> Vec<crate::DrmModifierInfo>;
    /// See [`crate::Adapter::pipeline_cache_validation_key`].
    fn pipeline_cache_validation_key(&self) -> Option<[u8; 16]>;
    /// What `surface` supports on this adapter.
    ///
    /// # Safety
    /// As [`crate::Adapter::surface_capabilities`].
    unsafe fn surface_capabilities(
        &self,
        surface: &dyn DynSurface,
    ) -> Result<crate::SurfaceCapabilities, crate::SurfaceError>;
}

impl<I: crate::Instance> DynInstance for I {
    fn backend(&self) -> Backend {
        crate::Instance::backend(self)
    }
    unsafe fn enumerate_adapters(&self) -> Vec<DynExposedAdapter> {
        // SAFETY: forwarded contract.
        unsafe { crate::Instance::enumerate_adapters(self) }
            .into_iter()
            .map(|e| DynExposedAdapter {
                adapter: Box::new(e.adapter),
                info: e.info,
                capabilities: e.capabilities,
            })
            .collect()
    }
    fn validation_error_count(&self) -> u64 {
        crate::Instance::validation_error_count(self)
    }
    unsafe fn create_surface(
        &self,
        display: raw_window_handle::RawDisplayHandle,
        window: raw_window_handle::RawWindowHandle,
    ) -> Result<Box<dyn DynSurface>, InstanceError> {
        // SAFETY: forwarded contract.
        let surface = unsafe { crate::Instance::create_surface(self, display, window) }?;
        Ok(Box::new(surface))
    }
    unsafe fn destroy_surface(&self, surface: Box<dyn DynSurface>) {
        match cast_box::<<I::A as crate::Api>::Surface>(surface) {
            // SAFETY: forwarded contract; the type was checked by the downcast.
            Some(surface) => unsafe { crate::Instance::destroy_surface(self, surface) },
            None => log::error!("destroy_surface: the surface belongs to another backend; leaked"),
        }
    }
}

impl<A: crate::Adapter> DynAdapter for A {
    unsafe fn open(&self, desc: &DeviceDescriptor) -> Result<DynOpenDevice, OpenError> {
        // SAFETY: forwarded contract.
        let open = unsafe { crate::Adapter::open(self, desc) }?;
        Ok(DynOpenDevice {
            device: Box::new(open.device),
            queue: Box::new(open.queue),
        })
    }
    fn texture_format_capabilities(
        &self,
        format: wgt::TextureFormat,
    ) -> wgt::TextureFormatFeatures {
        crate::Adapter::texture_format_capabilities(self, format)
    }
    fn external_buffer_capabilities(
        &self,
        desc: &crate::BufferDescriptor,
        handle_type: crate::ExternalHandleType,
    ) -> crate::ExternalCapabilities {
        crate::Adapter::external_buffer_capabilities(self, desc, handle_type)
    }
    fn external_texture_capabilities(
        &self,
        desc: &crate::TextureDescriptor,
        handle_type: crate::ExternalHandleType,
    ) -> Result<crate::ExternalCapabilities, crate::DeviceError> {
        crate::Adapter::external_texture_capabilities(self, desc, handle_type)
    }
    fn external_semaphore_capabilities(
        &self,
        desc: &crate::ExternalSemaphoreDescriptor,
    ) -> crate::ExternalCapabilities {
        crate::Adapter::external_semaphore_capabilities(self, desc)
    }
    fn drm_format_modifiers(&self, format: wgt::TextureFormat) -> Vec<crate::DrmModifierInfo> {
        crate::Adapter::drm_format_modifiers(self, format)
    }
    fn pipeline_cache_validation_key(&self) -> Option<[u8; 16]> {
        crate::Adapter::pipeline_cache_validation_key(self)
    }
    unsafe fn surface_capabilities(
        &self,
        surface: &dyn DynSurface,
    ) -> Result<crate::SurfaceCapabilities, crate::SurfaceError> {
        let surface = cast::<<A::A as crate::Api>::Surface>(surface).ok_or(
            crate::SurfaceError::Device(crate::DeviceError::ForeignResource),
        )?;
        // SAFETY: forwarded contract.
        unsafe { crate::Adapter::surface_capabilities(self, surface) }
    }
}

/// Which backend [`instance`] should use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BackendChoice {
    /// Vulkan where a loader and a supported adapter are found, else noop.
    #[default]
    Auto,
    /// The noop backend.
    Noop,
    /// The Vulkan backend, or an error.
    Vulkan,
}

/// The instance [`instance`] picked, and why.
#[derive(Debug)]
pub struct ChosenInstance {
    /// The instance.
    pub instance: Box<dyn DynInstance>,
    /// Its backend.
    pub backend: Backend,
    /// Why this backend was picked.
    pub reason: String,
}

/// Creates an instance of the chosen backend.
pub fn instance(
    choice: BackendChoice,
    desc: &InstanceDescriptor,
) -> Result<ChosenInstance, InstanceError> {
    let noop = |reason: String| -> Result<ChosenInstance, InstanceError> {
        // SAFETY: the noop backend loads no runtime library.
        let instance = unsafe { <crate::noop::Instance as crate::Instance>::init(desc) }?;
        Ok(ChosenInstance {
            instance: Box::new(instance),
            backend: Backend::Noop,
            reason,
        })
    };
    match choice {
        BackendChoice::Noop => noop("noop was asked for".into()),
        #[cfg(feature = "vulkan")]
        BackendChoice::Vulkan => {
            // SAFETY: the system's Vulkan loader is trusted to be conforming.
            let instance = unsafe { <crate::vulkan::Instance as crate::Instance>::init(desc) }?;
            Ok(ChosenInstance {
                instance: Box::new(instance),
                backend: Backend::Vulkan,
                reason: "vulkan was asked for".into(),
            })
        }
        #[cfg(not(feature = "vulkan"))]
        BackendChoice::Vulkan => Err(InstanceError::NotAvailable(
            "keel-hal was built without the `vulkan` feature".into(),
        )),
        BackendChoice::Auto => {
            #[cfg(feature = "vulkan")]
            {
                // SAFETY: the system's Vulkan loader is trusted to be conforming.
                match unsafe { <crate::vulkan::Instance as crate::Instance>::init(desc) } {
                    Ok(instance) => {
                        // SAFETY: live instance.
                        let adapters = unsafe { crate::Instance::enumerate_adapters(&instance) };
                        if let Some(first) = adapters.first() {
                            let reason = format!("vulkan adapter found: {}", first.info.name);
                            return Ok(ChosenInstance {
                                instance: Box::new(instance),
                                backend: Backend::Vulkan,
                                reason,
                            });
                        }
                        noop("vulkan loaded, but no adapter meets the Vulkan 1.3 baseline".into())
                    }
                    Err(e) => noop(format!("vulkan unavailable: {e}")),
                }
            }
            #[cfg(not(feature = "vulkan"))]
            noop("built without the `vulkan` feature".into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BufferDescriptor, Memory};

    /// `&boxed` where `boxed: Box<dyn DynBuffer>` is itself a `dyn DynBuffer`
    /// (a doubly boxed object); the device must still find its buffer, and
    /// destroy it, instead of reporting a foreign resource.
    #[test]
    fn doubly_boxed_resources_are_peeled() {
        let chosen =
            instance(BackendChoice::Noop, &InstanceDescriptor::default()).expect("test fixture");
        // SAFETY: the adapter comes from this instance; the buffer is
        // destroyed before the device is dropped; no GPU work is pending.
        unsafe {
            let adapter = chosen.instance.enumerate_adapters().remove(0).adapter;
            let device = adapter
                .open(&DeviceDescriptor::default())
                .expect("test fixture")
                .device;
            let desc = BufferDescriptor {
                size: 16,
                memory: Memory::Upload,
                ..Default::default()
            };
            let boxed: Box<dyn DynBuffer> = device.create_buffer(&desc).expect("test fixture");
            let doubly: &dyn DynBuffer = &boxed;
            assert!(device.map_buffer(doubly).is_ok());
            let owned_twice: Box<dyn DynBuffer> = Box::new(boxed);
            device.destroy_buffer(owned_twice);
            assert_eq!(device.live_counts().buffers, 0);
        }
    }
}

#[cfg(test)]
mod dyn_api_tests {
    use super::{cast, instance, BackendChoice, DynTexture};
    use crate::{
        Adapter as _, BufferDescriptor, DeviceDescriptor, Instance as _, InstanceDescriptor, Memory,
    };

    /// A noop surface through `DynApi`: configure, acquire, clear the
    /// surface texture in a render pass, copy it out, submit naming it,
    /// present. Exercises `SurfaceTextureBox` wherever a texture goes.
    #[test]
    fn surface_texture_serves_as_a_texture() {
        use crate::{
            Attachment, AttachmentOps, BufferTextureCopy, BufferUses, ColorAttachment,
            CommandEncoder as _, Device as _, Queue as _, RenderPassDescriptor, StateTransition,
            Surface as _, SurfaceConfiguration, TextureBarrier, TextureCopyBase, TextureUses,
        };
        use raw_window_handle::{
            RawDisplayHandle, RawWindowHandle, XlibDisplayHandle, XlibWindowHandle,
        };
        use std::borrow::Borrow;

        let chosen =
            instance(BackendChoice::Noop, &InstanceDescriptor::default()).expect("test fixture");
        let display = RawDisplayHandle::Xlib(XlibDisplayHandle::new(None, 0));
        let window = RawWindowHandle::Xlib(XlibWindowHandle::new(1));
        // SAFETY: noop surfaces use no handle; every object is destroyed
        // after the fence wait, the surface after it is unconfigured.
        unsafe {
            let surface = chosen
                .instance
                .create_surface(display, window)
                .expect("test fixture");
            let adapter = chosen.instance.enumerate_adapters().remove(0).adapter;
            let open = adapter
                .open(&DeviceDescriptor::default())
                .expect("test fixture");
            let (device, queue) = (open.device, open.queue);
            let extent = wgt::Extent3d {
                width: 4,
                height: 4,
                depth_or_array_layers: 1,
            };
            let config = SurfaceConfiguration {
                maximum_frame_latency: 2,
                present_mode: wgt::PresentMode::Fifo,
                composite_alpha_mode: wgt::CompositeAlphaMode::Opaque,
                format: wgt::TextureFormat::Rgba8Unorm,
                extent,
                usage: wgt::TextureUsages::RENDER_ATTACHMENT | wgt::TextureUsages::COPY_SRC,
            };
            surface.configure(&device, &config).expect("test fixture");
            let acquired = surface.acquire_texture(None).expect("test fixture");
            let frame = acquired.texture;
            let texture = Borrow::<Box<dyn DynTexture>>::borrow(&frame);
            let view = device
                .create_texture_view(texture, &Default::default())
                .expect("test fixture");
            let readback = device
                .create_buffer(&BufferDescriptor {
                    size: 64,
                    memory: Memory::Readback,
                    usage: wgt::BufferUsages::COPY_DST | wgt::BufferUsages::MAP_READ,
                    ..Default::default()
                })
                .expect("test fixture");
            let mut encoder = device
                .create_command_encoder(&Default::default())
                .expect("test fixture");
            encoder.begin_encoding(None).expect("test fixture");
            let barrier = |from, to| TextureBarrier {
                texture,
                range: Default::default(),
                usage: StateTransition { from, to },
            };
            encoder.transition_textures(&[barrier(
                TextureUses::UNINITIALIZED,
                TextureUses::COLOR_TARGET,
            )]);
            let colors = [Some(ColorAttachment {
                target: Attachment {
                    view: &view,
                    usage: TextureUses::COLOR_TARGET,
                },
                resolve_target: None,
                ops: AttachmentOps::STORE,
                clear_value: wgt::Color::RED,
            })];
            encoder.begin_render_pass(&RenderPassDescriptor {
                label: None,
                extent,
                sample_count: 1,
                color_attachments: &colors,
                depth_stencil_attachment: None,
                multiview_mask: None,
            });
            encoder.end_render_pass();
            encoder
                .transition_textures(&[barrier(TextureUses::COLOR_TARGET, TextureUses::COPY_SRC)]);
            encoder.transition_buffers(&[crate::BufferBarrier {
                buffer: &readback,
                usage: StateTransition {
                    from: BufferUses::empty(),
                    to: BufferUses::COPY_DST,
                },
            }]);
            encoder.copy_texture_to_buffer(
                texture,
                TextureUses::COPY_SRC,
                &readback,
                &[BufferTextureCopy {
                    buffer_layout: wgt::TexelCopyBufferLayout {
                        offset: 0,
                        bytes_per_row: Some(16),
                        rows_per_image: None,
                    },
                    texture_base: TextureCopyBase::default(),
                    size: extent,
                }],
            );
            // The host-visibility rule (`BufferMapping`): a barrier to MAP_READ, then the fence wait.
            encoder.transition_buffers(&[crate::BufferBarrier::new(
                &readback,
                BufferUses::COPY_DST,
                BufferUses::MAP_READ,
            )]);
            let commands = encoder.end_encoding().expect("test fixture");
            let fence = device.create_fence().expect("test fixture");
            queue
                .submit(&[&commands], &[&frame], &fence, 1)
                .expect("test fixture");
            assert!(device.wait(&fence, 1, None).expect("test fixture"));
            let map = device.map_buffer(&readback).expect("test fixture");
            let bytes = std::slice::from_raw_parts(map.ptr.as_ptr(), 64);
            assert!(bytes.chunks(4).all(|px| px == [255, 0, 0, 255]));
            device.destroy_texture_view(view);
            queue.present(&surface, frame).expect("test fixture");
            let noop = cast::<crate::noop::Surface>(&*surface).expect("test fixture");
            assert_eq!(noop.presented_frames(), 1);

            encoder.reset_all([commands]);
            device.destroy_command_encoder(encoder);
            device.destroy_fence(fence);
            device.destroy_buffer(readback);
            surface.unconfigure(&device);
            chosen.instance.destroy_surface(surface);
            assert_eq!(device.live_counts(), Default::default());
        }
    }
}
