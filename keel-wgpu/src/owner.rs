//! Which device each keel-wgpu object belongs to, and the one check that an
//! object a call takes is of the device the call is made on (wgpu-core's
//! `DeviceMismatch`). A foreign object never reaches keel-hal: its raw
//! handles belong to another `VkDevice`.

use std::sync::Arc;

use crate::binding::{BindGroup, BindGroupLayout, PipelineLayout};
use crate::command::{CommandBuffer, RenderBundle};
use crate::handles::*;
use crate::pipeline::{ComputePipeline, PipelineCache, RenderPipeline, ShaderModule};
use crate::resource::{Buffer, QuerySet, Sampler, Texture, TextureView};
use crate::shared::DeviceShared;

/// An object that belongs to one device.
pub(crate) trait OfDevice {
    /// wgpu's name for the kind of object, as its errors spell it.
    const KIND: &'static str;
    /// The device it was made on.
    fn device(&self) -> &Arc<DeviceShared>;
}

macro_rules! of_device {
    ($($ty:ty => $kind:literal;)*) => {$(
        impl OfDevice for $ty {
            const KIND: &'static str = $kind;
            fn device(&self) -> &Arc<DeviceShared> {
                &self.shared
            }
        }
    )*};
}

of_device! {
    Buffer => "Buffer";
    Texture => "Texture";
    TextureView => "TextureView";
    Sampler => "Sampler";
    QuerySet => "QuerySet";
    BindGroupLayout => "BindGroupLayout";
    BindGroup => "BindGroup";
    PipelineLayout => "PipelineLayout";
    ShaderModule => "ShaderModule";
    ComputePipeline => "ComputePipeline";
    RenderPipeline => "RenderPipeline";
    PipelineCache => "PipelineCache";
    CommandBuffer => "CommandBuffer";
    RenderBundle => "RenderBundle";
}

/// The check: `object` belongs to `on`, else wgpu's validation error text.
pub(crate) fn same_device<T: OfDevice>(on: &Arc<DeviceShared>, object: &T) -> Result<(), String> {
    if Arc::ptr_eq(on, object.device()) {
        Ok(())
    } else {
        Err(format!(
            "Device of {} doesn't match Device (the object was made on another device)",
            T::KIND
        ))
    }
}

/// A keel-wgpu handle around an object of one device.
pub(crate) trait Handle {
    /// The object behind the handle.
    type Inner: OfDevice;
    /// The object.
    fn inner(&self) -> &Arc<Self::Inner>;
}

macro_rules! handle {
    ($($k:ident => $inner:ty;)*) => {$(
        impl Handle for $k {
            type Inner = $inner;
            fn inner(&self) -> &Arc<$inner> {
                &self.0
            }
        }
    )*};
}

handle! {
    KBuffer => Buffer;
    KTexture => Texture;
    KTextureView => TextureView;
    KSampler => Sampler;
    KQuerySet => QuerySet;
    KBindGroupLayout => BindGroupLayout;
    KBindGroup => BindGroup;
    KPipelineLayout => PipelineLayout;
    KShaderModule => ShaderModule;
    KComputePipeline => ComputePipeline;
    KRenderPipeline => RenderPipeline;
    KPipelineCache => PipelineCache;
    KRenderBundle => RenderBundle;
}

/// The object behind `handle` (what `as_custom` found), checked to be a
/// keel-wgpu object of the device `on`.
pub(crate) fn owned<K: Handle>(
    on: &Arc<DeviceShared>,
    handle: Option<&K>,
) -> Result<Arc<K::Inner>, String> {
    let handle =
        handle.ok_or_else(|| format!("a {} of another backend", <K::Inner as OfDevice>::KIND))?;
    same_device(on, &**handle.inner())?;
    Ok(handle.inner().clone())
}
