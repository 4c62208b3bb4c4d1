//! Bind group layout entries and bind groups: the checks both backends run
//! before they make anything.
//!
//! Layout entries: a binding number given twice ([`sorted_layout_entries`],
//! `DuplicateBinding`); then each ([`check_layout_entry`], a [`BindingError`]):
//! a binding number at or above `max_bindings_per_bind_group`
//! (`LimitExceeded`); external textures, ray-tracing stages without
//! `RAY_TRACING_PIPELINE`, dynamic offsets on an array or in an
//! update-after-bind layout, multisampled textures that are not 2D or are
//! declared filterable, cube storage textures, acceleration structures
//! without `ACCELERATION_STRUCTURE` or with vertex return, binding arrays
//! without the device features their resource needs or longer than the
//! binding-array limit (`Unsupported`).
//!
//! Bind groups ([`check_bind_group`]), entry by entry in the order given:
//! a binding the layout lacks (`UnknownBinding`), a binding named twice
//! (`DuplicateBinding`), a resource of another kind than the layout's or a
//! bottom-level acceleration structure (`WrongType`), an array of the wrong
//! length (`WrongCount`; an update-after-bind layout may be partially
//! bound), a buffer range that is empty, past its buffer's end, misaligned,
//! longer than the binding-size limit or shorter than `min_binding_size`
//! (`InvalidBufferRange`), a buffer without `UNIFORM`/`STORAGE` usage or a
//! view that cannot serve `TEXTURE_BINDING`/`STORAGE_BINDING`
//! (`MissingUsage`), a view whose sample type, dimension, sample count,
//! format or aspect, or a sampler whose kind, does not fit the layout
//! (`IncompatibleResource`); then a binding of the layout without an entry
//! (`MissingBinding`).

use std::num::{NonZeroU32, NonZeroU64};

use super::{flag_names, BufferFacts, Facts, SamplerFacts, ViewFacts};
use crate::{BindGroupEntry, BindingError, BindingResource};

/// A layout's entries sorted by binding, or `DuplicateBinding` for the
/// first binding number given twice (before any entry is checked).
pub(crate) fn sorted_layout_entries(
    entries: &[wgt::BindGroupLayoutEntry],
) -> Result<Vec<wgt::BindGroupLayoutEntry>, BindingError> {
    let mut sorted = Vec::new();
    sorted
        .try_reserve_exact(entries.len())
        .map_err(|_| crate::DeviceError::OutOfMemory)?;
    sorted.extend_from_slice(entries);
    sorted.sort_unstable_by_key(|e| e.binding);
    if let Some(pair) = sorted.windows(2).find(|w| w[0].binding == w[1].binding) {
        return Err(BindingError::DuplicateBinding(pair[0].binding));
    }
    Ok(sorted)
}

/// [`sorted_layout_entries`], shared: entries given in increasing binding
/// order (the common case) are copied once, straight into the shared
/// list, without sorting.
pub(crate) fn sorted_layout_entries_shared(
    entries: &[wgt::BindGroupLayoutEntry],
) -> Result<std::sync::Arc<[wgt::BindGroupLayoutEntry]>, BindingError> {
    if entries.windows(2).all(|w| w[0].binding < w[1].binding) {
        return Ok(entries.into());
    }
    Ok(sorted_layout_entries(entries)?.into())
}

/// Checks one layout entry against what every backend requires.
/// Backends add what needs their driver (format support, descriptor types).
pub(crate) fn check_layout_entry(
    entry: &wgt::BindGroupLayoutEntry,
    limits: &wgt::Limits,
    features: wgt::Features,
    hal_features: crate::HalFeatures,
    update_after_bind: bool,
) -> Result<(), BindingError> {
    use wgt::BindingType as T;
    let binding = entry.binding;
    let unsupported = |reason| Err(BindingError::Unsupported { binding, reason });
    if binding >= limits.max_bindings_per_bind_group {
        return Err(BindingError::LimitExceeded {
            what: "binding number",
            limit: "max_bindings_per_bind_group - 1",
            requested: binding.into(),
            allowed: u64::from(limits.max_bindings_per_bind_group).saturating_sub(1),
        });
    }
    use wgt::ShaderStages as S;
    let ray_stages = S::RAY_GENERATION | S::ANY_HIT | S::CLOSEST_HIT | S::MISS;
    if entry.visibility.intersects(ray_stages)
        && !hal_features.contains(crate::HalFeatures::RAY_TRACING_PIPELINE)
    {
        return unsupported("ray-tracing stages need the RAY_TRACING_PIPELINE capability");
    }
    if entry.visibility.intersects(S::TASK | S::MESH)
        && !features.contains(wgt::Features::EXPERIMENTAL_MESH_SHADER)
    {
        return unsupported(
            "task and mesh stages need the device opened with EXPERIMENTAL_MESH_SHADER",
        );
    }
    let dynamic = matches!(
        entry.ty,
        T::Buffer {
            has_dynamic_offset: true,
            ..
        }
    );
    if dynamic && entry.count.is_some() {
        return unsupported("binding arrays cannot have dynamic offsets");
    }
    if dynamic && update_after_bind {
        return unsupported("buffers with dynamic offsets cannot be update-after-bind");
    }
    match entry.ty {
        T::ExternalTexture => return unsupported("external textures are not supported"),
        T::Texture {
            multisampled: true,
            view_dimension,
            sample_type,
        } => {
            if view_dimension != wgt::TextureViewDimension::D2 {
                return unsupported("multisampled textures must be 2D");
            }
            if sample_type == (wgt::TextureSampleType::Float { filterable: true }) {
                return unsupported("multisampled textures cannot be filterable");
            }
        }
        T::StorageTexture { view_dimension, .. } => {
            if matches!(
                view_dimension,
                wgt::TextureViewDimension::Cube | wgt::TextureViewDimension::CubeArray
            ) {
                return unsupported("storage textures cannot be cube views");
            }
        }
        T::AccelerationStructure { vertex_return } => {
            if !hal_features.contains(crate::HalFeatures::ACCELERATION_STRUCTURE) {
                return unsupported(
                    "acceleration structures need the ACCELERATION_STRUCTURE capability",
                );
            }
            if vertex_return
                && !features.contains(wgt::Features::EXPERIMENTAL_RAY_HIT_VERTEX_RETURN)
            {
                return unsupported(
                    "acceleration structures with vertex return need \
                     EXPERIMENTAL_RAY_HIT_VERTEX_RETURN",
                );
            }
        }
        _ => {}
    }
    if let Some(count) = entry.count {
        check_array(&entry.ty, count.get(), limits, features).map_err(unsupported_err(binding))?;
    }
    Ok(())
}

fn unsupported_err(binding: u32) -> impl Fn(&'static str) -> BindingError {
    move |reason| BindingError::Unsupported { binding, reason }
}

/// Checks a binding array of `count` elements against the features and limits.
fn check_array(
    ty: &wgt::BindingType,
    count: u32,
    limits: &wgt::Limits,
    features: wgt::Features,
) -> Result<(), &'static str> {
    use wgt::Features as F;
    let (needed, max, what) = match *ty {
        wgt::BindingType::Sampler(_) => (
            F::TEXTURE_BINDING_ARRAY,
            limits.max_binding_array_sampler_elements_per_shader_stage,
            "sampler arrays need TEXTURE_BINDING_ARRAY",
        ),
        wgt::BindingType::Texture { .. } => (
            F::TEXTURE_BINDING_ARRAY,
            limits.max_binding_array_elements_per_shader_stage,
            "texture arrays need TEXTURE_BINDING_ARRAY",
        ),
        wgt::BindingType::StorageTexture { .. } => (
            F::TEXTURE_BINDING_ARRAY | F::STORAGE_RESOURCE_BINDING_ARRAY,
            limits.max_binding_array_elements_per_shader_stage,
            "storage texture arrays need TEXTURE_BINDING_ARRAY and STORAGE_RESOURCE_BINDING_ARRAY",
        ),
        wgt::BindingType::Buffer {
            ty: wgt::BufferBindingType::Uniform,
            ..
        } => (
            F::BUFFER_BINDING_ARRAY | F::UNIFORM_BUFFER_BINDING_ARRAYS,
            limits.max_binding_array_elements_per_shader_stage,
            "uniform buffer arrays need BUFFER_BINDING_ARRAY and UNIFORM_BUFFER_BINDING_ARRAYS",
        ),
        wgt::BindingType::Buffer { .. } => (
            F::BUFFER_BINDING_ARRAY | F::STORAGE_RESOURCE_BINDING_ARRAY,
            limits.max_binding_array_elements_per_shader_stage,
            "storage buffer arrays need BUFFER_BINDING_ARRAY and STORAGE_RESOURCE_BINDING_ARRAY",
        ),
        wgt::BindingType::AccelerationStructure { .. } => (
            F::ACCELERATION_STRUCTURE_BINDING_ARRAY,
            limits.max_binding_array_acceleration_structure_elements_per_shader_stage,
            "acceleration structure arrays need ACCELERATION_STRUCTURE_BINDING_ARRAY",
        ),
        wgt::BindingType::ExternalTexture => return Err("external textures cannot be arrays"),
    };
    if !features.contains(needed) {
        return Err(what);
    }
    if count > max {
        return Err("the binding array is longer than the device's binding-array limit");
    }
    Ok(())
}

/// What one binding of a layout accepts, worked out once when the layout
/// is made ([`Slot::new`]): a bind group's checks read it instead of
/// deriving it again from the layout entry and the device's limits on
/// every create. Both backends keep one per layout entry, in binding order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Slot {
    /// The binding number.
    pub(crate) binding: u32,
    /// An array's length; `None`: one resource.
    pub(crate) count: Option<NonZeroU32>,
    /// The resource it takes.
    pub(crate) accept: Accept,
}

/// The resource a [`Slot`] takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Accept {
    /// A buffer range, under these rules.
    Buffer(BufferRule),
    /// A sampler fitting this binding type.
    Sampler(wgt::SamplerBindingType),
    /// A view with `TEXTURE_BINDING`, of a fitting sample type.
    Texture {
        /// The layout's sample type.
        sample_type: wgt::TextureSampleType,
        /// The layout's view dimension.
        dimension: wgt::TextureViewDimension,
        /// Multisampled views only (else single-sampled only).
        multisampled: bool,
        /// The three above as a test of a view's [`ViewKey`].
        rule: ViewRule,
    },
    /// A view with `STORAGE_BINDING`, of exactly this format.
    StorageTexture {
        /// The layout's format.
        format: wgt::TextureFormat,
        /// The layout's view dimension.
        dimension: wgt::TextureViewDimension,
        /// The usage, the dimension and a single sample as a test of a
        /// view's [`ViewKey`] (the format is compared apart).
        rule: ViewRule,
    },
    /// A top-level acceleration structure.
    Structure,
    /// An external texture (layouts refuse them: nothing fits).
    External,
}

/// The rules of a buffer binding, with the device's limits for its kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BufferRule {
    /// A uniform buffer (else a storage buffer).
    pub(crate) uniform: bool,
    /// The offset alignment (at least 1).
    pub(crate) alignment: u64,
    /// The longest range.
    pub(crate) max: u64,
    /// The layout's `min_binding_size` (0: none).
    pub(crate) min: u64,
}

impl BufferRule {
    /// The usage the buffer needs, and its name.
    fn usage(self) -> (wgt::BufferUsages, &'static str) {
        if self.uniform {
            (wgt::BufferUsages::UNIFORM, "UNIFORM")
        } else {
            (wgt::BufferUsages::STORAGE, "STORAGE")
        }
    }
}

impl Slot {
    /// What `entry` accepts on a device with `limits`.
    pub(crate) fn new(entry: &wgt::BindGroupLayoutEntry, limits: &wgt::Limits) -> Self {
        use wgt::BindingType as T;
        let accept = match entry.ty {
            T::Buffer {
                ty,
                min_binding_size,
                ..
            } => {
                let uniform = ty == wgt::BufferBindingType::Uniform;
                let (alignment, max) = if uniform {
                    (
                        limits.min_uniform_buffer_offset_alignment,
                        limits.max_uniform_buffer_binding_size,
                    )
                } else {
                    (
                        limits.min_storage_buffer_offset_alignment,
                        limits.max_storage_buffer_binding_size,
                    )
                };
                Accept::Buffer(BufferRule {
                    uniform,
                    alignment: u64::from(alignment.max(1)),
                    max,
                    min: min_binding_size.map_or(0, NonZeroU64::get),
                })
            }
            T::Sampler(ty) => Accept::Sampler(ty),
            T::Texture {
                sample_type,
                view_dimension,
                multisampled,
            } => Accept::Texture {
                sample_type,
                dimension: view_dimension,
                multisampled,
                rule: ViewRule::sampled(sample_type, view_dimension, multisampled),
            },
            T::StorageTexture {
                format,
                view_dimension,
                ..
            } => Accept::StorageTexture {
                format,
                dimension: view_dimension,
                rule: ViewRule::storage(view_dimension),
            },
            T::AccelerationStructure { .. } => Accept::Structure,
            T::ExternalTexture => Accept::External,
        };
        Self {
            binding: entry.binding,
            count: entry.count,
            accept,
        }
    }
}

impl AsRef<Slot> for Slot {
    fn as_ref(&self) -> &Slot {
        self
    }
}

/// Checks a bind group's entries against its layout's slots (sorted by
/// binding); `partially_bound`: the layout was made update-after-bind, so
/// its arrays may be partially bound. See the module docs for the order.
pub(crate) fn check_bind_group<A: Facts, S: AsRef<Slot>>(
    slots: &[S],
    partially_bound: bool,
    entries: &[BindGroupEntry<'_, A>],
) -> Result<(), BindingError> {
    check_bind_group_with::<A, S>(slots, partially_bound, entries, |_, _, _| {})
}

/// [`check_bind_group`], handing each entry that passed to `each` with its
/// slot and the slot's index, so a backend builds its descriptors in the
/// same pass (without looking the binding up again). `each` may have run
/// for earlier entries when a later one fails: it must only record.
///
/// Entries given in the layout's binding order, one per binding (the
/// common case, checked first with one comparison per entry) take a loop
/// that needs no lookup and no record of the bindings seen: entry `i`
/// names slot `i`, so none is unknown, named twice or missing. Otherwise
/// layouts of up to 64 bindings (all but the rarest) keep the bindings
/// seen in one word; larger ones in a list.
#[inline]
pub(crate) fn check_bind_group_with<A: Facts, S: AsRef<Slot>>(
    slots: &[S],
    partially_bound: bool,
    entries: &[BindGroupEntry<'_, A>],
    mut each: impl FnMut(usize, &S, &BindGroupEntry<'_, A>),
) -> Result<(), BindingError> {
    let in_order = entries.len() == slots.len()
        && entries
            .iter()
            .zip(slots)
            .all(|(entry, slot)| entry.binding == slot.as_ref().binding);
    if in_order {
        for (index, (entry, slot)) in entries.iter().zip(slots).enumerate() {
            check_resource::<A>(slot.as_ref(), &entry.resource, partially_bound)?;
            each(index, slot, entry);
        }
        return Ok(());
    }
    if slots.len() <= 64 {
        check_entries::<A, S, u64>(slots, partially_bound, entries, 0, each)
    } else {
        let words = vec![0; slots.len().div_ceil(64)];
        check_entries::<A, S, Vec<u64>>(slots, partially_bound, entries, words, each)
    }
}

/// The loop of [`check_bind_group_with`], over a set of the slots seen.
#[inline(always)]
fn check_entries<A: Facts, S: AsRef<Slot>, Seen: SeenSlots>(
    slots: &[S],
    partially_bound: bool,
    entries: &[BindGroupEntry<'_, A>],
    mut seen: Seen,
    mut each: impl FnMut(usize, &S, &BindGroupEntry<'_, A>),
) -> Result<(), BindingError> {
    for entry in entries {
        let Some((index, slot)) = slot_of(slots, entry.binding) else {
            return Err(BindingError::UnknownBinding(entry.binding));
        };
        if seen.mark(index) {
            return Err(BindingError::DuplicateBinding(entry.binding));
        }
        check_resource::<A>(slot.as_ref(), &entry.resource, partially_bound)?;
        each(index, slot, entry);
    }
    if let Some(missing) = seen.first_unset(slots.len()) {
        let binding = slots.get(missing).map_or(0, |s| s.as_ref().binding);
        return Err(BindingError::MissingBinding(binding));
    }
    Ok(())
}

/// The slot of `binding` and its index, in slots sorted by binding
/// (without duplicates). Bindings numbered 0, 1, 2… (the common case) sit
/// at their own number: one comparison, no search.
#[inline(always)]
fn slot_of<S: AsRef<Slot>>(slots: &[S], binding: u32) -> Option<(usize, &S)> {
    match slots.get(binding as usize) {
        Some(s) if s.as_ref().binding == binding => Some((binding as usize, s)),
        _ => {
            let index = slots
                .binary_search_by_key(&binding, |s| s.as_ref().binding)
                .ok()?;
            Some((index, slots.get(index)?))
        }
    }
}

/// The length of a buffer binding: its size, or the rest of the buffer.
pub(crate) fn binding_size(buffer_size: u64, offset: u64, size: Option<NonZeroU64>) -> u64 {
    size.map_or(buffer_size.saturating_sub(offset), NonZeroU64::get)
}

/// What a bind group entry gives, for [`BindingError::WrongType`].
fn given<A: Facts>(resource: &BindingResource<'_, A>) -> &'static str {
    match resource {
        BindingResource::Buffer(_) => "a buffer",
        BindingResource::BufferArray(_) => "an array of buffers",
        BindingResource::Sampler(_) => "a sampler",
        BindingResource::SamplerArray(_) => "an array of samplers",
        BindingResource::TextureView(_) => "a texture view",
        BindingResource::TextureViewArray(_) => "an array of texture views",
        BindingResource::AccelerationStructureArray(_) => "an array of acceleration structures",
        BindingResource::AccelerationStructure(a) => match A::structure_kind(a) {
            crate::AccelerationStructureKind::TopLevel => "a top-level acceleration structure",
            crate::AccelerationStructureKind::BottomLevel => {
                "a bottom-level acceleration structure"
            }
        },
    }
}

/// What a slot expects, for [`BindingError::WrongType`].
fn expected(slot: &Slot) -> &'static str {
    let array = slot.count.is_some();
    match (slot.accept, array) {
        (Accept::Buffer(BufferRule { uniform: true, .. }), false) => "a uniform buffer",
        (Accept::Buffer(BufferRule { uniform: true, .. }), true) => "an array of uniform buffers",
        (Accept::Buffer(_), false) => "a storage buffer",
        (Accept::Buffer(_), true) => "an array of storage buffers",
        (Accept::Sampler(_), false) => "a sampler",
        (Accept::Sampler(_), true) => "an array of samplers",
        (Accept::Texture { .. }, false) => "a sampled texture view",
        (Accept::Texture { .. }, true) => "an array of sampled texture views",
        (Accept::StorageTexture { .. }, false) => "a storage texture view",
        (Accept::StorageTexture { .. }, true) => "an array of storage texture views",
        (Accept::Structure, false) => "a top-level acceleration structure",
        (Accept::Structure, true) => "an array of top-level acceleration structures",
        (Accept::External, _) => "an external texture",
    }
}

/// The `WrongType` error for `resource` given to `slot` (kept out of line:
/// the checks' common path only compares).
#[cold]
#[inline(never)]
fn wrong_type<A: Facts>(slot: &Slot, resource: &BindingResource<'_, A>) -> BindingError {
    BindingError::WrongType {
        binding: slot.binding,
        expected: expected(slot),
        got: given::<A>(resource),
    }
}

/// Whether one entry's resource passes every check of its slot (the
/// module docs list them). Inlined into the one loop that calls it: it
/// runs for every entry of every bind group, so it only answers yes or
/// no; [`resource_error`] says why not. Arrays and acceleration structures
/// are checked out of line ([`fits_rest`]).
#[inline(always)]
fn fits<A: Facts>(slot: &Slot, resource: &BindingResource<'_, A>, partially_bound: bool) -> bool {
    use BindingResource as R;
    let single = slot.count.is_none();
    match (&slot.accept, resource) {
        (Accept::Buffer(rule), R::Buffer(b)) => {
            single && buffer_fits(*rule, A::buffer(b.buffer), b.offset, b.size)
        }
        (Accept::Sampler(ty), R::Sampler(s)) => single && sampler_fits(*ty, A::sampler(s)),
        (Accept::Texture { .. } | Accept::StorageTexture { .. }, R::TextureView(v)) => {
            single && view_fits(&slot.accept, A::view(v))
        }
        _ => fits_rest::<A>(slot, resource, partially_bound),
    }
}

/// One entry's resource against its slot: [`fits`], and when it does not,
/// the error [`resource_error`] builds (out of line).
#[inline(always)]
fn check_resource<A: Facts>(
    slot: &Slot,
    resource: &BindingResource<'_, A>,
    partially_bound: bool,
) -> Result<(), BindingError> {
    if fits::<A>(slot, resource, partially_bound) {
        Ok(())
    } else {
        Err(resource_error::<A>(slot, resource, partially_bound))
    }
}

/// [`fits`] for arrays and acceleration structures (and any resource of
/// the wrong kind), kept out of the common path.
#[inline(never)]
fn fits_rest<A: Facts>(
    slot: &Slot,
    resource: &BindingResource<'_, A>,
    partially_bound: bool,
) -> bool {
    use BindingResource as R;
    let count = |got| slot.count.is_some() && count_fits(slot, got, partially_bound);
    match (&slot.accept, resource) {
        (Accept::Buffer(rule), R::BufferArray(list)) => {
            count(list.len())
                && list
                    .iter()
                    .all(|b| buffer_fits(*rule, A::buffer(b.buffer), b.offset, b.size))
        }
        (Accept::Sampler(ty), R::SamplerArray(list)) => {
            count(list.len()) && list.iter().all(|s| sampler_fits(*ty, A::sampler(s)))
        }
        (Accept::Texture { .. } | Accept::StorageTexture { .. }, R::TextureViewArray(list)) => {
            count(list.len()) && list.iter().all(|v| view_fits(&slot.accept, A::view(v)))
        }
        (Accept::Structure, R::AccelerationStructure(a)) => {
            slot.count.is_none() && top_level::<A>(a)
        }
        (Accept::Structure, R::AccelerationStructureArray(list)) => {
            count(list.len()) && list.iter().all(|a| top_level::<A>(a))
        }
        _ => false,
    }
}

/// Whether an acceleration structure is a top-level one.
fn top_level<A: Facts>(structure: &A::AccelerationStructure) -> bool {
    A::structure_kind(structure) == crate::AccelerationStructureKind::TopLevel
}

/// Whether an array of `got` elements fits `slot`: exactly its length, or
/// 1 to its length when partially bound.
#[inline]
fn count_fits(slot: &Slot, got: usize, partially_bound: bool) -> bool {
    let expected = slot.count.map_or(1, NonZeroU32::get) as usize;
    if partially_bound {
        (1..=expected).contains(&got)
    } else {
        got == expected
    }
}

/// Why a resource failed [`fits`]: the error of the first check it fails,
/// in the module docs' order (for an array, its length, then its first
/// element that does not fit).
#[cold]
#[inline(never)]
fn resource_error<A: Facts>(
    slot: &Slot,
    resource: &BindingResource<'_, A>,
    partially_bound: bool,
) -> BindingError {
    use BindingResource as R;
    let binding = slot.binding;
    let array = slot.count.is_some();
    let count = |got: usize| {
        (!count_fits(slot, got, partially_bound)).then(|| BindingError::WrongCount {
            binding,
            got,
            expected: slot.count.map_or(1, NonZeroU32::get),
        })
    };
    let buffer = |b: &crate::BufferBinding<'_, A::Buffer>| {
        let rule = *rule_of(slot)?;
        let facts = A::buffer(b.buffer);
        if buffer_fits(rule, facts, b.offset, b.size) {
            return None;
        }
        let size = binding_size(facts.size, b.offset, b.size);
        Some(buffer_error(binding, rule, facts, b.offset, size))
    };
    let sampler = |s: &A::Sampler| match slot.accept {
        Accept::Sampler(ty) if !sampler_fits(ty, A::sampler(s)) => {
            Some(sampler_error(binding, ty, A::sampler(s)))
        }
        _ => None,
    };
    let view = |v: &A::TextureView| {
        (!view_fits(&slot.accept, A::view(v))).then(|| view_error(slot, A::view(v)))
    };
    let structure = |a: &A::AccelerationStructure| {
        (!top_level::<A>(a)).then(|| wrong_type::<A>(slot, resource))
    };
    let found = match (&slot.accept, resource) {
        (Accept::Buffer(_), R::Buffer(b)) if !array => buffer(b),
        (Accept::Buffer(_), R::BufferArray(list)) if array => {
            count(list.len()).or_else(|| list.iter().find_map(buffer))
        }
        (Accept::Sampler(_), R::Sampler(s)) if !array => sampler(s),
        (Accept::Sampler(_), R::SamplerArray(list)) if array => {
            count(list.len()).or_else(|| list.iter().find_map(|x| sampler(x)))
        }
        (Accept::Texture { .. } | Accept::StorageTexture { .. }, R::TextureView(v)) if !array => {
            view(v)
        }
        (Accept::Texture { .. } | Accept::StorageTexture { .. }, R::TextureViewArray(list))
            if array =>
        {
            count(list.len()).or_else(|| list.iter().find_map(|x| view(x)))
        }
        (Accept::Structure, R::AccelerationStructure(a)) if !array => structure(a),
        (Accept::Structure, R::AccelerationStructureArray(list)) if array => {
            count(list.len()).or_else(|| list.iter().find_map(|x| structure(x)))
        }
        _ => Some(wrong_type::<A>(slot, resource)),
    };
    found.unwrap_or_else(|| {
        // Unreachable: `fits` said no, so some check above fails.
        log::error!("binding {binding}: a resource failed its checks for no reason found");
        BindingError::Device(crate::DeviceError::Unexpected)
    })
}

/// A buffer slot's rule.
fn rule_of(slot: &Slot) -> Option<&BufferRule> {
    match &slot.accept {
        Accept::Buffer(rule) => Some(rule),
        _ => None,
    }
}

/// Whether a buffer range fits its binding's rule and its buffer: not
/// empty, inside the buffer, aligned, within the rule's lengths, and the
/// buffer has the usage the rule needs.
#[inline(always)]
pub(crate) fn buffer_fits(
    rule: BufferRule,
    buffer: BufferFacts,
    offset: u64,
    size: Option<NonZeroU64>,
) -> bool {
    let size = binding_size(buffer.size, offset, size);
    let (usage, _) = rule.usage();
    // Alignments are powers of two (Vulkan and WebGPU both require it);
    // the remainder covers any other value all the same.
    let misaligned = if rule.alignment.is_power_of_two() {
        offset & (rule.alignment - 1) != 0
    } else {
        offset % rule.alignment != 0
    };
    size != 0
        && offset
            .checked_add(size)
            .is_some_and(|end| end <= buffer.size)
        && !misaligned
        && size <= rule.max
        && size >= rule.min
        && buffer.usage.contains(usage)
}

/// Why a buffer range failed [`buffer_fits`], in the checks' order: an
/// empty range, one past the buffer's end, a misaligned offset, a range
/// longer than the limit or shorter than `min_binding_size`, then a buffer
/// without the usage.
#[cold]
#[inline(never)]
fn buffer_error(
    binding: u32,
    rule: BufferRule,
    buffer: BufferFacts,
    offset: u64,
    size: u64,
) -> BindingError {
    let buffer_size = buffer.size;
    let (alignment_name, max_name) = if rule.uniform {
        (
            "min_uniform_buffer_offset_alignment",
            "max_uniform_buffer_binding_size",
        )
    } else {
        (
            "min_storage_buffer_offset_alignment",
            "max_storage_buffer_binding_size",
        )
    };
    let (alignment, max, min) = (rule.alignment, rule.max, rule.min);
    let reason = if size == 0 {
        "is empty".to_owned()
    } else if offset.checked_add(size).is_none_or(|end| end > buffer_size) {
        format!("runs past the end of the {buffer_size}-byte buffer")
    } else if offset % alignment != 0 {
        format!("starts at an offset that is not a multiple of {alignment} ({alignment_name})")
    } else if size > max {
        format!("is longer than {max} bytes ({max_name})")
    } else if size < min {
        format!("is shorter than the layout's min_binding_size of {min} bytes")
    } else {
        let (_, needed) = rule.usage();
        return BindingError::MissingUsage {
            binding,
            needed,
            has: flag_names(buffer.usage),
        };
    };
    BindingError::InvalidBufferRange {
        binding,
        offset,
        size,
        buffer_size,
        reason,
    }
}

/// Whether a sampler fits a sampler binding: a comparison sampler for a
/// comparison binding and only there, no filtering one for a
/// non-filtering binding.
#[inline(always)]
fn sampler_fits(ty: wgt::SamplerBindingType, sampler: SamplerFacts) -> bool {
    sampler_expected(ty, sampler).is_none()
}

/// The sampler kind a binding of type `ty` wanted, when `sampler` is not
/// one.
#[inline(always)]
fn sampler_expected(ty: wgt::SamplerBindingType, sampler: SamplerFacts) -> Option<&'static str> {
    use wgt::SamplerBindingType as S;
    match ty {
        S::Comparison if !sampler.comparison => Some("a comparison sampler"),
        S::Filtering if sampler.comparison => Some("a filtering or non-filtering sampler"),
        S::NonFiltering if sampler.comparison || sampler.filtering => {
            Some("a non-filtering sampler")
        }
        _ => None,
    }
}

/// Why a sampler failed [`sampler_fits`].
#[cold]
#[inline(never)]
fn sampler_error(binding: u32, ty: wgt::SamplerBindingType, sampler: SamplerFacts) -> BindingError {
    let expected = sampler_expected(ty, sampler).unwrap_or("a sampler of the binding's kind");
    let got = match (sampler.comparison, sampler.filtering) {
        (true, _) => "a comparison sampler",
        (false, true) => "a filtering sampler",
        (false, false) => "a non-filtering sampler",
    };
    BindingError::IncompatibleResource {
        binding,
        property: "sampler kind",
        expected: expected.to_owned(),
        got: got.to_owned(),
    }
}

/// Whether a view whose texels read as `actual` fits a layout's
/// `expected` sample type (WebGPU's rule): integers exactly; filterable
/// float layouts need a filterable format; unfilterable float layouts take
/// any float or depth view; depth layouts take depth views.
fn sample_type_fits(expected: wgt::TextureSampleType, actual: wgt::TextureSampleType) -> bool {
    use wgt::TextureSampleType as T;
    match (expected, actual) {
        (T::Float { filterable: true }, T::Float { filterable }) => filterable,
        (T::Float { filterable: false }, T::Float { .. } | T::Depth) => true,
        (T::Depth, T::Depth) => true,
        (T::Uint, T::Uint) | (T::Sint, T::Sint) => true,
        _ => false,
    }
}

/// Whether a view fits a sampled or storage texture slot: usage, aspect,
/// sample type or format, dimension and sample count (the slot's
/// [`ViewRule`] against the view's [`ViewKey`], and a storage slot's
/// format).
#[inline(always)]
fn view_fits(accept: &Accept, view: ViewFacts) -> bool {
    match *accept {
        Accept::Texture { rule, .. } => rule.fits(view.key),
        Accept::StorageTexture { rule, format, .. } => rule.fits(view.key) && view.format == format,
        _ => false,
    }
}

/// What a view can be bound as, in bits, worked out once when the view is
/// made ([`ViewKey::of`]): the binding usages it may serve, what its
/// texels read as, its dimension and whether it is multisampled. A slot
/// tests it with its [`ViewRule`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ViewKey(u32);

/// [`ViewKey`] bits: the view may serve `TEXTURE_BINDING`.
const KEY_SAMPLED: u32 = 1;
/// [`ViewKey`] bits: the view may serve `STORAGE_BINDING`.
const KEY_STORAGE: u32 = 1 << 1;
/// [`ViewKey`] bits: its texture has more than one sample.
const KEY_MULTISAMPLED: u32 = 1 << 2;
/// [`ViewKey`] bits: every dimension bit ([`dimension_bit`]).
const KEY_DIMENSIONS: u32 = 0x3f << 8;
/// Every sample type a view may read as, each with its [`ViewKey`] bit.
const SAMPLE_TYPES: [(wgt::TextureSampleType, u32); 5] = [
    (wgt::TextureSampleType::Float { filterable: true }, 1 << 3),
    (wgt::TextureSampleType::Float { filterable: false }, 1 << 4),
    (wgt::TextureSampleType::Depth, 1 << 5),
    (wgt::TextureSampleType::Uint, 1 << 6),
    (wgt::TextureSampleType::Sint, 1 << 7),
];

/// A view dimension's [`ViewKey`] bit.
fn dimension_bit(dimension: wgt::TextureViewDimension) -> u32 {
    use wgt::TextureViewDimension as D;
    let shift = match dimension {
        D::D1 => 0,
        D::D2 => 1,
        D::D2Array => 2,
        D::Cube => 3,
        D::CubeArray => 4,
        D::D3 => 5,
    };
    1 << (8 + shift)
}

impl ViewKey {
    /// The key of a view that may serve `usage`, of `dimension`, on a
    /// texture of `sample_count` samples, whose texels read as
    /// `sample_type` (`None`: both aspects of a depth-stencil format, which
    /// no sampled binding takes).
    pub(crate) fn of(
        usage: wgt::TextureUsages,
        dimension: wgt::TextureViewDimension,
        sample_count: u32,
        sample_type: Option<wgt::TextureSampleType>,
    ) -> Self {
        let mut bits = dimension_bit(dimension);
        if usage.contains(wgt::TextureUsages::TEXTURE_BINDING) {
            bits |= KEY_SAMPLED;
        }
        if usage.contains(wgt::TextureUsages::STORAGE_BINDING) {
            bits |= KEY_STORAGE;
        }
        if sample_count > 1 {
            bits |= KEY_MULTISAMPLED;
        }
        for (ty, bit) in SAMPLE_TYPES {
            if sample_type == Some(ty) {
                bits |= bit;
            }
        }
        Self(bits)
    }
}

/// What a texture slot asks of a view's [`ViewKey`]: the bits under
/// `mask` equal `need` (usage, dimension, sample count) and at least one
/// bit of `any` is set (a fitting sample type; every key has one of a
/// storage slot's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ViewRule {
    mask: u32,
    need: u32,
    any: u32,
}

impl ViewRule {
    /// A sampled-texture slot's rule ([`sample_type_fits`] for the sample
    /// types).
    fn sampled(
        sample_type: wgt::TextureSampleType,
        dimension: wgt::TextureViewDimension,
        multisampled: bool,
    ) -> Self {
        let multisampled = if multisampled { KEY_MULTISAMPLED } else { 0 };
        Self {
            mask: KEY_SAMPLED | KEY_DIMENSIONS | KEY_MULTISAMPLED,
            need: KEY_SAMPLED | dimension_bit(dimension) | multisampled,
            any: SAMPLE_TYPES
                .iter()
                .filter(|(actual, _)| sample_type_fits(sample_type, *actual))
                .fold(0, |any, (_, bit)| any | bit),
        }
    }

    /// A storage-texture slot's rule: single-sampled views only.
    fn storage(dimension: wgt::TextureViewDimension) -> Self {
        Self {
            mask: KEY_STORAGE | KEY_DIMENSIONS | KEY_MULTISAMPLED,
            need: KEY_STORAGE | dimension_bit(dimension),
            any: u32::MAX,
        }
    }

    /// Whether a view of this key fits.
    #[inline(always)]
    fn fits(self, key: ViewKey) -> bool {
        key.0 & self.mask == self.need && key.0 & self.any != 0
    }
}

/// Why a view failed [`view_fits`], in the checks' order: usage, aspect,
/// sample type or format, dimension, sample count.
#[cold]
#[inline(never)]
fn view_error(slot: &Slot, view: ViewFacts) -> BindingError {
    let binding = slot.binding;
    let mismatch = |property, expected: String, got: String| BindingError::IncompatibleResource {
        binding,
        property,
        expected,
        got,
    };
    let (usage, usage_name, dimension, multisampled) = match slot.accept {
        Accept::Texture {
            dimension,
            multisampled,
            ..
        } => (
            wgt::TextureUsages::TEXTURE_BINDING,
            "TEXTURE_BINDING",
            dimension,
            multisampled,
        ),
        Accept::StorageTexture { dimension, .. } => (
            wgt::TextureUsages::STORAGE_BINDING,
            "STORAGE_BINDING",
            dimension,
            false,
        ),
        _ => {
            return BindingError::WrongType {
                binding,
                expected: expected(slot),
                got: "a texture view",
            }
        }
    };
    if !view.usage.contains(usage) {
        return BindingError::MissingUsage {
            binding,
            needed: usage_name,
            has: flag_names(view.usage),
        };
    }
    match slot.accept {
        Accept::Texture { sample_type, .. } => {
            // A view of both aspects of a depth-stencil format has no
            // single sample type: it fits no binding.
            let Some(actual) = view.sample_type else {
                return mismatch(
                    "aspect",
                    "a view of one aspect".to_owned(),
                    format!("{:?} of {:?}", view.aspect, view.format),
                );
            };
            if !sample_type_fits(sample_type, actual) {
                return mismatch(
                    "sample type",
                    format!("{sample_type:?}"),
                    format!("{actual:?} ({:?}, {:?})", view.format, view.aspect),
                );
            }
        }
        Accept::StorageTexture { format, .. } if view.format != format => {
            return mismatch(
                "format",
                format!("{format:?}"),
                format!("{:?}", view.format),
            );
        }
        _ => {}
    }
    if view.dimension != dimension {
        return mismatch(
            "view dimension",
            format!("{dimension:?}"),
            format!("{:?}", view.dimension),
        );
    }
    let expected = if multisampled { "more than 1" } else { "1" };
    mismatch(
        "sample count",
        expected.to_owned(),
        view.sample_count.to_string(),
    )
}

/// The slots a bind group's entries named so far, as bits: one word for
/// up to 64 slots, a list of words past that.
trait SeenSlots {
    /// Marks slot `index` (below the slot count); true if it was marked.
    fn mark(&mut self, index: usize) -> bool;
    /// The first of `len` slots not named yet.
    fn first_unset(&self, len: usize) -> Option<usize>;
}

impl SeenSlots for u64 {
    #[inline(always)]
    fn mark(&mut self, index: usize) -> bool {
        let bit = 1u64.checked_shl(index as u32).unwrap_or(0);
        let present = *self & bit != 0;
        *self |= bit;
        present
    }

    #[inline(always)]
    fn first_unset(&self, len: usize) -> Option<usize> {
        let first = self.trailing_ones() as usize;
        (first < len).then_some(first)
    }
}

impl SeenSlots for Vec<u64> {
    fn mark(&mut self, index: usize) -> bool {
        let Some(word) = self.get_mut(index / 64) else {
            return false;
        };
        let bit = 1u64 << (index % 64);
        let present = *word & bit != 0;
        *word |= bit;
        present
    }

    fn first_unset(&self, len: usize) -> Option<usize> {
        let first = self
            .iter()
            .position(|w| *w != u64::MAX)
            .and_then(|i| self.get(i).map(|w| i * 64 + w.trailing_ones() as usize))
            .unwrap_or(usize::MAX);
        (first < len).then_some(first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seen_finds_the_first_missing_index() {
        let mut bits = vec![0u64; 130usize.div_ceil(64)];
        for i in 0..130 {
            if i != 100 {
                assert!(!bits.mark(i));
            }
        }
        assert!(bits.mark(5));
        assert_eq!(bits.first_unset(130), Some(100));
        bits.mark(100);
        assert_eq!(bits.first_unset(130), None);
        let mut full_word = 0u64;
        (0..64).for_each(|i| {
            full_word.mark(i);
        });
        assert_eq!(full_word.first_unset(64), None);
        assert_eq!(0u64.first_unset(0), None);
        assert_eq!(0u64.first_unset(3), Some(0));
        let mut small = 0u64;
        (0..64).filter(|&i| i != 37).for_each(|i| {
            small.mark(i);
        });
        assert_eq!(small.first_unset(64), Some(37));
        assert!(!small.mark(37));
        assert!(small.mark(63));
        assert_eq!(small.first_unset(64), None);
        // A word and a list of one word agree.
        let mut list = vec![0u64];
        let mut word = 0u64;
        for i in [3, 0, 1] {
            assert_eq!(list.mark(i), word.mark(i));
        }
        assert_eq!(list.first_unset(5), word.first_unset(5));
        assert_eq!(word.first_unset(5), Some(2));
    }

    /// Each failing buffer range gets the error of the first check it
    /// fails, in the documented order.
    /// A buffer range's length, or why it fails.
    fn check_buffer(
        binding: u32,
        rule: BufferRule,
        buffer: BufferFacts,
        offset: u64,
        size: Option<NonZeroU64>,
    ) -> Result<u64, BindingError> {
        let length = binding_size(buffer.size, offset, size);
        if buffer_fits(rule, buffer, offset, size) {
            Ok(length)
        } else {
            Err(buffer_error(binding, rule, buffer, offset, length))
        }
    }

    #[test]
    fn buffer_ranges_fail_in_order() {
        let rule = BufferRule {
            uniform: true,
            alignment: 256,
            max: 1024,
            min: 16,
        };
        let buffer = BufferFacts {
            size: 4096,
            usage: wgt::BufferUsages::UNIFORM,
        };
        let size = NonZeroU64::new;
        let reason = |r: Result<u64, BindingError>| match r {
            Err(BindingError::InvalidBufferRange { reason, .. }) => reason,
            Err(BindingError::MissingUsage { needed, .. }) => format!("usage {needed}"),
            other => format!("{other:?}"),
        };
        assert_eq!(check_buffer(0, rule, buffer, 256, size(64)).ok(), Some(64));
        assert_eq!(check_buffer(0, rule, buffer, 3072, None).ok(), Some(1024));
        assert_eq!(
            reason(check_buffer(0, rule, buffer, 4096, None)),
            "is empty"
        );
        assert!(reason(check_buffer(0, rule, buffer, 4000, size(200))).starts_with("runs past"));
        assert!(reason(check_buffer(0, rule, buffer, 100, size(64))).contains("multiple of 256"));
        assert!(reason(check_buffer(0, rule, buffer, 0, size(2048))).contains("longer than 1024"));
        assert!(reason(check_buffer(0, rule, buffer, 0, size(8))).contains("min_binding_size"));
        let storage_only = BufferFacts {
            usage: wgt::BufferUsages::STORAGE,
            ..buffer
        };
        assert_eq!(
            reason(check_buffer(0, rule, storage_only, 0, size(64))),
            "usage UNIFORM"
        );
    }

    /// A view's key against a slot's rule gives what the rules spelled out
    /// give, for every usage, dimension, sample count and sample type
    /// against every sampled and storage slot.
    #[test]
    fn view_keys_fit_exactly_what_the_rules_allow() {
        use wgt::TextureSampleType as T;
        use wgt::TextureUsages as U;
        use wgt::TextureViewDimension as D;
        let dimensions = [D::D1, D::D2, D::D2Array, D::Cube, D::CubeArray, D::D3];
        let types = [
            T::Float { filterable: true },
            T::Float { filterable: false },
            T::Depth,
            T::Uint,
            T::Sint,
        ];
        let usages = [
            U::empty(),
            U::TEXTURE_BINDING,
            U::STORAGE_BINDING,
            U::TEXTURE_BINDING | U::STORAGE_BINDING,
            U::COPY_SRC | U::RENDER_ATTACHMENT,
        ];
        let (mut fitted, mut refused) = (0, 0);
        for usage in usages {
            for dimension in dimensions {
                for samples in [1, 4] {
                    for actual in std::iter::once(None).chain(types.map(Some)) {
                        let key = ViewKey::of(usage, dimension, samples, actual);
                        for want in dimensions {
                            for multisampled in [false, true] {
                                for expected in types {
                                    let rule = ViewRule::sampled(expected, want, multisampled);
                                    let allowed = usage.contains(U::TEXTURE_BINDING)
                                        && actual.is_some_and(|a| sample_type_fits(expected, a))
                                        && dimension == want
                                        && multisampled == (samples > 1);
                                    assert_eq!(
                                        rule.fits(key),
                                        allowed,
                                        "{usage:?} {dimension:?} x{samples} {actual:?} \
                                         in {expected:?} {want:?} ms {multisampled}"
                                    );
                                    if allowed {
                                        fitted += 1;
                                    } else {
                                        refused += 1;
                                    }
                                }
                            }
                            let allowed = usage.contains(U::STORAGE_BINDING)
                                && dimension == want
                                && samples == 1;
                            assert_eq!(ViewRule::storage(want).fits(key), allowed);
                        }
                    }
                }
            }
        }
        assert!(fitted > 0 && refused > fitted);
    }

    #[test]
    fn depth_views_are_not_filterable_floats() {
        use wgt::TextureSampleType as T;
        assert!(!sample_type_fits(T::Float { filterable: true }, T::Depth));
        assert!(sample_type_fits(T::Float { filterable: false }, T::Depth));
        assert!(sample_type_fits(T::Depth, T::Depth));
        assert!(!sample_type_fits(T::Depth, T::Float { filterable: true }));
        assert!(!sample_type_fits(
            T::Float { filterable: true },
            T::Float { filterable: false }
        ));
        assert!(!sample_type_fits(T::Uint, T::Sint));
    }
}
