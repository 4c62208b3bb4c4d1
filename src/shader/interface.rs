//! An entry point's interface, read from naga IR: the resource bindings it
//! really uses, its immediate (push-constant) size and its workgroup size;
//! and the check of that interface against a pipeline layout.
//!
//! The check is what a Vulkan driver would otherwise not report (or report
//! as undefined behaviour): every binding the entry point uses must exist in
//! the layout with a compatible type and a visibility that includes the
//! stage, and its immediates must lie in a push-constant range of its stage.

use std::num::NonZeroU32;
use std::ops::Range;

use super::{StageStores, ValidatedModule};
use crate::PipelineError;

/// How a sampled texture's texels read in the shader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SampleKind {
    /// `texture_*<f32>`.
    Float,
    /// `texture_depth_*`.
    Depth,
    /// `texture_*<i32>`.
    Sint,
    /// `texture_*<u32>`.
    Uint,
}

/// What kind of resource a binding is, as the shader declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BindingKind {
    /// `var<uniform>`; `min_size` is the size of its type in bytes.
    UniformBuffer {
        /// Bytes the shader's type spans.
        min_size: u64,
    },
    /// `var<storage>`; `min_size` counts one element of a runtime array.
    StorageBuffer {
        /// Declared `read` (not `read_write`).
        read_only: bool,
        /// Bytes the shader's type spans.
        min_size: u64,
    },
    /// `sampler` or `sampler_comparison`.
    Sampler {
        /// `sampler_comparison`.
        comparison: bool,
    },
    /// A sampled texture (`texture_*`, `texture_depth_*`).
    SampledTexture {
        /// Its view dimension.
        dimension: wgt::TextureViewDimension,
        /// `texture_multisampled_*`.
        multisampled: bool,
        /// How texels read.
        sample_kind: SampleKind,
    },
    /// `texture_storage_*`.
    StorageTexture {
        /// Its view dimension.
        dimension: wgt::TextureViewDimension,
        /// Its texel format.
        format: wgt::TextureFormat,
        /// Its declared access.
        access: wgt::StorageTextureAccess,
    },
    /// `texture_external`.
    ExternalTexture,
    /// `acceleration_structure`.
    AccelerationStructure {
        /// Declared with vertex return.
        vertex_return: bool,
    },
}

/// Whether a binding is one resource or an array of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BindingCount {
    /// One resource.
    Single,
    /// `binding_array<T, N>`.
    Array(NonZeroU32),
    /// `binding_array<T>`, or a size still given by an unresolved override.
    Unbounded,
}

/// One resource binding an entry point uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ShaderBinding {
    /// `@group`.
    pub group: u32,
    /// `@binding`.
    pub binding: u32,
    /// What it is.
    pub kind: BindingKind,
    /// One or an array.
    pub count: BindingCount,
}

/// What an entry point needs from a pipeline layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EntryPointInterface {
    /// The entry point's name.
    pub name: String,
    /// Its stage.
    pub stage: naga::ShaderStage,
    /// The bindings it (or a function it calls) uses, by group then binding.
    /// Declared but unused bindings are left out.
    pub bindings: Vec<ShaderBinding>,
    /// Bytes of its `var<immediate>` (push constants) if it uses one, else 0.
    pub immediate_size: u32,
    /// `@workgroup_size`; zeros for stages without workgroups. An override
    /// still unresolved reads as 0: reflect on [`super::resolve_overrides`]'s
    /// result when the module has such overrides.
    pub workgroup_size: [u32; 3],
    /// A mesh entry point's output topology (`@mesh`'s primitives as a
    /// list); `None` for other stages.
    pub mesh_topology: Option<wgt::PrimitiveTopology>,
}

/// Finds the entry point `name` of `stage` and reads its interface.
///
/// Fails with [`PipelineError::EntryPoint`] when there is no such entry
/// point, and with [`PipelineError::Unsupported`] for a binding no layout
/// can describe (a 1D or 3D array texture from a hand-built naga module).
pub(crate) fn find_entry_point(
    module: &ValidatedModule,
    name: &str,
    stage: naga::ShaderStage,
) -> Result<EntryPointInterface, PipelineError> {
    let ir = module.module();
    let index = ir
        .entry_points
        .iter()
        .position(|ep| ep.name == name && ep.stage == stage)
        .ok_or_else(|| PipelineError::EntryPoint {
            stage,
            name: name.to_owned(),
        })?;
    let entry = &ir.entry_points[index];
    let uses = module.info().get_entry_point(index);

    let mut bindings = Vec::new();
    let mut immediate_size = 0;
    for (handle, var) in ir.global_variables.iter() {
        if uses[handle].is_empty() {
            continue;
        }
        if var.space == naga::AddressSpace::Immediate {
            immediate_size = ir.types[var.ty].inner.try_size(ir.to_ctx()).unwrap_or(0);
            continue;
        }
        let Some(ref rb) = var.binding else {
            continue;
        };
        let (kind, count) = classify(ir, var).map_err(|what| {
            PipelineError::Unsupported(format!("group {} binding {}: {what}", rb.group, rb.binding))
        })?;
        bindings.push(ShaderBinding {
            group: rb.group,
            binding: rb.binding,
            kind,
            count,
        });
    }
    bindings.sort_by_key(|b| (b.group, b.binding));
    Ok(EntryPointInterface {
        name: entry.name.clone(),
        stage,
        bindings,
        immediate_size,
        workgroup_size: entry.workgroup_size,
        mesh_topology: entry.mesh_info.as_ref().map(|m| match m.topology {
            naga::MeshOutputTopology::Triangles => wgt::PrimitiveTopology::TriangleList,
            naga::MeshOutputTopology::Lines => wgt::PrimitiveTopology::LineList,
            naga::MeshOutputTopology::Points => wgt::PrimitiveTopology::PointList,
        }),
    })
}

/// A binding's kind and count from its global variable.
fn classify(
    ir: &naga::Module,
    var: &naga::GlobalVariable,
) -> Result<(BindingKind, BindingCount), &'static str> {
    use naga::TypeInner as Ti;
    let mut ty = &ir.types[var.ty].inner;
    let mut count = BindingCount::Single;
    if let Ti::BindingArray { base, size } = *ty {
        count = match size {
            naga::ArraySize::Constant(n) => BindingCount::Array(n),
            naga::ArraySize::Pending(_) | naga::ArraySize::Dynamic => BindingCount::Unbounded,
        };
        ty = &ir.types[base].inner;
    }
    let size = || u64::from(ty.try_size(ir.to_ctx()).unwrap_or(0));
    let kind = match var.space {
        naga::AddressSpace::Uniform => BindingKind::UniformBuffer { min_size: size() },
        naga::AddressSpace::Storage { access } => BindingKind::StorageBuffer {
            read_only: !access.contains(naga::StorageAccess::STORE),
            min_size: size(),
        },
        naga::AddressSpace::Handle => match *ty {
            Ti::Sampler { comparison } => BindingKind::Sampler { comparison },
            Ti::Image {
                dim,
                arrayed,
                class,
            } => image_kind(dim, arrayed, class)?,
            Ti::AccelerationStructure { vertex_return } => {
                BindingKind::AccelerationStructure { vertex_return }
            }
            _ => return Err("a handle of a type that is not a binding resource"),
        },
        _ => return Err("a binding in an address space without resources"),
    };
    Ok((kind, count))
}

fn image_kind(
    dim: naga::ImageDimension,
    arrayed: bool,
    class: naga::ImageClass,
) -> Result<BindingKind, &'static str> {
    use naga::ImageDimension as D;
    use wgt::TextureViewDimension as V;
    let dimension = match (dim, arrayed) {
        (D::D1, false) => V::D1,
        (D::D2, false) => V::D2,
        (D::D2, true) => V::D2Array,
        (D::D3, false) => V::D3,
        (D::Cube, false) => V::Cube,
        (D::Cube, true) => V::CubeArray,
        (D::D1, true) | (D::D3, true) => return Err("1D and 3D array textures do not exist"),
    };
    Ok(match class {
        naga::ImageClass::Sampled { kind, multi } => BindingKind::SampledTexture {
            dimension,
            multisampled: multi,
            sample_kind: match kind {
                naga::ScalarKind::Float => SampleKind::Float,
                naga::ScalarKind::Sint => SampleKind::Sint,
                naga::ScalarKind::Uint => SampleKind::Uint,
                _ => return Err("a texture of a scalar kind textures cannot hold"),
            },
        },
        naga::ImageClass::Depth { multi } => BindingKind::SampledTexture {
            dimension,
            multisampled: multi,
            sample_kind: SampleKind::Depth,
        },
        naga::ImageClass::External => BindingKind::ExternalTexture,
        naga::ImageClass::Storage { format, access } => BindingKind::StorageTexture {
            dimension,
            format: storage_format(format),
            access: storage_access(access),
        },
    })
}

fn storage_access(access: naga::StorageAccess) -> wgt::StorageTextureAccess {
    use naga::StorageAccess as A;
    if access.contains(A::ATOMIC) {
        wgt::StorageTextureAccess::Atomic
    } else if access.contains(A::LOAD | A::STORE) {
        wgt::StorageTextureAccess::ReadWrite
    } else if access.contains(A::STORE) {
        wgt::StorageTextureAccess::WriteOnly
    } else {
        wgt::StorageTextureAccess::ReadOnly
    }
}

fn storage_format(format: naga::StorageFormat) -> wgt::TextureFormat {
    use naga::StorageFormat as S;
    use wgt::TextureFormat as T;
    match format {
        S::R8Unorm => T::R8Unorm,
        S::R8Snorm => T::R8Snorm,
        S::R8Uint => T::R8Uint,
        S::R8Sint => T::R8Sint,
        S::R16Uint => T::R16Uint,
        S::R16Sint => T::R16Sint,
        S::R16Float => T::R16Float,
        S::Rg8Unorm => T::Rg8Unorm,
        S::Rg8Snorm => T::Rg8Snorm,
        S::Rg8Uint => T::Rg8Uint,
        S::Rg8Sint => T::Rg8Sint,
        S::R32Uint => T::R32Uint,
        S::R32Sint => T::R32Sint,
        S::R32Float => T::R32Float,
        S::Rg16Uint => T::Rg16Uint,
        S::Rg16Sint => T::Rg16Sint,
        S::Rg16Float => T::Rg16Float,
        S::Rgba8Unorm => T::Rgba8Unorm,
        S::Rgba8Snorm => T::Rgba8Snorm,
        S::Rgba8Uint => T::Rgba8Uint,
        S::Rgba8Sint => T::Rgba8Sint,
        S::Bgra8Unorm => T::Bgra8Unorm,
        S::Rgb10a2Uint => T::Rgb10a2Uint,
        S::Rgb10a2Unorm => T::Rgb10a2Unorm,
        S::Rg11b10Ufloat => T::Rg11b10Ufloat,
        S::R64Uint => T::R64Uint,
        S::Rg32Uint => T::Rg32Uint,
        S::Rg32Sint => T::Rg32Sint,
        S::Rg32Float => T::Rg32Float,
        S::Rgba16Uint => T::Rgba16Uint,
        S::Rgba16Sint => T::Rgba16Sint,
        S::Rgba16Float => T::Rgba16Float,
        S::Rgba32Uint => T::Rgba32Uint,
        S::Rgba32Sint => T::Rgba32Sint,
        S::Rgba32Float => T::Rgba32Float,
        S::R16Unorm => T::R16Unorm,
        S::R16Snorm => T::R16Snorm,
        S::Rg16Unorm => T::Rg16Unorm,
        S::Rg16Snorm => T::Rg16Snorm,
        S::Rgba16Unorm => T::Rgba16Unorm,
        S::Rgba16Snorm => T::Rgba16Snorm,
    }
}

/// The stage flag of a naga stage.
pub(crate) fn stage_flag(stage: naga::ShaderStage) -> wgt::ShaderStages {
    use naga::ShaderStage as S;
    use wgt::ShaderStages as F;
    match stage {
        S::Vertex => F::VERTEX,
        S::Task => F::TASK,
        S::Mesh => F::MESH,
        S::Fragment => F::FRAGMENT,
        S::Compute => F::COMPUTE,
        S::RayGeneration => F::RAY_GENERATION,
        S::Miss => F::MISS,
        S::AnyHit => F::ANY_HIT,
        S::ClosestHit => F::CLOSEST_HIT,
    }
}

/// A pipeline layout as [`check_layout`] sees it. Backends implement it for
/// their pipeline layout; [`LayoutSlices`] implements it over plain slices.
pub(crate) trait LayoutView {
    /// How many bind groups the layout has.
    fn bind_group_count(&self) -> usize;
    /// The entries of bind group `group`'s layout; `None` past the end.
    fn bind_group_entries(&self, group: u32) -> Option<&[wgt::BindGroupLayoutEntry]>;
    /// The push-constant ranges and the stages that may read each.
    fn push_constant_ranges(&self) -> impl Iterator<Item = (wgt::ShaderStages, Range<u32>)> + '_;
}

/// A pipeline layout given as slices.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LayoutSlices<'a> {
    /// Each bind group layout's entries, by group index.
    pub bind_groups: &'a [&'a [wgt::BindGroupLayoutEntry]],
    /// Push-constant ranges, with the stages that may read them.
    pub push_constant_ranges: &'a [(wgt::ShaderStages, Range<u32>)],
}

impl LayoutView for LayoutSlices<'_> {
    fn bind_group_count(&self) -> usize {
        self.bind_groups.len()
    }

    fn bind_group_entries(&self, group: u32) -> Option<&[wgt::BindGroupLayoutEntry]> {
        self.bind_groups.get(usize::try_from(group).ok()?).copied()
    }

    fn push_constant_ranges(&self) -> impl Iterator<Item = (wgt::ShaderStages, Range<u32>)> + '_ {
        self.push_constant_ranges.iter().cloned()
    }
}

/// Checks that `layout` provides what `interface` uses.
///
/// Every used binding must exist in its group's layout, be visible to the
/// entry point's stage, and have a compatible type: uniform for uniform; a
/// read-write storage buffer for a shader that may write, either kind for a
/// read-only one; equal texture dimension, multisampling and sample type
/// (a depth layout also serves a float texture); equal storage texture
/// dimension and format, with a layout access that allows the shader's
/// (read-write allows read-only and write-only, atomic allows all);
/// comparison samplers for `sampler_comparison` only; acceleration
/// structures with vertex return when the shader asks for it; a buffer
/// layout's `min_binding_size`, when given, at least the shader type's size;
/// and an array in the layout exactly for binding arrays, at least as long.
/// Immediates must lie in one push-constant range that includes the stage.
/// The first mismatch is reported as [`PipelineError::InterfaceMismatch`].
pub(crate) fn check_layout<L: LayoutView + ?Sized>(
    interface: &EntryPointInterface,
    layout: &L,
) -> Result<(), PipelineError> {
    let stage = stage_flag(interface.stage);
    for used in &interface.bindings {
        check_binding(used, interface.stage, layout).map_err(|what| {
            PipelineError::InterfaceMismatch(format!(
                "group {} binding {}: {what}",
                used.group, used.binding
            ))
        })?;
    }
    let size = interface.immediate_size;
    if size > 0
        && !layout
            .push_constant_ranges()
            .any(|(stages, range)| stages.contains(stage) && range.start == 0 && range.end >= size)
    {
        return Err(PipelineError::InterfaceMismatch(format!(
            "push constants: the {:?} stage reads bytes 0..{size}, \
             and no push-constant range of that stage covers them",
            interface.stage
        )));
    }
    Ok(())
}

/// Holds an entry point to the device's [`StageStores`]: a vertex or
/// fragment entry point that uses a storage buffer declared `read_write`
/// or a storage texture that is not read-only needs
/// `vertexPipelineStoresAndAtomics` / `fragmentStoresAndAtomics`. The
/// declaration decides, not the use: SPIR-V for such a binding lacks
/// `NonWritable`, which those features' absence forbids in these stages.
/// Fails with [`PipelineError::MissingShaderFeature`] naming the first such
/// binding.
pub(crate) fn check_stage_stores(
    interface: &EntryPointInterface,
    stores: StageStores,
) -> Result<(), PipelineError> {
    let feature = match interface.stage {
        naga::ShaderStage::Vertex if !stores.vertex => "VERTEX_WRITABLE_STORAGE",
        naga::ShaderStage::Fragment if !stores.fragment => "fragmentStoresAndAtomics",
        _ => return Ok(()),
    };
    let writable = interface.bindings.iter().find(|b| match b.kind {
        BindingKind::StorageBuffer { read_only, .. } => !read_only,
        BindingKind::StorageTexture { access, .. } => access != wgt::StorageTextureAccess::ReadOnly,
        _ => false,
    });
    match writable {
        Some(b) => Err(PipelineError::MissingShaderFeature {
            stage: interface.stage,
            name: interface.name.clone(),
            what: format!(
                "{} at group {} binding {}",
                describe_kind(&b.kind),
                b.group,
                b.binding
            ),
            feature,
        }),
        None => Ok(()),
    }
}

/// The SPIR-V binding map of a pipeline layout: every array binding, at
/// set = group and binding = binding, with the layout's element count, so
/// that `binding_array<T>` (and `binding_array<T, N>`) is translated as an
/// array of exactly the descriptors the layout has. Single bindings are
/// left out (they keep set = group, binding = binding).
pub(crate) fn binding_map<L: LayoutView + ?Sized>(layout: &L) -> naga::back::spv::BindingMap {
    let mut map = naga::back::spv::BindingMap::new();
    for group in 0..layout.bind_group_count() {
        let Ok(group) = u32::try_from(group) else {
            break;
        };
        for entry in layout.bind_group_entries(group).unwrap_or_default() {
            if let Some(count) = entry.count {
                map.insert(
                    naga::ResourceBinding {
                        group,
                        binding: entry.binding,
                    },
                    naga::back::spv::BindingInfo {
                        descriptor_set: group,
                        binding: entry.binding,
                        binding_array_size: Some(count.get()),
                    },
                );
            }
        }
    }
    map
}

fn check_binding<L: LayoutView + ?Sized>(
    used: &ShaderBinding,
    naga_stage: naga::ShaderStage,
    layout: &L,
) -> Result<(), String> {
    let stage = stage_flag(naga_stage);
    let shader = describe_kind(&used.kind);
    let Some(entries) = layout.bind_group_entries(used.group) else {
        return Err(format!(
            "the shader uses {shader}, and the layout has only {} bind groups",
            layout.bind_group_count()
        ));
    };
    let Some(entry) = entries.iter().find(|e| e.binding == used.binding) else {
        return Err(format!(
            "the shader uses {shader}, and the layout has no such binding"
        ));
    };
    if !compatible(&used.kind, &entry.ty) {
        return Err(format!(
            "the shader uses {shader}, the layout has {}",
            describe_type(&entry.ty)
        ));
    }
    if !entry.visibility.contains(stage) {
        let names: Vec<_> = entry
            .visibility
            .iter_names()
            .map(|(name, _)| name)
            .collect();
        return Err(format!(
            "visible to {} only, not to the {:?} stage that uses it",
            if names.is_empty() {
                "no stage".to_owned()
            } else {
                names.join(" | ")
            },
            naga_stage
        ));
    }
    if let (
        BindingKind::UniformBuffer { min_size } | BindingKind::StorageBuffer { min_size, .. },
        wgt::BindingType::Buffer {
            min_binding_size: Some(layout_min),
            ..
        },
    ) = (used.kind, entry.ty)
    {
        if layout_min.get() < min_size {
            return Err(format!(
                "the layout's min_binding_size {layout_min} is less than the \
                 {min_size} bytes of the shader's type"
            ));
        }
    }
    match (used.count, entry.count) {
        (BindingCount::Single, None) | (BindingCount::Unbounded, Some(_)) => Ok(()),
        (BindingCount::Array(n), Some(m)) if m >= n => Ok(()),
        (BindingCount::Array(n), Some(m)) => Err(format!(
            "the shader's binding array has {n} elements, the layout's only {m}"
        )),
        (BindingCount::Single, Some(m)) => Err(format!(
            "the shader uses a single resource, the layout has an array of {m}"
        )),
        (BindingCount::Array(_) | BindingCount::Unbounded, None) => {
            Err("the shader uses a binding array, the layout has a single resource".to_owned())
        }
    }
}

/// Whether a layout entry of type `ty` serves a binding of `kind`.
fn compatible(kind: &BindingKind, ty: &wgt::BindingType) -> bool {
    use wgt::BindingType as T;
    match (*kind, *ty) {
        (
            BindingKind::UniformBuffer { .. },
            T::Buffer {
                ty: wgt::BufferBindingType::Uniform,
                ..
            },
        ) => true,
        (
            BindingKind::StorageBuffer { read_only, .. },
            T::Buffer {
                ty:
                    wgt::BufferBindingType::Storage {
                        read_only: layout_read_only,
                    },
                ..
            },
        ) => read_only || !layout_read_only,
        (BindingKind::Sampler { comparison }, T::Sampler(s)) => {
            comparison == (s == wgt::SamplerBindingType::Comparison)
        }
        (
            BindingKind::SampledTexture {
                dimension,
                multisampled,
                sample_kind,
            },
            T::Texture {
                sample_type,
                view_dimension,
                multisampled: layout_multisampled,
            },
        ) => {
            use wgt::TextureSampleType as Tst;
            let sample_ok = matches!(
                (sample_kind, sample_type),
                (SampleKind::Float, Tst::Float { .. } | Tst::Depth)
                    | (SampleKind::Depth, Tst::Depth)
                    | (SampleKind::Sint, Tst::Sint)
                    | (SampleKind::Uint, Tst::Uint)
            );
            sample_ok && dimension == view_dimension && multisampled == layout_multisampled
        }
        (
            BindingKind::StorageTexture {
                dimension,
                format,
                access,
            },
            T::StorageTexture {
                access: layout_access,
                format: layout_format,
                view_dimension,
            },
        ) => {
            use wgt::StorageTextureAccess as A;
            let access_ok = access == layout_access
                || layout_access == A::Atomic
                || (layout_access == A::ReadWrite && access != A::Atomic);
            access_ok && format == layout_format && dimension == view_dimension
        }
        (BindingKind::ExternalTexture, T::ExternalTexture) => true,
        (
            BindingKind::AccelerationStructure { vertex_return },
            T::AccelerationStructure {
                vertex_return: layout_vertex_return,
            },
        ) => !vertex_return || layout_vertex_return,
        _ => false,
    }
}

/// "a uniform buffer", "a 2d float texture", … for messages.
fn describe_kind(kind: &BindingKind) -> String {
    match *kind {
        BindingKind::UniformBuffer { .. } => "a uniform buffer".to_owned(),
        BindingKind::StorageBuffer { read_only, .. } => storage_buffer(read_only).to_owned(),
        BindingKind::Sampler { comparison: true } => "a comparison sampler".to_owned(),
        BindingKind::Sampler { comparison: false } => "a non-comparison sampler".to_owned(),
        BindingKind::SampledTexture {
            dimension,
            multisampled,
            sample_kind,
        } => {
            let kind = match sample_kind {
                SampleKind::Float => "float",
                SampleKind::Depth => "depth",
                SampleKind::Sint => "sint",
                SampleKind::Uint => "uint",
            };
            texture(multisampled, dimension, kind)
        }
        BindingKind::StorageTexture {
            dimension,
            format,
            access,
        } => storage_texture(dimension, format, access),
        BindingKind::ExternalTexture => "an external texture".to_owned(),
        BindingKind::AccelerationStructure { vertex_return } => {
            acceleration_structure(vertex_return).to_owned()
        }
    }
}

/// The layout side's counterpart of [`describe_kind`].
fn describe_type(ty: &wgt::BindingType) -> String {
    use wgt::BindingType as T;
    match *ty {
        T::Buffer {
            ty: wgt::BufferBindingType::Uniform,
            ..
        } => "a uniform buffer".to_owned(),
        T::Buffer {
            ty: wgt::BufferBindingType::Storage { read_only },
            ..
        } => storage_buffer(read_only).to_owned(),
        T::Sampler(wgt::SamplerBindingType::Comparison) => "a comparison sampler".to_owned(),
        T::Sampler(wgt::SamplerBindingType::Filtering) => "a filtering sampler".to_owned(),
        T::Sampler(wgt::SamplerBindingType::NonFiltering) => "a non-filtering sampler".to_owned(),
        T::Texture {
            sample_type,
            view_dimension,
            multisampled,
        } => {
            let kind = match sample_type {
                wgt::TextureSampleType::Float { filterable: true } => "float",
                wgt::TextureSampleType::Float { filterable: false } => "unfilterable float",
                wgt::TextureSampleType::Depth => "depth",
                wgt::TextureSampleType::Sint => "sint",
                wgt::TextureSampleType::Uint => "uint",
            };
            texture(multisampled, view_dimension, kind)
        }
        T::StorageTexture {
            access,
            format,
            view_dimension,
        } => storage_texture(view_dimension, format, access),
        T::ExternalTexture => "an external texture".to_owned(),
        T::AccelerationStructure { vertex_return } => {
            acceleration_structure(vertex_return).to_owned()
        }
    }
}

fn storage_buffer(read_only: bool) -> &'static str {
    if read_only {
        "a read-only storage buffer"
    } else {
        "a read-write storage buffer"
    }
}

fn acceleration_structure(vertex_return: bool) -> &'static str {
    if vertex_return {
        "an acceleration structure with vertex return"
    } else {
        "an acceleration structure"
    }
}

fn texture(multisampled: bool, dimension: wgt::TextureViewDimension, kind: &str) -> String {
    let ms = if multisampled { "multisampled " } else { "" };
    format!("a {ms}{} {kind} texture", dimension_name(dimension))
}

fn storage_texture(
    dimension: wgt::TextureViewDimension,
    format: wgt::TextureFormat,
    access: wgt::StorageTextureAccess,
) -> String {
    let access = match access {
        wgt::StorageTextureAccess::ReadOnly => "read-only",
        wgt::StorageTextureAccess::WriteOnly => "write-only",
        wgt::StorageTextureAccess::ReadWrite => "read-write",
        wgt::StorageTextureAccess::Atomic => "atomic",
    };
    format!(
        "a {access} {} storage texture of {format:?}",
        dimension_name(dimension)
    )
}

fn dimension_name(dimension: wgt::TextureViewDimension) -> &'static str {
    use wgt::TextureViewDimension as V;
    match dimension {
        V::D1 => "1d",
        V::D2 => "2d",
        V::D2Array => "2d-array",
        V::Cube => "cube",
        V::CubeArray => "cube-array",
        V::D3 => "3d",
    }
}
