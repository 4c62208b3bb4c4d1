//! Usage states → synchronization2 scopes and image layouts.
//!
//! The hal's barriers name *usage states* ([`BufferUses`], [`TextureUses`]);
//! Vulkan wants pipeline stages, access masks and, for images, a layout.
//! This file is the one table between the two. A state with several flags
//! takes the union of their stages and accesses.
//!
//! Rules the encoder builds on:
//! * the empty buffer state has no stage and no access (`NONE`): nothing
//!   earlier needs to finish; [`TextureUses::UNINITIALIZED`] and
//!   [`TextureUses::PRESENT`] have no access but the `ALL_COMMANDS` stage, so a
//!   swapchain image's layout change waits for its acquire semaphore;
//! * only *writes* need to be made available, so a barrier's source access
//!   is the [`writes`] among the old state's accesses;
//! * a read-only → read-only change with the same layout orders nothing
//!   ([`buffer_needs_barrier`], [`texture_needs_barrier`]).
//!
//! Shader stages are `PRE_RASTERIZATION_SHADERS | FRAGMENT_SHADER |
//! COMPUTE_SHADER` (valid without the geometry/tessellation/mesh
//! features), plus `RAY_TRACING_SHADER_KHR` on a device with ray-tracing
//! pipelines, where alone that stage is valid ([`shader_stages`]).
//! Acceleration structures are read in shaders only in the stages the
//! device's enabled features allow ([`acceleration_structure_read_stages`]).
//! [`TextureUses::PRESENT`] maps to `PRESENT_SRC_KHR`, which is only valid on
//! a device with `VK_KHR_swapchain` enabled; elsewhere (nobody can present
//! there) it maps to `GENERAL`. Layout functions take that as `swapchain`.

use ash::vk;

use crate::{BufferUses, HalFeatures, TextureUses};

/// The shader stages of graphics and compute pipelines, as sync2 stage bits.
const RASTER_AND_COMPUTE_SHADERS: vk::PipelineStageFlags2 = vk::PipelineStageFlags2::from_raw(
    vk::PipelineStageFlags2::PRE_RASTERIZATION_SHADERS.as_raw()
        | vk::PipelineStageFlags2::FRAGMENT_SHADER.as_raw()
        | vk::PipelineStageFlags2::COMPUTE_SHADER.as_raw(),
);

/// Every shader stage a keel-hal pipeline may run on a device, as sync2
/// stage bits: ray-tracing shaders too when `ray_tracing` (the device
/// enabled ray-tracing pipelines; the stage is invalid elsewhere).
pub(super) fn shader_stages(ray_tracing: bool) -> vk::PipelineStageFlags2 {
    if ray_tracing {
        RASTER_AND_COMPUTE_SHADERS | vk::PipelineStageFlags2::RAY_TRACING_SHADER_KHR
    } else {
        RASTER_AND_COMPUTE_SHADERS
    }
}

/// The shader stages that may read acceleration structures
/// (`ACCELERATION_STRUCTURE_READ_KHR`) on a device with the `enabled`
/// features: ray-tracing shaders where ray-tracing pipelines are enabled,
/// raster and compute shaders where ray queries are, nothing on a device
/// with neither (no shader there can name an acceleration structure).
///
/// Without the `rayQuery` feature, no shader stage but
/// `RAY_TRACING_SHADER_KHR` may go with that access
/// (`VUID-VkMemoryBarrier2-dstAccessMask-06256`): NVIDIA drivers have
/// ray-tracing pipelines without ray queries.
pub(super) fn acceleration_structure_read_stages(enabled: HalFeatures) -> vk::PipelineStageFlags2 {
    let mut stages = vk::PipelineStageFlags2::NONE;
    if enabled.contains(HalFeatures::RAY_TRACING_PIPELINE) {
        stages |= vk::PipelineStageFlags2::RAY_TRACING_SHADER_KHR;
    }
    if enabled.contains(HalFeatures::RAY_QUERY) {
        stages |= RASTER_AND_COMPUTE_SHADERS;
    }
    stages
}

/// Depth/stencil tests happen in both fragment-test stages.
const FRAGMENT_TESTS: vk::PipelineStageFlags2 = vk::PipelineStageFlags2::from_raw(
    vk::PipelineStageFlags2::EARLY_FRAGMENT_TESTS.as_raw()
        | vk::PipelineStageFlags2::LATE_FRAGMENT_TESTS.as_raw(),
);

/// The buffer states that write.
const BUFFER_WRITES: BufferUses = BufferUses::MAP_WRITE
    .union(BufferUses::COPY_DST)
    .union(BufferUses::STORAGE_READ_WRITE)
    .union(BufferUses::QUERY_RESOLVE);

/// The texture states that write (or, for `UNINITIALIZED`, discard).
const TEXTURE_WRITES: TextureUses = TextureUses::UNINITIALIZED
    .union(TextureUses::COPY_DST)
    .union(TextureUses::COLOR_TARGET)
    .union(TextureUses::DEPTH_STENCIL_WRITE)
    .union(TextureUses::STORAGE_READ_WRITE);

/// Every write access the tables above produce.
const WRITE_ACCESS: vk::AccessFlags2 = vk::AccessFlags2::from_raw(
    vk::AccessFlags2::HOST_WRITE.as_raw()
        | vk::AccessFlags2::TRANSFER_WRITE.as_raw()
        | vk::AccessFlags2::SHADER_STORAGE_WRITE.as_raw()
        | vk::AccessFlags2::COLOR_ATTACHMENT_WRITE.as_raw()
        | vk::AccessFlags2::DEPTH_STENCIL_ATTACHMENT_WRITE.as_raw(),
);

/// Stage and access of one buffer state flag; `shaders` is the device's
/// [`shader_stages`].
fn buffer_flag_scope(
    flag: BufferUses,
    shaders: vk::PipelineStageFlags2,
) -> (vk::PipelineStageFlags2, vk::AccessFlags2) {
    use vk::AccessFlags2 as A;
    use vk::PipelineStageFlags2 as S;
    match flag {
        BufferUses::MAP_READ => (S::HOST, A::HOST_READ),
        BufferUses::MAP_WRITE => (S::HOST, A::HOST_WRITE),
        BufferUses::COPY_SRC => (S::ALL_TRANSFER, A::TRANSFER_READ),
        BufferUses::COPY_DST | BufferUses::QUERY_RESOLVE => (S::ALL_TRANSFER, A::TRANSFER_WRITE),
        BufferUses::INDEX => (S::INDEX_INPUT, A::INDEX_READ),
        BufferUses::VERTEX => (S::VERTEX_ATTRIBUTE_INPUT, A::VERTEX_ATTRIBUTE_READ),
        BufferUses::UNIFORM => (shaders, A::UNIFORM_READ),
        BufferUses::STORAGE_READ_ONLY => (shaders, A::SHADER_STORAGE_READ),
        BufferUses::STORAGE_READ_WRITE => {
            (shaders, A::SHADER_STORAGE_READ | A::SHADER_STORAGE_WRITE)
        }
        BufferUses::INDIRECT => (S::DRAW_INDIRECT, A::INDIRECT_COMMAND_READ),
        // Builds read their inputs as shader reads in the build stage.
        BufferUses::ACCELERATION_STRUCTURE_INPUT => {
            (S::ACCELERATION_STRUCTURE_BUILD_KHR, A::SHADER_READ)
        }
        // Unknown bits (none today) order nothing.
        _ => (S::NONE, A::NONE),
    }
}

/// Stage and access of one texture state flag; `shaders` is the device's
/// [`shader_stages`].
fn texture_flag_scope(
    flag: TextureUses,
    shaders: vk::PipelineStageFlags2,
) -> (vk::PipelineStageFlags2, vk::AccessFlags2) {
    use vk::AccessFlags2 as A;
    use vk::PipelineStageFlags2 as S;
    match flag {
        TextureUses::COPY_SRC => (S::ALL_TRANSFER, A::TRANSFER_READ),
        TextureUses::COPY_DST => (S::ALL_TRANSFER, A::TRANSFER_WRITE),
        TextureUses::RESOURCE => (shaders, A::SHADER_SAMPLED_READ),
        TextureUses::COLOR_TARGET => (
            S::COLOR_ATTACHMENT_OUTPUT,
            A::COLOR_ATTACHMENT_READ | A::COLOR_ATTACHMENT_WRITE,
        ),
        TextureUses::DEPTH_STENCIL_READ => (FRAGMENT_TESTS, A::DEPTH_STENCIL_ATTACHMENT_READ),
        TextureUses::DEPTH_STENCIL_WRITE => (
            FRAGMENT_TESTS,
            A::DEPTH_STENCIL_ATTACHMENT_READ | A::DEPTH_STENCIL_ATTACHMENT_WRITE,
        ),
        TextureUses::STORAGE_READ_ONLY => (shaders, A::SHADER_STORAGE_READ),
        TextureUses::STORAGE_READ_WRITE => {
            (shaders, A::SHADER_STORAGE_READ | A::SHADER_STORAGE_WRITE)
        }
        // UNINITIALIZED and PRESENT: no access to make available, but the
        // stage is ALL_COMMANDS so that the layout change chains after a
        // semaphore wait of the same submit, whatever stage that wait names
        // (a swapchain image is only ready once its acquire semaphore
        // signals). As a destination it orders nothing that matters: present
        // is ordered by the submit's signal semaphore.
        _ => (S::ALL_COMMANDS, A::NONE),
    }
}

/// The stages and accesses of a buffer state (the union over its flags);
/// `shaders` is the device's [`shader_stages`].
pub(super) fn buffer_scope(
    usage: BufferUses,
    shaders: vk::PipelineStageFlags2,
) -> (vk::PipelineStageFlags2, vk::AccessFlags2) {
    // Bit by bit (every buffer state flag is one bit): bitflags' `iter`
    // walks the whole list of named flags, which every barrier of every
    // dispatch paid for twice.
    let mut scope = (vk::PipelineStageFlags2::NONE, vk::AccessFlags2::NONE);
    let mut bits = usage.bits();
    while bits != 0 {
        let bit = bits & bits.wrapping_neg();
        bits &= bits - 1;
        let (stage, access) = buffer_flag_scope(BufferUses::from_bits_retain(bit), shaders);
        scope = (scope.0 | stage, scope.1 | access);
    }
    scope
}

/// The stages and accesses of a texture state (the union over its flags);
/// `shaders` is the device's [`shader_stages`].
pub(super) fn texture_scope(
    usage: TextureUses,
    shaders: vk::PipelineStageFlags2,
) -> (vk::PipelineStageFlags2, vk::AccessFlags2) {
    usage.iter().map(|f| texture_flag_scope(f, shaders)).fold(
        (vk::PipelineStageFlags2::NONE, vk::AccessFlags2::NONE),
        |acc, s| (acc.0 | s.0, acc.1 | s.1),
    )
}

/// The writes among `access`: what a barrier out of a state must make
/// available (making reads available means nothing).
pub(super) fn writes(access: vk::AccessFlags2) -> vk::AccessFlags2 {
    access & WRITE_ACCESS
}

/// The image layout a texture state puts the texture in.
///
/// A single state has its optimal layout; sampling while bound as a
/// read-only depth attachment shares `DEPTH_STENCIL_READ_ONLY_OPTIMAL`;
/// storage and other mixtures use `GENERAL`. `PRESENT` is
/// `PRESENT_SRC_KHR` only when `swapchain` (the device enabled
/// `VK_KHR_swapchain`), else `GENERAL`.
pub(super) fn texture_layout(usage: TextureUses, swapchain: bool) -> vk::ImageLayout {
    use vk::ImageLayout as L;
    const DEPTH_READ: TextureUses = TextureUses::DEPTH_STENCIL_READ.union(TextureUses::RESOURCE);
    match usage {
        TextureUses::UNINITIALIZED => L::UNDEFINED,
        TextureUses::PRESENT if swapchain => L::PRESENT_SRC_KHR,
        TextureUses::COPY_SRC => L::TRANSFER_SRC_OPTIMAL,
        TextureUses::COPY_DST => L::TRANSFER_DST_OPTIMAL,
        TextureUses::RESOURCE => L::SHADER_READ_ONLY_OPTIMAL,
        TextureUses::COLOR_TARGET => L::COLOR_ATTACHMENT_OPTIMAL,
        TextureUses::DEPTH_STENCIL_WRITE => L::DEPTH_STENCIL_ATTACHMENT_OPTIMAL,
        TextureUses::DEPTH_STENCIL_READ | DEPTH_READ => L::DEPTH_STENCIL_READ_ONLY_OPTIMAL,
        _ => L::GENERAL,
    }
}

/// Whether a buffer transition orders anything. Out of the empty state
/// (no earlier GPU access; host writes before the submit are visible through
/// the submit itself) and between read-only states it does not.
pub(super) fn buffer_needs_barrier(from: BufferUses, to: BufferUses) -> bool {
    !from.is_empty() && (from.intersects(BUFFER_WRITES) || to.intersects(BUFFER_WRITES))
}

/// Whether a texture transition orders anything or changes the layout.
/// Between read-only states with the same layout it does neither.
///
/// A transition *to* `UNINITIALIZED` is not one Vulkan can express (no
/// image may be moved to `UNDEFINED`) and is skipped: `UNINITIALIZED` is the
/// state of new textures. To discard a used texture's contents, transition
/// from its real state to the next usage.
pub(super) fn texture_needs_barrier(from: TextureUses, to: TextureUses, swapchain: bool) -> bool {
    if to.contains(TextureUses::UNINITIALIZED) {
        return false;
    }
    from.intersects(TEXTURE_WRITES)
        || to.intersects(TEXTURE_WRITES)
        || texture_layout(from, swapchain) != texture_layout(to, swapchain)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_resources_have_no_source_access() {
        assert_eq!(
            buffer_scope(BufferUses::empty(), RASTER_AND_COMPUTE_SHADERS),
            (vk::PipelineStageFlags2::NONE, vk::AccessFlags2::NONE)
        );
        // ALL_COMMANDS chains the layout change after any acquire-semaphore wait.
        assert_eq!(
            texture_scope(TextureUses::UNINITIALIZED, RASTER_AND_COMPUTE_SHADERS),
            (
                vk::PipelineStageFlags2::ALL_COMMANDS,
                vk::AccessFlags2::NONE
            )
        );
        assert_eq!(
            texture_layout(TextureUses::UNINITIALIZED, false),
            vk::ImageLayout::UNDEFINED
        );
        assert!(!buffer_needs_barrier(
            BufferUses::empty(),
            BufferUses::COPY_DST
        ));
        assert!(texture_needs_barrier(
            TextureUses::UNINITIALIZED,
            TextureUses::COPY_DST,
            false
        ));
    }

    #[test]
    fn reads_need_no_barrier_writes_do() {
        use BufferUses as B;
        assert!(!buffer_needs_barrier(B::UNIFORM, B::UNIFORM));
        assert!(!buffer_needs_barrier(B::VERTEX, B::INDEX | B::UNIFORM));
        assert!(buffer_needs_barrier(B::COPY_DST, B::COPY_DST));
        assert!(buffer_needs_barrier(B::UNIFORM, B::STORAGE_READ_WRITE));
        use TextureUses as T;
        assert!(!texture_needs_barrier(T::RESOURCE, T::RESOURCE, false));
        assert!(texture_needs_barrier(T::RESOURCE, T::COPY_SRC, false));
        assert!(texture_needs_barrier(
            T::STORAGE_READ_WRITE,
            T::STORAGE_READ_WRITE,
            false
        ));
        assert!(!texture_needs_barrier(T::COPY_DST, T::UNINITIALIZED, false));
    }

    #[test]
    fn scopes_union_and_writes_mask() {
        let (stage, access) = buffer_scope(
            BufferUses::COPY_SRC | BufferUses::INDEX,
            RASTER_AND_COMPUTE_SHADERS,
        );
        assert_eq!(
            stage,
            vk::PipelineStageFlags2::ALL_TRANSFER | vk::PipelineStageFlags2::INDEX_INPUT
        );
        assert_eq!(
            access,
            vk::AccessFlags2::TRANSFER_READ | vk::AccessFlags2::INDEX_READ
        );
        assert_eq!(writes(access), vk::AccessFlags2::NONE);
        let (_, access) = texture_scope(
            TextureUses::STORAGE_READ_WRITE | TextureUses::RESOURCE,
            RASTER_AND_COMPUTE_SHADERS,
        );
        assert_eq!(writes(access), vk::AccessFlags2::SHADER_STORAGE_WRITE);
    }

    #[test]
    fn layouts() {
        use vk::ImageLayout as L;
        use TextureUses as T;
        assert_eq!(texture_layout(T::COPY_DST, false), L::TRANSFER_DST_OPTIMAL);
        assert_eq!(
            texture_layout(T::RESOURCE | T::DEPTH_STENCIL_READ, false),
            L::DEPTH_STENCIL_READ_ONLY_OPTIMAL
        );
        assert_eq!(texture_layout(T::RESOURCE | T::COPY_SRC, false), L::GENERAL);
        assert_eq!(texture_layout(T::STORAGE_READ_ONLY, false), L::GENERAL);
    }

    #[test]
    fn ray_tracing_shaders_only_on_ray_tracing_devices() {
        let rt = vk::PipelineStageFlags2::RAY_TRACING_SHADER_KHR;
        assert!(!shader_stages(false).contains(rt));
        assert!(shader_stages(true).contains(rt | RASTER_AND_COMPUTE_SHADERS));
        let (stage, _) = buffer_scope(BufferUses::STORAGE_READ_WRITE, shader_stages(true));
        assert!(stage.contains(rt));
        let (stage, _) = texture_scope(TextureUses::RESOURCE, shader_stages(false));
        assert_eq!(stage, RASTER_AND_COMPUTE_SHADERS);
    }

    #[test]
    fn acceleration_structures_are_read_only_where_the_features_allow() {
        use vk::PipelineStageFlags2 as S;
        use HalFeatures as F;
        let read = acceleration_structure_read_stages;
        // NVIDIA: ray-tracing pipelines without ray queries.
        assert_eq!(
            read(F::ACCELERATION_STRUCTURE | F::RAY_TRACING_PIPELINE),
            S::RAY_TRACING_SHADER_KHR
        );
        // Ray queries alone: every raster and compute shader stage.
        assert_eq!(
            read(F::ACCELERATION_STRUCTURE | F::RAY_QUERY),
            RASTER_AND_COMPUTE_SHADERS
        );
        assert_eq!(
            read(F::ACCELERATION_STRUCTURE | F::RAY_QUERY | F::RAY_TRACING_PIPELINE),
            RASTER_AND_COMPUTE_SHADERS | S::RAY_TRACING_SHADER_KHR
        );
        // Neither: no shader reads acceleration structures.
        assert_eq!(read(F::ACCELERATION_STRUCTURE), S::NONE);
        assert_eq!(
            read(F::all() - F::RAY_QUERY - F::RAY_TRACING_PIPELINE),
            S::NONE
        );
    }

    #[test]
    fn present_needs_the_swapchain_extension() {
        use vk::ImageLayout as L;
        assert_eq!(
            texture_layout(TextureUses::PRESENT, true),
            L::PRESENT_SRC_KHR
        );
        assert_eq!(texture_layout(TextureUses::PRESENT, false), L::GENERAL);
    }
}
