//! The same wgpu program on keel-wgpu and on stock wgpu (wgpu-core), on
//! the same Vulkan adapter, interleaved round by round: the CPU time to
//! record and submit
//! - a frame of 10,000 draws with a bind-group change before each (100
//!   groups, one pipeline, one render pass), and
//! - 1,000 `Queue::write_buffer` uploads of 256 bytes (1,000 buffers), then
//!   the submit that carries them.
//!
//! The GPU's work is waited for outside the timed region. Reported: the
//! median (min–max) per side over the rounds, and the median (min–max) of
//! the per-round ratios keel-wgpu / stock.
//!
//! ```text
//! cargo run --release -p bench --bin wgpu_frame -- [--rounds N]
//! ```

#[path = "../stats.rs"]
#[allow(dead_code)]
mod stats;

use std::time::Instant;

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
";

const DRAWS: u32 = 10_000;
const GROUPS: usize = 100;
const UPLOADS: usize = 1_000;

struct Side {
    name: &'static str,
    device: wgpu::Device,
    queue: wgpu::Queue,
    pipeline: wgpu::RenderPipeline,
    groups: Vec<wgpu::BindGroup>,
    view: wgpu::TextureView,
    upload_targets: Vec<wgpu::Buffer>,
    _keep: (wgpu::Instance, wgpu::Texture, Vec<wgpu::Buffer>),
}

fn open(name: &'static str, instance: wgpu::Instance) -> Result<Side, String> {
    let adapter = pollster::block_on(instance.request_adapter(&Default::default()))
        .map_err(|e| format!("{name}: no adapter: {e}"))?;
    let (device, queue) = pollster::block_on(adapter.request_device(&Default::default()))
        .map_err(|e| format!("{name}: no device: {e}"))?;
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(SHADER.into()),
    });
    let format = wgpu::TextureFormat::Rgba8Unorm;
    let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
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
            targets: &[Some(format.into())],
        }),
        multiview_mask: None,
        cache: None,
    });
    let layout = pipeline.get_bind_group_layout(0);
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
    let target = device.create_texture(&wgpu::TextureDescriptor {
        label: None,
        size: wgpu::Extent3d {
            width: 64,
            height: 64,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
        view_formats: &[],
    });
    let view = target.create_view(&Default::default());
    let upload_targets = (0..UPLOADS)
        .map(|_| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: 256,
                usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::UNIFORM,
                mapped_at_creation: false,
            })
        })
        .collect();
    Ok(Side {
        name,
        device,
        queue,
        pipeline,
        groups,
        view,
        upload_targets,
        _keep: (instance, target, uniforms),
    })
}

impl Side {
    /// Records and submits the 10,000-draw frame; seconds of CPU time.
    fn frame(&self) -> f64 {
        let start = Instant::now();
        let mut encoder = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: None,
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &self.view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                ..Default::default()
            });
            pass.set_pipeline(&self.pipeline);
            for i in 0..DRAWS as usize {
                pass.set_bind_group(0, &self.groups[i % GROUPS], &[]);
                pass.draw(0..3, 0..1);
            }
        }
        self.queue.submit([encoder.finish()]);
        let t = start.elapsed().as_secs_f64();
        self.wait();
        t
    }

    /// 1,000 uploads and the submit carrying them; seconds of CPU time.
    fn uploads(&self, round: usize) -> f64 {
        let data = [round as u8; 256];
        let start = Instant::now();
        for buffer in &self.upload_targets {
            self.queue.write_buffer(buffer, 0, &data);
        }
        self.queue.submit([]);
        let t = start.elapsed().as_secs_f64();
        self.wait();
        t
    }

    fn wait(&self) {
        if let Err(e) = self.device.poll(wgpu::PollType::wait_indefinitely()) {
            eprintln!("{}: poll: {e}", self.name);
        }
    }
}

fn row(label: &str, unit: f64, keel: &[f64], stock: &[f64]) {
    let fmt = |s: Option<stats::Summary>| match s {
        Some(s) => format!(
            "{:.1} ({:.1}–{:.1})",
            s.median * unit,
            s.min * unit,
            s.max * unit
        ),
        None => "-".into(),
    };
    let ratios: Vec<f64> = keel.iter().zip(stock).map(|(k, s)| k / s).collect();
    let r = stats::summarize(&ratios);
    println!(
        "| {label} | {} | {} | {} |",
        fmt(stats::summarize(keel)),
        fmt(stats::summarize(stock)),
        r.map_or("-".into(), |r| format!(
            "{:.2} ({:.2}–{:.2})",
            r.median, r.min, r.max
        )),
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let rounds: usize = args
        .iter()
        .position(|a| a == "--rounds")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(9)
        .max(1);
    let keel_instance = keel_wgpu::instance_with(keel_wgpu::BackendChoice::Vulkan, false)?;
    let stock_instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::VULKAN,
        flags: wgpu::InstanceFlags::empty(),
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let keel = open("keel-wgpu", keel_instance)?;
    let stock = open("stock wgpu", stock_instance)?;
    let adapter = keel.device.adapter_info().name;
    // One warm-up of each, not counted.
    for side in [&keel, &stock] {
        side.frame();
        side.uploads(0);
    }
    let (mut kf, mut sf, mut ku, mut su) = (vec![], vec![], vec![], vec![]);
    for round in 0..rounds {
        // Alternate which side goes first.
        if round % 2 == 0 {
            kf.push(keel.frame());
            sf.push(stock.frame());
            ku.push(keel.uploads(round));
            su.push(stock.uploads(round));
        } else {
            sf.push(stock.frame());
            kf.push(keel.frame());
            su.push(stock.uploads(round));
            ku.push(keel.uploads(round));
        }
    }
    println!("wgpu_frame on {adapter}: {rounds} rounds, median (min–max)\n");
    println!("| workload | keel-wgpu | stock wgpu | keel-wgpu / stock |");
    println!("|---|---:|---:|---:|");
    row(
        "frame of 10,000 draws + bind-group changes (ms)",
        1e3,
        &kf,
        &sf,
    );
    row("1,000 write_buffer × 256 B + submit (ms)", 1e3, &ku, &su);
    Ok(())
}
