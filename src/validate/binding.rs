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

use std::num::NonZeroU64;

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

/// What the checks of a bind group need from the device.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GroupContext<'a> {
    /// The device's limits (alignments, binding sizes).
    pub(crate) limits: &'a wgt::Limits,
    /// The device's features (whether 32-bit floats are filterable).
    pub(crate) features: wgt::Features,
    /// The layout was made update-after-bind: its arrays may be partially bound.
    pub(crate) partially_bound: bool,
}

/// Checks a bind group's entries against its layout's (sorted by binding).
/// See the module docs for the order.
pub(crate) fn check_bind_group<A: Facts>(
    layout: &[wgt::BindGroupLayoutEntry],
    cx: GroupContext<'_>,
    entries: &[BindGroupEntry<'_, A>],
) -> Result<(), BindingError> {
    check_bind_group_with::<A>(layout, cx, entries, |_, _| {})
}

/// [`check_bind_group`], handing each entry that passed to `each` with the
/// index of its layout entry, so a backend builds its descriptors in the
/// same pass (without looking the binding up again). `each` may have run
/// for earlier entries when a later one fails: it must only record.
#[inline]
pub(crate) fn check_bind_group_with<A: Facts>(
    layout: &[wgt::BindGroupLayoutEntry],
    cx: GroupContext<'_>,
    entries: &[BindGroupEntry<'_, A>],
    mut each: impl FnMut(usize, &BindGroupEntry<'_, A>),
) -> Result<(), BindingError> {
    let mut seen = Seen::new(layout.len());
    for entry in entries {
        let index = layout_index(layout, entry.binding)
            .ok_or(BindingError::UnknownBinding(entry.binding))?;
        if seen.insert(index) {
            return Err(BindingError::DuplicateBinding(entry.binding));
        }
        let slot = &layout[index];
        check_resource::<A>(slot, &entry.resource, cx)?;
        each(index, entry);
    }
    if let Some(missing) = seen.first_unset() {
        return Err(BindingError::MissingBinding(layout[missing].binding));
    }
    Ok(())
}

/// The index of `binding` in layout entries sorted by binding (without
/// duplicates). Bindings numbered 0, 1, 2… (the common case) sit at their
/// own number: one comparison, no search.
#[inline]
pub(crate) fn layout_index(layout: &[wgt::BindGroupLayoutEntry], binding: u32) -> Option<usize> {
    match layout.get(binding as usize) {
        Some(e) if e.binding == binding => Some(binding as usize),
        _ => layout.binary_search_by_key(&binding, |e| e.binding).ok(),
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

/// What a layout entry expects, for [`BindingError::WrongType`].
pub(crate) fn expected(entry: &wgt::BindGroupLayoutEntry) -> &'static str {
    use wgt::BindingType as T;
    let uniform = wgt::BufferBindingType::Uniform;
    match (&entry.ty, entry.count.is_some()) {
        (T::Buffer { ty, .. }, false) if *ty == uniform => "a uniform buffer",
        (T::Buffer { ty, .. }, true) if *ty == uniform => "an array of uniform buffers",
        (T::Buffer { .. }, false) => "a storage buffer",
        (T::Buffer { .. }, true) => "an array of storage buffers",
        (T::Sampler(_), false) => "a sampler",
        (T::Sampler(_), true) => "an array of samplers",
        (T::Texture { .. }, false) => "a sampled texture view",
        (T::Texture { .. }, true) => "an array of sampled texture views",
        (T::StorageTexture { .. }, false) => "a storage texture view",
        (T::StorageTexture { .. }, true) => "an array of storage texture views",
        (T::AccelerationStructure { .. }, false) => "a top-level acceleration structure",
        (T::AccelerationStructure { .. }, true) => "an array of top-level acceleration structures",
        (T::ExternalTexture, _) => "an external texture",
    }
}

fn check_resource<A: Facts>(
    slot: &wgt::BindGroupLayoutEntry,
    resource: &BindingResource<'_, A>,
    cx: GroupContext<'_>,
) -> Result<(), BindingError> {
    use wgt::BindingType as T;
    let binding = slot.binding;
    let wrong = || BindingError::WrongType {
        binding,
        expected: expected(slot),
        got: given::<A>(resource),
    };
    let count = |got: usize| -> Result<(), BindingError> {
        let expected = slot.count.map_or(1, |n| n.get());
        let fits = if cx.partially_bound {
            (1..=expected as usize).contains(&got)
        } else {
            got == expected as usize
        };
        if fits {
            Ok(())
        } else {
            Err(BindingError::WrongCount {
                binding,
                got,
                expected,
            })
        }
    };
    let buffer = |b: &crate::BufferBinding<'_, A::Buffer>| {
        check_buffer(slot, cx.limits, A::buffer(b.buffer), b.offset, b.size).map(drop)
    };
    let view = |v: &A::TextureView| check_view(slot, A::view(v), cx.features);
    let array = slot.count.is_some();
    match (&slot.ty, resource) {
        (T::Buffer { .. }, BindingResource::Buffer(b)) if !array => buffer(b),
        (T::Buffer { .. }, BindingResource::BufferArray(list)) if array => {
            count(list.len())?;
            list.iter().try_for_each(buffer)
        }
        (T::Sampler(ty), BindingResource::Sampler(s)) if !array => {
            check_sampler(binding, *ty, A::sampler(s))
        }
        (T::Sampler(ty), BindingResource::SamplerArray(list)) if array => {
            count(list.len())?;
            list.iter()
                .try_for_each(|s| check_sampler(binding, *ty, A::sampler(s)))
        }
        (T::Texture { .. } | T::StorageTexture { .. }, BindingResource::TextureView(v))
            if !array =>
        {
            view(v)
        }
        (T::Texture { .. } | T::StorageTexture { .. }, BindingResource::TextureViewArray(list))
            if array =>
        {
            count(list.len())?;
            list.iter().try_for_each(|v| view(v))
        }
        (T::AccelerationStructure { .. }, BindingResource::AccelerationStructure(a)) if !array => {
            match A::structure_kind(a) {
                crate::AccelerationStructureKind::TopLevel => Ok(()),
                crate::AccelerationStructureKind::BottomLevel => Err(wrong()),
            }
        }
        (T::AccelerationStructure { .. }, BindingResource::AccelerationStructureArray(list))
            if array =>
        {
            count(list.len())?;
            list.iter().try_for_each(|a| match A::structure_kind(a) {
                crate::AccelerationStructureKind::TopLevel => Ok(()),
                crate::AccelerationStructureKind::BottomLevel => Err(wrong()),
            })
        }
        _ => Err(wrong()),
    }
}

/// Checks one buffer range against its layout entry, its buffer and the
/// limits; returns its length.
pub(crate) fn check_buffer(
    slot: &wgt::BindGroupLayoutEntry,
    limits: &wgt::Limits,
    buffer: BufferFacts,
    offset: u64,
    size: Option<NonZeroU64>,
) -> Result<u64, BindingError> {
    let binding = slot.binding;
    let wgt::BindingType::Buffer {
        ty,
        min_binding_size,
        ..
    } = slot.ty
    else {
        return Err(BindingError::WrongType {
            binding,
            expected: expected(slot),
            got: "a buffer",
        });
    };
    let buffer_size = buffer.size;
    let size = binding_size(buffer_size, offset, size);
    let (alignment, alignment_name, max, max_name, usage, usage_name) = match ty {
        wgt::BufferBindingType::Uniform => (
            limits.min_uniform_buffer_offset_alignment,
            "min_uniform_buffer_offset_alignment",
            limits.max_uniform_buffer_binding_size,
            "max_uniform_buffer_binding_size",
            wgt::BufferUsages::UNIFORM,
            "UNIFORM",
        ),
        wgt::BufferBindingType::Storage { .. } => (
            limits.min_storage_buffer_offset_alignment,
            "min_storage_buffer_offset_alignment",
            limits.max_storage_buffer_binding_size,
            "max_storage_buffer_binding_size",
            wgt::BufferUsages::STORAGE,
            "STORAGE",
        ),
    };
    let invalid = |reason: String| {
        Err(BindingError::InvalidBufferRange {
            binding,
            offset,
            size,
            buffer_size,
            reason,
        })
    };
    if size == 0 {
        return invalid("is empty".to_owned());
    }
    if offset.checked_add(size).is_none_or(|end| end > buffer_size) {
        return invalid(format!(
            "runs past the end of the {buffer_size}-byte buffer"
        ));
    }
    // Vulkan asks the alignment of dynamic bindings' base offsets too.
    let alignment = u64::from(alignment.max(1));
    if offset % alignment != 0 {
        return invalid(format!(
            "starts at an offset that is not a multiple of {alignment} ({alignment_name})"
        ));
    }
    if size > max {
        return invalid(format!("is longer than {max} bytes ({max_name})"));
    }
    if let Some(min) = min_binding_size.filter(|min| size < min.get()) {
        return invalid(format!(
            "is shorter than the layout's min_binding_size of {min} bytes"
        ));
    }
    if !buffer.usage.contains(usage) {
        return Err(BindingError::MissingUsage {
            binding,
            needed: usage_name,
            has: flag_names(buffer.usage),
        });
    }
    Ok(size)
}

/// Checks a sampler against a sampler binding: a comparison sampler for a
/// comparison binding and only there, no filtering one for a
/// non-filtering binding.
fn check_sampler(
    binding: u32,
    ty: wgt::SamplerBindingType,
    sampler: SamplerFacts,
) -> Result<(), BindingError> {
    use wgt::SamplerBindingType as S;
    let kind = |s: SamplerFacts| match (s.comparison, s.filtering) {
        (true, _) => "a comparison sampler",
        (false, true) => "a filtering sampler",
        (false, false) => "a non-filtering sampler",
    };
    let expected = match ty {
        S::Comparison if !sampler.comparison => "a comparison sampler",
        S::Filtering if sampler.comparison => "a filtering or non-filtering sampler",
        S::NonFiltering if sampler.comparison || sampler.filtering => "a non-filtering sampler",
        _ => return Ok(()),
    };
    Err(BindingError::IncompatibleResource {
        binding,
        property: "sampler kind",
        expected: expected.to_owned(),
        got: kind(sampler).to_owned(),
    })
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

/// Checks a view against a sampled or storage texture binding: usage,
/// aspect, sample type or format, dimension and sample count.
fn check_view(
    slot: &wgt::BindGroupLayoutEntry,
    view: ViewFacts,
    features: wgt::Features,
) -> Result<(), BindingError> {
    use wgt::BindingType as T;
    let binding = slot.binding;
    let mismatch = |property, expected: String, got: String| {
        Err(BindingError::IncompatibleResource {
            binding,
            property,
            expected,
            got,
        })
    };
    let (usage, usage_name, view_dimension, multisampled) = match slot.ty {
        T::Texture {
            view_dimension,
            multisampled,
            ..
        } => (
            wgt::TextureUsages::TEXTURE_BINDING,
            "TEXTURE_BINDING",
            view_dimension,
            multisampled,
        ),
        T::StorageTexture { view_dimension, .. } => (
            wgt::TextureUsages::STORAGE_BINDING,
            "STORAGE_BINDING",
            view_dimension,
            false,
        ),
        _ => {
            return Err(BindingError::WrongType {
                binding,
                expected: expected(slot),
                got: "a texture view",
            })
        }
    };
    if !view.usage.contains(usage) {
        return Err(BindingError::MissingUsage {
            binding,
            needed: usage_name,
            has: flag_names(view.usage),
        });
    }
    match slot.ty {
        T::Texture { sample_type, .. } => {
            // A view of both aspects of a depth-stencil format has no
            // single sample type: it fits no binding.
            let Some(actual) = view.format.sample_type(Some(view.aspect), Some(features)) else {
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
        T::StorageTexture { format, .. } if view.format != format => {
            return mismatch(
                "format",
                format!("{format:?}"),
                format!("{:?}", view.format),
            );
        }
        _ => {}
    }
    if view.dimension != view_dimension {
        return mismatch(
            "view dimension",
            format!("{view_dimension:?}"),
            format!("{:?}", view.dimension),
        );
    }
    if multisampled != (view.sample_count > 1) {
        let expected = if multisampled { "more than 1" } else { "1" };
        return mismatch(
            "sample count",
            expected.to_owned(),
            view.sample_count.to_string(),
        );
    }
    Ok(())
}

/// A set of indices below a bound, as bits (on the stack up to 128).
struct Seen {
    inline: [u64; 2],
    heap: Vec<u64>,
    len: usize,
}

impl Seen {
    fn new(len: usize) -> Self {
        let words = len.div_ceil(64);
        Self {
            inline: [0; 2],
            heap: if words > 2 {
                vec![0; words]
            } else {
                Vec::new()
            },
            len,
        }
    }

    fn words(&mut self) -> &mut [u64] {
        if self.heap.is_empty() {
            &mut self.inline
        } else {
            &mut self.heap
        }
    }

    /// Adds `index`; true if it was already there.
    fn insert(&mut self, index: usize) -> bool {
        let Some(word) = self.words().get_mut(index / 64) else {
            return false;
        };
        let bit = 1u64 << (index % 64);
        let present = *word & bit != 0;
        *word |= bit;
        present
    }

    /// The first index below the bound not in the set.
    fn first_unset(&mut self) -> Option<usize> {
        let len = self.len;
        self.words()
            .iter()
            .enumerate()
            .find(|(_, w)| **w != u64::MAX)
            .map(|(i, w)| i * 64 + w.trailing_ones() as usize)
            .filter(|&i| i < len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seen_finds_the_first_missing_index() {
        let mut bits = Seen::new(130);
        for i in 0..130 {
            if i != 100 {
                assert!(!bits.insert(i));
            }
        }
        assert!(bits.insert(5));
        assert_eq!(bits.first_unset(), Some(100));
        bits.insert(100);
        assert_eq!(bits.first_unset(), None);
        let mut full_word = Seen::new(64);
        (0..64).for_each(|i| {
            full_word.insert(i);
        });
        assert_eq!(full_word.first_unset(), None);
        assert_eq!(Seen::new(0).first_unset(), None);
        assert_eq!(Seen::new(3).first_unset(), Some(0));
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
