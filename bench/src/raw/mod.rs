//! The floor: the same work written directly against Vulkan with `ash`.
//!
//! This file opens the device and makes the fixed resources (layouts,
//! uniform buffer, texture, sampler, pipelines, render target, command
//! buffer); `work.rs` runs the samples. Every handle starts null and `Drop`
//! destroys what is not, so a failed set-up releases what it made.

mod accel;
mod arena;
mod external;
mod work;

use std::ffi::CStr;

use ash::vk;

use crate::workload::{self, Kind, LAYOUTS, TARGET_SIZE, TEXTURE_SIZE, UNIFORM_SIZE};

/// What the chosen Vulkan adapter is, as the driver reports it.
#[derive(Clone, Debug, Default)]
pub struct AdapterReport {
    pub name: String,
    pub driver: String,
    pub driver_info: String,
    pub api_version: String,
}

/// Whether the floors make their own lean Vulkan choices instead of
/// keel-hal's (`BENCH_RAW_LEAN` set; a diagnostic, off by default). By
/// default a floor records exactly what keel-hal records: command buffers
/// from a `TRANSIENT` pool, begun without `ONE_TIME_SUBMIT` and recycled
/// by a pool reset; render pipelines with keel-hal's four dynamic states;
/// a render pass begun with the state keel-hal's `begin_render_pass` sets.
/// Lean: a resettable pool, `ONE_TIME_SUBMIT`, two dynamic states, only
/// the viewport and scissor set. Comparing the two shows what keel-hal's
/// choices cost the driver, apart from what keel-hal itself costs.
pub(crate) fn lean() -> bool {
    static LEAN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *LEAN.get_or_init(|| std::env::var_os("BENCH_RAW_LEAN").is_some())
}

/// The dynamic states of the floors' render pipeline (see [`lean`]):
/// keel-hal's (`src/vulkan/pipeline_state.rs`), or viewport and scissor.
fn dynamic_states() -> &'static [vk::DynamicState] {
    const KEEL: [vk::DynamicState; 4] = [
        vk::DynamicState::VIEWPORT,
        vk::DynamicState::SCISSOR,
        vk::DynamicState::STENCIL_REFERENCE,
        vk::DynamicState::BLEND_CONSTANTS,
    ];
    if lean() {
        &KEEL[..2]
    } else {
        &KEEL
    }
}

/// The floors' command pool flags and begin flags (see [`lean`]).
/// Which barrier the raw compute-encoding floor records after each dispatch
/// (`BENCH_RAW_BARRIER`; a diagnostic, off by default): `buffer2` a
/// `vkCmdPipelineBarrier2` with one buffer barrier (what keel-hal records
/// between two writing dispatches), `global2` the same with one global
/// memory barrier, `buffer1` / `global1` the same through
/// `vkCmdPipelineBarrier`. Comparing them shows what a barrier's form costs
/// the driver's CPU side.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) enum Barrier {
    None,
    Buffer2,
    Global2,
    Buffer1,
    Global1,
}

pub(crate) fn barrier() -> Barrier {
    static FORM: std::sync::OnceLock<Barrier> = std::sync::OnceLock::new();
    *FORM.get_or_init(|| match std::env::var("BENCH_RAW_BARRIER").as_deref() {
        Ok("buffer2") => Barrier::Buffer2,
        Ok("global2") => Barrier::Global2,
        Ok("buffer1") => Barrier::Buffer1,
        Ok("global1") => Barrier::Global1,
        _ => Barrier::None,
    })
}

/// The stages of the sync2 forms of [`barrier`] (`BENCH_RAW_BARRIER_STAGES`):
/// `compute` (the default), `raster` (pre-rasterization, fragment and
/// compute shaders: keel-hal's stages for a storage use), `rt` (those and
/// ray-tracing shaders: keel-hal's on a device with ray-tracing pipelines).
pub(crate) fn barrier_stages() -> vk::PipelineStageFlags2 {
    use vk::PipelineStageFlags2 as S;
    let raster = S::PRE_RASTERIZATION_SHADERS | S::FRAGMENT_SHADER | S::COMPUTE_SHADER;
    match std::env::var("BENCH_RAW_BARRIER_STAGES").as_deref() {
        Ok("raster") => raster,
        Ok("rt") => raster | S::RAY_TRACING_SHADER_KHR,
        _ => S::COMPUTE_SHADER,
    }
}

fn command_flags() -> (vk::CommandPoolCreateFlags, vk::CommandBufferUsageFlags) {
    if lean() {
        (
            vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER,
            vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT,
        )
    } else {
        (
            vk::CommandPoolCreateFlags::TRANSIENT,
            vk::CommandBufferUsageFlags::empty(),
        )
    }
}

/// The flags of the floors' descriptor pools for kept sets (see [`lean`]):
/// keel-hal's pools free single sets (`FREE_DESCRIPTOR_SET`, as its set
/// cache hands sets back one by one), so the floors' pools do too.
fn set_pool_flags() -> vk::DescriptorPoolCreateFlags {
    if lean() {
        vk::DescriptorPoolCreateFlags::empty()
    } else {
        vk::DescriptorPoolCreateFlags::FREE_DESCRIPTOR_SET
    }
}

pub(crate) fn vk_err(what: &'static str) -> impl Fn(vk::Result) -> String {
    move |e| format!("{what}: {e}")
}

/// A buffer with its own `VkDeviceMemory`.
#[derive(Clone, Copy, Default)]
struct RawBuffer {
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
}

/// An image with its memory and one view.
#[derive(Clone, Copy, Default)]
struct RawImage {
    image: vk::Image,
    memory: vk::DeviceMemory,
    view: vk::ImageView,
}

/// The raw `ash` side.
pub struct Raw {
    _entry: ash::Entry,
    instance: ash::Instance,
    /// The adapter, for the acceleration-structure device.
    pdev: vk::PhysicalDevice,
    family: u32,
    /// The acceleration-structure device, opened at its first workload.
    accel: Option<accel::RawAccel>,
    /// The external workload's two devices, made on first use.
    external: Option<external::RawExternal>,
    device: ash::Device,
    memory_types: Vec<vk::MemoryType>,
    pub report: AdapterReport,
    layouts: [vk::DescriptorSetLayout; 3],
    uniform: RawBuffer,
    texture: RawImage,
    target: RawImage,
    sampler: vk::Sampler,
    pipeline_layout: vk::PipelineLayout,
    compute: vk::Pipeline,
    render: vk::Pipeline,
    command_pool: vk::CommandPool,
    command_buffer: vk::CommandBuffer,
    /// Pool for churn (FREE_DESCRIPTOR_SET) and its set capacity.
    churn_pool: (vk::DescriptorPool, usize),
    /// The reuse floor: a pool, its set capacity, and each layout's free list.
    reuse: (vk::DescriptorPool, usize, [Vec<vk::DescriptorSet>; 3]),
    /// Pool and sets kept for the write-only floor and the encoding workloads.
    kept_pool: vk::DescriptorPool,
    kept_sets: Vec<vk::DescriptorSet>,
    /// Live hole buffers, the arena they are bound into, and what they
    /// were built for.
    holes: Vec<vk::Buffer>,
    hole_arena: Option<arena::Arena>,
    holes_key: Option<(workload::Mem, usize)>,
    /// The buffer workloads' arena and the (memory kind, size, count) it
    /// was reserved for.
    buffer_arena: Option<(work::ArenaKey, arena::Arena)>,
    /// Buffers of the buffer workloads "destroyed" and kept, still bound
    /// into `buffer_arena`, with their mapped bytes (null where unmapped):
    /// the next create of the same workload takes one, as keel-hal's
    /// retention does.
    kept_buffers: Vec<(vk::Buffer, *mut u8)>,
}

impl Raw {
    /// Opens the first adapter (or the first whose name contains `filter`).
    pub fn new(filter: Option<&str>) -> Result<Self, String> {
        // The system's loader, with device tables that count (`count.rs`).
        let entry = crate::count::entry()?;
        let app = vk::ApplicationInfo::default()
            .application_name(c"keel-bench")
            .api_version(vk::API_VERSION_1_3);
        let info = vk::InstanceCreateInfo::default().application_info(&app);
        // SAFETY: valid create info; the instance is destroyed in Drop or below.
        let instance =
            unsafe { entry.create_instance(&info, None) }.map_err(vk_err("vkCreateInstance"))?;
        match Self::open(entry, instance.clone(), filter) {
            Ok(raw) => Ok(raw),
            Err((e, None)) => {
                // SAFETY: nothing else was made from the instance.
                unsafe { instance.destroy_instance(None) };
                Err(e)
            }
            Err((e, Some(partial))) => {
                drop(partial);
                Err(e)
            }
        }
    }

    #[allow(clippy::result_large_err)]
    fn open(
        entry: ash::Entry,
        instance: ash::Instance,
        filter: Option<&str>,
    ) -> Result<Self, (String, Option<Self>)> {
        let fail = |e: String| (e, None);
        // SAFETY: live instance.
        let pdevs = unsafe { instance.enumerate_physical_devices() }
            .map_err(|e| fail(vk_err("enumerate")(e)))?;
        let named: Vec<(vk::PhysicalDevice, String)> = pdevs
            .iter()
            .map(|&pd| {
                // SAFETY: pd came from this instance.
                let props = unsafe { instance.get_physical_device_properties(pd) };
                let name = props
                    .device_name_as_c_str()
                    .unwrap_or(c"?")
                    .to_string_lossy()
                    .into_owned();
                (pd, name)
            })
            .collect();
        let (pdev, name) = crate::pick_adapter(&named, |(_, n)| n.as_str(), filter)
            .cloned()
            .ok_or_else(|| fail(format!("no Vulkan adapter matches {filter:?}")))?;

        let mut driver = vk::PhysicalDeviceDriverProperties::default();
        let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut driver);
        // SAFETY: pdev came from this instance; Vulkan 1.1+ core query.
        unsafe { instance.get_physical_device_properties2(pdev, &mut props2) };
        let props = props2.properties;
        let v = props.api_version;
        let report = AdapterReport {
            name,
            driver: cstr(driver.driver_name_as_c_str()),
            driver_info: cstr(driver.driver_info_as_c_str()),
            api_version: format!(
                "{}.{}.{}",
                vk::api_version_major(v),
                vk::api_version_minor(v),
                vk::api_version_patch(v)
            ),
        };
        // SAFETY: pdev came from this instance.
        let mem = unsafe { instance.get_physical_device_memory_properties(pdev) };
        let memory_types = mem.memory_types_as_slice().to_vec();
        // SAFETY: pdev came from this instance.
        let families = unsafe { instance.get_physical_device_queue_family_properties(pdev) };
        let family = families
            .iter()
            .position(|f| {
                f.queue_flags
                    .contains(vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)
            })
            .ok_or_else(|| fail("no graphics+compute queue family".into()))?
            as u32;

        let priorities = [1.0];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&priorities)];
        let mut v13 = vk::PhysicalDeviceVulkan13Features::default()
            .dynamic_rendering(true)
            .synchronization2(true);
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .push_next(&mut v13);
        // SAFETY: valid create info; the device is destroyed in Drop.
        let device = unsafe { instance.create_device(pdev, &info, None) }
            .map_err(|e| fail(vk_err("vkCreateDevice")(e)))?;

        let mut raw = Raw {
            _entry: entry,
            instance,
            pdev,
            family,
            accel: None,
            external: None,
            device,
            memory_types,
            report,
            layouts: Default::default(),
            uniform: RawBuffer::default(),
            texture: RawImage::default(),
            target: RawImage::default(),
            sampler: vk::Sampler::null(),
            pipeline_layout: vk::PipelineLayout::null(),
            compute: vk::Pipeline::null(),
            render: vk::Pipeline::null(),
            command_pool: vk::CommandPool::null(),
            command_buffer: vk::CommandBuffer::null(),
            churn_pool: (vk::DescriptorPool::null(), 0),
            reuse: (vk::DescriptorPool::null(), 0, Default::default()),
            kept_pool: vk::DescriptorPool::null(),
            kept_sets: Vec::new(),
            holes: Vec::new(),
            hole_arena: None,
            holes_key: None,
            buffer_arena: None,
            kept_buffers: Vec::new(),
        };
        match raw.make_resources(family) {
            Ok(()) => Ok(raw),
            Err(e) => Err((e, Some(raw))),
        }
    }

    fn make_resources(&mut self, family: u32) -> Result<(), String> {
        for (slot, kinds) in self.layouts.iter_mut().zip(LAYOUTS) {
            let bindings = layout_bindings(kinds);
            let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
            // SAFETY: live device, valid create info.
            *slot = unsafe { self.device.create_descriptor_set_layout(&info, None) }
                .map_err(vk_err("set layout"))?;
        }
        self.uniform = self.create_buffer(
            UNIFORM_SIZE,
            workload::Mem::Device,
            vk::BufferUsageFlags::UNIFORM_BUFFER,
        )?;
        let sampled = vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST;
        self.texture = self.create_image(TEXTURE_SIZE, sampled)?;
        self.target = self.create_image(TARGET_SIZE, vk::ImageUsageFlags::COLOR_ATTACHMENT)?;
        let info = vk::SamplerCreateInfo::default()
            .mag_filter(vk::Filter::LINEAR)
            .min_filter(vk::Filter::LINEAR)
            .max_lod(32.0);
        // SAFETY: live device, valid create info.
        self.sampler =
            unsafe { self.device.create_sampler(&info, None) }.map_err(vk_err("sampler"))?;
        let set_layouts = [self.layouts[0]];
        let info = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts);
        // SAFETY: live device; the set layout is live.
        self.pipeline_layout = unsafe { self.device.create_pipeline_layout(&info, None) }
            .map_err(vk_err("pipeline layout"))?;
        self.make_pipelines()?;
        let info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(family)
            .flags(command_flags().0);
        // SAFETY: live device, valid create info.
        self.command_pool = unsafe { self.device.create_command_pool(&info, None) }
            .map_err(vk_err("command pool"))?;
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.command_pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: the pool is live; the buffer is freed with it.
        self.command_buffer = unsafe { self.device.allocate_command_buffers(&info) }
            .map_err(vk_err("command buffer"))?[0];
        Ok(())
    }

    fn make_pipelines(&mut self) -> Result<(), String> {
        let code = workload::spirv()?;
        let info = vk::ShaderModuleCreateInfo::default().code(&code);
        // SAFETY: live device; naga-generated SPIR-V.
        let module = unsafe { self.device.create_shader_module(&info, None) }
            .map_err(vk_err("shader module"))?;
        let result = self.make_pipelines_from(module);
        // SAFETY: pipelines made from the module stay valid without it.
        unsafe { self.device.destroy_shader_module(module, None) };
        result
    }

    fn make_pipelines_from(&mut self, module: vk::ShaderModule) -> Result<(), String> {
        let stage = |s, name: &'static CStr| {
            vk::PipelineShaderStageCreateInfo::default()
                .stage(s)
                .module(module)
                .name(name)
        };
        let info = vk::ComputePipelineCreateInfo::default()
            .stage(stage(vk::ShaderStageFlags::COMPUTE, c"cs_main"))
            .layout(self.pipeline_layout);
        // SAFETY: live device, module and layout.
        let made = unsafe {
            self.device
                .create_compute_pipelines(vk::PipelineCache::null(), &[info], None)
        };
        self.compute = made.map_err(|(_, e)| vk_err("compute pipeline")(e))?[0];

        let stages = [
            stage(vk::ShaderStageFlags::VERTEX, c"vs_main"),
            stage(vk::ShaderStageFlags::FRAGMENT, c"fs_main"),
        ];
        let vertex = vk::PipelineVertexInputStateCreateInfo::default();
        let assembly = vk::PipelineInputAssemblyStateCreateInfo::default()
            .topology(vk::PrimitiveTopology::TRIANGLE_LIST);
        let viewport = vk::PipelineViewportStateCreateInfo::default()
            .viewport_count(1)
            .scissor_count(1);
        let raster = vk::PipelineRasterizationStateCreateInfo::default().line_width(1.0);
        let multisample = vk::PipelineMultisampleStateCreateInfo::default()
            .rasterization_samples(vk::SampleCountFlags::TYPE_1);
        let blend_attachments = [vk::PipelineColorBlendAttachmentState::default()
            .color_write_mask(vk::ColorComponentFlags::RGBA)];
        let blend =
            vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend_attachments);
        let dynamic =
            vk::PipelineDynamicStateCreateInfo::default().dynamic_states(dynamic_states());
        let formats = [vk::Format::R8G8B8A8_UNORM];
        let mut rendering =
            vk::PipelineRenderingCreateInfo::default().color_attachment_formats(&formats);
        let info = vk::GraphicsPipelineCreateInfo::default()
            .stages(&stages)
            .vertex_input_state(&vertex)
            .input_assembly_state(&assembly)
            .viewport_state(&viewport)
            .rasterization_state(&raster)
            .multisample_state(&multisample)
            .color_blend_state(&blend)
            .dynamic_state(&dynamic)
            .layout(self.pipeline_layout)
            .push_next(&mut rendering);
        // SAFETY: live device, module and layout; dynamic rendering is enabled.
        let made = unsafe {
            self.device
                .create_graphics_pipelines(vk::PipelineCache::null(), &[info], None)
        };
        self.render = made.map_err(|(_, e)| vk_err("render pipeline")(e))?[0];
        Ok(())
    }

    /// First memory type allowed by `bits` with all of `flags`, as VMA picks
    /// for GPU-only (DEVICE_LOCAL) and upload (HOST_VISIBLE | HOST_COHERENT).
    fn memory_type(&self, bits: u32, mem: workload::Mem) -> Result<u32, String> {
        let flags = match mem {
            workload::Mem::Device => vk::MemoryPropertyFlags::DEVICE_LOCAL,
            workload::Mem::Upload => {
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT
            }
        };
        (0..self.memory_types.len() as u32)
            .find(|&i| {
                bits & (1 << i) != 0 && self.memory_types[i as usize].property_flags.contains(flags)
            })
            .ok_or_else(|| format!("no memory type with {flags:?}"))
    }

    /// vkCreateBuffer + vkAllocateMemory + vkBindBufferMemory.
    fn create_buffer(
        &self,
        size: u64,
        mem: workload::Mem,
        usage: vk::BufferUsageFlags,
    ) -> Result<RawBuffer, String> {
        let info = vk::BufferCreateInfo::default().size(size).usage(usage);
        // SAFETY: live device, valid create info.
        let buffer =
            unsafe { self.device.create_buffer(&info, None) }.map_err(vk_err("vkCreateBuffer"))?;
        let mut out = RawBuffer {
            buffer,
            memory: vk::DeviceMemory::null(),
        };
        // SAFETY: the buffer is live.
        let req = unsafe { self.device.get_buffer_memory_requirements(buffer) };
        let bound = self
            .memory_type(req.memory_type_bits, mem)
            .and_then(|index| {
                let alloc = vk::MemoryAllocateInfo::default()
                    .allocation_size(req.size)
                    .memory_type_index(index);
                // SAFETY: live device, a memory type of this device.
                out.memory = unsafe { self.device.allocate_memory(&alloc, None) }
                    .map_err(vk_err("vkAllocateMemory"))?;
                // SAFETY: fresh buffer and memory, sized by the requirements.
                unsafe { self.device.bind_buffer_memory(buffer, out.memory, 0) }
                    .map_err(vk_err("vkBindBufferMemory"))
            });
        match bound {
            Ok(()) => Ok(out),
            Err(e) => {
                self.destroy_buffer(out);
                Err(e)
            }
        }
    }

    fn destroy_buffer(&self, b: RawBuffer) {
        // SAFETY: no GPU work uses the buffer (nothing is ever submitted);
        // null handles are ignored by Vulkan.
        unsafe {
            self.device.destroy_buffer(b.buffer, None);
            self.device.free_memory(b.memory, None);
        }
    }

    fn create_image(&self, size: u32, usage: vk::ImageUsageFlags) -> Result<RawImage, String> {
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(vk::Format::R8G8B8A8_UNORM)
            .extent(vk::Extent3D {
                width: size,
                height: size,
                depth: 1,
            })
            .mip_levels(1)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .usage(usage);
        let mut out = RawImage::default();
        // SAFETY: live device, valid create info; `out` is destroyed on failure.
        let made = unsafe {
            (|| {
                out.image = self
                    .device
                    .create_image(&info, None)
                    .map_err(vk_err("vkCreateImage"))?;
                let req = self.device.get_image_memory_requirements(out.image);
                let index = self.memory_type(req.memory_type_bits, workload::Mem::Device)?;
                let alloc = vk::MemoryAllocateInfo::default()
                    .allocation_size(req.size)
                    .memory_type_index(index);
                out.memory = self
                    .device
                    .allocate_memory(&alloc, None)
                    .map_err(vk_err("vkAllocateMemory"))?;
                self.device
                    .bind_image_memory(out.image, out.memory, 0)
                    .map_err(vk_err("vkBindImageMemory"))?;
                let view = vk::ImageViewCreateInfo::default()
                    .image(out.image)
                    .view_type(vk::ImageViewType::TYPE_2D)
                    .format(vk::Format::R8G8B8A8_UNORM)
                    .subresource_range(color_range());
                out.view = self
                    .device
                    .create_image_view(&view, None)
                    .map_err(vk_err("vkCreateImageView"))?;
                Ok::<(), String>(())
            })()
        };
        match made {
            Ok(()) => Ok(out),
            Err(e) => {
                self.destroy_image(out);
                Err(e)
            }
        }
    }

    fn destroy_image(&self, i: RawImage) {
        // SAFETY: no GPU work uses the image; null handles are ignored.
        unsafe {
            self.device.destroy_image_view(i.view, None);
            self.device.destroy_image(i.image, None);
            self.device.free_memory(i.memory, None);
        }
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        // Its device goes before the instance.
        self.accel = None;
        self.external = None;
        self.drop_holes();
        self.drop_buffer_arena();
        // SAFETY: nothing was submitted, so no GPU work uses anything; every
        // handle below came from this device (or is null, which is ignored);
        // children go before their parents, the device before the instance.
        unsafe {
            self.device.destroy_descriptor_pool(self.churn_pool.0, None);
            self.device.destroy_descriptor_pool(self.reuse.0, None);
            self.device.destroy_descriptor_pool(self.kept_pool, None);
            self.device.destroy_command_pool(self.command_pool, None);
            self.device.destroy_pipeline(self.compute, None);
            self.device.destroy_pipeline(self.render, None);
            self.device
                .destroy_pipeline_layout(self.pipeline_layout, None);
            self.device.destroy_sampler(self.sampler, None);
        }
        self.destroy_image(self.target);
        self.destroy_image(self.texture);
        self.destroy_buffer(self.uniform);
        // SAFETY: as above.
        unsafe {
            for &layout in &self.layouts {
                self.device.destroy_descriptor_set_layout(layout, None);
            }
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

/// The bindings of a churn layout: one descriptor each, visible to the
/// vertex, fragment and compute stages (as the other sides' layouts are).
fn layout_bindings(kinds: &[Kind]) -> Vec<vk::DescriptorSetLayoutBinding<'static>> {
    kinds
        .iter()
        .enumerate()
        .map(|(i, &k)| {
            vk::DescriptorSetLayoutBinding::default()
                .binding(i as u32)
                .descriptor_type(descriptor_type(k))
                .descriptor_count(1)
                .stage_flags(
                    vk::ShaderStageFlags::VERTEX
                        | vk::ShaderStageFlags::FRAGMENT
                        | vk::ShaderStageFlags::COMPUTE,
                )
        })
        .collect()
}

fn descriptor_type(kind: Kind) -> vk::DescriptorType {
    match kind {
        Kind::Uniform => vk::DescriptorType::UNIFORM_BUFFER,
        Kind::Texture => vk::DescriptorType::SAMPLED_IMAGE,
        Kind::Sampler => vk::DescriptorType::SAMPLER,
    }
}

fn color_range() -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange::default()
        .aspect_mask(vk::ImageAspectFlags::COLOR)
        .level_count(1)
        .layer_count(1)
}

fn cstr(s: Result<&CStr, std::ffi::FromBytesUntilNulError>) -> String {
    s.map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}
