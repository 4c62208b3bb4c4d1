//! Commands inside passes: pipelines, vertex and index buffers, dynamic
//! state, draws, dispatches and ray traces (the passes themselves are in
//! `pass.rs`).
//!
//! Each command checks, in a comparison or two, that it is recorded inside
//! the kind of pass it belongs to, and that a buffer range or indirect
//! argument set lies in its buffer (`bounds.rs`); otherwise it is logged
//! and skipped, never handed to the driver. Nothing is allocated.

use crate::validate::draw::{DRAW_ARGS, DRAW_INDEXED_ARGS};
use ash::vk;

use super::pass::flipped_viewport;
use super::{
    bounds, conv, Buffer, CommandEncoder, ComputePipeline, RayTracingPipeline, RenderPipeline,
};
use crate::{BufferBinding, Rect, ShaderBindingTable, ShaderBindingTableRegion};

/// Bytes of one `VkDispatchIndirectCommand`.
const DISPATCH_ARGS: u64 = 12;

/// Logs a dispatch over the workgroup limit (out of line: the per-command
/// path is only the test).
#[cold]
#[inline(never)]
fn too_many_workgroups(x: u32, y: u32, z: u32, max: u32) {
    crate::refusal::refused!(
        "keel-hal: dispatch of [{x}, {y}, {z}] workgroups exceeds {max} per dimension; skipped"
    );
}

fn scissor(rect: &Rect<u32>) -> vk::Rect2D {
    let clamp = |v: u32| i32::try_from(v).unwrap_or(i32::MAX);
    vk::Rect2D {
        offset: vk::Offset2D {
            x: clamp(rect.x),
            y: clamp(rect.y),
        },
        extent: vk::Extent2D {
            width: rect.w,
            height: rect.h,
        },
    }
}

/// Whether `count` argument sets of `size` bytes at `offset` (a multiple of
/// 4) lie in the buffer; logs when they do not.
fn indirect_fits(buffer: &Buffer, offset: u64, count: u32, size: u64, what: &str) -> bool {
    match crate::validate::draw::indirect_problem(buffer.size, offset, count, size) {
        Some(why) => {
            crate::refusal::refused!("keel-hal: {what}: {why}; skipped");
            false
        }
        None => true,
    }
}

/// Indirect draws one call may record: `maxDrawIndirectCount` with
/// multiDrawIndirect, else one.
fn indirect_per_call(device: &super::DeviceShared) -> u32 {
    if device
        .enabled
        .has(crate::features::vulkan_column::Bit::MultiDrawIndirect)
    {
        device
            .physical
            .properties
            .limits
            .max_draw_indirect_count
            .max(1)
    } else {
        1
    }
}

/// The calls `draw_count` indirect draws of `size`-byte argument sets at
/// `offset` are recorded in, `per_call` draws at most each: `(offset,
/// count)` per call.
fn indirect_calls(
    per_call: u32,
    offset: u64,
    draw_count: u32,
    size: u64,
) -> impl Iterator<Item = (u64, u32)> {
    let per_call = per_call.max(1);
    (0..draw_count).step_by(per_call as usize).map(move |done| {
        (
            offset + u64::from(done) * size,
            per_call.min(draw_count - done),
        )
    })
}

/// Whether a vertex or index buffer binding lies in its buffer; logs when not.
fn binding_fits(binding: &BufferBinding<'_, Buffer>, what: &str) -> bool {
    let size = binding.buffer.size;
    let fits = match binding.size {
        Some(len) => bounds::byte_range_fits(size, binding.offset, len.get()),
        None => binding.offset < size,
    };
    if !fits {
        crate::refusal::refused!(
            "keel-hal: {what}: range {}+{:?} is outside the buffer of {size} bytes; skipped",
            binding.offset,
            binding.size
        );
    }
    fits
}

impl CommandEncoder {
    /// See `CommandEncoder::set_render_pipeline`.
    ///
    /// # Safety
    /// As the trait method.
    #[inline]
    pub(super) unsafe fn pass_set_render_pipeline(&mut self, pipeline: &RenderPipeline) {
        let Some(raw) = self.in_pass(true, "set_render_pipeline") else {
            return;
        };
        if pipeline.view_mask != self.temp.pass.view_mask {
            crate::refusal::refused!(
                "keel-hal: set_render_pipeline: the pipeline's view mask {:#b} is not the \
                 pass's {:#b}; skipped",
                pipeline.view_mask,
                self.temp.pass.view_mask
            );
            return;
        }
        // SAFETY: inside a render pass whose formats match the pipeline's
        // (the trait contract).
        unsafe {
            self.fns
                .cmd_bind_pipeline(raw, vk::PipelineBindPoint::GRAPHICS, pipeline.raw)
        };
        self.temp.pass.geometry = Some(pipeline.geometry);
        self.temp.pass.refresh(raw);
    }

    /// Whether a count draw (`what`) of `arg_size`-byte arguments at
    /// `offset` in `buffer`, with its count at `count.0` in `count_buffer`
    /// and at most `count.1` draws, passes the shared check
    /// (`validate::draw::count_draw_problem`); logs otherwise.
    fn count_draw_fits(
        &self,
        what: &str,
        (buffer, offset, arg_size): (&Buffer, u64, u64),
        count_buffer: &Buffer,
        (count_offset, max_count): (u64, u32),
    ) -> bool {
        let draw = crate::validate::draw::CountDraw {
            size: buffer.size,
            offset,
            arg_size,
            max_count,
            count_size: count_buffer.size,
            count_offset,
        };
        match crate::validate::draw::count_draw_problem(self.device.features, draw) {
            Some(why) => {
                crate::refusal::refused!("keel-hal: {what}: {why}; skipped");
                false
            }
            None => true,
        }
    }

    /// The command buffer for a vertex draw (`what`): inside a render pass,
    /// no mesh pipeline bound (one tag, `PassState::vertex_draw`); logs
    /// otherwise.
    #[inline(always)]
    fn vertex_draw(&self, what: &str) -> Option<vk::CommandBuffer> {
        match self.temp.pass.vertex_draw {
            Some(raw) => Some(raw),
            None => self.vertex_draw_refused(what),
        }
    }

    /// [`Self::vertex_draw`] when the flag says no: the reason, logged (or
    /// the command buffer, should the checks spelled out pass).
    #[cold]
    #[inline(never)]
    fn vertex_draw_refused(&self, what: &str) -> Option<vk::CommandBuffer> {
        let raw = self.in_pass(true, what)?;
        if let Some(why) = crate::validate::draw::vertex_draw_problem(self.temp.pass.geometry) {
            crate::refusal::refused!("keel-hal: {what}: {why}; skipped");
            return None;
        }
        Some(raw)
    }

    /// Logs why `dispatch` records nothing: no recording, or no compute
    /// pass (out of line).
    #[cold]
    #[inline(never)]
    fn dispatch_refused(&self) {
        // With `PassState::dispatch` unset this finds the reason and logs
        // it; the command buffer it could answer is not used.
        let _ = self.in_pass(false, "dispatch");
    }

    /// The command buffer and mesh functions for a mesh draw (`what`, with
    /// `groups` for a direct one): checked as on every backend
    /// (`validate/draw.rs`); logs otherwise.
    fn mesh_draw(
        &self,
        what: &str,
        groups: Option<[u32; 3]>,
    ) -> Option<(vk::CommandBuffer, &ash::ext::mesh_shader::Device)> {
        let raw = self.in_pass(true, what)?;
        let device = &*self.device;
        let problem = crate::validate::draw::mesh_draw_problem(
            device.features,
            &device.limits,
            self.temp.pass.geometry,
            groups,
        );
        match (problem, device.mesh.as_ref()) {
            (None, Some(fns)) => Some((raw, fns)),
            (Some(why), _) => {
                crate::refusal::refused!("keel-hal: {what}: {why}; skipped");
                None
            }
            (None, None) => {
                crate::refusal::refused!(
                    "keel-hal: {what}: VK_EXT_mesh_shader is not enabled; skipped"
                );
                None
            }
        }
    }

    /// See `CommandEncoder::draw_mesh_tasks`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_draw_mesh_tasks(&mut self, x: u32, y: u32, z: u32) {
        let Some((raw, fns)) = self.mesh_draw("draw_mesh_tasks", Some([x, y, z])) else {
            return;
        };
        // SAFETY: inside a render pass with a mesh pipeline bound (checked)
        // and its bind groups (the trait contract); the device enabled
        // VK_EXT_mesh_shader with taskShader and meshShader; the counts are
        // within the first stage's limits (checked).
        unsafe { fns.cmd_draw_mesh_tasks(raw, x, y, z) };
    }

    /// See `CommandEncoder::draw_mesh_tasks_indirect`: one call per
    /// `maxDrawIndirectCount` with multiDrawIndirect, else one per draw.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_draw_mesh_tasks_indirect(
        &mut self,
        buffer: &Buffer,
        offset: u64,
        draw_count: u32,
    ) {
        let what = "draw_mesh_tasks_indirect";
        let Some((raw, fns)) = self.mesh_draw(what, None) else {
            return;
        };
        let size = crate::validate::draw::MESH_ARGS;
        if !indirect_fits(buffer, offset, draw_count, size, what) {
            return;
        }
        for (at, count) in indirect_calls(indirect_per_call(&self.device), offset, draw_count, size)
        {
            // SAFETY: as `pass_draw_mesh_tasks`, with the buffer in
            // `INDIRECT` (the trait contract); `count` argument sets at `at`
            // lie in the buffer (checked); `count` is 1 without
            // multiDrawIndirect and at most maxDrawIndirectCount; the stride
            // is the argument size.
            unsafe { fns.cmd_draw_mesh_tasks_indirect(raw, buffer.raw, at, count, size as u32) };
        }
    }

    /// See `CommandEncoder::draw_mesh_tasks_indirect_count`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_draw_mesh_tasks_indirect_count(
        &mut self,
        buffer: &Buffer,
        offset: u64,
        count_buffer: &Buffer,
        count: (u64, u32),
    ) {
        let what = "draw_mesh_tasks_indirect_count";
        let (count_offset, max_count) = count;
        let Some((raw, fns)) = self.mesh_draw(what, None) else {
            return;
        };
        let arg_size = crate::validate::draw::MESH_ARGS;
        if !self.count_draw_fits(what, (buffer, offset, arg_size), count_buffer, count) {
            return;
        }
        // SAFETY: as `pass_draw_mesh_tasks_indirect`; the device enabled
        // drawIndirectCount (opened with MULTI_DRAW_INDIRECT_COUNT,
        // checked); the count lies in its buffer at a 4-byte-aligned offset.
        unsafe {
            fns.cmd_draw_mesh_tasks_indirect_count(
                raw,
                buffer.raw,
                offset,
                count_buffer.raw,
                count_offset,
                max_count,
                arg_size as u32,
            )
        };
    }

    /// See `CommandEncoder::set_index_buffer`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_set_index_buffer(
        &mut self,
        binding: BufferBinding<'_, Buffer>,
        format: wgt::IndexFormat,
    ) {
        let Some(raw) = self.in_pass(true, "set_index_buffer") else {
            return;
        };
        if !binding_fits(&binding, "set_index_buffer") {
            return;
        }
        // SAFETY: inside a render pass; the buffer has INDEX usage and is
        // in `INDEX` (the trait contract); the offset lies in it (checked).
        unsafe {
            self.fns.cmd_bind_index_buffer(
                raw,
                binding.buffer.raw,
                binding.offset,
                conv::map_index_format(format),
            )
        };
    }

    /// See `CommandEncoder::set_vertex_buffer`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_set_vertex_buffer(
        &mut self,
        index: u32,
        binding: BufferBinding<'_, Buffer>,
    ) {
        let Some(raw) = self.in_pass(true, "set_vertex_buffer") else {
            return;
        };
        if !binding_fits(&binding, "set_vertex_buffer") {
            return;
        }
        // The size to the end, rather than VK_WHOLE_SIZE, which validation
        // layers before 1.3.250 or so reject here.
        let buffer = binding.buffer;
        let size = binding
            .size
            .map_or(buffer.size - binding.offset, |s| s.get());
        // SAFETY: inside a render pass; the buffer has VERTEX usage and is
        // in `VERTEX` (the trait contract); the range lies in it (checked).
        unsafe {
            self.fns.cmd_bind_vertex_buffers2(
                raw,
                index,
                &[binding.buffer.raw],
                &[binding.offset],
                Some(&[size]),
                None,
            )
        };
    }

    /// See `CommandEncoder::set_viewport`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_set_viewport(
        &mut self,
        rect: &Rect<f32>,
        depth_range: std::ops::Range<f32>,
    ) {
        let Some(raw) = self.in_pass(true, "set_viewport") else {
            return;
        };
        let viewport = flipped_viewport(rect, depth_range);
        // SAFETY: inside a render pass; negative heights are core (1.1).
        unsafe { self.fns.cmd_set_viewport(raw, 0, &[viewport]) };
    }

    /// See `CommandEncoder::set_scissor_rect`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_set_scissor_rect(&mut self, rect: &Rect<u32>) {
        let Some(raw) = self.in_pass(true, "set_scissor_rect") else {
            return;
        };
        // SAFETY: inside a render pass; the rectangle lies in the render
        // area (the trait contract), so its offsets fit an i32.
        unsafe { self.fns.cmd_set_scissor(raw, 0, &[scissor(rect)]) };
    }

    /// See `CommandEncoder::set_stencil_reference`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_set_stencil_reference(&mut self, value: u32) {
        let Some(raw) = self.in_pass(true, "set_stencil_reference") else {
            return;
        };
        // SAFETY: inside a render pass.
        unsafe {
            self.fns
                .cmd_set_stencil_reference(raw, vk::StencilFaceFlags::FRONT_AND_BACK, value)
        };
    }

    /// See `CommandEncoder::set_blend_constants`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_set_blend_constants(&mut self, color: &[f32; 4]) {
        let Some(raw) = self.in_pass(true, "set_blend_constants") else {
            return;
        };
        // SAFETY: inside a render pass.
        unsafe { self.fns.cmd_set_blend_constants(raw, color) };
    }

    /// See `CommandEncoder::draw`.
    ///
    /// # Safety
    /// As the trait method.
    #[inline]
    pub(super) unsafe fn pass_draw(
        &mut self,
        first_vertex: u32,
        vertex_count: u32,
        first_instance: u32,
        instance_count: u32,
    ) {
        let Some(raw) = self.vertex_draw("draw") else {
            return;
        };
        // SAFETY: inside a render pass with the pipeline, bind groups and
        // vertex buffers bound and the vertices in range (the trait contract).
        unsafe {
            self.fns.cmd_draw(
                raw,
                vertex_count,
                instance_count,
                first_vertex,
                first_instance,
            )
        };
    }

    /// See `CommandEncoder::draw_indexed`.
    ///
    /// # Safety
    /// As the trait method.
    #[inline]
    pub(super) unsafe fn pass_draw_indexed(
        &mut self,
        first_index: u32,
        index_count: u32,
        base_vertex: i32,
        first_instance: u32,
        instance_count: u32,
    ) {
        let Some(raw) = self.vertex_draw("draw_indexed") else {
            return;
        };
        // SAFETY: as `pass_draw`, plus an index buffer bound with the
        // indices in range (the trait contract).
        unsafe {
            self.fns.cmd_draw_indexed(
                raw,
                index_count,
                instance_count,
                first_index,
                base_vertex,
                first_instance,
            )
        };
    }

    /// Records `draw_count` indirect draws of `size`-byte arguments: one
    /// call per `maxDrawIndirectCount` with multiDrawIndirect, else one
    /// call per draw.
    ///
    /// # Safety
    /// As `draw_indirect`/`draw_indexed_indirect`; `indexed` picks which.
    unsafe fn indirect_draws(
        &mut self,
        buffer: &Buffer,
        offset: u64,
        draw_count: u32,
        indexed: bool,
    ) {
        let (what, size) = if indexed {
            ("draw_indexed_indirect", DRAW_INDEXED_ARGS)
        } else {
            ("draw_indirect", DRAW_ARGS)
        };
        let Some(raw) = self.vertex_draw(what) else {
            return;
        };
        if !indirect_fits(buffer, offset, draw_count, size, what) {
            return;
        }
        let device = &self.device;
        for (at, count) in indirect_calls(indirect_per_call(device), offset, draw_count, size) {
            // SAFETY: inside a render pass with everything bound and the
            // buffer in `INDIRECT` (the trait contract); `count` argument
            // sets at `at` lie in the buffer (checked above); `count` is 1
            // without multiDrawIndirect and at most maxDrawIndirectCount;
            // the stride is the argument size (>= the struct, a multiple of 4).
            unsafe {
                if indexed {
                    device
                        .raw
                        .cmd_draw_indexed_indirect(raw, buffer.raw, at, count, size as u32)
                } else {
                    device
                        .raw
                        .cmd_draw_indirect(raw, buffer.raw, at, count, size as u32)
                }
            };
        }
    }

    /// See `CommandEncoder::draw_indirect`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_draw_indirect(&mut self, buffer: &Buffer, offset: u64, count: u32) {
        // SAFETY: forwarded contract.
        unsafe { self.indirect_draws(buffer, offset, count, false) };
    }

    /// See `CommandEncoder::draw_indexed_indirect`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_draw_indexed_indirect(
        &mut self,
        buffer: &Buffer,
        offset: u64,
        count: u32,
    ) {
        // SAFETY: forwarded contract.
        unsafe { self.indirect_draws(buffer, offset, count, true) };
    }

    /// See `CommandEncoder::draw_indirect_count` (`indexed`: the indexed
    /// one): checked as on every backend (`validate/draw.rs`), then one
    /// `vkCmdDraw(Indexed)IndirectCount`.
    ///
    /// # Safety
    /// As the trait methods.
    pub(super) unsafe fn pass_draw_indirect_count(
        &mut self,
        buffer: &Buffer,
        offset: u64,
        count_buffer: &Buffer,
        count: (u64, u32),
        indexed: bool,
    ) {
        let (count_offset, max_count) = count;
        let (what, arg_size) = if indexed {
            ("draw_indexed_indirect_count", DRAW_INDEXED_ARGS)
        } else {
            ("draw_indirect_count", DRAW_ARGS)
        };
        let Some(raw) = self.vertex_draw(what) else {
            return;
        };
        if !self.count_draw_fits(what, (buffer, offset, arg_size), count_buffer, count) {
            return;
        }
        let device = &self.device.raw;
        // SAFETY: inside a render pass with everything bound and both
        // buffers in `INDIRECT` (the trait contract); the device enabled
        // drawIndirectCount (it was opened with MULTI_DRAW_INDIRECT_COUNT,
        // checked above); `max_count` argument sets and the count lie in
        // their buffers at 4-byte-aligned offsets; the stride is the
        // argument size.
        unsafe {
            if indexed {
                device.cmd_draw_indexed_indirect_count(
                    raw,
                    buffer.raw,
                    offset,
                    count_buffer.raw,
                    count_offset,
                    max_count,
                    arg_size as u32,
                )
            } else {
                device.cmd_draw_indirect_count(
                    raw,
                    buffer.raw,
                    offset,
                    count_buffer.raw,
                    count_offset,
                    max_count,
                    arg_size as u32,
                )
            }
        }
    }

    /// See `CommandEncoder::set_compute_pipeline`.
    ///
    /// # Safety
    /// As the trait method.
    #[inline]
    pub(super) unsafe fn pass_set_compute_pipeline(&mut self, pipeline: &ComputePipeline) {
        let Some(raw) = self.in_pass(false, "set_compute_pipeline") else {
            return;
        };
        // SAFETY: inside a compute pass.
        unsafe {
            self.fns
                .cmd_bind_pipeline(raw, vk::PipelineBindPoint::COMPUTE, pipeline.raw)
        };
    }

    /// See `CommandEncoder::dispatch`.
    ///
    /// # Safety
    /// As the trait method.
    #[inline]
    pub(super) unsafe fn pass_dispatch(&mut self, count: [u32; 3]) {
        // Set only inside a compute pass of the recording in progress.
        let Some(raw) = self.temp.pass.dispatch else {
            self.dispatch_refused();
            return;
        };
        let max = self.temp.pass.max_workgroups;
        let [x, y, z] = count;
        if x.max(y).max(z) > max {
            // Counts as scalars: the array is not spilled to the stack on
            // the path that passes.
            too_many_workgroups(x, y, z, max);
            return;
        }
        // SAFETY: inside a compute pass with the pipeline and its bind
        // groups bound (the trait contract); counts within the limit (checked).
        unsafe { self.fns.cmd_dispatch(raw, x, y, z) };
    }

    /// See `CommandEncoder::dispatch_indirect`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_dispatch_indirect(&mut self, buffer: &Buffer, offset: u64) {
        let Some(raw) = self.in_pass(false, "dispatch_indirect") else {
            return;
        };
        if !indirect_fits(buffer, offset, 1, DISPATCH_ARGS, "dispatch_indirect") {
            return;
        }
        // SAFETY: inside a compute pass with everything bound, the buffer in
        // `INDIRECT` (the trait contract); the counts lie in it (checked).
        unsafe { self.fns.cmd_dispatch_indirect(raw, buffer.raw, offset) };
    }

    /// See `CommandEncoder::set_ray_tracing_pipeline`.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_set_ray_tracing_pipeline(&mut self, pipeline: &RayTracingPipeline) {
        let Some(raw) = self.in_ray_tracing_pass("set_ray_tracing_pipeline") else {
            return;
        };
        // SAFETY: inside a ray-tracing pass (which only begins on a device
        // with ray-tracing pipelines).
        unsafe {
            self.fns
                .cmd_bind_pipeline(raw, vk::PipelineBindPoint::RAY_TRACING_KHR, pipeline.raw)
        };
    }

    /// See `CommandEncoder::trace_rays`. The table's regions become device
    /// addresses (its buffer's address plus each offset); the callable
    /// region is empty.
    ///
    /// # Safety
    /// As the trait method.
    pub(super) unsafe fn pass_trace_rays(
        &mut self,
        table: &ShaderBindingTable<Buffer>,
        size: [u32; 3],
    ) {
        let Some(raw) = self.in_ray_tracing_pass("trace_rays") else {
            return;
        };
        let Some(fns) = &self.device.ray_tracing else {
            return;
        };
        if !trace_size_fits(&self.device.physical, size) {
            crate::refusal::refused!(
                "keel-hal: trace_rays of {size:?} rays exceeds the adapter's limits; skipped"
            );
            return;
        }
        let regions = [table.ray_generation, table.miss, table.hit];
        if regions
            .iter()
            .any(|r| !bounds::byte_range_fits(table.buffer.size, r.offset, r.size))
            || table.ray_generation.size == 0
        {
            crate::refusal::refused!(
                "keel-hal: trace_rays: the table's regions do not lie in its buffer of {} bytes \
                 (or it has no ray-generation record); skipped",
                table.buffer.size
            );
            return;
        }
        let info = vk::BufferDeviceAddressInfo::default().buffer(table.buffer.raw);
        // SAFETY: the table's buffer is live and was made with
        // `SHADER_DEVICE_ADDRESS` usage (the trait contract: it came from
        // `create_shader_binding_table`).
        let base = unsafe { self.fns.get_buffer_device_address(&info) };
        let region = |r: ShaderBindingTableRegion| match r.size {
            0 => vk::StridedDeviceAddressRegionKHR::default(),
            _ => vk::StridedDeviceAddressRegionKHR {
                device_address: base + r.offset,
                stride: r.stride,
                size: r.size,
            },
        };
        let regions = [
            region(table.ray_generation),
            region(table.miss),
            region(table.hit),
            vk::StridedDeviceAddressRegionKHR::default(),
        ];
        // SAFETY: inside a ray-tracing pass with the table's pipeline and
        // its bind groups bound (the trait contract); the regions lie in
        // the table's buffer and the size within the limits (checked).
        unsafe { fns.cmd_trace_rays(raw, &regions, size) };
    }
}

/// Whether `size` rays fit the adapter's limits: per dimension, the compute
/// workgroup count times size (Vulkan's bound), and in all
/// `maxRayDispatchInvocationCount`.
fn trace_size_fits(physical: &super::physical::PhysicalInfo, size: [u32; 3]) -> bool {
    let l = &physical.properties.limits;
    let per_dim = (0..3).all(|i| {
        let max = u64::from(l.max_compute_work_group_count[i])
            * u64::from(l.max_compute_work_group_size[i]);
        u64::from(size[i]) <= max
    });
    let total = size.iter().map(|&n| u64::from(n)).product::<u64>();
    per_dim && total <= u64::from(physical.ray_limits.max_ray_dispatch_invocation_count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indirect_draws_split_into_calls_of_at_most_per_call() {
        let calls: Vec<_> = indirect_calls(4, 16, 10, 12).collect();
        assert_eq!(calls, vec![(16, 4), (64, 4), (112, 2)]);
        let one: Vec<_> = indirect_calls(1, 0, 3, 20).collect();
        assert_eq!(one, vec![(0, 1), (20, 1), (40, 1)]);
        assert_eq!(indirect_calls(0, 0, 2, 16).count(), 2, "0 per call means 1");
        assert_eq!(indirect_calls(8, 0, 0, 16).count(), 0);
    }
}
