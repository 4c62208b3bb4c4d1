//! The raw side's samples: what each workload costs written directly in Vulkan.

use ash::vk;

use super::arena::Arena;
use super::{descriptor_type, layout_bindings, vk_err, Raw};
use crate::count::Timer;
use crate::workload::{
    self, Kind, Mem, Pass, SetFloor, Side, Workload, ENCODE_GROUPS, LAYOUTS, TARGET_SIZE,
    UPLOAD_WRITE,
};

/// What the buffer arena was reserved for: memory kind, buffer size, count.
pub(super) type ArenaKey = (Mem, u64, usize);

impl Side for Raw {
    fn adapter_name(&self) -> &str {
        &self.report.name
    }

    fn sample_metrics(&mut self, work: &Workload) -> Result<Option<Vec<f64>>, String> {
        if !work.is_acceleration() {
            return Ok(self.sample(work)?.map(|ns| vec![ns]));
        }
        if self.accel.is_none() {
            self.accel = Some(super::accel::RawAccel::new(
                &self.instance,
                self.pdev,
                self.family,
            )?);
        }
        match self.accel.as_mut() {
            Some(accel) => accel.sample(work),
            None => Ok(None),
        }
    }

    fn sample(&mut self, work: &Workload) -> Result<Option<f64>, String> {
        match *work {
            Workload::BindGroups {
                layouts,
                groups,
                floor: SetFloor::Allocate,
            } => self.churn(layouts, groups).map(Some),
            Workload::BindGroups {
                layouts,
                groups,
                floor: SetFloor::Reuse,
            } => self.reuse(layouts, groups).map(Some),
            Workload::BindGroupLayouts { count } => self.set_layouts(count).map(Some),
            Workload::Buffers {
                size,
                mem,
                holes,
                iters,
                live,
            } => {
                self.make_holes(mem, holes)?;
                self.buffers(size, mem, iters, live).map(Some)
            }
            Workload::Encode { pass, commands } => self.encode(pass, commands).map(Some),
            Workload::Compaction { .. } | Workload::BlasCreate { .. } => Ok(None),
            Workload::External { size, iters } => self.external(size, iters).map(Some),
            // No floor: the workload compares the two hals' shader
            // translation (native) and submission path (both rows).
            Workload::WorkgroupZero { .. } => Ok(None),
        }
    }
}

fn buffer_usage(mem: Mem) -> vk::BufferUsageFlags {
    match mem {
        Mem::Device => {
            vk::BufferUsageFlags::STORAGE_BUFFER
                | vk::BufferUsageFlags::TRANSFER_SRC
                | vk::BufferUsageFlags::TRANSFER_DST
        }
        Mem::Upload => vk::BufferUsageFlags::TRANSFER_SRC,
    }
}

impl Raw {
    /// vkAllocateDescriptorSets + vkUpdateDescriptorSets per group, then
    /// vkFreeDescriptorSets per group.
    fn churn(&mut self, layouts: usize, groups: usize) -> Result<f64, String> {
        if self.churn_pool.1 < groups {
            // SAFETY: no set of the old pool is in use; null is ignored.
            unsafe { self.device.destroy_descriptor_pool(self.churn_pool.0, None) };
            self.churn_pool = (vk::DescriptorPool::null(), 0);
            let pool =
                self.create_pool(groups, vk::DescriptorPoolCreateFlags::FREE_DESCRIPTOR_SET)?;
            self.churn_pool = (pool, groups);
        }
        let pool = self.churn_pool.0;
        let mut sets = Vec::with_capacity(groups);
        let start = Timer::start();
        for i in 0..groups {
            let layout = [self.layouts[i % layouts]];
            let info = vk::DescriptorSetAllocateInfo::default()
                .descriptor_pool(pool)
                .set_layouts(&layout);
            // SAFETY: live pool and layout; the pool has room for `groups` sets.
            let set = unsafe { self.device.allocate_descriptor_sets(&info) }
                .map_err(vk_err("vkAllocateDescriptorSets"))?[0];
            sets.push(set);
            self.write_set(set, LAYOUTS[i % layouts]);
        }
        for set in sets {
            // SAFETY: the set came from this pool, which allows freeing; not in use.
            unsafe { self.device.free_descriptor_sets(pool, &[set]) }
                .map_err(vk_err("vkFreeDescriptorSets"))?;
        }
        Ok(start.stop().as_nanos() as f64 / groups as f64)
    }

    /// The reuse floor: a destroyed group's set goes to its layout's free
    /// list; a created one takes a set from there (allocating only when the
    /// list is empty: in the warm-up sample) and writes it with one
    /// vkUpdateDescriptorSets.
    fn reuse(&mut self, layouts: usize, groups: usize) -> Result<f64, String> {
        // Kept sets stay on their layout's free list across workloads (a
        // 1-layout round keeps `groups` sets of the first kind, a later
        // 3-layout round needs sets of the others): room for `groups` of
        // every kind.
        let needed = groups * LAYOUTS.len();
        if self.reuse.1 < needed {
            // SAFETY: no set of the old pool is in use; null is ignored.
            unsafe { self.device.destroy_descriptor_pool(self.reuse.0, None) };
            self.reuse = (vk::DescriptorPool::null(), 0, Default::default());
            let pool = self.create_pool(needed, super::set_pool_flags())?;
            self.reuse = (pool, needed, Default::default());
        }
        let pool = self.reuse.0;
        let mut free = std::mem::take(&mut self.reuse.2);
        let mut made = Vec::with_capacity(groups);
        let start = Timer::start();
        let result = (|| {
            for i in 0..groups {
                let k = i % layouts;
                let set = match free[k].pop() {
                    Some(set) => set,
                    None => {
                        let layout = [self.layouts[k]];
                        let info = vk::DescriptorSetAllocateInfo::default()
                            .descriptor_pool(pool)
                            .set_layouts(&layout);
                        // SAFETY: live pool and layout; the pool has room
                        // for every set this workload keeps.
                        unsafe { self.device.allocate_descriptor_sets(&info) }
                            .map_err(vk_err("vkAllocateDescriptorSets"))?[0]
                    }
                };
                self.write_set(set, LAYOUTS[k]);
                made.push((k, set));
            }
            Ok::<(), String>(())
        })();
        for (k, set) in made {
            free[k].push(set);
        }
        let ns = start.stop().as_nanos() as f64 / groups as f64;
        self.reuse.2 = free;
        result.map(|()| ns)
    }

    /// vkCreateDescriptorSetLayout × `count` (the churn layouts in turn), then
    /// vkDestroyDescriptorSetLayout × `count`.
    fn set_layouts(&mut self, count: usize) -> Result<f64, String> {
        let bindings: Vec<_> = LAYOUTS.iter().map(|k| layout_bindings(k)).collect();
        let infos: Vec<_> = bindings
            .iter()
            .map(|b| vk::DescriptorSetLayoutCreateInfo::default().bindings(b))
            .collect();
        let mut made = Vec::with_capacity(count);
        let start = Timer::start();
        let mut result = Ok(());
        for i in 0..count {
            // SAFETY: live device, valid create info.
            match unsafe {
                self.device
                    .create_descriptor_set_layout(&infos[i % infos.len()], None)
            } {
                Ok(l) => made.push(l),
                Err(e) => {
                    result = Err(vk_err("vkCreateDescriptorSetLayout")(e));
                    break;
                }
            }
        }
        for l in made {
            // SAFETY: nothing uses it.
            unsafe { self.device.destroy_descriptor_set_layout(l, None) };
        }
        let ns = start.stop().as_nanos() as f64 / count as f64;
        result.map(|()| ns)
    }

    /// One vkUpdateDescriptorSets call writing every binding of `set`.
    fn write_set(&self, set: vk::DescriptorSet, kinds: &[Kind]) {
        let buffer = [vk::DescriptorBufferInfo::default()
            .buffer(self.uniform.buffer)
            .range(workload::UNIFORM_SIZE)];
        let image = [vk::DescriptorImageInfo::default()
            .image_view(self.texture.view)
            .image_layout(vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL)];
        let sampler = [vk::DescriptorImageInfo::default().sampler(self.sampler)];
        let mut writes = [vk::WriteDescriptorSet::default(); 4];
        for (i, &kind) in kinds.iter().enumerate() {
            let w = vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(i as u32)
                .descriptor_type(descriptor_type(kind));
            writes[i] = match kind {
                Kind::Uniform => w.buffer_info(&buffer),
                Kind::Texture => w.image_info(&image),
                Kind::Sampler => w.image_info(&sampler),
            };
        }
        // SAFETY: the set, buffer, view and sampler are live and match the layout.
        unsafe {
            self.device
                .update_descriptor_sets(&writes[..kinds.len()], &[])
        };
    }

    /// Kept sets of layout 0, written once: at least `count` of them.
    fn ensure_kept_sets(&mut self, count: usize) -> Result<(), String> {
        let count = count.max(ENCODE_GROUPS);
        if self.kept_sets.len() >= count {
            return Ok(());
        }
        // SAFETY: no kept set is in use (nothing was submitted); null is ignored.
        unsafe { self.device.destroy_descriptor_pool(self.kept_pool, None) };
        self.kept_pool = vk::DescriptorPool::null();
        self.kept_sets.clear();
        self.kept_pool = self.create_pool(count, super::set_pool_flags())?;
        let layouts = vec![self.layouts[0]; count];
        let info = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(self.kept_pool)
            .set_layouts(&layouts);
        // SAFETY: live pool sized for `count` sets of any churn layout.
        self.kept_sets =
            unsafe { self.device.allocate_descriptor_sets(&info) }.map_err(vk_err("kept sets"))?;
        for &set in &self.kept_sets {
            self.write_set(set, LAYOUTS[0]);
        }
        Ok(())
    }

    /// A pool for `sets` sets of any churn layout (2 uniforms, 2 textures, 1 sampler each).
    fn create_pool(
        &self,
        sets: usize,
        flags: vk::DescriptorPoolCreateFlags,
    ) -> Result<vk::DescriptorPool, String> {
        let n = sets as u32;
        let sizes = [
            vk::DescriptorPoolSize {
                ty: vk::DescriptorType::UNIFORM_BUFFER,
                descriptor_count: 2 * n,
            },
            vk::DescriptorPoolSize {
                ty: vk::DescriptorType::SAMPLED_IMAGE,
                descriptor_count: 2 * n,
            },
            vk::DescriptorPoolSize {
                ty: vk::DescriptorType::SAMPLER,
                descriptor_count: n,
            },
        ];
        let info = vk::DescriptorPoolCreateInfo::default()
            .flags(flags)
            .max_sets(n)
            .pool_sizes(&sizes);
        // SAFETY: live device, valid create info.
        unsafe { self.device.create_descriptor_pool(&info, None) }
            .map_err(vk_err("vkCreateDescriptorPool"))
    }

    /// A buffer of `size` bytes bound at the arena's next offset; its
    /// mapped bytes (null where the arena is not mapped).
    fn bound_buffer(
        device: &ash::Device,
        arena: &mut Arena,
        size: u64,
        usage: vk::BufferUsageFlags,
    ) -> Result<(vk::Buffer, *mut u8), String> {
        let info = vk::BufferCreateInfo::default().size(size).usage(usage);
        // SAFETY: live device, valid create info; the buffer is destroyed
        // on failure; the placement lies in a live block of a memory type
        // the buffer allows (checked), sized and aligned by its requirements.
        unsafe {
            let buffer = device
                .create_buffer(&info, None)
                .map_err(vk_err("vkCreateBuffer"))?;
            let req = device.get_buffer_memory_requirements(buffer);
            let bound = if req.memory_type_bits & (1 << arena.memory_type()) == 0 {
                Err("raw: the arena's memory type does not suit the buffer".to_string())
            } else {
                arena.place(device, req.size, req.alignment).and_then(|p| {
                    device
                        .bind_buffer_memory(buffer, p.memory, p.offset)
                        .map_err(vk_err("vkBindBufferMemory"))
                        .map(|()| p.ptr)
                })
            };
            match bound {
                Ok(ptr) => Ok((buffer, ptr)),
                Err(e) => {
                    device.destroy_buffer(buffer, None);
                    Err(e)
                }
            }
        }
    }

    /// A fresh arena of the memory type a buffer of `mem` kind picks (mapped
    /// where it is Upload memory).
    fn new_arena(&self, mem: Mem) -> Result<Arena, String> {
        let info = vk::BufferCreateInfo::default()
            .size(256)
            .usage(buffer_usage(mem));
        // SAFETY: live device; the probe is destroyed right away.
        let bits = unsafe {
            let probe = self
                .device
                .create_buffer(&info, None)
                .map_err(vk_err("vkCreateBuffer"))?;
            let req = self.device.get_buffer_memory_requirements(probe);
            self.device.destroy_buffer(probe, None);
            req.memory_type_bits
        };
        Ok(Arena::new(self.memory_type(bits, mem)?, mem == Mem::Upload))
    }

    /// Builds `holes` live buffers interleaved with as many freed ones, all
    /// bound into one arena (the freed ones leave gaps), unless the current
    /// holes were built for the same memory kind and count.
    fn make_holes(&mut self, mem: Mem, holes: usize) -> Result<(), String> {
        if self.holes_key == Some((mem, holes)) {
            return Ok(());
        }
        self.drop_holes();
        let mut arena = self.new_arena(mem)?;
        let mut all = Vec::with_capacity(2 * holes);
        let mut result = Ok(());
        for size in workload::hole_sizes(2 * holes) {
            match Self::bound_buffer(&self.device, &mut arena, size, buffer_usage(mem)) {
                Ok((b, _)) => all.push(b),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        for (i, b) in all.into_iter().enumerate() {
            if i % 2 == 0 && result.is_ok() {
                self.holes.push(b);
            } else {
                // SAFETY: never used by the GPU.
                unsafe { self.device.destroy_buffer(b, None) };
            }
        }
        self.hole_arena = Some(arena);
        if result.is_ok() {
            self.holes_key = Some((mem, holes));
        } else {
            self.drop_holes();
        }
        result
    }

    pub(super) fn drop_holes(&mut self) {
        for b in std::mem::take(&mut self.holes) {
            // SAFETY: never used by the GPU.
            unsafe { self.device.destroy_buffer(b, None) };
        }
        if let Some(mut arena) = self.hole_arena.take() {
            // SAFETY: the buffers bound into it are destroyed.
            unsafe { arena.destroy(&self.device) };
        }
        self.holes_key = None;
    }

    pub(super) fn drop_buffer_arena(&mut self) {
        for (b, _) in self.kept_buffers.drain(..) {
            // SAFETY: never used by the GPU; destroyed before its memory.
            unsafe { self.device.destroy_buffer(b, None) };
        }
        if let Some((_, mut arena)) = self.buffer_arena.take() {
            // SAFETY: no buffer outlives a sample.
            unsafe { arena.destroy(&self.device) };
        }
    }

    /// `iters` buffers all live (`live`) or one at a time, each taken from
    /// the buffers kept by earlier samples of this workload where there is
    /// one (as keel-hal's retention takes a destroyed buffer of the same
    /// description), else made: vkCreateBuffer, vkGetBufferMemoryRequirements
    /// and vkBindBufferMemory at the kept arena's next offset. Upload buffers
    /// get a write of UPLOAD_WRITE bytes through the mapping. Destroying
    /// keeps the buffer, bound, for the next take. The arena is reserved
    /// for as many buffers as a sample holds at once, which is as many as
    /// are ever made for it.
    fn buffers(&mut self, size: u64, mem: Mem, iters: usize, live: bool) -> Result<f64, String> {
        let usage = buffer_usage(mem);
        let key = (mem, size, if live { iters } else { 1 });
        if self.buffer_arena.as_ref().map(|(k, _)| *k) != Some(key) {
            self.drop_buffer_arena();
            let mut arena = self.new_arena(mem)?;
            // Set-up: as many blocks as the sample needs, made now.
            let made = Self::bound_buffer(&self.device, &mut arena, size, usage);
            let reserved = made.and_then(|(b, _)| {
                // SAFETY: never used by the GPU.
                let req = unsafe {
                    let req = self.device.get_buffer_memory_requirements(b);
                    self.device.destroy_buffer(b, None);
                    req
                };
                arena.reserve(&self.device, req.size, req.alignment, key.2)
            });
            if let Err(e) = reserved {
                // SAFETY: no buffer is bound into it any more.
                unsafe { arena.destroy(&self.device) };
                return Err(e);
            }
            self.buffer_arena = Some((key, arena));
        }
        let Some((_, arena)) = self.buffer_arena.as_mut() else {
            return Err("raw: no buffer arena".into());
        };
        let device = &self.device;
        let kept = &mut self.kept_buffers;
        let mut made = Vec::with_capacity(if live { iters } else { 0 });
        let start = Timer::start();
        let mut result = Ok(());
        for _ in 0..iters {
            let taken = match kept.pop() {
                Some(buffer) => Ok(buffer),
                None => Self::bound_buffer(device, arena, size, usage),
            };
            match taken {
                Ok((buffer, ptr)) => {
                    if !ptr.is_null() {
                        // SAFETY: the buffer's bytes in the arena's mapping,
                        // at least UPLOAD_WRITE of them; unknown to the GPU.
                        unsafe { std::ptr::write_bytes(ptr, 0xA5, UPLOAD_WRITE) };
                    }
                    if live {
                        made.push((buffer, ptr));
                    } else {
                        kept.push((buffer, ptr));
                    }
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        kept.append(&mut made);
        let ns = start.stop().as_nanos() as f64 / iters as f64;
        result.map(|()| ns)
    }

    /// Records the diagnostic barrier `BENCH_RAW_BARRIER` asks for after a
    /// dispatch: a shader write to a shader read and write, on the uniform
    /// buffer (never submitted, so which buffer does not matter).
    ///
    /// # Safety
    /// `cb` is recording.
    unsafe fn dispatch_barrier(&self, cb: vk::CommandBuffer, form: super::Barrier) {
        use super::Barrier;
        let (d, stage, stage1) = (
            &self.device,
            super::barrier_stages(),
            vk::PipelineStageFlags::COMPUTE_SHADER,
        );
        let (src, dst) = (
            vk::AccessFlags2::SHADER_STORAGE_WRITE,
            vk::AccessFlags2::SHADER_STORAGE_READ | vk::AccessFlags2::SHADER_STORAGE_WRITE,
        );
        let (src1, dst1) = (
            vk::AccessFlags::SHADER_WRITE,
            vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE,
        );
        let buffer = self.uniform.buffer;
        // SAFETY: `cb` is recording (the caller); the buffer is live.
        unsafe {
            match form {
                Barrier::None => {}
                Barrier::Buffer2 => {
                    let b = [vk::BufferMemoryBarrier2::default()
                        .src_stage_mask(stage)
                        .src_access_mask(src)
                        .dst_stage_mask(stage)
                        .dst_access_mask(dst)
                        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                        .buffer(buffer)
                        .size(vk::WHOLE_SIZE)];
                    let info = vk::DependencyInfo::default().buffer_memory_barriers(&b);
                    d.cmd_pipeline_barrier2(cb, &info);
                }
                Barrier::Global2 => {
                    let b = [vk::MemoryBarrier2::default()
                        .src_stage_mask(stage)
                        .src_access_mask(src)
                        .dst_stage_mask(stage)
                        .dst_access_mask(dst)];
                    let info = vk::DependencyInfo::default().memory_barriers(&b);
                    d.cmd_pipeline_barrier2(cb, &info);
                }
                Barrier::Buffer1 => {
                    let b = [vk::BufferMemoryBarrier::default()
                        .src_access_mask(src1)
                        .dst_access_mask(dst1)
                        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                        .buffer(buffer)
                        .size(vk::WHOLE_SIZE)];
                    d.cmd_pipeline_barrier(
                        cb,
                        stage1,
                        stage1,
                        vk::DependencyFlags::empty(),
                        &[],
                        &b,
                        &[],
                    );
                }
                Barrier::Global1 => {
                    let b = [vk::MemoryBarrier::default()
                        .src_access_mask(src1)
                        .dst_access_mask(dst1)];
                    d.cmd_pipeline_barrier(
                        cb,
                        stage1,
                        stage1,
                        vk::DependencyFlags::empty(),
                        &b,
                        &[],
                        &[],
                    );
                }
            }
        }
    }

    /// Records `commands` × (bind descriptor set + dispatch/draw), begin to end.
    fn encode(&mut self, pass: Pass, commands: usize) -> Result<f64, String> {
        self.ensure_kept_sets(ENCODE_GROUPS)?;
        let (d, cb) = (&self.device, self.command_buffer);
        let sets = &self.kept_sets[..ENCODE_GROUPS];
        let begin = vk::CommandBufferBeginInfo::default().flags(super::command_flags().1);
        let extent = vk::Extent2D {
            width: TARGET_SIZE,
            height: TARGET_SIZE,
        };
        // Read once, outside the timed loop (none by default: the floor
        // then records exactly what the other sides do).
        let form = super::barrier();
        let start = crate::count::Timer::start();
        // SAFETY: the command buffer is in the initial state; every handle
        // recorded is live and matches the pipeline layout; never submitted.
        unsafe {
            d.begin_command_buffer(cb, &begin)
                .map_err(vk_err("vkBeginCommandBuffer"))?;
            match pass {
                Pass::Compute => {
                    d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, self.compute);
                    for i in 0..commands {
                        let set = [sets[i % ENCODE_GROUPS]];
                        d.cmd_bind_descriptor_sets(
                            cb,
                            vk::PipelineBindPoint::COMPUTE,
                            self.pipeline_layout,
                            0,
                            &set,
                            &[],
                        );
                        d.cmd_dispatch(cb, 1, 1, 1);
                        if form != super::Barrier::None {
                            self.dispatch_barrier(cb, form);
                        }
                    }
                }
                Pass::Render => {
                    let color = [vk::RenderingAttachmentInfo::default()
                        .image_view(self.target.view)
                        .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
                        .load_op(vk::AttachmentLoadOp::CLEAR)
                        .store_op(vk::AttachmentStoreOp::STORE)];
                    let info = vk::RenderingInfo::default()
                        .render_area(extent.into())
                        .layer_count(1)
                        .color_attachments(&color);
                    d.cmd_begin_rendering(cb, &info);
                    let size = TARGET_SIZE as f32;
                    if super::lean() {
                        let viewport = vk::Viewport {
                            width: size,
                            height: size,
                            max_depth: 1.0,
                            ..Default::default()
                        };
                        d.cmd_set_viewport(cb, 0, &[viewport]);
                        d.cmd_set_scissor(cb, 0, &[extent.into()]);
                    } else {
                        // What keel-hal's begin_render_pass sets (a
                        // flipped viewport, the scissor, stencil reference
                        // and blend constants), then the bench's own
                        // set_viewport and set_scissor_rect on that side.
                        let viewport = vk::Viewport {
                            y: size,
                            width: size,
                            height: -size,
                            max_depth: 1.0,
                            ..Default::default()
                        };
                        d.cmd_set_viewport(cb, 0, &[viewport]);
                        d.cmd_set_scissor(cb, 0, &[extent.into()]);
                        d.cmd_set_stencil_reference(cb, vk::StencilFaceFlags::FRONT_AND_BACK, 0);
                        d.cmd_set_blend_constants(cb, &[0.0; 4]);
                        d.cmd_set_viewport(cb, 0, &[viewport]);
                        d.cmd_set_scissor(cb, 0, &[extent.into()]);
                    }
                    d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, self.render);
                    for i in 0..commands {
                        let set = [sets[i % ENCODE_GROUPS]];
                        d.cmd_bind_descriptor_sets(
                            cb,
                            vk::PipelineBindPoint::GRAPHICS,
                            self.pipeline_layout,
                            0,
                            &set,
                            &[],
                        );
                        d.cmd_draw(cb, 3, 1, 0, 0);
                    }
                    d.cmd_end_rendering(cb);
                }
            }
            d.end_command_buffer(cb)
                .map_err(vk_err("vkEndCommandBuffer"))?;
        }
        let ns = start.stop().as_nanos() as f64 / commands as f64;
        // After the timing, as keel-hal's and wgpu-hal's `reset_all`: every
        // side gives its command memory back at the end of its own cycle,
        // so no side records while holding the last one's (the driver's
        // command memory comes from the process heap on lavapipe).
        // SAFETY: the buffer is not pending (never submitted); resetting the
        // pool recycles it.
        unsafe { d.reset_command_pool(self.command_pool, vk::CommandPoolResetFlags::empty()) }
            .map_err(vk_err("reset pool"))?;
        Ok(ns)
    }
}
