//! The raw side's samples: what each workload costs written directly in Vulkan.

use std::time::Instant;

use ash::vk;

use super::{descriptor_type, vk_err, Raw, RawBuffer};
use crate::workload::{self, Kind, Mem, Pass, Side, Workload, ENCODE_GROUPS, LAYOUTS, TARGET_SIZE};

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
            Workload::BindGroups { layouts, groups } => self.churn(layouts, groups).map(Some),
            Workload::BindGroupWrites { groups } => self.writes(groups).map(Some),
            Workload::Buffers {
                size,
                mem,
                holes,
                iters,
            } => {
                // Each hole is its own allocation here: skip where the driver's
                // allocation limit would be hit.
                if holes as u64 + 16 > u64::from(self.max_allocations) {
                    return Ok(None);
                }
                self.make_holes(mem, holes)?;
                self.buffers(size, mem, iters).map(Some)
            }
            Workload::Encode { pass, commands } => self.encode(pass, commands).map(Some),
            Workload::Compaction { .. } | Workload::BlasCreate { .. } => Ok(None),
            Workload::External { size, iters } => self.external(size, iters).map(Some),
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
        let start = Instant::now();
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
        Ok(start.elapsed().as_nanos() as f64 / groups as f64)
    }

    /// vkUpdateDescriptorSets into kept sets: the write cost alone.
    fn writes(&mut self, groups: usize) -> Result<f64, String> {
        self.ensure_kept_sets(groups)?;
        let sets = &self.kept_sets[..groups];
        let start = Instant::now();
        for &set in sets {
            self.write_set(set, LAYOUTS[0]);
        }
        Ok(start.elapsed().as_nanos() as f64 / groups as f64)
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
        self.kept_pool = self.create_pool(count, vk::DescriptorPoolCreateFlags::empty())?;
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

    /// Builds `holes` live buffers interleaved with as many freed ones, unless
    /// the current holes were built for the same memory kind and count.
    fn make_holes(&mut self, mem: Mem, holes: usize) -> Result<(), String> {
        if self.holes_key == Some((mem, holes)) {
            return Ok(());
        }
        self.drop_holes();
        let mut all = Vec::with_capacity(2 * holes);
        for size in workload::hole_sizes(2 * holes) {
            match self.create_buffer(size, mem, buffer_usage(mem)) {
                Ok(b) => all.push(b),
                Err(e) => {
                    all.into_iter().for_each(|b| self.destroy_buffer(b));
                    return Err(e);
                }
            }
        }
        for (i, b) in all.into_iter().enumerate() {
            if i % 2 == 0 {
                self.holes.push(b);
            } else {
                self.destroy_buffer(b);
            }
        }
        self.holes_key = Some((mem, holes));
        Ok(())
    }

    pub(super) fn drop_holes(&mut self) {
        for b in std::mem::take(&mut self.holes) {
            self.destroy_buffer(b);
        }
        self.holes_key = None;
    }

    /// vkCreateBuffer + vkAllocateMemory + vkBindBufferMemory + vkFreeMemory + vkDestroyBuffer.
    fn buffers(&mut self, size: u64, mem: Mem, iters: usize) -> Result<f64, String> {
        let usage = buffer_usage(mem);
        let start = Instant::now();
        for _ in 0..iters {
            let b: RawBuffer = self.create_buffer(size, mem, usage)?;
            self.destroy_buffer(b);
        }
        Ok(start.elapsed().as_nanos() as f64 / iters as f64)
    }

    /// Records `commands` × (bind descriptor set + dispatch/draw), begin to end.
    fn encode(&mut self, pass: Pass, commands: usize) -> Result<f64, String> {
        self.ensure_kept_sets(ENCODE_GROUPS)?;
        let (d, cb) = (&self.device, self.command_buffer);
        let sets = &self.kept_sets[..ENCODE_GROUPS];
        // SAFETY: the buffer is not pending (never submitted); resetting the pool recycles it.
        unsafe { d.reset_command_pool(self.command_pool, vk::CommandPoolResetFlags::empty()) }
            .map_err(vk_err("reset pool"))?;
        let begin = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        let extent = vk::Extent2D {
            width: TARGET_SIZE,
            height: TARGET_SIZE,
        };
        let start = Instant::now();
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
                    let viewport = vk::Viewport {
                        width: TARGET_SIZE as f32,
                        height: TARGET_SIZE as f32,
                        max_depth: 1.0,
                        ..Default::default()
                    };
                    d.cmd_set_viewport(cb, 0, &[viewport]);
                    d.cmd_set_scissor(cb, 0, &[extent.into()]);
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
        Ok(start.elapsed().as_nanos() as f64 / commands as f64)
    }
}
