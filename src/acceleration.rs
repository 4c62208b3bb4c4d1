//! Acceleration structures: descriptors, build inputs, barriers, and the
//! instance encoding of top-level structures.
//!
//! Life of a BLAS: [`crate::Device::get_acceleration_structure_build_sizes`]
//! → `create_acceleration_structure` (a new structure is in
//! [`AccelerationStructureUses::empty()`], contents undefined) → build with
//! a scratch buffer → barrier `BUILD_OUTPUT` → `SHADER_INPUT` /
//! `BUILD_INPUT` / `COPY_SRC` → trace, or compact (see `crate::compaction`).

use crate::Resources;

/// Bottom level (geometry) or top level (instances).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccelerationStructureKind {
    /// Triangles or AABBs.
    BottomLevel,
    /// Instances of bottom-level structures.
    TopLevel,
}

/// Where an acceleration structure's storage lives.
#[derive(Debug)]
pub enum AccelerationStructurePlacement<'a, B: ?Sized> {
    /// The hal creates and owns a buffer for it, destroyed with it.
    Owned,
    /// In the caller's buffer (with `ACCELERATION_STRUCTURE_STORAGE`-capable
    /// usage: `BLAS_INPUT`/`TLAS_INPUT` are not needed), at `offset` (a
    /// multiple of 256). The buffer must outlive the structure.
    InBuffer {
        /// The buffer.
        buffer: &'a B,
        /// Offset in bytes, a multiple of 256.
        offset: u64,
    },
}

/// Describes an acceleration structure.
#[derive(Debug)]
pub struct AccelerationStructureDescriptor<'a, R: Resources + ?Sized> {
    /// Debug label.
    pub label: Option<&'a str>,
    /// Bottom or top level.
    pub kind: AccelerationStructureKind,
    /// Size in bytes, at least what the build-size query reported for the
    /// geometry that will be built into it.
    pub size: u64,
    /// Where its storage lives.
    pub placement: AccelerationStructurePlacement<'a, R::Buffer>,
}

/// Indices of a triangle geometry.
#[derive(Debug)]
pub struct TriangleIndices<'a, B: ?Sized> {
    /// The index buffer (`None` for size queries).
    pub buffer: Option<&'a B>,
    /// Offset of the first index, a multiple of the index size.
    pub offset: u64,
    /// `Uint16` or `Uint32`.
    pub format: wgt::IndexFormat,
    /// Number of indices, a multiple of 3.
    pub count: u32,
}

/// A triangle geometry of a bottom-level structure.
#[derive(Debug)]
pub struct AccelerationStructureTriangles<'a, B: ?Sized> {
    /// The vertex buffer (`None` for size queries).
    pub vertex_buffer: Option<&'a B>,
    /// Offset of the first vertex.
    pub vertex_offset: u64,
    /// Position format (`Float32x3` everywhere; others where the adapter has
    /// `EXTENDED_ACCELERATION_STRUCTURE_VERTEX_FORMATS`).
    pub vertex_format: wgt::VertexFormat,
    /// Bytes between vertices.
    pub vertex_stride: u64,
    /// Highest vertex index used, plus one.
    pub vertex_count: u32,
    /// Indices; `None` means consecutive vertices form triangles.
    pub indices: Option<TriangleIndices<'a, B>>,
    /// A row-major 3×4 `f32` transform in a buffer (offset multiple of 16),
    /// applied to the vertices at build time.
    pub transform: Option<(&'a B, u64)>,
    /// Opaque, no duplicate any-hit.
    pub flags: wgt::AccelerationStructureGeometryFlags,
}

/// An axis-aligned box geometry of a bottom-level structure (six `f32`s per
/// box: min xyz, max xyz).
#[derive(Debug)]
pub struct AccelerationStructureAabbs<'a, B: ?Sized> {
    /// The buffer (`None` for size queries).
    pub buffer: Option<&'a B>,
    /// Offset of the first box, a multiple of 8.
    pub offset: u64,
    /// Number of boxes.
    pub count: u32,
    /// Bytes between boxes, a multiple of 8 and at least 24.
    pub stride: u64,
    /// Opaque, no duplicate any-hit.
    pub flags: wgt::AccelerationStructureGeometryFlags,
}

/// The instances of a top-level structure: `count` records of
/// [`TLAS_INSTANCE_SIZE`] bytes made with [`encode_tlas_instance`].
#[derive(Debug)]
pub struct AccelerationStructureInstances<'a, B: ?Sized> {
    /// The buffer (`None` for size queries).
    pub buffer: Option<&'a B>,
    /// Offset of the first record, a multiple of 16.
    pub offset: u64,
    /// Number of instances.
    pub count: u32,
}

/// What an acceleration structure is built from.
#[derive(Debug)]
pub enum AccelerationStructureEntries<'a, B: ?Sized> {
    /// Bottom level: triangle geometries.
    Triangles(&'a [AccelerationStructureTriangles<'a, B>]),
    /// Bottom level: box geometries.
    Aabbs(&'a [AccelerationStructureAabbs<'a, B>]),
    /// Top level.
    Instances(AccelerationStructureInstances<'a, B>),
}

/// Asks how large a structure and its scratch buffers must be.
#[derive(Debug)]
pub struct GetAccelerationStructureBuildSizesDescriptor<'a, R: Resources + ?Sized> {
    /// The geometry (buffers may be `None`).
    pub entries: &'a AccelerationStructureEntries<'a, R::Buffer>,
    /// Build flags (they change the sizes).
    pub flags: wgt::AccelerationStructureFlags,
}

/// Sizes for one build.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccelerationStructureBuildSizes {
    /// Size of the structure.
    pub acceleration_structure_size: u64,
    /// Scratch bytes for an update (refit).
    pub update_scratch_size: u64,
    /// Scratch bytes for a full build.
    pub build_scratch_size: u64,
}

/// Build from scratch, or refit a structure built with `ALLOW_UPDATE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccelerationStructureBuildMode {
    /// A full build.
    Build,
    /// A refit of `source` (same geometry counts, new positions/transforms).
    Update,
}

/// One build or update.
#[derive(Debug)]
pub struct BuildAccelerationStructureDescriptor<'a, R: Resources + ?Sized> {
    /// The geometry; every buffer must be `Some`.
    pub entries: &'a AccelerationStructureEntries<'a, R::Buffer>,
    /// Build or update.
    pub mode: AccelerationStructureBuildMode,
    /// The flags the sizes were queried with.
    pub flags: wgt::AccelerationStructureFlags,
    /// For `Update`: the structure refitted (may equal `destination`).
    pub source_acceleration_structure: Option<&'a R::AccelerationStructure>,
    /// The structure written.
    pub destination_acceleration_structure: &'a R::AccelerationStructure,
    /// Scratch memory (`ACCELERATION_STRUCTURE_SCRATCH`-capable buffer: usage
    /// `STORAGE` or `BLAS_INPUT`; the hal adds what Vulkan needs).
    pub scratch_buffer: &'a R::Buffer,
    /// Offset in the scratch buffer, aligned to
    /// `min_acceleration_structure_scratch_offset_alignment`.
    pub scratch_buffer_offset: u64,
}

bitflags::bitflags! {
    /// How an acceleration structure is being used, for barriers.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct AccelerationStructureUses: u8 {
        /// Read by a build (a BLAS referenced by a TLAS build, or an update's source).
        const BUILD_INPUT = 1 << 0;
        /// Written by a build, update or copy.
        const BUILD_OUTPUT = 1 << 1;
        /// Traced by shaders (ray queries or pipelines).
        const SHADER_INPUT = 1 << 2;
        /// Read by a copy or a compacted-size query.
        const COPY_SRC = 1 << 3;
    }
}

/// A barrier between uses of acceleration structures. It names the
/// structures it orders; Vulkan orders all of them at once (a memory
/// barrier), other backends may use the list.
#[derive(Debug)]
pub struct AccelerationStructureBarrier<'a, AS: ?Sized> {
    /// The structures ordered.
    pub structures: &'a [&'a AS],
    /// Their usage change.
    pub usage: crate::StateTransition<AccelerationStructureUses>,
}

/// How `copy_acceleration_structure` copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccelerationStructureCopy {
    /// An exact copy; the destination is as large as the source.
    Clone,
    /// A compacted copy; the source was built with `ALLOW_COMPACTION` and the
    /// destination is at least its compacted size.
    Compact,
}

/// Bytes of one encoded top-level instance.
pub const TLAS_INSTANCE_SIZE: usize = 64;

/// One instance of a top-level structure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TlasInstance {
    /// Row-major 3×4 object-to-world transform.
    pub transform: [f32; 12],
    /// Value of the instance's custom index in shaders (24 bits).
    pub custom_index: u32,
    /// Visibility mask, ANDed with the ray's cull mask.
    pub mask: u8,
    /// Offset added to the hit group index in the shader binding table (24 bits).
    pub sbt_record_offset: u32,
    /// `TlasInstanceFlags` bits.
    pub flags: TlasInstanceFlags,
    /// The BLAS: its [`crate::Device::get_acceleration_structure_device_address`].
    pub blas_address: u64,
}

bitflags::bitflags! {
    /// Per-instance flags.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct TlasInstanceFlags: u8 {
        /// Disable face culling for this instance.
        const TRIANGLE_CULL_DISABLE = 1 << 0;
        /// Counter-clockwise triangles are front-facing.
        const TRIANGLE_FRONT_COUNTERCLOCKWISE = 1 << 1;
        /// Treat all geometry as opaque.
        const FORCE_OPAQUE = 1 << 2;
        /// Treat all geometry as non-opaque.
        const FORCE_NO_OPAQUE = 1 << 3;
    }
}

/// Encodes an instance into the 64-byte record every backend consumes.
///
/// The layout is `VkAccelerationStructureInstanceKHR`: bytes 0..48 the
/// row-major 3×4 transform (`f32`, little-endian), 48..52
/// `custom_index | mask << 24`, 52..56 `sbt_record_offset | flags << 24`,
/// 56..64 the BLAS device address. `custom_index` and `sbt_record_offset`
/// are truncated to 24 bits.
pub fn encode_tlas_instance(instance: &TlasInstance) -> [u8; TLAS_INSTANCE_SIZE] {
    let mut out = [0u8; TLAS_INSTANCE_SIZE];
    for (chunk, value) in out.chunks_exact_mut(4).zip(instance.transform) {
        chunk.copy_from_slice(&value.to_le_bytes());
    }
    let a = (instance.custom_index & 0x00ff_ffff) | (u32::from(instance.mask) << 24);
    let b = (instance.sbt_record_offset & 0x00ff_ffff) | (u32::from(instance.flags.bits()) << 24);
    out[48..52].copy_from_slice(&a.to_le_bytes());
    out[52..56].copy_from_slice(&b.to_le_bytes());
    out[56..64].copy_from_slice(&instance.blas_address.to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_encoding_matches_the_vulkan_layout() {
        let mut transform = [0.0f32; 12];
        transform[0] = 1.0;
        transform[3] = 2.5;
        let bytes = encode_tlas_instance(&TlasInstance {
            transform,
            custom_index: 0x0123_4567,
            mask: 0xab,
            sbt_record_offset: 7,
            flags: TlasInstanceFlags::FORCE_OPAQUE,
            blas_address: 0x1122_3344_5566_7788,
        });
        assert_eq!(&bytes[0..4], &1.0f32.to_le_bytes());
        assert_eq!(&bytes[12..16], &2.5f32.to_le_bytes());
        assert_eq!(&bytes[48..52], &0xab23_4567u32.to_le_bytes());
        assert_eq!(&bytes[52..56], &(7u32 | 4 << 24).to_le_bytes());
        assert_eq!(&bytes[56..64], &0x1122_3344_5566_7788u64.to_le_bytes());
    }
}
