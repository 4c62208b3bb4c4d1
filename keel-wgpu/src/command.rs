//! Recording: wgpu's command encoders, passes and render bundles record
//! commands that hold their resources; `Queue::submit` replays them into
//! keel-hal with the barriers the usage tracker finds (`replay.rs`).

use std::ops::Range;
use std::sync::Arc;

use keel_hal::dynamic::{DynCommandBuffer, DynCommandEncoder};
use parking_lot::Mutex;

use crate::binding::BindGroup;
use crate::pipeline::{ComputePipeline, RenderPipeline};
use crate::ptr_map::PtrMap;
use crate::resource::{Buffer, QuerySet, Texture, TextureView};
use crate::shared::DeviceShared;
use crate::tracker::Tracker;

/// Where in a texture a copy starts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TexelBase {
    pub mip_level: u32,
    pub origin: wgpu::Origin3d,
    pub aspect: wgpu::TextureAspect,
}

/// A command outside passes.
#[derive(Debug)]
pub(crate) enum Cmd {
    CopyBufferToBuffer {
        src: Arc<Buffer>,
        src_offset: u64,
        dst: Arc<Buffer>,
        dst_offset: u64,
        size: u64,
    },
    CopyBufferToTexture {
        src: Arc<Buffer>,
        layout: wgpu::TexelCopyBufferLayout,
        dst: Arc<Texture>,
        base: TexelBase,
        size: wgpu::Extent3d,
    },
    CopyTextureToBuffer {
        src: Arc<Texture>,
        base: TexelBase,
        dst: Arc<Buffer>,
        layout: wgpu::TexelCopyBufferLayout,
        size: wgpu::Extent3d,
    },
    CopyTextureToTexture {
        src: Arc<Texture>,
        src_base: TexelBase,
        dst: Arc<Texture>,
        dst_base: TexelBase,
        size: wgpu::Extent3d,
    },
    ClearBuffer {
        buffer: Arc<Buffer>,
        range: Range<u64>,
    },
    ClearTexture {
        texture: Arc<Texture>,
        range: wgpu::ImageSubresourceRange,
    },
    WriteTimestamp {
        set: Arc<QuerySet>,
        index: u32,
    },
    ResolveQuerySet {
        set: Arc<QuerySet>,
        queries: Range<u32>,
        dst: Arc<Buffer>,
        offset: u64,
    },
    PushDebugGroup(String),
    PopDebugGroup,
    InsertDebugMarker(String),
    ComputePass(Box<ComputePassRecord>),
    RenderPass(Box<RenderPassRecord>),
}

impl Cmd {
    /// Whether this is a queue-side write (a `Queue::write_*` copy, an
    /// upload or a clear) into a resource the program destroyed since. The
    /// write took its data at the call, as wgpu's do; what it would write
    /// can never be read again, so the submit leaves it out instead of
    /// refusing it (wgpu runs it, into memory freed after: the same result).
    pub(crate) fn writes_destroyed(&self) -> bool {
        use std::sync::atomic::Ordering::Acquire;
        match self {
            Cmd::CopyBufferToBuffer { dst, .. } | Cmd::CopyTextureToBuffer { dst, .. } => {
                dst.destroyed.load(Acquire)
            }
            Cmd::ClearBuffer { buffer, .. } => buffer.destroyed.load(Acquire),
            Cmd::CopyBufferToTexture { dst, .. } | Cmd::CopyTextureToTexture { dst, .. } => {
                dst.destroyed.load(Acquire) && !dst.is_frame()
            }
            Cmd::ClearTexture { texture, .. } => {
                texture.destroyed.load(Acquire) && !texture.is_frame()
            }
            _ => false,
        }
    }
}

/// Timestamps a pass writes at its start and end.
#[derive(Debug)]
pub(crate) struct PassTimestamps {
    pub set: Arc<QuerySet>,
    pub begin: Option<u32>,
    pub end: Option<u32>,
}

/// A recorded compute pass.
#[derive(Debug, Default)]
pub(crate) struct ComputePassRecord {
    pub label: Option<String>,
    pub timestamps: Option<PassTimestamps>,
    pub cmds: Vec<PassCmd>,
    /// The groups its `set_bind_group` commands name.
    pub groups: GroupTable,
}

/// Where a `set_bind_group` command's group is in its pass's (or bundle's)
/// [`GroupTable`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GroupSlot(u32);

impl GroupSlot {
    /// The slot's place in its table.
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

/// The bind groups a pass or a bundle sets, each held once. Commands name
/// a group by its slot, so setting a group costs one lookup here and no
/// reference count: a group shared by passes on several threads is not a
/// cache line they all write per command. The table is also the list of
/// distinct groups the usage scope, the tracker and the submit checks
/// walk, instead of every command.
#[derive(Debug, Default)]
pub(crate) struct GroupTable {
    groups: Vec<Arc<BindGroup>>,
    slots: PtrMap<u32>,
}

impl GroupTable {
    /// `group`'s slot; the first time, the table keeps a reference.
    pub(crate) fn intern(&mut self, group: &Arc<BindGroup>) -> GroupSlot {
        let next = self.groups.len() as u32;
        let slot = *self
            .slots
            .entry(Arc::as_ptr(group) as usize)
            .or_insert(next);
        if slot == next {
            self.groups.push(group.clone());
        }
        GroupSlot(slot)
    }

    /// The group in `slot` (one this table gave out).
    pub(crate) fn get(&self, slot: GroupSlot) -> Option<&Arc<BindGroup>> {
        self.groups.get(slot.0 as usize)
    }

    /// Every group in the table, each once, in the order first set.
    pub(crate) fn all(&self) -> &[Arc<BindGroup>] {
        &self.groups
    }

    /// The number of groups (slots are `0..len`).
    pub(crate) fn len(&self) -> usize {
        self.groups.len()
    }
}

/// A colour attachment.
#[derive(Debug)]
pub(crate) struct ColorRecord {
    pub view: Arc<TextureView>,
    pub resolve: Option<Arc<TextureView>>,
    pub load: wgpu::LoadOp<wgpu::Color>,
    pub store: wgpu::StoreOp,
    /// The slice of a 3D view drawn into (checked, then refused:
    /// keel-hal draws into 2D subresources only).
    pub depth_slice: Option<u32>,
}

/// A depth-stencil attachment.
#[derive(Debug)]
pub(crate) struct DepthRecord {
    pub view: Arc<TextureView>,
    pub depth: Option<wgpu::Operations<f32>>,
    pub stencil: Option<wgpu::Operations<u32>>,
}

/// A recorded render pass.
#[derive(Debug, Default)]
pub(crate) struct RenderPassRecord {
    pub label: Option<String>,
    pub colors: Vec<Option<ColorRecord>>,
    pub depth: Option<DepthRecord>,
    pub timestamps: Option<PassTimestamps>,
    pub occlusion: Option<Arc<QuerySet>>,
    pub multiview_mask: Option<std::num::NonZeroU32>,
    pub cmds: Vec<PassCmd>,
    /// The groups its `set_bind_group` commands name.
    pub groups: GroupTable,
}

/// A command inside a pass or a render bundle.
#[derive(Debug)]
pub(crate) enum PassCmd {
    SetComputePipeline(Arc<ComputePipeline>),
    SetRenderPipeline(Arc<RenderPipeline>),
    SetBindGroup {
        index: u32,
        /// In the pass's or bundle's [`GroupTable`].
        group: Option<GroupSlot>,
        offsets: Vec<u32>,
    },
    SetImmediates {
        offset: u32,
        data: Vec<u8>,
    },
    Dispatch([u32; 3]),
    DispatchIndirect {
        buffer: Arc<Buffer>,
        offset: u64,
    },
    SetIndexBuffer {
        buffer: Arc<Buffer>,
        format: wgpu::IndexFormat,
        offset: u64,
        size: Option<wgpu::BufferSize>,
    },
    SetVertexBuffer {
        slot: u32,
        buffer: Option<Arc<Buffer>>,
        offset: u64,
        size: Option<wgpu::BufferSize>,
    },
    SetBlendConstant(wgpu::Color),
    SetScissorRect([u32; 4]),
    SetViewport {
        rect: [f32; 4],
        depth: Range<f32>,
    },
    SetStencilReference(u32),
    Draw {
        vertices: Range<u32>,
        instances: Range<u32>,
    },
    DrawIndexed {
        indices: Range<u32>,
        base_vertex: i32,
        instances: Range<u32>,
    },
    DrawIndirect {
        buffer: Arc<Buffer>,
        offset: u64,
        count: u32,
        indexed: bool,
        /// The vertex (or, indexed, index) and instance limits of the
        /// buffers bound at the draw, for the GPU check of its arguments
        /// (`indirect_check.rs`); filled in when recorded
        /// (`pass_check.rs`).
        limits: [u64; 2],
    },
    /// `multi_draw_indirect_count`, `multi_draw_indexed_indirect_count`,
    /// `multi_draw_mesh_tasks_indirect_count`.
    DrawIndirectCount {
        buffer: Arc<Buffer>,
        offset: u64,
        count_buffer: Arc<Buffer>,
        count_offset: u64,
        max_count: u32,
        family: DrawFamily,
    },
    /// `draw_mesh_tasks`: workgroup counts.
    DrawMeshTasks([u32; 3]),
    /// `draw_mesh_tasks_indirect` / `multi_draw_mesh_tasks_indirect`.
    DrawMeshTasksIndirect {
        buffer: Arc<Buffer>,
        offset: u64,
        count: u32,
    },
    PushDebugGroup(String),
    PopDebugGroup,
    InsertDebugMarker(String),
    WriteTimestamp {
        set: Arc<QuerySet>,
        index: u32,
    },
    BeginOcclusionQuery(u32),
    EndOcclusionQuery,
    BeginStatisticsQuery {
        set: Arc<QuerySet>,
        index: u32,
    },
    EndStatisticsQuery,
    ExecuteBundles(Vec<Arc<RenderBundle>>),
}

/// Which draw commands a draw is of (wgpu-core's `DrawCommandFamily`):
/// what it needs bound and how big one argument set is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DrawFamily {
    /// `draw*`: vertices.
    Draw,
    /// `draw_indexed*`: an index buffer.
    Indexed,
    /// `draw_mesh_tasks*`: a mesh pipeline.
    Mesh,
}

impl DrawFamily {
    /// Bytes of one indirect argument set (wgpu's `DrawIndirectArgs`,
    /// `DrawIndexedIndirectArgs`, `DispatchIndirectArgs`).
    pub(crate) fn args_size(self) -> u64 {
        match self {
            DrawFamily::Draw => 16,
            DrawFamily::Indexed => 20,
            DrawFamily::Mesh => 12,
        }
    }

    /// The family of a vertex draw, indexed or not.
    pub(crate) fn vertex(indexed: bool) -> Self {
        if indexed {
            DrawFamily::Indexed
        } else {
            DrawFamily::Draw
        }
    }
}

impl PassCmd {
    /// The wgpu call that recorded the command, for messages.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            PassCmd::SetComputePipeline(_) | PassCmd::SetRenderPipeline(_) => "set_pipeline",
            PassCmd::SetBindGroup { .. } => "set_bind_group",
            PassCmd::SetImmediates { .. } => "set_immediates",
            PassCmd::Dispatch(_) => "dispatch_workgroups",
            PassCmd::DispatchIndirect { .. } => "dispatch_workgroups_indirect",
            PassCmd::SetIndexBuffer { .. } => "set_index_buffer",
            PassCmd::SetVertexBuffer { .. } => "set_vertex_buffer",
            PassCmd::SetBlendConstant(_) => "set_blend_constant",
            PassCmd::SetScissorRect(_) => "set_scissor_rect",
            PassCmd::SetViewport { .. } => "set_viewport",
            PassCmd::SetStencilReference(_) => "set_stencil_reference",
            PassCmd::Draw { .. } => "draw",
            PassCmd::DrawIndexed { .. } => "draw_indexed",
            PassCmd::DrawIndirect { indexed: false, .. } => "draw_indirect",
            PassCmd::DrawIndirect { indexed: true, .. } => "draw_indexed_indirect",
            PassCmd::DrawIndirectCount {
                family: DrawFamily::Mesh,
                ..
            } => "multi_draw_mesh_tasks_indirect_count",
            PassCmd::DrawIndirectCount { .. } => "multi_draw_indirect_count",
            PassCmd::DrawMeshTasks(_) => "draw_mesh_tasks",
            PassCmd::DrawMeshTasksIndirect { .. } => "draw_mesh_tasks_indirect",
            PassCmd::PushDebugGroup(_) => "push_debug_group",
            PassCmd::PopDebugGroup => "pop_debug_group",
            PassCmd::InsertDebugMarker(_) => "insert_debug_marker",
            PassCmd::WriteTimestamp { .. } => "write_timestamp",
            PassCmd::BeginOcclusionQuery(_) => "begin_occlusion_query",
            PassCmd::EndOcclusionQuery => "end_occlusion_query",
            PassCmd::BeginStatisticsQuery { .. } => "begin_pipeline_statistics_query",
            PassCmd::EndStatisticsQuery => "end_pipeline_statistics_query",
            PassCmd::ExecuteBundles(_) => "execute_bundles",
        }
    }
}

/// A finished render bundle: commands replayed inside render passes,
/// with what they use and the attachments they were recorded for.
#[derive(Debug)]
pub(crate) struct RenderBundle {
    pub shared: Arc<DeviceShared>,
    pub label: String,
    /// Whether it was recorded without an error; an invalid bundle may not
    /// be executed.
    pub valid: bool,
    pub targets: crate::pipeline::Targets,
    pub read_only: crate::pass_check::ReadOnly,
    pub scope: crate::pass_check::UsageScope,
    pub cmds: Vec<PassCmd>,
    /// The groups its `set_bind_group` commands name.
    pub groups: GroupTable,
    /// It has an indirect draw (whose GPU check a pass executing it plans).
    pub indirect_draws: bool,
}

/// What an encoder has recorded so far, shared with its open pass.
#[derive(Debug, Default)]
pub(crate) struct Recording {
    pub cmds: Vec<Cmd>,
    /// The first recording error; the command buffer is invalid.
    pub error: Option<String>,
    /// A pass is open: the encoder itself may not record.
    pub pass_open: bool,
    /// Debug groups pushed on the encoder and not yet popped.
    pub debug_depth: u32,
    /// The encoder was finished: what is left here is what a pass still
    /// open would add, which wgpu refuses.
    pub ended: bool,
    /// What the submit checks beyond the replay's tracker (filled at
    /// `finish`, and by `transition_resources` as it is recorded).
    pub submit_checks: SubmitChecks,
}

/// What wgpu-core's `validate_command_buffer` checks at submit that the
/// replay's tracker does not hold: the query sets the command buffer uses
/// (destroyed ones fail), the bind groups set in compute passes (every
/// one, used by a dispatch or not: a destroyed resource in any fails),
/// the resources `transition_resources` named (destroyed or mapped ones
/// fail); and the queries it writes, which the submit marks written.
#[derive(Debug, Default)]
pub(crate) struct SubmitChecks {
    pub query_sets: Vec<Arc<QuerySet>>,
    pub groups: Vec<Arc<BindGroup>>,
    pub buffers: Vec<Arc<Buffer>>,
    pub textures: Vec<Arc<Texture>>,
    pub query_writes: Vec<(Arc<QuerySet>, u32)>,
}

impl Recording {
    pub(crate) fn fail(&mut self, message: impl Into<String>) {
        if self.error.is_none() {
            self.error = Some(message.into());
        }
    }
}

/// A command buffer encoded at `finish` into a keel-hal command buffer of
/// its own, with the uses the submit resolves (`tracker.rs`).
#[derive(Debug)]
pub(crate) struct Encoded {
    pub encoder: Box<dyn DynCommandEncoder>,
    pub buffer: Box<dyn DynCommandBuffer>,
    pub tracker: Tracker,
}

/// A finished command buffer: encoded already (`encoded`), or replayed at
/// submit (one that uses a surface frame). `recording` keeps its commands
/// (and so every object they use) and its error until the submit.
#[derive(Debug)]
pub(crate) struct CommandBuffer {
    pub shared: Arc<DeviceShared>,
    pub recording: Mutex<Option<Recording>>,
    pub encoded: Mutex<Option<Encoded>>,
}

impl Drop for CommandBuffer {
    fn drop(&mut self) {
        // Never submitted: the encoder goes back to the pool.
        if let Some(encoded) = self.encoded.get_mut().take() {
            // SAFETY: the buffer came from the encoder (ended at `finish`)
            // and was never submitted.
            unsafe {
                self.shared
                    .recycle_encoder(encoded.encoder, vec![encoded.buffer])
            };
        }
    }
}
