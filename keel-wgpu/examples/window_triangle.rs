//! A windowed triangle on a surface: a winit window, `create_surface`,
//! `configure`, then `get_current_texture` / render / `present` for a few
//! frames. The last frame is also copied out of the surface texture (where
//! the surface allows COPY_SRC) so it can be compared. Needs an X display
//! (`DISPLAY`; the tests start Xvfb).
//!
//! ```text
//! cargo run -p keel-wgpu --example window_triangle [-- --stock] [-- --frames N]
//! ```

mod common;

use std::sync::Arc;

use winit::application::ApplicationHandler;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, EventLoop};
use winit::window::{Window, WindowId};

const SHADER: &str = "
struct Out {
    @builtin(position) position: vec4<f32>,
    @location(0) color: vec3<f32>,
};

@vertex
fn vs(@builtin(vertex_index) i: u32) -> Out {
    var p = array<vec2<f32>, 3>(vec2<f32>(0.0, 0.7), vec2<f32>(-0.7, -0.7), vec2<f32>(0.7, -0.7));
    var c = array<vec3<f32>, 3>(vec3<f32>(1.0, 0.0, 0.0), vec3<f32>(0.0, 1.0, 0.0), vec3<f32>(0.0, 0.0, 1.0));
    return Out(vec4<f32>(p[i], 0.0, 1.0), c[i]);
}

@fragment
fn fs(in: Out) -> @location(0) vec4<f32> {
    return vec4<f32>(in.color, 1.0);
}
";

const SIZE: u32 = 64;

struct App {
    which: common::Which,
    frames: u32,
    state: Option<State>,
    output: Vec<u8>,
    error: Option<String>,
}

struct State {
    gpu: common::Gpu,
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    pipeline: wgpu::RenderPipeline,
    drawn: u32,
}

impl App {
    fn start(&mut self, event_loop: &ActiveEventLoop) -> Result<State, String> {
        let attributes = Window::default_attributes()
            .with_title("keel-wgpu window_triangle")
            .with_inner_size(winit::dpi::PhysicalSize::new(SIZE, SIZE))
            .with_resizable(false);
        let window = Arc::new(
            event_loop
                .create_window(attributes)
                .map_err(|e| e.to_string())?,
        );
        let gpu = common::open(self.which, wgpu::Features::empty())?;
        let surface = gpu
            .instance
            .create_surface(window.clone())
            .map_err(|e| e.to_string())?;
        let caps = surface.get_capabilities(&gpu.adapter);
        let format = caps
            .formats
            .iter()
            .copied()
            .find(|f| {
                matches!(
                    f,
                    wgpu::TextureFormat::Bgra8Unorm | wgpu::TextureFormat::Rgba8Unorm
                )
            })
            .or(caps.formats.first().copied())
            .ok_or("the adapter cannot present to this window")?;
        let mut usage = wgpu::TextureUsages::RENDER_ATTACHMENT;
        if caps.usages.contains(wgpu::TextureUsages::COPY_SRC) {
            usage |= wgpu::TextureUsages::COPY_SRC;
        }
        let config = wgpu::SurfaceConfiguration {
            usage,
            format,
            width: SIZE,
            height: SIZE,
            present_mode: wgpu::PresentMode::Fifo,
            desired_maximum_frame_latency: 2,
            alpha_mode: caps.alpha_modes[0],
            view_formats: vec![],
            color_space: Default::default(),
        };
        surface.configure(&gpu.device, &config);
        let module = gpu
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("triangle"),
                source: wgpu::ShaderSource::Wgsl(SHADER.into()),
            });
        let pipeline = gpu
            .device
            .create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some("triangle"),
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
        Ok(State {
            gpu,
            window,
            surface,
            config,
            pipeline,
            drawn: 0,
        })
    }

    /// Draws one frame; copies the last one out. Whether to go on.
    fn frame(&mut self) -> Result<bool, String> {
        let Some(state) = &mut self.state else {
            return Ok(false);
        };
        let frame = match state.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(f)
            | wgpu::CurrentSurfaceTexture::Suboptimal(f) => f,
            wgpu::CurrentSurfaceTexture::Outdated => {
                state.surface.configure(&state.gpu.device, &state.config);
                return Ok(true);
            }
            other => return Err(format!("get_current_texture: {other:?}")),
        };
        let view = frame.texture.create_view(&Default::default());
        let mut encoder = state.gpu.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("frame"),
                color_attachments: &[Some(common::clear_attachment(&view, wgpu::Color::BLACK))],
                ..Default::default()
            });
            pass.set_pipeline(&state.pipeline);
            pass.draw(0..3, 0..1);
        }
        state.drawn += 1;
        let last = state.drawn >= self.frames;
        let readback =
            (last && state.config.usage.contains(wgpu::TextureUsages::COPY_SRC)).then(|| {
                let row = (SIZE * 4).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
                let buffer = state.gpu.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("frame readback"),
                    size: (row * SIZE) as u64,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                encoder.copy_texture_to_buffer(
                    frame.texture.as_image_copy(),
                    wgpu::TexelCopyBufferInfo {
                        buffer: &buffer,
                        layout: wgpu::TexelCopyBufferLayout {
                            offset: 0,
                            bytes_per_row: Some(row),
                            rows_per_image: None,
                        },
                    },
                    frame.texture.size(),
                );
                (buffer, row)
            });
        state.gpu.queue.submit([encoder.finish()]);
        state.window.pre_present_notify();
        state.gpu.queue.present(frame);
        if let Some((buffer, row)) = readback {
            let bytes = common::map_read(&state.gpu, &buffer);
            // As RGBA, whatever the surface's channel order.
            let bgra = state.config.format == wgpu::TextureFormat::Bgra8Unorm;
            self.output = bytes
                .chunks(row as usize)
                .flat_map(|r| r[..(SIZE * 4) as usize].to_vec())
                .collect::<Vec<u8>>()
                .chunks(4)
                .flat_map(|p| {
                    if bgra {
                        [p[2], p[1], p[0], p[3]]
                    } else {
                        [p[0], p[1], p[2], p[3]]
                    }
                })
                .collect();
        }
        Ok(!last)
    }
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.state.is_some() {
            return;
        }
        match self.start(event_loop) {
            Ok(state) => {
                state.window.request_redraw();
                self.state = Some(state);
            }
            Err(e) => {
                self.error = Some(e);
                event_loop.exit();
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::RedrawRequested => match self.frame() {
                Ok(true) => {
                    if let Some(state) = &self.state {
                        state.window.request_redraw();
                    }
                }
                Ok(false) => event_loop.exit(),
                Err(e) => {
                    self.error = Some(e);
                    event_loop.exit();
                }
            },
            _ => {}
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::init();
    let which = common::Which::from_args();
    let args: Vec<String> = std::env::args().collect();
    let frames = args
        .iter()
        .position(|a| a == "--frames")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(3);
    if std::env::var_os("DISPLAY").is_none() {
        println!(
            "window_triangle on {which:?}: {}: no DISPLAY to open a window on",
            common::SKIPPED
        );
        return Ok(());
    }
    let event_loop = EventLoop::new()?;
    let mut app = App {
        which,
        frames,
        state: None,
        output: Vec::new(),
        error: None,
    };
    event_loop.run_app(&mut app)?;
    if let Some(e) = app.error {
        if e.starts_with(common::SKIPPED) {
            println!("window_triangle on {which:?}: {e}");
            return Ok(());
        }
        return Err(e.into());
    }
    let state = app.state.take().ok_or("no frame was drawn")?;
    println!(
        "window_triangle on {which:?}: {} frames presented",
        state.drawn
    );
    if let Ok(path) = std::env::var("KEEL_EXAMPLE_OUT") {
        std::fs::write(path, &app.output)?;
    }
    let State {
        gpu,
        surface,
        window,
        pipeline,
        ..
    } = state;
    drop((pipeline, surface, window));
    common::finish(gpu)?;
    Ok(())
}
