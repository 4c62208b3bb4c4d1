//! wgpu's command encoders, compute and render passes and render bundle
//! encoders: each call becomes a recorded command that holds what it uses
//! (`command.rs`); obvious mistakes are caught here and make the command
//! buffer invalid, reported at `finish` (wgpu's rule).

use std::ops::Range;
use std::sync::Arc;

use parking_lot::Mutex;
use wgpu::custom as cu;

use crate::command::{
    Cmd, ColorRecord, CommandBuffer, ComputePassRecord, DepthRecord, DrawFamily, GroupTable,
    PassCmd, PassTimestamps, Recording, RenderBundle, RenderPassRecord, SubmitChecks, TexelBase,
};
use crate::error::KeelError;
use crate::handles::*;
use crate::owner::{owned, same_device, Handle};
use crate::pass_check::{ComputeState, ReadOnly, RenderState};
use crate::pipeline::Targets;
use crate::replay::Encoding;
use crate::resource::{Buffer, QuerySet, Texture, TextureView};
use crate::shared::DeviceShared;
use crate::transfer_check;

// Each object a command takes is resolved through `owner::owned`: a
// keel-wgpu object of the encoder's device, or the error naming which.

fn buffer(on: &Arc<DeviceShared>, b: &cu::DispatchBuffer) -> Result<Arc<Buffer>, String> {
    owned(on, b.as_custom::<KBuffer>())
}

fn wbuffer(on: &Arc<DeviceShared>, b: &wgpu::Buffer) -> Result<Arc<Buffer>, String> {
    owned(on, b.as_custom::<KBuffer>())
}

fn texture(on: &Arc<DeviceShared>, t: &wgpu::Texture) -> Result<Arc<Texture>, String> {
    owned(on, t.as_custom::<KTexture>())
}

fn view(on: &Arc<DeviceShared>, v: &wgpu::TextureView) -> Result<Arc<TextureView>, String> {
    owned(on, v.as_custom::<KTextureView>())
}

fn query_set(on: &Arc<DeviceShared>, q: &cu::DispatchQuerySet) -> Result<Arc<QuerySet>, String> {
    owned(on, q.as_custom::<KQuerySet>())
}

fn wquery_set(on: &Arc<DeviceShared>, q: &wgpu::QuerySet) -> Result<Arc<QuerySet>, String> {
    owned(on, q.as_custom::<KQuerySet>())
}

/// The query set of a pass command, with `index` checked against it.
fn pass_query(
    on: &Arc<DeviceShared>,
    set: &cu::DispatchQuerySet,
    index: u32,
) -> Result<Arc<QuerySet>, String> {
    let set = query_set(on, set)?;
    check_query(&set, index)?;
    Ok(set)
}

fn check_query(set: &QuerySet, index: u32) -> Result<(), String> {
    if index >= set.count {
        return Err(format!(
            "query {index} is outside the set's {} queries",
            set.count
        ));
    }
    Ok(())
}

/// What an encoder with an open pass says to anything else recorded on it
/// (wgpu-core's words).
const LOCKED: &str = "Encoder is locked by a previously created render/compute pass. \
     Before recording any new commands, the pass must be ended.";

/// `wgpu::CommandEncoder`.
#[derive(Debug)]
pub(crate) struct KCommandEncoder {
    shared: Arc<DeviceShared>,
    rec: Arc<Mutex<Recording>>,
}

impl KCommandEncoder {
    pub(crate) fn new(shared: &Arc<DeviceShared>) -> Self {
        Self {
            shared: shared.clone(),
            rec: Arc::new(Mutex::new(Recording::default())),
        }
    }

    /// Records `cmd`, or the error that stands for it.
    fn record(&self, what: &str, cmd: Result<Cmd, String>) {
        let mut rec = self.rec.lock();
        if rec.pass_open {
            rec.fail(format!("{what}: {LOCKED}"));
            return;
        }
        match cmd {
            Ok(Cmd::PopDebugGroup) if rec.debug_depth == 0 => rec.fail(format!(
                "{what}: Cannot pop debug group, because number of pushed debug groups is zero"
            )),
            Ok(cmd) => {
                match cmd {
                    Cmd::PushDebugGroup(_) => rec.debug_depth += 1,
                    Cmd::PopDebugGroup => rec.debug_depth -= 1,
                    _ => {}
                }
                rec.cmds.push(cmd)
            }
            Err(e) => rec.fail(format!("{what}: {e}")),
        }
    }

    fn texel(
        &self,
        info: &wgpu::TexelCopyTextureInfo<'_>,
        size: &wgpu::Extent3d,
        side: &str,
    ) -> Result<(Arc<Texture>, TexelBase), String> {
        let t = texture(&self.shared, info.texture)?;
        t.check_copy(info.mip_level, info.origin, size, side)?;
        Ok((
            t,
            TexelBase {
                mip_level: info.mip_level,
                origin: info.origin,
                aspect: info.aspect,
            },
        ))
    }
}

fn check_range(b: &Buffer, offset: u64, size: u64, what: &str) -> Result<(), String> {
    if offset.checked_add(size).is_none_or(|end| end > b.size) {
        return Err(format!(
            "{what} {offset}..{} is outside the buffer's {} bytes",
            offset.saturating_add(size),
            b.size
        ));
    }
    Ok(())
}

/// `clear_texture` of a block-compressed texture: a copy from a buffer of
/// zeros (new buffers read as zeros) into each mip level of `range`.
fn zero_copies(
    shared: &Arc<DeviceShared>,
    texture: &Arc<Texture>,
    range: &wgpu::ImageSubresourceRange,
) -> Result<Vec<Cmd>, String> {
    let format = texture.format;
    let (Some(block), (bw, bh)) = (format.block_copy_size(None), format.block_dimensions()) else {
        return Err(format!("{format:?} has no single copy block size"));
    };
    let mips_end = range
        .mip_level_count
        .map_or(Some(texture.mip_level_count), |n| {
            range.base_mip_level.checked_add(n)
        })
        .filter(|&end| end <= texture.mip_level_count && range.base_mip_level < end);
    let layers_end = range
        .array_layer_count
        .map_or(Some(texture.layers()), |n| {
            range.base_array_layer.checked_add(n)
        })
        .filter(|&end| end <= texture.layers() && range.base_array_layer < end);
    let (Some(mips_end), Some(layers_end)) = (mips_end, layers_end) else {
        return Err(format!(
            "the subresource range {range:?} is outside {} ({} mips, {} layers)",
            texture.ident(),
            texture.mip_level_count,
            texture.layers()
        ));
    };
    let mut copies = Vec::new();
    let mut largest = 0u64;
    for mip in range.base_mip_level..mips_end {
        let mut size = texture.physical_mip_size(mip);
        if texture.dimension != wgpu::TextureDimension::D3 {
            size.depth_or_array_layers = layers_end - range.base_array_layer;
        }
        let (wide, high) = (size.width / bw, size.height / bh);
        let pitch = (u64::from(wide) * u64::from(block))
            .next_multiple_of(u64::from(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT));
        let bytes = pitch
            .checked_mul(u64::from(high))
            .and_then(|b| b.checked_mul(u64::from(size.depth_or_array_layers)))
            .ok_or_else(|| format!("mip {mip} is larger than memory"))?;
        largest = largest.max(bytes);
        copies.push((mip, size, pitch, high));
    }
    let zeros = crate::device::create_buffer(
        shared,
        &wgpu::BufferDescriptor {
            label: Some("keel-wgpu: zeros for clear_texture"),
            size: largest,
            usage: wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        },
    );
    zeros.raw()?;
    let origin_z = match texture.dimension {
        wgpu::TextureDimension::D3 => 0,
        _ => range.base_array_layer,
    };
    Ok(copies
        .into_iter()
        .map(|(mip, size, pitch, high)| Cmd::CopyBufferToTexture {
            src: zeros.clone(),
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(pitch as u32),
                rows_per_image: Some(high),
            },
            dst: texture.clone(),
            base: TexelBase {
                mip_level: mip,
                origin: wgpu::Origin3d {
                    x: 0,
                    y: 0,
                    z: origin_z,
                },
                aspect: wgpu::TextureAspect::All,
            },
            size,
        })
        .collect())
}

impl cu::CommandEncoderInterface for KCommandEncoder {
    fn copy_buffer_to_buffer(
        &self,
        source: &cu::DispatchBuffer,
        source_offset: wgpu::BufferAddress,
        destination: &cu::DispatchBuffer,
        destination_offset: wgpu::BufferAddress,
        copy_size: Option<wgpu::BufferAddress>,
    ) {
        let cmd = (|| {
            let src = buffer(&self.shared, source)?;
            let dst = buffer(&self.shared, destination)?;
            // wgpu-core's first check of `copy_buffer_to_buffer`.
            if Arc::ptr_eq(&src, &dst) {
                return Err("Source and destination cannot be the same buffer".into());
            }
            let size = copy_size.unwrap_or(src.size.saturating_sub(source_offset));
            if !source_offset.is_multiple_of(4)
                || !destination_offset.is_multiple_of(4)
                || !size.is_multiple_of(4)
            {
                return Err(format!(
                    "offsets {source_offset}, {destination_offset} and size {size} must be multiples of 4"
                ));
            }
            check_range(&src, source_offset, size, "source range")?;
            check_range(&dst, destination_offset, size, "destination range")?;
            if !src.usage.contains(wgpu::BufferUsages::COPY_SRC) {
                return Err(format!("the source's usage {:?} lacks COPY_SRC", src.usage));
            }
            if !dst.usage.contains(wgpu::BufferUsages::COPY_DST) {
                return Err(format!(
                    "the destination's usage {:?} lacks COPY_DST",
                    dst.usage
                ));
            }
            Ok(Cmd::CopyBufferToBuffer {
                src,
                src_offset: source_offset,
                dst,
                dst_offset: destination_offset,
                size,
            })
        })();
        self.record("copy_buffer_to_buffer", cmd);
    }

    fn copy_buffer_to_texture(
        &self,
        source: wgpu::TexelCopyBufferInfo<'_>,
        destination: wgpu::TexelCopyTextureInfo<'_>,
        copy_size: wgpu::Extent3d,
    ) {
        let cmd = (|| {
            let src = wbuffer(&self.shared, source.buffer)?;
            let (dst, base) = self.texel(&destination, &copy_size, "destination")?;
            transfer_check::check_buffer_texture_copy(
                &src,
                &source.layout,
                &dst,
                &destination,
                &copy_size,
                true,
            )?;
            Ok(Cmd::CopyBufferToTexture {
                src,
                layout: source.layout,
                dst,
                base,
                size: copy_size,
            })
        })();
        self.record("copy_buffer_to_texture", cmd);
    }

    fn copy_texture_to_buffer(
        &self,
        source: wgpu::TexelCopyTextureInfo<'_>,
        destination: wgpu::TexelCopyBufferInfo<'_>,
        copy_size: wgpu::Extent3d,
    ) {
        let cmd = (|| {
            let (src, base) = self.texel(&source, &copy_size, "source")?;
            let dst = wbuffer(&self.shared, destination.buffer)?;
            transfer_check::check_buffer_texture_copy(
                &dst,
                &destination.layout,
                &src,
                &source,
                &copy_size,
                false,
            )?;
            Ok(Cmd::CopyTextureToBuffer {
                src,
                base,
                dst,
                layout: destination.layout,
                size: copy_size,
            })
        })();
        self.record("copy_texture_to_buffer", cmd);
    }

    fn copy_texture_to_texture(
        &self,
        source: wgpu::TexelCopyTextureInfo<'_>,
        destination: wgpu::TexelCopyTextureInfo<'_>,
        copy_size: wgpu::Extent3d,
    ) {
        let cmd = (|| {
            let (src, src_base) = self.texel(&source, &copy_size, "source")?;
            let (dst, dst_base) = self.texel(&destination, &copy_size, "destination")?;
            transfer_check::check_texture_texture_copy(
                &src,
                &source,
                &dst,
                &destination,
                &copy_size,
            )?;
            Ok(Cmd::CopyTextureToTexture {
                src,
                src_base,
                dst,
                dst_base,
                size: copy_size,
            })
        })();
        self.record("copy_texture_to_texture", cmd);
    }

    fn begin_compute_pass(
        &self,
        desc: &wgpu::ComputePassDescriptor<'_>,
    ) -> cu::DispatchComputePass {
        let mut record = ComputePassRecord {
            label: desc.label.map(str::to_string),
            ..Default::default()
        };
        let mut error = None;
        if let Some(ts) = &desc.timestamp_writes {
            match timestamps(
                &self.shared,
                ts.query_set,
                ts.beginning_of_pass_write_index,
                ts.end_of_pass_write_index,
            ) {
                Ok(t) => record.timestamps = Some(t),
                Err(e) => error = Some(e),
            }
        }
        let mut rec = self.rec.lock();
        // wgpu-core: a pass begun while another is open invalidates the
        // encoder, and ending it is an error of its own.
        let nested = rec.pass_open;
        if nested {
            rec.fail(format!("begin_compute_pass: {LOCKED}"));
        }
        if let Some(e) = error {
            rec.fail(format!("begin_compute_pass: {e}"));
        }
        rec.pass_open = true;
        drop(rec);
        cu::DispatchComputePass::custom(KComputePass {
            shared: self.shared.clone(),
            rec: self.rec.clone(),
            pass: Some(record),
            state: ComputeState::new(&self.shared),
            nested,
        })
    }

    fn begin_render_pass(&self, desc: &wgpu::RenderPassDescriptor<'_>) -> cu::DispatchRenderPass {
        let mut error = None;
        let mut record = RenderPassRecord {
            label: desc.label.map(str::to_string),
            multiview_mask: desc.multiview_mask,
            ..Default::default()
        };
        for color in desc.color_attachments {
            let Some(color) = color else {
                record.colors.push(None);
                continue;
            };
            let resolved = (|| {
                let resolve = match color.resolve_target {
                    Some(r) => Some(view(&self.shared, r)?),
                    None => None,
                };
                Ok::<_, String>((view(&self.shared, color.view)?, resolve))
            })();
            match resolved {
                Ok((view, resolve)) => record.colors.push(Some(ColorRecord {
                    view,
                    resolve,
                    load: color.ops.load,
                    store: color.ops.store,
                    depth_slice: color.depth_slice,
                })),
                Err(e) => error = Some(e),
            }
        }
        if let Some(depth) = &desc.depth_stencil_attachment {
            match view(&self.shared, depth.view) {
                Ok(view) => {
                    record.depth = Some(DepthRecord {
                        view,
                        depth: depth.depth_ops,
                        stencil: depth.stencil_ops,
                    })
                }
                Err(e) => error = Some(e),
            }
        }
        if let Some(ts) = &desc.timestamp_writes {
            match timestamps(
                &self.shared,
                ts.query_set,
                ts.beginning_of_pass_write_index,
                ts.end_of_pass_write_index,
            ) {
                Ok(t) => record.timestamps = Some(t),
                Err(e) => error = Some(e),
            }
        }
        if let Some(set) = desc.occlusion_query_set {
            match wquery_set(&self.shared, set) {
                Ok(set) if matches!(set.ty, wgpu::QueryType::Occlusion) => {
                    record.occlusion = Some(set)
                }
                Ok(set) => error = Some(format!("occlusion_query_set is a {:?} set", set.ty)),
                Err(e) => error = Some(e),
            }
        }
        let state = match crate::pass_check::begin_render_pass(&self.shared, &record) {
            Ok(state) => state,
            Err(e) => {
                error.get_or_insert(e);
                RenderState::new(
                    &self.shared,
                    "RenderPass",
                    Default::default(),
                    Default::default(),
                )
            }
        };
        let mut rec = self.rec.lock();
        // wgpu-core: a pass begun while another is open invalidates the
        // encoder, and ending it is an error of its own.
        let nested = rec.pass_open;
        if nested {
            rec.fail(format!("begin_render_pass: {LOCKED}"));
        }
        if let Some(e) = error {
            rec.fail(format!("begin_render_pass: {e}"));
        }
        rec.pass_open = true;
        drop(rec);
        cu::DispatchRenderPass::custom(KRenderPass {
            shared: self.shared.clone(),
            rec: self.rec.clone(),
            pass: Some(record),
            state,
            nested,
        })
    }

    fn finish(&mut self) -> cu::DispatchCommandBuffer {
        let mut recording = {
            let mut rec = self.rec.lock();
            let recording = std::mem::take(&mut *rec);
            // A pass still open ends on a finished encoder (`pass_type!`).
            rec.ended = true;
            recording
        };
        if recording.pass_open {
            recording.fail("finish: a pass is still open");
        }
        if recording.debug_depth > 0 {
            recording.fail(format!(
                "finish: {} debug group{} pushed but never popped",
                recording.debug_depth,
                if recording.debug_depth == 1 {
                    " was"
                } else {
                    "s were"
                }
            ));
        }
        if recording.error.is_none() {
            prepare_submit(&mut recording);
        }
        let mut encoded = None;
        match &recording.error {
            Some(e) => self
                .shared
                .report(KeelError::validation("CommandEncoder::finish", e.clone())),
            // Encoded here, on the finishing thread, into a keel-hal
            // command buffer of its own (`tracker.rs`).
            None => match crate::replay::encode(&self.shared, &recording.cmds) {
                Encoding::Done(e) => encoded = Some(e),
                Encoding::AtSubmit => {}
                Encoding::Failed(e) => {
                    recording.fail(e.message.clone());
                    self.shared.report(e);
                }
            },
        }
        cu::DispatchCommandBuffer::custom(KCommandBuffer(CommandBuffer {
            shared: self.shared.clone(),
            recording: Mutex::new(Some(recording)),
            encoded: Mutex::new(encoded),
        }))
    }

    fn clear_texture(&self, tex: &cu::DispatchTexture, range: &wgpu::ImageSubresourceRange) {
        let cmd = (|| {
            let needed = wgpu::Features::CLEAR_TEXTURE;
            if !self.shared.features.contains(needed) {
                return Err(format!(
                    "Features {needed:?} are required but not enabled on the device"
                ));
            }
            let texture = owned(&self.shared, tex.as_custom::<KTexture>())?;
            if texture.format.is_compressed() {
                // keel-hal clears no block-compressed texture: as wgpu-core
                // does, copies of zeros.
                return zero_copies(&self.shared, &texture, range);
            }
            Ok(vec![Cmd::ClearTexture {
                texture,
                range: *range,
            }])
        })();
        match cmd {
            Ok(cmds) => {
                for cmd in cmds {
                    self.record("clear_texture", Ok(cmd));
                }
            }
            Err(e) => self.record("clear_texture", Err(e)),
        }
    }

    fn clear_buffer(
        &self,
        b: &cu::DispatchBuffer,
        offset: wgpu::BufferAddress,
        size: Option<wgpu::BufferAddress>,
    ) {
        let cmd = (|| {
            let b = buffer(&self.shared, b)?;
            // wgpu-core's checks, in its order and words.
            if !b.usage.contains(wgpu::BufferUsages::COPY_DST) {
                return Err(crate::pass_check::missing_usage(
                    b.ident(),
                    b.usage,
                    wgpu::BufferUsages::COPY_DST,
                ));
            }
            if !offset.is_multiple_of(4) {
                return Err(format!(
                    "Buffer offset {offset:?} is not a multiple of `COPY_BUFFER_ALIGNMENT`"
                ));
            }
            let size = size.unwrap_or(b.size.saturating_sub(offset));
            if !size.is_multiple_of(4) {
                return Err(format!(
                    "Buffer clear size {size:?} is not a multiple of `COPY_BUFFER_ALIGNMENT`"
                ));
            }
            let Some(end_offset) = offset.checked_add(size) else {
                return Err(format!(
                    "Clear starts at offset {offset} with size of {size}, \
                     but these added together exceed `u64::MAX`"
                ));
            };
            if end_offset > b.size {
                return Err(format!(
                    "Clear of {offset}..{end_offset} would end up overrunning \
                     the bounds of the buffer of size {}",
                    b.size
                ));
            }
            Ok(Cmd::ClearBuffer {
                buffer: b,
                range: offset..offset + size,
            })
        })();
        self.record("clear_buffer", cmd);
    }

    fn insert_debug_marker(&self, label: &str) {
        self.record(
            "insert_debug_marker",
            Ok(Cmd::InsertDebugMarker(label.into())),
        );
    }

    fn push_debug_group(&self, label: &str) {
        self.record("push_debug_group", Ok(Cmd::PushDebugGroup(label.into())));
    }

    fn pop_debug_group(&self) {
        self.record("pop_debug_group", Ok(Cmd::PopDebugGroup));
    }

    fn write_timestamp(&self, set: &cu::DispatchQuerySet, index: u32) {
        let cmd = (|| {
            // wgpu-core's first check (`QueryError::MissingFeature`).
            let needed = wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
            if !self.shared.features.contains(needed) {
                return Err(crate::create_check::missing_features(needed));
            }
            let set = query_set(&self.shared, set)?;
            check_query(&set, index)?;
            Ok(Cmd::WriteTimestamp { set, index })
        })();
        self.record("write_timestamp", cmd);
    }

    fn resolve_query_set(
        &self,
        set: &cu::DispatchQuerySet,
        first_query: u32,
        query_count: u32,
        destination: &cu::DispatchBuffer,
        destination_offset: wgpu::BufferAddress,
    ) {
        let cmd = (|| {
            let set = query_set(&self.shared, set)?;
            let dst = buffer(&self.shared, destination)?;
            if first_query
                .checked_add(query_count)
                .is_none_or(|end| end > set.count)
            {
                return Err(format!(
                    "queries {first_query}..{} are outside the set's {}",
                    first_query.saturating_add(query_count),
                    set.count
                ));
            }
            if !destination_offset.is_multiple_of(wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT) {
                return Err(format!(
                    "destination_offset {destination_offset} is not a multiple of {}",
                    wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT
                ));
            }
            let values = match set.ty {
                wgpu::QueryType::PipelineStatistics(s) => s.bits().count_ones() as u64,
                _ => 1,
            };
            check_range(
                &dst,
                destination_offset,
                query_count as u64 * 8 * values,
                "destination",
            )?;
            if !dst.usage.contains(wgpu::BufferUsages::QUERY_RESOLVE) {
                return Err(format!(
                    "the destination's usage {:?} lacks QUERY_RESOLVE",
                    dst.usage
                ));
            }
            Ok(Cmd::ResolveQuerySet {
                set,
                queries: first_query..first_query + query_count,
                dst,
                offset: destination_offset,
            })
        })();
        self.record("resolve_query_set", cmd);
    }

    fn mark_acceleration_structures_built<'a>(
        &self,
        _blas: &mut dyn Iterator<Item = &'a wgpu::Blas>,
        _tlas: &mut dyn Iterator<Item = &'a wgpu::Tlas>,
    ) {
        self.record(
            "mark_acceleration_structures_built",
            Err("acceleration structures are not among keel-wgpu's features".into()),
        );
    }

    fn build_acceleration_structures<'a>(
        &self,
        _blas: &mut dyn Iterator<Item = &'a wgpu::BlasBuildEntry<'a>>,
        _tlas: &mut dyn Iterator<Item = &'a wgpu::Tlas>,
    ) {
        self.record(
            "build_acceleration_structures",
            Err("acceleration structures are not among keel-wgpu's features".into()),
        );
    }

    fn transition_resources<'a>(
        &mut self,
        buffers: &mut dyn Iterator<Item = wgpu::wgt::BufferTransition<&'a cu::DispatchBuffer>>,
        textures: &mut dyn Iterator<Item = wgpu::wgt::TextureTransition<&'a cu::DispatchTexture>>,
    ) {
        // A hint: the tracker places every barrier itself. wgpu-core's
        // checks still apply: the resources are valid and this device's,
        // their states compatible, and they count as used at submit.
        let checked = (|| {
            let mut scope = crate::pass_check::TransitionScope::default();
            for t in buffers {
                scope.buffer(buffer(&self.shared, t.buffer)?, t.state)?;
            }
            for t in textures {
                let texture = owned(&self.shared, t.texture.as_custom::<KTexture>())?;
                scope.texture(texture, t.selector, t.state)?;
            }
            Ok::<_, String>(scope)
        })();
        let mut rec = self.rec.lock();
        if rec.pass_open {
            return rec.fail(format!("transition_resources: {LOCKED}"));
        }
        match checked {
            Ok(scope) => scope.keep(&mut rec.submit_checks),
            Err(e) => rec.fail(format!("transition_resources: {e}")),
        }
    }
}

/// At `finish`, before encoding: fills the recording's [`SubmitChecks`]
/// (its query sets and the queries it writes, the bind groups its compute
/// passes set) and makes each resolve of queries nobody wrote a clear of
/// their results instead (wgpu-core's deferred resolves give zeros there,
/// and Vulkan may not copy a query never written). A query counts as
/// written when this command buffer writes it before the resolve or
/// submitted work wrote it (decided here, where the command buffer is
/// encoded; wgpu-core decides at submit).
fn prepare_submit(rec: &mut Recording) {
    let mut scan = QueryScan {
        checks: &mut rec.submit_checks,
        sets_seen: Default::default(),
        written: Default::default(),
    };
    let mut groups_seen = crate::ptr_map::PtrSet::default();
    let cmds = std::mem::take(&mut rec.cmds);
    let mut out = Vec::with_capacity(cmds.len());
    for cmd in cmds {
        match cmd {
            Cmd::WriteTimestamp { ref set, index } => {
                scan.set(set);
                scan.write(set, index);
                out.push(cmd);
            }
            Cmd::ResolveQuerySet {
                set,
                queries,
                dst,
                offset,
            } => {
                scan.set(&set);
                let mine = scan.written.get(&(Arc::as_ptr(&set) as usize));
                let submitted = set.written.lock();
                let is_written = |q: u32| {
                    mine.is_some_and(|m| m.get(q as usize) == Some(&true))
                        || submitted.get(q as usize) == Some(&true)
                };
                let stride = match set.ty {
                    wgpu::QueryType::PipelineStatistics(s) => 8 * u64::from(s.bits().count_ones()),
                    _ => 8,
                };
                // Runs of written and unwritten queries, in order.
                let mut q = queries.start;
                while q < queries.end {
                    let state = is_written(q);
                    let mut end = q + 1;
                    while end < queries.end && is_written(end) == state {
                        end += 1;
                    }
                    let at = offset + u64::from(q - queries.start) * stride;
                    if state {
                        out.push(Cmd::ResolveQuerySet {
                            set: set.clone(),
                            queries: q..end,
                            dst: dst.clone(),
                            offset: at,
                        });
                    } else {
                        out.push(Cmd::ClearBuffer {
                            buffer: dst.clone(),
                            range: at..at + u64::from(end - q) * stride,
                        });
                    }
                    q = end;
                }
                drop(submitted);
            }
            Cmd::ComputePass(ref pass) => {
                if let Some(ts) = &pass.timestamps {
                    scan.set(&ts.set);
                    for index in [ts.begin, ts.end].into_iter().flatten() {
                        scan.write(&ts.set, index);
                    }
                }
                // Each group once: the pass's table, less what earlier
                // passes had.
                for g in pass.groups.all() {
                    if groups_seen.insert(Arc::as_ptr(g) as usize) {
                        scan.checks.groups.push(g.clone());
                    }
                }
                for c in &pass.cmds {
                    match c {
                        PassCmd::WriteTimestamp { set, index }
                        | PassCmd::BeginStatisticsQuery { set, index } => {
                            scan.set(set);
                            scan.write(set, *index);
                        }
                        _ => {}
                    }
                }
                out.push(cmd);
            }
            Cmd::RenderPass(ref pass) => {
                if let Some(ts) = &pass.timestamps {
                    scan.set(&ts.set);
                    for index in [ts.begin, ts.end].into_iter().flatten() {
                        scan.write(&ts.set, index);
                    }
                }
                if let Some(set) = &pass.occlusion {
                    scan.set(set);
                }
                for c in &pass.cmds {
                    match c {
                        PassCmd::BeginOcclusionQuery(index) => {
                            if let Some(set) = &pass.occlusion {
                                scan.write(set, *index);
                            }
                        }
                        PassCmd::WriteTimestamp { set, index }
                        | PassCmd::BeginStatisticsQuery { set, index } => {
                            scan.set(set);
                            scan.write(set, *index);
                        }
                        _ => {}
                    }
                }
                out.push(cmd);
            }
            other => out.push(other),
        }
    }
    rec.cmds = out;
}

/// [`prepare_submit`]'s state: the checks being filled, the sets seen, the
/// queries written so far in the command buffer.
struct QueryScan<'a> {
    checks: &'a mut SubmitChecks,
    sets_seen: crate::ptr_map::PtrSet,
    written: crate::ptr_map::PtrMap<Vec<bool>>,
}

impl QueryScan<'_> {
    /// `set` is used.
    fn set(&mut self, set: &Arc<QuerySet>) {
        if self.sets_seen.insert(Arc::as_ptr(set) as usize) {
            self.checks.query_sets.push(set.clone());
        }
    }

    /// Query `index` of `set` is written.
    fn write(&mut self, set: &Arc<QuerySet>, index: u32) {
        let slots = self
            .written
            .entry(Arc::as_ptr(set) as usize)
            .or_insert_with(|| vec![false; set.count as usize]);
        if let Some(slot) = slots.get_mut(index as usize) {
            if !*slot {
                *slot = true;
                self.checks.query_writes.push((set.clone(), index));
            }
        }
    }
}

fn timestamps(
    on: &Arc<DeviceShared>,
    set: &wgpu::QuerySet,
    begin: Option<u32>,
    end: Option<u32>,
) -> Result<PassTimestamps, String> {
    let needed = wgpu::Features::TIMESTAMP_QUERY;
    if !on.features.contains(needed) {
        return Err(format!(
            "Features {needed:?} are required but not enabled on the device"
        ));
    }
    let set = wquery_set(on, set)?;
    if !matches!(set.ty, wgpu::QueryType::Timestamp) {
        return Err(format!("timestamp_writes names a {:?} set", set.ty));
    }
    for index in [begin, end].into_iter().flatten() {
        check_query(&set, index)?;
    }
    // wgpu-core's `validate_pass_timestamp_writes`: two distinct indices,
    // at least one.
    match (begin, end) {
        (Some(b), Some(e)) if b == e => {
            return Err(format!(
                "Timestamp writes at the beginning and end of the pass use the same index {b}"
            ))
        }
        (None, None) => {
            return Err("Timestamp writes name neither a beginning nor an end index".into())
        }
        _ => {}
    }
    Ok(PassTimestamps { set, begin, end })
}

/// A pass's recording, appended to its encoder when the pass ends; each
/// command is checked against the pass's state (`pass_check.rs`) first.
macro_rules! pass_type {
    ($name:ident, $record:ty, $state:ty, $variant:ident) => {
        /// An open pass.
        #[derive(Debug)]
        pub(crate) struct $name {
            shared: Arc<DeviceShared>,
            rec: Arc<Mutex<Recording>>,
            pass: Option<$record>,
            state: $state,
            /// Begun while another pass was open.
            nested: bool,
        }

        impl $name {
            fn push(&mut self, mut cmd: PassCmd) {
                if let Err(e) = self.state.record(&mut cmd) {
                    return self.fail(format!("{}: {e}", cmd.name()));
                }
                if let Some(pass) = &mut self.pass {
                    pass.cmds.push(cmd);
                }
            }
            fn fail(&mut self, e: impl Into<String>) {
                self.rec.lock().fail(e);
            }
        }

        impl Drop for $name {
            /// The pass's end (wgpu-core's `*_pass_end`): on an encoder
            /// already finished, or for a pass begun inside another, an
            /// error reported now; otherwise the pass's own end checks,
            /// and its commands join the encoder's.
            fn drop(&mut self) {
                let mut rec = self.rec.lock();
                let immediate = if rec.ended {
                    Some("the encoder was already finished")
                } else if self.nested {
                    Some("the pass was begun while another pass was open")
                } else {
                    None
                };
                if let Some(why) = immediate {
                    drop(rec);
                    self.shared.report(KeelError::validation(
                        concat!(stringify!($variant), "::end"),
                        why,
                    ));
                    return;
                }
                rec.pass_open = false;
                if let Err(e) = self.state.end() {
                    rec.fail(format!("{}::end: {e}", stringify!($variant)));
                }
                if let Some(mut pass) = self.pass.take() {
                    pass.groups = std::mem::take(&mut self.state.table);
                    rec.cmds.push(Cmd::$variant(Box::new(pass)));
                }
            }
        }
    };
}

pass_type!(KComputePass, ComputePassRecord, ComputeState, ComputePass);
pass_type!(KRenderPass, RenderPassRecord, RenderState, RenderPass);

/// `set_bind_group`'s command (its checks are the pass state's).
fn bind_group_cmd(
    on: &Arc<DeviceShared>,
    table: &mut GroupTable,
    index: u32,
    group: Option<&cu::DispatchBindGroup>,
    offsets: &[wgpu::DynamicOffset],
) -> Result<PassCmd, String> {
    let group = match group {
        Some(g) => {
            let handle = g
                .as_custom::<KBindGroup>()
                .ok_or("a BindGroup of another backend")?;
            same_device(on, &**handle.inner())?;
            Some(table.intern(handle.inner()))
        }
        None => None,
    };
    Ok(PassCmd::SetBindGroup {
        index,
        group,
        offsets: offsets.to_vec(),
    })
}

impl cu::ComputePassInterface for KComputePass {
    fn set_pipeline(&mut self, pipeline: &cu::DispatchComputePipeline) {
        match owned(&self.shared, pipeline.as_custom::<KComputePipeline>()) {
            Ok(p) => self.push(PassCmd::SetComputePipeline(p)),
            Err(e) => self.fail(format!("set_pipeline: {e}")),
        }
    }
    fn set_bind_group(
        &mut self,
        index: u32,
        group: Option<&cu::DispatchBindGroup>,
        offsets: &[wgpu::DynamicOffset],
    ) {
        match bind_group_cmd(&self.shared, &mut self.state.table, index, group, offsets) {
            Ok(cmd) => self.push(cmd),
            Err(e) => self.fail(format!("set_bind_group: {e}")),
        }
    }
    fn set_immediates(&mut self, offset: u32, data: &[u8]) {
        self.push(PassCmd::SetImmediates {
            offset,
            data: data.to_vec(),
        });
    }
    fn insert_debug_marker(&mut self, label: &str) {
        self.push(PassCmd::InsertDebugMarker(label.into()));
    }
    fn push_debug_group(&mut self, label: &str) {
        self.push(PassCmd::PushDebugGroup(label.into()));
    }
    fn pop_debug_group(&mut self) {
        self.push(PassCmd::PopDebugGroup);
    }
    fn write_timestamp(&mut self, set: &cu::DispatchQuerySet, index: u32) {
        match pass_query(&self.shared, set, index) {
            Ok(set) => self.push(PassCmd::WriteTimestamp { set, index }),
            Err(e) => self.fail(format!("write_timestamp: {e}")),
        }
    }
    fn begin_pipeline_statistics_query(&mut self, set: &cu::DispatchQuerySet, index: u32) {
        match pass_query(&self.shared, set, index) {
            Ok(set) => self.push(PassCmd::BeginStatisticsQuery { set, index }),
            Err(e) => self.fail(format!("begin_pipeline_statistics_query: {e}")),
        }
    }
    fn end_pipeline_statistics_query(&mut self) {
        self.push(PassCmd::EndStatisticsQuery);
    }
    fn dispatch_workgroups(&mut self, x: u32, y: u32, z: u32) {
        let limit = self.shared.limits.max_compute_workgroups_per_dimension;
        if [x, y, z].iter().any(|&n| n > limit) {
            return self.fail(format!(
                "dispatch_workgroups: Each current dispatch group size dimension ({:?}) must \
                 be less or equal to {limit}",
                [x, y, z]
            ));
        }
        self.push(PassCmd::Dispatch([x, y, z]));
    }
    fn dispatch_workgroups_indirect(
        &mut self,
        b: &cu::DispatchBuffer,
        offset: wgpu::BufferAddress,
    ) {
        match buffer(&self.shared, b) {
            Ok(b) => self.push(PassCmd::DispatchIndirect { buffer: b, offset }),
            Err(e) => self.fail(format!("dispatch_workgroups_indirect: {e}")),
        }
    }
    fn transition_resources<'a>(
        &mut self,
        buffers: &mut dyn Iterator<Item = wgpu::wgt::BufferTransition<&'a cu::DispatchBuffer>>,
        textures: &mut dyn Iterator<
            Item = wgpu::wgt::TextureTransition<&'a cu::DispatchTextureView>,
        >,
    ) {
        // A hint, as on the encoder (wgpu-core's `compute::transition_resources`
        // checks the same; the views' textures are what it tracks).
        let checked = (|| {
            let mut scope = crate::pass_check::TransitionScope::default();
            for t in buffers {
                scope.buffer(buffer(&self.shared, t.buffer)?, t.state)?;
            }
            for t in textures {
                let view = owned(&self.shared, t.texture.as_custom::<KTextureView>())?;
                scope.texture(view.texture.clone(), t.selector, t.state)?;
            }
            Ok::<_, String>(scope)
        })();
        match checked {
            Ok(scope) => scope.keep(&mut self.rec.lock().submit_checks),
            Err(e) => self.fail(format!("transition_resources: {e}")),
        }
    }
}

/// The render commands passes and bundles share.
trait RenderRecorder {
    /// The device the commands are recorded for.
    fn on(&self) -> &Arc<DeviceShared>;
    fn push_cmd(&mut self, cmd: PassCmd);
    fn fail_cmd(&mut self, e: String);
    /// The device and the groups the pass or bundle sets, borrowed
    /// together (the device is not cloned per command: its count would be
    /// a cache line every recording thread writes).
    fn parts(&mut self) -> (&Arc<DeviceShared>, &mut GroupTable);

    fn rec_pipeline(&mut self, pipeline: &cu::DispatchRenderPipeline) {
        match owned(self.on(), pipeline.as_custom::<KRenderPipeline>()) {
            Ok(p) => self.push_cmd(PassCmd::SetRenderPipeline(p)),
            Err(e) => self.fail_cmd(format!("set_pipeline: {e}")),
        }
    }
    fn rec_bind_group(
        &mut self,
        index: u32,
        group: Option<&cu::DispatchBindGroup>,
        offsets: &[u32],
    ) {
        let (on, table) = self.parts();
        match bind_group_cmd(on, table, index, group, offsets) {
            Ok(cmd) => self.push_cmd(cmd),
            Err(e) => self.fail_cmd(format!("set_bind_group: {e}")),
        }
    }
    fn rec_index(
        &mut self,
        b: &cu::DispatchBuffer,
        format: wgpu::IndexFormat,
        offset: u64,
        size: Option<wgpu::BufferSize>,
    ) {
        match buffer(self.on(), b) {
            Ok(buffer) => self.push_cmd(PassCmd::SetIndexBuffer {
                buffer,
                format,
                offset,
                size,
            }),
            Err(e) => self.fail_cmd(format!("set_index_buffer: {e}")),
        }
    }
    fn rec_vertex(
        &mut self,
        slot: u32,
        b: Option<&cu::DispatchBuffer>,
        offset: u64,
        size: Option<wgpu::BufferSize>,
    ) {
        let buffer = match b {
            Some(b) => match buffer(self.on(), b) {
                Ok(b) => Some(b),
                Err(e) => return self.fail_cmd(format!("set_vertex_buffer: {e}")),
            },
            None => None,
        };
        self.push_cmd(PassCmd::SetVertexBuffer {
            slot,
            buffer,
            offset,
            size,
        });
    }
    fn rec_indirect(&mut self, b: &cu::DispatchBuffer, offset: u64, count: u32, indexed: bool) {
        match buffer(self.on(), b) {
            Ok(buffer) => self.push_cmd(PassCmd::DrawIndirect {
                buffer,
                offset,
                count,
                indexed,
                // Filled in when recorded (`RenderState::record`).
                limits: [0; 2],
            }),
            Err(e) => self.fail_cmd(format!("draw_indirect: {e}")),
        }
    }
}

impl RenderRecorder for KRenderPass {
    fn on(&self) -> &Arc<DeviceShared> {
        &self.shared
    }
    fn push_cmd(&mut self, cmd: PassCmd) {
        self.push(cmd);
    }
    fn fail_cmd(&mut self, e: String) {
        self.fail(e);
    }
    fn parts(&mut self) -> (&Arc<DeviceShared>, &mut GroupTable) {
        (&self.shared, &mut self.state.table)
    }
}

/// The commands a render pass and a render bundle both record, the same
/// way (through [`RenderRecorder`]): one definition for both interfaces.
macro_rules! render_commands {
    () => {
        fn set_pipeline(&mut self, pipeline: &cu::DispatchRenderPipeline) {
            self.rec_pipeline(pipeline);
        }
        fn set_bind_group(
            &mut self,
            index: u32,
            group: Option<&cu::DispatchBindGroup>,
            offsets: &[wgpu::DynamicOffset],
        ) {
            self.rec_bind_group(index, group, offsets);
        }
        fn set_index_buffer(
            &mut self,
            b: &cu::DispatchBuffer,
            format: wgpu::IndexFormat,
            offset: wgpu::BufferAddress,
            size: Option<wgpu::BufferSize>,
        ) {
            self.rec_index(b, format, offset, size);
        }
        fn set_vertex_buffer(
            &mut self,
            slot: u32,
            b: Option<&cu::DispatchBuffer>,
            offset: wgpu::BufferAddress,
            size: Option<wgpu::BufferSize>,
        ) {
            self.rec_vertex(slot, b, offset, size);
        }
        fn set_immediates(&mut self, offset: u32, data: &[u8]) {
            self.push_cmd(PassCmd::SetImmediates {
                offset,
                data: data.to_vec(),
            });
        }
        fn draw(&mut self, vertices: Range<u32>, instances: Range<u32>) {
            self.push_cmd(PassCmd::Draw {
                vertices,
                instances,
            });
        }
        fn draw_indexed(&mut self, indices: Range<u32>, base_vertex: i32, instances: Range<u32>) {
            self.push_cmd(PassCmd::DrawIndexed {
                indices,
                base_vertex,
                instances,
            });
        }
        fn draw_indirect(&mut self, b: &cu::DispatchBuffer, offset: wgpu::BufferAddress) {
            self.rec_indirect(b, offset, 1, false);
        }
        fn draw_indexed_indirect(&mut self, b: &cu::DispatchBuffer, offset: wgpu::BufferAddress) {
            self.rec_indirect(b, offset, 1, true);
        }
    };
}

impl cu::RenderPassInterface for KRenderPass {
    render_commands!();
    fn set_blend_constant(&mut self, color: wgpu::Color) {
        self.push(PassCmd::SetBlendConstant(color));
    }
    fn set_scissor_rect(&mut self, x: u32, y: u32, width: u32, height: u32) {
        self.push(PassCmd::SetScissorRect([x, y, width, height]));
    }
    fn set_viewport(
        &mut self,
        x: f32,
        y: f32,
        width: f32,
        height: f32,
        min_depth: f32,
        max_depth: f32,
    ) {
        self.push(PassCmd::SetViewport {
            rect: [x, y, width, height],
            depth: min_depth..max_depth,
        });
    }
    fn set_stencil_reference(&mut self, reference: u32) {
        self.push(PassCmd::SetStencilReference(reference));
    }
    fn draw_mesh_tasks(&mut self, x: u32, y: u32, z: u32) {
        self.push(PassCmd::DrawMeshTasks([x, y, z]));
    }
    fn draw_mesh_tasks_indirect(&mut self, b: &cu::DispatchBuffer, offset: wgpu::BufferAddress) {
        self.mesh_indirect(b, offset, 1);
    }
    fn multi_draw_indirect(
        &mut self,
        b: &cu::DispatchBuffer,
        offset: wgpu::BufferAddress,
        count: u32,
    ) {
        self.rec_indirect(b, offset, count, false);
    }
    fn multi_draw_indexed_indirect(
        &mut self,
        b: &cu::DispatchBuffer,
        offset: wgpu::BufferAddress,
        count: u32,
    ) {
        self.rec_indirect(b, offset, count, true);
    }
    fn multi_draw_indirect_count(
        &mut self,
        b: &cu::DispatchBuffer,
        offset: wgpu::BufferAddress,
        count_buffer: &cu::DispatchBuffer,
        count_offset: wgpu::BufferAddress,
        max_count: u32,
    ) {
        self.count_draw(
            b,
            offset,
            count_buffer,
            count_offset,
            max_count,
            DrawFamily::Draw,
        );
    }
    fn multi_draw_mesh_tasks_indirect(
        &mut self,
        b: &cu::DispatchBuffer,
        offset: wgpu::BufferAddress,
        count: u32,
    ) {
        self.mesh_indirect(b, offset, count);
    }
    fn multi_draw_indexed_indirect_count(
        &mut self,
        b: &cu::DispatchBuffer,
        offset: wgpu::BufferAddress,
        count_buffer: &cu::DispatchBuffer,
        count_offset: wgpu::BufferAddress,
        max_count: u32,
    ) {
        self.count_draw(
            b,
            offset,
            count_buffer,
            count_offset,
            max_count,
            DrawFamily::Indexed,
        );
    }
    fn multi_draw_mesh_tasks_indirect_count(
        &mut self,
        b: &cu::DispatchBuffer,
        offset: wgpu::BufferAddress,
        count_buffer: &cu::DispatchBuffer,
        count_offset: wgpu::BufferAddress,
        max_count: u32,
    ) {
        self.count_draw(
            b,
            offset,
            count_buffer,
            count_offset,
            max_count,
            DrawFamily::Mesh,
        );
    }
    fn insert_debug_marker(&mut self, label: &str) {
        self.push(PassCmd::InsertDebugMarker(label.into()));
    }
    fn push_debug_group(&mut self, label: &str) {
        self.push(PassCmd::PushDebugGroup(label.into()));
    }
    fn pop_debug_group(&mut self) {
        self.push(PassCmd::PopDebugGroup);
    }
    fn write_timestamp(&mut self, set: &cu::DispatchQuerySet, index: u32) {
        match pass_query(&self.shared, set, index) {
            Ok(set) => self.push(PassCmd::WriteTimestamp { set, index }),
            Err(e) => self.fail(format!("write_timestamp: {e}")),
        }
    }
    fn begin_occlusion_query(&mut self, index: u32) {
        let ok = self
            .pass
            .as_ref()
            .and_then(|p| p.occlusion.as_ref())
            .map(|s| check_query(s, index));
        match ok {
            Some(Ok(())) => self.push(PassCmd::BeginOcclusionQuery(index)),
            Some(Err(e)) => self.fail(format!("begin_occlusion_query: {e}")),
            None => self.fail("begin_occlusion_query: the pass has no occlusion_query_set"),
        }
    }
    fn end_occlusion_query(&mut self) {
        self.push(PassCmd::EndOcclusionQuery);
    }
    fn begin_pipeline_statistics_query(&mut self, set: &cu::DispatchQuerySet, index: u32) {
        match pass_query(&self.shared, set, index) {
            Ok(set) => self.push(PassCmd::BeginStatisticsQuery { set, index }),
            Err(e) => self.fail(format!("begin_pipeline_statistics_query: {e}")),
        }
    }
    fn end_pipeline_statistics_query(&mut self) {
        self.push(PassCmd::EndStatisticsQuery);
    }
    fn execute_bundles(&mut self, bundles: &mut dyn Iterator<Item = &cu::DispatchRenderBundle>) {
        let mut list = Vec::new();
        for bundle in bundles {
            match owned(&self.shared, bundle.as_custom::<KRenderBundle>()) {
                Ok(b) => list.push(b),
                Err(e) => return self.fail(format!("execute_bundles: {e}")),
            }
        }
        self.push(PassCmd::ExecuteBundles(list));
    }
}

impl KRenderPass {
    fn count_draw(
        &mut self,
        b: &cu::DispatchBuffer,
        offset: u64,
        count_buffer: &cu::DispatchBuffer,
        count_offset: u64,
        max_count: u32,
        family: DrawFamily,
    ) {
        let call = match family {
            DrawFamily::Mesh => "multi_draw_mesh_tasks_indirect_count",
            _ => "multi_draw_indirect_count",
        };
        let needed = wgpu::Features::MULTI_DRAW_INDIRECT_COUNT;
        if !self.shared.features.contains(needed) {
            return self.fail(format!(
                "{call}: Features {needed:?} are required but not enabled on the device"
            ));
        }
        match buffer(&self.shared, b).and_then(|b| Ok((b, buffer(&self.shared, count_buffer)?))) {
            Ok((buffer, count_buffer)) => self.push(PassCmd::DrawIndirectCount {
                buffer,
                offset,
                count_buffer,
                count_offset,
                max_count,
                family,
            }),
            Err(e) => self.fail(format!("{call}: {e}")),
        }
    }

    fn mesh_indirect(&mut self, b: &cu::DispatchBuffer, offset: u64, count: u32) {
        match buffer(&self.shared, b) {
            Ok(buffer) => self.push(PassCmd::DrawMeshTasksIndirect {
                buffer,
                offset,
                count,
            }),
            Err(e) => self.fail(format!("draw_mesh_tasks_indirect: {e}")),
        }
    }
}

/// `wgpu::RenderBundleEncoder`.
#[derive(Debug)]
pub(crate) struct KRenderBundleEncoder {
    shared: Arc<DeviceShared>,
    label: String,
    state: RenderState,
    cmds: Vec<PassCmd>,
    error: Option<String>,
}

impl KRenderBundleEncoder {
    pub(crate) fn new(
        shared: &Arc<DeviceShared>,
        desc: &wgpu::RenderBundleEncoderDescriptor<'_>,
    ) -> Self {
        let targets = Targets::new(
            desc.color_formats.to_vec(),
            desc.depth_stencil.map(|d| d.format),
            desc.sample_count,
            desc.multiview,
        );
        // wgpu's rule: a refused descriptor is reported here, and the
        // encoder is one that `finish` refuses.
        let (read_only, error) = match crate::pass_check::check_bundle_descriptor(shared, desc) {
            Ok(read_only) => (read_only, None),
            Err(e) => {
                shared.report(KeelError::validation("create_render_bundle_encoder", e));
                (
                    ReadOnly::default(),
                    Some("the render bundle encoder is invalid".to_string()),
                )
            }
        };
        Self {
            shared: shared.clone(),
            label: desc.label.unwrap_or_default().into(),
            state: RenderState::new(shared, "RenderBundle", targets, read_only),
            cmds: Vec::new(),
            error,
        }
    }
}

impl RenderRecorder for KRenderBundleEncoder {
    fn on(&self) -> &Arc<DeviceShared> {
        &self.shared
    }
    fn push_cmd(&mut self, mut cmd: PassCmd) {
        match self.state.record(&mut cmd) {
            Ok(()) => self.cmds.push(cmd),
            Err(e) => self.fail_cmd(format!("{}: {e}", cmd.name())),
        }
    }
    fn fail_cmd(&mut self, e: String) {
        self.error.get_or_insert(e);
    }
    fn parts(&mut self) -> (&Arc<DeviceShared>, &mut GroupTable) {
        (&self.shared, &mut self.state.table)
    }
}

impl cu::RenderBundleEncoderInterface for KRenderBundleEncoder {
    render_commands!();
    fn finish(self, desc: &wgpu::RenderBundleDescriptor<'_>) -> cu::DispatchRenderBundle {
        if let Some(e) = &self.error {
            // Stock wgpu treats a refused bundle as fatal: its `finish`
            // panics with the error whatever scopes or handler are set.
            panic!("Error in RenderBundleEncoder::finish: Validation Error\n\nCaused by:\n  {e}");
        }
        let RenderState {
            targets,
            read_only,
            scope,
            table,
            ..
        } = self.state;
        cu::DispatchRenderBundle::custom(KRenderBundle(Arc::new(RenderBundle {
            shared: self.shared.clone(),
            label: desc.label.map_or(self.label, str::to_string),
            valid: self.error.is_none(),
            targets,
            read_only,
            scope,
            indirect_draws: self
                .cmds
                .iter()
                .any(|cmd| matches!(cmd, PassCmd::DrawIndirect { .. })),
            cmds: self.cmds,
            groups: table,
        })))
    }
    fn finish_boxed(
        self: Box<Self>,
        desc: &wgpu::RenderBundleDescriptor<'_>,
    ) -> cu::DispatchRenderBundle {
        (*self).finish(desc)
    }
}
