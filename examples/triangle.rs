//! One triangle, drawn with the keel-hal trait set: WGSL shaders, a vertex
//! buffer (positions and colours), and a uniform buffer in a bind group
//! that the vertex shader reads (a scale and an offset).
//!
//! ```text
//! cargo run --example triangle                          # offscreen → triangle.png
//! cargo run --example triangle -- --window              # a window, until it is closed
//! cargo run --example triangle -- --window --frames 120 # … or for 120 frames
//! ```
//!
//! Offscreen, it renders a 256×256 `Rgba8Unorm` texture, copies it into a
//! readback buffer and writes `triangle.png`. With `--window` it opens a
//! winit window, makes a surface from its raw handles and presents a frame
//! each time the window asks for one, reconfiguring the surface on resize
//! (and whenever the surface reports itself outdated).
//!
//! The drawing code is generic over `A: Api`. It runs on Vulkan; the noop
//! backend cannot execute shaders (it lacks `HalFeatures::SHADER_EXECUTION`),
//! so with only noop available the example says so and fails.
//!
//! On an error the example reports it and exits; a long-lived program would
//! also destroy what it had made so far.

use std::error::Error;
use std::num::NonZeroU64;
use std::process::ExitCode;
use std::time::Duration;

use keel_hal::wgt;
use keel_hal::{
    Api, AttachmentOps, BindGroupDescriptor, BindGroupEntry, BindGroupLayoutDescriptor,
    BindingResource, BufferBarrier, BufferBinding, BufferDescriptor, BufferTextureCopy, BufferUses,
    ColorAttachment, CommandEncoderDescriptor, DeviceDescriptor, ExposedAdapter, HalFeatures,
    InstanceDescriptor, InstanceFlags, Memory, PipelineLayoutDescriptor, ProgrammableStage,
    RenderPassDescriptor, RenderPipelineDescriptor, ShaderModuleDescriptor, StateTransition,
    TextureBarrier, TextureCopyBase, TextureDescriptor, TextureUses, TextureViewDescriptor,
    VertexBufferLayout,
};
// The trait set.
use keel_hal::{Adapter as _, CommandEncoder as _, Device as _, Instance as _, Queue as _};

/// Vertex and fragment shaders. The uniform scales and moves the triangle.
const SHADER: &str = r#"
struct Transform {
    scale: vec2<f32>,
    offset: vec2<f32>,
};
@group(0) @binding(0) var<uniform> transform: Transform;

struct VertexOutput {
    @builtin(position) position: vec4<f32>,
    @location(0) color: vec3<f32>,
};

@vertex
fn vs_main(@location(0) position: vec2<f32>, @location(1) color: vec3<f32>) -> VertexOutput {
    var out: VertexOutput;
    out.position = vec4<f32>(position * transform.scale + transform.offset, 0.0, 1.0);
    out.color = color;
    return out;
}

@fragment
fn fs_main(in: VertexOutput) -> @location(0) vec4<f32> {
    return vec4<f32>(in.color, 1.0);
}
"#;

/// Position (x, y; y up) and colour (r, g, b) of each corner.
const VERTICES: [[f32; 5]; 3] = [
    [0.0, 0.8, 1.0, 0.0, 0.0],
    [-0.8, -0.8, 0.0, 1.0, 0.0],
    [0.8, -0.8, 0.0, 0.0, 1.0],
];
/// Bytes per vertex.
const VERTEX_STRIDE: u64 = 5 * 4;
/// Bytes of the `Transform` uniform.
const UNIFORM_SIZE: u64 = 4 * 4;
/// A dark blue-grey.
const CLEAR: wgt::Color = wgt::Color {
    r: 0.02,
    g: 0.02,
    b: 0.05,
    a: 1.0,
};
/// Offscreen target: size and format.
const SIZE: u32 = 256;
const FORMAT: wgt::TextureFormat = wgt::TextureFormat::Rgba8Unorm;
const OUTPUT: &str = "triangle.png";

type Result<T, E = Box<dyn Error>> = std::result::Result<T, E>;

/// Command-line options.
struct Options {
    window: bool,
    frames: Option<u64>,
}

fn parse_options() -> Result<Options> {
    let mut options = Options {
        window: false,
        frames: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--window" => options.window = true,
            "--frames" => {
                let n = args.next().ok_or("--frames needs a number")?;
                options.frames = Some(n.parse().map_err(|_| format!("bad frame count {n:?}"))?);
            }
            "-h" | "--help" => {
                println!("usage: triangle [--window [--frames N]]");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?} (try --help)").into()),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    env_logger::init();
    let result = parse_options().and_then(|options| {
        if options.window {
            run_window(&options)
        } else {
            run_offscreen()
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("triangle: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The instance description: validation on in debug builds (where the
/// layer is installed), so the example doubles as a check.
fn instance_descriptor() -> InstanceDescriptor<'static> {
    InstanceDescriptor {
        name: "keel-hal triangle",
        flags: if cfg!(debug_assertions) {
            InstanceFlags::VALIDATION | InstanceFlags::DEBUG
        } else {
            InstanceFlags::empty()
        },
        ..Default::default()
    }
}

/// An instance of backend `A` and its first adapter that executes shaders.
fn pick_adapter<A: Api>() -> Result<(A::Instance, ExposedAdapter<A>), String> {
    // SAFETY: the system's Vulkan loader (if any) is a real one.
    let instance = unsafe { <A::Instance as keel_hal::Instance>::init(&instance_descriptor()) }
        .map_err(|e| e.to_string())?;
    // SAFETY: the instance is live.
    let adapters = unsafe { instance.enumerate_adapters() };
    let executes = |a: &ExposedAdapter<A>| {
        a.capabilities
            .hal_features
            .contains(HalFeatures::SHADER_EXECUTION)
    };
    let Some(adapter) = adapters.into_iter().find(executes) else {
        return Err(format!(
            "the {} backend cannot execute shaders (no adapter has SHADER_EXECUTION)",
            instance.backend()
        ));
    };
    Ok((instance, adapter))
}

/// Renders offscreen on Vulkan, or explains why it cannot.
fn run_offscreen() -> Result<()> {
    #[cfg(feature = "vulkan")]
    match pick_adapter::<keel_hal::vulkan::Api>() {
        Ok((instance, adapter)) => {
            return render_to_png::<keel_hal::vulkan::Api>(instance, adapter)
        }
        Err(reason) => eprintln!("triangle: Vulkan is not available: {reason}; trying noop"),
    }
    let (instance, adapter) = pick_adapter::<keel_hal::noop::Api>()
        .map_err(|reason| format!("{reason}: this example needs SHADER_EXECUTION"))?;
    render_to_png::<keel_hal::noop::Api>(instance, adapter)
}

/// Everything the triangle needs, made once per colour-target format.
struct Scene<A: Api> {
    vertices: A::Buffer,
    uniforms: A::Buffer,
    bind_group_layout: A::BindGroupLayout,
    bind_group: A::BindGroup,
    pipeline_layout: A::PipelineLayout,
    shader: A::ShaderModule,
    pipeline: A::RenderPipeline,
    /// Whether the buffers were moved from their initial state yet.
    buffers_ready: bool,
}

impl<A: Api> Scene<A> {
    /// Makes the buffers, the bind group and the pipeline for `format`.
    ///
    /// # Safety
    /// `device` is live; the scene is destroyed with [`Scene::destroy`] on it.
    unsafe fn new(device: &A::Device, format: wgt::TextureFormat) -> Result<Self> {
        // SAFETY: the caller's contract; every object below comes from `device`.
        unsafe {
            let vertices = device.create_buffer(&BufferDescriptor {
                label: Some("triangle vertices"),
                size: VERTEX_STRIDE * VERTICES.len() as u64,
                usage: wgt::BufferUsages::VERTEX,
                memory: Memory::Upload,
            })?;
            let bytes: Vec<u8> = VERTICES
                .iter()
                .flatten()
                .flat_map(|f| f.to_le_bytes())
                .collect();
            let map = device.map_buffer(&vertices)?;
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), map.ptr.as_ptr(), bytes.len());

            let uniforms = device.create_buffer(&BufferDescriptor {
                label: Some("triangle transform"),
                size: UNIFORM_SIZE,
                usage: wgt::BufferUsages::UNIFORM,
                memory: Memory::Upload,
            })?;
            let bind_group_layout =
                device.create_bind_group_layout(&BindGroupLayoutDescriptor {
                    label: Some("transform"),
                    entries: &[wgt::BindGroupLayoutEntry {
                        binding: 0,
                        visibility: wgt::ShaderStages::VERTEX,
                        ty: wgt::BindingType::Buffer {
                            ty: wgt::BufferBindingType::Uniform,
                            has_dynamic_offset: false,
                            min_binding_size: NonZeroU64::new(UNIFORM_SIZE),
                        },
                        count: None,
                    }],
                    ..Default::default()
                })?;
            let bind_group = device.create_bind_group(&BindGroupDescriptor::<A> {
                label: Some("transform"),
                layout: &bind_group_layout,
                entries: &[BindGroupEntry {
                    binding: 0,
                    resource: BindingResource::Buffer(BufferBinding::whole(&uniforms)),
                }],
            })?;
            let pipeline_layout =
                device.create_pipeline_layout(&PipelineLayoutDescriptor::<A> {
                    label: Some("triangle"),
                    bind_group_layouts: &[&bind_group_layout],
                    push_constant_ranges: &[],
                })?;
            let shader = device.create_shader_module(&ShaderModuleDescriptor::wgsl(SHADER))?;
            let pipeline = device.create_render_pipeline(&RenderPipelineDescriptor::<A> {
                label: Some("triangle"),
                layout: &pipeline_layout,
                vertex_buffers: &[VertexBufferLayout {
                    array_stride: VERTEX_STRIDE,
                    step_mode: wgt::VertexStepMode::Vertex,
                    attributes: &[
                        attribute(wgt::VertexFormat::Float32x2, 0, 0),
                        attribute(wgt::VertexFormat::Float32x3, 8, 1),
                    ],
                }],
                vertex_stage: ProgrammableStage {
                    module: &shader,
                    entry_point: "vs_main",
                    constants: &[],
                },
                primitive: wgt::PrimitiveState::default(),
                depth_stencil: None,
                multisample: wgt::MultisampleState::default(),
                fragment_stage: Some(ProgrammableStage {
                    module: &shader,
                    entry_point: "fs_main",
                    constants: &[],
                }),
                color_targets: &[Some(wgt::ColorTargetState {
                    format,
                    blend: None,
                    write_mask: wgt::ColorWrites::ALL,
                })],
                cache: None,
                multiview_mask: None,
            })?;
            let scene = Scene {
                vertices,
                uniforms,
                bind_group_layout,
                bind_group,
                pipeline_layout,
                shader,
                pipeline,
                buffers_ready: false,
            };
            scene.set_transform(device, [1.0, 1.0], [0.0, 0.0])?;
            Ok(scene)
        }
    }

    /// Writes the uniform: `position * scale + offset`.
    ///
    /// # Safety
    /// No pending GPU work reads the uniform buffer.
    unsafe fn set_transform(
        &self,
        device: &A::Device,
        scale: [f32; 2],
        offset: [f32; 2],
    ) -> Result<()> {
        let bytes: Vec<u8> = scale
            .iter()
            .chain(&offset)
            .flat_map(|f| f.to_le_bytes())
            .collect();
        // SAFETY: the caller's contract; the buffer is mappable and 16 bytes long.
        unsafe {
            let map = device.map_buffer(&self.uniforms)?;
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), map.ptr.as_ptr(), bytes.len());
        }
        Ok(())
    }

    /// Records the render pass: clear, then the triangle. `view` is in
    /// `COLOR_TARGET` and covers `extent`.
    ///
    /// # Safety
    /// `encoder` is recording, outside any pass, on the scene's device.
    unsafe fn record(
        &mut self,
        encoder: &mut A::CommandEncoder,
        view: &A::TextureView,
        extent: wgt::Extent3d,
    ) {
        // SAFETY: the caller's contract; the buffers' states are tracked here.
        unsafe {
            if !self.buffers_ready {
                // Host writes are visible to the GPU at submission; these move
                // the buffers out of their initial state.
                encoder.transition_buffers(&[
                    buffer_barrier(&self.vertices, BufferUses::empty(), BufferUses::VERTEX),
                    buffer_barrier(&self.uniforms, BufferUses::empty(), BufferUses::UNIFORM),
                ]);
                self.buffers_ready = true;
            }
            encoder.begin_render_pass(&RenderPassDescriptor::<A> {
                label: Some("triangle"),
                extent,
                sample_count: 1,
                color_attachments: &[Some(ColorAttachment {
                    target: keel_hal::Attachment {
                        view,
                        usage: TextureUses::COLOR_TARGET,
                    },
                    resolve_target: None,
                    ops: AttachmentOps::STORE,
                    clear_value: CLEAR,
                })],
                depth_stencil_attachment: None,
                multiview_mask: None,
            });
            encoder.set_render_pipeline(&self.pipeline);
            encoder.set_bind_group(&self.pipeline_layout, 0, &self.bind_group, &[]);
            encoder.set_vertex_buffer(0, BufferBinding::whole(&self.vertices));
            encoder.draw(0, VERTICES.len() as u32, 0, 1);
            encoder.end_render_pass();
        }
    }

    /// Destroys everything.
    ///
    /// # Safety
    /// No pending GPU work uses the scene.
    unsafe fn destroy(self, device: &A::Device) {
        // SAFETY: the caller's contract; dependents go before what they use.
        unsafe {
            device.destroy_render_pipeline(self.pipeline);
            device.destroy_shader_module(self.shader);
            device.destroy_pipeline_layout(self.pipeline_layout);
            device.destroy_bind_group(self.bind_group);
            device.destroy_bind_group_layout(self.bind_group_layout);
            device.destroy_buffer(self.uniforms);
            device.destroy_buffer(self.vertices);
        }
    }
}

/// A vertex attribute: `format` at byte `offset`, read at `location`.
fn attribute(format: wgt::VertexFormat, offset: u64, location: u32) -> wgt::VertexAttribute {
    wgt::VertexAttribute {
        format,
        offset,
        shader_location: location,
    }
}

/// A buffer barrier.
fn buffer_barrier<B: ?Sized>(buffer: &B, from: BufferUses, to: BufferUses) -> BufferBarrier<'_, B> {
    BufferBarrier {
        buffer,
        usage: StateTransition { from, to },
    }
}

/// A texture barrier over the whole (single-level, single-layer) texture.
fn whole<T: ?Sized>(texture: &T, from: TextureUses, to: TextureUses) -> TextureBarrier<'_, T> {
    TextureBarrier {
        texture,
        range: wgt::ImageSubresourceRange::default(),
        usage: StateTransition { from, to },
    }
}

/// Renders the triangle into a texture and writes it to [`OUTPUT`].
fn render_to_png<A: Api>(instance: A::Instance, exposed: ExposedAdapter<A>) -> Result<()> {
    println!(
        "triangle: rendering on {} ({})",
        exposed.info.name, exposed.info.backend
    );
    let extent = wgt::Extent3d {
        width: SIZE,
        height: SIZE,
        depth_or_array_layers: 1,
    };
    let bytes_per_row = SIZE * 4; // 1024: a multiple of 256, as copies want.
                                  // SAFETY: every object is made from this device, used only in the one
                                  // submission below, and destroyed after the fence says it completed.
    let pixels = unsafe {
        let open = exposed.adapter.open(&DeviceDescriptor::default())?;
        let (device, queue) = (open.device, open.queue);
        let mut scene = Scene::<A>::new(&device, FORMAT)?;
        let target = device.create_texture(&TextureDescriptor {
            label: Some("triangle target"),
            size: extent,
            format: FORMAT,
            usage: wgt::TextureUsages::RENDER_ATTACHMENT | wgt::TextureUsages::COPY_SRC,
            ..Default::default()
        })?;
        let view = device.create_texture_view(&target, &TextureViewDescriptor::default())?;
        let readback = device.create_buffer(&BufferDescriptor {
            label: Some("triangle readback"),
            size: u64::from(bytes_per_row * SIZE),
            usage: wgt::BufferUsages::COPY_DST | wgt::BufferUsages::MAP_READ,
            memory: Memory::Readback,
        })?;

        let mut encoder = device.create_command_encoder(&CommandEncoderDescriptor::default())?;
        encoder.begin_encoding(Some("triangle"))?;
        encoder.transition_textures(&[whole(
            &target,
            TextureUses::UNINITIALIZED,
            TextureUses::COLOR_TARGET,
        )]);
        scene.record(&mut encoder, &view, extent);
        encoder.transition_textures(&[whole(
            &target,
            TextureUses::COLOR_TARGET,
            TextureUses::COPY_SRC,
        )]);
        let (empty, copy_dst) = (BufferUses::empty(), BufferUses::COPY_DST);
        encoder.transition_buffers(&[buffer_barrier(&readback, empty, copy_dst)]);
        encoder.copy_texture_to_buffer(
            &target,
            TextureUses::COPY_SRC,
            &readback,
            &[BufferTextureCopy {
                buffer_layout: wgt::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(bytes_per_row),
                    rows_per_image: Some(SIZE),
                },
                texture_base: TextureCopyBase::default(),
                size: extent,
            }],
        );
        let map_read = BufferUses::MAP_READ;
        encoder.transition_buffers(&[buffer_barrier(&readback, copy_dst, map_read)]);
        let commands = encoder.end_encoding()?;
        let fence = device.create_fence()?;
        queue.submit(&[&commands], &[], &fence, 1)?;
        if !device.wait(&fence, 1, Some(Duration::from_secs(10)))? {
            return Err("the GPU did not finish within 10 s".into());
        }
        let map = device.map_buffer(&readback)?;
        let pixels =
            std::slice::from_raw_parts(map.ptr.as_ptr(), (bytes_per_row * SIZE) as usize).to_vec();

        encoder.reset_all([commands]);
        device.destroy_command_encoder(encoder);
        device.destroy_fence(fence);
        device.destroy_buffer(readback);
        device.destroy_texture_view(view);
        device.destroy_texture(target);
        scene.destroy(&device);
        pixels
    };
    write_png(OUTPUT, SIZE, SIZE, &pixels)?;
    println!("triangle: wrote {OUTPUT} ({SIZE}×{SIZE})");
    check_validation::<A>(&instance)
}

/// Fails when the validation layer reported errors.
fn check_validation<A: Api>(instance: &A::Instance) -> Result<()> {
    match instance.validation_error_count() {
        0 => Ok(()),
        n => Err(format!("{n} validation error(s); run with RUST_LOG=error to see them").into()),
    }
}

/// Writes tightly packed RGBA8 rows as a PNG.
fn write_png(path: &str, width: u32, height: u32, rgba: &[u8]) -> Result<()> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut encoder = png::Encoder::new(file, width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(rgba)?;
    writer.finish()?;
    Ok(())
}

#[cfg(not(feature = "vulkan"))]
fn run_window(_options: &Options) -> Result<()> {
    Err("--window needs the Vulkan backend (feature `vulkan`); noop cannot execute shaders".into())
}

#[cfg(feature = "vulkan")]
fn run_window(options: &Options) -> Result<()> {
    window::run(options.frames)
}

/// The windowed path: a winit window, a surface, a frame per redraw.
#[cfg(feature = "vulkan")]
mod window {
    use super::*;
    use std::borrow::Borrow;

    use keel_hal::{Surface as _, SurfaceConfiguration, SurfaceError};
    use winit::application::ApplicationHandler;
    use winit::event::WindowEvent;
    use winit::event_loop::{ActiveEventLoop, EventLoop};
    use winit::raw_window_handle::{HasDisplayHandle, HasWindowHandle};
    use winit::window::{Window, WindowId};

    /// Formats in order of preference: plain UNORM matches the PNG's colours.
    const PREFERRED_FORMATS: [wgt::TextureFormat; 2] = [
        wgt::TextureFormat::Bgra8Unorm,
        wgt::TextureFormat::Rgba8Unorm,
    ];

    pub(super) fn run(frames: Option<u64>) -> Result<()> {
        let event_loop = EventLoop::new()?;
        let mut app = App::<keel_hal::vulkan::Api> {
            frames,
            state: None,
            error: None,
        };
        event_loop.run_app(&mut app)?;
        match app.error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The winit application: the window and everything drawn into it.
    struct App<A: Api> {
        frames: Option<u64>,
        state: Option<Presenter<A>>,
        error: Option<Box<dyn Error>>,
    }

    /// The device side of the window.
    struct Presenter<A: Api> {
        instance: A::Instance,
        adapter: A::Adapter,
        device: A::Device,
        queue: A::Queue,
        surface: A::Surface,
        scene: Scene<A>,
        encoder: A::CommandEncoder,
        fence: A::Fence,
        fence_value: u64,
        /// Its extent is the acquired textures' size while `configured`.
        config: SurfaceConfiguration,
        configured: bool,
        presented: u64,
        /// Outlives the surface (destroyed in `Presenter::destroy`).
        window: Window,
    }

    impl<A: Api> ApplicationHandler for App<A> {
        fn resumed(&mut self, event_loop: &ActiveEventLoop) {
            if self.state.is_some() {
                return;
            }
            match Presenter::<A>::new(event_loop) {
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

        fn window_event(&mut self, event_loop: &ActiveEventLoop, _: WindowId, event: WindowEvent) {
            let Some(state) = self.state.as_mut() else {
                return;
            };
            let step = match event {
                WindowEvent::CloseRequested => Ok(false),
                WindowEvent::Resized(_) => state.reconfigure().map(|()| true),
                WindowEvent::RedrawRequested => state.frame().map(|()| {
                    state.window.request_redraw();
                    self.frames.is_none_or(|n| state.presented < n)
                }),
                _ => Ok(true),
            };
            let keep_going = step.unwrap_or_else(|e| {
                self.error = Some(e);
                false
            });
            if keep_going {
                return;
            }
            if let Some(state) = self.state.take() {
                println!("triangle: presented {} frame(s)", state.presented);
                if let Err(e) = state.destroy() {
                    self.error.get_or_insert(e);
                }
            }
            event_loop.exit();
        }
    }

    impl<A: Api> Presenter<A> {
        /// Opens the window, makes its surface and a device that can present to it.
        fn new(event_loop: &ActiveEventLoop) -> Result<Self> {
            let attributes = Window::default_attributes()
                .with_title("keel-hal triangle")
                .with_inner_size(winit::dpi::PhysicalSize::new(640u32, 480u32));
            let window = event_loop.create_window(attributes)?;
            let (instance, _) = pick_adapter::<A>()?;
            let display = window.display_handle()?.as_raw();
            let raw_window = window.window_handle()?.as_raw();
            // SAFETY: the window outlives the surface (see `destroy`).
            let surface = unsafe { instance.create_surface(display, raw_window) }?;
            // SAFETY: adapters and surface are of this instance; every object
            // made below is destroyed in `destroy`.
            unsafe {
                let found = instance
                    .enumerate_adapters()
                    .into_iter()
                    .find_map(|exposed| {
                        let hal = exposed.capabilities.hal_features;
                        if !hal.contains(HalFeatures::SHADER_EXECUTION) {
                            return None;
                        }
                        let caps =
                            keel_hal::Adapter::surface_capabilities(&exposed.adapter, &surface)
                                .inspect_err(|e| eprintln!("triangle: {}: {e}", exposed.info.name))
                                .ok()?;
                        Some((exposed, caps))
                    });
                let Some((exposed, caps)) = found else {
                    instance.destroy_surface(surface);
                    return Err("no adapter can present to the window".into());
                };
                let info = &exposed.info;
                println!("triangle: presenting with {} ({})", info.name, info.backend);
                let format = PREFERRED_FORMATS
                    .into_iter()
                    .find(|f| caps.formats.contains(f))
                    .or_else(|| caps.formats.first().copied())
                    .ok_or("the surface offers no format keel-hal knows")?;
                let open = exposed.adapter.open(&DeviceDescriptor::default())?;
                let encoder_desc = CommandEncoderDescriptor::default();
                let mut presenter = Presenter {
                    scene: Scene::<A>::new(&open.device, format)?,
                    encoder: open.device.create_command_encoder(&encoder_desc)?,
                    fence: open.device.create_fence()?,
                    fence_value: 0,
                    config: SurfaceConfiguration {
                        maximum_frame_latency: 2,
                        present_mode: wgt::PresentMode::Fifo,
                        composite_alpha_mode: wgt::CompositeAlphaMode::Auto,
                        format,
                        extent: wgt::Extent3d::default(),
                        usage: wgt::TextureUsages::RENDER_ATTACHMENT,
                    },
                    configured: false,
                    presented: 0,
                    instance,
                    adapter: exposed.adapter,
                    device: open.device,
                    queue: open.queue,
                    surface,
                    window,
                };
                match presenter.reconfigure() {
                    Ok(()) => Ok(presenter),
                    Err(e) => presenter.destroy().and(Err(e)),
                }
            }
        }

        /// (Re)configures the surface for the window's current size, and
        /// keeps the triangle's aspect ratio. The GPU is idle here: each
        /// frame is waited for before the next. A surface still outdated
        /// (the window is being resized) is retried at the next frame.
        fn reconfigure(&mut self) -> Result<()> {
            // SAFETY: no GPU work is pending (see above); surface, adapter
            // and device come from one instance, and the adapter presents there.
            unsafe {
                let caps = keel_hal::Adapter::surface_capabilities(&self.adapter, &self.surface)?;
                let size = self.window.inner_size();
                let extent = caps.current_extent.unwrap_or(wgt::Extent3d {
                    width: size.width,
                    height: size.height,
                    depth_or_array_layers: 1,
                });
                self.configured = false;
                if extent.width == 0 || extent.height == 0 {
                    return Ok(()); // Minimised: nothing to show.
                }
                self.config.extent = extent;
                let aspect = extent.width as f32 / extent.height as f32;
                let scale = if aspect > 1.0 {
                    [1.0 / aspect, 1.0]
                } else {
                    [1.0, aspect]
                };
                self.scene.set_transform(&self.device, scale, [0.0, 0.0])?;
                match self.surface.configure(&self.device, &self.config) {
                    Ok(()) => self.configured = true,
                    Err(SurfaceError::Outdated) => {}
                    Err(e) => return Err(e.into()),
                }
                Ok(())
            }
        }

        /// Acquires, draws, submits and presents one frame, then waits for it.
        fn frame(&mut self) -> Result<()> {
            if !self.configured {
                return self.reconfigure();
            }
            // SAFETY: everything comes from this device; the frame's GPU
            // work is waited for before its view and command buffer go.
            unsafe {
                let acquired = match self.surface.acquire_texture(Some(Duration::from_secs(1))) {
                    Ok(acquired) => acquired,
                    Err(SurfaceError::Outdated) => return self.reconfigure(),
                    Err(SurfaceError::Timeout) => return Ok(()),
                    Err(e) => return Err(e.into()),
                };
                let texture: &A::Texture = acquired.texture.borrow();
                let view_desc = TextureViewDescriptor::default();
                let view = self.device.create_texture_view(texture, &view_desc)?;
                let (undefined, target) = (TextureUses::UNINITIALIZED, TextureUses::COLOR_TARGET);
                let encoder = &mut self.encoder;
                encoder.begin_encoding(Some("frame"))?;
                encoder.transition_textures(&[whole(texture, undefined, target)]);
                self.scene.record(encoder, &view, self.config.extent);
                encoder.transition_textures(&[whole(texture, target, TextureUses::PRESENT)]);
                let commands = encoder.end_encoding()?;
                self.fence_value += 1;
                let surface_textures = [&acquired.texture];
                self.queue.submit(
                    &[&commands],
                    &surface_textures,
                    &self.fence,
                    self.fence_value,
                )?;
                let presented = self.queue.present(&self.surface, acquired.texture);
                self.device.wait(&self.fence, self.fence_value, None)?;
                self.encoder.reset_all([commands]);
                self.device.destroy_texture_view(view);
                match presented {
                    Ok(()) => self.presented += 1,
                    Err(SurfaceError::Outdated) => return self.reconfigure(),
                    Err(e) => return Err(e.into()),
                }
                if acquired.suboptimal {
                    self.reconfigure()?;
                }
                Ok(())
            }
        }

        /// Waits for the GPU and destroys everything, the surface before the window.
        fn destroy(self) -> Result<()> {
            // SAFETY: after `wait_idle` no GPU work is pending.
            unsafe {
                self.device.wait_idle()?;
                self.scene.destroy(&self.device);
                self.device.destroy_command_encoder(self.encoder);
                self.device.destroy_fence(self.fence);
                self.surface.unconfigure(&self.device);
                self.instance.destroy_surface(self.surface);
            }
            drop((self.device, self.queue, self.adapter));
            let validation = check_validation::<A>(&self.instance);
            drop((self.instance, self.window));
            validation
        }
    }
}
