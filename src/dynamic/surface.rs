//! `DynSurface`, and surface textures on the dyn path.
//!
//! A surface texture must serve where a texture is expected (views,
//! barriers, copies), and for [`DynApi`](crate::DynApi) that means as a
//! `&Box<dyn DynTexture>` (`Api::SurfaceTexture: Borrow<Api::Texture>`).
//! So the dyn path carries a backend's surface texture inside a
//! [`SurfaceTextureBox`]: a `Box<dyn DynTexture>` whose object is the
//! backend's surface texture. Wherever the dyn path downcasts a texture it
//! also accepts such an object, and uses the surface texture's texture.

use std::any::Any;
use std::borrow::Borrow;
use std::time::Duration;

use super::{cast, cast_box, DynDevice, DynResource, DynSurfaceTexture, DynTexture};
use crate::{
    AcquiredSurfaceTexture, Api, DeviceError, DynApi, Surface, SurfaceConfiguration, SurfaceError,
};

/// A surface of some backend. Methods mirror [`Surface`]; see there for
/// each contract.
pub trait DynSurface: DynResource {
    /// See [`Surface::configure`]; a device of another backend is
    /// `SurfaceError::Device(DeviceError::ForeignResource)`.
    ///
    /// # Safety
    /// As [`Surface::configure`].
    unsafe fn configure(
        &self,
        device: &dyn DynDevice,
        config: &SurfaceConfiguration,
    ) -> Result<(), SurfaceError>;
    /// See [`Surface::unconfigure`]; a device of another backend is logged
    /// and nothing happens.
    ///
    /// # Safety
    /// As [`Surface::unconfigure`].
    unsafe fn unconfigure(&self, device: &dyn DynDevice);
    /// See [`Surface::acquire_texture`].
    ///
    /// # Safety
    /// As [`Surface::acquire_texture`].
    unsafe fn acquire_texture(
        &self,
        timeout: Option<Duration>,
    ) -> Result<AcquiredSurfaceTexture<SurfaceTextureBox>, SurfaceError>;
    /// See [`Surface::discard_texture`]; a texture of another backend is
    /// logged and dropped.
    ///
    /// # Safety
    /// As [`Surface::discard_texture`].
    unsafe fn discard_texture(&self, texture: SurfaceTextureBox);
}

/// A surface texture of some backend, on the dyn path ([`DynApi`]'s
/// `SurfaceTexture`). It borrows as a `Box<dyn DynTexture>`, which every
/// dyn call that takes a texture accepts.
#[derive(Debug)]
pub struct SurfaceTextureBox(Box<dyn DynTexture>);

impl SurfaceTextureBox {
    /// The texture to render into.
    pub fn texture(&self) -> &dyn DynTexture {
        &*self.0
    }
}

impl Borrow<Box<dyn DynTexture>> for SurfaceTextureBox {
    fn borrow(&self) -> &Box<dyn DynTexture> {
        &self.0
    }
}

impl DynSurfaceTexture for SurfaceTextureBox {}

/// A backend's surface texture, as the object inside a [`SurfaceTextureBox`].
#[derive(Debug)]
struct SurfaceTex<A: Api>(A::SurfaceTexture);

impl<A: Api> DynTexture for SurfaceTex<A> {}

impl SurfaceTextureBox {
    fn new<A: Api>(texture: A::SurfaceTexture) -> Self {
        Self(Box::new(SurfaceTex::<A>(texture)))
    }
}

/// Downcasts a texture of the dyn path to backend `A`'s texture: a texture,
/// or the texture of a surface texture.
#[inline]
pub(crate) fn cast_texture<A: Api>(r: &dyn Any) -> Option<&A::Texture> {
    match cast::<A::Texture>(r) {
        Some(t) => Some(t),
        None => cast_surface_texture::<A>(r).map(|s| s.borrow()),
    }
}

/// Downcasts the object of a [`SurfaceTextureBox`] to backend `A`'s surface
/// texture. A `DynApi` surface texture that went through the dyn traits once
/// more (so wrapped twice) is unwrapped.
#[cold]
pub(crate) fn cast_surface_texture<A: Api>(r: &dyn Any) -> Option<&A::SurfaceTexture> {
    if let Some(s) = cast::<SurfaceTex<A>>(r) {
        return Some(&s.0);
    }
    let outer = cast::<SurfaceTex<DynApi>>(r)?;
    let inner: &dyn Any = &*outer.0 .0;
    cast::<SurfaceTex<A>>(inner).map(|s| &s.0)
}

/// Takes backend `A`'s surface texture out of a [`SurfaceTextureBox`];
/// `None` (dropping it) when it belongs to another backend.
pub(crate) fn take_surface_texture<A: Api>(
    texture: SurfaceTextureBox,
) -> Option<A::SurfaceTexture> {
    let object: Box<dyn Any> = texture.0;
    let object = match object.downcast::<SurfaceTex<A>>() {
        Ok(s) => return Some(s.0),
        Err(other) => other,
    };
    let outer = cast_box::<SurfaceTex<DynApi>>(object)?;
    let inner: Box<dyn Any> = (outer.0).0;
    cast_box::<SurfaceTex<A>>(inner).map(|s| s.0)
}

impl<S: Surface> DynSurface for S {
    unsafe fn configure(
        &self,
        device: &dyn DynDevice,
        config: &SurfaceConfiguration,
    ) -> Result<(), SurfaceError> {
        let device = cast::<<S::A as Api>::Device>(device)
            .ok_or(SurfaceError::Device(DeviceError::ForeignResource))?;
        // SAFETY: forwarded contract.
        unsafe { Surface::configure(self, device, config) }
    }
    unsafe fn unconfigure(&self, device: &dyn DynDevice) {
        match cast::<<S::A as Api>::Device>(device) {
            // SAFETY: forwarded contract.
            Some(device) => unsafe { Surface::unconfigure(self, device) },
            None => log::error!("unconfigure: the device belongs to another backend"),
        }
    }
    unsafe fn acquire_texture(
        &self,
        timeout: Option<Duration>,
    ) -> Result<AcquiredSurfaceTexture<SurfaceTextureBox>, SurfaceError> {
        // SAFETY: forwarded contract.
        let acquired = unsafe { Surface::acquire_texture(self, timeout) }?;
        Ok(AcquiredSurfaceTexture {
            texture: SurfaceTextureBox::new::<S::A>(acquired.texture),
            suboptimal: acquired.suboptimal,
        })
    }
    unsafe fn discard_texture(&self, texture: SurfaceTextureBox) {
        match take_surface_texture::<S::A>(texture) {
            // SAFETY: forwarded contract.
            Some(texture) => unsafe { Surface::discard_texture(self, texture) },
            None => log::error!("discard_texture: the texture belongs to another backend; dropped"),
        }
    }
}
