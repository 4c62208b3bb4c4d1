//! The scene the keel-wgpu-vs-stock benchmarks share (`wgpu_frame`,
//! `wgpu_threads`): one wgpu device per side with a render pipeline and a
//! compute pipeline that each read a 16-byte uniform through group 0, 100
//! bind groups to change between draws, and the helpers that record a pass
//! of them. Both sides get exactly the same objects and commands.

const SHADER: &str = "
@group(0) @binding(0) var<uniform> tint: vec4<f32>;

@vertex
fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let uv = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    return vec4<f32>(uv * 0.01 - 0.005, 0.0, 1.0);
}

@fragment
fn fs() -> @location(0) vec4<f32> {
    return tint;
}

@group(1) @binding(0) var<storage, read_write> sums: array<vec4<f32>, 64>;

@compute @workgroup_size(64)
fn cs(@builtin(local_invocation_index) i: u32) {
    sums[i] += tint;
}
";

/// Bind groups the draws and dispatches cycle through.
pub const GROUPS: usize = 100;
/// The render target's format.
pub const FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

/// One side of the comparison: a device and the objects its workloads use.
pub struct Scene {
    /// `"keel-wgpu"` or `"stock wgpu"`.
    pub name: &'static str,
    /// The device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// The adapter's name.
    pub adapter: String,
    render: wgpu::RenderPipeline,
    compute: wgpu::ComputePipeline,
    groups: Vec<wgpu::BindGroup>,
    uniforms: Vec<wgpu::Buffer>,
    _instance: wgpu::Instance,
}

/// keel-wgpu's instance on keel-hal's Vulkan backend and stock wgpu's on
/// Vulkan, neither with a validation layer.
pub fn instances() -> Result<(wgpu::Instance, wgpu::Instance), String> {
    // KEEL_BENCH_NOOP=1: keel-wgpu on keel-hal's noop backend, to profile
    // keel-wgpu's own CPU cost without a driver's (not a comparison).
    let choice = if std::env::var_os("KEEL_BENCH_NOOP").is_some() {
        keel_wgpu::BackendChoice::Noop
    } else {
        keel_wgpu::BackendChoice::Vulkan
    };
    let keel = keel_wgpu::instance_with(choice, false)
        .map_err(|e| format!("keel-wgpu: no instance: {e}"))?;
    let stock = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::VULKAN,
        flags: wgpu::InstanceFlags::empty(),
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    Ok((keel, stock))
}

impl Scene {
    /// The scene on `instance`'s first adapter.
    pub fn open(name: &'static str, instance: wgpu::Instance) -> Result<Self, String> {
        let adapter = pollster::block_on(instance.request_adapter(&Default::default()))
            .map_err(|e| format!("{name}: no adapter: {e}"))?;
        let (device, queue) = pollster::block_on(adapter.request_device(&Default::default()))
            .map_err(|e| format!("{name}: no device: {e}"))?;
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: None,
            source: wgpu::ShaderSource::Wgsl(SHADER.into()),
        });
        let render = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: None,
            layout: None,
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            primitive: Default::default(),
            depth_stencil: None,
            multisample: Default::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs"),
                compilation_options: Default::default(),
                targets: &[Some(FORMAT.into())],
            }),
            multiview_mask: None,
            cache: None,
        });
        let compute = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: None,
            layout: None,
            module: &module,
            entry_point: Some("cs"),
            compilation_options: Default::default(),
            cache: None,
        });
        let uniforms: Vec<wgpu::Buffer> = (0..GROUPS)
            .map(|_| {
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: None,
                    size: 16,
                    usage: wgpu::BufferUsages::UNIFORM,
                    mapped_at_creation: false,
                })
            })
            .collect();
        // Derived layouts are each pipeline's own: these groups are the
        // render pipeline's, `compute_groups` makes the compute ones.
        let layout = render.get_bind_group_layout(0);
        let groups = uniforms
            .iter()
            .map(|b| {
                device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &layout,
                    entries: &[wgpu::BindGroupEntry {
                        binding: 0,
                        resource: b.as_entire_binding(),
                    }],
                })
            })
            .collect();
        let info = adapter.get_info();
        Ok(Self {
            name,
            device,
            queue,
            adapter: info.name,
            render,
            compute,
            groups,
            uniforms,
            _instance: instance,
        })
    }

    /// A 64×64 render target of its own (one per recording thread).
    pub fn target(&self) -> wgpu::TextureView {
        self.device
            .create_texture(&wgpu::TextureDescriptor {
                label: None,
                size: wgpu::Extent3d {
                    width: 64,
                    height: 64,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: FORMAT,
                usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
                view_formats: &[],
            })
            .create_view(&Default::default())
    }

    /// The compute pipeline's group 0 for each of the uniforms, and a group
    /// 1 with a storage buffer of its own (one per recording thread).
    pub fn compute_groups(&self) -> (Vec<wgpu::BindGroup>, wgpu::BindGroup) {
        let layout = self.compute.get_bind_group_layout(0);
        let groups = self
            .uniforms
            .iter()
            .map(|b| {
                self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &layout,
                    entries: &[wgpu::BindGroupEntry {
                        binding: 0,
                        resource: b.as_entire_binding(),
                    }],
                })
            })
            .collect();
        let sums = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: 64 * 16,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let out = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &self.compute.get_bind_group_layout(1),
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: sums.as_entire_binding(),
            }],
        });
        (groups, out)
    }

    /// Records one render pass into `view` of `draws` draws, each after a
    /// bind-group change, and finishes the encoder.
    pub fn record_draws(&self, view: &wgpu::TextureView, draws: u32) -> wgpu::CommandBuffer {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: None,
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                ..Default::default()
            });
            pass.set_pipeline(&self.render);
            for i in 0..draws as usize {
                pass.set_bind_group(0, &self.groups[i % GROUPS], &[]);
                pass.draw(0..3, 0..1);
            }
        }
        encoder.finish()
    }

    /// Records one compute pass of `dispatches` dispatches, each after a
    /// change of group 0 (`groups`), writing through `out`, and finishes.
    pub fn record_dispatches(
        &self,
        groups: &[wgpu::BindGroup],
        out: &wgpu::BindGroup,
        dispatches: u32,
    ) -> wgpu::CommandBuffer {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&self.compute);
            pass.set_bind_group(1, out, &[]);
            for i in 0..dispatches as usize {
                pass.set_bind_group(0, &groups[i % groups.len()], &[]);
                pass.dispatch_workgroups(1, 1, 1);
            }
        }
        encoder.finish()
    }

    /// Waits for everything submitted.
    pub fn wait(&self) {
        if let Err(e) = self.device.poll(wgpu::PollType::wait_indefinitely()) {
            eprintln!("{}: poll: {e}", self.name);
        }
    }
}

/// CPU time the calling thread has used, in seconds (Linux
/// `CLOCK_THREAD_CPUTIME_ID`): what a recording thread spent, whatever the
/// other threads and the driver's own threads did meanwhile.
pub fn thread_cpu_seconds() -> f64 {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut t = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec (64-bit Linux layout) for
    // the call's duration; the clock id is Linux's thread CPU clock.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut t) };
    if rc != 0 {
        return f64::NAN;
    }
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}
