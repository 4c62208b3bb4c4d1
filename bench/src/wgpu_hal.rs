//! The wgpu-hal 30 side (Vulkan backend): the same workloads through its traits.

use std::borrow::Cow;
use std::num::NonZeroU64;
use std::time::Duration;

use wgpu_hal as hal;
use wgpu_hal::{CommandEncoder as _, Device as _, Instance as _, Queue as _};

use crate::wgpu_hal_accel::WgpuAccel;
use crate::workload::{
    self, Kind, Mem, Pass, Side, Workload, Zeroing, ENCODE_GROUPS, LAYOUTS, TARGET_SIZE,
    TEXTURE_SIZE, UNIFORM_SIZE, UPLOAD_WRITE, ZERO_ENTRY, ZERO_LAYOUT, ZERO_MAX_GROUPS,
    ZERO_OUT_SIZE,
};

type A = hal::vulkan::Api;
type Texture = (<A as hal::Api>::Texture, <A as hal::Api>::TextureView);

/// Everything made on the device, destroyed in `Drop`.
struct Res {
    layouts: Vec<<A as hal::Api>::BindGroupLayout>,
    uniform: <A as hal::Api>::Buffer,
    texture: Texture,
    target: Texture,
    sampler: <A as hal::Api>::Sampler,
    pipeline_layout: <A as hal::Api>::PipelineLayout,
    shader: <A as hal::Api>::ShaderModule,
    compute: <A as hal::Api>::ComputePipeline,
    render: <A as hal::Api>::RenderPipeline,
    encoder: <A as hal::Api>::CommandEncoder,
    groups: Vec<<A as hal::Api>::BindGroup>,
    holes: Vec<<A as hal::Api>::Buffer>,
    holes_key: Option<(Mem, usize)>,
    /// The workgroup-zeroing objects, made at that workload's first sample.
    zero: Option<Zero>,
}

/// What the workgroup-zeroing samples reuse: one module and pipeline per
/// [`Zeroing`] (native: the naga module; polyfill: the bench's SPIR-V).
struct Zero {
    layout: <A as hal::Api>::BindGroupLayout,
    pipeline_layout: <A as hal::Api>::PipelineLayout,
    out: <A as hal::Api>::Buffer,
    group: <A as hal::Api>::BindGroup,
    native: (
        <A as hal::Api>::ShaderModule,
        <A as hal::Api>::ComputePipeline,
    ),
    polyfill: (
        <A as hal::Api>::ShaderModule,
        <A as hal::Api>::ComputePipeline,
    ),
    encoder: <A as hal::Api>::CommandEncoder,
    fence: <A as hal::Api>::Fence,
    /// The value the last submission signalled.
    value: u64,
}

/// The wgpu-hal side. Field order is drop order: resources, device, queue, instance.
pub struct WgpuHal {
    adapter_name: String,
    res: Option<Res>,
    /// The acceleration-structure device, opened at its first workload.
    accel: Option<WgpuAccel>,
    device: <A as hal::Api>::Device,
    queue: <A as hal::Api>::Queue,
    instance: <A as hal::Api>::Instance,
}

fn err(what: &'static str) -> impl Fn(hal::DeviceError) -> String {
    move |e| format!("wgpu-hal {what}: {e}")
}

/// What `wgpu_hal::vulkan::Adapter::open` does, with a device function
/// table that counts its calls (`count.rs`): the same extensions, features
/// and queue (family 0, as wgpu-hal 30 picks), handed to `device_from_raw`.
///
/// # Safety
/// As for `open`: the adapter's instance outlives the device.
pub unsafe fn open_counted(
    adapter: &hal::vulkan::Adapter,
    features: wgt::Features,
    limits: &wgt::Limits,
) -> Result<hal::OpenDevice<A>, String> {
    use ash::vk;
    let extensions = adapter.required_device_extensions(features);
    let mut phd_features = adapter.physical_device_features(&extensions, features);
    let family_index = 0;
    let priorities = [1.0];
    let family = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(family_index)
        .queue_priorities(&priorities)];
    let names: Vec<_> = extensions.iter().map(|e| e.as_ptr()).collect();
    let info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&family)
        .enabled_extension_names(&names);
    let info = phd_features.add_to_device_create(info);
    let instance = adapter.shared_instance().raw_instance();
    // SAFETY: the create info is wgpu-hal's own for these features; the
    // table is loaded from the instance the device came from; wgpu-hal
    // takes ownership of the device (no drop callback).
    unsafe {
        let raw = instance
            .create_device(adapter.raw_physical_device(), &info, None)
            .map_err(|e| format!("wgpu-hal vkCreateDevice: {e}"))?;
        let counted = match crate::count::device(instance, raw.handle()) {
            Ok(d) => d,
            Err(e) => {
                raw.destroy_device(None);
                return Err(e);
            }
        };
        adapter
            .device_from_raw(
                counted,
                None,
                &extensions,
                features,
                limits,
                &wgt::MemoryHints::Performance,
                family_index,
                0,
            )
            .map_err(err("open"))
    }
}

/// Writes [`UPLOAD_WRITE`] bytes through a mappable buffer's mapping
/// (map, write, flush where not coherent, unmap).
///
/// # Safety
/// `buffer` is a MAP_WRITE buffer of `d` of at least `UPLOAD_WRITE` bytes
/// that no GPU work uses.
pub unsafe fn write_upload(
    d: &<A as hal::Api>::Device,
    buffer: &<A as hal::Api>::Buffer,
) -> Result<(), String> {
    let range = 0..UPLOAD_WRITE as u64;
    // SAFETY: the caller's contract; the write stays inside the mapped range.
    unsafe {
        let map = d.map_buffer(buffer, range.clone()).map_err(err("map"))?;
        std::ptr::write_bytes(map.ptr.as_ptr(), 0xA5, UPLOAD_WRITE);
        if !map.is_coherent {
            d.flush_mapped_ranges(buffer, std::iter::once(range));
        }
        d.unmap_buffer(buffer);
    }
    Ok(())
}

impl WgpuHal {
    /// Opens the adapter whose name contains `adapter`.
    pub fn new(adapter: &str) -> Result<Self, String> {
        let desc = hal::InstanceDescriptor {
            name: "keel-bench",
            flags: wgt::InstanceFlags::empty(),
            memory_budget_thresholds: wgt::MemoryBudgetThresholds::default(),
            backend_options: wgt::BackendOptions::default(),
            telemetry: None,
            display: None,
        };
        // SAFETY: the system's Vulkan loader is a conforming one.
        let instance = unsafe { hal::vulkan::Instance::init(&desc) }
            .map_err(|e| format!("wgpu-hal instance: {e}"))?;
        // SAFETY: live instance; no surface.
        let adapters = unsafe { instance.enumerate_adapters(None) };
        let exposed = crate::pick_adapter(&adapters, |a| a.info.name.as_str(), Some(adapter))
            .ok_or_else(|| format!("wgpu-hal: no adapter named {adapter:?}"))?;
        let limits = exposed.capabilities.limits.clone();
        // SAFETY: the adapter came from this instance, which outlives the device.
        let open = unsafe { open_counted(&exposed.adapter, wgt::Features::empty(), &limits) }?;
        let mut side = WgpuHal {
            adapter_name: exposed.info.name.clone(),
            res: None,
            accel: None,
            device: open.device,
            queue: open.queue,
            instance,
        };
        side.res = Some(side.make_resources()?);
        Ok(side)
    }

    fn make_resources(&self) -> Result<Res, String> {
        // Objects made before a failure are left to the device's destruction:
        // this only happens at start-up, where the process then exits.
        let d = &self.device;
        // SAFETY: every descriptor below is valid and names objects of this device.
        unsafe {
            let mut layouts = Vec::new();
            for kinds in LAYOUTS {
                let entries = workload::layout_entries(kinds);
                let desc = hal::BindGroupLayoutDescriptor {
                    label: None,
                    flags: hal::BindGroupLayoutFlags::empty(),
                    entries: &entries,
                };
                layouts.push(d.create_bind_group_layout(&desc).map_err(err("layout"))?);
            }
            let desc = hal::BufferDescriptor {
                label: None,
                size: UNIFORM_SIZE,
                usage: wgt::BufferUses::UNIFORM,
                memory_flags: hal::MemoryFlags::empty(),
            };
            let uniform = d.create_buffer(&desc).map_err(err("uniform"))?;
            let texture = self.texture(TEXTURE_SIZE, wgt::TextureUses::RESOURCE)?;
            let target = self.texture(TARGET_SIZE, wgt::TextureUses::COLOR_TARGET)?;
            let desc = hal::SamplerDescriptor {
                label: None,
                address_modes: [wgt::AddressMode::ClampToEdge; 3],
                mag_filter: wgt::FilterMode::Linear,
                min_filter: wgt::FilterMode::Linear,
                mipmap_filter: wgt::MipmapFilterMode::Nearest,
                lod_clamp: 0.0..32.0,
                compare: None,
                anisotropy_clamp: 1,
                border_color: None,
            };
            let sampler = d.create_sampler(&desc).map_err(err("sampler"))?;
            let desc = hal::PipelineLayoutDescriptor {
                label: None,
                flags: hal::PipelineLayoutFlags::empty(),
                bind_group_layouts: &[Some(&layouts[0])],
                immediate_size: 0,
            };
            let pipeline_layout = d
                .create_pipeline_layout(&desc)
                .map_err(err("pipeline layout"))?;
            let (module, info) = workload::naga_module()?;
            let naga = hal::NagaShader {
                module: Cow::Owned(module),
                info,
                debug_source: None,
            };
            let desc = hal::ShaderModuleDescriptor {
                label: None,
                runtime_checks: wgt::ShaderRuntimeChecks::checked(),
            };
            let shader = d
                .create_shader_module(&desc, hal::ShaderInput::Naga(naga))
                .map_err(|e| format!("wgpu-hal shader: {e}"))?;
            let constants = Default::default();
            let stage = |entry_point| hal::ProgrammableStage {
                module: &shader,
                entry_point,
                constants: &constants,
                zero_initialize_workgroup_memory: false,
            };
            let desc = hal::ComputePipelineDescriptor {
                label: None,
                layout: &pipeline_layout,
                stage: stage("cs_main"),
                cache: None,
            };
            let compute = d
                .create_compute_pipeline(&desc)
                .map_err(|e| format!("wgpu-hal compute: {e}"))?;
            let targets = [Some(wgt::ColorTargetState::from(
                wgt::TextureFormat::Rgba8Unorm,
            ))];
            let desc = hal::RenderPipelineDescriptor {
                label: None,
                layout: &pipeline_layout,
                vertex_processor: hal::VertexProcessor::Standard {
                    vertex_buffers: &[],
                    vertex_stage: stage("vs_main"),
                },
                primitive: wgt::PrimitiveState::default(),
                depth_stencil: None,
                multisample: wgt::MultisampleState::default(),
                fragment_stage: Some(stage("fs_main")),
                color_targets: &targets,
                multiview_mask: None,
                cache: None,
            };
            let render = d
                .create_render_pipeline(&desc)
                .map_err(|e| format!("wgpu-hal render: {e}"))?;
            let desc = hal::CommandEncoderDescriptor {
                label: None,
                queue: &self.queue,
            };
            let encoder = d.create_command_encoder(&desc).map_err(err("encoder"))?;
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
                let group = self.create_group(&res, 0)?;
                res.groups.push(group);
            }
            Ok(res)
        }
    }

    /// A 2D RGBA8 texture of `size`² and its view.
    fn texture(&self, size: u32, usage: wgt::TextureUses) -> Result<Texture, String> {
        let desc = hal::TextureDescriptor {
            label: None,
            size: wgt::Extent3d {
                width: size,
                height: size,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgt::TextureDimension::D2,
            format: wgt::TextureFormat::Rgba8Unorm,
            usage,
            memory_flags: hal::MemoryFlags::empty(),
            view_formats: Vec::new(),
        };
        // SAFETY: valid descriptors; the view is of this texture.
        unsafe {
            let texture = self.device.create_texture(&desc).map_err(err("texture"))?;
            let desc = hal::TextureViewDescriptor {
                label: None,
                format: wgt::TextureFormat::Rgba8Unorm,
                dimension: wgt::TextureViewDimension::D2,
                usage,
                range: wgt::ImageSubresourceRange {
                    mip_level_count: Some(1),
                    array_layer_count: Some(1),
                    ..Default::default()
                },
            };
            match self.device.create_texture_view(&texture, &desc) {
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
    fn make_zero(&self) -> Result<Zero, String> {
        let d = &self.device;
        let spirv = workload::zero_spirv()?;
        // SAFETY: every descriptor below is valid and names objects of this device.
        unsafe {
            let desc = hal::BindGroupLayoutDescriptor {
                label: None,
                flags: hal::BindGroupLayoutFlags::empty(),
                entries: &ZERO_LAYOUT,
            };
            let layout = d
                .create_bind_group_layout(&desc)
                .map_err(err("zero layout"))?;
            let desc = hal::PipelineLayoutDescriptor {
                label: None,
                flags: hal::PipelineLayoutFlags::empty(),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            };
            let pipeline_layout = d
                .create_pipeline_layout(&desc)
                .map_err(err("zero pipeline layout"))?;
            let desc = hal::BufferDescriptor {
                label: None,
                size: ZERO_OUT_SIZE,
                usage: wgt::BufferUses::STORAGE_READ_WRITE,
                memory_flags: hal::MemoryFlags::empty(),
            };
            let out = d.create_buffer(&desc).map_err(err("zero buffer"))?;
            let buffers = [hal::BufferBinding::new_unchecked(
                &out,
                0,
                NonZeroU64::new(ZERO_OUT_SIZE),
            )];
            let entries = [hal::BindGroupEntry {
                binding: 0,
                resource_index: 0,
                count: 1,
            }];
            let desc = hal::BindGroupDescriptor {
                label: None,
                layout: &layout,
                buffers: &buffers,
                samplers: &[],
                textures: &[],
                entries: &entries,
                acceleration_structures: &[],
                external_textures: &[],
            };
            let group = d.create_bind_group(&desc).map_err(err("zero bind group"))?;
            let constants = Default::default();
            let pipeline = |input| -> Result<_, String> {
                let desc = hal::ShaderModuleDescriptor {
                    label: None,
                    runtime_checks: wgt::ShaderRuntimeChecks::checked(),
                };
                let shader = d
                    .create_shader_module(&desc, input)
                    .map_err(|e| format!("wgpu-hal zero shader: {e}"))?;
                let desc = hal::ComputePipelineDescriptor {
                    label: None,
                    layout: &pipeline_layout,
                    stage: hal::ProgrammableStage {
                        module: &shader,
                        entry_point: ZERO_ENTRY,
                        constants: &constants,
                        // As wgpu asks: zeroed, as the module's options say.
                        zero_initialize_workgroup_memory: true,
                    },
                    cache: None,
                };
                let pipeline = d
                    .create_compute_pipeline(&desc)
                    .map_err(|e| format!("wgpu-hal zero pipeline: {e}"))?;
                Ok((shader, pipeline))
            };
            let (module, info) = workload::zero_module()?;
            let naga = hal::NagaShader {
                module: Cow::Owned(module),
                info,
                debug_source: None,
            };
            let native = pipeline(hal::ShaderInput::Naga(naga))?;
            let polyfill = pipeline(hal::ShaderInput::SpirV(spirv))?;
            let desc = hal::CommandEncoderDescriptor {
                label: None,
                queue: &self.queue,
            };
            let encoder = d
                .create_command_encoder(&desc)
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

    /// One bind group of churn layout `k`.
    fn create_group(&self, res: &Res, k: usize) -> Result<<A as hal::Api>::BindGroup, String> {
        let parts = Parts::new(res, k);
        // SAFETY: the layout and every resource are live objects of this device.
        unsafe { self.device.create_bind_group(&parts.desc(res, k)) }.map_err(err("bind group"))
    }
}

/// The resource arrays of a bind group descriptor of churn layout `k`:
/// entries sorted by binding, one resource slot each, as wgpu-hal requires.
struct Parts<'a> {
    buffers: Vec<hal::BufferBinding<'a, <A as hal::Api>::Buffer>>,
    textures: Vec<hal::TextureBinding<'a, <A as hal::Api>::TextureView>>,
    samplers: Vec<&'a <A as hal::Api>::Sampler>,
    entries: Vec<hal::BindGroupEntry>,
}

type GroupDesc<'a> = hal::BindGroupDescriptor<
    'a,
    <A as hal::Api>::BindGroupLayout,
    <A as hal::Api>::Buffer,
    <A as hal::Api>::Sampler,
    <A as hal::Api>::TextureView,
    <A as hal::Api>::AccelerationStructure,
>;

impl<'a> Parts<'a> {
    fn new(res: &'a Res, k: usize) -> Self {
        let mut p = Parts {
            buffers: Vec::new(),
            textures: Vec::new(),
            samplers: Vec::new(),
            entries: Vec::new(),
        };
        for (i, kind) in LAYOUTS[k].iter().enumerate() {
            let resource_index = match kind {
                Kind::Uniform => {
                    p.buffers.push(hal::BufferBinding::new_unchecked(
                        &res.uniform,
                        0,
                        NonZeroU64::new(UNIFORM_SIZE),
                    ));
                    p.buffers.len() - 1
                }
                Kind::Texture => {
                    p.textures.push(hal::TextureBinding {
                        view: &res.texture.1,
                        usage: wgt::TextureUses::RESOURCE,
                    });
                    p.textures.len() - 1
                }
                Kind::Sampler => {
                    p.samplers.push(&res.sampler);
                    p.samplers.len() - 1
                }
            };
            p.entries.push(hal::BindGroupEntry {
                binding: i as u32,
                resource_index: resource_index as u32,
                count: 1,
            });
        }
        p
    }

    fn desc(&'a self, res: &'a Res, k: usize) -> GroupDesc<'a> {
        hal::BindGroupDescriptor {
            label: None,
            layout: &res.layouts[k],
            buffers: &self.buffers,
            samplers: &self.samplers,
            textures: &self.textures,
            entries: &self.entries,
            acceleration_structures: &[],
            external_textures: &[],
        }
    }
}

fn buffer_desc(size: u64, mem: Mem) -> hal::BufferDescriptor<'static> {
    let (usage, memory_flags) = match mem {
        Mem::Device => (
            wgt::BufferUses::STORAGE_READ_WRITE
                | wgt::BufferUses::COPY_SRC
                | wgt::BufferUses::COPY_DST,
            hal::MemoryFlags::empty(),
        ),
        Mem::Upload => (
            wgt::BufferUses::MAP_WRITE | wgt::BufferUses::COPY_SRC,
            hal::MemoryFlags::PREFER_COHERENT,
        ),
    };
    hal::BufferDescriptor {
        label: None,
        size,
        usage,
        memory_flags,
    }
}

impl Side for WgpuHal {
    fn adapter_name(&self) -> &str {
        &self.adapter_name
    }

    fn sample_metrics(&mut self, work: &Workload) -> Result<Option<Vec<f64>>, String> {
        if !work.is_acceleration() {
            return Ok(self.sample(work)?.map(|ns| vec![ns]));
        }
        if self.accel.is_none() {
            self.accel = Some(WgpuAccel::new(&self.instance, &self.adapter_name)?);
        }
        match self.accel.as_mut() {
            Some(accel) => accel.sample(work),
            None => Ok(None),
        }
    }

    fn sample(&mut self, work: &Workload) -> Result<Option<f64>, String> {
        let Some(mut res) = self.res.take() else {
            return Err("wgpu-hal: resources gone".into());
        };
        let result = match work {
            // No external memory in wgpu-hal's API.
            Workload::External { .. } => Ok(None),
            w if w.is_acceleration() => Ok(None),
            _ => self.run(&mut res, work).map(Some),
        };
        self.res = Some(res);
        result
    }
}

impl WgpuHal {
    fn run(&self, res: &mut Res, work: &Workload) -> Result<f64, String> {
        let d = &self.device;
        match *work {
            Workload::BindGroups {
                layouts, groups, ..
            } => {
                let parts: Vec<Parts> = (0..layouts).map(|k| Parts::new(res, k)).collect();
                let descs: Vec<GroupDesc> = parts
                    .iter()
                    .enumerate()
                    .map(|(k, p)| p.desc(res, k))
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
            Workload::External { .. } => Err("not a workload of this side".into()),
            Workload::BindGroupLayouts { count } => {
                let entries: Vec<_> = LAYOUTS
                    .iter()
                    .map(|kinds| workload::layout_entries(kinds))
                    .collect();
                let descs: Vec<_> = entries
                    .iter()
                    .map(|e| hal::BindGroupLayoutDescriptor {
                        label: None,
                        flags: hal::BindGroupLayoutFlags::empty(),
                        entries: e,
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
                        // SAFETY: a MAP_WRITE buffer of this device, at least
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
        res: &mut Res,
        zeroing: Zeroing,
        groups: u32,
        iters: usize,
    ) -> Result<f64, String> {
        if groups > ZERO_MAX_GROUPS {
            return Err(format!(
                "wgpu-hal: {groups} groups, at most {ZERO_MAX_GROUPS}"
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
                e.begin_compute_pass(&hal::ComputePassDescriptor {
                    label: None,
                    timestamp_writes: None,
                });
                e.set_compute_pipeline(pipeline);
                e.set_bind_group(&z.pipeline_layout, 0, &z.group, &[]);
                e.dispatch_workgroups([groups, 1, 1]);
                e.end_compute_pass();
                let cb = e.end_encoding().map_err(err("end"))?;
                self.queue
                    .submit(&[&cb], &[], (&z.fence, z.value))
                    .map_err(err("submit"))?;
                let done = self
                    .device
                    .wait(&z.fence, z.value, Some(Duration::from_secs(600)))
                    .map_err(err("wait"))?;
                if !done {
                    return Err("wgpu-hal: the GPU did not finish in 600 s".into());
                }
                e.reset_all(std::iter::once(cb));
            }
        }
        Ok(start.stop().as_nanos() as f64 / iters as f64)
    }

    fn make_holes(&self, res: &mut Res, mem: Mem, holes: usize) -> Result<(), String> {
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

    fn drop_holes(device: &<A as hal::Api>::Device, res: &mut Res) {
        for b in res.holes.drain(..) {
            // SAFETY: never used by the GPU.
            unsafe { device.destroy_buffer(b) };
        }
        res.holes_key = None;
    }

    fn encode(&self, res: &mut Res, pass: Pass, commands: usize) -> Result<f64, String> {
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
                    e.begin_compute_pass(&hal::ComputePassDescriptor {
                        label: None,
                        timestamp_writes: None,
                    });
                    e.set_compute_pipeline(&res.compute);
                    for i in 0..commands {
                        e.set_bind_group(&res.pipeline_layout, 0, &groups[i % ENCODE_GROUPS], &[]);
                        e.dispatch_workgroups([1, 1, 1]);
                    }
                    e.end_compute_pass();
                }
                Pass::Render => {
                    let color = [Some(hal::ColorAttachment {
                        target: hal::Attachment {
                            view: &res.target.1,
                            usage: wgt::TextureUses::COLOR_TARGET,
                        },
                        depth_slice: None,
                        resolve_target: None,
                        ops: hal::AttachmentOps::LOAD_CLEAR | hal::AttachmentOps::STORE,
                        clear_value: wgt::Color::BLACK,
                    })];
                    e.begin_render_pass(&hal::RenderPassDescriptor {
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
                        timestamp_writes: None,
                        occlusion_query_set: None,
                    })
                    .map_err(err("render pass"))?;
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

impl Drop for WgpuHal {
    fn drop(&mut self) {
        self.accel = None;
        let Some(mut res) = self.res.take() else {
            return;
        };
        Self::drop_holes(&self.device, &mut res);
        // wgpu-hal has no destroy for encoders: dropping one frees its pool.
        drop(res.encoder);
        let d = &self.device;
        // SAFETY: only the workgroup-zeroing samples submit, and each waits
        // for its submissions, so no GPU work uses any of these; children
        // are destroyed before what they point at.
        unsafe {
            if let Some(z) = res.zero.take() {
                drop(z.encoder);
                d.destroy_fence(z.fence);
                for (shader, pipeline) in [z.native, z.polyfill] {
                    d.destroy_compute_pipeline(pipeline);
                    d.destroy_shader_module(shader);
                }
                d.destroy_bind_group(z.group);
                d.destroy_buffer(z.out);
                d.destroy_pipeline_layout(z.pipeline_layout);
                d.destroy_bind_group_layout(z.layout);
            }
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
