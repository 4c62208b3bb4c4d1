//! Live-object counters, kept by every backend on every create and destroy.

use std::sync::atomic::{AtomicIsize, Ordering};

/// Counts of live objects of one device, as a plain value to compare in tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LiveCounts {
    /// Buffers.
    pub buffers: isize,
    /// Textures.
    pub textures: isize,
    /// Texture views.
    pub texture_views: isize,
    /// Samplers.
    pub samplers: isize,
    /// Query sets.
    pub query_sets: isize,
    /// Fences.
    pub fences: isize,
    /// Command encoders.
    pub command_encoders: isize,
    /// Shader modules.
    pub shader_modules: isize,
    /// Render pipelines.
    pub render_pipelines: isize,
    /// Compute pipelines.
    pub compute_pipelines: isize,
    /// Ray-tracing pipelines.
    pub ray_tracing_pipelines: isize,
    /// Pipeline caches.
    pub pipeline_caches: isize,
    /// Bind group layouts.
    pub bind_group_layouts: isize,
    /// Bind groups.
    pub bind_groups: isize,
    /// Pipeline layouts.
    pub pipeline_layouts: isize,
    /// Live memory allocations handed out by the backend's memory layer: one per
    /// buffer or texture (Vulkan: VMA allocations, which sub-allocate `VkDeviceMemory`
    /// blocks; VMA may keep an emptied block, which this does not count; external
    /// memory is one dedicated allocation each).
    pub memory_allocations: isize,
    /// Query pools the backend uses for compacted-size reads of acceleration
    /// structures (Vulkan: shared `ACCELERATION_STRUCTURE_COMPACTED_SIZE_KHR`
    /// pools with at least one slot in use; a few idle ones are kept for the
    /// next reads, uncounted, until [`crate::Device::trim_memory`]; 0 where
    /// a backend has none).
    pub compaction_query_pools: isize,
    /// External semaphores.
    pub external_semaphores: isize,
}

/// The atomic counters a backend's device keeps.
#[derive(Debug, Default)]
pub struct HalCounters {
    /// Buffers.
    pub buffers: Counter,
    /// Textures.
    pub textures: Counter,
    /// Texture views.
    pub texture_views: Counter,
    /// Samplers.
    pub samplers: Counter,
    /// Query sets.
    pub query_sets: Counter,
    /// Fences.
    pub fences: Counter,
    /// Command encoders.
    pub command_encoders: Counter,
    /// Shader modules.
    pub shader_modules: Counter,
    /// Render pipelines.
    pub render_pipelines: Counter,
    /// Compute pipelines.
    pub compute_pipelines: Counter,
    /// Ray-tracing pipelines.
    pub ray_tracing_pipelines: Counter,
    /// Pipeline caches.
    pub pipeline_caches: Counter,
    /// Bind group layouts.
    pub bind_group_layouts: Counter,
    /// Bind groups.
    pub bind_groups: Counter,
    /// Pipeline layouts.
    pub pipeline_layouts: Counter,
    /// Backend memory allocations.
    pub memory_allocations: Counter,
    /// Compacted-size query pools.
    pub compaction_query_pools: Counter,
    /// External semaphores.
    pub external_semaphores: Counter,
}

impl HalCounters {
    /// A snapshot of every counter.
    pub fn snapshot(&self) -> LiveCounts {
        LiveCounts {
            buffers: self.buffers.read(),
            textures: self.textures.read(),
            texture_views: self.texture_views.read(),
            samplers: self.samplers.read(),
            query_sets: self.query_sets.read(),
            fences: self.fences.read(),
            command_encoders: self.command_encoders.read(),
            shader_modules: self.shader_modules.read(),
            render_pipelines: self.render_pipelines.read(),
            compute_pipelines: self.compute_pipelines.read(),
            ray_tracing_pipelines: self.ray_tracing_pipelines.read(),
            pipeline_caches: self.pipeline_caches.read(),
            bind_group_layouts: self.bind_group_layouts.read(),
            bind_groups: self.bind_groups.read(),
            pipeline_layouts: self.pipeline_layouts.read(),
            memory_allocations: self.memory_allocations.read(),
            compaction_query_pools: self.compaction_query_pools.read(),
            external_semaphores: self.external_semaphores.read(),
        }
    }
}

/// One relaxed atomic counter.
#[derive(Debug, Default)]
pub struct Counter(AtomicIsize);

impl Counter {
    /// One more live object.
    #[inline]
    pub fn add(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
    /// One fewer live object.
    #[inline]
    pub fn sub(&self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
    /// Current value.
    pub fn read(&self) -> isize {
        self.0.load(Ordering::Relaxed)
    }
}
