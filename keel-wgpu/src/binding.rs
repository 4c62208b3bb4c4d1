//! Bind group layouts, bind groups and pipeline layouts, and the layouts
//! derived from shaders for pipelines created with `layout: None`.

use std::collections::BTreeMap;
use std::sync::Arc;

use keel_hal::dynamic::{DynBindGroup, DynBindGroupLayout, DynPipelineLayout};
use keel_hal::{BufferUses, TextureUses};

use crate::resource::{Buffer, LastUse, Sampler, TextureView};
use crate::shared::{Dead, DeviceShared};

/// A bind group layout and its entries.
#[derive(Debug)]
pub(crate) struct BindGroupLayout {
    pub shared: Arc<DeviceShared>,
    pub raw: Option<Box<dyn DynBindGroupLayout>>,
    pub entries: Vec<wgpu::BindGroupLayoutEntry>,
    pub last_use: LastUse,
    /// For a layout derived for a pipeline (`layout: None`), that
    /// pipeline's [`exclusive_id`]: as on wgpu-core, it is compatible only
    /// with the layouts derived for the same pipeline.
    pub exclusive: Option<u64>,
}

/// A new id for the layouts derived for one pipeline.
pub(crate) fn exclusive_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl BindGroupLayout {
    pub(crate) fn entry(&self, binding: u32) -> Option<&wgpu::BindGroupLayoutEntry> {
        self.entries.iter().find(|e| e.binding == binding)
    }
}

impl Drop for BindGroupLayout {
    fn drop(&mut self) {
        if let Some(raw) = self.raw.take() {
            self.shared
                .bury(self.last_use.get(), Dead::BindGroupLayout(raw));
        }
    }
}

/// A buffer a bind group names, with how its binding uses it.
#[derive(Debug)]
pub(crate) struct BoundBuffer {
    pub buffer: Arc<Buffer>,
    pub usage: BufferUses,
}

/// A bind group and what it holds, for lifetimes and the usage tracker.
#[derive(Debug)]
pub(crate) struct BindGroup {
    pub shared: Arc<DeviceShared>,
    pub raw: Option<Box<dyn DynBindGroup>>,
    pub layout: Arc<BindGroupLayout>,
    pub buffers: Vec<BoundBuffer>,
    pub views: Vec<(Arc<TextureView>, TextureUses)>,
    pub samplers: Vec<Arc<Sampler>>,
    /// The dynamic bindings in binding order, for the offset checks.
    pub dynamic: Vec<DynamicBinding>,
    /// `(binding, bytes bound)` of each buffer entry, for the pipelines'
    /// `late_sizes`.
    pub buffer_sizes: Vec<(u32, u64)>,
    pub last_use: LastUse,
}

/// A buffer binding with a dynamic offset: where it starts and ends without
/// the offset, and the buffer's size.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DynamicBinding {
    pub binding: u32,
    pub uniform: bool,
    pub range: (u64, u64),
    pub buffer_size: u64,
}

impl Drop for BindGroup {
    fn drop(&mut self) {
        let last = self.last_use.get();
        for b in &self.buffers {
            b.buffer.last_use.bump(last);
        }
        for (v, _) in &self.views {
            v.last_use.bump(last);
        }
        for s in &self.samplers {
            s.last_use.bump(last);
        }
        self.layout.last_use.bump(last);
        if let Some(raw) = self.raw.take() {
            self.shared.bury(last, Dead::BindGroup(raw));
        }
    }
}

/// A pipeline layout and the group layouts it was made of.
#[derive(Debug)]
pub(crate) struct PipelineLayout {
    pub shared: Arc<DeviceShared>,
    pub raw: Option<Box<dyn DynPipelineLayout>>,
    pub groups: Vec<Arc<BindGroupLayout>>,
    /// Bytes of immediate data the layout holds (`set_immediates` ranges
    /// must lie inside).
    pub immediate_size: u32,
    pub last_use: LastUse,
}

impl Drop for PipelineLayout {
    fn drop(&mut self) {
        let last = self.last_use.get();
        for g in &self.groups {
            g.last_use.bump(last);
        }
        if let Some(raw) = self.raw.take() {
            self.shared.bury(last, Dead::PipelineLayout(raw));
        }
    }
}

/// How a binding uses a buffer.
pub(crate) fn buffer_use(ty: &wgpu::BindingType) -> Option<BufferUses> {
    match ty {
        wgpu::BindingType::Buffer { ty, .. } => Some(match ty {
            wgpu::BufferBindingType::Uniform => BufferUses::UNIFORM,
            wgpu::BufferBindingType::Storage { read_only: true } => BufferUses::STORAGE_READ_ONLY,
            wgpu::BufferBindingType::Storage { read_only: false } => BufferUses::STORAGE_READ_WRITE,
        }),
        _ => None,
    }
}

/// How a binding uses a texture view.
pub(crate) fn texture_use(ty: &wgpu::BindingType) -> Option<TextureUses> {
    match ty {
        wgpu::BindingType::Texture { .. } => Some(TextureUses::RESOURCE),
        wgpu::BindingType::StorageTexture { access, .. } => Some(match access {
            wgpu::StorageTextureAccess::ReadOnly => TextureUses::STORAGE_READ_ONLY,
            _ => TextureUses::STORAGE_READ_WRITE,
        }),
        _ => None,
    }
}

/// One shader stage a derived layout reads: the module, its analysis and
/// the entry point.
pub(crate) struct StageReflection<'a> {
    pub module: &'a naga::Module,
    pub info: &'a naga::valid::ModuleInfo,
    pub entry_point: usize,
}

/// The bind group layouts the stages use, as wgpu derives them for
/// `layout: None`: group index → binding → entry (visibility merged over
/// stages). Fails on a binding two stages declare differently.
pub(crate) fn derive_layouts(
    stages: &[StageReflection<'_>],
    max_bind_groups: u32,
) -> Result<Vec<Vec<wgpu::BindGroupLayoutEntry>>, String> {
    let mut groups: BTreeMap<u32, BTreeMap<u32, wgpu::BindGroupLayoutEntry>> = BTreeMap::new();
    for stage in stages {
        let ep = &stage.module.entry_points[stage.entry_point];
        let visibility = wgpu_naga_bridge::map_naga_stage(ep.stage);
        let uses = stage.info.get_entry_point(stage.entry_point);
        for (handle, var) in stage.module.global_variables.iter() {
            let Some(binding) = &var.binding else {
                continue;
            };
            if uses[handle].is_empty() {
                continue;
            }
            let Some(ty) = binding_type(stage.module, var)? else {
                continue;
            };
            let (ty, count) = ty;
            let group = groups.entry(binding.group).or_default();
            match group.get_mut(&binding.binding) {
                Some(existing) => {
                    if existing.ty != ty || existing.count != count {
                        return Err(format!(
                            "@group({}) @binding({}) is declared as {:?} in one stage and {:?} in another",
                            binding.group, binding.binding, existing.ty, ty
                        ));
                    }
                    existing.visibility |= visibility;
                }
                None => {
                    group.insert(
                        binding.binding,
                        wgpu::BindGroupLayoutEntry {
                            binding: binding.binding,
                            visibility,
                            ty,
                            count,
                        },
                    );
                }
            }
        }
    }
    let count = groups.keys().next_back().map_or(0, |g| g.saturating_add(1));
    if count > max_bind_groups {
        return Err(format!(
            "the shader uses @group({}); the device allows {max_bind_groups} bind groups",
            count - 1
        ));
    }
    Ok((0..count)
        .map(|g| {
            groups
                .remove(&g)
                .map(|entries| entries.into_values().collect())
                .unwrap_or_default()
        })
        .collect())
}

/// The buffers an entry point uses against an explicit layout's
/// `min_binding_size`s, in wgpu-core's words (keel-hal checks this too,
/// in its own).
pub(crate) fn check_min_binding_sizes(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    entry_point: usize,
    layout: &PipelineLayout,
) -> Result<(), String> {
    let uses = info.get_entry_point(entry_point);
    for (handle, var) in module.global_variables.iter() {
        let Some(binding) = &var.binding else {
            continue;
        };
        if uses[handle].is_empty()
            || !matches!(
                var.space,
                naga::AddressSpace::Uniform | naga::AddressSpace::Storage { .. }
            )
        {
            continue;
        }
        let entry = layout
            .groups
            .get(binding.group as usize)
            .and_then(|g| g.entry(binding.binding));
        let Some(wgpu::BindingType::Buffer {
            min_binding_size: Some(min),
            ..
        }) = entry.map(|e| e.ty)
        else {
            continue;
        };
        let size = u64::from(module.types[var.ty].inner.size(module.to_ctx()));
        if size > min.get() {
            return Err(format!(
                "Shader global ResourceBinding {{ group: {}, binding: {} }} is not available \
                 in the pipeline layout: Buffer structure size {size}, added to one element of \
                 an unbound array, if it's the last field, ended up greater than the given \
                 `min_binding_size`, which is {min}",
                binding.group, binding.binding
            ));
        }
    }
    Ok(())
}

/// `(group, binding, bytes)` for each buffer an entry point uses whose
/// layout entry has no `min_binding_size`: wgpu-core checks the bound size
/// against the shader's at each dispatch or draw.
pub(crate) fn late_sizes(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    entry_point: usize,
    layout: &PipelineLayout,
) -> Vec<(u32, u32, u64)> {
    let uses = info.get_entry_point(entry_point);
    let mut sizes = Vec::new();
    for (handle, var) in module.global_variables.iter() {
        let Some(binding) = &var.binding else {
            continue;
        };
        if uses[handle].is_empty()
            || !matches!(
                var.space,
                naga::AddressSpace::Uniform | naga::AddressSpace::Storage { .. }
            )
        {
            continue;
        }
        let entry = layout
            .groups
            .get(binding.group as usize)
            .and_then(|g| g.entry(binding.binding));
        if let Some(wgpu::BindingType::Buffer {
            min_binding_size: None,
            ..
        }) = entry.map(|e| e.ty)
        {
            let size = u64::from(module.types[var.ty].inner.size(module.to_ctx()));
            sizes.push((binding.group, binding.binding, size));
        }
    }
    sizes
}

type Derived = Option<(wgpu::BindingType, Option<std::num::NonZeroU32>)>;

/// The binding type of one resource variable.
fn binding_type(module: &naga::Module, var: &naga::GlobalVariable) -> Result<Derived, String> {
    let mut ty = var.ty;
    let mut count = None;
    if let naga::TypeInner::BindingArray { base, size } = module.types[ty].inner {
        ty = base;
        count = match size {
            naga::ArraySize::Constant(n) => Some(n),
            naga::ArraySize::Pending(_) | naga::ArraySize::Dynamic => {
                return Err(format!(
                    "binding array {:?} has no fixed size: give the pipeline an explicit layout",
                    var.name
                ))
            }
        };
    }
    let inner = &module.types[ty].inner;
    let derived = match var.space {
        naga::AddressSpace::Uniform => wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: std::num::NonZeroU64::new(u64::from(inner.size(module.to_ctx()))),
        },
        naga::AddressSpace::Storage { access } => wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage {
                read_only: !access.contains(naga::StorageAccess::STORE),
            },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        naga::AddressSpace::Handle => match *inner {
            naga::TypeInner::Sampler { comparison } => wgpu::BindingType::Sampler(if comparison {
                wgpu::SamplerBindingType::Comparison
            } else {
                wgpu::SamplerBindingType::Filtering
            }),
            naga::TypeInner::Image {
                dim,
                arrayed,
                class,
            } => {
                let view_dimension = match (dim, arrayed) {
                    (naga::ImageDimension::D1, _) => wgpu::TextureViewDimension::D1,
                    (naga::ImageDimension::D2, false) => wgpu::TextureViewDimension::D2,
                    (naga::ImageDimension::D2, true) => wgpu::TextureViewDimension::D2Array,
                    (naga::ImageDimension::D3, _) => wgpu::TextureViewDimension::D3,
                    (naga::ImageDimension::Cube, false) => wgpu::TextureViewDimension::Cube,
                    (naga::ImageDimension::Cube, true) => wgpu::TextureViewDimension::CubeArray,
                };
                match class {
                    naga::ImageClass::Sampled { kind, multi } => wgpu::BindingType::Texture {
                        sample_type: match kind {
                            naga::ScalarKind::Sint => wgpu::TextureSampleType::Sint,
                            naga::ScalarKind::Uint => wgpu::TextureSampleType::Uint,
                            _ => wgpu::TextureSampleType::Float { filterable: !multi },
                        },
                        view_dimension,
                        multisampled: multi,
                    },
                    naga::ImageClass::Depth { multi } => wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Depth,
                        view_dimension,
                        multisampled: multi,
                    },
                    naga::ImageClass::Storage { format, access } => {
                        let access = if access.contains(naga::StorageAccess::ATOMIC) {
                            wgpu::StorageTextureAccess::Atomic
                        } else if access
                            .contains(naga::StorageAccess::LOAD | naga::StorageAccess::STORE)
                        {
                            wgpu::StorageTextureAccess::ReadWrite
                        } else if access.contains(naga::StorageAccess::STORE) {
                            wgpu::StorageTextureAccess::WriteOnly
                        } else {
                            wgpu::StorageTextureAccess::ReadOnly
                        };
                        wgpu::BindingType::StorageTexture {
                            access,
                            format: wgpu_naga_bridge::map_storage_format_from_naga(format),
                            view_dimension,
                        }
                    }
                    naga::ImageClass::External => {
                        return Err("external textures are not supported by keel-wgpu".into())
                    }
                }
            }
            naga::TypeInner::AccelerationStructure { vertex_return } => {
                wgpu::BindingType::AccelerationStructure { vertex_return }
            }
            _ => return Ok(None),
        },
        _ => return Ok(None),
    };
    Ok(Some((derived, count)))
}
