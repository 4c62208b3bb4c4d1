//! Acceleration structures: every check that needs no driver, one
//! function per operation, run by every backend in the same order, so a
//! misuse is the same [`AccelerationStructureError`](Error) on noop and on
//! Vulkan. What a backend adds is only what needs the driver (the sizes
//! Vulkan asks `vkGetAccelerationStructureBuildSizesKHR` for, which
//! [`check_build`] takes as a closure, run at its place in the order).
//!
//! | operation | function | checks, in order |
//! | --- | --- | --- |
//! | every entry point | [`unsupported_device`] | the error of a device without acceleration structures |
//! | every recorded command | [`check_outside_pass`] | recorded inside a render or compute pass (`Device(InvalidState)`) |
//! | creation | [`check_create`] | size 0 (`ZeroSize`); an owned structure above `max_buffer_size` (`LimitExceeded`); a placement buffer without `STORAGE` (`BufferUsage`), an offset not a multiple of [`PLACEMENT_ALIGNMENT`] or a range past the buffer (`InvalidPlacement`) |
//! | size queries | [`check_size_query`] | [`check_flags`], then [`check_geometry`] without buffers |
//! | builds and updates | [`check_build`] | the entries' kind against the destination (`WrongKind`); [`check_flags`]; an update's source: present (`MissingSource`), of the entries' kind (`WrongKind`), last built with `ALLOW_UPDATE` and the same flags (`MissingFlag`); [`check_geometry`] with buffers (once for a run of descriptors with the very same entries and flags: [`repeats_geometry`]); the sizes, then the destination's size (`TooSmall`); the scratch buffer's usage (`BufferUsage`), offset alignment and size (`Scratch`) |
//! | copies | [`check_copy`] | kinds (`WrongKind`); a compaction's source flags (`MissingFlag`); the destination's size where known (`TooSmall`) |
//! | compacted-size reads | [`check_compacted_size_read`] | each structure bottom-level (`WrongKind`) and built with `ALLOW_COMPACTION` (`MissingFlag`); the count (`LimitExceeded`); the buffer's usage (`BufferUsage`) and range (`InvalidPlacement`) |
//!
//! A structure's build flags are those of the last build (or copy)
//! *recorded* into it: the GPU has not run it yet when the next command
//! is checked.

use super::{BufferFacts, Facts};
use crate::{
    AccelerationStructureBuildMode as Mode, AccelerationStructureBuildSizes,
    AccelerationStructureCopy, AccelerationStructureEntries, AccelerationStructureError as Error,
    AccelerationStructureKind as Kind, BuildAccelerationStructureDescriptor, StructureBuffer,
};
use wgt::AccelerationStructureFlags as Flags;
use wgt::BufferUsages as U;

/// What a placement offset must be a multiple of (Vulkan's
/// `VUID-VkAccelerationStructureCreateInfoKHR-offset-03734`).
pub(crate) const PLACEMENT_ALIGNMENT: u64 = 256;

/// The usage a buffer needs to hold acceleration structures.
pub(crate) const STORAGE_USAGE: U = U::STORAGE;

/// The usages a build input buffer may have (any one).
pub(crate) const INPUT_USAGE: U = U::BLAS_INPUT.union(U::TLAS_INPUT);

/// The usages a scratch buffer may have (any one): each gives the buffer
/// a device address and storage-buffer usage on an acceleration-structure
/// device.
pub(crate) const SCRATCH_USAGE: U = U::STORAGE.union(INPUT_USAGE);

/// The usages a compacted-size destination may have (any one).
pub(crate) const COMPACTED_SIZE_USAGE: U = U::COPY_DST.union(U::QUERY_RESOLVE);

/// Bytes of one TLAS instance record.
const INSTANCE_SIZE: u64 = crate::TLAS_INSTANCE_SIZE as u64;

/// Bytes of one box (`VkAabbPositionsKHR`).
const AABB_SIZE: u64 = 24;

/// Bytes of one transform (a 3×4 `f32` matrix).
const TRANSFORM_SIZE: u64 = 48;

/// What the checks need to know about a structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StructureFacts {
    /// Bottom or top level.
    pub(crate) kind: Kind,
    /// Size in bytes, as created.
    pub(crate) size: u64,
    /// Flags of the last build (or copy) recorded into it; empty before any.
    pub(crate) flags: Flags,
}

/// How a backend's structures describe themselves to the checks.
pub(crate) trait AccelerationFacts: Facts {
    /// A structure's kind, size and last recorded build flags.
    fn structure(structure: &Self::AccelerationStructure) -> StructureFacts;
}

/// The device limits (and feature) the build checks read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct BuildLimits {
    /// `wgt::Limits::max_blas_geometry_count`.
    pub(crate) max_blas_geometry_count: u32,
    /// `wgt::Limits::max_blas_primitive_count`.
    pub(crate) max_blas_primitive_count: u32,
    /// `wgt::Limits::max_tlas_instance_count`.
    pub(crate) max_tlas_instance_count: u32,
    /// What scratch offsets must be a multiple of (the adapter's
    /// `minAccelerationStructureScratchOffsetAlignment`; noop's 256).
    pub(crate) scratch_alignment: u64,
    /// `Features::EXTENDED_ACCELERATION_STRUCTURE_VERTEX_FORMATS` is enabled.
    pub(crate) extended_vertex_formats: bool,
    /// `Features::EXPERIMENTAL_RAY_HIT_VERTEX_RETURN` is enabled: builds may
    /// ask for `ALLOW_RAY_HIT_VERTEX_RETURN`.
    pub(crate) vertex_return: bool,
}

impl BuildLimits {
    /// The limits of a device with `limits` and `features` whose adapter
    /// asks scratch offsets to be multiples of `scratch_alignment`.
    pub(crate) fn new(
        limits: &wgt::Limits,
        features: wgt::Features,
        scratch_alignment: u64,
    ) -> Self {
        Self {
            max_blas_geometry_count: limits.max_blas_geometry_count,
            max_blas_primitive_count: limits.max_blas_primitive_count,
            max_tlas_instance_count: limits.max_tlas_instance_count,
            scratch_alignment: scratch_alignment.max(1),
            extended_vertex_formats: features
                .contains(wgt::Features::EXTENDED_ACCELERATION_STRUCTURE_VERTEX_FORMATS),
            vertex_return: features.contains(wgt::Features::EXPERIMENTAL_RAY_HIT_VERTEX_RETURN),
        }
    }
}

/// The error of every acceleration-structure entry point of a device
/// opened without acceleration structures.
pub(crate) fn unsupported_device() -> Error {
    Error::Unsupported {
        what: "acceleration structures",
        allowed: "only on a device opened with HalFeatures::ACCELERATION_STRUCTURE (or \
                  RAY_QUERY / RAY_TRACING_PIPELINE, which include it)",
    }
}

/// Checks a structure's size, and its placement when it lives in a
/// caller's buffer (`placement`: the buffer and the offset); an owned
/// structure is one buffer of at most `max_buffer_size` bytes.
pub(crate) fn check_create(
    size: u64,
    placement: Option<(BufferFacts, u64)>,
    max_buffer_size: u64,
) -> Result<(), Error> {
    if size == 0 {
        return Err(Error::ZeroSize);
    }
    let Some((buffer, offset)) = placement else {
        if size > max_buffer_size {
            return Err(Error::LimitExceeded {
                what: "bytes",
                limit: "max_buffer_size",
                given: size,
                max: max_buffer_size,
            });
        }
        return Ok(());
    };
    if !buffer.usage.contains(STORAGE_USAGE) {
        return Err(Error::BufferUsage {
            role: StructureBuffer::Placement,
            usage: buffer.usage,
            allowed: STORAGE_USAGE,
        });
    }
    check_range(
        StructureBuffer::Placement,
        buffer,
        offset,
        size,
        PLACEMENT_ALIGNMENT,
    )
}

/// Checks that `what` (build entries, a copy's destination, a structure
/// whose compacted size is read, …) is of the `expected` kind.
/// Acceleration-structure commands (builds, copies, compacted-size reads)
/// are recorded outside passes on every backend: Vulkan forbids them inside
/// a render pass, and one rule for every pass kind keeps noop and Vulkan
/// alike.
pub(crate) fn check_outside_pass(in_pass: bool) -> Result<(), Error> {
    if in_pass {
        Err(crate::DeviceError::InvalidState("recorded inside a pass").into())
    } else {
        Ok(())
    }
}

pub(crate) fn check_kind(what: &'static str, given: Kind, expected: Kind) -> Result<(), Error> {
    if given != expected {
        return Err(Error::WrongKind {
            what,
            given,
            expected,
        });
    }
    Ok(())
}

/// The level of structure `entries` build.
pub(crate) fn kind_of<B: ?Sized>(entries: &AccelerationStructureEntries<'_, B>) -> Kind {
    match entries {
        AccelerationStructureEntries::Triangles(_) | AccelerationStructureEntries::Aabbs(_) => {
            Kind::BottomLevel
        }
        AccelerationStructureEntries::Instances(_) => Kind::TopLevel,
    }
}

/// Build flags the device can honour: `ALLOW_RAY_HIT_VERTEX_RETURN`
/// (position fetch) only with `EXPERIMENTAL_RAY_HIT_VERTEX_RETURN`, and at
/// most one of the two preferences (Vulkan's
/// `VUID-VkAccelerationStructureBuildGeometryInfoKHR-flags-03796`).
pub(crate) fn check_flags(flags: Flags, limits: &BuildLimits) -> Result<(), Error> {
    if flags.contains(Flags::ALLOW_RAY_HIT_VERTEX_RETURN) && !limits.vertex_return {
        return Err(Error::Unsupported {
            what: "build flag ALLOW_RAY_HIT_VERTEX_RETURN on a device without \
                   EXPERIMENTAL_RAY_HIT_VERTEX_RETURN",
            allowed: "ALLOW_UPDATE, ALLOW_COMPACTION, PREFER_FAST_TRACE or PREFER_FAST_BUILD, \
                      LOW_MEMORY, USE_TRANSFORM",
        });
    }
    if flags.contains(Flags::PREFER_FAST_TRACE | Flags::PREFER_FAST_BUILD) {
        return Err(Error::Unsupported {
            what: "build flags PREFER_FAST_TRACE and PREFER_FAST_BUILD together",
            allowed: "at most one of PREFER_FAST_TRACE and PREFER_FAST_BUILD",
        });
    }
    Ok(())
}

/// Triangles of a triangle geometry: indices / 3, or vertices / 3.
pub(crate) fn triangle_count<B: ?Sized>(t: &crate::AccelerationStructureTriangles<'_, B>) -> u32 {
    t.indices.as_ref().map_or(t.vertex_count, |i| i.count) / 3
}

/// The component size of an allowed vertex format (strides and offsets
/// are multiples of it).
fn vertex_component_size(
    geometry: usize,
    format: wgt::VertexFormat,
    limits: &BuildLimits,
) -> Result<u64, Error> {
    use wgt::VertexFormat as V;
    let extended = crate::error::EXTENDED_AS_VERTEX_FORMATS.contains(&format);
    match format {
        V::Float32x3 => Ok(4),
        _ if extended && limits.extended_vertex_formats => Ok(match format {
            V::Float32x2 => 4,
            _ => 2,
        }),
        _ => Err(Error::UnsupportedVertexFormat {
            geometry,
            format,
            extended: limits.extended_vertex_formats,
        }),
    }
}

/// Checks geometry counts against the limits, then each geometry in order:
/// vertex format, strides, index count and, with `buffers` (builds, not
/// size queries), each buffer: present (`MissingInput`), with an input
/// usage (`BufferUsage`), its range aligned and inside (`InvalidPlacement`).
/// Returns the kind the entries build.
pub(crate) fn check_geometry<A: Facts>(
    entries: &AccelerationStructureEntries<'_, A::Buffer>,
    limits: &BuildLimits,
    buffers: bool,
) -> Result<Kind, Error> {
    match entries {
        AccelerationStructureEntries::Triangles(list) => {
            check_blas_limits(limits, list.len(), list.iter().map(triangle_count))?;
            for (g, t) in list.iter().enumerate() {
                let component = vertex_component_size(g, t.vertex_format, limits)?;
                check_stride(StructureBuffer::Vertices(g), t.vertex_stride, component, 0)?;
                if let Some(indices) = &t.indices {
                    if indices.count % 3 != 0 {
                        return Err(Error::InvalidIndexCount {
                            geometry: g,
                            count: indices.count,
                        });
                    }
                }
                if !buffers {
                    continue;
                }
                let vertex_bytes = match t.vertex_count {
                    0 => 0,
                    n => u64::from(n - 1) * t.vertex_stride + t.vertex_format.size(),
                };
                check_input::<A>(
                    StructureBuffer::Vertices(g),
                    t.vertex_buffer,
                    t.vertex_offset,
                    vertex_bytes,
                    component,
                )?;
                if let Some(indices) = &t.indices {
                    let size = match indices.format {
                        wgt::IndexFormat::Uint16 => 2,
                        wgt::IndexFormat::Uint32 => 4,
                    };
                    check_input::<A>(
                        StructureBuffer::Indices(g),
                        indices.buffer,
                        indices.offset,
                        u64::from(indices.count) * size,
                        size,
                    )?;
                }
                if let Some((buffer, offset)) = t.transform {
                    check_input::<A>(
                        StructureBuffer::Transform(g),
                        Some(buffer),
                        offset,
                        TRANSFORM_SIZE,
                        16,
                    )?;
                }
            }
            Ok(Kind::BottomLevel)
        }
        AccelerationStructureEntries::Aabbs(list) => {
            check_blas_limits(limits, list.len(), list.iter().map(|a| a.count))?;
            for (g, a) in list.iter().enumerate() {
                check_stride(StructureBuffer::Aabbs(g), a.stride, 8, AABB_SIZE)?;
                if !buffers {
                    continue;
                }
                let bytes = match a.count {
                    0 => 0,
                    n => u64::from(n - 1) * a.stride + AABB_SIZE,
                };
                check_input::<A>(StructureBuffer::Aabbs(g), a.buffer, a.offset, bytes, 8)?;
            }
            Ok(Kind::BottomLevel)
        }
        AccelerationStructureEntries::Instances(i) => {
            if i.count > limits.max_tlas_instance_count {
                return Err(Error::LimitExceeded {
                    what: "instances",
                    limit: "max_tlas_instance_count",
                    given: u64::from(i.count),
                    max: u64::from(limits.max_tlas_instance_count),
                });
            }
            if buffers {
                check_input::<A>(
                    StructureBuffer::Instances,
                    i.buffer,
                    i.offset,
                    u64::from(i.count) * INSTANCE_SIZE,
                    16,
                )?;
            }
            Ok(Kind::TopLevel)
        }
    }
}

/// Geometry and primitive counts against the BLAS limits.
fn check_blas_limits(
    limits: &BuildLimits,
    geometries: usize,
    primitives: impl Iterator<Item = u32>,
) -> Result<(), Error> {
    if geometries as u64 > u64::from(limits.max_blas_geometry_count) {
        return Err(Error::LimitExceeded {
            what: "geometries",
            limit: "max_blas_geometry_count",
            given: geometries as u64,
            max: u64::from(limits.max_blas_geometry_count),
        });
    }
    let total: u64 = primitives.map(u64::from).sum();
    if total > u64::from(limits.max_blas_primitive_count) {
        return Err(Error::LimitExceeded {
            what: "primitives",
            limit: "max_blas_primitive_count",
            given: total,
            max: u64::from(limits.max_blas_primitive_count),
        });
    }
    Ok(())
}

/// A stride: a multiple of `multiple_of`, at least `min`, at most `u32::MAX`.
fn check_stride(
    role: StructureBuffer,
    stride: u64,
    multiple_of: u64,
    min: u64,
) -> Result<(), Error> {
    let max = u64::from(u32::MAX);
    if stride % multiple_of != 0 || stride < min || stride > max {
        return Err(Error::InvalidStride {
            role,
            stride,
            multiple_of,
            min,
            max,
        });
    }
    Ok(())
}

/// One build input: present, with an input usage, `len` bytes at an
/// `align`ed `offset` inside the buffer.
fn check_input<A: Facts>(
    role: StructureBuffer,
    buffer: Option<&A::Buffer>,
    offset: u64,
    len: u64,
    align: u64,
) -> Result<(), Error> {
    let buffer = A::buffer(buffer.ok_or(Error::MissingInput(role))?);
    if !buffer.usage.intersects(INPUT_USAGE) {
        return Err(Error::BufferUsage {
            role,
            usage: buffer.usage,
            allowed: INPUT_USAGE,
        });
    }
    check_range(role, buffer, offset, len, align)
}

/// `size` bytes at `offset`, a multiple of `alignment`, inside `buffer`.
fn check_range(
    role: StructureBuffer,
    buffer: BufferFacts,
    offset: u64,
    size: u64,
    alignment: u64,
) -> Result<(), Error> {
    let misaligned = offset % alignment.max(1) != 0;
    if misaligned || offset.checked_add(size).is_none_or(|end| end > buffer.size) {
        return Err(Error::InvalidPlacement {
            role,
            offset,
            size,
            buffer_size: buffer.size,
            alignment,
        });
    }
    Ok(())
}

/// Checks a size query (`Device::get_acceleration_structure_build_sizes`):
/// the flags, then the geometry without its buffers. Returns the kind.
pub(crate) fn check_size_query<A: Facts>(
    entries: &AccelerationStructureEntries<'_, A::Buffer>,
    flags: Flags,
    limits: &BuildLimits,
) -> Result<Kind, Error> {
    check_flags(flags, limits)?;
    check_geometry::<A>(entries, limits, false)
}

/// Whether `desc` builds from the very entries the descriptor before it
/// in the same call (`prev`) built from — the same reference, so the same
/// contents for the whole call — with the same flags: then that
/// descriptor's geometry check, conversion and sizes hold for this one
/// (a batch of structures of one mesh).
pub(crate) fn repeats_geometry<A: AccelerationFacts>(
    prev: Option<&BuildAccelerationStructureDescriptor<'_, A>>,
    desc: &BuildAccelerationStructureDescriptor<'_, A>,
) -> bool {
    prev.is_some_and(|p| std::ptr::eq(p.entries, desc.entries) && p.flags == desc.flags)
}

/// Checks one build or update (the order is in the module docs).
/// `sizes` gives the build's sizes (the backend's: noop computes them,
/// Vulkan asks the driver); it runs only once the geometry is checked.
/// `geometry_checked`: the entries already passed [`check_geometry`] in
/// this call, with the same flags ([`repeats_geometry`]), so neither the
/// geometry nor the flags are checked again.
pub(crate) fn check_build<A: AccelerationFacts>(
    desc: &BuildAccelerationStructureDescriptor<'_, A>,
    limits: &BuildLimits,
    geometry_checked: bool,
    sizes: impl FnOnce() -> Result<AccelerationStructureBuildSizes, Error>,
) -> Result<(), Error> {
    let kind = kind_of(desc.entries);
    let dst = A::structure(desc.destination_acceleration_structure);
    check_kind("build entries", kind, dst.kind)?;
    if !geometry_checked {
        check_flags(desc.flags, limits)?;
    }
    let update = desc.mode == Mode::Update;
    if update {
        let source = A::structure(
            desc.source_acceleration_structure
                .ok_or(Error::MissingSource)?,
        );
        check_kind("the update's source structure", source.kind, kind)?;
        if !source.flags.contains(Flags::ALLOW_UPDATE) {
            return Err(Error::MissingFlag("ALLOW_UPDATE"));
        }
        if source.flags != desc.flags {
            return Err(Error::MissingFlag(
                "the same flags as the source's last build (an update keeps them)",
            ));
        }
    }
    if !geometry_checked {
        check_geometry::<A>(desc.entries, limits, true)?;
    }
    let sizes = sizes()?;
    if dst.size < sizes.acceleration_structure_size {
        return Err(Error::TooSmall {
            required: sizes.acceleration_structure_size,
            size: dst.size,
        });
    }
    let required = if update {
        sizes.update_scratch_size
    } else {
        sizes.build_scratch_size
    };
    let scratch = A::buffer(desc.scratch_buffer);
    if !scratch.usage.intersects(SCRATCH_USAGE) {
        return Err(Error::BufferUsage {
            role: StructureBuffer::Scratch,
            usage: scratch.usage,
            allowed: SCRATCH_USAGE,
        });
    }
    let offset = desc.scratch_buffer_offset;
    let available = scratch.size.saturating_sub(offset);
    if offset % limits.scratch_alignment.max(1) != 0 || available < required {
        return Err(Error::Scratch {
            offset,
            available,
            required,
            alignment: limits.scratch_alignment,
        });
    }
    Ok(())
}

/// Checks a copy from `src` into `dst`. `compacted_size`: the size a
/// compacting copy writes, where the backend knows it when recording
/// (noop: the source's size; Vulkan: unknown until the GPU reports it).
pub(crate) fn check_copy(
    src: StructureFacts,
    dst: StructureFacts,
    mode: AccelerationStructureCopy,
    compacted_size: Option<u64>,
) -> Result<(), Error> {
    check_kind("the copy's destination", dst.kind, src.kind)?;
    let required = match mode {
        AccelerationStructureCopy::Clone => Some(src.size),
        AccelerationStructureCopy::Compact => {
            if !src.flags.contains(Flags::ALLOW_COMPACTION) {
                return Err(Error::MissingFlag("ALLOW_COMPACTION"));
            }
            compacted_size
        }
    };
    if let Some(required) = required.filter(|&r| dst.size < r) {
        return Err(Error::TooSmall {
            required,
            size: dst.size,
        });
    }
    Ok(())
}

/// Checks a compacted-size read of `structures` into `buffer` at
/// `offset` (8 bytes each); returns how many there are.
pub(crate) fn check_compacted_size_read(
    structures: impl ExactSizeIterator<Item = StructureFacts>,
    buffer: BufferFacts,
    offset: u64,
) -> Result<u32, Error> {
    let len = structures.len();
    for s in structures {
        check_kind(
            "a structure whose compacted size is read",
            s.kind,
            Kind::BottomLevel,
        )?;
        if !s.flags.contains(Flags::ALLOW_COMPACTION) {
            return Err(Error::MissingFlag("ALLOW_COMPACTION"));
        }
    }
    let count = u32::try_from(len).map_err(|_| Error::LimitExceeded {
        what: "structures",
        limit: "one compacted-size read (u32::MAX)",
        given: len as u64,
        max: u64::from(u32::MAX),
    })?;
    if !buffer.usage.intersects(COMPACTED_SIZE_USAGE) {
        return Err(Error::BufferUsage {
            role: StructureBuffer::CompactedSizes,
            usage: buffer.usage,
            allowed: COMPACTED_SIZE_USAGE,
        });
    }
    check_range(
        StructureBuffer::CompactedSizes,
        buffer,
        offset,
        u64::from(count) * 8,
        8,
    )?;
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BIG: u64 = u64::MAX;

    #[test]
    fn placement_needs_storage_usage_alignment_and_room() {
        let storage = BufferFacts {
            size: 1024,
            usage: U::STORAGE,
        };
        let uniform = BufferFacts {
            usage: U::UNIFORM,
            ..storage
        };
        assert_eq!(check_create(256, Some((storage, 256)), BIG), Ok(()));
        assert_eq!(check_create(256, None, BIG), Ok(()));
        assert_eq!(check_create(0, None, BIG), Err(Error::ZeroSize));
        assert_eq!(
            check_create(512, None, 256),
            Err(Error::LimitExceeded {
                what: "bytes",
                limit: "max_buffer_size",
                given: 512,
                max: 256
            })
        );
        assert_eq!(
            check_create(256, Some((uniform, 0)), BIG),
            Err(Error::BufferUsage {
                role: StructureBuffer::Placement,
                usage: U::UNIFORM,
                allowed: U::STORAGE
            })
        );
        let misaligned = check_create(256, Some((storage, 128)), BIG).unwrap_err();
        assert!(
            misaligned
                .to_string()
                .contains("offset 128 is not a multiple of 256"),
            "{misaligned}"
        );
        let past = check_create(1024, Some((storage, 256)), BIG).unwrap_err();
        let text = past.to_string();
        assert!(
            text.contains("1024 bytes at offset 256") && text.contains("1024 bytes"),
            "{text}"
        );
    }

    #[test]
    fn wrong_kind_names_both_kinds() {
        assert_eq!(check_kind("x", Kind::TopLevel, Kind::TopLevel), Ok(()));
        let e =
            check_kind("the copy's destination", Kind::TopLevel, Kind::BottomLevel).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("the copy's destination")
                && text.contains("TopLevel given")
                && text.contains("BottomLevel is needed"),
            "{text}"
        );
    }

    #[test]
    fn copies_check_kind_then_flag_then_size() {
        let blas = |size, flags| StructureFacts {
            kind: Kind::BottomLevel,
            size,
            flags,
        };
        let tlas = StructureFacts {
            kind: Kind::TopLevel,
            ..blas(64, Flags::empty())
        };
        let plain = blas(512, Flags::empty());
        let small = blas(256, Flags::empty());
        use AccelerationStructureCopy::{Clone, Compact};
        // Kind first, whatever else is wrong.
        assert!(matches!(
            check_copy(plain, tlas, Compact, None),
            Err(Error::WrongKind { .. })
        ));
        // The flag before the size.
        assert_eq!(
            check_copy(plain, small, Compact, Some(512)),
            Err(Error::MissingFlag("ALLOW_COMPACTION"))
        );
        let compactable = blas(512, Flags::ALLOW_COMPACTION);
        assert_eq!(check_copy(compactable, small, Compact, None), Ok(()));
        assert_eq!(
            check_copy(compactable, small, Compact, Some(512)),
            Err(Error::TooSmall {
                required: 512,
                size: 256
            })
        );
        assert_eq!(
            check_copy(plain, small, Clone, None),
            Err(Error::TooSmall {
                required: 512,
                size: 256
            })
        );
    }

    #[test]
    fn scratch_message_says_which_rule() {
        let misaligned = Error::Scratch {
            offset: 4,
            available: 1000,
            required: 100,
            alignment: 128,
        };
        assert!(
            misaligned
                .to_string()
                .contains("offset 4 is not a multiple of the scratch alignment 128"),
            "{misaligned}"
        );
        let short = Error::Scratch {
            offset: 256,
            available: 10,
            required: 100,
            alignment: 128,
        };
        let text = short.to_string();
        assert!(
            text.contains("10 bytes at offset 256") && text.contains("below the 100 bytes"),
            "{text}"
        );
    }

    #[test]
    fn flags_reject_vertex_return_without_its_feature_and_both_preferences() {
        let plain = BuildLimits::default();
        let with_return = BuildLimits {
            vertex_return: true,
            ..plain
        };
        assert_eq!(
            check_flags(Flags::PREFER_FAST_TRACE | Flags::ALLOW_UPDATE, &plain),
            Ok(())
        );
        assert!(matches!(
            check_flags(Flags::ALLOW_RAY_HIT_VERTEX_RETURN, &plain),
            Err(Error::Unsupported { .. })
        ));
        assert_eq!(
            check_flags(Flags::ALLOW_RAY_HIT_VERTEX_RETURN, &with_return),
            Ok(())
        );
        let both =
            check_flags(Flags::PREFER_FAST_TRACE | Flags::PREFER_FAST_BUILD, &plain).unwrap_err();
        assert!(both.to_string().contains("at most one"), "{both}");
    }

    #[test]
    fn vertex_formats_follow_the_feature() {
        let plain = BuildLimits::default();
        let extended = BuildLimits {
            extended_vertex_formats: true,
            ..plain
        };
        let f16 = wgt::VertexFormat::Float16x2;
        assert_eq!(
            vertex_component_size(0, wgt::VertexFormat::Float32x3, &plain),
            Ok(4)
        );
        assert_eq!(vertex_component_size(0, f16, &extended), Ok(2));
        let e = vertex_component_size(3, f16, &plain).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("geometry 3")
                && text.contains("Float16x2")
                && text.contains("EXTENDED_ACCELERATION_STRUCTURE_VERTEX_FORMATS"),
            "{text}"
        );
        let e = vertex_component_size(0, wgt::VertexFormat::Uint32x3, &extended).unwrap_err();
        assert!(
            e.to_string().contains("allowed are Float32x3, Float32x2"),
            "{e}"
        );
    }
}
