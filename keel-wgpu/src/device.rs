//! `wgpu::Device` on keel-hal: object creation, error scopes, polling.

use std::borrow::Cow;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

use keel_hal::dynamic::DynResources;
use keel_hal::{BufferUses, Memory, TextureUses};
use parking_lot::Mutex;
use wgpu::custom::{self as cu};

use crate::binding::{derive_layouts, BindGroupLayout, PipelineLayout, StageReflection};
use crate::create_check;
use crate::error::KeelError;
use crate::handles::*;
use crate::owner::{owned, same_device};
use crate::pipeline::{ComputePipeline, MeshStages, RasterParts, RenderPipeline, ShaderModule};
use crate::resource::{Buffer, LastUse, MapState, QuerySet, Sampler, Texture, TextureView};
use crate::shared::DeviceShared;

/// The stages push constants ("immediates") are visible to: wgpu gives one
/// range to every stage.
pub(crate) const IMMEDIATE_STAGES: wgpu::ShaderStages =
    wgpu::ShaderStages::VERTEX_FRAGMENT.union(wgpu::ShaderStages::COMPUTE);

/// The user's handle on a device (wgpu's `Device` and `Queue` each hold
/// one): when both are gone, work recorded for a submit that will never
/// come is dropped, which lets the shared state go with the last object.
#[derive(Debug)]
pub(crate) struct DeviceHandle {
    pub shared: Arc<DeviceShared>,
}

impl Drop for DeviceHandle {
    fn drop(&mut self) {
        let (pending, maps, staging) = {
            let mut subs = self.shared.subs.lock();
            (
                std::mem::take(&mut subs.pending),
                std::mem::take(&mut subs.maps),
                std::mem::take(&mut subs.staging),
            )
        };
        drop(pending);
        drop(staging);
        for map in maps {
            *map.buffer.map.lock() = MapState::Idle;
            (map.callback)(Err(wgpu::BufferAsyncError));
        }
    }
}

/// `wgpu::Device`.
#[derive(Debug)]
pub(crate) struct KeelDevice {
    pub handle: Arc<DeviceHandle>,
}

impl KeelDevice {
    fn shared(&self) -> &Arc<DeviceShared> {
        &self.handle.shared
    }
}

/// Unmaps a buffer: a staging buffer written for `mapped_at_creation` is
/// copied in at the start of the next submit.
pub(crate) fn unmap(buffer: &Arc<Buffer>) {
    // wgpu-core's first check: an invalid buffer cannot be unmapped.
    if buffer.raw.is_none() {
        buffer.shared.report(KeelError::validation(
            "unmap",
            format!("{} is invalid", buffer.ident()),
        ));
        return;
    }
    buffer
        .map_asked
        .store(false, std::sync::atomic::Ordering::Release);
    // wgpu-core's `unmap_inner`: a destroyed buffer's `try_raw` fails
    // before anything is unmapped (`DestroyedResource`); its mapping goes
    // with the buffer.
    if buffer.destroyed.load(std::sync::atomic::Ordering::Acquire) {
        buffer.shared.report(KeelError::validation(
            "unmap",
            format!("{} has been destroyed", buffer.ident()),
        ));
        return;
    }
    let state = std::mem::take(&mut *buffer.map.lock());
    match state {
        MapState::Mapped { staging, .. } => {
            if let Some(staging) = staging {
                // SAFETY: mapped by this device; wgpu dropped every range.
                if let Some(raw) = staging.raw.as_deref() {
                    unsafe { buffer.shared.hal().unmap_buffer(raw) };
                }
                buffer
                    .shared
                    .subs
                    .lock()
                    .pending
                    .push(crate::command::Cmd::CopyBufferToBuffer {
                        src: staging.clone(),
                        src_offset: 0,
                        dst: buffer.clone(),
                        dst_offset: 0,
                        size: staging.size.min(buffer.size),
                    });
            } else if let Some(raw) = buffer.raw.as_deref() {
                // SAFETY: mapped by this device; wgpu dropped every range.
                unsafe { buffer.shared.hal().unmap_buffer(raw) };
                // The CPU's writes are made visible by the next submit.
                *buffer.state.lock() = BufferUses::empty();
            }
        }
        MapState::Pending { .. } => {
            // The callback fires with an error when its turn comes.
        }
        MapState::Idle => buffer
            .shared
            .report(KeelError::validation("unmap", "the buffer is not mapped")),
    }
}

/// Creates a view of `texture` (invalid, with the error reported, when
/// keel-hal refuses). The descriptor's defaults are resolved as wgpu-core
/// resolves them (`create_check::resolve_view`) before keel-hal sees it,
/// and the view keeps its resolved dimension and usage.
pub(crate) fn create_view(
    texture: &Arc<Texture>,
    desc: &wgpu::TextureViewDescriptor<'_>,
) -> Arc<TextureView> {
    let shared = &texture.shared;
    let resolved = create_check::resolve_view(texture, desc).and_then(|r| {
        create_check::check_multisampled_view(texture.sample_count, r.dimension, shared.features)
            .map(|()| r)
    });
    let (format, dimension, mips, layers, usage) = match &resolved {
        Ok(r) => (
            r.format,
            r.dimension,
            r.mip_level_count,
            r.array_layer_count,
            r.usage,
        ),
        Err(_) => (
            desc.format.unwrap_or(texture.format),
            desc.dimension.unwrap_or(wgpu::TextureViewDimension::D2),
            0,
            0,
            wgpu::TextureUsages::empty(),
        ),
    };
    let range = wgpu::ImageSubresourceRange {
        aspect: desc.aspect,
        base_mip_level: desc.base_mip_level,
        mip_level_count: Some(mips),
        base_array_layer: desc.base_array_layer,
        array_layer_count: Some(layers),
    };
    // A surface frame's texture is used under the submit lock (`raw`).
    let _frame_guard = texture.is_frame().then(|| shared.submit_lock.lock());
    let raw = match (texture.raw(), resolved) {
        (Err(e), _) => {
            shared.report(KeelError::validation("create_view", e));
            None
        }
        (Ok(_), Err(e)) => {
            shared.report(KeelError::validation("create_view", e));
            None
        }
        // A view wgpu allows that keel-hal makes none of: checked here,
        // made without a keel-hal view (no use of it is valid).
        (Ok(_), Ok(r)) if create_check::view_needs_no_hal(texture, &r) => {
            if let Err(e) = create_check::check_unbacked_view(
                texture,
                desc,
                &texture.view_formats,
                &r,
                shared.features,
            ) {
                shared.report(KeelError::validation("create_view", e));
            }
            None
        }
        (Ok(raw), Ok(_)) => {
            let hal_desc = keel_hal::TextureViewDescriptor {
                label: desc.label,
                format: desc.format,
                dimension: Some(dimension),
                range,
            };
            // SAFETY: the texture came from this device and is alive.
            match unsafe { shared.hal().create_texture_view(raw, &hal_desc) } {
                Ok(view) => Some(view),
                Err(e) => {
                    shared.report(KeelError::from_hal("create_view", &e));
                    None
                }
            }
        }
    };
    Arc::new(TextureView {
        shared: shared.clone(),
        raw,
        texture: texture.clone(),
        format,
        dimension,
        usage,
        aspect: desc.aspect,
        mips: desc.base_mip_level..desc.base_mip_level.saturating_add(mips),
        layers: desc.base_array_layer..desc.base_array_layer.saturating_add(layers),
        last_use: LastUse::default(),
    })
}

/// The keel-hal cache behind a wgpu one (an invalid cache: none); a cache
/// of another backend or device is an error.
fn cache_of<'c>(
    on: &Arc<DeviceShared>,
    cache: Option<&'c wgpu::PipelineCache>,
) -> Result<Option<&'c dyn keel_hal::dynamic::DynPipelineCache>, String> {
    let Some(cache) = cache else {
        return Ok(None);
    };
    let k = cache.as_custom::<KPipelineCache>();
    owned(on, k)?;
    Ok(k.and_then(|c| c.0.raw.as_deref()))
}

fn memory_for(usage: wgpu::BufferUsages) -> Memory {
    if usage.contains(wgpu::BufferUsages::MAP_READ) {
        Memory::Readback
    } else if usage.contains(wgpu::BufferUsages::MAP_WRITE) {
        Memory::Upload
    } else {
        Memory::Device
    }
}

/// Creates a buffer; `internal` ones (staging) skip wgpu's usage rules.
pub(crate) fn create_buffer(
    shared: &Arc<DeviceShared>,
    desc: &wgpu::BufferDescriptor<'_>,
) -> Arc<Buffer> {
    let invalid = |why: String| {
        shared.report(KeelError::validation("create_buffer", why));
        Arc::new(Buffer {
            shared: shared.clone(),
            raw: None,
            label: desc.label.unwrap_or_default().into(),
            size: desc.size,
            usage: desc.usage,
            memory: Memory::Device,
            last_use: LastUse::default(),
            state: Mutex::new(BufferUses::empty()),
            map: Mutex::new(MapState::Idle),
            map_asked: AtomicBool::new(false),
            destroyed: AtomicBool::new(false),
            uninit: Mutex::new(Vec::new()),
            indirect_source: OnceLock::new(),
        })
    };
    let usage = desc.usage;
    let map_read_ok = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
    let map_write_ok = wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC;
    let mappable_primary = shared
        .features
        .contains(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS);
    if usage.is_empty() || wgpu::BufferUsages::from_bits(usage.bits()).is_none() {
        return invalid(format!("Invalid usage flags {usage:?}"));
    }
    if !mappable_primary
        && ((usage.contains(wgpu::BufferUsages::MAP_READ) && !map_read_ok.contains(usage))
            || (usage.contains(wgpu::BufferUsages::MAP_WRITE) && !map_write_ok.contains(usage)))
    {
        return invalid(format!(
            "`MAP` usage can only be combined with the opposite `COPY`, requested {usage:?} \
             (MAP_READ goes only with COPY_DST and MAP_WRITE only with COPY_SRC without \
             MAPPABLE_PRIMARY_BUFFERS)"
        ));
    }
    if desc.size > shared.limits.max_buffer_size {
        return invalid(format!(
            "size {} is over the max_buffer_size limit {}",
            desc.size, shared.limits.max_buffer_size
        ));
    }
    if let Err(e) = create_check::check_buffer_features(usage, shared.features) {
        return invalid(e);
    }
    if desc.mapped_at_creation && !desc.size.is_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT) {
        return invalid(format!(
            "mapped_at_creation needs a size that is a multiple of 4; {} is not",
            desc.size
        ));
    }
    let memory = memory_for(usage);
    // Clears and copies work in 4-byte words: keel-hal's buffer is rounded up.
    let hal_size = desc.size.max(4).next_multiple_of(4);
    // Zero-initialisation and mapped-at-creation uploads copy into it.
    let mut hal_usage = if memory.is_mappable() {
        usage
    } else {
        usage | wgpu::BufferUsages::COPY_DST
    };
    // The indirect dispatch check reads indirect buffers as storage
    // (`indirect_check.rs`), as wgpu-core's does.
    if usage.contains(wgpu::BufferUsages::INDIRECT) && shared.indirect.enabled() {
        hal_usage |= wgpu::BufferUsages::STORAGE;
    }
    let hal_desc = keel_hal::BufferDescriptor {
        label: desc.label,
        size: hal_size,
        usage: hal_usage,
        memory,
    };
    // SAFETY: a plain creation on a live device.
    let raw = match unsafe { shared.hal().create_buffer(&hal_desc) } {
        Ok(raw) => raw,
        Err(e) => {
            shared.report(KeelError::from_hal("create_buffer", &e));
            return invalid_quiet(shared, desc);
        }
    };
    let mut map = MapState::Idle;
    let mut needs_clear = !memory.is_mappable();
    if memory.is_mappable() {
        // wgpu's rule: new buffers read as zeros.
        // SAFETY: mappable, created above, unused by the GPU.
        match unsafe { shared.hal().map_buffer(&*raw) } {
            Ok(mapping) => {
                // SAFETY: the mapping covers the whole buffer.
                unsafe { std::ptr::write_bytes(mapping.ptr.as_ptr(), 0, hal_size as usize) };
                if desc.mapped_at_creation {
                    map = MapState::Mapped {
                        ptr: mapping.ptr.as_ptr() as usize,
                        range: 0..desc.size,
                        staging: None,
                    };
                } else {
                    // SAFETY: mapped just above.
                    unsafe { shared.hal().unmap_buffer(&*raw) };
                }
            }
            Err(e) => {
                shared.report(KeelError::from_hal("create_buffer", &e));
                needs_clear = true;
            }
        }
    } else if desc.mapped_at_creation {
        let staging = create_staging(shared, hal_size);
        if let Some(raw_staging) = staging.raw.as_deref() {
            // SAFETY: a new Upload buffer.
            if let Ok(mapping) = unsafe { shared.hal().map_buffer(raw_staging) } {
                // SAFETY: zeroed so the unwritten part of the buffer reads 0.
                unsafe { std::ptr::write_bytes(mapping.ptr.as_ptr(), 0, hal_size as usize) };
                map = MapState::Mapped {
                    ptr: mapping.ptr.as_ptr() as usize,
                    range: 0..desc.size,
                    staging: Some(staging.clone()),
                };
                needs_clear = false;
            }
        }
    }
    let buffer = Arc::new(Buffer {
        shared: shared.clone(),
        raw: Some(raw),
        label: desc.label.unwrap_or_default().into(),
        size: desc.size,
        usage,
        memory,
        last_use: LastUse::default(),
        state: Mutex::new(BufferUses::empty()),
        map: Mutex::new(map),
        map_asked: AtomicBool::new(false),
        destroyed: AtomicBool::new(false),
        uninit: Mutex::new(if needs_clear {
            std::iter::once(0..hal_size).collect()
        } else {
            Vec::new()
        }),
        indirect_source: OnceLock::new(),
    });
    shared.live.buffer(&buffer);
    buffer
}

fn invalid_quiet(shared: &Arc<DeviceShared>, desc: &wgpu::BufferDescriptor<'_>) -> Arc<Buffer> {
    Arc::new(Buffer {
        shared: shared.clone(),
        raw: None,
        label: desc.label.unwrap_or_default().into(),
        size: desc.size,
        usage: desc.usage,
        memory: Memory::Device,
        last_use: LastUse::default(),
        state: Mutex::new(BufferUses::empty()),
        map: Mutex::new(MapState::Idle),
        map_asked: AtomicBool::new(false),
        destroyed: AtomicBool::new(false),
        uninit: Mutex::new(Vec::new()),
        indirect_source: OnceLock::new(),
    })
}

/// An Upload buffer keel-wgpu writes and copies from.
pub(crate) fn create_staging(shared: &Arc<DeviceShared>, size: u64) -> Arc<Buffer> {
    let desc = keel_hal::BufferDescriptor {
        label: Some("keel-wgpu staging"),
        size: size.max(4).next_multiple_of(4),
        usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
        memory: Memory::Upload,
    };
    // SAFETY: a plain creation on a live device.
    let raw = match unsafe { shared.hal().create_buffer(&desc) } {
        Ok(raw) => Some(raw),
        Err(e) => {
            shared.report(KeelError::from_hal("staging buffer", &e));
            None
        }
    };
    Arc::new(Buffer {
        shared: shared.clone(),
        raw,
        label: "keel-wgpu staging".into(),
        size: desc.size,
        usage: desc.usage,
        memory: Memory::Upload,
        last_use: LastUse::default(),
        state: Mutex::new(BufferUses::empty()),
        map: Mutex::new(MapState::Idle),
        map_asked: AtomicBool::new(false),
        destroyed: AtomicBool::new(false),
        uninit: Mutex::new(Vec::new()),
        indirect_source: OnceLock::new(),
    })
}

fn sampler_desc<'a>(desc: &wgpu::SamplerDescriptor<'a>) -> keel_hal::SamplerDescriptor<'a> {
    keel_hal::SamplerDescriptor {
        label: desc.label,
        address_modes: [
            desc.address_mode_u,
            desc.address_mode_v,
            desc.address_mode_w,
        ],
        mag_filter: desc.mag_filter,
        min_filter: desc.min_filter,
        mipmap_filter: desc.mipmap_filter,
        lod_clamp: desc.lod_min_clamp..desc.lod_max_clamp,
        compare: desc.compare,
        anisotropy_clamp: desc.anisotropy_clamp,
        border_color: desc.border_color,
    }
}

/// The 4-byte immediate data slots `stages` read (naga's analysis; wgpu
/// requires each set before a draw or dispatch).
/// The stages' buffers to check at each dispatch or draw
/// ([`crate::binding::late_sizes`]).
fn late_sizes(stages: &[(&ShaderModule, usize)], layout: &PipelineLayout) -> Vec<(u32, u32, u64)> {
    let mut sizes = Vec::new();
    for (module, entry_point) in stages {
        if let Some((naga, info)) = &module.naga {
            sizes.extend(crate::binding::late_sizes(naga, info, *entry_point, layout));
        }
    }
    sizes
}

fn immediate_slots(stages: &[(&ShaderModule, usize)]) -> naga::valid::ImmediateSlots {
    let mut slots = naga::valid::ImmediateSlots::default();
    for (module, entry_point) in stages {
        if let Some((naga, info)) = &module.naga {
            if *entry_point < naga.entry_points.len() {
                slots |= info.get_entry_point(*entry_point).immediate_slots_used;
            }
        }
    }
    slots
}

/// A stage's texture-sampler pairs against an explicit layout.
fn check_stage_sampling(
    module: &ShaderModule,
    entry_point: usize,
    layout: &PipelineLayout,
) -> Result<(), String> {
    match &module.naga {
        Some((naga, info)) => {
            crate::binding::check_min_binding_sizes(naga, info, entry_point, layout)?;
            create_check::check_sampling(naga, info, entry_point, layout)
        }
        None => Ok(()),
    }
}

/// A render or mesh pipeline's stages, each a module and entry point.
struct PipelineStages<'a> {
    /// A mesh pipeline's task stage, if it has one.
    task: Option<(&'a ShaderModule, usize)>,
    /// The vertex stage, or a mesh pipeline's mesh stage.
    front: (&'a ShaderModule, usize),
    /// `front` is a mesh stage.
    mesh: bool,
    fragment: Option<(&'a ShaderModule, usize)>,
}

impl<'a> PipelineStages<'a> {
    /// Every stage, in pipeline order.
    fn all(&self) -> Vec<(&'a ShaderModule, usize)> {
        self.task
            .into_iter()
            .chain([self.front])
            .chain(self.fragment)
            .collect()
    }
}

/// wgpu-core's render and mesh pipeline checks keel-hal does not make, in
/// its order: the colour targets' number and bytes per sample, the vertex
/// buffer layouts, the primitive, colour target and depth-stencil states,
/// each stage's sampling against an explicit layout, the vertex stage's
/// inputs and outputs (a mesh pipeline's task and mesh stages instead:
/// [`create_check::check_mesh_stages`]), the fragment stage against the
/// stage before it and the pipeline, the fragment outputs against the
/// targets, and the layout's groups and the vertex buffers against their
/// limits.
fn check_render_pipeline(
    shared: &DeviceShared,
    parts: &RasterParts<'_>,
    stages: &PipelineStages<'_>,
    layout: &PipelineLayout,
    explicit: bool,
) -> Result<(), String> {
    let explicit = explicit.then_some(layout);
    let targets = parts.targets();
    let formats: Vec<_> = targets
        .iter()
        .map(|t| t.as_ref().map(|t| t.format))
        .collect();
    crate::pass_check::check_color_formats(shared, &formats)?;
    create_check::check_vertex_buffers(parts.vertex_buffers, shared.features, &shared.limits)?;
    let samples = parts.multisample.count;
    let topology = parts.primitive.topology;
    create_check::check_primitive(parts.primitive)?;
    let dual_source_blending =
        create_check::check_color_targets(targets, samples, shared.features)?;
    let has_depth_attachment = match parts.depth_stencil {
        Some(ds) => create_check::check_depth_stencil(ds, samples, topology, shared.features)?,
        None => false,
    };
    if let Some(layout) = explicit {
        for (module, entry_point) in stages.all() {
            check_stage_sampling(module, entry_point, layout)?;
        }
    }
    fn naga_of(
        (module, ep): (&ShaderModule, usize),
    ) -> Option<(&naga::Module, &naga::valid::ModuleInfo, usize)> {
        module.naga.as_ref().map(|(naga, info)| (naga, info, ep))
    }
    let front = naga_of(stages.front);
    match (front, stages.task) {
        (Some((naga, _, entry_point)), task) if stages.mesh => {
            let task = task.and_then(naga_of).map(|(m, _, ep)| (m, ep));
            create_check::check_mesh_stages(task, (naga, entry_point), topology, &shared.limits)?;
        }
        (Some((naga, _, entry_point)), _) => {
            create_check::check_vertex_inputs(naga, entry_point, parts.vertex_buffers)?;
            create_check::check_vertex_outputs(naga, entry_point, topology, &shared.limits)?;
        }
        (None, _) => {}
    }
    if let Some((naga, info, entry_point)) = stages.fragment.and_then(naga_of) {
        let ctx = create_check::FragmentContext {
            topology,
            dual_source_blending,
            has_depth_attachment,
        };
        create_check::check_fragment_stage(
            front.map(|(m, _, ep)| (m, ep)),
            naga,
            info,
            entry_point,
            &ctx,
            &shared.limits,
        )?;
        create_check::check_fragment_outputs(naga, entry_point, targets)?;
    }
    create_check::check_pipeline_slots(layout, parts.vertex_buffers.len(), &shared.limits)
}

impl KeelDevice {
    fn new_layout(
        &self,
        label: Option<&str>,
        entries: &[wgpu::BindGroupLayoutEntry],
    ) -> Arc<BindGroupLayout> {
        let shared = self.shared();
        let desc = keel_hal::BindGroupLayoutDescriptor {
            label,
            flags: keel_hal::BindGroupLayoutFlags::empty(),
            entries,
        };
        let checked = create_check::check_layout_entries(entries, shared.features)
            .and_then(|()| create_check::check_binding_counts(entries, &shared.limits))
            .and_then(|()| create_check::check_binding_arrays(entries));
        let raw = match checked {
            Err(e) => {
                shared.report(KeelError::validation("create_bind_group_layout", e));
                None
            }
            // SAFETY: a plain creation on a live device.
            Ok(()) => match unsafe { shared.hal().create_bind_group_layout(&desc) } {
                Ok(raw) => Some(raw),
                Err(e) => {
                    shared.report(KeelError::from_hal("create_bind_group_layout", &e));
                    None
                }
            },
        };
        Arc::new(BindGroupLayout {
            shared: shared.clone(),
            raw,
            entries: entries.to_vec(),
            last_use: LastUse::default(),
            exclusive: None,
        })
    }

    fn new_pipeline_layout(
        &self,
        label: Option<&str>,
        groups: Vec<Arc<BindGroupLayout>>,
        immediate_size: u32,
    ) -> Arc<PipelineLayout> {
        let shared = self.shared();
        let checked =
            create_check::check_immediate_size(immediate_size, shared.features, &shared.limits)
                .and_then(|()| {
                    create_check::check_binding_counts(
                        groups.iter().flat_map(|g| g.entries.iter()),
                        &shared.limits,
                    )
                });
        let raw = if groups.iter().any(|g| g.raw.is_none()) {
            shared.report(KeelError::validation(
                "create_pipeline_layout",
                "a bind group layout is invalid",
            ));
            None
        } else if let Err(e) = checked {
            shared.report(KeelError::validation("create_pipeline_layout", e));
            None
        } else {
            let raws: Vec<&dyn keel_hal::dynamic::DynBindGroupLayout> =
                groups.iter().filter_map(|g| g.raw.as_deref()).collect();
            let ranges = [keel_hal::PushConstantRange {
                stages: IMMEDIATE_STAGES,
                range: 0..immediate_size,
            }];
            let desc = keel_hal::PipelineLayoutDescriptor::<DynResources> {
                label,
                bind_group_layouts: &raws,
                push_constant_ranges: if immediate_size > 0 { &ranges } else { &[] },
            };
            // SAFETY: every layout came from this device and is alive.
            match unsafe { shared.hal().create_pipeline_layout(&desc) } {
                Ok(raw) => Some(raw),
                Err(e) => {
                    shared.report(KeelError::from_hal("create_pipeline_layout", &e));
                    None
                }
            }
        };
        Arc::new(PipelineLayout {
            shared: shared.clone(),
            raw,
            groups,
            immediate_size,
            last_use: LastUse::default(),
        })
    }

    /// The explicit layout, or one derived from the stages' shaders.
    fn layout_for(
        &self,
        call: &'static str,
        explicit: Option<&wgpu::PipelineLayout>,
        stages: &[(&ShaderModule, usize)],
    ) -> Option<Arc<PipelineLayout>> {
        if let Some(layout) = explicit {
            return match owned(self.shared(), layout.as_custom::<KPipelineLayout>()) {
                Ok(layout) => Some(layout),
                Err(e) => {
                    self.shared()
                        .report(KeelError::validation(call, format!("the layout: {e}")));
                    None
                }
            };
        }
        let mut reflections = Vec::new();
        for (module, entry_point) in stages {
            // As wgpu-core: a passthrough module has no interface to
            // derive a layout from.
            if module.passthrough.is_some() {
                self.shared().report(KeelError::validation(
                    call,
                    "Unable to create implicit pipeline layout from passthrough shader stage",
                ));
                return None;
            }
            let (module, info) = module.naga.as_ref()?;
            reflections.push(StageReflection {
                module,
                info,
                entry_point: *entry_point,
            });
        }
        match derive_layouts(&reflections, self.shared().limits.max_bind_groups) {
            Ok(groups) => {
                // Compatible only with this pipeline's own derived layouts.
                let exclusive = crate::binding::exclusive_id();
                let groups = groups
                    .iter()
                    .map(|entries| {
                        let mut layout = self.new_layout(Some("derived"), entries);
                        if let Some(l) = Arc::get_mut(&mut layout) {
                            l.exclusive = Some(exclusive);
                        }
                        layout
                    })
                    .collect();
                // As wgpu-core: the immediates the stages' modules declare.
                let immediate_size = reflections
                    .iter()
                    .map(|r| naga::valid::ImmediateSlots::size_for_module(r.module))
                    .max()
                    .unwrap_or(0);
                Some(self.new_pipeline_layout(Some("derived"), groups, immediate_size))
            }
            Err(e) => {
                self.shared().report(KeelError::validation(call, e));
                None
            }
        }
    }

    fn stage<'m>(
        &self,
        call: &'static str,
        module: &'m wgpu::ShaderModule,
        entry_point: Option<&str>,
        stage: naga::ShaderStage,
    ) -> Option<(&'m Arc<ShaderModule>, usize, String)> {
        let module = match module.as_custom::<KShaderModule>() {
            Some(k) => match same_device(self.shared(), &*k.0) {
                Ok(()) => &k.0,
                Err(e) => {
                    self.shared().report(KeelError::validation(call, e));
                    return None;
                }
            },
            None => {
                self.shared().report(KeelError::validation(
                    call,
                    "a ShaderModule of another backend",
                ));
                return None;
            }
        };
        match module.entry_point(entry_point, stage) {
            Ok((index, name)) => Some((module, index, name)),
            Err(e) => {
                self.shared().report(KeelError::validation(call, e));
                None
            }
        }
    }
}

/// What a render and a mesh pipeline descriptor both give.
struct Raster<'a> {
    call: &'static str,
    label: Option<&'a str>,
    layout: Option<&'a wgpu::PipelineLayout>,
    parts: RasterParts<'a>,
    cache: Option<&'a wgpu::PipelineCache>,
}

/// The stages before rasterization: a vertex stage, or an optional task
/// stage and a mesh stage.
enum Front<'a> {
    Vertex(&'a wgpu::VertexState<'a>),
    Mesh(Option<&'a wgpu::TaskState<'a>>, &'a wgpu::MeshState<'a>),
}

/// One resolved stage: its module, entry point index and name, and the
/// override constants it is created with.
type Resolved<'m> = (
    &'m Arc<ShaderModule>,
    usize,
    String,
    Cow<'m, [(&'m str, f64)]>,
);

impl KeelDevice {
    /// A render or mesh pipeline (wgpu-core's `create_render_pipeline`,
    /// which makes both): wgpu-core's checks, then keel-hal's pipeline.
    fn raster_pipeline(&self, desc: &Raster<'_>, front: Front<'_>) -> cu::DispatchRenderPipeline {
        let shared = self.shared();
        let call = desc.call;
        let parts = &desc.parts;
        let invalid = |layout| {
            cu::DispatchRenderPipeline::custom(KRenderPipeline(Arc::new(RenderPipeline::invalid(
                shared, desc.label, layout,
            ))))
        };
        // wgpu-core's first checks: something to render to, a sample
        // count a backend can be asked for.
        let target_specified =
            parts.depth_stencil.is_some() || parts.targets().iter().any(Option::is_some);
        if !target_specified {
            shared.report(KeelError::validation(
                call,
                "At least one color attachment or depth-stencil attachment was expected, \
                 but no render target for the pipeline was specified.",
            ));
            return invalid(None);
        }
        let samples = parts.multisample.count;
        if samples == 0 || samples > 32 || !samples.is_power_of_two() {
            shared.report(KeelError::validation(
                call,
                format!("Invalid sample count {samples}"),
            ));
            return invalid(None);
        }
        let resolve = |module, entry_point, stage, constants| {
            self.stage(call, module, entry_point, stage)
                .map(|(m, i, name)| (m, i, name, m.webidl_constants(constants)))
        };
        let (task, front_stage): (Option<Resolved<'_>>, Resolved<'_>) = match front {
            Front::Vertex(v) => {
                let stage = naga::ShaderStage::Vertex;
                let constants = v.compilation_options.constants;
                match resolve(v.module, v.entry_point, stage, constants) {
                    Some(s) => (None, s),
                    None => return invalid(None),
                }
            }
            Front::Mesh(task, mesh) => {
                let needed = wgpu::Features::EXPERIMENTAL_MESH_SHADER;
                if !shared.features.contains(needed) {
                    shared.report(KeelError::validation(
                        call,
                        create_check::missing_features(needed),
                    ));
                    return invalid(None);
                }
                let task = match task {
                    Some(t) => {
                        let constants = t.compilation_options.constants;
                        match resolve(t.module, t.entry_point, naga::ShaderStage::Task, constants) {
                            Some(s) => Some(s),
                            None => return invalid(None),
                        }
                    }
                    None => None,
                };
                let constants = mesh.compilation_options.constants;
                match resolve(
                    mesh.module,
                    mesh.entry_point,
                    naga::ShaderStage::Mesh,
                    constants,
                ) {
                    Some(s) => (task, s),
                    None => return invalid(None),
                }
            }
        };
        let fragment = match parts.fragment {
            Some(f) => {
                let constants = f.compilation_options.constants;
                match resolve(
                    f.module,
                    f.entry_point,
                    naga::ShaderStage::Fragment,
                    constants,
                ) {
                    Some(s) => Some(s),
                    None => return invalid(None),
                }
            }
            None => None,
        };
        fn plain<'s>(s: &Resolved<'s>) -> (&'s ShaderModule, usize) {
            (&**s.0, s.1)
        }
        let stages = PipelineStages {
            task: task.as_ref().map(plain),
            front: plain(&front_stage),
            mesh: matches!(front, Front::Mesh(..)),
            fragment: fragment.as_ref().map(plain),
        };
        let all = stages.all();
        let Some(layout) = self.layout_for(call, desc.layout, &all) else {
            return invalid(None);
        };
        if let Err(e) =
            check_render_pipeline(shared, parts, &stages, &layout, desc.layout.is_some())
        {
            shared.report(KeelError::validation(call, e));
            return invalid(Some(layout));
        }
        let cache = match cache_of(shared, desc.cache) {
            Ok(cache) => cache,
            Err(e) => {
                shared.report(KeelError::validation(call, format!("the cache: {e}")));
                return invalid(Some(layout));
            }
        };
        fn hal_stage<'s>(
            s: &'s Resolved<'_>,
        ) -> Option<keel_hal::ProgrammableStage<'s, DynResources>> {
            s.0.raw
                .as_deref()
                .map(|raw| keel_hal::ProgrammableStage::<DynResources> {
                    module: raw,
                    entry_point: &s.2,
                    constants: &s.3,
                })
        }
        let Some(raw_layout) = layout.raw.as_deref() else {
            return invalid(Some(layout));
        };
        let (Some(raw_front), Some(raw_task), Some(fragment_stage)) = (
            hal_stage(&front_stage),
            task.as_ref()
                .map(hal_stage)
                .map_or(Some(None), |s| s.map(Some)),
            fragment
                .as_ref()
                .map(hal_stage)
                .map_or(Some(None), |s| s.map(Some)),
        ) else {
            return invalid(Some(layout));
        };
        let created = match front {
            Front::Vertex(vertex) => {
                let vertex_buffers: Vec<keel_hal::VertexBufferLayout<'_>> = vertex
                    .buffers
                    .iter()
                    .map(|b| match b {
                        Some(b) => keel_hal::VertexBufferLayout {
                            array_stride: b.array_stride,
                            step_mode: b.step_mode,
                            attributes: b.attributes,
                        },
                        // A gap: a slot with nothing in it.
                        None => keel_hal::VertexBufferLayout {
                            array_stride: 0,
                            step_mode: wgpu::VertexStepMode::Vertex,
                            attributes: &[],
                        },
                    })
                    .collect();
                let hal_desc = keel_hal::RenderPipelineDescriptor::<DynResources> {
                    label: desc.label,
                    layout: raw_layout,
                    vertex_buffers: &vertex_buffers,
                    vertex_stage: raw_front,
                    primitive: *parts.primitive,
                    depth_stencil: parts.depth_stencil.cloned(),
                    multisample: *parts.multisample,
                    fragment_stage,
                    color_targets: parts.targets(),
                    multiview_mask: parts.multiview_mask,
                    cache,
                };
                // SAFETY: every object came from this device and is alive.
                unsafe { shared.hal().create_render_pipeline(&hal_desc) }
            }
            Front::Mesh(..) => {
                let hal_desc = keel_hal::MeshPipelineDescriptor::<DynResources> {
                    label: desc.label,
                    layout: raw_layout,
                    task_stage: raw_task,
                    mesh_stage: raw_front,
                    primitive: *parts.primitive,
                    depth_stencil: parts.depth_stencil.cloned(),
                    multisample: *parts.multisample,
                    fragment_stage,
                    color_targets: parts.targets(),
                    multiview_mask: parts.multiview_mask,
                    cache,
                };
                // SAFETY: every object came from this device and is alive.
                unsafe { shared.hal().create_mesh_pipeline(&hal_desc) }
            }
        };
        match created {
            Ok(raw) => {
                let late = late_sizes(&all, &layout);
                let mut pipeline = RenderPipeline::invalid(shared, desc.label, Some(layout));
                pipeline.late_sizes = late;
                pipeline.raw = Some(raw);
                pipeline.describe(parts);
                pipeline.immediate_slots = immediate_slots(&all);
                pipeline.mesh = match (&front, &task) {
                    (Front::Vertex(_), _) => None,
                    (Front::Mesh(..), None) => Some(MeshStages::Mesh),
                    (Front::Mesh(..), Some(_)) => Some(MeshStages::TaskMesh),
                };
                cu::DispatchRenderPipeline::custom(KRenderPipeline(Arc::new(pipeline)))
            }
            Err(e) => {
                shared.report(KeelError::from_hal(call, &e));
                invalid(Some(layout))
            }
        }
    }
}

impl cu::DeviceInterface for KeelDevice {
    fn features(&self) -> wgpu::Features {
        self.shared().features
    }

    fn limits(&self) -> wgpu::Limits {
        self.shared().limits.clone()
    }

    fn adapter_info(&self) -> wgpu::AdapterInfo {
        self.shared().info.clone()
    }

    fn create_shader_module(
        &self,
        desc: wgpu::ShaderModuleDescriptor<'_>,
        _shader_bound_checks: wgpu::ShaderRuntimeChecks,
    ) -> cu::DispatchShaderModule {
        let shared = self.shared();
        let invalid = |message: String| {
            shared.report(KeelError::validation(
                "create_shader_module",
                message.clone(),
            ));
            cu::DispatchShaderModule::custom(KShaderModule(Arc::new(ShaderModule {
                shared: shared.clone(),
                raw: None,
                naga: None,
                passthrough: None,
                messages: vec![message],
            })))
        };
        let label = desc.label.map(str::to_string);
        // As wgpu-core: parse by source kind (WGSL, SPIR-V with wgpu's
        // options, a naga module as given), then validate every kind alike.
        let (module, text) = match &desc.source {
            wgpu::ShaderSource::Wgsl(source) => match naga::front::wgsl::parse_str(source) {
                Ok(module) => (module, source.to_string()),
                Err(inner) => {
                    let e = naga::error::ShaderError {
                        source: source.to_string(),
                        label,
                        inner: Box::new(inner),
                    };
                    return invalid(e.to_string());
                }
            },
            wgpu::ShaderSource::SpirV(words) => {
                let options = naga::front::spv::Options {
                    // wgpu's choice: programs give SPIR-V in Vulkan's
                    // clip space and wgpu flips nothing.
                    adjust_coordinate_space: false,
                    strict_capabilities: true,
                    block_ctx_dump_prefix: None,
                };
                match naga::front::spv::Frontend::new(words.iter().copied(), &options).parse() {
                    Ok(module) => (module, String::new()),
                    Err(inner) => {
                        let e = naga::error::ShaderError {
                            source: String::new(),
                            label,
                            inner: Box::new(inner),
                        };
                        return invalid(e.to_string());
                    }
                }
            }
            wgpu::ShaderSource::Naga(module) => (module.as_ref().clone(), String::new()),
            _ => {
                return invalid(
                    "keel-wgpu takes WGSL, SPIR-V and naga modules; this source kind \
                     (GLSL) is not built in"
                        .into(),
                )
            }
        };
        let mut validator = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            shared.hal().shader_capabilities(),
        );
        let info = match validator.validate(&module) {
            Ok(info) => info,
            Err(inner) => {
                let e = naga::error::ShaderError {
                    source: text,
                    label,
                    inner: Box::new(inner),
                };
                return invalid(e.to_string());
            }
        };
        let hal_desc = keel_hal::ShaderModuleDescriptor {
            label: desc.label,
            source: keel_hal::ShaderSource::Naga(Cow::Borrowed(&module)),
        };
        // SAFETY: a plain creation on a live device.
        let raw = match unsafe { shared.hal().create_shader_module(&hal_desc) } {
            Ok(raw) => raw,
            Err(e) => return invalid(e.to_string()),
        };
        cu::DispatchShaderModule::custom(KShaderModule(Arc::new(ShaderModule {
            shared: shared.clone(),
            raw: Some(raw),
            naga: Some((module, info)),
            passthrough: None,
            messages: Vec::new(),
        })))
    }

    unsafe fn create_shader_module_passthrough(
        &self,
        desc: &wgpu::ShaderModuleDescriptorPassthrough<'_>,
    ) -> cu::DispatchShaderModule {
        let shared = self.shared();
        let call = "create_shader_module_passthrough";
        let module = |raw, passthrough, messages| {
            cu::DispatchShaderModule::custom(KShaderModule(Arc::new(ShaderModule {
                shared: shared.clone(),
                raw,
                naga: None,
                passthrough,
                messages,
            })))
        };
        // wgpu-core's checks, in its order: the feature, one entry point
        // for GLSL or DXIL, then code for this backend (SPIR-V).
        let refusal = if !shared
            .features
            .contains(wgpu::Features::PASSTHROUGH_SHADERS)
        {
            Some(create_check::missing_features(
                wgpu::Features::PASSTHROUGH_SHADERS,
            ))
        } else if (desc.dxil.is_some() || desc.glsl.is_some()) && desc.entry_points.len() != 1 {
            Some(
                "Generic passthrough shaders which use GLSL or DXIL must contain exactly one \
                 entry point."
                    .into(),
            )
        } else if desc.spirv.is_none() {
            Some(
                "Generic shader passthrough does not contain any code compatible with this \
                 backend."
                    .into(),
            )
        } else {
            None
        };
        if let Some(message) = refusal {
            shared.report(KeelError::validation(call, message.clone()));
            return module(None, None, vec![message]);
        }
        let words = desc.spirv.as_deref().unwrap_or_default();
        // SAFETY: wgpu's contract for passthrough modules is the caller's
        // word that the code is valid for the device and every pipeline
        // made from it, which is `UncheckedSpirV::new`'s.
        let unchecked = unsafe { keel_hal::UncheckedSpirV::new(Cow::Borrowed(words)) };
        let hal_desc = keel_hal::ShaderModuleDescriptor {
            label: desc.label,
            source: keel_hal::ShaderSource::SpirVUnchecked(unchecked),
        };
        // SAFETY: a plain creation on a live device; the words are vouched
        // for above.
        match unsafe { shared.hal().create_shader_module(&hal_desc) } {
            Ok(raw) => module(
                Some(raw),
                Some(
                    desc.entry_points
                        .iter()
                        .map(|e| e.name.to_string())
                        .collect(),
                ),
                Vec::new(),
            ),
            Err(e) => {
                shared.report(KeelError::from_hal(call, &e));
                module(None, None, vec![e.to_string()])
            }
        }
    }

    fn create_bind_group_layout(
        &self,
        desc: &wgpu::BindGroupLayoutDescriptor<'_>,
    ) -> cu::DispatchBindGroupLayout {
        cu::DispatchBindGroupLayout::custom(KBindGroupLayout(
            self.new_layout(desc.label, desc.entries),
        ))
    }

    fn create_bind_group(&self, desc: &wgpu::BindGroupDescriptor<'_>) -> cu::DispatchBindGroup {
        cu::DispatchBindGroup::custom(KBindGroup(crate::bind_group::create(self.shared(), desc)))
    }

    fn create_pipeline_layout(
        &self,
        desc: &wgpu::PipelineLayoutDescriptor<'_>,
    ) -> cu::DispatchPipelineLayout {
        let groups: Result<Vec<_>, String> = desc
            .bind_group_layouts
            .iter()
            .map(|g| match g {
                Some(g) => owned(self.shared(), g.as_custom::<KBindGroupLayout>()),
                // A gap: an empty group.
                None => Ok(self.new_layout(Some("empty"), &[])),
            })
            .collect();
        // The layouts of a pipeline's own (derived) layout stay its own.
        let groups = groups
            .and_then(|groups| create_check::check_exclusive_groups(&groups).map(|()| groups));
        let groups = match groups {
            Ok(groups) => groups,
            Err(e) => {
                let shared = self.shared();
                shared.report(KeelError::validation("create_pipeline_layout", e));
                return cu::DispatchPipelineLayout::custom(KPipelineLayout(Arc::new(
                    PipelineLayout {
                        shared: shared.clone(),
                        raw: None,
                        groups: Vec::new(),
                        immediate_size: 0,
                        last_use: LastUse::default(),
                    },
                )));
            }
        };
        cu::DispatchPipelineLayout::custom(KPipelineLayout(self.new_pipeline_layout(
            desc.label,
            groups,
            desc.immediate_size,
        )))
    }

    fn create_render_pipeline(
        &self,
        desc: &wgpu::RenderPipelineDescriptor<'_>,
    ) -> cu::DispatchRenderPipeline {
        let raster = Raster {
            call: "create_render_pipeline",
            label: desc.label,
            layout: desc.layout,
            parts: RasterParts::render(desc),
            cache: desc.cache,
        };
        self.raster_pipeline(&raster, Front::Vertex(&desc.vertex))
    }

    fn create_mesh_pipeline(
        &self,
        desc: &wgpu::MeshPipelineDescriptor<'_>,
    ) -> cu::DispatchRenderPipeline {
        let raster = Raster {
            call: "create_mesh_pipeline",
            label: desc.label,
            layout: desc.layout,
            parts: RasterParts::mesh(desc),
            cache: desc.cache,
        };
        self.raster_pipeline(&raster, Front::Mesh(desc.task.as_ref(), &desc.mesh))
    }

    fn create_compute_pipeline(
        &self,
        desc: &wgpu::ComputePipelineDescriptor<'_>,
    ) -> cu::DispatchComputePipeline {
        let shared = self.shared();
        let call = "create_compute_pipeline";
        let invalid = |layout| {
            cu::DispatchComputePipeline::custom(KComputePipeline(Arc::new(ComputePipeline {
                shared: shared.clone(),
                raw: None,
                label: desc.label.unwrap_or_default().into(),
                layout,
                immediate_slots: Default::default(),
                late_sizes: Vec::new(),
                last_use: LastUse::default(),
            })))
        };
        let Some((module, index, name)) = self.stage(
            call,
            desc.module,
            desc.entry_point,
            naga::ShaderStage::Compute,
        ) else {
            return invalid(None);
        };
        let Some(layout) = self.layout_for(call, desc.layout, &[(module, index)]) else {
            return invalid(None);
        };
        if desc.layout.is_some() {
            if let Err(e) = check_stage_sampling(module, index, &layout) {
                shared.report(KeelError::validation(call, e));
                return invalid(Some(layout));
            }
        }
        let cache = match cache_of(shared, desc.cache) {
            Ok(cache) => cache,
            Err(e) => {
                shared.report(KeelError::validation(call, format!("the cache: {e}")));
                return invalid(Some(layout));
            }
        };
        let (Some(raw_layout), Some(raw_module)) = (layout.raw.as_deref(), module.raw.as_deref())
        else {
            return invalid(Some(layout));
        };
        let hal_desc = keel_hal::ComputePipelineDescriptor::<DynResources> {
            label: desc.label,
            layout: raw_layout,
            stage: keel_hal::ProgrammableStage {
                module: raw_module,
                entry_point: &name,
                constants: &module.webidl_constants(desc.compilation_options.constants),
            },
            cache,
        };
        // SAFETY: every object came from this device and is alive.
        match unsafe { shared.hal().create_compute_pipeline(&hal_desc) } {
            Ok(raw) => {
                cu::DispatchComputePipeline::custom(KComputePipeline(Arc::new(ComputePipeline {
                    shared: shared.clone(),
                    raw: Some(raw),
                    label: desc.label.unwrap_or_default().into(),
                    late_sizes: late_sizes(&[(module, index)], &layout),
                    layout: Some(layout),
                    immediate_slots: immediate_slots(&[(module, index)]),
                    last_use: LastUse::default(),
                })))
            }
            Err(e) => {
                shared.report(KeelError::from_hal(call, &e));
                invalid(Some(layout))
            }
        }
    }

    unsafe fn create_pipeline_cache(
        &self,
        desc: &wgpu::PipelineCacheDescriptor<'_>,
    ) -> cu::DispatchPipelineCache {
        let shared = self.shared();
        let hal_desc = keel_hal::PipelineCacheDescriptor {
            label: desc.label,
            data: desc.data,
            fallback: desc.fallback,
        };
        // SAFETY: wgpu's contract for the data (it came from `get_data`
        // of a cache of this adapter or is vouched for); keel-hal checks
        // its header before the driver sees it.
        let raw = match unsafe { shared.hal().create_pipeline_cache(&hal_desc) } {
            Ok(raw) => Some(raw),
            Err(e) => {
                shared.report(KeelError::from_hal("create_pipeline_cache", &e));
                None
            }
        };
        cu::DispatchPipelineCache::custom(KPipelineCache(Arc::new(
            crate::pipeline::PipelineCache {
                shared: shared.clone(),
                raw,
            },
        )))
    }

    fn create_buffer(&self, desc: &wgpu::BufferDescriptor<'_>) -> cu::DispatchBuffer {
        cu::DispatchBuffer::custom(KBuffer(create_buffer(self.shared(), desc)))
    }

    fn create_texture(&self, desc: &wgpu::TextureDescriptor<'_>) -> cu::DispatchTexture {
        let shared = self.shared();
        // Zero-initialisation writes it: `clear_texture` (colour, depth,
        // multisampled) or a copy of zeros (block-compressed), both
        // transfers; the program's usage stays what it asked for.
        // A transient attachment is never copied into (Vulkan allows it
        // attachment usages only): its clears are render passes.
        let usage = if desc
            .usage
            .contains(wgpu::TextureUsages::TRANSIENT_ATTACHMENT)
        {
            desc.usage
        } else {
            desc.usage | wgpu::TextureUsages::COPY_DST
        };
        let hal_desc = keel_hal::TextureDescriptor {
            label: desc.label,
            size: desc.size,
            mip_level_count: desc.mip_level_count,
            sample_count: desc.sample_count,
            dimension: desc.dimension,
            format: desc.format,
            usage,
            memory: Memory::Device,
            view_formats: desc.view_formats,
        };
        let size = desc.size;
        let zero = [
            ("X", size.width),
            ("Y", size.height),
            ("Z", size.depth_or_array_layers),
        ]
        .into_iter()
        .find(|&(_, n)| n == 0);
        let raw = if let Some((axis, _)) = zero {
            // wgpu-core's words for what keel-hal refuses too.
            shared.report(KeelError::validation(
                "create_texture",
                format!("Dimension {axis} is zero"),
            ));
            None
        } else if let Err(e) = create_check::check_texture_descriptor(desc, shared.features) {
            shared.report(KeelError::validation("create_texture", e));
            None
        } else {
            // SAFETY: a plain creation on a live device.
            match unsafe { shared.hal().create_texture(&hal_desc) } {
                Ok(raw) => Some(raw),
                Err(e) => {
                    shared.report(KeelError::from_hal("create_texture", &e));
                    None
                }
            }
        };
        let layers = match desc.dimension {
            wgpu::TextureDimension::D3 => 1,
            _ => desc.size.depth_or_array_layers,
        };
        let subresources = layers as usize * desc.mip_level_count as usize;
        let texture = Arc::new(Texture {
            shared: shared.clone(),
            raw,
            label: desc.label.unwrap_or_default().into(),
            size: desc.size,
            mip_level_count: desc.mip_level_count,
            sample_count: desc.sample_count,
            dimension: desc.dimension,
            format: desc.format,
            usage: desc.usage,
            view_formats: desc.view_formats.to_vec(),
            last_use: LastUse::default(),
            states: Mutex::new(vec![TextureUses::UNINITIALIZED; subresources]),
            destroyed: AtomicBool::new(false),
            frame: Mutex::new(None),
            surface: None,
        });
        if texture.raw.is_some() {
            shared.live.texture(&texture);
        }
        if texture.raw.is_some() && desc.format.is_compressed() {
            if let Err(e) = crate::queue::zero_compressed(shared, &texture) {
                // Unzeroed memory must not be read: the texture is unusable.
                texture.mark_destroyed();
                shared.report(KeelError {
                    call: "create_texture",
                    message: format!("zero-initialising the texture: {e}"),
                    kind: crate::error::ErrorKind::OutOfMemory,
                });
            }
        }
        cu::DispatchTexture::custom(KTexture(texture))
    }

    fn create_external_texture(
        &self,
        _desc: &wgpu::ExternalTextureDescriptor<'_>,
        _planes: &[&wgpu::TextureView],
    ) -> cu::DispatchExternalTexture {
        self.shared().report(KeelError::validation(
            "create_external_texture",
            "EXTERNAL_TEXTURE is not among keel-wgpu's features",
        ));
        cu::DispatchExternalTexture::custom(Unsupported)
    }

    fn create_blas(
        &self,
        _desc: &wgpu::CreateBlasDescriptor<'_>,
        _sizes: wgpu::BlasGeometrySizeDescriptors,
    ) -> (Option<u64>, cu::DispatchBlas) {
        self.shared().report(KeelError::validation(
            "create_blas",
            "acceleration structures are not among keel-wgpu's features",
        ));
        (None, cu::DispatchBlas::custom(Unsupported))
    }

    fn create_tlas(&self, _desc: &wgpu::CreateTlasDescriptor<'_>) -> cu::DispatchTlas {
        self.shared().report(KeelError::validation(
            "create_tlas",
            "acceleration structures are not among keel-wgpu's features",
        ));
        cu::DispatchTlas::custom(Unsupported)
    }

    fn create_sampler(&self, desc: &wgpu::SamplerDescriptor<'_>) -> cu::DispatchSampler {
        let shared = self.shared();
        let hal_desc = sampler_desc(desc);
        // SAFETY: a plain creation on a live device.
        let mut made = unsafe { shared.hal().create_sampler(&hal_desc) };
        // wgpu-core clamps anisotropy to 1 on an adapter that does not
        // filter anisotropically (a valid request with all-linear filters);
        // keel-hal refuses it: ask again without.
        let all_linear = desc.mag_filter == wgpu::FilterMode::Linear
            && desc.min_filter == wgpu::FilterMode::Linear
            && desc.mipmap_filter == wgpu::MipmapFilterMode::Linear;
        if matches!(made, Err(keel_hal::SamplerError::InvalidAnisotropy(_)))
            && all_linear
            && desc.anisotropy_clamp > 1
        {
            let clamped = keel_hal::SamplerDescriptor {
                anisotropy_clamp: 1,
                ..hal_desc
            };
            // SAFETY: as above.
            made = unsafe { shared.hal().create_sampler(&clamped) };
        }
        let raw = match made {
            Ok(raw) => Some(raw),
            Err(e) => {
                shared.report(KeelError::from_hal("create_sampler", &e));
                None
            }
        };
        cu::DispatchSampler::custom(KSampler(Arc::new(Sampler {
            shared: shared.clone(),
            raw,
            last_use: LastUse::default(),
            filtering: desc.min_filter == wgpu::FilterMode::Linear
                || desc.mag_filter == wgpu::FilterMode::Linear
                || desc.mipmap_filter == wgpu::MipmapFilterMode::Linear,
        })))
    }

    fn create_query_set(&self, desc: &wgpu::QuerySetDescriptor<'_>) -> cu::DispatchQuerySet {
        let shared = self.shared();
        let hal_desc = keel_hal::QuerySetDescriptor {
            label: desc.label,
            ty: desc.ty,
            count: desc.count,
        };
        // SAFETY: a plain creation on a live device.
        let raw = match unsafe { shared.hal().create_query_set(&hal_desc) } {
            Ok(raw) => Some(raw),
            Err(e) => {
                shared.report(KeelError::from_hal("create_query_set", &e));
                None
            }
        };
        // Only a set keel-hal made has queries to track (its count checked).
        let written = match raw {
            Some(_) => vec![false; desc.count as usize],
            None => Vec::new(),
        };
        cu::DispatchQuerySet::custom(KQuerySet(Arc::new(QuerySet {
            shared: shared.clone(),
            raw,
            label: desc.label.unwrap_or_default().into(),
            ty: desc.ty,
            count: desc.count,
            last_use: LastUse::default(),
            destroyed: AtomicBool::new(false),
            written: Mutex::new(written),
        })))
    }

    fn create_command_encoder(
        &self,
        _desc: &wgpu::CommandEncoderDescriptor<'_>,
    ) -> cu::DispatchCommandEncoder {
        cu::DispatchCommandEncoder::custom(crate::encoder::KCommandEncoder::new(self.shared()))
    }

    fn create_render_bundle_encoder(
        &self,
        desc: &wgpu::RenderBundleEncoderDescriptor<'_>,
    ) -> cu::DispatchRenderBundleEncoder {
        cu::DispatchRenderBundleEncoder::custom(crate::encoder::KRenderBundleEncoder::new(
            self.shared(),
            desc,
        ))
    }

    fn set_device_lost_callback(&self, callback: cu::BoxDeviceLostCallback) {
        let shared = self.shared();
        if shared.is_lost() {
            callback(wgpu::DeviceLostReason::Unknown, "the device is lost".into());
        } else {
            *shared.lost_callback.lock() = Some(callback);
        }
    }

    fn on_uncaptured_error(&self, handler: Arc<dyn wgpu::UncapturedErrorHandler>) {
        self.shared().errors.set_handler(handler);
    }

    fn push_error_scope(&self, filter: wgpu::ErrorFilter) -> u32 {
        self.shared().errors.push(filter)
    }

    fn pop_error_scope(&self, index: u32) -> std::pin::Pin<Box<dyn cu::PopErrorScopeFuture>> {
        Box::pin(std::future::ready(self.shared().errors.pop(index)))
    }

    unsafe fn start_graphics_debugger_capture(&self) {}

    unsafe fn stop_graphics_debugger_capture(&self) {}

    fn poll(
        &self,
        poll_type: wgpu::wgt::PollType<u64>,
    ) -> Result<wgpu::PollStatus, wgpu::PollError> {
        crate::queue::poll(self.shared(), poll_type)
    }

    fn get_internal_counters(&self) -> wgpu::InternalCounters {
        // keel-hal's live counts (wgpu keeps the values only with its
        // `counters` feature).
        let counters = wgpu::InternalCounters::default();
        let live = self.shared().hal().live_counts();
        let hal = &counters.hal;
        for (counter, value) in [
            (&hal.buffers, live.buffers),
            (&hal.textures, live.textures),
            (&hal.texture_views, live.texture_views),
            (&hal.bind_groups, live.bind_groups),
            (&hal.bind_group_layouts, live.bind_group_layouts),
            (&hal.render_pipelines, live.render_pipelines),
            (&hal.compute_pipelines, live.compute_pipelines),
            (&hal.ray_tracing_pipelines, live.ray_tracing_pipelines),
            (&hal.pipeline_layouts, live.pipeline_layouts),
            (&hal.samplers, live.samplers),
            (&hal.command_encoders, live.command_encoders),
            (&hal.shader_modules, live.shader_modules),
            (&hal.query_sets, live.query_sets),
            (&hal.fences, live.fences),
            (&hal.memory_allocations, live.memory_allocations),
        ] {
            counter.set(value);
        }
        counters
    }

    fn generate_allocator_report(&self) -> Option<wgpu::AllocatorReport> {
        Some(crate::allocator_report::report(self.shared()))
    }

    fn destroy(&self) {
        self.shared().destroy();
    }
}
