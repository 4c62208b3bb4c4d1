//! Short constructors for bind group layout entries.
//!
//! `wgt::BindGroupLayoutEntry` is a `wgpu-types` struct with a nested
//! binding type; these build the common ones in one call. Each takes the
//! binding number and the stages that see it, and leaves `count: None`
//! (a single binding, not an array) and no dynamic offset; change the
//! returned struct for anything else.
//!
//! ```
//! use keel_hal::{layout, wgt::ShaderStages, BindGroupLayoutDescriptor};
//! let entries = [
//!     layout::storage_buffer(0, ShaderStages::COMPUTE, true),
//!     layout::storage_buffer(1, ShaderStages::COMPUTE, false),
//!     layout::uniform_buffer(2, ShaderStages::COMPUTE),
//! ];
//! let desc = BindGroupLayoutDescriptor { entries: &entries, ..Default::default() };
//! assert_eq!(desc.entries.len(), 3);
//! ```

/// One binding of `ty`, seen by `visibility`.
pub const fn entry(
    binding: u32,
    visibility: wgt::ShaderStages,
    ty: wgt::BindingType,
) -> wgt::BindGroupLayoutEntry {
    wgt::BindGroupLayoutEntry {
        binding,
        visibility,
        ty,
        count: None,
    }
}

/// A storage buffer (`var<storage, read>` when `read_only`, else
/// `var<storage, read_write>`), any size.
pub const fn storage_buffer(
    binding: u32,
    visibility: wgt::ShaderStages,
    read_only: bool,
) -> wgt::BindGroupLayoutEntry {
    entry(
        binding,
        visibility,
        wgt::BindingType::Buffer {
            ty: wgt::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
    )
}

/// A uniform buffer (`var<uniform>`), any size.
pub const fn uniform_buffer(
    binding: u32,
    visibility: wgt::ShaderStages,
) -> wgt::BindGroupLayoutEntry {
    entry(
        binding,
        visibility,
        wgt::BindingType::Buffer {
            ty: wgt::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
    )
}

/// A single-sampled, filterable float 2D texture (`texture_2d<f32>`).
pub const fn texture_2d(binding: u32, visibility: wgt::ShaderStages) -> wgt::BindGroupLayoutEntry {
    entry(
        binding,
        visibility,
        wgt::BindingType::Texture {
            sample_type: wgt::TextureSampleType::Float { filterable: true },
            view_dimension: wgt::TextureViewDimension::D2,
            multisampled: false,
        },
    )
}

/// A filtering sampler (`sampler`).
pub const fn sampler(binding: u32, visibility: wgt::ShaderStages) -> wgt::BindGroupLayoutEntry {
    entry(
        binding,
        visibility,
        wgt::BindingType::Sampler(wgt::SamplerBindingType::Filtering),
    )
}

/// A 2D storage texture of `format` with `access`
/// (`texture_storage_2d<format, access>`).
pub const fn storage_texture_2d(
    binding: u32,
    visibility: wgt::ShaderStages,
    format: wgt::TextureFormat,
    access: wgt::StorageTextureAccess,
) -> wgt::BindGroupLayoutEntry {
    entry(
        binding,
        visibility,
        wgt::BindingType::StorageTexture {
            access,
            format,
            view_dimension: wgt::TextureViewDimension::D2,
        },
    )
}

/// A top-level acceleration structure (`acceleration_structure`), for ray
/// queries or ray-tracing pipelines.
pub const fn acceleration_structure(
    binding: u32,
    visibility: wgt::ShaderStages,
) -> wgt::BindGroupLayoutEntry {
    entry(
        binding,
        visibility,
        wgt::BindingType::AccelerationStructure {
            vertex_return: false,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use wgt::{BindingType as T, BufferBindingType as B, ShaderStages as S};

    #[test]
    fn buffer_entries_have_their_binding_type() {
        let e = storage_buffer(3, S::COMPUTE, true);
        assert_eq!((e.binding, e.visibility, e.count), (3, S::COMPUTE, None));
        assert!(matches!(
            e.ty,
            T::Buffer {
                ty: B::Storage { read_only: true },
                has_dynamic_offset: false,
                ..
            }
        ));
        assert!(matches!(
            storage_buffer(0, S::COMPUTE, false).ty,
            T::Buffer {
                ty: B::Storage { read_only: false },
                ..
            }
        ));
        let u = uniform_buffer(1, S::VERTEX | S::FRAGMENT);
        assert_eq!(u.visibility, S::VERTEX | S::FRAGMENT);
        assert!(matches!(u.ty, T::Buffer { ty: B::Uniform, .. }));
    }

    #[test]
    fn texture_sampler_and_structure_entries() {
        assert!(matches!(
            texture_2d(0, S::FRAGMENT).ty,
            T::Texture {
                sample_type: wgt::TextureSampleType::Float { filterable: true },
                view_dimension: wgt::TextureViewDimension::D2,
                multisampled: false
            }
        ));
        assert_eq!(
            sampler(1, S::FRAGMENT).ty,
            T::Sampler(wgt::SamplerBindingType::Filtering)
        );
        let st = storage_texture_2d(
            2,
            S::COMPUTE,
            wgt::TextureFormat::Rgba8Unorm,
            wgt::StorageTextureAccess::WriteOnly,
        );
        assert!(matches!(
            st.ty,
            T::StorageTexture {
                format: wgt::TextureFormat::Rgba8Unorm,
                access: wgt::StorageTextureAccess::WriteOnly,
                ..
            }
        ));
        assert!(matches!(
            acceleration_structure(4, S::COMPUTE).ty,
            T::AccelerationStructure { .. }
        ));
    }
}
