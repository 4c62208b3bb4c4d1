//! The objects wgpu holds: one newtype per wgpu object around keel-wgpu's
//! shared state, implementing wgpu's `custom` interface traits.

use std::ops::Range;
use std::ptr::NonNull;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use wgpu::custom::{self as cu, DispatchBindGroupLayout, DispatchBufferMappedRange};

use crate::binding::{BindGroup, BindGroupLayout, PipelineLayout};
use crate::command::{CommandBuffer, RenderBundle};
use crate::error::KeelError;
use crate::pipeline::{ComputePipeline, PipelineCache, RenderPipeline, ShaderModule};
use crate::resource::{Buffer, MapState, MappedRange, QuerySet, Sampler, Texture, TextureView};

macro_rules! handles {
    ($($(#[$doc:meta])* $name:ident($inner:ty);)*) => {$(
        $(#[$doc])*
        #[derive(Debug)]
        pub(crate) struct $name(pub(crate) $inner);
    )*};
}

handles! {
    /// A `wgpu::Buffer`.
    KBuffer(Arc<Buffer>);
    /// A `wgpu::Texture`.
    KTexture(Arc<Texture>);
    /// A `wgpu::TextureView`.
    KTextureView(Arc<TextureView>);
    /// A `wgpu::Sampler`.
    KSampler(Arc<Sampler>);
    /// A `wgpu::QuerySet`.
    KQuerySet(Arc<QuerySet>);
    /// A `wgpu::BindGroupLayout`.
    KBindGroupLayout(Arc<BindGroupLayout>);
    /// A `wgpu::BindGroup`.
    KBindGroup(Arc<BindGroup>);
    /// A `wgpu::PipelineLayout`.
    KPipelineLayout(Arc<PipelineLayout>);
    /// A `wgpu::ShaderModule`.
    KShaderModule(Arc<ShaderModule>);
    /// A `wgpu::ComputePipeline`.
    KComputePipeline(Arc<ComputePipeline>);
    /// A `wgpu::RenderPipeline`.
    KRenderPipeline(Arc<RenderPipeline>);
    /// A `wgpu::CommandBuffer`.
    KCommandBuffer(CommandBuffer);
    /// A `wgpu::RenderBundle`.
    KRenderBundle(Arc<RenderBundle>);
    /// A mapped range of a `wgpu::Buffer`.
    KMappedRange(MappedRange);
    /// A `wgpu::PipelineCache`.
    KPipelineCache(Arc<PipelineCache>);
}

/// An object of a kind keel-wgpu does not provide (acceleration
/// structures, external textures); creating one reports a validation error
/// and returns this.
#[derive(Debug)]
pub(crate) struct Unsupported;

impl cu::BindGroupLayoutInterface for KBindGroupLayout {}
impl cu::BindGroupInterface for KBindGroup {}
impl cu::TextureViewInterface for KTextureView {}
impl cu::SamplerInterface for KSampler {}
impl cu::PipelineLayoutInterface for KPipelineLayout {}
impl cu::CommandBufferInterface for KCommandBuffer {}
impl cu::RenderBundleInterface for KRenderBundle {}
impl cu::TlasInterface for Unsupported {}

impl cu::BlasInterface for Unsupported {
    fn prepare_compact_async(&self, callback: cu::BlasCompactCallback) {
        callback(Err(wgpu::BlasAsyncError));
    }
    fn ready_for_compaction(&self) -> bool {
        false
    }
}

impl cu::PipelineCacheInterface for KPipelineCache {
    fn get_data(&self) -> Option<Vec<u8>> {
        let cache = &self.0;
        let raw = cache.raw.as_deref()?;
        // SAFETY: the cache came from this device and is alive.
        match unsafe { cache.shared.hal().pipeline_cache_get_data(raw) } {
            Ok(data) => Some(data),
            Err(e) => {
                cache
                    .shared
                    .report(KeelError::from_hal("PipelineCache::get_data", &e));
                None
            }
        }
    }
}

impl cu::ExternalTextureInterface for Unsupported {
    fn destroy(&self) {}
}

impl cu::QuerySetInterface for KQuerySet {
    /// Marks the set destroyed: a submit that uses it fails (wgpu-core's
    /// `QuerySet::destroy`; the keel-hal set goes with the last reference,
    /// so nothing submitted before reads a freed set).
    fn destroy(&self) {
        self.0.destroyed.store(true, Ordering::Release);
    }
}

impl cu::ShaderModuleInterface for KShaderModule {
    fn get_compilation_info(&self) -> std::pin::Pin<Box<dyn cu::ShaderCompilationInfoFuture>> {
        let messages = self
            .0
            .messages
            .iter()
            .map(|m| wgpu::CompilationMessage {
                message: m.clone(),
                message_type: wgpu::CompilationMessageType::Error,
                location: None,
            })
            .collect();
        Box::pin(std::future::ready(wgpu::CompilationInfo { messages }))
    }
}

/// `get_bind_group_layout` of an invalid pipeline (wgpu-core's
/// `GetBindGroupLayoutError::InvalidResource`): the error, and an invalid
/// layout.
fn invalid_pipeline_group(
    shared: &Arc<crate::shared::DeviceShared>,
    pipeline: String,
) -> DispatchBindGroupLayout {
    shared.report(KeelError::validation(
        "get_bind_group_layout",
        format!("{pipeline} is invalid"),
    ));
    DispatchBindGroupLayout::custom(KBindGroupLayout(Arc::new(BindGroupLayout {
        shared: shared.clone(),
        raw: None,
        entries: Vec::new(),
        last_use: Default::default(),
        exclusive: Some(crate::binding::exclusive_id()),
    })))
}

fn derived_group(layout: Option<&Arc<PipelineLayout>>, index: u32) -> DispatchBindGroupLayout {
    let group = layout.and_then(|l| l.groups.get(index as usize).cloned());
    match group {
        Some(group) => DispatchBindGroupLayout::custom(KBindGroupLayout(group)),
        None => {
            let Some(layout) = layout else {
                return DispatchBindGroupLayout::custom(Unsupported);
            };
            let shared = &layout.shared;
            let max = shared.limits.max_bind_groups;
            // As wgpu-core: an index under max_bind_groups that the layout
            // lacks gets an empty layout of the pipeline's own.
            let raw = if index >= max {
                shared.report(KeelError::validation(
                    "get_bind_group_layout",
                    format!(
                        "Bind group layout index {index} is greater than the device's \
                         configured `max_bind_groups` limit {max}"
                    ),
                ));
                None
            } else {
                let desc = keel_hal::BindGroupLayoutDescriptor {
                    label: None,
                    flags: keel_hal::BindGroupLayoutFlags::empty(),
                    entries: &[],
                };
                // SAFETY: a plain creation on a live device.
                match unsafe { shared.hal().create_bind_group_layout(&desc) } {
                    Ok(raw) => Some(raw),
                    Err(e) => {
                        shared.report(KeelError::from_hal("get_bind_group_layout", &e));
                        None
                    }
                }
            };
            DispatchBindGroupLayout::custom(KBindGroupLayout(Arc::new(BindGroupLayout {
                shared: shared.clone(),
                raw,
                entries: Vec::new(),
                last_use: Default::default(),
                exclusive: Some(crate::binding::exclusive_id()),
            })))
        }
    }
}

impl cu::BindGroupLayoutInterface for Unsupported {}

impl cu::ComputePipelineInterface for KComputePipeline {
    fn get_bind_group_layout(&self, index: u32) -> DispatchBindGroupLayout {
        let p = &self.0;
        if p.raw.is_none() {
            return invalid_pipeline_group(
                &p.shared,
                format!("ComputePipeline with '{}' label", p.label),
            );
        }
        derived_group(p.layout.as_ref(), index)
    }
}

impl cu::RenderPipelineInterface for KRenderPipeline {
    fn get_bind_group_layout(&self, index: u32) -> DispatchBindGroupLayout {
        let p = &self.0;
        if p.raw.is_none() {
            return invalid_pipeline_group(&p.shared, p.ident());
        }
        derived_group(p.layout.as_ref(), index)
    }
}

impl cu::BufferInterface for KBuffer {
    fn map_async(
        &self,
        mode: wgpu::MapMode,
        range: Range<wgpu::BufferAddress>,
        callback: cu::BufferMapCallback,
    ) {
        let buffer = &self.0;
        buffer.map_asked.store(true, Ordering::Release);
        let needed = match mode {
            wgpu::MapMode::Read => wgpu::BufferUsages::MAP_READ,
            wgpu::MapMode::Write => wgpu::BufferUsages::MAP_WRITE,
        };
        let problem = if buffer.raw.is_none() {
            Some(format!("{} is invalid", buffer.ident()))
        } else if buffer.destroyed.load(Ordering::Acquire) {
            Some(format!("{} has been destroyed", buffer.ident()))
        } else if !buffer.usage.contains(needed) {
            Some(format!(
                "mapping for {mode:?} needs usage {needed:?}; the buffer has {:?}",
                buffer.usage
            ))
        } else if range.start > range.end || range.end > buffer.size {
            Some(format!(
                "range {range:?} is outside the buffer's {} bytes",
                buffer.size
            ))
        } else if !range.start.is_multiple_of(wgpu::MAP_ALIGNMENT)
            || !(range.end - range.start).is_multiple_of(4)
        {
            Some(format!(
                "range {range:?}: the start must be a multiple of {} and the size of 4",
                wgpu::MAP_ALIGNMENT
            ))
        } else {
            None
        };
        if let Some(problem) = problem {
            buffer
                .shared
                .report(KeelError::validation("map_async", problem));
            callback(Err(wgpu::BufferAsyncError));
            return;
        }
        {
            let mut map = buffer.map.lock();
            if !matches!(*map, MapState::Idle) {
                drop(map);
                buffer.shared.report(KeelError::validation(
                    "map_async",
                    "the buffer is already mapped or a mapping is pending",
                ));
                callback(Err(wgpu::BufferAsyncError));
                return;
            }
            *map = MapState::Pending { range };
        }
        buffer
            .shared
            .subs
            .lock()
            .maps
            .push(crate::shared::PendingMap {
                buffer: buffer.clone(),
                callback,
            });
    }

    fn get_mapped_range(
        &self,
        sub_range: Range<wgpu::BufferAddress>,
    ) -> Result<DispatchBufferMappedRange, wgpu::MapRangeError> {
        // Stock wgpu answers a range it cannot give with `Err`, an error
        // a custom backend cannot make. Where wgpu's own bookkeeping will
        // refuse the range (nothing asked to be mapped since the last
        // unmap; a range outside the one mapped, which it knows too), an
        // empty range is enough: wgpu returns its `Err` and drops it.
        // Where it will not (a mapping pending or refused), the empty range
        // reaches the program, so a validation error says why.
        let map = self.0.map.lock();
        let MapState::Mapped { ptr, range, .. } = &*map else {
            drop(map);
            if self.0.map_asked.load(Ordering::Acquire) {
                self.0.shared.report(KeelError::validation(
                    "get_mapped_range",
                    "the buffer is not mapped: its mapping is pending or was refused",
                ));
            }
            return Ok(empty_range());
        };
        if sub_range.start < range.start
            || sub_range.end > range.end
            || sub_range.start > sub_range.end
        {
            return Ok(empty_range());
        }
        // wgpu-core's `get_mapped_range` checks first (`DestroyedResource`,
        // `UnalignedOffset`, `UnalignedRangeSize`). Its `Err` cannot be
        // made here (wgpu's front end accepts this range): a validation
        // error and an empty range instead.
        if let Err(e) = check_mapped_range(&self.0, &sub_range) {
            drop(map);
            self.0
                .shared
                .report(KeelError::validation("get_mapped_range", e));
            return Ok(empty_range());
        }
        let start = *ptr + sub_range.start as usize;
        let ptr = NonNull::new(start as *mut u8).unwrap_or(NonNull::dangling());
        Ok(DispatchBufferMappedRange::custom(KMappedRange(
            MappedRange {
                ptr,
                len: (sub_range.end - sub_range.start) as usize,
            },
        )))
    }

    fn unmap(&self) {
        crate::device::unmap(&self.0);
    }

    fn destroy(&self) {
        self.0.destroyed.store(true, Ordering::Release);
        let mut map = self.0.map.lock();
        if let MapState::Pending { .. } = &*map {
            *map = MapState::Idle;
        }
    }
}

/// The checks wgpu-core's `Buffer::get_mapped_range` makes before it
/// looks at the mapping: the buffer not destroyed, the offset a multiple
/// of 8, the size a multiple of 4.
fn check_mapped_range(buffer: &Buffer, range: &Range<wgpu::BufferAddress>) -> Result<(), String> {
    if buffer.destroyed.load(Ordering::Acquire) {
        return Err(format!("{} has been destroyed", buffer.ident()));
    }
    if !range.start.is_multiple_of(wgpu::MAP_ALIGNMENT) {
        return Err(format!(
            "Buffer offset invalid: offset {} must be multiple of 8",
            range.start
        ));
    }
    let size = range.end.saturating_sub(range.start);
    if !size.is_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT) {
        return Err(format!(
            "Buffer range size invalid: range_size {size} must be multiple of 4"
        ));
    }
    Ok(())
}

fn empty_range() -> DispatchBufferMappedRange {
    DispatchBufferMappedRange::custom(KMappedRange(MappedRange {
        ptr: NonNull::dangling(),
        len: 0,
    }))
}

impl cu::BufferMappedRangeInterface for KMappedRange {
    fn len(&self) -> usize {
        self.0.len
    }
    unsafe fn read_slice(&self) -> &[u8] {
        // SAFETY: the range lies in a live mapping that wgpu keeps
        // exclusive while this object exists.
        unsafe { std::slice::from_raw_parts(self.0.ptr.as_ptr(), self.0.len) }
    }
    unsafe fn write_slice(&mut self) -> wgpu::WriteOnly<'_, [u8]> {
        let slice = NonNull::slice_from_raw_parts(self.0.ptr, self.0.len);
        // SAFETY: as above; wgpu only writes through it.
        unsafe { wgpu::WriteOnly::new(slice) }
    }
}

impl cu::TextureInterface for KTexture {
    fn create_view(&self, desc: &wgpu::TextureViewDescriptor<'_>) -> cu::DispatchTextureView {
        cu::DispatchTextureView::custom(KTextureView(crate::device::create_view(&self.0, desc)))
    }
    fn destroy(&self) {
        self.0.destroyed.store(true, Ordering::Release);
    }
}
