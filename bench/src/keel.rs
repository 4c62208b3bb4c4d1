//! The keel-hal side (Vulkan backend): the same workloads through its traits.

use std::num::NonZeroU64;

use keel_hal as kh;
use keel_hal::{Adapter as _, CommandEncoder as _, Device as _, Instance as _, Queue as _};

use crate::keel_accel::KeelAccel;
use crate::workload::{
    self, Kind, Mem, Pass, Side, Workload, Zeroing, ENCODE_GROUPS, LAYOUTS, TARGET_SIZE,
    TEXTURE_SIZE, UNIFORM_SIZE, UPLOAD_WRITE, ZERO_ENTRY, ZERO_LAYOUT, ZERO_MAX_GROUPS,
    ZERO_OUT_SIZE,
};

type Texture<A> = (<A as kh::Api>::Texture, <A as kh::Api>::TextureView);

/// Everything made on the device, destroyed in `Drop`.
struct Res<A: kh::Api> {
    layouts: Vec<<A as kh::Api>::BindGroupLayout>,
    uniform: <A as kh::Api>::Buffer,
    texture: Texture<A>,
    target: Texture<A>,
    sampler: <A as kh::Api>::Sampler,
    pipeline_layout: <A as kh::Api>::PipelineLayout,
    shader: <A as kh::Api>::ShaderModule,
    compute: <A as kh::Api>::ComputePipeline,
    render: <A as kh::Api>::RenderPipeline,
    encoder: <A as kh::Api>::CommandEncoder,
    groups: Vec<<A as kh::Api>::BindGroup>,
    holes: Vec<<A as kh::Api>::Buffer>,
    holes_key: Option<(Mem, usize)>,
    /// The workgroup-zeroing objects, made at that workload's first sample.
    zero: Option<Zero<A>>,
}

/// What the workgroup-zeroing samples reuse: one module and pipeline per
/// [`Zeroing`] (native: from WGSL; polyfill: the bench's SPIR-V).
struct Zero<A: kh::Api> {
    layout: <A as kh::Api>::BindGroupLayout,
    pipeline_layout: <A as kh::Api>::PipelineLayout,
    out: <A as kh::Api>::Buffer,
    group: <A as kh::Api>::BindGroup,
    native: (
        <A as kh::Api>::ShaderModule,
        <A as kh::Api>::ComputePipeline,
    ),
    polyfill: (
        <A as kh::Api>::ShaderModule,
        <A as kh::Api>::ComputePipeline,
    ),
    encoder: <A as kh::Api>::CommandEncoder,
    fence: <A as kh::Api>::Fence,
    /// The value the last submission signalled.
    value: kh::FenceValue,
}

/// The keel-hal side, generic over the backend (`main` picks Vulkan). Field order is drop order: resources, device, queue, instance.
pub struct Keel<A: kh::Api> {
    pub(crate) adapter_name: String,
    res: Option<Res<A>>,
    /// The acceleration-structure device, opened at its first workload.
    accel: Option<KeelAccel<A>>,
    /// The external workload's two devices, made on first use.
    pub(crate) external: Option<crate::keel_external::Pair<A>>,
    device: <A as kh::Api>::Device,
    queue: <A as kh::Api>::Queue,
    pub(crate) instance: <A as kh::Api>::Instance,
}

fn err<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> String {
    move |e| format!("keel-hal {what}: {e}")
}

/// A keel-hal Vulkan instance whose devices count their calls (`count.rs`).
pub fn vulkan_instance() -> Result<kh::vulkan::Instance, String> {
    let desc = kh::InstanceDescriptor {
        name: "keel-bench",
        ..Default::default()
    };
    let entry = crate::count::entry()?;
    // SAFETY: the counting entry forwards to the system's Vulkan loader,
    // a conforming one, with trampolines of the commands' own types.
    unsafe { kh::vulkan::Instance::init_with_entry(&desc, entry) }.map_err(err("instance"))
}

impl<A: kh::Api> Keel<A> {
    /// Opens the adapter whose name contains `adapter` on `instance`.
    pub fn new(instance: A::Instance, adapter: &str) -> Result<Self, String> {
        // SAFETY: live instance.
        let adapters = unsafe { instance.enumerate_adapters() };
        let exposed = crate::pick_adapter(&adapters, |a| a.info.name.as_str(), Some(adapter))
            .ok_or_else(|| format!("keel-hal: no adapter named {adapter:?}"))?;
        // SAFETY: opened from one thread.
        let open = unsafe { exposed.adapter.open(&kh::DeviceDescriptor::default()) }
            .map_err(err("open"))?;
        let mut side = Keel {
            adapter_name: exposed.info.name.clone(),
            res: None,
            accel: None,
            external: None,
            device: open.device,
            queue: open.queue,
            instance,
        };
        side.res = Some(side.make_resources()?);
        Ok(side)
    }

    fn make_resources(&self) -> Result<Res<A>, String> {
        // Objects made before a failure are left to the device's destruction:
        // this only happens at start-up, where the process then exits.
        let d = &self.device;
        // SAFETY: every descriptor below is valid and names objects of this device.
        unsafe {
            let mut layouts = Vec::new();
            for kinds in LAYOUTS {
                let entries = workload::layout_entries(kinds);
                let desc = kh::BindGroupLayoutDescriptor {
                    entries: &entries,
                    ..Default::default()
                };
                layouts.push(d.create_bind_group_layout(&desc).map_err(err("layout"))?);
            }
            let desc = kh::BufferDescriptor {
                size: UNIFORM_SIZE,
                usage: wgt::BufferUsages::UNIFORM,
                ..Default::default()
            };
            let uniform = d.create_buffer(&desc).map_err(err("uniform"))?;
            let texture = self.texture(
                TEXTURE_SIZE,
                wgt::TextureUsages::TEXTURE_BINDING | wgt::TextureUsages::COPY_DST,
            )?;
            let target = self.texture(TARGET_SIZE, wgt::TextureUsages::RENDER_ATTACHMENT)?;
            let desc = kh::SamplerDescriptor {
                mag_filter: wgt::FilterMode::Linear,
                min_filter: wgt::FilterMode::Linear,
                ..Default::default()
            };
            let sampler = d.create_sampler(&desc).map_err(err("sampler"))?;
            let desc = kh::PipelineLayoutDescriptor {
                label: None,
                bind_group_layouts: &[&layouts[0]],
                push_constant_ranges: &[],
            };
            let pipeline_layout = d
                .create_pipeline_layout(&desc)
                .map_err(err("pipeline layout"))?;
            let shader = d
                .create_shader_module(&kh::ShaderModuleDescriptor::wgsl(workload::WGSL))
                .map_err(err("shader"))?;
            let stage = |entry_point| kh::ProgrammableStage {
                module: &shader,
                entry_point,
                constants: &[],
            };
            let desc = kh::ComputePipelineDescriptor {
                label: None,
                layout: &pipeline_layout,
                stage: stage("cs_main"),
                cache: None,
            };
            let compute = d.create_compute_pipeline(&desc).map_err(err("compute"))?;
            let targets = [Some(wgt::ColorTargetState::from(
                wgt::TextureFormat::Rgba8Unorm,
            ))];
            let desc = kh::RenderPipelineDescriptor {
                label: None,
                layout: &pipeline_layout,
                vertex_buffers: &[],
                vertex_stage: stage("vs_main"),
                primitive: wgt::PrimitiveState::default(),
                depth_stencil: None,
                multisample: wgt::MultisampleState::default(),
                fragment_stage: Some(stage("fs_main")),
                color_targets: &targets,
                cache: None,
                multiview_mask: None,
            };
            let render = d.create_render_pipeline(&desc).map_err(err("render"))?;
            let encoder = d
                .create_command_encoder(&kh::CommandEncoderDescriptor::default())
                .map_err(err("encoder"))?;
            let mut res = Res {
                layouts,
                uniform,
                texture,
                target,
                sampler,
                pipeline_layout,
                shader,
                compute,
                render,
                encoder,
                groups: Vec::new(),
                holes: Vec::new(),
                holes_key: None,
                zero: None,
            };
            for _ in 0..ENCODE_GROUPS {
                let entries = group_entries(&res, 0);
                let group = d
                    .create_bind_group(&group_desc(&res, 0, &entries))
                    .map_err(err("bind group"))?;
                res.groups.push(group);
            }
            Ok(res)
        }
    }

    /// A 2D RGBA8 texture of `size`² and its view.
    fn texture(&self, size: u32, usage: wgt::TextureUsages) -> Result<Texture<A>, String> {
        let desc = kh::TextureDescriptor {
            size: wgt::Extent3d {
                width: size,
                height: size,
                depth_or_array_layers: 1,
            },
            usage,
            ..Default::default()
        };
        // SAFETY: valid descriptors; the view is of this texture.
        unsafe {
            let texture = self.device.create_texture(&desc).map_err(err("texture"))?;
            match self
                .device
                .create_texture_view(&texture, &kh::TextureViewDescriptor::default())
            {
                Ok(view) => Ok((texture, view)),
                Err(e) => {
                    self.device.destroy_texture(texture);
                    Err(err("view")(e))
                }
            }
        }
    }

    /// The workgroup-zeroing objects. Objects made before a failure are
    /// left to the device's destruction, as in `make_resources`.
    fn make_zero(&self) -> Result<Zero<A>, String> {
        let d = &self.device;
        let spirv = workload::zero_spirv()?;
        // SAFETY: every descriptor below is valid and names objects of this device.
        unsafe {
            let layout = d
                .create_bind_group_layout(&kh::BindGroupLayoutDescriptor::new(&ZERO_LAYOUT))
                .map_err(err("zero layout"))?;
            let desc = kh::PipelineLayoutDescriptor {
                label: None,
                bind_group_layouts: &[&layout],
                push_constant_ranges: &[],
            };
            let pipeline_layout = d
                .create_pipeline_layout(&desc)
                .map_err(err("zero pipeline layout"))?;
            let desc = kh::BufferDescriptor {
                size: ZERO_OUT_SIZE,
                usage: wgt::BufferUsages::STORAGE,
                ..Default::default()
            };
            let out = d.create_buffer(&desc).map_err(err("zero buffer"))?;
            let entries = [kh::BindGroupEntry {
                binding: 0,
                resource: kh::BindingResource::Buffer(kh::BufferBinding {
                    buffer: &out,
                    offset: 0,
                    size: NonZeroU64::new(ZERO_OUT_SIZE),
                }),
            }];
            let desc = kh::BindGroupDescriptor {
                label: None,
                layout: &layout,
                entries: &entries,
            };
            let group = d.create_bind_group(&desc).map_err(err("zero bind group"))?;
            let pipeline = |source| -> Result<_, String> {
                let desc = kh::ShaderModuleDescriptor {
                    label: None,
                    source,
                };
                let shader = d.create_shader_module(&desc).map_err(err("zero shader"))?;
                let desc = kh::ComputePipelineDescriptor {
                    label: None,
                    layout: &pipeline_layout,
                    stage: kh::ProgrammableStage::new(&shader, ZERO_ENTRY),
                    cache: None,
                };
                let pipeline = d
                    .create_compute_pipeline(&desc)
                    .map_err(err("zero pipeline"))?;
                Ok((shader, pipeline))
            };
            let native = pipeline(kh::ShaderSource::Wgsl(workload::ZERO_WGSL.into()))?;
            let polyfill = pipeline(kh::ShaderSource::SpirV(spirv.into()))?;
            let encoder = d
                .create_command_encoder(&kh::CommandEncoderDescriptor::default())
                .map_err(err("zero encoder"))?;
            let fence = d.create_fence().map_err(err("zero fence"))?;
            Ok(Zero {
                layout,
                pipeline_layout,
                out,
                group,
                native,
                polyfill,
                encoder,
                fence,
                value: 0,
            })
        }
    }
}

impl<A: kh::Api> Zero<A> {
    /// Destroys every object.
    ///
    /// # Safety
    /// The objects came from `d`; every submission was waited for.
    unsafe fn destroy(self, d: &<A as kh::Api>::Device) {
        // SAFETY: the caller's contract; children go before what they point at.
        unsafe {
            d.destroy_command_encoder(self.encoder);
            d.destroy_fence(self.fence);
            for (shader, pipeline) in [self.native, self.polyfill] {
                d.destroy_compute_pipeline(pipeline);
                d.destroy_shader_module(shader);
            }
            d.destroy_bind_group(self.group);
            d.destroy_buffer(self.out);
            d.destroy_pipeline_layout(self.pipeline_layout);
            d.destroy_bind_group_layout(self.layout);
        }
    }
}

/// The entries of a bind group of churn layout `k`: each carries its resource.
fn group_entries<A: kh::Api>(res: &Res<A>, k: usize) -> Vec<kh::BindGroupEntry<'_, A>> {
    LAYOUTS[k]
        .iter()
        .enumerate()
        .map(|(i, kind)| kh::BindGroupEntry {
            binding: i as u32,
            resource: match kind {
                Kind::Uniform => kh::BindingResource::Buffer(kh::BufferBinding {
                    buffer: &res.uniform,
                    offset: 0,
                    size: NonZeroU64::new(UNIFORM_SIZE),
                }),
                Kind::Texture => kh::BindingResource::TextureView(&res.texture.1),
                Kind::Sampler => kh::BindingResource::Sampler(&res.sampler),
            },
        })
        .collect()
}

fn group_desc<'a, A: kh::Api>(
    res: &'a Res<A>,
    k: usize,
    entries: &'a [kh::BindGroupEntry<'a, A>],
) -> kh::BindGroupDescriptor<'a, A> {
    kh::BindGroupDescriptor {
        label: None,
        layout: &res.layouts[k],
        entries,
    }
}

/// Writes [`UPLOAD_WRITE`] bytes through an Upload buffer's mapping.
///
/// # Safety
/// `buffer` is a mappable buffer of `d` of at least `UPLOAD_WRITE` bytes
/// that no GPU work uses.
unsafe fn write_upload<D: kh::Device>(
    d: &D,
    buffer: &<D::A as kh::Api>::Buffer,
) -> Result<(), String> {
    // SAFETY: the caller's contract; the write stays inside the mapping.
    unsafe {
        let map = d.map_buffer(buffer).map_err(err("map"))?;
        if map.size < UPLOAD_WRITE as u64 {
            return Err("keel-hal: mapping smaller than the write".into());
        }
        std::ptr::write_bytes(map.ptr.as_ptr(), 0xA5, UPLOAD_WRITE);
        d.unmap_buffer(buffer);
    }
    Ok(())
}

fn buffer_desc(size: u64, mem: Mem) -> kh::BufferDescriptor<'static> {
    let (usage, memory) = match mem {
        Mem::Device => (
            wgt::BufferUsages::STORAGE | wgt::BufferUsages::COPY_SRC | wgt::BufferUsages::COPY_DST,
            kh::Memory::Device,
        ),
        Mem::Upload => (
            wgt::BufferUsages::MAP_WRITE | wgt::BufferUsages::COPY_SRC,
            kh::Memory::Upload,
        ),
    };
    kh::BufferDescriptor {
        label: None,
        size,
        usage,
        memory,
    }
}

impl<A: kh::Api> Side for Keel<A> {
    fn adapter_name(&self) -> &str {
        &self.adapter_name
    }

    fn memory_held(&self) -> Option<(u64, u64)> {
        let mut reports = vec![self.device.memory_report()];
        if let Some(accel) = &self.accel {
            reports.push(accel.memory_report());
        }
        Some(reports.iter().fold((0, 0), |(r, k), m| {
            (r + m.reserved_bytes, k + m.retained_bytes)
        }))
    }

    fn sample_metrics(&mut self, work: &Workload) -> Result<Option<Vec<f64>>, String> {
        if !work.is_acceleration() {
            return Ok(self.sample(work)?.map(|ns| vec![ns]));
        }
        if self.accel.is_none() {
            self.accel = Some(KeelAccel::new(&self.instance, &self.adapter_name)?);
        }
        match self.accel.as_mut() {
            Some(accel) => accel.sample(work),
            None => Ok(None),
        }
    }

    fn sample(&mut self, work: &Workload) -> Result<Option<f64>, String> {
        let Some(mut res) = self.res.take() else {
            return Err("keel-hal: resources gone".into());
        };
        let result = match *work {
            Workload::External { size, iters } => self.external(size, iters).map(Some),
            w if w.is_acceleration() => Ok(None),
            _ => self.run(&mut res, work).map(Some),
        };
        self.res = Some(res);
        result
    }
}

impl<A: kh::Api> Keel<A> {
    fn run(&self, res: &mut Res<A>, work: &Workload) -> Result<f64, String> {
        let d = &self.device;
        match *work {
            Workload::BindGroups {
                layouts, groups, ..
            } => {
                let entries: Vec<_> = (0..layouts).map(|k| group_entries(res, k)).collect();
                let descs: Vec<_> = entries
                    .iter()
                    .enumerate()
                    .map(|(k, e)| group_desc(res, k, e))
                    .collect();
                let mut made = Vec::with_capacity(groups);
                let start = crate::count::Timer::start();
                for i in 0..groups {
                    // SAFETY: the layout and resources are live objects of this device.
                    made.push(
                        unsafe { d.create_bind_group(&descs[i % layouts]) }
                            .map_err(err("bind group"))?,
                    );
                }
                for group in made {
                    // SAFETY: never used by GPU work.
                    unsafe { d.destroy_bind_group(group) };
                }
                Ok(start.stop().as_nanos() as f64 / groups as f64)
            }
            Workload::External { .. } => Err("not a workload of this function".into()),
            Workload::BindGroupLayouts { count } => {
                let entries: Vec<_> = LAYOUTS
                    .iter()
                    .map(|kinds| workload::layout_entries(kinds))
                    .collect();
                let descs: Vec<_> = entries
                    .iter()
                    .map(|e| kh::BindGroupLayoutDescriptor {
                        entries: e,
                        ..Default::default()
                    })
                    .collect();
                let mut made = Vec::with_capacity(count);
                let start = crate::count::Timer::start();
                for i in 0..count {
                    // SAFETY: valid descriptor.
                    match unsafe { d.create_bind_group_layout(&descs[i % descs.len()]) } {
                        Ok(l) => made.push(l),
                        Err(e) => {
                            // SAFETY: unused layouts of this device.
                            made.into_iter()
                                .for_each(|l| unsafe { d.destroy_bind_group_layout(l) });
                            return Err(err("layout")(e));
                        }
                    }
                }
                for l in made {
                    // SAFETY: no bind group or pipeline layout uses it.
                    unsafe { d.destroy_bind_group_layout(l) };
                }
                Ok(start.stop().as_nanos() as f64 / count as f64)
            }
            Workload::Buffers {
                size,
                mem,
                holes,
                iters,
                live,
            } => {
                self.make_holes(res, mem, holes)?;
                let desc = buffer_desc(size, mem);
                let mut made = Vec::with_capacity(if live { iters } else { 0 });
                let start = crate::count::Timer::start();
                for _ in 0..iters {
                    // SAFETY: valid descriptor; the buffer is never used by the GPU.
                    let buffer = match unsafe { d.create_buffer(&desc) } {
                        Ok(b) => b,
                        Err(e) => {
                            // SAFETY: never used by the GPU.
                            made.into_iter()
                                .for_each(|b| unsafe { d.destroy_buffer(b) });
                            return Err(err("buffer")(e));
                        }
                    };
                    if mem == Mem::Upload {
                        // SAFETY: an Upload buffer of this device, at least
                        // UPLOAD_WRITE bytes, unknown to the GPU.
                        if let Err(e) = unsafe { write_upload(d, &buffer) } {
                            // SAFETY: never used by the GPU.
                            unsafe { d.destroy_buffer(buffer) };
                            made.into_iter()
                                .for_each(|b| unsafe { d.destroy_buffer(b) });
                            return Err(e);
                        }
                    }
                    if live {
                        made.push(buffer);
                    } else {
                        // SAFETY: never used by the GPU.
                        unsafe { d.destroy_buffer(buffer) };
                    }
                }
                for b in made {
                    // SAFETY: never used by the GPU.
                    unsafe { d.destroy_buffer(b) };
                }
                Ok(start.stop().as_nanos() as f64 / iters as f64)
            }
            Workload::Encode { pass, commands } => self.encode(res, pass, commands),
            Workload::WorkgroupZero {
                zeroing,
                groups,
                iters,
            } => self.zero(res, zeroing, groups, iters),
            Workload::Compaction { .. } | Workload::BlasCreate { .. } => {
                Err("acceleration workloads run on the AS device".into())
            }
        }
    }

    /// The workgroup-zeroing workload: `iters` rounds of begin, one
    /// dispatch of `groups` workgroups, end, submit, wait, reset; ns per round.
    fn zero(
        &self,
        res: &mut Res<A>,
        zeroing: Zeroing,
        groups: u32,
        iters: usize,
    ) -> Result<f64, String> {
        if groups > ZERO_MAX_GROUPS {
            return Err(format!(
                "keel-hal: {groups} groups, at most {ZERO_MAX_GROUPS}"
            ));
        }
        if res.zero.is_none() {
            res.zero = Some(self.make_zero()?);
        }
        let z = res
            .zero
            .as_mut()
            .ok_or("workgroup-zeroing objects missing")?;
        let pipeline = match zeroing {
            Zeroing::Native => &z.native.1,
            Zeroing::Polyfill => &z.polyfill.1,
        };
        let e = &mut z.encoder;
        let start = crate::count::Timer::start();
        for _ in 0..iters {
            z.value += 1;
            // SAFETY: no recording is in progress; every object recorded is
            // a live object of this device matching the pipeline layout;
            // `groups` is within the limits; the submission is waited for
            // before its command buffer goes back to the encoder.
            unsafe {
                e.begin_encoding(None).map_err(err("begin"))?;
                e.begin_compute_pass(&kh::ComputePassDescriptor::default());
                e.set_compute_pipeline(pipeline);
                e.set_bind_group(&z.pipeline_layout, 0, &z.group, &[]);
                e.dispatch([groups, 1, 1]);
                e.end_compute_pass();
                let cb = e.end_encoding().map_err(err("end"))?;
                self.queue
                    .submit(&[&cb], &[], &z.fence, z.value)
                    .map_err(err("submit"))?;
                self.device
                    .wait(&z.fence, z.value, None)
                    .map_err(err("wait"))?;
                e.reset_all(std::iter::once(cb));
            }
        }
        Ok(start.stop().as_nanos() as f64 / iters as f64)
    }

    fn make_holes(&self, res: &mut Res<A>, mem: Mem, holes: usize) -> Result<(), String> {
        if res.holes_key == Some((mem, holes)) {
            return Ok(());
        }
        Self::drop_holes(&self.device, res);
        let mut all = Vec::with_capacity(2 * holes);
        for size in workload::hole_sizes(2 * holes) {
            // SAFETY: valid descriptor.
            match unsafe { self.device.create_buffer(&buffer_desc(size, mem)) } {
                Ok(b) => all.push(b),
                Err(e) => {
                    // SAFETY: never used by the GPU.
                    all.into_iter()
                        .for_each(|b| unsafe { self.device.destroy_buffer(b) });
                    return Err(err("hole")(e));
                }
            }
        }
        for (i, b) in all.into_iter().enumerate() {
            if i % 2 == 0 {
                res.holes.push(b);
            } else {
                // SAFETY: never used by the GPU.
                unsafe { self.device.destroy_buffer(b) };
            }
        }
        res.holes_key = Some((mem, holes));
        Ok(())
    }

    fn drop_holes(device: &<A as kh::Api>::Device, res: &mut Res<A>) {
        for b in res.holes.drain(..) {
            // SAFETY: never used by the GPU.
            unsafe { device.destroy_buffer(b) };
        }
        res.holes_key = None;
    }

    fn encode(&self, res: &mut Res<A>, pass: Pass, commands: usize) -> Result<f64, String> {
        let e = &mut res.encoder;
        // A slice of known length, as the raw side indexes: no bounds
        // check in the timed loop that the raw side does not make.
        let groups = res
            .groups
            .get(..ENCODE_GROUPS)
            .ok_or("fewer bind groups than ENCODE_GROUPS")?;
        let start = crate::count::Timer::start();
        // SAFETY: no recording is in progress; every object recorded is a
        // live object of this device matching the pipeline layout; the
        // command buffer is never submitted and goes back to the encoder.
        unsafe {
            e.begin_encoding(None).map_err(err("begin"))?;
            match pass {
                Pass::Compute => {
                    e.begin_compute_pass(&kh::ComputePassDescriptor::default());
                    e.set_compute_pipeline(&res.compute);
                    for i in 0..commands {
                        e.set_bind_group(&res.pipeline_layout, 0, &groups[i % ENCODE_GROUPS], &[]);
                        e.dispatch([1, 1, 1]);
                    }
                    e.end_compute_pass();
                }
                Pass::Render => {
                    let color = [Some(kh::ColorAttachment {
                        target: kh::Attachment {
                            view: &res.target.1,
                            usage: kh::TextureUses::COLOR_TARGET,
                        },
                        resolve_target: None,
                        ops: kh::AttachmentOps::STORE,
                        clear_value: wgt::Color::BLACK,
                    })];
                    e.begin_render_pass(&kh::RenderPassDescriptor {
                        label: None,
                        extent: wgt::Extent3d {
                            width: TARGET_SIZE,
                            height: TARGET_SIZE,
                            depth_or_array_layers: 1,
                        },
                        sample_count: 1,
                        color_attachments: &color,
                        depth_stencil_attachment: None,
                        multiview_mask: None,
                    });
                    // The trait does not say begin_render_pass sets these; set
                    // them once, as the raw side does (negligible per command).
                    let size = TARGET_SIZE as f32;
                    e.set_viewport(
                        &kh::Rect {
                            x: 0.0,
                            y: 0.0,
                            w: size,
                            h: size,
                        },
                        0.0..1.0,
                    );
                    e.set_scissor_rect(&kh::Rect {
                        x: 0,
                        y: 0,
                        w: TARGET_SIZE,
                        h: TARGET_SIZE,
                    });
                    e.set_render_pipeline(&res.render);
                    for i in 0..commands {
                        e.set_bind_group(&res.pipeline_layout, 0, &groups[i % ENCODE_GROUPS], &[]);
                        e.draw(0, 3, 0, 1);
                    }
                    e.end_render_pass();
                }
            }
            let cb = e.end_encoding().map_err(err("end"))?;
            let ns = start.stop().as_nanos() as f64 / commands as f64;
            e.reset_all(std::iter::once(cb));
            Ok(ns)
        }
    }
}

impl<A: kh::Api> Drop for Keel<A> {
    fn drop(&mut self) {
        self.accel = None;
        let Some(mut res) = self.res.take() else {
            return;
        };
        Self::drop_holes(&self.device, &mut res);
        let d = &self.device;
        // SAFETY: only the workgroup-zeroing samples submit, and each waits
        // for its submissions, so no GPU work uses any of these; children
        // are destroyed before what they point at.
        unsafe {
            if let Some(zero) = res.zero.take() {
                zero.destroy(d);
            }
            d.destroy_command_encoder(res.encoder);
            for g in res.groups {
                d.destroy_bind_group(g);
            }
            d.destroy_render_pipeline(res.render);
            d.destroy_compute_pipeline(res.compute);
            d.destroy_shader_module(res.shader);
            d.destroy_pipeline_layout(res.pipeline_layout);
            d.destroy_sampler(res.sampler);
            for (texture, view) in [res.target, res.texture] {
                d.destroy_texture_view(view);
                d.destroy_texture(texture);
            }
            d.destroy_buffer(res.uniform);
            for l in res.layouts {
                d.destroy_bind_group_layout(l);
            }
        }
    }
}
