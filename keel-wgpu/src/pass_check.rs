//! What wgpu-core checks while a pass or a render bundle is recorded, made
//! at the same commands: the state a pass keeps (pipeline, bind groups,
//! vertex and index buffers) and the checks against it at `set_*`, draw
//! and dispatch, and the usage scope (wgpu's: each dispatch of a compute
//! pass, a whole render pass with its bundles) whose conflicting uses are
//! errors. An error makes the encoder invalid; `finish` reports it (wgpu's
//! point). Nothing a failed check stood for reaches keel-hal: a command
//! buffer with an error is never replayed.
//!
//! The replay (`replay.rs`) keeps its own state checks as a second net.

use std::ops::Range;
use std::sync::Arc;

use keel_hal::{BufferUses, TextureUses};

use crate::binding::{BindGroup, BindGroupLayout, PipelineLayout};
use crate::command::{DrawFamily, GroupSlot, GroupTable, PassCmd, RenderBundle};
use crate::pipeline::{ComputePipeline, MeshStages, RenderPipeline, Targets};
use crate::ptr_map::PtrMap;
use crate::resource::{Buffer, QuerySet, TextureView};
use crate::shared::DeviceShared;

/// Bind group slots a pass keeps (wgpu's `MAX_BIND_GROUPS`).
pub(crate) const MAX_GROUPS: usize = 8;

/// Buffer uses that exclude every other use in one scope (wgpu's).
const BUFFER_EXCLUSIVE: BufferUses = BufferUses::MAP_WRITE
    .union(BufferUses::COPY_DST)
    .union(BufferUses::STORAGE_READ_WRITE);
/// Texture uses that exclude every other use of a subresource in one scope.
const TEXTURE_EXCLUSIVE: TextureUses = TextureUses::COPY_DST
    .union(TextureUses::COLOR_TARGET)
    .union(TextureUses::DEPTH_STENCIL_WRITE)
    .union(TextureUses::STORAGE_READ_WRITE)
    .union(TextureUses::PRESENT);

/// wgpu's words for a conflict in a usage scope.
fn conflict(
    what: String,
    current: impl std::fmt::Debug,
    new: impl std::fmt::Debug,
    exclusive: impl std::fmt::Debug,
) -> String {
    format!(
        "Attempted to use {what} with conflicting usages. Current usage {current:?} and new \
         usage {new:?}. {exclusive:?} is an exclusive usage and cannot be used with any other \
         usages within the usage scope (renderpass or compute dispatch)"
    )
}

/// wgpu's words for a resource used without the usage it needs.
pub(crate) fn missing_usage(
    what: String,
    actual: impl std::fmt::Debug,
    expected: impl std::fmt::Debug,
) -> String {
    format!("Usage flags {actual:?} of {what} do not contain required usage flags {expected:?}")
}

/// Whether `range` of `b` (`size`: the rest of the buffer when `None`)
/// fits, as the bound size.
fn bound_size(b: &Buffer, offset: u64, size: Option<wgpu::BufferSize>) -> Result<u64, String> {
    let end = match size {
        Some(s) => offset.checked_add(s.get()),
        None => Some(b.size),
    };
    match end {
        Some(end) if offset <= b.size && end <= b.size => Ok(end - offset),
        _ => Err(format!(
            "Buffer range {offset}..{} is out of bounds for {} of size {}",
            end.unwrap_or(u64::MAX),
            b.ident(),
            b.size
        )),
    }
}

fn overlap(a: &Range<u32>, b: &Range<u32>) -> bool {
    a.start < b.end && b.start < a.end
}

fn aspects_overlap(a: wgpu::TextureAspect, b: wgpu::TextureAspect) -> bool {
    use wgpu::TextureAspect as A;
    a == b || a == A::All || b == A::All
}

/// The resources one usage scope uses and how, with the conflicts wgpu
/// refuses found as they are added.
#[derive(Debug, Default)]
pub(crate) struct UsageScope {
    pub buffers: Vec<(Arc<Buffer>, BufferUses)>,
    pub views: Vec<(Arc<TextureView>, TextureUses)>,
    /// Buffer → position in `buffers`, built past [`UsageScope::LINEAR`].
    buffer_index: PtrMap<usize>,
}

impl UsageScope {
    /// Up to this many buffers a linear search is cheaper than the index.
    const LINEAR: usize = 8;

    /// Empties the scope, keeping its storage.
    fn clear(&mut self) {
        self.buffers.clear();
        self.views.clear();
        self.buffer_index.clear();
    }

    /// Adds `usage` of `buffer`.
    pub(crate) fn buffer(&mut self, buffer: &Arc<Buffer>, usage: BufferUses) -> Result<(), String> {
        let key = Arc::as_ptr(buffer) as usize;
        let found = if self.buffers.len() <= Self::LINEAR {
            self.buffers
                .iter()
                .position(|(b, _)| Arc::ptr_eq(b, buffer))
        } else {
            if self.buffer_index.is_empty() {
                for (i, (b, _)) in self.buffers.iter().enumerate() {
                    self.buffer_index.insert(Arc::as_ptr(b) as usize, i);
                }
            }
            self.buffer_index.get(&key).copied()
        };
        match found {
            Some(i) => {
                let current = self.buffers[i].1;
                let union = current | usage;
                if union.intersects(BUFFER_EXCLUSIVE) && !union.bits().is_power_of_two() {
                    return Err(conflict(
                        buffer.ident(),
                        current,
                        usage,
                        union & BUFFER_EXCLUSIVE,
                    ));
                }
                self.buffers[i].1 = union;
            }
            None => {
                if !self.buffer_index.is_empty() {
                    self.buffer_index.insert(key, self.buffers.len());
                }
                self.buffers.push((buffer.clone(), usage));
            }
        }
        Ok(())
    }

    /// Adds `usage` of `view`'s subresources.
    pub(crate) fn view(
        &mut self,
        view: &Arc<TextureView>,
        usage: TextureUses,
    ) -> Result<(), String> {
        let mut same = false;
        for (v, u) in &self.views {
            if Arc::ptr_eq(v, view) && *u == usage {
                same = true;
                continue;
            }
            if !Arc::ptr_eq(&v.texture, &view.texture)
                || !overlap(&v.mips, &view.mips)
                || !overlap(&v.layers, &view.layers)
                || !aspects_overlap(v.aspect, view.aspect)
            {
                continue;
            }
            let union = *u | usage;
            if union.intersects(TEXTURE_EXCLUSIVE) && !union.bits().is_power_of_two() {
                return Err(conflict(
                    format!(
                        "{} (mips {:?} layers {:?})",
                        view.texture.ident(),
                        view.mips,
                        view.layers
                    ),
                    *u,
                    usage,
                    union & TEXTURE_EXCLUSIVE,
                ));
            }
        }
        if !same {
            self.views.push((view.clone(), usage));
        }
        Ok(())
    }

    /// Adds every resource of `group`.
    pub(crate) fn group(&mut self, group: &BindGroup) -> Result<(), String> {
        for b in &group.buffers {
            self.buffer(&b.buffer, b.usage)?;
        }
        for (view, usage) in &group.views {
            self.view(view, *usage)?;
        }
        Ok(())
    }

    /// Adds everything `other` uses.
    pub(crate) fn merge(&mut self, other: &UsageScope) -> Result<(), String> {
        for (b, u) in &other.buffers {
            self.buffer(b, *u)?;
        }
        for (v, u) in &other.views {
            self.view(v, *u)?;
        }
        Ok(())
    }
}

/// The resources one `transition_resources` call names, with wgpu-core's
/// checks (`transition_resources.rs`): each valid (`InvalidResource`;
/// destroyed ones fail at submit instead), the states given to one
/// buffer or to overlapping subresources of one texture compatible
/// (`ResourceUsageCompatibilityError`: the usage-scope rule on wgpu's own
/// `BufferUses`/`TextureUses`).
#[derive(Debug, Default)]
pub(crate) struct TransitionScope {
    buffers: Vec<(Arc<Buffer>, wgpu::wgt::BufferUses)>,
    textures: Vec<TextureTransitionEntry>,
}

/// A texture `transition_resources` named: its mips, layers and state.
type TextureTransitionEntry = (
    Arc<crate::resource::Texture>,
    Range<u32>,
    Range<u32>,
    wgpu::wgt::TextureUses,
);

impl TransitionScope {
    /// Adds `buffer` in `state`.
    pub(crate) fn buffer(
        &mut self,
        buffer: Arc<Buffer>,
        state: wgpu::wgt::BufferUses,
    ) -> Result<(), String> {
        use wgpu::wgt::BufferUses as U;
        buffer.handle()?;
        for (b, current) in &mut self.buffers {
            if !Arc::ptr_eq(b, &buffer) {
                continue;
            }
            let union = *current | state;
            if union.intersects(U::EXCLUSIVE) && !union.bits().is_power_of_two() {
                return Err(conflict(
                    buffer.ident(),
                    *current,
                    state,
                    union & U::EXCLUSIVE,
                ));
            }
            *current = union;
            return Ok(());
        }
        self.buffers.push((buffer, state));
        Ok(())
    }

    /// Adds the subresources `selector` names (all when `None`) of
    /// `texture` in `state`.
    pub(crate) fn texture(
        &mut self,
        texture: Arc<crate::resource::Texture>,
        selector: Option<wgpu::wgt::TextureSelector>,
        state: wgpu::wgt::TextureUses,
    ) -> Result<(), String> {
        use wgpu::wgt::TextureUses as U;
        if texture.raw.is_none() && !texture.is_frame() {
            return Err(format!("{} is invalid", texture.ident()));
        }
        let (mips, layers) = match selector {
            Some(s) => (s.mips, s.layers),
            None => (0..texture.mip_level_count, 0..texture.layers()),
        };
        for (t, m, l, u) in &self.textures {
            if !Arc::ptr_eq(t, &texture) || !overlap(m, &mips) || !overlap(l, &layers) {
                continue;
            }
            let union = *u | state;
            if union.intersects(U::EXCLUSIVE) && !union.bits().is_power_of_two() {
                return Err(conflict(
                    format!("{} (mips {mips:?} layers {layers:?})", texture.ident()),
                    *u,
                    state,
                    union & U::EXCLUSIVE,
                ));
            }
        }
        self.textures.push((texture, mips, layers, state));
        Ok(())
    }

    /// Keeps what was named for the submit's checks.
    pub(crate) fn keep(self, checks: &mut crate::command::SubmitChecks) {
        checks
            .buffers
            .extend(self.buffers.into_iter().map(|(b, _)| b));
        checks
            .textures
            .extend(self.textures.into_iter().map(|(t, ..)| t));
    }
}

/// Checks a list of colour attachment formats (a pass's, a bundle's, a
/// pipeline's targets) against `max_color_attachments` and
/// `max_color_attachment_bytes_per_sample` (wgpu-core's
/// `check_color_attachment_count` and
/// `validate_color_attachment_bytes_per_sample`).
pub(crate) fn check_color_formats(
    shared: &DeviceShared,
    formats: &[Option<wgpu::TextureFormat>],
) -> Result<(), String> {
    let limit = shared.limits.max_color_attachments;
    if formats.len() > limit as usize {
        return Err(format!(
            "The number of color attachments {} exceeds the limit {limit}",
            formats.len()
        ));
    }
    let limit = shared.limits.max_color_attachment_bytes_per_sample;
    let mut total: u32 = 0;
    for format in formats.iter().flatten() {
        let (Some(cost), Some(alignment)) = (
            format.target_pixel_byte_cost(),
            format.target_component_alignment(),
        ) else {
            continue;
        };
        total = total
            .next_multiple_of(alignment.max(1))
            .saturating_add(cost);
    }
    if total > limit {
        return Err(format!(
            "The total number of bytes per sample in color attachments {total} exceeds the \
             limit {limit}"
        ));
    }
    Ok(())
}

/// Checks a render bundle encoder's descriptor (wgpu-core's
/// `validate_render_bundle_encoder_descriptor`): the colour formats'
/// number, kind and renderability, the depth-stencil format, at least one
/// attachment. Returns the bundle's depth and stencil access.
pub(crate) fn check_bundle_descriptor(
    shared: &DeviceShared,
    desc: &wgpu::RenderBundleEncoderDescriptor<'_>,
) -> Result<ReadOnly, String> {
    check_color_formats(shared, desc.color_formats)?;
    let mut have_attachment = false;
    for &format in desc.color_formats.iter().flatten() {
        have_attachment = true;
        if !format.has_color_aspect() {
            return Err(format!("Format {format:?} is not a color format"));
        }
        if !format
            .guaranteed_format_features(shared.features)
            .allowed_usages
            .contains(wgpu::TextureUsages::RENDER_ATTACHMENT)
        {
            return Err(format!("Format {format:?} is not renderable"));
        }
    }
    let read_only = match desc.depth_stencil {
        Some(ds) => {
            have_attachment = true;
            let (depth, stencil) = (ds.format.has_depth_aspect(), ds.format.has_stencil_aspect());
            if !depth && !stencil {
                return Err(format!(
                    "Format {:?} is not a depth or stencil format",
                    ds.format
                ));
            }
            ReadOnly {
                depth: !depth || ds.depth_read_only,
                stencil: !stencil || ds.stencil_read_only,
            }
        }
        None => ReadOnly {
            depth: true,
            stencil: true,
        },
    };
    if !have_attachment {
        return Err(
            "Render bundle must have at least one color or depth stencil attachment".into(),
        );
    }
    Ok(read_only)
}

/// Checks `set_bind_group`'s arguments: the index, the group's validity,
/// the dynamic offsets' count, alignment and range.
fn check_set_group(
    shared: &DeviceShared,
    index: u32,
    group: Option<&Arc<BindGroup>>,
    offsets: &[u32],
) -> Result<(), String> {
    let max = shared.limits.max_bind_groups;
    if index >= max || index as usize >= MAX_GROUPS {
        return Err(format!(
            "Bind group index {index} is greater than the device's requested `max_bind_group` \
             limit {max}"
        ));
    }
    let Some(group) = group else {
        return check_null_group_offsets(index, offsets);
    };
    if group.raw.is_none() {
        return Err("BindGroup is invalid".into());
    }
    if group.dynamic.len() != offsets.len() {
        return Err(format!(
            "Bind group {index} expects {} dynamic offset{}. However {} dynamic offset{} \
             provided.",
            group.dynamic.len(),
            if group.dynamic.len() == 1 { "" } else { "s" },
            offsets.len(),
            if offsets.len() == 1 { " was" } else { "s were" },
        ));
    }
    for (i, (d, &offset)) in group.dynamic.iter().zip(offsets).enumerate() {
        let (limit_name, alignment) = if d.uniform {
            (
                "min_uniform_buffer_offset_alignment",
                shared.limits.min_uniform_buffer_offset_alignment,
            )
        } else {
            (
                "min_storage_buffer_offset_alignment",
                shared.limits.min_storage_buffer_offset_alignment,
            )
        };
        if alignment != 0 && offset % alignment != 0 {
            return Err(format!(
                "Dynamic binding offset index {i} with offset {offset} does not respect \
                 device's requested `{limit_name}` limit {alignment}"
            ));
        }
        let (start, end) = d.range;
        if end.saturating_add(offset as u64) > d.buffer_size {
            return Err(format!(
                "Dynamic binding at index {i} with offset {offset} would overrun the buffer \
                 bound to group {index} -> binding {}. Buffer size is {} bytes, the binding \
                 binds bytes {start}..{end}, meaning the maximum the binding can be offset is \
                 {} bytes",
                d.binding,
                d.buffer_size,
                d.buffer_size.saturating_sub(end)
            ));
        }
    }
    Ok(())
}

/// `set_bind_group(index, None, offsets)` takes no dynamic offsets
/// (wgpu-core's `set_bind_group`: `BindError::DynamicOffsetCountNotZero`).
fn check_null_group_offsets(index: u32, offsets: &[u32]) -> Result<(), String> {
    if !offsets.is_empty() {
        return Err(format!(
            "Dynamic offsets not expected with null bind group at index {index}. However {} \
             dynamic offset{} were provided.",
            offsets.len(),
            if offsets.len() >= 2 { "s" } else { "" }
        ));
    }
    Ok(())
}

/// `write_timestamp` inside a pass needs `TIMESTAMP_QUERY_INSIDE_PASSES`
/// (wgpu-core's `pass::write_timestamp`: `MissingFeatures`).
fn check_timestamp_in_pass(shared: &DeviceShared) -> Result<(), String> {
    let needed = wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES;
    if !shared.features.contains(needed) {
        return Err(crate::create_check::missing_features(needed));
    }
    Ok(())
}

/// Whether a group made for `have` may stand where `want` is expected:
/// the same layout, or one with the same entries (wgpu deduplicates equal
/// layouts).
fn layouts_compatible(have: &Arc<BindGroupLayout>, want: &Arc<BindGroupLayout>) -> bool {
    Arc::ptr_eq(have, want)
        || (have.exclusive == want.exclusive
            && have.entries.len() == want.entries.len()
            && have
                .entries
                .iter()
                .all(|e| want.entry(e.binding) == Some(e)))
}

/// The groups bound at each index, looked up in the pass's table.
type Bound<'t> = [Option<&'t Arc<BindGroup>>; MAX_GROUPS];

/// What `slots` name in `table`.
fn bound<'t>(table: &'t GroupTable, slots: &[Option<GroupSlot>; MAX_GROUPS]) -> Bound<'t> {
    slots.map(|s| s.and_then(|s| table.get(s)))
}

/// `set_bind_group`'s group: the slot a command names, in its table.
fn slot_group(
    table: &GroupTable,
    slot: Option<GroupSlot>,
) -> Result<Option<&Arc<BindGroup>>, String> {
    match slot {
        None => Ok(None),
        Some(s) => table
            .get(s)
            .map(Some)
            .ok_or_else(|| "the bind group is not in the pass's table".to_string()),
    }
}

/// The bound buffers a pipeline's shaders use without a layout
/// `min_binding_size` against the shaders' sizes (wgpu-core's late check).
fn check_late_sizes(groups: &Bound<'_>, late: &[(u32, u32, u64)]) -> Result<(), String> {
    for &(group, binding, shader_size) in late {
        let bound = groups
            .get(group as usize)
            .copied()
            .flatten()
            .and_then(|g| g.buffer_sizes.iter().find(|(b, _)| *b == binding));
        if let Some(&(_, bound_size)) = bound {
            if bound_size < shader_size {
                return Err(format!(
                    "In bind group index {group}, the buffer bound at binding index {binding} \
                     is bound with size {bound_size} where the shader expects {shader_size}."
                ));
            }
        }
    }
    Ok(())
}

/// Checks the bound groups against the pipeline's layout.
fn check_groups(
    groups: &Bound<'_>,
    layout: &PipelineLayout,
    pipeline: impl Fn() -> String,
) -> Result<(), String> {
    for (index, want) in layout.groups.iter().enumerate() {
        match groups.get(index).copied().flatten() {
            None => {
                return Err(format!(
                    "The current set {} expects a BindGroup to be set at index {index}",
                    pipeline()
                ))
            }
            Some(g) if !layouts_compatible(&g.layout, want) => {
                return Err(format!(
                    "The BindGroupLayout with '' label of current set BindGroup with '' label \
                     at index {index} is not compatible with the corresponding BindGroupLayout \
                     with '' label of {}: the group was made for a{} layout with entries {:?}, \
                     the pipeline expects {:?}",
                    pipeline(),
                    if g.layout.exclusive.is_some() {
                        " pipeline's derived"
                    } else {
                        "n explicit"
                    },
                    g.layout
                        .entries
                        .iter()
                        .map(|e| (e.binding, e.ty))
                        .collect::<Vec<_>>(),
                    want.entries
                        .iter()
                        .map(|e| (e.binding, e.ty))
                        .collect::<Vec<_>>()
                ))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Checks an indirect arguments buffer: its usage, offset and range.
fn check_indirect(buffer: &Buffer, offset: u64, size: u64) -> Result<(), String> {
    if !buffer.usage.contains(wgpu::BufferUsages::INDIRECT) {
        return Err(missing_usage(
            buffer.ident(),
            buffer.usage,
            wgpu::BufferUsages::INDIRECT,
        ));
    }
    if !offset.is_multiple_of(4) {
        return Err(format!(
            "Indirect buffer offset {offset} is not a multiple of 4"
        ));
    }
    if offset.checked_add(size).is_none_or(|end| end > buffer.size) {
        return Err(format!(
            "Indirect buffer of {size} bytes starting at offset {offset} would overrun \
             buffer of size {}",
            buffer.size
        ));
    }
    Ok(())
}

/// Checks `set_immediates`' range (wgpu-core's alignment check and
/// `validate_immediates_ranges`: a pipeline set, the range inside its
/// layout's immediate data) and returns the 4-byte slots it sets.
fn check_immediates(
    shared: &DeviceShared,
    layout: Option<&PipelineLayout>,
    offset: u32,
    len: usize,
) -> Result<naga::valid::ImmediateSlots, String> {
    let max = shared.limits.max_immediate_size;
    if !offset.is_multiple_of(4) || !len.is_multiple_of(4) {
        return Err(format!(
            "Immediate data offset {offset} and size {len} must be multiples of 4"
        ));
    }
    if (offset as u64).saturating_add(len as u64) > max as u64 {
        return Err(format!(
            "Immediate data range {offset}..{} is outside the device's `max_immediate_size` \
             limit {max}",
            offset as u64 + len as u64
        ));
    }
    let layout = layout.ok_or("Pipeline must be set before set_immediates")?;
    let size = layout.immediate_size;
    if offset as u64 + len as u64 > size as u64 {
        return Err(format!(
            "Immediate data range {offset}..{} is outside the pipeline layout's immediate \
             size {size}",
            offset as u64 + len as u64
        ));
    }
    // Both fit in `max_immediate_size` (a u32), checked above.
    Ok(naga::valid::ImmediateSlots::from_range(offset, len as u32))
}

/// Every immediate data slot the pipeline reads was set (wgpu-core's
/// `MissingImmediateData`, at each draw and dispatch).
fn check_immediates_set(
    set: naga::valid::ImmediateSlots,
    needed: naga::valid::ImmediateSlots,
) -> Result<(), String> {
    if !set.contains(needed) {
        return Err(format!(
            "Some immediate data the pipeline reads was never set: slots {:?}",
            needed.difference(set)
        ));
    }
    Ok(())
}

/// `pop_debug_group` in a pass (wgpu-core's `pop_debug_group`).
fn pop_debug_group(depth: &mut u32) -> Result<(), String> {
    if *depth == 0 {
        return Err("Cannot pop debug group, because number of pushed debug groups is zero".into());
    }
    *depth -= 1;
    Ok(())
}

/// Whether `set` holds queries of `ty` (wgpu-core's `validate_query`).
fn check_query_type(set: &QuerySet, ty: &str) -> Result<(), String> {
    let set_ty = match set.ty {
        wgpu::QueryType::Occlusion => "Occlusion",
        wgpu::QueryType::Timestamp => "Timestamp",
        wgpu::QueryType::PipelineStatistics(_) => "PipelineStatistics",
    };
    if set_ty != ty {
        return Err(format!(
            "Query type {ty} does not match the query set's type {set_ty}"
        ));
    }
    Ok(())
}

/// Begins a query where none of its kind may be active (wgpu-core's
/// `QueryUseError::AlreadyStarted`).
fn begin_query(active: &mut bool, index: u32) -> Result<(), String> {
    if *active {
        return Err(format!(
            "A query of this type is already active; query {index} cannot begin before it ends"
        ));
    }
    *active = true;
    Ok(())
}

/// Ends the active query of a kind (`QueryUseError::AlreadyStopped`).
fn end_query(active: &mut bool) -> Result<(), String> {
    if !*active {
        return Err("The query was already stopped, or never begun".into());
    }
    *active = false;
    Ok(())
}

/// What a pass may not leave open at its end (wgpu-core's
/// `DebugGroupError::MissingPop` and `QueryUseError::MissingEnd`).
fn check_pass_end(debug_depth: u32, occlusion: bool, statistics: bool) -> Result<(), String> {
    if debug_depth > 0 {
        return Err(format!(
            "{debug_depth} debug group(s) pushed in the pass were never popped"
        ));
    }
    if occlusion {
        return Err("An occlusion query was begun and never ended in the pass".into());
    }
    if statistics {
        return Err("A pipeline statistics query was begun and never ended in the pass".into());
    }
    Ok(())
}

/// The state of a compute pass being recorded.
#[derive(Debug)]
pub(crate) struct ComputeState {
    shared: Arc<DeviceShared>,
    pipeline: Option<Arc<ComputePipeline>>,
    groups: [Option<GroupSlot>; MAX_GROUPS],
    /// The groups the pass sets (moved into its record at the end).
    pub table: GroupTable,
    /// The pipeline and groups were checked together, and the groups'
    /// scope found free of conflicts, since the last change.
    checked: bool,
    /// The dispatch's usage scope, kept to reuse its storage.
    scope: UsageScope,
    /// The pipeline-and-groups combinations this pass's dispatches have
    /// passed (their checks and scope depend on nothing else), keyed by
    /// [`Combination::key`]: a pass cycling through groups checks each
    /// combination once.
    passed: PtrMap<Combination>,
    /// Debug groups pushed in the pass and not yet popped.
    debug_depth: u32,
    /// A pipeline-statistics query is active.
    statistics_active: bool,
    /// The immediate data slots `set_immediates` has set.
    immediates: naga::valid::ImmediateSlots,
}

impl ComputeState {
    pub(crate) fn new(shared: &Arc<DeviceShared>) -> Self {
        Self {
            shared: shared.clone(),
            pipeline: None,
            groups: Default::default(),
            table: GroupTable::default(),
            checked: false,
            scope: UsageScope::default(),
            passed: PtrMap::default(),
            debug_depth: 0,
            statistics_active: false,
            immediates: Default::default(),
        }
    }

    /// The checks at the pass's end: no debug group or query left open.
    pub(crate) fn end(&self) -> Result<(), String> {
        check_pass_end(self.debug_depth, false, self.statistics_active)
    }

    /// Checks `cmd` against the state and takes its changes.
    pub(crate) fn record(&mut self, cmd: &PassCmd) -> Result<(), String> {
        match cmd {
            PassCmd::SetComputePipeline(p) => {
                if p.raw.is_none() {
                    return Err(format!(
                        "ComputePipeline with '{}' label is invalid",
                        p.label
                    ));
                }
                self.pipeline = Some(p.clone());
                self.checked = false;
            }
            PassCmd::SetBindGroup {
                index,
                group,
                offsets,
            } => {
                let g = slot_group(&self.table, *group)?;
                check_set_group(&self.shared, *index, g, offsets)?;
                self.groups[*index as usize] = *group;
                self.checked = false;
            }
            PassCmd::SetImmediates { offset, data } => {
                let layout = self.pipeline.as_ref().and_then(|p| p.layout.as_deref());
                self.immediates |= check_immediates(&self.shared, layout, *offset, data.len())?;
            }
            PassCmd::PushDebugGroup(_) => self.debug_depth += 1,
            PassCmd::PopDebugGroup => pop_debug_group(&mut self.debug_depth)?,
            PassCmd::BeginStatisticsQuery { set, index } => {
                check_query_type(set, "PipelineStatistics")?;
                begin_query(&mut self.statistics_active, *index)?
            }
            PassCmd::EndStatisticsQuery => end_query(&mut self.statistics_active)?,
            PassCmd::WriteTimestamp { .. } => check_timestamp_in_pass(&self.shared)?,
            PassCmd::Dispatch(_) => self.dispatch(None)?,
            PassCmd::DispatchIndirect { buffer, offset } => {
                check_indirect(buffer, *offset, 12)?;
                self.dispatch(Some(buffer))?;
            }
            _ => {}
        }
        Ok(())
    }

    /// A dispatch's checks: a pipeline, its groups, and the dispatch's
    /// usage scope (the groups the pipeline uses, the indirect buffer).
    fn dispatch(&mut self, indirect: Option<&Arc<Buffer>>) -> Result<(), String> {
        if let Some(pipeline) = &self.pipeline {
            check_immediates_set(self.immediates, pipeline.immediate_slots)?;
        }
        if self.checked && indirect.is_none() {
            return Ok(());
        }
        let pipeline = self.pipeline.as_ref().ok_or("Pipeline must be set")?;
        // The pass keeps every pipeline it sets: an address stands for one
        // pipeline for the pass's whole life, as a slot for one group.
        let combination = Combination {
            pipeline: Arc::as_ptr(pipeline) as usize,
            groups: self.groups,
        };
        let key = combination.key();
        if indirect.is_none() && self.passed.get(&key) == Some(&combination) {
            self.checked = true;
            return Ok(());
        }
        let layout = pipeline
            .layout
            .as_ref()
            .ok_or("the compute pipeline is invalid")?;
        let groups = bound(&self.table, &self.groups);
        check_groups(&groups, layout, || {
            format!("ComputePipeline with '{}' label", pipeline.label)
        })?;
        check_late_sizes(&groups, &pipeline.late_sizes)?;
        let scope = &mut self.scope;
        scope.clear();
        for group in groups.iter().take(layout.groups.len()).flatten() {
            scope.group(group)?;
        }
        if let Some(buffer) = indirect {
            scope.buffer(buffer, BufferUses::INDIRECT)?;
        }
        scope.clear();
        self.checked = true;
        if indirect.is_none() {
            self.passed.insert(key, combination);
        }
        Ok(())
    }
}

/// A compute pipeline and the groups set with it, as one dispatch saw them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Combination {
    pipeline: usize,
    groups: [Option<GroupSlot>; MAX_GROUPS],
}

impl Combination {
    /// One word for [`PtrMap`] (its hasher mixes it); combinations that
    /// share one are told apart by comparing the whole.
    fn key(&self) -> usize {
        self.groups.iter().fold(self.pipeline, |key, slot| {
            key.rotate_left(7) ^ slot.map_or(usize::MAX, |s| s.index())
        })
    }
}

/// `set_viewport`'s rectangle and depth range (wgpu-core's
/// `set_viewport`: a size within `max_texture_dimension_2d`, a position
/// within twice that, depths in `0..=1` in order).
fn check_viewport(shared: &DeviceShared, rect: [f32; 4], depth: Range<f32>) -> Result<(), String> {
    let [x, y, w, h] = rect;
    let max = shared.limits.max_texture_dimension_2d as f32;
    if !(w >= 0.0 && h >= 0.0 && w <= max && h <= max) {
        return Err(format!(
            "Viewport size {{ w: {w}, h: {h} }} greater than device's requested \
             `max_texture_dimension_2d` limit {max}, or less than zero"
        ));
    }
    let range = max * 2.0;
    if !(x >= -range && y >= -range && x + w <= range - 1.0 && y + h <= range - 1.0) {
        return Err(format!(
            "Viewport has invalid rect {rect:?}; origin and/or size is less than or greater \
             than the bounds {}..{}",
            -range,
            range - 1.0
        ));
    }
    let (min_depth, max_depth) = (depth.start, depth.end);
    if !((0.0..=1.0).contains(&min_depth)
        && (0.0..=1.0).contains(&max_depth)
        && min_depth <= max_depth)
    {
        return Err(format!(
            "Viewport minDepth {min_depth} and/or maxDepth {max_depth} are not in [0, 1], or \
             minDepth > maxDepth"
        ));
    }
    Ok(())
}

/// Depth and stencil access of a render pass or bundle.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ReadOnly {
    pub depth: bool,
    pub stencil: bool,
}

/// The limits bound vertex buffers impose on a draw: (limit, slot).
struct VertexLimits {
    vertex: (u64, usize),
    instance: (u64, usize),
}

/// The state of a render pass or render bundle being recorded.
#[derive(Debug)]
pub(crate) struct RenderState {
    shared: Arc<DeviceShared>,
    /// "RenderPass" or "RenderBundle", for messages.
    what: &'static str,
    pub targets: Targets,
    pub read_only: ReadOnly,
    pipeline: Option<Arc<RenderPipeline>>,
    groups: [Option<GroupSlot>; MAX_GROUPS],
    /// The groups the pass or bundle sets (moved into its record).
    pub table: GroupTable,
    groups_checked: bool,
    /// The bound size of each vertex buffer slot.
    vertex: Vec<Option<u64>>,
    /// The index buffer's format and the number of indices it holds.
    index: Option<(wgpu::IndexFormat, u64)>,
    /// What the pass (with its bundles) or bundle uses.
    pub scope: UsageScope,
    /// How many of the table's groups are in `scope` (the first ones:
    /// slots are given out in order, and each is merged when first set).
    groups_in_scope: usize,
    /// The attachments' size (a pass's; `None` in a bundle).
    pub extent: Option<(u32, u32)>,
    /// Debug groups pushed in the pass and not yet popped.
    debug_depth: u32,
    occlusion_active: bool,
    statistics_active: bool,
    /// Queries (set, index) the pass has begun: each at most once.
    queries_used: Vec<(usize, u32)>,
    /// The immediate data slots `set_immediates` has set.
    immediates: naga::valid::ImmediateSlots,
    /// Whether a pipeline needed the blend constant, and whether it was
    /// set (a render bundle never requires it: it cannot set one).
    blend_constant: BlendConstant,
}

/// Where a render pass's blend constant stands (wgpu-core's
/// `OptionalState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlendConstant {
    Unused,
    Required,
    Set,
}

/// A draw after a pipeline that blends with the constant needs it set
/// (wgpu-core's `State::is_ready`: `DrawError::MissingBlendConstant`).
fn check_blend_constant(state: BlendConstant) -> Result<(), String> {
    if state == BlendConstant::Required {
        return Err("Blend constant needs to be set".into());
    }
    Ok(())
}

/// The bind group and vertex buffer slots in use, up to the last one set,
/// within `max_bind_groups_plus_vertex_buffers` (wgpu-core's
/// `VertexState::validate`: `DrawError::TooManyBindGroupsPlusVertexBuffers`).
fn check_slots_in_use(
    shared: &DeviceShared,
    groups: &[Option<GroupSlot>; MAX_GROUPS],
    vertex: &[Option<u64>],
) -> Result<(), String> {
    let groups_used = groups
        .iter()
        .rposition(Option::is_some)
        .map_or(0, |i| i + 1);
    let vertex_used = vertex
        .iter()
        .rposition(Option::is_some)
        .map_or(0, |i| i + 1);
    let given = groups_used + vertex_used;
    let limit = shared.limits.max_bind_groups_plus_vertex_buffers;
    if given as u64 > u64::from(limit) {
        return Err(format!(
            "The number of bind groups + vertex buffers {given} exceeds the limit {limit}"
        ));
    }
    Ok(())
}

impl RenderState {
    pub(crate) fn new(
        shared: &Arc<DeviceShared>,
        what: &'static str,
        targets: Targets,
        read_only: ReadOnly,
    ) -> Self {
        Self {
            shared: shared.clone(),
            what,
            targets,
            read_only,
            pipeline: None,
            groups: Default::default(),
            table: GroupTable::default(),
            groups_checked: false,
            vertex: Vec::new(),
            index: None,
            scope: UsageScope::default(),
            groups_in_scope: 0,
            extent: None,
            debug_depth: 0,
            occlusion_active: false,
            statistics_active: false,
            queries_used: Vec::new(),
            immediates: Default::default(),
            blend_constant: BlendConstant::Unused,
        }
    }

    /// The checks at the pass's end: no debug group or query left open.
    pub(crate) fn end(&self) -> Result<(), String> {
        check_pass_end(
            self.debug_depth,
            self.occlusion_active,
            self.statistics_active,
        )
    }

    /// A query of `set` at `index` begun in this pass: each once only
    /// (wgpu-core's `QueryUseError::UsedTwiceInsideRenderpass`).
    fn use_query(&mut self, set: usize, index: u32) -> Result<(), String> {
        if self.queries_used.contains(&(set, index)) {
            return Err(format!("Query {index} is used twice inside a renderpass"));
        }
        self.queries_used.push((set, index));
        Ok(())
    }

    /// Checks that what was made for `other` may be used here.
    fn check_targets(&self, other: &Targets, res: impl Fn() -> String) -> Result<(), String> {
        let mine = &self.targets;
        if mine.colors != other.colors {
            let len = mine.colors.len().max(other.colors.len());
            let indices: Vec<usize> = (0..len)
                .filter(|&i| {
                    mine.colors.get(i).copied().flatten() != other.colors.get(i).copied().flatten()
                })
                .collect();
            let res = res();
            return Err(format!(
                "Incompatible color attachments at indices {indices:?}: the {} uses textures \
                 with formats {:?} but the {res} uses attachments with formats {:?}",
                self.what, mine.colors, other.colors
            ));
        }
        if mine.depth_stencil != other.depth_stencil {
            let res = res();
            return Err(format!(
                "Incompatible depth-stencil attachment format: the {} uses a texture with \
                 format {:?} but the {res} uses an attachment with format {:?}",
                self.what, mine.depth_stencil, other.depth_stencil
            ));
        }
        if mine.samples != other.samples {
            let res = res();
            return Err(format!(
                "Incompatible sample count: the {} uses textures with sample count {} but the \
                 {res} uses attachments with format {}",
                self.what, mine.samples, other.samples
            ));
        }
        if mine.multiview != other.multiview {
            let res = res();
            return Err(format!(
                "Incompatible multiview setting: the {} uses setting {:?} but the {res} uses \
                 setting {:?}",
                self.what, mine.multiview, other.multiview
            ));
        }
        Ok(())
    }

    /// Checks `cmd` against the state and takes its changes (and fills in
    /// an indirect draw's limits).
    pub(crate) fn record(&mut self, cmd: &mut PassCmd) -> Result<(), String> {
        match cmd {
            PassCmd::SetRenderPipeline(p) => {
                if p.raw.is_none() {
                    return Err(format!("{} is invalid", p.ident()));
                }
                self.check_targets(&p.targets, || p.ident())?;
                if p.writes_depth && self.read_only.depth {
                    return Err(format!(
                        "{} writes to depth, while the pass has read-only depth access",
                        p.ident()
                    ));
                }
                if p.writes_stencil && self.read_only.stencil {
                    return Err(format!(
                        "{} writes to stencil, while the pass has read-only stencil access",
                        p.ident()
                    ));
                }
                // Render bundles cannot set it, and wgpu-core does not ask.
                if p.uses_blend_constant
                    && self.what == "RenderPass"
                    && self.blend_constant == BlendConstant::Unused
                {
                    self.blend_constant = BlendConstant::Required;
                }
                self.pipeline = Some(p.clone());
                self.groups_checked = false;
            }
            PassCmd::SetBindGroup {
                index,
                group,
                offsets,
            } => {
                let g = slot_group(&self.table, *group)?;
                check_set_group(&self.shared, *index, g, offsets)?;
                // Each group once: the table's groups not yet in the scope
                // (the one just set, unless seen before).
                while self.groups_in_scope < self.table.len() {
                    if let Some(g) = self.table.all().get(self.groups_in_scope) {
                        self.scope.group(g)?;
                    }
                    self.groups_in_scope += 1;
                }
                self.groups[*index as usize] = *group;
                self.groups_checked = false;
            }
            PassCmd::SetImmediates { offset, data } => {
                let layout = self.pipeline.as_ref().and_then(|p| p.layout.as_deref());
                self.immediates |= check_immediates(&self.shared, layout, *offset, data.len())?;
            }
            PassCmd::SetVertexBuffer {
                slot,
                buffer,
                offset,
                size,
            } => {
                let max = self.shared.limits.max_vertex_buffers;
                if *slot >= max {
                    return Err(format!(
                        "Vertex buffer slot {slot} is greater than the device's requested \
                         `max_vertex_buffers` limit {max}"
                    ));
                }
                let slot = *slot as usize;
                if self.vertex.len() <= slot {
                    self.vertex.resize(slot + 1, None);
                }
                let Some(buffer) = buffer else {
                    self.vertex[slot] = None;
                    return Ok(());
                };
                if !buffer.usage.contains(wgpu::BufferUsages::VERTEX) {
                    return Err(missing_usage(
                        buffer.ident(),
                        buffer.usage,
                        wgpu::BufferUsages::VERTEX,
                    ));
                }
                if !offset.is_multiple_of(wgpu::VERTEX_ALIGNMENT) {
                    return Err(format!(
                        "Buffer offset {offset} is not aligned to {}",
                        wgpu::VERTEX_ALIGNMENT
                    ));
                }
                self.vertex[slot] = Some(bound_size(buffer, *offset, *size)?);
                self.scope.buffer(buffer, BufferUses::VERTEX)?;
            }
            PassCmd::SetIndexBuffer {
                buffer,
                format,
                offset,
                size,
            } => {
                if !buffer.usage.contains(wgpu::BufferUsages::INDEX) {
                    return Err(missing_usage(
                        buffer.ident(),
                        buffer.usage,
                        wgpu::BufferUsages::INDEX,
                    ));
                }
                let stride = format.byte_size() as u64;
                if !offset.is_multiple_of(stride) {
                    return Err(format!(
                        "Index buffer offset {offset} is not aligned to the index format's \
                         size {stride}"
                    ));
                }
                self.index = Some((*format, bound_size(buffer, *offset, *size)? / stride));
                self.scope.buffer(buffer, BufferUses::INDEX)?;
            }
            PassCmd::Draw {
                vertices,
                instances,
            } => {
                self.draw_state(DrawFamily::Draw)?;
                self.check_ranges(Some(vertices), instances)?;
            }
            PassCmd::DrawIndexed {
                indices, instances, ..
            } => {
                self.draw_state(DrawFamily::Indexed)?;
                let limit = self.index.map_or(0, |(_, n)| n);
                if indices.end as u64 > limit {
                    return Err(format!(
                        "Index {} extends beyond limit {limit}. Did you bind the correct index \
                         buffer?",
                        indices.end
                    ));
                }
                self.check_ranges(None, instances)?;
            }
            PassCmd::DrawIndirect {
                buffer,
                offset,
                count,
                indexed,
                limits,
            } => {
                let family = DrawFamily::vertex(*indexed);
                check_indirect(buffer, *offset, family.args_size() * *count as u64)?;
                self.scope.buffer(buffer, BufferUses::INDIRECT)?;
                self.draw_state(family)?;
                // What the GPU check holds the arguments to (wgpu-core's
                // `vertex_or_index_limit` and `instance_limit`).
                let bound = self.vertex_limits();
                let vertex_or_index = match (*indexed, self.index) {
                    (true, Some((_, indices))) => indices,
                    (true, None) => 0,
                    (false, _) => bound.vertex.0,
                };
                *limits = [vertex_or_index, bound.instance.0];
            }
            PassCmd::DrawIndirectCount {
                buffer,
                offset,
                count_buffer,
                count_offset,
                max_count,
                family,
            } => {
                self.draw_state(*family)?;
                check_indirect(buffer, *offset, family.args_size() * *max_count as u64)?;
                check_indirect(count_buffer, *count_offset, 4)?;
                self.scope.buffer(buffer, BufferUses::INDIRECT)?;
                self.scope.buffer(count_buffer, BufferUses::INDIRECT)?;
            }
            PassCmd::DrawMeshTasks(counts) => {
                self.draw_state(DrawFamily::Mesh)?;
                self.check_mesh_counts(*counts)?;
            }
            PassCmd::DrawMeshTasksIndirect {
                buffer,
                offset,
                count,
            } => {
                self.draw_state(DrawFamily::Mesh)?;
                check_indirect(
                    buffer,
                    *offset,
                    DrawFamily::Mesh.args_size() * *count as u64,
                )?;
                self.scope.buffer(buffer, BufferUses::INDIRECT)?;
            }
            PassCmd::SetScissorRect([x, y, w, h]) => {
                if let Some((width, height)) = self.extent {
                    if x.saturating_add(*w) > width || y.saturating_add(*h) > height {
                        return Err(format!(
                            "Scissor {:?} is not contained in the render target {width}x{height}",
                            [x, y, w, h]
                        ));
                    }
                }
            }
            PassCmd::SetViewport { rect, depth } => {
                check_viewport(&self.shared, *rect, depth.clone())?
            }
            PassCmd::PushDebugGroup(_) => self.debug_depth += 1,
            PassCmd::PopDebugGroup => pop_debug_group(&mut self.debug_depth)?,
            PassCmd::BeginOcclusionQuery(index) => {
                // The pass's own set: one key for it.
                self.use_query(0, *index)?;
                begin_query(&mut self.occlusion_active, *index)?;
            }
            PassCmd::EndOcclusionQuery => end_query(&mut self.occlusion_active)?,
            PassCmd::BeginStatisticsQuery { set, index } => {
                check_query_type(set, "PipelineStatistics")?;
                self.use_query(Arc::as_ptr(set) as usize, *index)?;
                begin_query(&mut self.statistics_active, *index)?;
            }
            PassCmd::EndStatisticsQuery => end_query(&mut self.statistics_active)?,
            PassCmd::WriteTimestamp { .. } => check_timestamp_in_pass(&self.shared)?,
            PassCmd::SetBlendConstant(_) => self.blend_constant = BlendConstant::Set,
            PassCmd::ExecuteBundles(bundles) => {
                for bundle in bundles {
                    self.execute(bundle)?;
                }
                // wgpu's rule: after bundles, the pass state is reset.
                self.pipeline = None;
                self.groups = Default::default();
                self.vertex.clear();
                self.index = None;
                self.groups_checked = false;
                self.immediates = Default::default();
            }
            _ => {}
        }
        Ok(())
    }

    fn execute(&mut self, bundle: &RenderBundle) -> Result<(), String> {
        let res = format!("RenderBundle with '{}' label", bundle.label);
        if !bundle.valid {
            return Err(format!("{res} is invalid"));
        }
        self.check_targets(&bundle.targets, || res.clone())?;
        if self.read_only.depth && !bundle.read_only.depth {
            return Err(format!(
                "{res} writes to depth, while the pass has read-only depth access"
            ));
        }
        if self.read_only.stencil && !bundle.read_only.stencil {
            return Err(format!(
                "{res} writes to stencil, while the pass has read-only stencil access"
            ));
        }
        self.scope.merge(&bundle.scope)
    }

    /// A mesh draw in a multiview pass: the device must have
    /// `EXPERIMENTAL_MESH_SHADER_MULTIVIEW` and the views be within
    /// `max_mesh_multiview_view_count` (wgpu-core's
    /// `validate_mesh_draw_multiview`).
    fn check_mesh_multiview(&self) -> Result<(), String> {
        let Some(mask) = self.targets.multiview else {
            return Ok(());
        };
        let highest = 31 - mask.get().leading_zeros();
        let max = self.shared.limits.max_mesh_multiview_view_count;
        let feature = wgpu::Features::EXPERIMENTAL_MESH_SHADER_MULTIVIEW;
        if !self.shared.features.contains(feature) || highest > max {
            return Err(format!(
                "Mesh shader calls in multiview render passes require enabling the \
                 `EXPERIMENTAL_MESH_SHADER_MULTIVIEW` feature, and the highest bit ({highest}) \
                 in the multiview mask must be <= `Limits::max_multiview_view_count` ({max})"
            ));
        }
        Ok(())
    }

    /// A direct mesh draw's workgroup counts against the task limits (a
    /// pipeline with a task stage) or the mesh limits (wgpu-core's
    /// `draw_mesh_tasks`).
    fn check_mesh_counts(&self, counts: [u32; 3]) -> Result<(), String> {
        let limits = &self.shared.limits;
        let task = self.pipeline.as_ref().and_then(|p| p.mesh) == Some(MeshStages::TaskMesh);
        let (per_dimension, total_limit) = if task {
            (
                limits.max_task_workgroups_per_dimension,
                limits.max_task_workgroup_total_count,
            )
        } else {
            (
                limits.max_mesh_workgroups_per_dimension,
                limits.max_mesh_workgroup_total_count,
            )
        };
        let total = counts.iter().fold(1u32, |t, &n| t.saturating_mul(n));
        if total > total_limit || counts.iter().any(|&n| n > per_dimension) {
            return Err(format!(
                "Workgroup size {counts:?} ({total} total invocations) must be less or equal to \
                 the per-dimension limit `Limits::max_task_mesh_workgroups_per_dimension` of \
                 {:?} and the total invocation limit \
                 `Limits::max_task_mesh_workgroup_total_count` of {total_limit}",
                [per_dimension; 3]
            ));
        }
        Ok(())
    }

    /// A draw's checks: a pipeline of the draw's family, its groups, its
    /// vertex buffers, an index buffer for an indexed draw, and a mesh
    /// draw's multiview rule.
    fn draw_state(&mut self, family: DrawFamily) -> Result<(), String> {
        let pipeline = self.pipeline.as_ref().ok_or("Pipeline must be set")?;
        check_immediates_set(self.immediates, pipeline.immediate_slots)?;
        if !self.groups_checked {
            let layout = pipeline
                .layout
                .as_ref()
                .ok_or("the render pipeline is invalid")?;
            let groups = bound(&self.table, &self.groups);
            check_groups(&groups, layout, || pipeline.ident())?;
            check_late_sizes(&groups, &pipeline.late_sizes)?;
            self.groups_checked = true;
        }
        check_blend_constant(self.blend_constant)?;
        for (slot, layout) in pipeline.vertex.iter().enumerate() {
            if layout.is_some() && self.vertex.get(slot).copied().flatten().is_none() {
                return Err(format!(
                    "Currently set {} requires vertex buffer {slot} to be set",
                    pipeline.ident()
                ));
            }
        }
        check_slots_in_use(&self.shared, &self.groups, &self.vertex)?;
        if family == DrawFamily::Indexed {
            let Some((format, _)) = self.index else {
                return Err("Index buffer must be set".into());
            };
            if let Some(strip) = pipeline.strip_index_format.filter(|&f| f != format) {
                return Err(format!(
                    "Index format {format:?} of the index buffer does not match the strip \
                     index format {strip:?} of {}",
                    pipeline.ident()
                ));
            }
        }
        let mesh = family == DrawFamily::Mesh;
        if mesh != pipeline.mesh.is_some() {
            let (draw, kind) = if mesh {
                ("mesh shader", "standard")
            } else {
                ("standard", "mesh shader")
            };
            return Err(format!(
                "Wrong pipeline type for this draw command. Attempted to call {draw} draw \
                 command on {kind} pipeline"
            ));
        }
        if mesh {
            self.check_mesh_multiview()?;
        }
        Ok(())
    }

    /// The vertex and instance limits the bound vertex buffers impose on
    /// the current pipeline's draws, each with the slot imposing it
    /// (wgpu-core's `VertexLimits`): `u64::MAX` where no buffer of that
    /// step mode is read.
    fn vertex_limits(&self) -> VertexLimits {
        let mut limits = VertexLimits {
            vertex: (u64::MAX, 0),
            instance: (u64::MAX, 0),
        };
        let Some(pipeline) = &self.pipeline else {
            return limits;
        };
        for (slot, layout) in pipeline.vertex.iter().enumerate() {
            let (Some(layout), Some(Some(size))) = (layout, self.vertex.get(slot)) else {
                continue;
            };
            let limit = if *size < layout.end {
                0
            } else {
                // A zero stride reads the same element for every index.
                (size - layout.end)
                    .checked_div(layout.stride)
                    .map_or(u64::MAX, |n| n + 1)
            };
            let kept = match layout.step {
                wgpu::VertexStepMode::Vertex => &mut limits.vertex,
                wgpu::VertexStepMode::Instance => &mut limits.instance,
            };
            if limit < kept.0 {
                *kept = (limit, slot);
            }
        }
        limits
    }

    /// A direct draw's vertex (when not indexed) and instance ranges
    /// against the bound vertex buffers.
    fn check_ranges(
        &self,
        vertices: Option<&Range<u32>>,
        instances: &Range<u32>,
    ) -> Result<(), String> {
        let limits = self.vertex_limits();
        if let Some(v) = vertices {
            let (limit, slot) = limits.vertex;
            if v.end as u64 > limit {
                return Err(format!(
                    "Vertex {} extends beyond limit {limit} imposed by the buffer in slot \
                     {slot}. Did you bind the correct `Vertex` step-rate vertex buffer?",
                    v.end
                ));
            }
        }
        let (limit, slot) = limits.instance;
        if instances.end as u64 > limit {
            return Err(format!(
                "Instance {} extends beyond limit {limit} imposed by the buffer in slot {slot}. \
                 Did you bind the correct `Instance` step-rate vertex buffer?",
                instances.end
            ));
        }
        Ok(())
    }
}

/// A colour attachment's `depth_slice` (wgpu-core's `begin_render_pass`:
/// `MissingDepthSlice`, `UnneededDepthSlice`, `DepthSliceLimit`): given
/// exactly for a view of a 3D texture, inside its mip level's depth. A
/// valid slice is refused too: keel-hal draws into 2D subresources only.
fn check_depth_slice(
    view: &TextureView,
    depth_slice: Option<u32>,
    location: &str,
) -> Result<(), String> {
    let texture = &view.texture;
    if texture.dimension != wgpu::TextureDimension::D3 {
        return match depth_slice {
            Some(_) => Err(format!(
                "The {location} is not a 3D view, and is given a depth slice"
            )),
            None => Ok(()),
        };
    }
    let Some(slice) = depth_slice else {
        return Err(format!(
            "The {location} is a 3D view, and needs a depth slice"
        ));
    };
    let limit = texture.mip_size(view.mips.start).depth_or_array_layers;
    if slice >= limit {
        return Err(format!(
            "The {location}'s depth slice {slice} must be less than {limit}"
        ));
    }
    Err(format!(
        "The {location} draws into slice {slice} of a 3D texture, which keel-wgpu does not \
         support (keel-hal attachments are 2D subresources)"
    ))
}

/// The subresources (mip level, layer or depth slice) a colour attachment
/// or resolve target draws into, disjoint from every other's (wgpu-core's
/// `check_attachment_overlap`: `SubresourceOverlap`).
fn check_attachment_overlap(
    covered: &mut Vec<(usize, u32, u32)>,
    view: &TextureView,
    depth_slice: Option<u32>,
) -> Result<(), String> {
    let texture = Arc::as_ptr(&view.texture) as usize;
    let mip = view.mips.start;
    let layers = match depth_slice {
        Some(slice) => slice..slice.saturating_add(1),
        None => view.layers.clone(),
    };
    for layer in layers {
        if covered.contains(&(texture, mip, layer)) {
            return Err(format!(
                "Color attachments and resolve targets overlap: {} mip level {mip} layer \
                 {layer} is used more than once",
                view.texture.ident()
            ));
        }
        covered.push((texture, mip, layer));
    }
    Ok(())
}

/// A view a render pass can draw into (wgpu-core's `render_extent`,
/// `RenderPassErrorInner::TextureViewIsNotRenderable` with its
/// `TextureViewNotRenderableReason`): the view's usage has
/// `RENDER_ATTACHMENT`, its dimension is 2D, a 2D array or 3D, one mip
/// level, one layer unless `MULTIVIEW`, every aspect of its format.
fn check_renderable(
    view: &TextureView,
    features: wgpu::Features,
    location: &str,
) -> Result<(), String> {
    use wgpu::TextureViewDimension as V;
    let format = view.texture.format;
    let all_aspects = match view.aspect {
        wgpu::TextureAspect::All => true,
        wgpu::TextureAspect::DepthOnly => !format.has_stencil_aspect(),
        wgpu::TextureAspect::StencilOnly => !format.has_depth_aspect(),
        _ => false,
    };
    let reason = if !view.usage.contains(wgpu::TextureUsages::RENDER_ATTACHMENT) {
        format!(
            "The texture this view references doesn't include the RENDER_ATTACHMENT usage. \
             Provided usages: {:?}",
            view.usage
        )
    } else if !matches!(view.dimension, V::D2 | V::D2Array | V::D3) {
        format!(
            "The dimension of this texture view is not 2D. View dimension: {:?}",
            view.dimension
        )
    } else if view.mips.len() != 1 {
        format!(
            "This texture view has more than one mipmap level. View mipmap levels: {:?}",
            view.mips.len()
        )
    } else if view.layers.len() != 1 && !features.contains(wgpu::Features::MULTIVIEW) {
        format!(
            "This texture view has more than one array layer. View array layers: {:?}",
            view.layers.len()
        )
    } else if !format.is_multi_planar_format() && !all_aspects {
        format!(
            "The aspects of this texture view are a subset of the aspects in the original \
             texture. Aspects: {:?}",
            view.aspect
        )
    } else {
        return Ok(());
    };
    Err(format!("The {location} is not renderable: {reason}"))
}

/// A view of several layers in a pass is a 2D array (wgpu-core's
/// `check_multiview`: `RenderPassErrorInner::MultiViewDimensionMismatch`),
/// drawn into with `MULTIVIEW` (`MissingFeatures`).
fn check_multiview_dimension(view: &TextureView, features: wgpu::Features) -> Result<(), String> {
    if view.layers.len() < 2 {
        return Ok(());
    }
    if view.dimension != wgpu::TextureViewDimension::D2Array {
        return Err(
            "Multiview pass texture views with more than one array layer must have D2Array \
             dimension"
                .into(),
        );
    }
    let needed = wgpu::Features::MULTIVIEW;
    if !features.contains(needed) {
        return Err(crate::create_check::missing_features(needed));
    }
    Ok(())
}

/// Transient attachments are cleared (or not loaded) and discarded
/// (wgpu-core's `check_transient_attachment_ops`).
fn transient_ops_ok<V>(load: wgpu::LoadOp<V>, store: wgpu::StoreOp) -> bool {
    matches!(
        (load, store),
        (
            wgpu::LoadOp::Clear(_) | wgpu::LoadOp::DontCare(_),
            wgpu::StoreOp::Discard
        )
    )
}

/// A transient colour attachment's operations (wgpu-core's `fill_arc_desc`:
/// `ColorAttachmentError::InvalidTransientAttachmentOp`).
fn check_transient_color_ops(
    view: &TextureView,
    load: wgpu::LoadOp<wgpu::Color>,
    store: wgpu::StoreOp,
) -> Result<(), String> {
    if view
        .usage
        .contains(wgpu::TextureUsages::TRANSIENT_ATTACHMENT)
        && !transient_ops_ok(load, store)
    {
        return Err(format!(
            "Color attachment with `TRANSIENT_ATTACHMENT` usage can only be used with \
             `LoadOp::Clear` or `LoadOp::DontCare` (if it is available) and  \
             `StoreOp::Discard`. Operations `{:?}` were provided",
            (load, store)
        ));
    }
    Ok(())
}

/// A transient depth-stencil attachment's operations, per aspect of its
/// format (wgpu-core's `fill_arc_desc`: `InvalidTransientDepthAttachmentOps`,
/// `ReadOnlyTransientDepthAttachment`, `InvalidTransientStencilAttachmentOps`,
/// `ReadOnlyTransientStencilAttachment`).
fn check_transient_depth_ops(depth: &crate::command::DepthRecord) -> Result<(), String> {
    let view = &depth.view;
    if !view
        .usage
        .contains(wgpu::TextureUsages::TRANSIENT_ATTACHMENT)
    {
        return Ok(());
    }
    let ops = |what: &str, load_store: Option<(String, bool)>| match load_store {
        None => Err(format!(
            "{what} attachment with `TRANSIENT_ATTACHMENT` usage cannot be read-only"
        )),
        Some((ops, false)) => Err(format!(
            "{what} attachment with `TRANSIENT_ATTACHMENT` usage can only be used with \
             `LoadOp::Clear` or `LoadOp::DontCare` (if it is available) and  \
             `StoreOp::Discard`. Operations `{ops}` were provided"
        )),
        Some((_, true)) => Ok(()),
    };
    if view.format.has_depth_aspect() {
        ops(
            "Depth",
            depth.depth.map(|o| {
                (
                    format!("{:?}", (o.load, o.store)),
                    transient_ops_ok(o.load, o.store),
                )
            }),
        )?;
    }
    if view.format.has_stencil_aspect() {
        ops(
            "Stencil",
            depth.stencil.map(|o| {
                (
                    format!("{:?}", (o.load, o.store)),
                    transient_ops_ok(o.load, o.store),
                )
            }),
        )?;
    }
    Ok(())
}

/// A depth clear value lies in `0.0..=1.0` (wgpu-core's `fill_arc_desc`:
/// `AttachmentError::ClearValueOutOfRange`).
fn check_depth_clear_value(depth: &crate::command::DepthRecord) -> Result<(), String> {
    if !depth.view.format.has_depth_aspect() {
        return Ok(());
    }
    if let Some(wgpu::Operations {
        load: wgpu::LoadOp::Clear(clear),
        ..
    }) = depth.depth
    {
        if !(0.0..=1.0).contains(&clear) {
            return Err(format!(
                "Clear value ({clear}) must be between 0.0 and 1.0, inclusive"
            ));
        }
    }
    Ok(())
}

/// A resolve target's format resolves and it is not transient (wgpu-core's
/// `RenderPassInfo::start`: `UnsupportedResolveTargetFormat`,
/// `InvalidTransientResolveTarget`).
fn check_resolve_target(
    resolve: &TextureView,
    features: wgpu::Features,
    location: &str,
) -> Result<(), String> {
    let resolvable =
        crate::create_check::format_features(resolve.format, features).is_none_or(|f| {
            f.flags
                .contains(wgpu::TextureFormatFeatureFlags::MULTISAMPLE_RESOLVE)
        });
    if !resolvable {
        return Err(format!(
            "The format of the {location} ({:?}) is not resolvable",
            resolve.format
        ));
    }
    if resolve
        .usage
        .contains(wgpu::TextureUsages::TRANSIENT_ATTACHMENT)
    {
        return Err(format!(
            "The {location} is not valid, because the texture has `TRANSIENT_ATTACHMENT` usage"
        ));
    }
    Ok(())
}

/// The checks `begin_render_pass` makes on its attachments (usage, one mip,
/// equal sizes and sample counts, resolve targets, depth and stencil
/// operations against the format) and the state the pass starts with:
/// its targets, its depth and stencil access, the attachments in its scope.
pub(crate) fn begin_render_pass(
    shared: &Arc<DeviceShared>,
    pass: &crate::command::RenderPassRecord,
) -> Result<RenderState, String> {
    let mut extent: Option<(wgpu::Extent3d, String)> = None;
    let mut samples: Option<u32> = None;
    let mut scope = UsageScope::default();
    let features = shared.features;
    let mut check_view = |view: &TextureView, location: String| -> Result<(), String> {
        check_multiview_dimension(view, features)?;
        check_renderable(view, features, &location)?;
        let mut size = view.extent();
        size.depth_or_array_layers = 1;
        match &extent {
            Some((first, first_at)) if *first != size => {
                return Err(format!(
                    "Attachments have differing sizes: the {first_at} has extent {first:?} but \
                     is followed by the {location} which has {size:?}"
                ))
            }
            Some(_) => {}
            None => extent = Some((size, location)),
        }
        Ok(())
    };
    let formats: Vec<_> = pass
        .colors
        .iter()
        .map(|c| c.as_ref().map(|c| c.view.format))
        .collect();
    check_color_formats(shared, &formats)?;
    let mut colors = Vec::with_capacity(pass.colors.len());
    let mut covered = Vec::new();
    for (i, color) in pass.colors.iter().enumerate() {
        let Some(color) = color else {
            colors.push(None);
            continue;
        };
        let location = format!("color attachment at index {i}");
        check_transient_color_ops(&color.view, color.load, color.store)?;
        check_view(&color.view, location.clone())?;
        if !color.view.format.has_color_aspect() {
            return Err(format!(
                "The {location}'s format {:?} is not a color format",
                color.view.format
            ));
        }
        check_depth_slice(&color.view, color.depth_slice, &location)?;
        check_attachment_overlap(&mut covered, &color.view, color.depth_slice)?;
        let count = color.view.texture.sample_count;
        match samples {
            Some(s) if s != count => {
                return Err(format!(
                    "Attachments have differing sample counts: the first has {s} but the \
                     {location} has {count}"
                ))
            }
            _ => samples = Some(count),
        }
        if let Some(resolve) = &color.resolve {
            let at = format!("resolve target of {location}");
            check_attachment_overlap(&mut covered, resolve, None)?;
            check_view(resolve, at.clone())?;
            if count == 1 {
                return Err(format!(
                    "The {location} has a resolve target but is not multisampled"
                ));
            }
            if resolve.texture.sample_count != 1 {
                return Err(format!("The {at} must have a sample count of 1"));
            }
            if resolve.format != color.view.format {
                return Err(format!(
                    "The {at} has format {:?}, the attachment {:?}",
                    resolve.format, color.view.format
                ));
            }
            check_resolve_target(resolve, features, &at)?;
            scope.view(resolve, TextureUses::COLOR_TARGET)?;
        }
        scope.view(&color.view, TextureUses::COLOR_TARGET)?;
        colors.push(Some(color.view.format));
    }
    let mut read_only = ReadOnly::default();
    let mut depth_format = None;
    if let Some(depth) = &pass.depth {
        let location = "depth-stencil attachment".to_string();
        let format = depth.view.format;
        if !format.is_depth_stencil_format() {
            return Err(format!(
                "The {location}'s format {format:?} is not a depth-stencil format"
            ));
        }
        check_transient_depth_ops(depth)?;
        check_depth_clear_value(depth)?;
        check_view(&depth.view, location.clone())?;
        let count = depth.view.texture.sample_count;
        if let Some(s) = samples.filter(|&s| s != count) {
            return Err(format!(
                "Attachments have differing sample counts: the color attachments have {s} but \
                 the {location} has {count}"
            ));
        }
        samples = Some(count);
        let has_depth = format.has_depth_aspect();
        let has_stencil = format.has_stencil_aspect();
        if has_depth && depth.depth.is_none() && !has_stencil && depth.stencil.is_some() {
            return Err("stencil_ops were given for a format without stencil".into());
        }
        if !has_depth && depth.depth.is_some() {
            return Err(format!(
                "depth_ops were given for {format:?}, which has no depth aspect"
            ));
        }
        if !has_stencil && depth.stencil.is_some() {
            return Err(format!(
                "stencil_ops were given for {format:?}, which has no stencil aspect"
            ));
        }
        read_only = ReadOnly {
            depth: !has_depth || depth.depth.is_none(),
            stencil: !has_stencil || depth.stencil.is_none(),
        };
        let usage = if read_only.depth && read_only.stencil {
            TextureUses::DEPTH_STENCIL_READ
        } else {
            TextureUses::DEPTH_STENCIL_WRITE
        };
        scope.view(&depth.view, usage)?;
        depth_format = Some(format);
    }
    let Some((size, _)) = extent else {
        return Err("a render pass needs at least one attachment".into());
    };
    let targets = Targets::new(
        colors,
        depth_format,
        samples.unwrap_or(1),
        pass.multiview_mask,
    );
    let mut state = RenderState::new(shared, "RenderPass", targets, read_only);
    state.scope = scope;
    state.extent = Some((size.width, size.height));
    Ok(state)
}
