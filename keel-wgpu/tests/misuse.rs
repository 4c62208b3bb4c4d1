//! Wrong uses of wgpu's safe API, each run on keel-wgpu's noop and Vulkan
//! backends and on stock wgpu: keel's outcome of every step (no error, a
//! validation, out-of-memory or internal error caught by an error scope, an
//! error returned by the call, or a panic) must be the one stock wgpu gives,
//! at the same step, and keel's side must send the driver nothing the
//! validation layer complains about (`each_backend` counts its messages and
//! keel-hal's live objects).
//!
//! Each case makes its own objects and records its steps; a step that stock
//! wgpu passes is no misuse, so every case has at least one step stock
//! refuses. `cargo test -p keel-wgpu --test misuse -- --nocapture` prints the
//! table of cases and outcomes; with `MISUSE_MESSAGES=1` also each refused
//! step's messages on both sides (to see keel refuse for stock's reason).

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::num::NonZeroU64;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Once};

mod common;
use common::*;

// ---------------------------------------------------------------------------
// The harness

/// What one step of a case came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// No error.
    Ok,
    /// A validation error, caught by a `Validation` scope.
    Validation,
    /// An out-of-memory error, caught by an `OutOfMemory` scope.
    OutOfMemory,
    /// An internal error, caught by an `Internal` scope.
    Internal,
    /// The call returned an error value (`get_mapped_range`, a map
    /// callback's `BufferAsyncError`).
    Err,
    /// The step panicked.
    Panic,
}

impl Outcome {
    fn short(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Validation => "VAL",
            Outcome::OutOfMemory => "OOM",
            Outcome::Internal => "INT",
            Outcome::Err => "ERR",
            Outcome::Panic => "PANIC",
        }
    }
}

thread_local! {
    /// Set while a step runs: its panics are outcomes, not test failures,
    /// and the panic hook keeps quiet about them.
    static IN_STEP: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<String> = const { RefCell::new(String::new()) };
}

fn quiet_panics_in_steps() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_STEP.with(Cell::get) {
                let message = info
                    .payload()
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| info.payload().downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                LAST_PANIC.with(|p| *p.borrow_mut() = message);
            } else {
                default(info);
            }
        }));
    });
}

/// Runs `f` inside scopes of all three filters and a panic catcher.
fn outcome<T>(device: &wgpu::Device, f: impl FnOnce() -> T) -> (Option<T>, Outcome, String) {
    let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let internal = device.push_error_scope(wgpu::ErrorFilter::Internal);
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let was = IN_STEP.with(|s| s.replace(true));
    let result = catch_unwind(AssertUnwindSafe(f));
    IN_STEP.with(|s| s.set(was));
    let v = pollster::block_on(validation.pop());
    let i = pollster::block_on(internal.pop());
    let o = pollster::block_on(oom.pop());
    let (value, class, message) = match result {
        Err(_) => (
            None,
            Outcome::Panic,
            LAST_PANIC.with(|p| std::mem::take(&mut *p.borrow_mut())),
        ),
        Ok(value) => match (v, o, i) {
            (Some(e), _, _) => (Some(value), Outcome::Validation, describe(&e)),
            (None, Some(e), _) => (Some(value), Outcome::OutOfMemory, e.to_string()),
            (None, None, Some(e)) => (Some(value), Outcome::Internal, e.to_string()),
            (None, None, None) => (Some(value), Outcome::Ok, String::new()),
        },
    };
    (value, class, message)
}

/// An error's message: a validation error's description (its `Display`
/// is only "Validation Error").
fn describe(e: &wgpu::Error) -> String {
    match e {
        wgpu::Error::Validation { description, .. } => description.clone(),
        other => other.to_string(),
    }
}

/// One step's record.
#[derive(Clone, Debug)]
struct Step {
    name: &'static str,
    outcome: Outcome,
    message: String,
}

/// A case being run: the device, and the steps recorded so far.
struct S<'g> {
    gpu: &'g Gpu,
    steps: Vec<Step>,
    /// The device lacks a feature the case needs: not compared.
    skipped: Option<String>,
}

impl<'g> S<'g> {
    fn d(&self) -> &'g wgpu::Device {
        &self.gpu.device
    }
    fn q(&self) -> &'g wgpu::Queue {
        &self.gpu.queue
    }

    /// Runs `f` as the step `name`; its value unless it panicked.
    fn step<T>(&mut self, name: &'static str, f: impl FnOnce() -> T) -> Option<T> {
        let (value, outcome, message) = outcome(&self.gpu.device, f);
        self.steps.push(Step {
            name,
            outcome,
            message,
        });
        value
    }

    /// As [`S::step`], for a call that returns a `Result`: an `Err` is the
    /// step's outcome unless an error scope caught something first.
    fn fallible<T, E: std::fmt::Display>(
        &mut self,
        name: &'static str,
        f: impl FnOnce() -> Result<T, E>,
    ) -> Option<T> {
        let value = self.step(name, f)?;
        match value {
            Ok(v) => Some(v),
            Err(e) => {
                let last = self.steps.last_mut().expect("just pushed");
                if last.outcome == Outcome::Ok {
                    last.outcome = Outcome::Err;
                    last.message = e.to_string();
                }
                None
            }
        }
    }

    /// Skips the case unless the device has `features`.
    fn needs(&mut self, features: wgpu::Features) -> bool {
        let missing = features - self.gpu.device.features();
        if !missing.is_empty() {
            self.skipped = Some(format!("lacks {missing:?}"));
            return false;
        }
        true
    }

    /// Waits for the device (as a step: a refused wait is an outcome).
    fn wait(&mut self) {
        let d = self.d();
        self.step("poll", || {
            let _ = d.poll(wgpu::PollType::wait_indefinitely());
        });
    }
}

type Case = (&'static str, fn(&mut S));

/// One case's record on one backend: its steps, why it was skipped, and
/// what keel left behind (live keel-hal objects, validation-layer messages).
struct Record {
    steps: Vec<Step>,
    skipped: Option<String>,
    problems: Vec<String>,
}

/// Runs every case on `gpu`, checking keel's side after each.
fn run_cases(gpu: &Gpu, cases: &[Case]) -> Vec<Record> {
    let d = &gpu.device;
    let keel = gpu.backend != Backend::Stock;
    let mut layer = keel_wgpu::validation_errors(&gpu.instance).unwrap_or(0);
    let mut records = Vec::new();
    for (_, case) in cases {
        let mut s = S {
            gpu,
            steps: Vec::new(),
            skipped: None,
        };
        // Errors and panics outside the case's steps.
        let (_, rest, message) = outcome(d, || case(&mut s));
        if rest != Outcome::Ok {
            s.steps.push(Step {
                name: "(outside a step)",
                outcome: rest,
                message,
            });
        }
        // Whatever the case left running (or queued for the next submit:
        // zero-initialisation), finished before the next.
        let (_, after, message) = outcome(d, || {
            gpu.queue.submit([]);
            let _ = d.poll(wgpu::PollType::wait_indefinitely());
        });
        if after != Outcome::Ok {
            s.steps.push(Step {
                name: "(after the case)",
                outcome: after,
                message,
            });
        }
        let mut problems = Vec::new();
        if keel {
            let (counts, _, _) = outcome(d, || keel_wgpu::live_counts(d));
            if let Some(Some(counts)) = counts {
                if counts != Default::default() {
                    problems.push(format!("keel-hal objects left alive: {counts:?}"));
                }
            }
            let now = keel_wgpu::validation_errors(&gpu.instance).unwrap_or(0);
            if now != layer {
                problems.push(format!("{} validation-layer messages", now - layer));
                layer = now;
            }
        }
        records.push(Record {
            steps: s.steps,
            skipped: s.skipped,
            problems,
        });
    }
    records
}

/// Default limits, with room for immediates where the adapter has it.
fn area_limits(adapter: &wgpu::Adapter) -> wgpu::Limits {
    wgpu::Limits {
        max_immediate_size: adapter.limits().max_immediate_size.min(64),
        ..Default::default()
    }
}

/// Runs `cases` on stock wgpu, then on keel-wgpu's noop and Vulkan
/// backends, and compares each keel run with stock's.
fn run_area(area: &str, features: wgpu::Features, cases: &[Case]) {
    run_area_with(area, features, area_limits, cases);
}

/// As [`run_area`], on devices opened with the limits `limits` picks.
fn run_area_with(
    area: &str,
    features: wgpu::Features,
    limits: fn(&wgpu::Adapter) -> wgpu::Limits,
    cases: &[Case],
) {
    quiet_panics_in_steps();
    let _one = ONE_AT_A_TIME.lock();
    let mut runs: BTreeMap<&'static str, Vec<Record>> = BTreeMap::new();
    let mut totals = Vec::new();
    for backend in [Backend::Stock, Backend::Noop, Backend::Vulkan] {
        let Some(gpu) = open_with_limits(backend, wgpu::Features::empty(), features, limits) else {
            continue;
        };
        let records = run_cases(&gpu, cases);
        runs.insert(gpu.name, records);
        if backend == Backend::Stock {
            continue;
        }
        // As `each_backend`: nothing alive, and no layer message once the
        // device is gone.
        totals.extend(end_checks(gpu));
    }
    let Some(stock) = runs.get("stock wgpu") else {
        eprintln!("{area}: no stock wgpu adapter; nothing to compare");
        return;
    };
    let mut failures = totals;
    let mut compared = 0;
    println!("\n== {area}: {} cases", cases.len());
    for (i, (name, _)) in cases.iter().enumerate() {
        let Record {
            steps: stock_steps,
            skipped: stock_skip,
            ..
        } = &stock[i];
        let show = |steps: &[Step]| {
            steps
                .iter()
                .map(|s| format!("{}:{}", s.name, s.outcome.short()))
                .collect::<Vec<_>>()
                .join(" ")
        };
        if let Some(why) = stock_skip {
            println!("  {name:<44} skipped on stock ({why})");
            continue;
        }
        if stock_steps.iter().all(|s| s.outcome == Outcome::Ok) {
            failures.push(format!(
                "{area}/{name}: stock wgpu accepts every step: not a misuse"
            ));
        }
        println!("  {name:<44} stock  {}", show(stock_steps));
        for backend in ["noop", "vulkan"] {
            let Some(run) = runs.get(backend) else {
                continue;
            };
            let Record {
                steps,
                skipped: skip,
                problems,
            } = &run[i];
            for p in problems {
                println!("  {:<44} {backend:<6} {p}   <-- KEEL PROBLEM", "");
                failures.push(format!("{area}/{name} on {backend}: {p}"));
            }
            if let Some(why) = skip {
                println!("  {:<44} {backend:<6} skipped ({why})", "");
                continue;
            }
            compared += 1;
            let same = steps.len() == stock_steps.len()
                && steps
                    .iter()
                    .zip(stock_steps)
                    .all(|(a, b)| a.name == b.name && a.outcome == b.outcome);
            println!(
                "  {:<44} {backend:<6} {}{}",
                "",
                show(steps),
                if same { "" } else { "   <-- DIFFERS" }
            );
            // `MISUSE_MESSAGES=1`: both sides' error messages, to see that
            // keel refuses for stock's reason.
            if std::env::var_os("MISUSE_MESSAGES").is_some() {
                for (step, stock_step) in steps.iter().zip(stock_steps) {
                    if step.outcome != Outcome::Ok {
                        println!("      {}: keel:  {}", step.name, step.message.trim());
                        println!("      {}: stock: {}", step.name, stock_step.message.trim());
                    }
                }
            }
            if !same {
                let messages = |steps: &[Step]| {
                    steps
                        .iter()
                        .filter(|s| s.outcome != Outcome::Ok)
                        .map(|s| format!("{}: {}", s.name, s.message.trim()))
                        .collect::<Vec<_>>()
                        .join(" | ")
                };
                failures.push(format!(
                    "{area}/{name} on {backend}: {} (stock: {})\n    keel: {}\n    stock: {}",
                    show(steps),
                    show(stock_steps),
                    messages(steps),
                    messages(stock_steps)
                ));
            }
        }
    }
    println!(
        "misuse summary: {area}: {} cases, {compared} keel runs compared with stock, {} \
         differences",
        cases.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{area}: keel-wgpu differs from stock wgpu:\n{}",
        failures.join("\n")
    );
}

macro_rules! cases {
    ($($name:ident),* $(,)?) => {
        &[$((stringify!($name), $name as fn(&mut S))),*]
    };
}

// ---------------------------------------------------------------------------
// Helpers

use wgpu::BufferUsages as BU;
use wgpu::TextureFormat as TF;
use wgpu::TextureUsages as TU;

fn buf(d: &wgpu::Device, size: u64, usage: BU) -> wgpu::Buffer {
    d.create_buffer(&wgpu::BufferDescriptor {
        label: Some("case buffer"),
        size,
        usage,
        mapped_at_creation: false,
    })
}

fn extent(width: u32, height: u32, layers: u32) -> wgpu::Extent3d {
    wgpu::Extent3d {
        width,
        height,
        depth_or_array_layers: layers,
    }
}

fn tex_desc(size: wgpu::Extent3d, format: TF, usage: TU) -> wgpu::TextureDescriptor<'static> {
    wgpu::TextureDescriptor {
        label: Some("case texture"),
        size,
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage,
        view_formats: &[],
    }
}

fn tex(d: &wgpu::Device, width: u32, height: u32, format: TF, usage: TU) -> wgpu::Texture {
    d.create_texture(&tex_desc(extent(width, height, 1), format, usage))
}

/// A 4x4 render target's view.
fn target(d: &wgpu::Device, format: TF) -> wgpu::TextureView {
    tex(d, 4, 4, format, TU::RENDER_ATTACHMENT | TU::COPY_SRC).create_view(&Default::default())
}

fn view(t: &wgpu::Texture) -> wgpu::TextureView {
    t.create_view(&Default::default())
}

fn module(d: &wgpu::Device, source: &str) -> wgpu::ShaderModule {
    d.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("case shader"),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    })
}

fn color(view: &wgpu::TextureView) -> Option<wgpu::RenderPassColorAttachment<'_>> {
    Some(wgpu::RenderPassColorAttachment {
        view,
        depth_slice: None,
        resolve_target: None,
        ops: Default::default(),
    })
}

/// A render pass on one colour attachment.
fn pass<'e>(
    encoder: &'e mut wgpu::CommandEncoder,
    view: &wgpu::TextureView,
) -> wgpu::RenderPass<'e> {
    encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some("case pass"),
        color_attachments: &[color(view)],
        ..Default::default()
    })
}

fn encoder(d: &wgpu::Device) -> wgpu::CommandEncoder {
    d.create_command_encoder(&Default::default())
}

/// Finishes and submits `encoder` as two steps.
fn finish_submit(s: &mut S, encoder: wgpu::CommandEncoder) {
    let q = s.q();
    if let Some(cb) = s.step("finish", || encoder.finish()) {
        s.step("submit", || {
            q.submit([cb]);
        });
    }
}

/// Records `f` on a new encoder (a step), then finishes and submits it.
fn record(s: &mut S, f: impl FnOnce(&mut wgpu::CommandEncoder)) {
    let d = s.d();
    let Some(e) = s.step("record", || {
        let mut e = encoder(d);
        f(&mut e);
        e
    }) else {
        return;
    };
    finish_submit(s, e);
}

const STORAGE_RW: &str = "
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@compute @workgroup_size(1) fn main() { data[0] = 1u; }
";

const NO_BINDINGS: &str = "@compute @workgroup_size(1) fn main() {}";

/// Draws without vertex buffers into one f32 colour target.
const DRAW: &str = "
@vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    return vec4<f32>(f32(i) * 0.1, 0.0, 0.0, 1.0);
}
@fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }
";

/// Reads a vec2 from vertex buffer slot 0.
const DRAW_VERTEX: &str = "
@vertex fn vs(@location(0) p: vec2<f32>) -> @builtin(position) vec4<f32> {
    return vec4<f32>(p, 0.0, 1.0);
}
@fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }
";

/// A storage buffer in group 0, written by the fragment stage.
const DRAW_STORAGE: &str = "
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@vertex fn vs(@location(0) p: vec2<f32>) -> @builtin(position) vec4<f32> {
    return vec4<f32>(p, 0.0, 1.0);
}
@fragment fn fs() -> @location(0) vec4<f32> { data[0] = 1u; return vec4<f32>(1.0); }
";

fn compute_pipeline(d: &wgpu::Device, source: &str) -> wgpu::ComputePipeline {
    d.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("case compute"),
        layout: None,
        module: &module(d, source),
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    })
}

fn vec2_layout() -> wgpu::VertexBufferLayout<'static> {
    wgpu::VertexBufferLayout {
        array_stride: 8,
        step_mode: wgpu::VertexStepMode::Vertex,
        attributes: &[wgpu::VertexAttribute {
            format: wgpu::VertexFormat::Float32x2,
            offset: 0,
            shader_location: 0,
        }],
    }
}

/// What a render pipeline is made for.
struct RP<'a> {
    source: &'a str,
    layout: Option<&'a wgpu::PipelineLayout>,
    buffers: &'a [Option<wgpu::VertexBufferLayout<'a>>],
    targets: &'a [Option<wgpu::ColorTargetState>],
    depth: Option<wgpu::DepthStencilState>,
    samples: u32,
    primitive: wgpu::PrimitiveState,
    /// With the fragment stage `fs` (without: a depth-only pipeline).
    fragment: bool,
}

impl Default for RP<'_> {
    fn default() -> Self {
        Self {
            source: DRAW,
            layout: None,
            buffers: &[],
            targets: &[],
            depth: None,
            samples: 1,
            primitive: Default::default(),
            fragment: true,
        }
    }
}

fn render_pipeline(d: &wgpu::Device, rp: RP<'_>) -> wgpu::RenderPipeline {
    let module = module(d, rp.source);
    let default_targets = [Some(TF::Rgba8Unorm.into())];
    let targets = if rp.targets.is_empty() {
        &default_targets[..]
    } else {
        rp.targets
    };
    d.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("case pipeline"),
        layout: rp.layout,
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers: rp.buffers,
        },
        primitive: rp.primitive,
        depth_stencil: rp.depth,
        multisample: wgpu::MultisampleState {
            count: rp.samples,
            ..Default::default()
        },
        fragment: rp.fragment.then(|| wgpu::FragmentState {
            module: &module,
            entry_point: Some("fs"),
            compilation_options: Default::default(),
            targets,
        }),
        multiview_mask: None,
        cache: None,
    })
}

fn depth_state(format: TF, write: bool) -> wgpu::DepthStencilState {
    wgpu::DepthStencilState {
        format,
        depth_write_enabled: Some(write),
        depth_compare: Some(wgpu::CompareFunction::Less),
        stencil: Default::default(),
        bias: Default::default(),
    }
}

fn buffer_entry(binding: u32, ty: wgpu::BufferBindingType) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE | wgpu::ShaderStages::FRAGMENT,
        ty: wgpu::BindingType::Buffer {
            ty,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

const STORAGE: wgpu::BufferBindingType = wgpu::BufferBindingType::Storage { read_only: false };
const UNIFORM: wgpu::BufferBindingType = wgpu::BufferBindingType::Uniform;

fn layout(d: &wgpu::Device, entries: &[wgpu::BindGroupLayoutEntry]) -> wgpu::BindGroupLayout {
    d.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("case layout"),
        entries,
    })
}

fn pipeline_layout(
    d: &wgpu::Device,
    groups: &[&wgpu::BindGroupLayout],
    immediate_size: u32,
) -> wgpu::PipelineLayout {
    let groups: Vec<Option<&wgpu::BindGroupLayout>> = groups.iter().map(|g| Some(*g)).collect();
    d.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("case pipeline layout"),
        bind_group_layouts: &groups,
        immediate_size,
    })
}

fn group(
    d: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    resources: &[wgpu::BindingResource<'_>],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry> = resources
        .iter()
        .enumerate()
        .map(|(i, r)| wgpu::BindGroupEntry {
            binding: i as u32,
            resource: r.clone(),
        })
        .collect();
    d.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("case group"),
        layout,
        entries: &entries,
    })
}

fn binding(b: &wgpu::Buffer, offset: u64, size: Option<u64>) -> wgpu::BindingResource<'_> {
    wgpu::BindingResource::Buffer(wgpu::BufferBinding {
        buffer: b,
        offset,
        size: size.and_then(NonZeroU64::new),
    })
}

/// A storage-buffer group for `STORAGE_RW`'s pipeline, and the pipeline.
fn storage_dispatch(d: &wgpu::Device) -> (wgpu::ComputePipeline, wgpu::BindGroup) {
    let pipeline = compute_pipeline(d, STORAGE_RW);
    let data = buf(d, 64, BU::STORAGE);
    let group = group(
        d,
        &pipeline.get_bind_group_layout(0),
        &[data.as_entire_binding()],
    );
    (pipeline, group)
}

fn image_copy(t: &wgpu::Texture) -> wgpu::TexelCopyTextureInfo<'_> {
    t.as_image_copy()
}

fn buffer_copy(
    b: &wgpu::Buffer,
    offset: u64,
    bytes_per_row: Option<u32>,
) -> wgpu::TexelCopyBufferInfo<'_> {
    wgpu::TexelCopyBufferInfo {
        buffer: b,
        layout: wgpu::TexelCopyBufferLayout {
            offset,
            bytes_per_row,
            rows_per_image: None,
        },
    }
}

fn data_layout(offset: u64, bytes_per_row: Option<u32>) -> wgpu::TexelCopyBufferLayout {
    wgpu::TexelCopyBufferLayout {
        offset,
        bytes_per_row,
        rows_per_image: None,
    }
}

// ---------------------------------------------------------------------------
// Buffers

fn buffer_with_no_usage(s: &mut S) {
    let d = s.d();
    s.step("create", || buf(d, 64, BU::empty()));
}

fn map_read_buffer_with_storage_usage(s: &mut S) {
    let d = s.d();
    s.step("create", || buf(d, 64, BU::MAP_READ | BU::STORAGE));
}

fn map_write_buffer_with_copy_dst(s: &mut S) {
    let d = s.d();
    s.step("create", || buf(d, 64, BU::MAP_WRITE | BU::COPY_DST));
}

fn mapped_at_creation_unaligned_size(s: &mut S) {
    let d = s.d();
    s.step("create", || {
        d.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: 6,
            usage: BU::COPY_DST,
            mapped_at_creation: true,
        })
    });
}

fn buffer_over_max_buffer_size(s: &mut S) {
    let d = s.d();
    let max = d.limits().max_buffer_size;
    s.step("create", || buf(d, max + 4, BU::STORAGE));
}

fn invalid_buffer_used_in_copy(s: &mut S) {
    let d = s.d();
    let Some(bad) = s.step("create invalid", || buf(d, 64, BU::empty())) else {
        return;
    };
    let good = buf(d, 64, BU::COPY_DST);
    record(s, |e| e.copy_buffer_to_buffer(&bad, 0, &good, 0, 16));
}

// ---------------------------------------------------------------------------
// Textures and views

fn texture_of_zero_size(s: &mut S) {
    let d = s.d();
    s.step("create", || {
        tex(d, 0, 4, TF::Rgba8Unorm, TU::TEXTURE_BINDING)
    });
}

fn texture_with_no_usage(s: &mut S) {
    let d = s.d();
    s.step("create", || tex(d, 4, 4, TF::Rgba8Unorm, TU::empty()));
}

fn texture_with_too_many_mips(s: &mut S) {
    let d = s.d();
    s.step("create", || {
        d.create_texture(&wgpu::TextureDescriptor {
            mip_level_count: 4,
            ..tex_desc(extent(4, 4, 1), TF::Rgba8Unorm, TU::TEXTURE_BINDING)
        })
    });
}

fn texture_with_sample_count_3(s: &mut S) {
    let d = s.d();
    s.step("create", || {
        d.create_texture(&wgpu::TextureDescriptor {
            sample_count: 3,
            ..tex_desc(extent(4, 4, 1), TF::Rgba8Unorm, TU::RENDER_ATTACHMENT)
        })
    });
}

fn multisampled_texture_with_mips(s: &mut S) {
    let d = s.d();
    s.step("create", || {
        d.create_texture(&wgpu::TextureDescriptor {
            sample_count: 4,
            mip_level_count: 2,
            ..tex_desc(extent(4, 4, 1), TF::Rgba8Unorm, TU::RENDER_ATTACHMENT)
        })
    });
}

fn multisampled_storage_texture(s: &mut S) {
    let d = s.d();
    s.step("create", || {
        d.create_texture(&wgpu::TextureDescriptor {
            sample_count: 4,
            ..tex_desc(
                extent(4, 4, 1),
                TF::Rgba8Unorm,
                TU::RENDER_ATTACHMENT | TU::STORAGE_BINDING,
            )
        })
    });
}

fn texture_over_max_dimension(s: &mut S) {
    let d = s.d();
    let max = d.limits().max_texture_dimension_2d;
    s.step("create", || {
        tex(d, max + 1, 1, TF::Rgba8Unorm, TU::TEXTURE_BINDING)
    });
}

fn storage_usage_on_a_non_storage_format(s: &mut S) {
    let d = s.d();
    s.step("create", || {
        tex(d, 4, 4, TF::Rgba8UnormSrgb, TU::STORAGE_BINDING)
    });
}

fn depth_format_in_a_3d_texture(s: &mut S) {
    let d = s.d();
    s.step("create", || {
        d.create_texture(&wgpu::TextureDescriptor {
            dimension: wgpu::TextureDimension::D3,
            ..tex_desc(extent(4, 4, 4), TF::Depth32Float, TU::TEXTURE_BINDING)
        })
    });
}

fn render_attachment_on_a_non_renderable_format(s: &mut S) {
    let d = s.d();
    s.step("create", || {
        tex(d, 4, 4, TF::Rgb9e5Ufloat, TU::RENDER_ATTACHMENT)
    });
}

fn view_format_not_listed(s: &mut S) {
    let d = s.d();
    let t = tex(d, 4, 4, TF::Rgba8Unorm, TU::TEXTURE_BINDING);
    s.step("create_view", || {
        t.create_view(&wgpu::TextureViewDescriptor {
            format: Some(TF::Rgba8UnormSrgb),
            ..Default::default()
        })
    });
}

fn view_mips_past_the_texture(s: &mut S) {
    let d = s.d();
    let t = tex(d, 4, 4, TF::Rgba8Unorm, TU::TEXTURE_BINDING);
    s.step("create_view", || {
        t.create_view(&wgpu::TextureViewDescriptor {
            base_mip_level: 1,
            ..Default::default()
        })
    });
}

fn view_layers_past_the_texture(s: &mut S) {
    let d = s.d();
    let t = d.create_texture(&tex_desc(
        extent(4, 4, 2),
        TF::Rgba8Unorm,
        TU::TEXTURE_BINDING,
    ));
    s.step("create_view", || {
        t.create_view(&wgpu::TextureViewDescriptor {
            dimension: Some(wgpu::TextureViewDimension::D2Array),
            base_array_layer: 1,
            array_layer_count: Some(2),
            ..Default::default()
        })
    });
}

fn view_aspect_the_format_lacks(s: &mut S) {
    let d = s.d();
    let t = tex(d, 4, 4, TF::Rgba8Unorm, TU::TEXTURE_BINDING);
    s.step("create_view", || {
        t.create_view(&wgpu::TextureViewDescriptor {
            aspect: wgpu::TextureAspect::StencilOnly,
            ..Default::default()
        })
    });
}

fn cube_view_of_two_layers(s: &mut S) {
    let d = s.d();
    let t = d.create_texture(&tex_desc(
        extent(4, 4, 2),
        TF::Rgba8Unorm,
        TU::TEXTURE_BINDING,
    ));
    s.step("create_view", || {
        t.create_view(&wgpu::TextureViewDescriptor {
            dimension: Some(wgpu::TextureViewDimension::Cube),
            ..Default::default()
        })
    });
}

fn view_2d_of_a_3d_texture_with_all_layers(s: &mut S) {
    let d = s.d();
    let t = d.create_texture(&wgpu::TextureDescriptor {
        dimension: wgpu::TextureDimension::D3,
        ..tex_desc(extent(4, 4, 4), TF::Rgba8Unorm, TU::TEXTURE_BINDING)
    });
    s.step("create_view", || {
        t.create_view(&wgpu::TextureViewDescriptor {
            dimension: Some(wgpu::TextureViewDimension::D2),
            ..Default::default()
        })
    });
}

fn sampler_with_anisotropy_and_nearest_filters(s: &mut S) {
    let d = s.d();
    s.step("create_sampler", || {
        d.create_sampler(&wgpu::SamplerDescriptor {
            anisotropy_clamp: 4,
            ..Default::default()
        })
    });
}

fn sampler_with_lod_min_above_lod_max(s: &mut S) {
    let d = s.d();
    s.step("create_sampler", || {
        d.create_sampler(&wgpu::SamplerDescriptor {
            lod_min_clamp: 4.0,
            lod_max_clamp: 1.0,
            ..Default::default()
        })
    });
}

fn clear_texture_without_the_feature(s: &mut S) {
    let d = s.d();
    if d.features().contains(wgpu::Features::CLEAR_TEXTURE) {
        s.skipped = Some("has CLEAR_TEXTURE".into());
        return;
    }
    let t = tex(d, 4, 4, TF::Rgba8Unorm, TU::COPY_DST);
    record(s, |e| e.clear_texture(&t, &Default::default()));
}

// ---------------------------------------------------------------------------
// Bind groups and layouts

fn layout_with_a_duplicate_binding(s: &mut S) {
    let d = s.d();
    s.step("create layout", || {
        layout(d, &[buffer_entry(0, UNIFORM), buffer_entry(0, STORAGE)])
    });
}

fn group_missing_an_entry(s: &mut S) {
    let d = s.d();
    let l = layout(d, &[buffer_entry(0, UNIFORM), buffer_entry(1, UNIFORM)]);
    let b = buf(d, 256, BU::UNIFORM);
    s.step("create group", || group(d, &l, &[b.as_entire_binding()]));
}

fn group_buffer_range_past_the_end(s: &mut S) {
    let d = s.d();
    let l = layout(d, &[buffer_entry(0, UNIFORM)]);
    let b = buf(d, 256, BU::UNIFORM);
    s.step("create group", || {
        group(d, &l, &[binding(&b, 0, Some(512))])
    });
}

fn group_buffer_smaller_than_min_binding_size(s: &mut S) {
    let d = s.d();
    let l = layout(
        d,
        &[wgpu::BindGroupLayoutEntry {
            ty: wgpu::BindingType::Buffer {
                ty: UNIFORM,
                has_dynamic_offset: false,
                min_binding_size: NonZeroU64::new(64),
            },
            ..buffer_entry(0, UNIFORM)
        }],
    );
    let b = buf(d, 256, BU::UNIFORM);
    s.step("create group", || group(d, &l, &[binding(&b, 0, Some(32))]));
}

fn group_uniform_buffer_without_uniform_usage(s: &mut S) {
    let d = s.d();
    let l = layout(d, &[buffer_entry(0, UNIFORM)]);
    let b = buf(d, 256, BU::STORAGE);
    s.step("create group", || group(d, &l, &[b.as_entire_binding()]));
}

fn group_uniform_offset_unaligned(s: &mut S) {
    let d = s.d();
    let l = layout(d, &[buffer_entry(0, UNIFORM)]);
    let b = buf(d, 1024, BU::UNIFORM);
    s.step("create group", || group(d, &l, &[binding(&b, 4, Some(64))]));
}

fn group_sampler_where_a_buffer_goes(s: &mut S) {
    let d = s.d();
    let l = layout(d, &[buffer_entry(0, UNIFORM)]);
    let sampler = d.create_sampler(&Default::default());
    s.step("create group", || {
        group(d, &l, &[wgpu::BindingResource::Sampler(&sampler)])
    });
}

fn group_texture_of_the_wrong_sample_type(s: &mut S) {
    let d = s.d();
    let l = layout(
        d,
        &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::FRAGMENT,
            ty: wgpu::BindingType::Texture {
                sample_type: wgpu::TextureSampleType::Float { filterable: true },
                view_dimension: wgpu::TextureViewDimension::D2,
                multisampled: false,
            },
            count: None,
        }],
    );
    let t = tex(d, 4, 4, TF::Rgba8Uint, TU::TEXTURE_BINDING);
    let v = view(&t);
    s.step("create group", || {
        group(d, &l, &[wgpu::BindingResource::TextureView(&v)])
    });
}

fn group_storage_texture_without_storage_usage(s: &mut S) {
    let d = s.d();
    let l = layout(
        d,
        &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::StorageTexture {
                access: wgpu::StorageTextureAccess::WriteOnly,
                format: TF::Rgba8Unorm,
                view_dimension: wgpu::TextureViewDimension::D2,
            },
            count: None,
        }],
    );
    let t = tex(d, 4, 4, TF::Rgba8Unorm, TU::TEXTURE_BINDING);
    let v = view(&t);
    s.step("create group", || {
        group(d, &l, &[wgpu::BindingResource::TextureView(&v)])
    });
}

fn group_comparison_sampler_for_a_filtering_binding(s: &mut S) {
    let d = s.d();
    let l = layout(
        d,
        &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::FRAGMENT,
            ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
            count: None,
        }],
    );
    let sampler = d.create_sampler(&wgpu::SamplerDescriptor {
        compare: Some(wgpu::CompareFunction::Less),
        ..Default::default()
    });
    s.step("create group", || {
        group(d, &l, &[wgpu::BindingResource::Sampler(&sampler)])
    });
}

fn group_filtering_sampler_for_a_non_filtering_binding(s: &mut S) {
    let d = s.d();
    let l = layout(
        d,
        &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::FRAGMENT,
            ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::NonFiltering),
            count: None,
        }],
    );
    let sampler = d.create_sampler(&wgpu::SamplerDescriptor {
        mag_filter: wgpu::FilterMode::Linear,
        ..Default::default()
    });
    s.step("create group", || {
        group(d, &l, &[wgpu::BindingResource::Sampler(&sampler)])
    });
}

fn group_multisampled_view_for_a_single_sampled_binding(s: &mut S) {
    let d = s.d();
    let l = layout(
        d,
        &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::FRAGMENT,
            ty: wgpu::BindingType::Texture {
                sample_type: wgpu::TextureSampleType::Float { filterable: false },
                view_dimension: wgpu::TextureViewDimension::D2,
                multisampled: false,
            },
            count: None,
        }],
    );
    let t = d.create_texture(&wgpu::TextureDescriptor {
        sample_count: 4,
        ..tex_desc(
            extent(4, 4, 1),
            TF::Rgba8Unorm,
            TU::RENDER_ATTACHMENT | TU::TEXTURE_BINDING,
        )
    });
    let v = view(&t);
    s.step("create group", || {
        group(d, &l, &[wgpu::BindingResource::TextureView(&v)])
    });
}

fn group_3d_view_for_a_2d_binding(s: &mut S) {
    let d = s.d();
    let l = layout(
        d,
        &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::FRAGMENT,
            ty: wgpu::BindingType::Texture {
                sample_type: wgpu::TextureSampleType::Float { filterable: true },
                view_dimension: wgpu::TextureViewDimension::D2,
                multisampled: false,
            },
            count: None,
        }],
    );
    let t = d.create_texture(&wgpu::TextureDescriptor {
        dimension: wgpu::TextureDimension::D3,
        ..tex_desc(extent(4, 4, 4), TF::Rgba8Unorm, TU::TEXTURE_BINDING)
    });
    let v = view(&t);
    s.step("create group", || {
        group(d, &l, &[wgpu::BindingResource::TextureView(&v)])
    });
}

fn set_bind_group_made_for_another_layout(s: &mut S) {
    let d = s.d();
    let pipeline = compute_pipeline(d, STORAGE_RW);
    let other = layout(d, &[buffer_entry(0, UNIFORM)]);
    let b = buf(d, 256, BU::UNIFORM);
    let g = group(d, &other, &[b.as_entire_binding()]);
    record(s, |e| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.set_pipeline(&pipeline);
        p.set_bind_group(0, &g, &[]);
        p.dispatch_workgroups(1, 1, 1);
    });
}

fn set_bind_group_past_the_group_limit(s: &mut S) {
    let d = s.d();
    let (pipeline, g) = storage_dispatch(d);
    record(s, |e| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.set_pipeline(&pipeline);
        p.set_bind_group(7, &g, &[]);
        p.dispatch_workgroups(1, 1, 1);
    });
}

fn filtering_sampler_with_a_non_filterable_texture(s: &mut S) {
    let d = s.d();
    let l = layout(
        d,
        &[
            wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Texture {
                    sample_type: wgpu::TextureSampleType::Float { filterable: false },
                    view_dimension: wgpu::TextureViewDimension::D2,
                    multisampled: false,
                },
                count: None,
            },
            wgpu::BindGroupLayoutEntry {
                binding: 1,
                visibility: wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                count: None,
            },
        ],
    );
    let pl = pipeline_layout(d, &[&l], 0);
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                source: "
@group(0) @binding(0) var t: texture_2d<f32>;
@group(0) @binding(1) var s: sampler;
@vertex fn vs() -> @builtin(position) vec4<f32> { return vec4<f32>(0.0); }
@fragment fn fs() -> @location(0) vec4<f32> { return textureSample(t, s, vec2<f32>(0.5)); }
",
                layout: Some(&pl),
                ..Default::default()
            },
        )
    });
}

// ---------------------------------------------------------------------------
// Pipelines

fn compute_pipeline_with_a_missing_entry_point(s: &mut S) {
    let d = s.d();
    let m = module(d, NO_BINDINGS);
    s.step("create pipeline", || {
        d.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: None,
            layout: None,
            module: &m,
            entry_point: Some("nowhere"),
            compilation_options: Default::default(),
            cache: None,
        })
    });
}

fn shader_binding_missing_from_the_layout(s: &mut S) {
    let d = s.d();
    let l = layout(d, &[]);
    let pl = pipeline_layout(d, &[&l], 0);
    let m = module(d, STORAGE_RW);
    s.step("create pipeline", || {
        d.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: None,
            layout: Some(&pl),
            module: &m,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        })
    });
}

fn shader_binding_of_another_type_in_the_layout(s: &mut S) {
    let d = s.d();
    let l = layout(d, &[buffer_entry(0, UNIFORM)]);
    let pl = pipeline_layout(d, &[&l], 0);
    let m = module(d, STORAGE_RW);
    s.step("create pipeline", || {
        d.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: None,
            layout: Some(&pl),
            module: &m,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        })
    });
}

fn workgroup_over_the_invocation_limit(s: &mut S) {
    let d = s.d();
    s.step("create pipeline", || {
        compute_pipeline(d, "@compute @workgroup_size(1024, 2, 1) fn main() {}")
    });
}

fn invalid_wgsl(s: &mut S) {
    let d = s.d();
    s.step("create module", || module(d, "@compute fn main( {"));
}

fn color_target_of_another_scalar_type(s: &mut S) {
    let d = s.d();
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                targets: &[Some(TF::Rgba8Uint.into())],
                ..Default::default()
            },
        )
    });
}

fn vertex_attribute_the_shader_reads_is_missing(s: &mut S) {
    let d = s.d();
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                source: DRAW_VERTEX,
                ..Default::default()
            },
        )
    });
}

fn vertex_attribute_of_the_wrong_type(s: &mut S) {
    let d = s.d();
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                source: DRAW_VERTEX,
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: 8,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &[wgpu::VertexAttribute {
                        format: wgpu::VertexFormat::Uint32x2,
                        offset: 0,
                        shader_location: 0,
                    }],
                })],
                ..Default::default()
            },
        )
    });
}

fn vertex_attribute_past_the_stride(s: &mut S) {
    let d = s.d();
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                source: DRAW_VERTEX,
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: 8,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &[wgpu::VertexAttribute {
                        format: wgpu::VertexFormat::Float32x2,
                        offset: 4,
                        shader_location: 0,
                    }],
                })],
                ..Default::default()
            },
        )
    });
}

fn render_pipeline_with_sample_count_3(s: &mut S) {
    let d = s.d();
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                samples: 3,
                ..Default::default()
            },
        )
    });
}

fn depth_stencil_state_with_a_color_format(s: &mut S) {
    let d = s.d();
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                depth: Some(depth_state(TF::Rgba8Unorm, true)),
                ..Default::default()
            },
        )
    });
}

fn color_target_of_a_non_renderable_format(s: &mut S) {
    let d = s.d();
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                targets: &[Some(TF::Rgb9e5Ufloat.into())],
                ..Default::default()
            },
        )
    });
}

fn blending_on_a_non_blendable_format(s: &mut S) {
    let d = s.d();
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                targets: &[Some(wgpu::ColorTargetState {
                    format: TF::R32Float,
                    blend: Some(wgpu::BlendState::ALPHA_BLENDING),
                    write_mask: wgpu::ColorWrites::ALL,
                })],
                source: "
@vertex fn vs() -> @builtin(position) vec4<f32> { return vec4<f32>(0.0); }
@fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }
",
                ..Default::default()
            },
        )
    });
}

fn get_bind_group_layout_past_max_bind_groups(s: &mut S) {
    let d = s.d();
    let p = compute_pipeline(d, STORAGE_RW);
    let max = d.limits().max_bind_groups;
    // Past the pipeline's groups but within the limit: an empty layout.
    s.step("within the limit", || p.get_bind_group_layout(max - 1));
    s.step("past the limit", || p.get_bind_group_layout(max));
}

// ---------------------------------------------------------------------------
// Copies

fn copy_buffer_past_the_source_end(s: &mut S) {
    let d = s.d();
    let a = buf(d, 64, BU::COPY_SRC);
    let b = buf(d, 256, BU::COPY_DST);
    record(s, |e| e.copy_buffer_to_buffer(&a, 32, &b, 0, 64));
}

fn copy_buffer_past_the_destination_end(s: &mut S) {
    let d = s.d();
    let a = buf(d, 256, BU::COPY_SRC);
    let b = buf(d, 64, BU::COPY_DST);
    record(s, |e| e.copy_buffer_to_buffer(&a, 0, &b, 16, 64));
}

fn copy_buffer_of_an_unaligned_size(s: &mut S) {
    let d = s.d();
    let a = buf(d, 64, BU::COPY_SRC);
    let b = buf(d, 64, BU::COPY_DST);
    record(s, |e| e.copy_buffer_to_buffer(&a, 0, &b, 0, 6));
}

fn copy_buffer_at_an_unaligned_offset(s: &mut S) {
    let d = s.d();
    let a = buf(d, 64, BU::COPY_SRC);
    let b = buf(d, 64, BU::COPY_DST);
    record(s, |e| e.copy_buffer_to_buffer(&a, 2, &b, 0, 8));
}

fn copy_buffer_to_itself(s: &mut S) {
    let d = s.d();
    let a = buf(d, 64, BU::COPY_SRC | BU::COPY_DST);
    record(s, |e| e.copy_buffer_to_buffer(&a, 0, &a, 32, 16));
}

fn copy_buffer_without_copy_src(s: &mut S) {
    let d = s.d();
    let a = buf(d, 64, BU::COPY_DST);
    let b = buf(d, 64, BU::COPY_DST);
    record(s, |e| e.copy_buffer_to_buffer(&a, 0, &b, 0, 16));
}

fn copy_buffer_without_copy_dst(s: &mut S) {
    let d = s.d();
    let a = buf(d, 64, BU::COPY_SRC);
    let b = buf(d, 64, BU::COPY_SRC);
    record(s, |e| e.copy_buffer_to_buffer(&a, 0, &b, 0, 16));
}

fn copy_to_texture_with_unaligned_bytes_per_row(s: &mut S) {
    let d = s.d();
    let b = buf(d, 4096, BU::COPY_SRC);
    let t = tex(d, 8, 8, TF::Rgba8Unorm, TU::COPY_DST);
    record(s, |e| {
        e.copy_buffer_to_texture(
            buffer_copy(&b, 0, Some(100)),
            image_copy(&t),
            extent(8, 8, 1),
        )
    });
}

fn copy_to_texture_past_its_extent(s: &mut S) {
    let d = s.d();
    let b = buf(d, 4096, BU::COPY_SRC);
    let t = tex(d, 8, 8, TF::Rgba8Unorm, TU::COPY_DST);
    record(s, |e| {
        e.copy_buffer_to_texture(
            buffer_copy(&b, 0, Some(256)),
            image_copy(&t),
            extent(8, 9, 1),
        )
    });
}

fn copy_to_texture_from_a_too_small_buffer(s: &mut S) {
    let d = s.d();
    let b = buf(d, 1024, BU::COPY_SRC);
    let t = tex(d, 8, 8, TF::Rgba8Unorm, TU::COPY_DST);
    record(s, |e| {
        e.copy_buffer_to_texture(
            buffer_copy(&b, 0, Some(256)),
            image_copy(&t),
            extent(8, 8, 1),
        )
    });
}

fn copy_to_texture_at_an_offset_not_of_the_block_size(s: &mut S) {
    let d = s.d();
    let b = buf(d, 4096, BU::COPY_SRC);
    let t = tex(d, 8, 8, TF::Rgba8Unorm, TU::COPY_DST);
    record(s, |e| {
        e.copy_buffer_to_texture(
            buffer_copy(&b, 2, Some(256)),
            image_copy(&t),
            extent(8, 8, 1),
        )
    });
}

fn copy_to_texture_without_copy_dst(s: &mut S) {
    let d = s.d();
    let b = buf(d, 4096, BU::COPY_SRC);
    let t = tex(d, 8, 8, TF::Rgba8Unorm, TU::TEXTURE_BINDING);
    record(s, |e| {
        e.copy_buffer_to_texture(
            buffer_copy(&b, 0, Some(256)),
            image_copy(&t),
            extent(8, 8, 1),
        )
    });
}

fn copy_from_texture_without_copy_src(s: &mut S) {
    let d = s.d();
    let b = buf(d, 4096, BU::COPY_DST);
    let t = tex(d, 8, 8, TF::Rgba8Unorm, TU::TEXTURE_BINDING);
    record(s, |e| {
        e.copy_texture_to_buffer(
            image_copy(&t),
            buffer_copy(&b, 0, Some(256)),
            extent(8, 8, 1),
        )
    });
}

fn copy_from_texture_mip_past_its_count(s: &mut S) {
    let d = s.d();
    let b = buf(d, 4096, BU::COPY_DST);
    let t = tex(d, 8, 8, TF::Rgba8Unorm, TU::COPY_SRC);
    record(s, |e| {
        e.copy_texture_to_buffer(
            wgpu::TexelCopyTextureInfo {
                mip_level: 1,
                ..image_copy(&t)
            },
            buffer_copy(&b, 0, Some(256)),
            extent(4, 4, 1),
        )
    });
}

fn copy_between_textures_of_different_formats(s: &mut S) {
    let d = s.d();
    let a = tex(d, 8, 8, TF::Rgba8Unorm, TU::COPY_SRC);
    let b = tex(d, 8, 8, TF::R32Float, TU::COPY_DST);
    record(s, |e| {
        e.copy_texture_to_texture(image_copy(&a), image_copy(&b), extent(8, 8, 1))
    });
}

fn copy_between_textures_past_the_destination(s: &mut S) {
    let d = s.d();
    let a = tex(d, 8, 8, TF::Rgba8Unorm, TU::COPY_SRC);
    let b = tex(d, 4, 4, TF::Rgba8Unorm, TU::COPY_DST);
    record(s, |e| {
        e.copy_texture_to_texture(image_copy(&a), image_copy(&b), extent(8, 8, 1))
    });
}

fn copy_between_multisampled_and_single_sampled(s: &mut S) {
    let d = s.d();
    let a = d.create_texture(&wgpu::TextureDescriptor {
        sample_count: 4,
        ..tex_desc(
            extent(4, 4, 1),
            TF::Rgba8Unorm,
            TU::RENDER_ATTACHMENT | TU::COPY_SRC,
        )
    });
    let b = tex(d, 4, 4, TF::Rgba8Unorm, TU::COPY_DST);
    record(s, |e| {
        e.copy_texture_to_texture(image_copy(&a), image_copy(&b), extent(4, 4, 1))
    });
}

fn copy_depth_stencil_with_aspect_all(s: &mut S) {
    let d = s.d();
    let b = buf(d, 4096, BU::COPY_DST);
    let t = tex(d, 4, 4, TF::Depth24PlusStencil8, TU::COPY_SRC);
    record(s, |e| {
        e.copy_texture_to_buffer(
            image_copy(&t),
            buffer_copy(&b, 0, Some(256)),
            extent(4, 4, 1),
        )
    });
}

fn copy_multiple_rows_without_bytes_per_row(s: &mut S) {
    let d = s.d();
    let b = buf(d, 4096, BU::COPY_DST);
    let t = tex(d, 8, 8, TF::Rgba8Unorm, TU::COPY_SRC);
    record(s, |e| {
        e.copy_texture_to_buffer(image_copy(&t), buffer_copy(&b, 0, None), extent(8, 8, 1))
    });
}

fn clear_buffer_at_an_unaligned_offset(s: &mut S) {
    let d = s.d();
    let b = buf(d, 64, BU::COPY_DST);
    record(s, |e| e.clear_buffer(&b, 2, Some(8)));
}

fn clear_buffer_past_its_end(s: &mut S) {
    let d = s.d();
    let b = buf(d, 64, BU::COPY_DST);
    record(s, |e| e.clear_buffer(&b, 32, Some(64)));
}

fn clear_buffer_without_copy_dst(s: &mut S) {
    let d = s.d();
    let b = buf(d, 64, BU::STORAGE);
    record(s, |e| e.clear_buffer(&b, 0, None));
}

// ---------------------------------------------------------------------------
// Compute passes

fn dispatch_without_a_pipeline(s: &mut S) {
    record(s, |e| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.dispatch_workgroups(1, 1, 1);
    });
}

fn dispatch_without_its_bind_group(s: &mut S) {
    let d = s.d();
    let pipeline = compute_pipeline(d, STORAGE_RW);
    record(s, |e| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.set_pipeline(&pipeline);
        p.dispatch_workgroups(1, 1, 1);
    });
}

fn dispatch_past_max_workgroups_per_dimension(s: &mut S) {
    let d = s.d();
    let pipeline = compute_pipeline(d, NO_BINDINGS);
    record(s, |e| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.set_pipeline(&pipeline);
        p.dispatch_workgroups(65536, 1, 1);
    });
}

fn dispatch_indirect_without_indirect_usage(s: &mut S) {
    let d = s.d();
    let pipeline = compute_pipeline(d, NO_BINDINGS);
    let args = buf(d, 64, BU::STORAGE);
    record(s, |e| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.set_pipeline(&pipeline);
        p.dispatch_workgroups_indirect(&args, 0);
    });
}

fn dispatch_indirect_past_the_buffer(s: &mut S) {
    let d = s.d();
    let pipeline = compute_pipeline(d, NO_BINDINGS);
    let args = buf(d, 16, BU::INDIRECT);
    record(s, |e| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.set_pipeline(&pipeline);
        p.dispatch_workgroups_indirect(&args, 8);
    });
}

fn dispatch_indirect_at_an_unaligned_offset(s: &mut S) {
    let d = s.d();
    let pipeline = compute_pipeline(d, NO_BINDINGS);
    let args = buf(d, 64, BU::INDIRECT);
    record(s, |e| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.set_pipeline(&pipeline);
        p.dispatch_workgroups_indirect(&args, 2);
    });
}

fn storage_read_write_and_uniform_in_one_dispatch(s: &mut S) {
    let d = s.d();
    let l = layout(d, &[buffer_entry(0, STORAGE), buffer_entry(1, UNIFORM)]);
    let pl = pipeline_layout(d, &[&l], 0);
    let m = module(
        d,
        "
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@group(0) @binding(1) var<uniform> u: vec4<u32>;
@compute @workgroup_size(1) fn main() { data[0] = u.x; }
",
    );
    let pipeline = d.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: Some(&pl),
        module: &m,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let b = buf(d, 512, BU::STORAGE | BU::UNIFORM);
    let g = group(
        d,
        &l,
        &[binding(&b, 0, Some(64)), binding(&b, 256, Some(16))],
    );
    record(s, |e| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.set_pipeline(&pipeline);
        p.set_bind_group(0, &g, &[]);
        p.dispatch_workgroups(1, 1, 1);
    });
}

fn storage_written_and_indirect_in_one_dispatch(s: &mut S) {
    let d = s.d();
    let pipeline = compute_pipeline(d, STORAGE_RW);
    let b = buf(d, 256, BU::STORAGE | BU::INDIRECT);
    let g = group(
        d,
        &pipeline.get_bind_group_layout(0),
        &[b.as_entire_binding()],
    );
    record(s, |e| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.set_pipeline(&pipeline);
        p.set_bind_group(0, &g, &[]);
        p.dispatch_workgroups_indirect(&b, 0);
    });
}

fn invalid_compute_pipeline_set(s: &mut S) {
    let d = s.d();
    let Some(pipeline) = s.step("create invalid pipeline", || {
        compute_pipeline(d, "@compute @workgroup_size(1024, 2, 1) fn main() {}")
    }) else {
        return;
    };
    record(s, |e| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.set_pipeline(&pipeline);
        p.dispatch_workgroups(1, 1, 1);
    });
}

fn dispatch_with_a_binding_smaller_than_the_shader_reads(s: &mut S) {
    let d = s.d();
    // No min_binding_size in the layout: checked at the dispatch.
    let l = layout(d, &[buffer_entry(0, STORAGE)]);
    let pl = pipeline_layout(d, &[&l], 0);
    let m = module(
        d,
        "@group(0) @binding(0) var<storage, read_write> a: array<u32, 8>;
         @compute @workgroup_size(1) fn main() { a[7] = 1u; }",
    );
    let pipeline = d.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: Some(&pl),
        module: &m,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let b = buf(d, 16, BU::STORAGE);
    let g = group(d, &l, &[b.as_entire_binding()]);
    record(s, |e| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.set_pipeline(&pipeline);
        p.set_bind_group(0, &g, &[]);
        p.dispatch_workgroups(1, 1, 1);
    });
}

fn unbalanced_debug_group_in_a_compute_pass(s: &mut S) {
    record(s, |e| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.pop_debug_group();
    });
}

// ---------------------------------------------------------------------------
// Render passes

fn rgba8_pipeline_in_a_bgra8_pass(s: &mut S) {
    let d = s.d();
    let pipeline = render_pipeline(d, RP::default());
    let v = target(d, TF::Bgra8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_pipeline(&pipeline);
        p.draw(0..3, 0..1);
    });
}

fn pipeline_with_a_trailing_empty_target(s: &mut S) {
    let d = s.d();
    let pipeline = render_pipeline(
        d,
        RP {
            targets: &[Some(TF::Rgba8Unorm.into()), None],
            ..Default::default()
        },
    );
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_pipeline(&pipeline);
        p.draw(0..3, 0..1);
    });
}

fn pass_with_a_trailing_empty_attachment(s: &mut S) {
    let d = s.d();
    let pipeline = render_pipeline(d, RP::default());
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = e.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[color(&v), None],
            ..Default::default()
        });
        p.set_pipeline(&pipeline);
        p.draw(0..3, 0..1);
    });
}

fn draw_without_a_pipeline(s: &mut S) {
    let d = s.d();
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.draw(0..3, 0..1);
    });
}

fn draw_with_a_vertex_slot_left_unbound(s: &mut S) {
    let d = s.d();
    let pipeline = render_pipeline(
        d,
        RP {
            source: DRAW_VERTEX,
            buffers: &[Some(vec2_layout())],
            ..Default::default()
        },
    );
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_pipeline(&pipeline);
        p.draw(0..3, 0..1);
    });
}

fn draw_past_the_vertex_buffer(s: &mut S) {
    let d = s.d();
    let pipeline = render_pipeline(
        d,
        RP {
            source: DRAW_VERTEX,
            buffers: &[Some(vec2_layout())],
            ..Default::default()
        },
    );
    let vertices = buf(d, 16, BU::VERTEX);
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_pipeline(&pipeline);
        p.set_vertex_buffer(0, vertices.slice(..));
        p.draw(0..3, 0..1);
    });
}

fn draw_indexed_without_an_index_buffer(s: &mut S) {
    let d = s.d();
    let pipeline = render_pipeline(d, RP::default());
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_pipeline(&pipeline);
        p.draw_indexed(0..3, 0, 0..1);
    });
}

fn draw_indexed_past_the_index_buffer(s: &mut S) {
    let d = s.d();
    let pipeline = render_pipeline(d, RP::default());
    let indices = buf(d, 8, BU::INDEX);
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_pipeline(&pipeline);
        p.set_index_buffer(indices.slice(..), wgpu::IndexFormat::Uint32);
        p.draw_indexed(0..3, 0, 0..1);
    });
}

fn strip_index_format_other_than_the_index_buffer(s: &mut S) {
    let d = s.d();
    let m = module(d, DRAW);
    let pipeline = d.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("strip"),
        layout: None,
        vertex: wgpu::VertexState {
            module: &m,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers: &[],
        },
        primitive: wgpu::PrimitiveState {
            topology: wgpu::PrimitiveTopology::TriangleStrip,
            strip_index_format: Some(wgpu::IndexFormat::Uint16),
            ..Default::default()
        },
        depth_stencil: None,
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module: &m,
            entry_point: Some("fs"),
            compilation_options: Default::default(),
            targets: &[Some(TF::Rgba8Unorm.into())],
        }),
        multiview_mask: None,
        cache: None,
    });
    let indices = buf(d, 64, BU::INDEX);
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_pipeline(&pipeline);
        p.set_index_buffer(indices.slice(..), wgpu::IndexFormat::Uint32);
        p.draw_indexed(0..3, 0, 0..1);
    });
}

fn draw_indirect_without_indirect_usage(s: &mut S) {
    let d = s.d();
    let pipeline = render_pipeline(d, RP::default());
    let args = buf(d, 64, BU::STORAGE);
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_pipeline(&pipeline);
        p.draw_indirect(&args, 0);
    });
}

fn draw_indexed_indirect_past_the_buffer(s: &mut S) {
    let d = s.d();
    let pipeline = render_pipeline(d, RP::default());
    let args = buf(d, 16, BU::INDIRECT);
    let indices = buf(d, 64, BU::INDEX);
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_pipeline(&pipeline);
        p.set_index_buffer(indices.slice(..), wgpu::IndexFormat::Uint32);
        p.draw_indexed_indirect(&args, 0);
    });
}

fn vertex_buffer_without_vertex_usage(s: &mut S) {
    let d = s.d();
    let b = buf(d, 64, BU::STORAGE);
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_vertex_buffer(0, b.slice(..));
    });
}

fn vertex_buffer_at_an_unaligned_offset(s: &mut S) {
    let d = s.d();
    let b = buf(d, 64, BU::VERTEX);
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_vertex_buffer(0, b.slice(2..));
    });
}

fn vertex_buffer_slot_past_the_limit(s: &mut S) {
    let d = s.d();
    let b = buf(d, 64, BU::VERTEX);
    let v = target(d, TF::Rgba8Unorm);
    let slot = d.limits().max_vertex_buffers;
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_vertex_buffer(slot, b.slice(..));
    });
}

fn index_buffer_without_index_usage(s: &mut S) {
    let d = s.d();
    let b = buf(d, 64, BU::VERTEX);
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_index_buffer(b.slice(..), wgpu::IndexFormat::Uint16);
    });
}

fn storage_written_and_vertex_buffer_in_one_pass(s: &mut S) {
    let d = s.d();
    let l = layout(d, &[buffer_entry(0, STORAGE)]);
    let pl = pipeline_layout(d, &[&l], 0);
    let pipeline = render_pipeline(
        d,
        RP {
            source: DRAW_STORAGE,
            layout: Some(&pl),
            buffers: &[Some(vec2_layout())],
            ..Default::default()
        },
    );
    let b = buf(d, 256, BU::STORAGE | BU::VERTEX);
    let g = group(d, &l, &[b.as_entire_binding()]);
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_pipeline(&pipeline);
        p.set_bind_group(0, &g, &[]);
        p.set_vertex_buffer(0, b.slice(..));
        p.draw(0..3, 0..1);
    });
}

fn attachments_of_different_sample_counts(s: &mut S) {
    let d = s.d();
    let a = target(d, TF::Rgba8Unorm);
    let ms = d.create_texture(&wgpu::TextureDescriptor {
        sample_count: 4,
        ..tex_desc(extent(4, 4, 1), TF::Rgba8Unorm, TU::RENDER_ATTACHMENT)
    });
    let b = view(&ms);
    record(s, |e| {
        let _p = e.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[color(&a), color(&b)],
            ..Default::default()
        });
    });
}

fn color_and_depth_of_different_sizes(s: &mut S) {
    let d = s.d();
    let a = target(d, TF::Rgba8Unorm);
    let depth = view(&tex(d, 8, 8, TF::Depth32Float, TU::RENDER_ATTACHMENT));
    record(s, |e| {
        let _p = e.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[color(&a)],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &depth,
                depth_ops: Some(Default::default()),
                stencil_ops: None,
            }),
            ..Default::default()
        });
    });
}

fn color_texture_as_the_depth_attachment(s: &mut S) {
    let d = s.d();
    let depth = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let _p = e.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &depth,
                depth_ops: Some(Default::default()),
                stencil_ops: None,
            }),
            ..Default::default()
        });
    });
}

fn depth_texture_as_a_color_attachment(s: &mut S) {
    let d = s.d();
    let depth = view(&tex(d, 4, 4, TF::Depth32Float, TU::RENDER_ATTACHMENT));
    record(s, |e| {
        let _p = pass(e, &depth);
    });
}

fn attachment_without_render_attachment_usage(s: &mut S) {
    let d = s.d();
    let v = view(&tex(d, 4, 4, TF::Rgba8Unorm, TU::TEXTURE_BINDING));
    record(s, |e| {
        let _p = pass(e, &v);
    });
}

fn attachment_view_of_two_mips(s: &mut S) {
    let d = s.d();
    let t = d.create_texture(&wgpu::TextureDescriptor {
        mip_level_count: 2,
        ..tex_desc(extent(4, 4, 1), TF::Rgba8Unorm, TU::RENDER_ATTACHMENT)
    });
    let v = view(&t);
    record(s, |e| {
        let _p = pass(e, &v);
    });
}

fn pass_without_attachments(s: &mut S) {
    record(s, |e| {
        let _p = e.begin_render_pass(&wgpu::RenderPassDescriptor::default());
    });
}

fn resolve_target_of_a_single_sampled_attachment(s: &mut S) {
    let d = s.d();
    let a = target(d, TF::Rgba8Unorm);
    let r = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let _p = e.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &a,
                depth_slice: None,
                resolve_target: Some(&r),
                ops: Default::default(),
            })],
            ..Default::default()
        });
    });
}

fn depth_pipeline_in_a_pass_without_depth(s: &mut S) {
    let d = s.d();
    let pipeline = render_pipeline(
        d,
        RP {
            depth: Some(depth_state(TF::Depth32Float, true)),
            ..Default::default()
        },
    );
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_pipeline(&pipeline);
        p.draw(0..3, 0..1);
    });
}

fn depth_writing_pipeline_in_a_read_only_depth_pass(s: &mut S) {
    let d = s.d();
    let pipeline = render_pipeline(
        d,
        RP {
            depth: Some(depth_state(TF::Depth32Float, true)),
            ..Default::default()
        },
    );
    let v = target(d, TF::Rgba8Unorm);
    let depth = view(&tex(d, 4, 4, TF::Depth32Float, TU::RENDER_ATTACHMENT));
    record(s, |e| {
        let mut p = e.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[color(&v)],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &depth,
                depth_ops: None,
                stencil_ops: None,
            }),
            ..Default::default()
        });
        p.set_pipeline(&pipeline);
        p.draw(0..3, 0..1);
    });
}

fn pipeline_of_another_sample_count(s: &mut S) {
    let d = s.d();
    let pipeline = render_pipeline(
        d,
        RP {
            samples: 4,
            ..Default::default()
        },
    );
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_pipeline(&pipeline);
        p.draw(0..3, 0..1);
    });
}

fn scissor_rect_past_the_attachment(s: &mut S) {
    let d = s.d();
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_scissor_rect(0, 0, 8, 8);
    });
}

fn viewport_of_negative_width(s: &mut S) {
    let d = s.d();
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_viewport(0.0, 0.0, -1.0, 4.0, 0.0, 1.0);
    });
}

fn viewport_depth_range_past_one(s: &mut S) {
    let d = s.d();
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_viewport(0.0, 0.0, 4.0, 4.0, 0.0, 2.0);
    });
}

fn occlusion_query_in_a_pass_without_a_set(s: &mut S) {
    let d = s.d();
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.begin_occlusion_query(0);
        p.end_occlusion_query();
    });
}

fn multi_draw_indirect_count_without_the_feature(s: &mut S) {
    let d = s.d();
    if d.features()
        .contains(wgpu::Features::MULTI_DRAW_INDIRECT_COUNT)
    {
        s.skipped = Some("has MULTI_DRAW_INDIRECT_COUNT".into());
        return;
    }
    let pipeline = render_pipeline(d, RP::default());
    let args = buf(d, 64, BU::INDIRECT);
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_pipeline(&pipeline);
        p.multi_draw_indirect_count(&args, 0, &args, 48, 2);
    });
}

fn too_many_color_attachments(s: &mut S) {
    let d = s.d();
    let max = d.limits().max_color_attachments as usize;
    let views: Vec<_> = (0..=max).map(|_| target(d, TF::R8Unorm)).collect();
    record(s, |e| {
        let colors: Vec<_> = views.iter().map(color).collect();
        let _p = e.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &colors,
            ..Default::default()
        });
    });
}

fn draw_after_execute_bundles_reset_the_pipeline(s: &mut S) {
    let d = s.d();
    let pipeline = render_pipeline(d, RP::default());
    let bundle = bundle_encoder(d, TF::Rgba8Unorm).finish(&Default::default());
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_pipeline(&pipeline);
        p.execute_bundles([&bundle]);
        p.draw(0..3, 0..1);
    });
}

fn draw_past_the_instance_buffer(s: &mut S) {
    let d = s.d();
    let pipeline = render_pipeline(
        d,
        RP {
            source: DRAW_VERTEX,
            buffers: &[Some(wgpu::VertexBufferLayout {
                step_mode: wgpu::VertexStepMode::Instance,
                ..vec2_layout()
            })],
            ..Default::default()
        },
    );
    let instances = buf(d, 16, BU::VERTEX);
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_pipeline(&pipeline);
        p.set_vertex_buffer(0, instances.slice(..));
        p.draw(0..3, 0..3);
    });
}

fn index_buffer_at_an_unaligned_offset(s: &mut S) {
    let d = s.d();
    let b = buf(d, 64, BU::INDEX);
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_index_buffer(b.slice(2..), wgpu::IndexFormat::Uint32);
    });
}

fn draw_indexed_indirect_without_an_index_buffer(s: &mut S) {
    let d = s.d();
    let pipeline = render_pipeline(d, RP::default());
    let args = buf(d, 64, BU::INDIRECT);
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_pipeline(&pipeline);
        p.draw_indexed_indirect(&args, 0);
    });
}

fn multi_draw_indirect_past_the_buffer(s: &mut S) {
    let d = s.d();
    let pipeline = render_pipeline(d, RP::default());
    let args = buf(d, 32, BU::INDIRECT);
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_pipeline(&pipeline);
        p.multi_draw_indirect(&args, 0, 3);
    });
}

fn resolve_target_of_another_format(s: &mut S) {
    let d = s.d();
    let ms = d.create_texture(&wgpu::TextureDescriptor {
        sample_count: 4,
        ..tex_desc(extent(4, 4, 1), TF::Rgba8Unorm, TU::RENDER_ATTACHMENT)
    });
    let a = view(&ms);
    let r = target(d, TF::Bgra8Unorm);
    record(s, |e| {
        let _p = e.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &a,
                depth_slice: None,
                resolve_target: Some(&r),
                ops: Default::default(),
            })],
            ..Default::default()
        });
    });
}

fn resolve_target_of_another_size(s: &mut S) {
    let d = s.d();
    let ms = d.create_texture(&wgpu::TextureDescriptor {
        sample_count: 4,
        ..tex_desc(extent(4, 4, 1), TF::Rgba8Unorm, TU::RENDER_ATTACHMENT)
    });
    let a = view(&ms);
    let r = view(&tex(d, 8, 8, TF::Rgba8Unorm, TU::RENDER_ATTACHMENT));
    record(s, |e| {
        let _p = e.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &a,
                depth_slice: None,
                resolve_target: Some(&r),
                ops: Default::default(),
            })],
            ..Default::default()
        });
    });
}

fn one_view_as_two_color_attachments(s: &mut S) {
    let d = s.d();
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let _p = e.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[color(&v), color(&v)],
            ..Default::default()
        });
    });
}

fn attachment_sampled_in_the_same_pass(s: &mut S) {
    let d = s.d();
    let t = tex(
        d,
        4,
        4,
        TF::Rgba8Unorm,
        TU::RENDER_ATTACHMENT | TU::TEXTURE_BINDING,
    );
    let v = view(&t);
    let l = layout(
        d,
        &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::FRAGMENT,
            ty: wgpu::BindingType::Texture {
                sample_type: wgpu::TextureSampleType::Float { filterable: true },
                view_dimension: wgpu::TextureViewDimension::D2,
                multisampled: false,
            },
            count: None,
        }],
    );
    let g = group(d, &l, &[wgpu::BindingResource::TextureView(&v)]);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_bind_group(0, &g, &[]);
    });
}

fn depth_slice_on_a_2d_attachment(s: &mut S) {
    let d = s.d();
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let _p = e.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &v,
                depth_slice: Some(0),
                resolve_target: None,
                ops: Default::default(),
            })],
            ..Default::default()
        });
    });
}

fn a_3d_attachment_without_a_depth_slice(s: &mut S) {
    let d = s.d();
    let t = d.create_texture(&wgpu::TextureDescriptor {
        dimension: wgpu::TextureDimension::D3,
        ..tex_desc(extent(4, 4, 4), TF::Rgba8Unorm, TU::RENDER_ATTACHMENT)
    });
    let v = view(&t);
    record(s, |e| {
        let _p = pass(e, &v);
    });
}

fn stencil_ops_on_a_depth_only_attachment(s: &mut S) {
    let d = s.d();
    let depth = view(&tex(d, 4, 4, TF::Depth32Float, TU::RENDER_ATTACHMENT));
    record(s, |e| {
        let _p = e.begin_render_pass(&wgpu::RenderPassDescriptor {
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &depth,
                depth_ops: Some(Default::default()),
                stencil_ops: Some(Default::default()),
            }),
            ..Default::default()
        });
    });
}

fn timestamp_set_as_the_occlusion_set(s: &mut S) {
    if !s.needs(wgpu::Features::TIMESTAMP_QUERY) {
        return;
    }
    let d = s.d();
    let set = d.create_query_set(&wgpu::QuerySetDescriptor {
        label: None,
        ty: wgpu::QueryType::Timestamp,
        count: 2,
    });
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let _p = e.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[color(&v)],
            occlusion_query_set: Some(&set),
            ..Default::default()
        });
    });
}

// ---------------------------------------------------------------------------
// Render bundles

fn bundle_encoder(d: &wgpu::Device, format: TF) -> wgpu::RenderBundleEncoder<'_> {
    d.create_render_bundle_encoder(&wgpu::RenderBundleEncoderDescriptor {
        label: Some("case bundle"),
        color_formats: &[Some(format)],
        depth_stencil: None,
        sample_count: 1,
        multiview: None,
    })
}

fn bundle_draw_without_a_pipeline(s: &mut S) {
    let d = s.d();
    let Some(b) = s.step("record", || {
        let mut b = bundle_encoder(d, TF::Rgba8Unorm);
        b.draw(0..3, 0..1);
        b
    }) else {
        return;
    };
    s.step("finish", || b.finish(&Default::default()));
}

fn bundle_pipeline_of_another_format(s: &mut S) {
    let d = s.d();
    let pipeline = render_pipeline(d, RP::default());
    let Some(b) = s.step("record", || {
        let mut b = bundle_encoder(d, TF::Bgra8Unorm);
        b.set_pipeline(&pipeline);
        b.draw(0..3, 0..1);
        b
    }) else {
        return;
    };
    s.step("finish", || b.finish(&Default::default()));
}

fn bundle_of_another_format_executed(s: &mut S) {
    let d = s.d();
    let bundle = bundle_encoder(d, TF::Bgra8Unorm).finish(&Default::default());
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.execute_bundles([&bundle]);
    });
}

fn bundle_writing_depth_in_a_read_only_depth_pass(s: &mut S) {
    let d = s.d();
    let bundle = d
        .create_render_bundle_encoder(&wgpu::RenderBundleEncoderDescriptor {
            label: None,
            color_formats: &[],
            depth_stencil: Some(wgpu::RenderBundleDepthStencil {
                format: TF::Depth32Float,
                depth_read_only: false,
                stencil_read_only: true,
            }),
            sample_count: 1,
            multiview: None,
        })
        .finish(&Default::default());
    let depth = view(&tex(d, 4, 4, TF::Depth32Float, TU::RENDER_ATTACHMENT));
    record(s, |e| {
        let mut p = e.begin_render_pass(&wgpu::RenderPassDescriptor {
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &depth,
                depth_ops: None,
                stencil_ops: None,
            }),
            ..Default::default()
        });
        p.execute_bundles([&bundle]);
    });
}

fn bundle_with_a_bind_group_past_the_limit(s: &mut S) {
    let d = s.d();
    let l = layout(d, &[buffer_entry(0, UNIFORM)]);
    let b = buf(d, 256, BU::UNIFORM);
    let g = group(d, &l, &[b.as_entire_binding()]);
    let Some(enc) = s.step("record", || {
        let mut enc = bundle_encoder(d, TF::Rgba8Unorm);
        enc.set_bind_group(7, &g, &[]);
        enc
    }) else {
        return;
    };
    s.step("finish", || enc.finish(&Default::default()));
}

fn bundle_with_a_depth_format_as_color(s: &mut S) {
    let d = s.d();
    let Some(enc) = s.step("create encoder", || {
        d.create_render_bundle_encoder(&wgpu::RenderBundleEncoderDescriptor {
            label: None,
            color_formats: &[Some(TF::Depth32Float)],
            depth_stencil: None,
            sample_count: 1,
            multiview: None,
        })
    }) else {
        return;
    };
    s.step("finish", || enc.finish(&Default::default()));
}

fn bundle_with_no_attachments(s: &mut S) {
    let d = s.d();
    let Some(enc) = s.step("create encoder", || {
        d.create_render_bundle_encoder(&wgpu::RenderBundleEncoderDescriptor {
            label: None,
            color_formats: &[],
            depth_stencil: None,
            sample_count: 1,
            multiview: None,
        })
    }) else {
        return;
    };
    s.step("finish", || enc.finish(&Default::default()));
}

fn bundle_draw_indexed_without_an_index_buffer(s: &mut S) {
    let d = s.d();
    let pipeline = render_pipeline(d, RP::default());
    let Some(b) = s.step("record", || {
        let mut b = bundle_encoder(d, TF::Rgba8Unorm);
        b.set_pipeline(&pipeline);
        b.draw_indexed(0..3, 0, 0..1);
        b
    }) else {
        return;
    };
    s.step("finish", || b.finish(&Default::default()));
}

// ---------------------------------------------------------------------------
// Queries

fn occlusion_set(d: &wgpu::Device, count: u32) -> wgpu::QuerySet {
    d.create_query_set(&wgpu::QuerySetDescriptor {
        label: Some("case queries"),
        ty: wgpu::QueryType::Occlusion,
        count,
    })
}

fn query_set_over_the_maximum_count(s: &mut S) {
    let d = s.d();
    s.step("create", || {
        occlusion_set(d, wgpu::QUERY_SET_MAX_QUERIES + 1)
    });
}

fn timestamp_set_without_the_feature(s: &mut S) {
    let d = s.d();
    if d.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
        s.skipped = Some("has TIMESTAMP_QUERY".into());
        return;
    }
    s.step("create", || {
        d.create_query_set(&wgpu::QuerySetDescriptor {
            label: None,
            ty: wgpu::QueryType::Timestamp,
            count: 2,
        })
    });
}

fn resolve_queries_past_the_set(s: &mut S) {
    let d = s.d();
    let set = occlusion_set(d, 2);
    let dst = buf(d, 256, BU::QUERY_RESOLVE);
    record(s, |e| e.resolve_query_set(&set, 0..3, &dst, 0));
}

fn resolve_queries_to_a_misaligned_offset(s: &mut S) {
    let d = s.d();
    let set = occlusion_set(d, 2);
    let dst = buf(d, 1024, BU::QUERY_RESOLVE);
    record(s, |e| e.resolve_query_set(&set, 0..2, &dst, 8));
}

fn resolve_queries_without_query_resolve_usage(s: &mut S) {
    let d = s.d();
    let set = occlusion_set(d, 2);
    let dst = buf(d, 256, BU::COPY_DST);
    record(s, |e| e.resolve_query_set(&set, 0..2, &dst, 0));
}

fn resolve_queries_past_the_buffer(s: &mut S) {
    let d = s.d();
    let set = occlusion_set(d, 4);
    let dst = buf(d, 16, BU::QUERY_RESOLVE);
    record(s, |e| e.resolve_query_set(&set, 0..4, &dst, 0));
}

fn occlusion_query_index_past_the_set(s: &mut S) {
    let d = s.d();
    let set = occlusion_set(d, 2);
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = e.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[color(&v)],
            occlusion_query_set: Some(&set),
            ..Default::default()
        });
        p.begin_occlusion_query(2);
        p.end_occlusion_query();
    });
}

fn occlusion_query_begun_twice(s: &mut S) {
    let d = s.d();
    let set = occlusion_set(d, 2);
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = e.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[color(&v)],
            occlusion_query_set: Some(&set),
            ..Default::default()
        });
        p.begin_occlusion_query(0);
        p.begin_occlusion_query(1);
        p.end_occlusion_query();
    });
}

fn occlusion_query_ended_without_begin(s: &mut S) {
    let d = s.d();
    let set = occlusion_set(d, 2);
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = e.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[color(&v)],
            occlusion_query_set: Some(&set),
            ..Default::default()
        });
        p.end_occlusion_query();
    });
}

fn timestamp_writes_into_an_occlusion_set(s: &mut S) {
    if !s.needs(wgpu::Features::TIMESTAMP_QUERY) {
        return;
    }
    let d = s.d();
    let set = occlusion_set(d, 2);
    record(s, |e| {
        let _p = e.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: None,
            timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                query_set: &set,
                beginning_of_pass_write_index: Some(0),
                end_of_pass_write_index: None,
            }),
        });
    });
}

fn timestamp_write_index_past_the_set(s: &mut S) {
    if !s.needs(wgpu::Features::TIMESTAMP_QUERY) {
        return;
    }
    let d = s.d();
    let set = d.create_query_set(&wgpu::QuerySetDescriptor {
        label: None,
        ty: wgpu::QueryType::Timestamp,
        count: 2,
    });
    record(s, |e| {
        let _p = e.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: None,
            timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                query_set: &set,
                beginning_of_pass_write_index: Some(2),
                end_of_pass_write_index: None,
            }),
        });
    });
}

fn same_timestamp_index_at_both_ends(s: &mut S) {
    if !s.needs(wgpu::Features::TIMESTAMP_QUERY) {
        return;
    }
    let d = s.d();
    let set = d.create_query_set(&wgpu::QuerySetDescriptor {
        label: None,
        ty: wgpu::QueryType::Timestamp,
        count: 2,
    });
    record(s, |e| {
        let _p = e.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: None,
            timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                query_set: &set,
                beginning_of_pass_write_index: Some(1),
                end_of_pass_write_index: Some(1),
            }),
        });
    });
}

// ---------------------------------------------------------------------------
// Queue writes

fn write_texture_past_its_extent(s: &mut S) {
    let d = s.d();
    let q = s.q();
    let t = tex(d, 4, 4, TF::Rgba8Unorm, TU::COPY_DST);
    s.step("write_texture", || {
        q.write_texture(
            image_copy(&t),
            &[0; 256],
            data_layout(0, Some(16)),
            extent(4, 8, 1),
        )
    });
}

fn write_texture_from_too_little_data(s: &mut S) {
    let d = s.d();
    let q = s.q();
    let t = tex(d, 4, 4, TF::Rgba8Unorm, TU::COPY_DST);
    s.step("write_texture", || {
        q.write_texture(
            image_copy(&t),
            &[0; 32],
            data_layout(0, Some(16)),
            extent(4, 4, 1),
        )
    });
}

fn write_texture_without_copy_dst(s: &mut S) {
    let d = s.d();
    let q = s.q();
    let t = tex(d, 4, 4, TF::Rgba8Unorm, TU::TEXTURE_BINDING);
    s.step("write_texture", || {
        q.write_texture(
            image_copy(&t),
            &[0; 64],
            data_layout(0, Some(16)),
            extent(4, 4, 1),
        )
    });
}

fn write_texture_to_a_mip_past_its_count(s: &mut S) {
    let d = s.d();
    let q = s.q();
    let t = tex(d, 4, 4, TF::Rgba8Unorm, TU::COPY_DST);
    s.step("write_texture", || {
        q.write_texture(
            wgpu::TexelCopyTextureInfo {
                mip_level: 1,
                ..image_copy(&t)
            },
            &[0; 64],
            data_layout(0, Some(16)),
            extent(2, 2, 1),
        )
    });
}

fn write_texture_to_a_depth_texture(s: &mut S) {
    let d = s.d();
    let q = s.q();
    let t = tex(
        d,
        4,
        4,
        TF::Depth24Plus,
        TU::COPY_DST | TU::RENDER_ATTACHMENT,
    );
    s.step("write_texture", || {
        q.write_texture(
            image_copy(&t),
            &[0; 64],
            data_layout(0, Some(16)),
            extent(4, 4, 1),
        )
    });
}

fn write_texture_of_a_partial_bc_block(s: &mut S) {
    if !s.needs(wgpu::Features::TEXTURE_COMPRESSION_BC) {
        return;
    }
    let d = s.d();
    let q = s.q();
    let t = tex(d, 8, 8, TF::Bc7RgbaUnorm, TU::COPY_DST);
    s.step("write_texture", || {
        q.write_texture(
            image_copy(&t),
            &[0; 256],
            data_layout(0, Some(32)),
            extent(6, 8, 1),
        )
    });
}

fn write_buffer_past_its_end(s: &mut S) {
    let d = s.d();
    let q = s.q();
    let b = buf(d, 64, BU::COPY_DST);
    s.step("write_buffer", || q.write_buffer(&b, 32, &[0; 64]));
}

fn write_buffer_at_an_unaligned_offset(s: &mut S) {
    let d = s.d();
    let q = s.q();
    let b = buf(d, 64, BU::COPY_DST);
    s.step("write_buffer", || q.write_buffer(&b, 2, &[0; 8]));
}

fn write_buffer_of_an_unaligned_size(s: &mut S) {
    let d = s.d();
    let q = s.q();
    let b = buf(d, 64, BU::COPY_DST);
    s.step("write_buffer", || q.write_buffer(&b, 0, &[0; 6]));
}

fn write_buffer_without_copy_dst(s: &mut S) {
    let d = s.d();
    let q = s.q();
    let b = buf(d, 64, BU::UNIFORM);
    s.step("write_buffer", || q.write_buffer(&b, 0, &[0; 8]));
}

fn write_buffer_with_past_its_end(s: &mut S) {
    let d = s.d();
    let q = s.q();
    let b = buf(d, 64, BU::COPY_DST);
    s.step("write_buffer_with", || {
        drop(q.write_buffer_with(&b, 32, NonZeroU64::new(64).expect("64")));
    });
}

// ---------------------------------------------------------------------------
// Mapping

fn map_callback(s: &mut S, name: &'static str, result: &Arc<AtomicU8>) {
    let r = result.clone();
    s.fallible(name, move || match r.load(Ordering::Acquire) {
        1 => Ok(()),
        2 => Err("the callback got BufferAsyncError"),
        _ => Err("the callback has not fired"),
    });
}

fn map(s: &mut S, name: &'static str, b: &wgpu::Buffer, mode: wgpu::MapMode) -> Arc<AtomicU8> {
    let result = Arc::new(AtomicU8::new(0));
    let r = result.clone();
    s.step(name, || {
        b.slice(..).map_async(mode, move |res| {
            r.store(if res.is_ok() { 1 } else { 2 }, Ordering::Release)
        })
    });
    result
}

fn map_read_without_map_read_usage(s: &mut S) {
    let d = s.d();
    let b = buf(d, 64, BU::COPY_DST | BU::STORAGE);
    let r = map(s, "map_async", &b, wgpu::MapMode::Read);
    s.wait();
    map_callback(s, "callback", &r);
}

fn map_write_of_a_map_read_buffer(s: &mut S) {
    let d = s.d();
    let b = buf(d, 64, BU::COPY_DST | BU::MAP_READ);
    let r = map(s, "map_async", &b, wgpu::MapMode::Write);
    s.wait();
    map_callback(s, "callback", &r);
}

fn map_twice(s: &mut S) {
    let d = s.d();
    let b = buf(d, 64, BU::COPY_DST | BU::MAP_READ);
    let first = map(s, "map_async", &b, wgpu::MapMode::Read);
    let second = map(s, "map_async again", &b, wgpu::MapMode::Read);
    s.wait();
    map_callback(s, "first callback", &first);
    map_callback(s, "second callback", &second);
    s.step("unmap", || b.unmap());
}

fn map_at_an_unaligned_offset(s: &mut S) {
    let d = s.d();
    let b = buf(d, 64, BU::COPY_DST | BU::MAP_READ);
    let result = Arc::new(AtomicU8::new(0));
    let r = result.clone();
    s.step("map_async", || {
        b.slice(4..).map_async(wgpu::MapMode::Read, move |res| {
            r.store(if res.is_ok() { 1 } else { 2 }, Ordering::Release)
        })
    });
    s.wait();
    map_callback(s, "callback", &result);
}

fn get_mapped_range_of_an_unmapped_buffer(s: &mut S) {
    let d = s.d();
    let b = buf(d, 64, BU::COPY_DST | BU::MAP_READ);
    s.fallible("get_mapped_range", || {
        b.slice(..).get_mapped_range().map(drop)
    });
}

fn get_mapped_range_outside_the_mapped_range(s: &mut S) {
    let d = s.d();
    let b = d.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 64,
        usage: BU::COPY_DST | BU::MAP_READ,
        mapped_at_creation: false,
    });
    let result = Arc::new(AtomicU8::new(0));
    let r = result.clone();
    s.step("map_async", || {
        b.slice(0..32).map_async(wgpu::MapMode::Read, move |res| {
            r.store(if res.is_ok() { 1 } else { 2 }, Ordering::Release)
        })
    });
    s.wait();
    map_callback(s, "callback", &result);
    s.fallible("get_mapped_range", || {
        b.slice(16..48).get_mapped_range().map(drop)
    });
    s.step("unmap", || b.unmap());
}

fn unmap_of_an_unmapped_buffer(s: &mut S) {
    let d = s.d();
    let b = buf(d, 64, BU::COPY_DST | BU::MAP_READ);
    s.step("unmap", || b.unmap());
}

fn submit_with_a_mapped_buffer(s: &mut S) {
    let d = s.d();
    let b = d.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 64,
        usage: BU::COPY_SRC | BU::MAP_WRITE,
        mapped_at_creation: true,
    });
    let dst = buf(d, 64, BU::COPY_DST);
    record(s, |e| e.copy_buffer_to_buffer(&b, 0, &dst, 0, 64));
    s.step("unmap", || b.unmap());
}

fn submit_while_a_map_is_pending(s: &mut S) {
    let d = s.d();
    let b = buf(d, 64, BU::COPY_DST | BU::MAP_READ);
    let src = buf(d, 64, BU::COPY_SRC);
    let r = map(s, "map_async", &b, wgpu::MapMode::Read);
    record(s, |e| e.copy_buffer_to_buffer(&src, 0, &b, 0, 64));
    s.wait();
    map_callback(s, "callback", &r);
    s.step("unmap", || b.unmap());
}

fn write_buffer_to_a_mapped_buffer(s: &mut S) {
    let d = s.d();
    let q = s.q();
    let b = d.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 64,
        usage: BU::COPY_DST | BU::MAP_READ,
        mapped_at_creation: true,
    });
    s.step("write_buffer", || q.write_buffer(&b, 0, &[0; 16]));
    s.step("submit", || {
        q.submit([]);
    });
    s.step("unmap", || b.unmap());
}

fn map_of_a_destroyed_buffer(s: &mut S) {
    let d = s.d();
    let b = buf(d, 64, BU::COPY_DST | BU::MAP_READ);
    b.destroy();
    let r = map(s, "map_async", &b, wgpu::MapMode::Read);
    s.wait();
    map_callback(s, "callback", &r);
}

// ---------------------------------------------------------------------------
// Destroyed resources

fn destroyed_buffer_in_a_copy(s: &mut S) {
    let d = s.d();
    let a = buf(d, 64, BU::COPY_SRC);
    let b = buf(d, 64, BU::COPY_DST);
    a.destroy();
    record(s, |e| e.copy_buffer_to_buffer(&a, 0, &b, 0, 64));
}

fn buffer_destroyed_between_finish_and_submit(s: &mut S) {
    let d = s.d();
    let q = s.q();
    let a = buf(d, 64, BU::COPY_SRC);
    let b = buf(d, 64, BU::COPY_DST);
    let Some(cb) = s.step("finish", || {
        let mut e = encoder(d);
        e.copy_buffer_to_buffer(&a, 0, &b, 0, 64);
        e.finish()
    }) else {
        return;
    };
    s.step("destroy", || b.destroy());
    s.step("submit", || {
        q.submit([cb]);
    });
}

fn destroyed_texture_in_a_copy(s: &mut S) {
    let d = s.d();
    let t = tex(d, 4, 4, TF::Rgba8Unorm, TU::COPY_SRC);
    let b = buf(d, 1024, BU::COPY_DST);
    t.destroy();
    record(s, |e| {
        e.copy_texture_to_buffer(
            image_copy(&t),
            buffer_copy(&b, 0, Some(256)),
            extent(4, 4, 1),
        )
    });
}

fn destroyed_texture_as_an_attachment(s: &mut S) {
    let d = s.d();
    let t = tex(d, 4, 4, TF::Rgba8Unorm, TU::RENDER_ATTACHMENT);
    let v = view(&t);
    t.destroy();
    record(s, |e| {
        let _p = pass(e, &v);
    });
}

fn destroyed_buffer_bound_in_a_dispatch(s: &mut S) {
    let d = s.d();
    let pipeline = compute_pipeline(d, STORAGE_RW);
    let b = buf(d, 64, BU::STORAGE);
    let g = group(
        d,
        &pipeline.get_bind_group_layout(0),
        &[b.as_entire_binding()],
    );
    b.destroy();
    record(s, |e| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.set_pipeline(&pipeline);
        p.set_bind_group(0, &g, &[]);
        p.dispatch_workgroups(1, 1, 1);
    });
}

fn group_made_with_a_destroyed_buffer(s: &mut S) {
    let d = s.d();
    let l = layout(d, &[buffer_entry(0, UNIFORM)]);
    let b = buf(d, 256, BU::UNIFORM);
    b.destroy();
    s.step("create group", || group(d, &l, &[b.as_entire_binding()]));
}

fn view_of_a_destroyed_texture(s: &mut S) {
    let d = s.d();
    let t = tex(d, 4, 4, TF::Rgba8Unorm, TU::TEXTURE_BINDING);
    t.destroy();
    s.step("create_view", || view(&t));
}

fn write_buffer_to_a_destroyed_buffer(s: &mut S) {
    let d = s.d();
    let q = s.q();
    let b = buf(d, 64, BU::COPY_DST);
    b.destroy();
    s.step("write_buffer", || q.write_buffer(&b, 0, &[0; 16]));
}

fn write_texture_to_a_destroyed_texture(s: &mut S) {
    let d = s.d();
    let q = s.q();
    let t = tex(d, 4, 4, TF::Rgba8Unorm, TU::COPY_DST);
    t.destroy();
    s.step("write_texture", || {
        q.write_texture(
            image_copy(&t),
            &[0; 64],
            data_layout(0, Some(16)),
            extent(4, 4, 1),
        )
    });
}

fn destroyed_vertex_buffer_in_a_draw(s: &mut S) {
    let d = s.d();
    let pipeline = render_pipeline(
        d,
        RP {
            source: DRAW_VERTEX,
            buffers: &[Some(vec2_layout())],
            ..Default::default()
        },
    );
    let vertices = buf(d, 64, BU::VERTEX);
    vertices.destroy();
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_pipeline(&pipeline);
        p.set_vertex_buffer(0, vertices.slice(..));
        p.draw(0..3, 0..1);
    });
}

// ---------------------------------------------------------------------------
// Objects of another device

fn second_device(s: &S) -> (wgpu::Device, wgpu::Queue) {
    pollster::block_on(s.gpu.adapter.request_device(&Default::default())).expect("device B")
}

fn copy_with_a_buffer_of_another_device(s: &mut S) {
    let (other, _q) = second_device(s);
    let d = s.d();
    let foreign = buf(&other, 64, BU::COPY_SRC);
    let own = buf(d, 64, BU::COPY_DST);
    record(s, |e| e.copy_buffer_to_buffer(&foreign, 0, &own, 0, 64));
}

fn group_with_a_buffer_of_another_device(s: &mut S) {
    let (other, _q) = second_device(s);
    let d = s.d();
    let l = layout(d, &[buffer_entry(0, UNIFORM)]);
    let foreign = buf(&other, 256, BU::UNIFORM);
    s.step("create group", || {
        group(d, &l, &[foreign.as_entire_binding()])
    });
}

fn pipeline_of_another_device_set(s: &mut S) {
    let (other, _q) = second_device(s);
    let pipeline = compute_pipeline(&other, NO_BINDINGS);
    record(s, |e| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.set_pipeline(&pipeline);
        p.dispatch_workgroups(1, 1, 1);
    });
}

fn attachment_of_another_device(s: &mut S) {
    let (other, _q) = second_device(s);
    let v = target(&other, TF::Rgba8Unorm);
    record(s, |e| {
        let _p = pass(e, &v);
    });
}

fn command_buffer_of_another_device_submitted(s: &mut S) {
    let (other, _oq) = second_device(s);
    let q = s.q();
    let Some(cb) = s.step("finish", || {
        let b = buf(&other, 64, BU::COPY_DST);
        let mut e = encoder(&other);
        e.clear_buffer(&b, 0, None);
        e.finish()
    }) else {
        return;
    };
    s.step("submit", || {
        q.submit([cb]);
    });
}

fn write_buffer_of_another_device(s: &mut S) {
    let (other, _oq) = second_device(s);
    let q = s.q();
    let foreign = buf(&other, 64, BU::COPY_DST);
    s.step("write_buffer", || q.write_buffer(&foreign, 0, &[0; 16]));
}

fn pipeline_layout_with_a_layout_of_another_device(s: &mut S) {
    let (other, _oq) = second_device(s);
    let d = s.d();
    let foreign = layout(&other, &[buffer_entry(0, UNIFORM)]);
    s.step("create pipeline layout", || {
        pipeline_layout(d, &[&foreign], 0)
    });
}

// ---------------------------------------------------------------------------
// Encoder state

fn finish_with_a_pass_still_open(s: &mut S) {
    let d = s.d();
    let mut e = encoder(d);
    let Some(p) = s.step("begin pass", || {
        e.begin_compute_pass(&Default::default()).forget_lifetime()
    }) else {
        return;
    };
    s.step("finish", || e.finish());
    s.step("end pass", || drop(p));
}

fn second_pass_while_one_is_open(s: &mut S) {
    let d = s.d();
    let mut e = encoder(d);
    let Some(first) = s.step("begin first", || {
        e.begin_compute_pass(&Default::default()).forget_lifetime()
    }) else {
        return;
    };
    let Some(second) = s.step("begin second", || {
        e.begin_compute_pass(&Default::default()).forget_lifetime()
    }) else {
        return;
    };
    s.step("end second", || drop(second));
    s.step("end first", || drop(first));
    finish_submit(s, e);
}

fn copy_while_a_pass_is_open(s: &mut S) {
    let d = s.d();
    let a = buf(d, 64, BU::COPY_SRC);
    let b = buf(d, 64, BU::COPY_DST);
    let mut e = encoder(d);
    let Some(p) = s.step("begin pass", || {
        e.begin_compute_pass(&Default::default()).forget_lifetime()
    }) else {
        return;
    };
    s.step("copy", || e.copy_buffer_to_buffer(&a, 0, &b, 0, 64));
    s.step("end pass", || drop(p));
    finish_submit(s, e);
}

fn pop_debug_group_without_a_push(s: &mut S) {
    record(s, |e| e.pop_debug_group());
}

fn push_debug_group_without_a_pop(s: &mut S) {
    record(s, |e| e.push_debug_group("never popped"));
}

fn pass_debug_group_left_open(s: &mut S) {
    let d = s.d();
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.push_debug_group("never popped");
    });
}

fn pass_commands_after_the_encoder_finished(s: &mut S) {
    let d = s.d();
    let pipeline = compute_pipeline(d, NO_BINDINGS);
    let mut e = encoder(d);
    let Some(mut p) = s.step("begin pass", || {
        e.begin_compute_pass(&Default::default()).forget_lifetime()
    }) else {
        return;
    };
    s.step("finish", || e.finish());
    s.step("dispatch", || {
        p.set_pipeline(&pipeline);
        p.dispatch_workgroups(1, 1, 1);
    });
    s.step("end pass", || drop(p));
}

fn submit_of_an_encoder_finished_with_a_pass_open(s: &mut S) {
    let d = s.d();
    let mut e = encoder(d);
    let Some(p) = s.step("begin pass", || {
        e.begin_compute_pass(&Default::default()).forget_lifetime()
    }) else {
        return;
    };
    let Some(cb) = s.step("finish", || e.finish()) else {
        return;
    };
    s.step("end pass", || drop(p));
    let q = s.q();
    s.step("submit", || {
        q.submit([cb]);
    });
}

// ---------------------------------------------------------------------------
// Immediates and dynamic offsets

fn dynamic_layout(d: &wgpu::Device, ty: wgpu::BufferBindingType) -> wgpu::BindGroupLayout {
    layout(
        d,
        &[wgpu::BindGroupLayoutEntry {
            ty: wgpu::BindingType::Buffer {
                ty,
                has_dynamic_offset: true,
                min_binding_size: None,
            },
            ..buffer_entry(0, ty)
        }],
    )
}

/// A dispatch with a dynamic storage binding of 64 bytes of a 1024-byte
/// buffer, at `offsets`.
fn dynamic_dispatch(s: &mut S, offsets: &'static [u32]) {
    let d = s.d();
    let l = dynamic_layout(d, STORAGE);
    let pl = pipeline_layout(d, &[&l], 0);
    let m = module(d, STORAGE_RW);
    let pipeline = d.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: Some(&pl),
        module: &m,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let b = buf(d, 1024, BU::STORAGE);
    let g = group(d, &l, &[binding(&b, 0, Some(64))]);
    record(s, |e| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.set_pipeline(&pipeline);
        p.set_bind_group(0, &g, offsets);
        p.dispatch_workgroups(1, 1, 1);
    });
}

fn dynamic_offsets_of_the_wrong_count(s: &mut S) {
    dynamic_dispatch(s, &[0, 256]);
}

fn dynamic_offset_missing(s: &mut S) {
    dynamic_dispatch(s, &[]);
}

fn dynamic_offset_unaligned(s: &mut S) {
    dynamic_dispatch(s, &[4]);
}

fn dynamic_offset_past_the_buffer(s: &mut S) {
    dynamic_dispatch(s, &[1024]);
}

fn dynamic_uniform_offset_unaligned_in_a_render_pass(s: &mut S) {
    let d = s.d();
    let l = dynamic_layout(d, UNIFORM);
    let b = buf(d, 1024, BU::UNIFORM);
    let g = group(d, &l, &[binding(&b, 0, Some(64))]);
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_bind_group(0, &g, &[128]);
    });
}

fn immediates_layout_without_the_feature(s: &mut S) {
    let d = s.d();
    if d.features().contains(wgpu::Features::IMMEDIATES) {
        s.skipped = Some("has IMMEDIATES".into());
        return;
    }
    s.step("create pipeline layout", || pipeline_layout(d, &[], 16));
}

const IMMEDIATE_COMPUTE: &str = "
var<immediate> c: vec4<u32>;
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@compute @workgroup_size(1) fn main() { data[0] = c.x; }
";

/// A dispatch with a 16-byte immediate block, given `data` at `offset`.
fn immediates_dispatch(s: &mut S, offset: u32, data: &'static [u8]) {
    if !s.needs(wgpu::Features::IMMEDIATES) {
        return;
    }
    let d = s.d();
    let l = layout(d, &[buffer_entry(0, STORAGE)]);
    let pl = pipeline_layout(d, &[&l], 16);
    let m = module(d, IMMEDIATE_COMPUTE);
    let pipeline = d.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: Some(&pl),
        module: &m,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let b = buf(d, 64, BU::STORAGE);
    let g = group(d, &l, &[b.as_entire_binding()]);
    record(s, |e| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.set_pipeline(&pipeline);
        p.set_bind_group(0, &g, &[]);
        p.set_immediates(offset, data);
        p.dispatch_workgroups(1, 1, 1);
    });
}

fn immediates_past_the_layout_size(s: &mut S) {
    immediates_dispatch(s, 8, &[0; 16]);
}

fn immediates_at_an_unaligned_offset(s: &mut S) {
    immediates_dispatch(s, 2, &[0; 4]);
}

fn immediates_of_an_unaligned_size(s: &mut S) {
    immediates_dispatch(s, 0, &[0; 6]);
}

fn immediates_layout_over_the_limit(s: &mut S) {
    if !s.needs(wgpu::Features::IMMEDIATES) {
        return;
    }
    let d = s.d();
    let max = d.limits().max_immediate_size;
    s.step("create pipeline layout", || {
        pipeline_layout(d, &[], max + 4)
    });
}

fn immediates_set_before_a_pipeline(s: &mut S) {
    if !s.needs(wgpu::Features::IMMEDIATES) {
        return;
    }
    record(s, |e| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.set_immediates(0, &[0; 16]);
    });
}

fn dispatch_without_the_immediates_it_reads(s: &mut S) {
    // Only half the block the shader reads is set.
    immediates_dispatch(s, 0, &[0; 8]);
}

// ---------------------------------------------------------------------------
// Limits

fn pipeline_layout_past_max_bind_groups(s: &mut S) {
    let d = s.d();
    let l = layout(d, &[]);
    let n = d.limits().max_bind_groups as usize + 1;
    let groups = vec![&l; n];
    s.step("create pipeline layout", || pipeline_layout(d, &groups, 0));
}

fn layout_past_max_storage_buffers_per_stage(s: &mut S) {
    let d = s.d();
    let n = d.limits().max_storage_buffers_per_shader_stage + 1;
    let entries: Vec<_> = (0..n).map(|i| buffer_entry(i, STORAGE)).collect();
    s.step("create layout", || layout(d, &entries));
}

fn layout_past_max_uniform_buffers_per_stage(s: &mut S) {
    let d = s.d();
    let n = d.limits().max_uniform_buffers_per_shader_stage + 1;
    let entries: Vec<_> = (0..n).map(|i| buffer_entry(i, UNIFORM)).collect();
    s.step("create layout", || layout(d, &entries));
}

fn uniform_binding_past_max_uniform_binding_size(s: &mut S) {
    let d = s.d();
    let max = d.limits().max_uniform_buffer_binding_size;
    let l = layout(d, &[buffer_entry(0, UNIFORM)]);
    let b = buf(d, max + 256, BU::UNIFORM);
    s.step("create group", || {
        group(d, &l, &[binding(&b, 0, Some(max + 256))])
    });
}

fn vertex_buffers_past_max_vertex_buffers(s: &mut S) {
    let d = s.d();
    let n = d.limits().max_vertex_buffers as usize + 1;
    let buffers: Vec<_> = (0..n).map(|_| Some(vec2_layout())).collect();
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                source: DRAW_VERTEX,
                buffers: &buffers,
                ..Default::default()
            },
        )
    });
}

fn vertex_stride_past_the_limit(s: &mut S) {
    let d = s.d();
    let stride = d.limits().max_vertex_buffer_array_stride as u64 + 4;
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                source: DRAW_VERTEX,
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: stride,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &[wgpu::VertexAttribute {
                        format: wgpu::VertexFormat::Float32x2,
                        offset: 0,
                        shader_location: 0,
                    }],
                })],
                ..Default::default()
            },
        )
    });
}

fn texture_array_past_max_layers(s: &mut S) {
    let d = s.d();
    let layers = d.limits().max_texture_array_layers + 1;
    s.step("create", || {
        d.create_texture(&tex_desc(
            extent(4, 4, layers),
            TF::R8Unorm,
            TU::TEXTURE_BINDING,
        ))
    });
}

fn texture_3d_past_max_dimension(s: &mut S) {
    let d = s.d();
    let max = d.limits().max_texture_dimension_3d;
    s.step("create", || {
        d.create_texture(&wgpu::TextureDescriptor {
            dimension: wgpu::TextureDimension::D3,
            ..tex_desc(extent(max + 1, 1, 1), TF::R8Unorm, TU::TEXTURE_BINDING)
        })
    });
}

fn dispatch_over_max_workgroups_in_y(s: &mut S) {
    let d = s.d();
    let pipeline = compute_pipeline(d, NO_BINDINGS);
    let max = d.limits().max_compute_workgroups_per_dimension;
    record(s, |e| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.set_pipeline(&pipeline);
        p.dispatch_workgroups(1, max + 1, 1);
    });
}

// ---------------------------------------------------------------------------
// wgpu-core checks added to keel-wgpu later (each case one check; grouped
// by area as the lists below are)

// Buffers

fn buffer_with_blas_input_usage(s: &mut S) {
    let d = s.d();
    s.step("create", || buf(d, 64, BU::BLAS_INPUT));
}

// Textures and views

fn compressed_texture_of_a_partial_block_width(s: &mut S) {
    if !s.needs(wgpu::Features::TEXTURE_COMPRESSION_BC) {
        return;
    }
    let d = s.d();
    s.step("create", || {
        tex(d, 6, 4, TF::Bc1RgbaUnorm, TU::TEXTURE_BINDING)
    });
}

fn compressed_texture_of_a_partial_block_height(s: &mut S) {
    if !s.needs(wgpu::Features::TEXTURE_COMPRESSION_BC) {
        return;
    }
    let d = s.d();
    s.step("create", || {
        tex(d, 4, 6, TF::Bc1RgbaUnorm, TU::TEXTURE_BINDING)
    });
}

fn multisampled_texture_without_render_attachment(s: &mut S) {
    let d = s.d();
    s.step("create", || {
        d.create_texture(&wgpu::TextureDescriptor {
            sample_count: 4,
            ..tex_desc(extent(4, 4, 1), TF::Rgba8Unorm, TU::TEXTURE_BINDING)
        })
    });
}

fn multisampled_texture_of_a_format_webgpu_does_not_multisample(s: &mut S) {
    let d = s.d();
    s.step("create", || {
        d.create_texture(&wgpu::TextureDescriptor {
            sample_count: 4,
            ..tex_desc(extent(4, 4, 1), TF::Rgba32Float, TU::RENDER_ATTACHMENT)
        })
    });
}

fn view_usage_not_in_the_texture(s: &mut S) {
    let d = s.d();
    let t = tex(d, 4, 4, TF::Rgba8Unorm, TU::TEXTURE_BINDING);
    s.step("create_view", || {
        t.create_view(&wgpu::TextureViewDescriptor {
            usage: Some(TU::STORAGE_BINDING),
            ..Default::default()
        })
    });
}

/// A transient render target (`RENDER_ATTACHMENT | TRANSIENT_ATTACHMENT`).
fn transient(d: &wgpu::Device, format: TF) -> wgpu::Texture {
    tex(
        d,
        4,
        4,
        format,
        TU::RENDER_ATTACHMENT | TU::TRANSIENT_ATTACHMENT,
    )
}

fn view_of_a_transient_texture_with_less_usage(s: &mut S) {
    let d = s.d();
    let t = transient(d, TF::Rgba8Unorm);
    s.step("create_view", || {
        t.create_view(&wgpu::TextureViewDescriptor {
            usage: Some(TU::RENDER_ATTACHMENT),
            ..Default::default()
        })
    });
}

fn array_view_of_a_multisampled_texture(s: &mut S) {
    let d = s.d();
    let t = d.create_texture(&wgpu::TextureDescriptor {
        sample_count: 4,
        ..tex_desc(extent(4, 4, 1), TF::Rgba8Unorm, TU::RENDER_ATTACHMENT)
    });
    s.step("create_view", || {
        t.create_view(&wgpu::TextureViewDescriptor {
            dimension: Some(wgpu::TextureViewDimension::D2Array),
            ..Default::default()
        })
    });
}

// Bind groups and layouts

fn layout_with_an_atomic_storage_texture(s: &mut S) {
    let d = s.d();
    s.step("create layout", || {
        layout(
            d,
            &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::StorageTexture {
                    access: wgpu::StorageTextureAccess::Atomic,
                    format: TF::R32Uint,
                    view_dimension: wgpu::TextureViewDimension::D2,
                },
                count: None,
            }],
        )
    });
}

fn layout_with_unknown_visibility_bits(s: &mut S) {
    let d = s.d();
    s.step("create layout", || {
        layout(
            d,
            &[wgpu::BindGroupLayoutEntry {
                visibility: wgpu::ShaderStages::from_bits_retain(1 << 20),
                ..buffer_entry(0, UNIFORM)
            }],
        )
    });
}

fn group_storage_binding_of_an_unaligned_size(s: &mut S) {
    let d = s.d();
    let l = layout(d, &[buffer_entry(0, STORAGE)]);
    let b = buf(d, 64, BU::STORAGE);
    s.step("create group", || group(d, &l, &[binding(&b, 0, Some(6))]));
}

fn storage_texture_layout(format: TF) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding: 0,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::StorageTexture {
            access: wgpu::StorageTextureAccess::WriteOnly,
            format,
            view_dimension: wgpu::TextureViewDimension::D2,
        },
        count: None,
    }
}

fn group_storage_texture_view_of_two_mips(s: &mut S) {
    let d = s.d();
    let l = layout(d, &[storage_texture_layout(TF::Rgba8Unorm)]);
    let t = d.create_texture(&wgpu::TextureDescriptor {
        mip_level_count: 2,
        ..tex_desc(extent(4, 4, 1), TF::Rgba8Unorm, TU::STORAGE_BINDING)
    });
    let v = view(&t);
    s.step("create group", || {
        group(d, &l, &[wgpu::BindingResource::TextureView(&v)])
    });
}

fn group_view_whose_own_usage_lacks_texture_binding(s: &mut S) {
    let d = s.d();
    let l = layout(
        d,
        &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::FRAGMENT,
            ty: wgpu::BindingType::Texture {
                sample_type: wgpu::TextureSampleType::Float { filterable: true },
                view_dimension: wgpu::TextureViewDimension::D2,
                multisampled: false,
            },
            count: None,
        }],
    );
    let t = tex(
        d,
        4,
        4,
        TF::Rgba8Unorm,
        TU::TEXTURE_BINDING | TU::RENDER_ATTACHMENT,
    );
    let v = t.create_view(&wgpu::TextureViewDescriptor {
        usage: Some(TU::RENDER_ATTACHMENT),
        ..Default::default()
    });
    s.step("create group", || {
        group(d, &l, &[wgpu::BindingResource::TextureView(&v)])
    });
}

fn pipeline_layout_with_a_derived_group_layout(s: &mut S) {
    let d = s.d();
    let p = compute_pipeline(d, STORAGE_RW);
    let derived = p.get_bind_group_layout(0);
    s.step("create pipeline layout", || {
        pipeline_layout(d, &[&derived], 0)
    });
}

// Binding arrays

fn texture_array_entry(binding: u32) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::FRAGMENT,
        ty: wgpu::BindingType::Texture {
            sample_type: wgpu::TextureSampleType::Float { filterable: true },
            view_dimension: wgpu::TextureViewDimension::D2,
            multisampled: false,
        },
        count: std::num::NonZeroU32::new(2),
    }
}

fn layout_with_a_binding_array_and_a_dynamic_buffer(s: &mut S) {
    if !s.needs(wgpu::Features::TEXTURE_BINDING_ARRAY) {
        return;
    }
    let d = s.d();
    s.step("create layout", || {
        layout(
            d,
            &[
                texture_array_entry(0),
                wgpu::BindGroupLayoutEntry {
                    ty: wgpu::BindingType::Buffer {
                        ty: STORAGE,
                        has_dynamic_offset: true,
                        min_binding_size: None,
                    },
                    ..buffer_entry(1, STORAGE)
                },
            ],
        )
    });
}

fn layout_with_a_binding_array_and_a_uniform_buffer(s: &mut S) {
    if !s.needs(wgpu::Features::TEXTURE_BINDING_ARRAY) {
        return;
    }
    let d = s.d();
    s.step("create layout", || {
        layout(d, &[texture_array_entry(0), buffer_entry(1, UNIFORM)])
    });
}

// Render pipelines

fn strip_index_format_with_a_list_topology(s: &mut S) {
    let d = s.d();
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                primitive: wgpu::PrimitiveState {
                    strip_index_format: Some(wgpu::IndexFormat::Uint16),
                    ..Default::default()
                },
                ..Default::default()
            },
        )
    });
}

fn conservative_rasterization_with_line_polygons(s: &mut S) {
    if !s.needs(wgpu::Features::CONSERVATIVE_RASTERIZATION | wgpu::Features::POLYGON_MODE_LINE) {
        return;
    }
    let d = s.d();
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                primitive: wgpu::PrimitiveState {
                    conservative: true,
                    polygon_mode: wgpu::PolygonMode::Line,
                    ..Default::default()
                },
                ..Default::default()
            },
        )
    });
}

fn color_write_mask_with_unknown_bits(s: &mut S) {
    let d = s.d();
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                targets: &[Some(wgpu::ColorTargetState {
                    format: TF::Rgba8Unorm,
                    blend: None,
                    write_mask: wgpu::ColorWrites::from_bits_retain(0x10),
                })],
                ..Default::default()
            },
        )
    });
}

fn color_target_without_the_sample_count(s: &mut S) {
    let d = s.d();
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                targets: &[Some(TF::Rgba32Float.into())],
                samples: 4,
                ..Default::default()
            },
        )
    });
}

/// Target 0 of `format` blending with `color`.
fn blended(format: TF, color: wgpu::BlendComponent) -> Option<wgpu::ColorTargetState> {
    Some(wgpu::ColorTargetState {
        format,
        blend: Some(wgpu::BlendState {
            color,
            alpha: wgpu::BlendComponent::REPLACE,
        }),
        write_mask: wgpu::ColorWrites::ALL,
    })
}

const SECOND_SOURCE: wgpu::BlendComponent = wgpu::BlendComponent {
    src_factor: wgpu::BlendFactor::Src1,
    dst_factor: wgpu::BlendFactor::OneMinusSrc1,
    operation: wgpu::BlendOperation::Add,
};

fn second_source_blend_factor_on_target_1(s: &mut S) {
    if !s.needs(wgpu::Features::DUAL_SOURCE_BLENDING) {
        return;
    }
    let d = s.d();
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                targets: &[
                    Some(TF::Rgba8Unorm.into()),
                    blended(TF::Rgba8Unorm, SECOND_SOURCE),
                ],
                ..Default::default()
            },
        )
    });
}

fn dual_source_blending_with_two_targets(s: &mut S) {
    if !s.needs(wgpu::Features::DUAL_SOURCE_BLENDING) {
        return;
    }
    let d = s.d();
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                targets: &[
                    blended(TF::Rgba8Unorm, SECOND_SOURCE),
                    Some(TF::Rgba8Unorm.into()),
                ],
                ..Default::default()
            },
        )
    });
}

fn dual_source_blending_without_blend_src_outputs(s: &mut S) {
    if !s.needs(wgpu::Features::DUAL_SOURCE_BLENDING) {
        return;
    }
    let d = s.d();
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                targets: &[blended(TF::Rgba8Unorm, SECOND_SOURCE)],
                ..Default::default()
            },
        )
    });
}

fn max_blend_operation_with_a_factor_other_than_one(s: &mut S) {
    let d = s.d();
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                targets: &[blended(
                    TF::Rgba8Unorm,
                    wgpu::BlendComponent {
                        src_factor: wgpu::BlendFactor::SrcAlpha,
                        dst_factor: wgpu::BlendFactor::One,
                        operation: wgpu::BlendOperation::Max,
                    },
                )],
                ..Default::default()
            },
        )
    });
}

fn depth_test_on_a_stencil_only_format(s: &mut S) {
    let d = s.d();
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                depth: Some(depth_state(TF::Stencil8, false)),
                ..Default::default()
            },
        )
    });
}

fn depth_format_without_depth_write_enabled(s: &mut S) {
    let d = s.d();
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                depth: Some(wgpu::DepthStencilState {
                    depth_write_enabled: None,
                    ..depth_state(TF::Depth32Float, false)
                }),
                ..Default::default()
            },
        )
    });
}

fn depth_write_without_a_depth_compare(s: &mut S) {
    let d = s.d();
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                depth: Some(wgpu::DepthStencilState {
                    depth_compare: None,
                    ..depth_state(TF::Depth32Float, true)
                }),
                ..Default::default()
            },
        )
    });
}

fn stencil_test_on_a_depth_only_format(s: &mut S) {
    let d = s.d();
    let face = wgpu::StencilFaceState {
        compare: wgpu::CompareFunction::Less,
        ..wgpu::StencilFaceState::IGNORE
    };
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                depth: Some(wgpu::DepthStencilState {
                    stencil: wgpu::StencilState {
                        front: face,
                        back: face,
                        read_mask: 0xff,
                        write_mask: 0xff,
                    },
                    ..depth_state(TF::Depth32Float, false)
                }),
                ..Default::default()
            },
        )
    });
}

fn depth_format_without_the_sample_count(s: &mut S) {
    let d = s.d();
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                depth: Some(depth_state(TF::Depth32Float, true)),
                samples: 2,
                fragment: false,
                ..Default::default()
            },
        )
    });
}

fn depth_bias_with_a_line_topology(s: &mut S) {
    let d = s.d();
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                primitive: wgpu::PrimitiveState {
                    topology: wgpu::PrimitiveTopology::LineList,
                    ..Default::default()
                },
                depth: Some(wgpu::DepthStencilState {
                    bias: wgpu::DepthBiasState {
                        constant: 2,
                        ..Default::default()
                    },
                    ..depth_state(TF::Depth32Float, true)
                }),
                ..Default::default()
            },
        )
    });
}

/// A pipeline of `source` (its `vs` and `fs`) into one Rgba8Unorm target.
fn varyings_pipeline(s: &mut S, source: &'static str, topology: wgpu::PrimitiveTopology) {
    let d = s.d();
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                source,
                primitive: wgpu::PrimitiveState {
                    topology,
                    ..Default::default()
                },
                ..Default::default()
            },
        )
    });
}

const TRIANGLES: wgpu::PrimitiveTopology = wgpu::PrimitiveTopology::TriangleList;

fn fragment_input_the_vertex_stage_does_not_write(s: &mut S) {
    varyings_pipeline(
        s,
        "
struct V { @builtin(position) p: vec4<f32>, @location(0) c: vec4<f32> }
@vertex fn vs() -> V { return V(vec4<f32>(0.0), vec4<f32>(1.0)); }
@fragment fn fs(@location(1) c: vec4<f32>) -> @location(0) vec4<f32> { return c; }
",
        TRIANGLES,
    );
}

fn fragment_input_wider_than_the_vertex_output(s: &mut S) {
    varyings_pipeline(
        s,
        "
struct V { @builtin(position) p: vec4<f32>, @location(0) c: vec2<f32> }
@vertex fn vs() -> V { return V(vec4<f32>(0.0), vec2<f32>(1.0)); }
@fragment fn fs(@location(0) c: vec4<f32>) -> @location(0) vec4<f32> { return c; }
",
        TRIANGLES,
    );
}

fn fragment_input_interpolated_otherwise(s: &mut S) {
    varyings_pipeline(
        s,
        "
struct V { @builtin(position) p: vec4<f32>, @location(0) @interpolate(linear) c: vec4<f32> }
@vertex fn vs() -> V { return V(vec4<f32>(0.0), vec4<f32>(1.0)); }
@fragment fn fs(@location(0) c: vec4<f32>) -> @location(0) vec4<f32> { return c; }
",
        TRIANGLES,
    );
}

fn fragment_input_sampled_otherwise(s: &mut S) {
    varyings_pipeline(
        s,
        "
struct V {
    @builtin(position) p: vec4<f32>,
    @location(0) @interpolate(perspective, centroid) c: vec4<f32>,
}
@vertex fn vs() -> V { return V(vec4<f32>(0.0), vec4<f32>(1.0)); }
@fragment fn fs(@location(0) c: vec4<f32>) -> @location(0) vec4<f32> { return c; }
",
        TRIANGLES,
    );
}

fn vertex_output_location_past_the_limit(s: &mut S) {
    varyings_pipeline(
        s,
        "
struct V { @builtin(position) p: vec4<f32>, @location(16) c: vec4<f32> }
@vertex fn vs() -> V { return V(vec4<f32>(0.0), vec4<f32>(1.0)); }
@fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }
",
        TRIANGLES,
    );
}

/// A vertex stage writing 16 `f32` outputs at locations 0 to 15, and a
/// fragment stage reading them all (and `extra` more).
fn sixteen_varyings(extra: &str) -> String {
    let fields: String = (0..16)
        .map(|i| format!("@location({i}) v{i}: f32,\n"))
        .collect();
    format!(
        "
struct V {{ @builtin(position) p: vec4<f32>,\n{fields} }}
struct F {{ {extra}\n{fields} }}
@vertex fn vs() -> V {{ var v: V; v.p = vec4<f32>(0.0); return v; }}
@fragment fn fs(f: F) -> @location(0) vec4<f32> {{ return vec4<f32>(f.v0); }}
"
    )
}

fn too_many_vertex_outputs_for_a_point_list(s: &mut S) {
    let source: &'static str = Box::leak(sixteen_varyings("").into_boxed_str());
    varyings_pipeline(s, source, wgpu::PrimitiveTopology::PointList);
}

fn too_many_fragment_inputs_with_a_built_in(s: &mut S) {
    let source: &'static str =
        Box::leak(sixteen_varyings("@builtin(front_facing) front: bool,").into_boxed_str());
    varyings_pipeline(s, source, TRIANGLES);
}

fn fragment_output_location_past_max_color_attachments(s: &mut S) {
    varyings_pipeline(
        s,
        "
@vertex fn vs() -> @builtin(position) vec4<f32> { return vec4<f32>(0.0); }
@fragment fn fs() -> @location(8) vec4<f32> { return vec4<f32>(1.0); }
",
        TRIANGLES,
    );
}

fn fragment_depth_write_without_a_depth_attachment(s: &mut S) {
    varyings_pipeline(
        s,
        "
@vertex fn vs() -> @builtin(position) vec4<f32> { return vec4<f32>(0.0); }
@fragment fn fs() -> @builtin(frag_depth) f32 { return 0.5; }
",
        TRIANGLES,
    );
}

fn get_bind_group_layout_of_an_invalid_pipeline(s: &mut S) {
    let d = s.d();
    let Some(p) = s.step("create invalid pipeline", || {
        render_pipeline(
            d,
            RP {
                samples: 3,
                ..Default::default()
            },
        )
    }) else {
        return;
    };
    s.step("get_bind_group_layout", || p.get_bind_group_layout(0));
}

// Compute passes

fn set_bind_group_none_with_dynamic_offsets_in_a_compute_pass(s: &mut S) {
    record(s, |e| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.set_bind_group(0, None::<&wgpu::BindGroup>, &[0]);
    });
}

fn compute_group_replaced_before_dispatch_holds_a_destroyed_buffer(s: &mut S) {
    let d = s.d();
    let pipeline = compute_pipeline(d, STORAGE_RW);
    let l = pipeline.get_bind_group_layout(0);
    let gone = buf(d, 64, BU::STORAGE);
    let first = group(d, &l, &[gone.as_entire_binding()]);
    let kept = buf(d, 64, BU::STORAGE);
    let second = group(d, &l, &[kept.as_entire_binding()]);
    gone.destroy();
    record(s, |e| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.set_pipeline(&pipeline);
        p.set_bind_group(0, &first, &[]);
        p.set_bind_group(0, &second, &[]);
        p.dispatch_workgroups(1, 1, 1);
    });
}

fn transition_resources_in_a_compute_pass_in_conflicting_states(s: &mut S) {
    let d = s.d();
    let b = buf(d, 64, BU::STORAGE | BU::COPY_DST);
    record(s, |e| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.transition_resources(
            [
                wgpu::wgt::BufferTransition {
                    buffer: &b,
                    state: wgpu::wgt::BufferUses::COPY_DST,
                },
                wgpu::wgt::BufferTransition {
                    buffer: &b,
                    state: wgpu::wgt::BufferUses::STORAGE_READ_WRITE,
                },
            ]
            .into_iter(),
            std::iter::empty(),
        );
    });
}

// Render passes

fn transient_attachment_stored(s: &mut S) {
    let d = s.d();
    let v = view(&transient(d, TF::Rgba8Unorm));
    record(s, |e| {
        let _p = pass(e, &v);
    });
}

fn transient_depth_attachment_read_only(s: &mut S) {
    let d = s.d();
    let v = view(&transient(d, TF::Depth32Float));
    record(s, |e| {
        let _p = e.begin_render_pass(&wgpu::RenderPassDescriptor {
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &v,
                depth_ops: None,
                stencil_ops: None,
            }),
            ..Default::default()
        });
    });
}

/// A pass on `view` as its depth attachment, with `depth_ops`.
fn depth_pass(s: &mut S, view: &wgpu::TextureView, depth_ops: Option<wgpu::Operations<f32>>) {
    record(s, |e| {
        let _p = e.begin_render_pass(&wgpu::RenderPassDescriptor {
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view,
                depth_ops,
                stencil_ops: None,
            }),
            ..Default::default()
        });
    });
}

fn depth_clear_value_past_one(s: &mut S) {
    let d = s.d();
    let v = view(&tex(d, 4, 4, TF::Depth32Float, TU::RENDER_ATTACHMENT));
    depth_pass(
        s,
        &v,
        Some(wgpu::Operations {
            load: wgpu::LoadOp::Clear(2.0),
            store: wgpu::StoreOp::Store,
        }),
    );
}

fn cube_view_as_an_attachment(s: &mut S) {
    let d = s.d();
    let t = d.create_texture(&tex_desc(
        extent(4, 4, 6),
        TF::Rgba8Unorm,
        TU::RENDER_ATTACHMENT | TU::TEXTURE_BINDING,
    ));
    let v = t.create_view(&wgpu::TextureViewDescriptor {
        dimension: Some(wgpu::TextureViewDimension::Cube),
        ..Default::default()
    });
    record(s, |e| {
        let _p = pass(e, &v);
    });
}

fn attachment_view_of_two_layers(s: &mut S) {
    let d = s.d();
    let t = d.create_texture(&tex_desc(
        extent(4, 4, 2),
        TF::Rgba8Unorm,
        TU::RENDER_ATTACHMENT,
    ));
    let v = view(&t);
    record(s, |e| {
        let _p = pass(e, &v);
    });
}

fn depth_attachment_showing_the_depth_aspect_only(s: &mut S) {
    let d = s.d();
    let t = tex(d, 4, 4, TF::Depth24PlusStencil8, TU::RENDER_ATTACHMENT);
    let v = t.create_view(&wgpu::TextureViewDescriptor {
        aspect: wgpu::TextureAspect::DepthOnly,
        ..Default::default()
    });
    depth_pass(
        s,
        &v,
        Some(wgpu::Operations {
            load: wgpu::LoadOp::Clear(1.0),
            store: wgpu::StoreOp::Store,
        }),
    );
}

/// A pass resolving a 4-sample `format` attachment (`ops`) into `resolve`.
fn resolve_pass(
    s: &mut S,
    format: TF,
    resolve: &wgpu::TextureView,
    ops: wgpu::Operations<wgpu::Color>,
) {
    let d = s.d();
    let ms = d.create_texture(&wgpu::TextureDescriptor {
        sample_count: 4,
        ..tex_desc(extent(4, 4, 1), format, TU::RENDER_ATTACHMENT)
    });
    let a = view(&ms);
    record(s, |e| {
        let _p = e.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &a,
                depth_slice: None,
                resolve_target: Some(resolve),
                ops,
            })],
            ..Default::default()
        });
    });
}

fn resolve_target_of_an_unresolvable_format(s: &mut S) {
    let d = s.d();
    let r = view(&tex(d, 4, 4, TF::Rgba8Uint, TU::RENDER_ATTACHMENT));
    resolve_pass(s, TF::Rgba8Uint, &r, Default::default());
}

fn transient_resolve_target(s: &mut S) {
    let d = s.d();
    let r = view(&transient(d, TF::Rgba8Unorm));
    resolve_pass(s, TF::Rgba8Unorm, &r, Default::default());
}

fn set_bind_group_none_with_dynamic_offsets_in_a_render_pass(s: &mut S) {
    let d = s.d();
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_bind_group(0, None::<&wgpu::BindGroup>, &[0, 256]);
    });
}

fn draw_without_the_blend_constant(s: &mut S) {
    let d = s.d();
    let pipeline = render_pipeline(
        d,
        RP {
            targets: &[blended(
                TF::Rgba8Unorm,
                wgpu::BlendComponent {
                    src_factor: wgpu::BlendFactor::Constant,
                    dst_factor: wgpu::BlendFactor::Zero,
                    operation: wgpu::BlendOperation::Add,
                },
            )],
            ..Default::default()
        },
    );
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_pipeline(&pipeline);
        p.draw(0..3, 0..1);
    });
}

// Render bundles

fn bundle_set_bind_group_none_with_dynamic_offsets(s: &mut S) {
    let d = s.d();
    let Some(mut b) = s.step("create encoder", || {
        d.create_render_bundle_encoder(&wgpu::RenderBundleEncoderDescriptor {
            label: None,
            color_formats: &[Some(TF::Rgba8Unorm)],
            depth_stencil: None,
            sample_count: 1,
            multiview: None,
        })
    }) else {
        return;
    };
    s.step("set_bind_group", || {
        b.set_bind_group(0, None::<&wgpu::BindGroup>, &[0])
    });
    s.step("finish", || b.finish(&Default::default()));
}

// Queries

fn timestamp_set(d: &wgpu::Device) -> wgpu::QuerySet {
    d.create_query_set(&wgpu::QuerySetDescriptor {
        label: Some("case timestamps"),
        ty: wgpu::QueryType::Timestamp,
        count: 2,
    })
}

fn write_timestamp_on_the_encoder_without_the_feature(s: &mut S) {
    if !s.needs(wgpu::Features::TIMESTAMP_QUERY) {
        return;
    }
    let d = s.d();
    let set = timestamp_set(d);
    record(s, |e| e.write_timestamp(&set, 0));
}

fn write_timestamp_in_a_compute_pass_without_the_feature(s: &mut S) {
    if !s.needs(wgpu::Features::TIMESTAMP_QUERY) {
        return;
    }
    let d = s.d();
    let set = timestamp_set(d);
    record(s, |e| {
        let mut p = e.begin_compute_pass(&Default::default());
        p.write_timestamp(&set, 0);
    });
}

fn write_timestamp_in_a_render_pass_without_the_feature(s: &mut S) {
    if !s.needs(wgpu::Features::TIMESTAMP_QUERY) {
        return;
    }
    let d = s.d();
    let set = timestamp_set(d);
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.write_timestamp(&set, 0);
    });
}

fn occlusion_set_destroyed_before_submit(s: &mut S) {
    let d = s.d();
    let q = s.q();
    let set = occlusion_set(d, 2);
    let v = target(d, TF::Rgba8Unorm);
    let mut e = encoder(d);
    {
        let mut p = e.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[color(&v)],
            occlusion_query_set: Some(&set),
            ..Default::default()
        });
        p.begin_occlusion_query(0);
        p.end_occlusion_query();
    }
    let Some(cb) = s.step("finish", || e.finish()) else {
        return;
    };
    set.destroy();
    s.step("submit", || {
        q.submit([cb]);
    });
}

fn timestamp_set_of_a_compute_pass_destroyed_before_submit(s: &mut S) {
    if !s.needs(wgpu::Features::TIMESTAMP_QUERY) {
        return;
    }
    let d = s.d();
    let q = s.q();
    let set = timestamp_set(d);
    let mut e = encoder(d);
    drop(e.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: None,
        timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
            query_set: &set,
            beginning_of_pass_write_index: Some(0),
            end_of_pass_write_index: Some(1),
        }),
    }));
    let Some(cb) = s.step("finish", || e.finish()) else {
        return;
    };
    set.destroy();
    s.step("submit", || {
        q.submit([cb]);
    });
}

// Queue writes

fn write_buffer_with_to_a_buffer_destroyed_before_the_write(s: &mut S) {
    let d = s.d();
    let q = s.q();
    let b = buf(d, 64, BU::COPY_DST);
    let Some(view) = s.step("write_buffer_with", || {
        q.write_buffer_with(&b, 0, NonZeroU64::new(64).expect("64"))
    }) else {
        return;
    };
    b.destroy();
    s.step("drop the view", || drop(view));
}

// Mapping

fn unmap_of_a_destroyed_buffer(s: &mut S) {
    let d = s.d();
    let b = d.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 64,
        usage: BU::COPY_SRC | BU::MAP_WRITE,
        mapped_at_creation: true,
    });
    b.destroy();
    s.step("unmap", || b.unmap());
}

// Encoder state

fn transition_resources_in_conflicting_states(s: &mut S) {
    let d = s.d();
    let b = buf(d, 64, BU::STORAGE | BU::COPY_DST);
    record(s, |e| {
        e.transition_resources(
            [
                wgpu::wgt::BufferTransition {
                    buffer: &b,
                    state: wgpu::wgt::BufferUses::COPY_DST,
                },
                wgpu::wgt::BufferTransition {
                    buffer: &b,
                    state: wgpu::wgt::BufferUses::STORAGE_READ_WRITE,
                },
            ]
            .into_iter(),
            std::iter::empty(),
        )
    });
}

fn transition_resources_of_an_invalid_texture(s: &mut S) {
    let d = s.d();
    let Some(t) = s.step("create invalid", || {
        tex(d, 0, 4, TF::Rgba8Unorm, TU::TEXTURE_BINDING)
    }) else {
        return;
    };
    record(s, |e| {
        e.transition_resources(
            std::iter::empty(),
            [wgpu::wgt::TextureTransition {
                texture: &t,
                selector: None,
                state: wgpu::wgt::TextureUses::RESOURCE,
            }]
            .into_iter(),
        )
    });
}

fn transition_resources_of_a_buffer_destroyed_before_submit(s: &mut S) {
    let d = s.d();
    let q = s.q();
    let b = buf(d, 64, BU::STORAGE);
    let mut e = encoder(d);
    e.transition_resources(
        [wgpu::wgt::BufferTransition {
            buffer: &b,
            state: wgpu::wgt::BufferUses::STORAGE_READ_ONLY,
        }]
        .into_iter(),
        std::iter::empty(),
    );
    let Some(cb) = s.step("finish", || e.finish()) else {
        return;
    };
    b.destroy();
    s.step("submit", || {
        q.submit([cb]);
    });
}

// Tight limits: `tight_limits` below

/// Default limits with at most two bind groups plus vertex buffers and two
/// buffers per stage.
fn tight_limits(adapter: &wgpu::Adapter) -> wgpu::Limits {
    wgpu::Limits {
        max_bind_groups_plus_vertex_buffers: 2,
        max_buffers_and_acceleration_structures_per_shader_stage: 2,
        ..area_limits(adapter)
    }
}

fn layout_past_max_buffers_and_acceleration_structures(s: &mut S) {
    let d = s.d();
    s.step("create layout", || {
        layout(
            d,
            &[
                buffer_entry(0, STORAGE),
                buffer_entry(1, STORAGE),
                buffer_entry(2, UNIFORM),
            ],
        )
    });
}

const EMPTY_VERTEX_BUFFER: Option<wgpu::VertexBufferLayout<'static>> =
    Some(wgpu::VertexBufferLayout {
        array_stride: 16,
        step_mode: wgpu::VertexStepMode::Vertex,
        attributes: &[],
    });

fn pipeline_past_max_bind_groups_plus_vertex_buffers(s: &mut S) {
    let d = s.d();
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                buffers: &[EMPTY_VERTEX_BUFFER; 3],
                ..Default::default()
            },
        )
    });
}

fn pipeline_past_max_vertex_stage_buffers(s: &mut S) {
    let d = s.d();
    let vertex_uniform = |binding| wgpu::BindGroupLayoutEntry {
        visibility: wgpu::ShaderStages::VERTEX,
        ..buffer_entry(binding, UNIFORM)
    };
    let l = layout(d, &[vertex_uniform(0), vertex_uniform(1)]);
    let pl = pipeline_layout(d, &[&l], 0);
    s.step("create pipeline", || {
        render_pipeline(
            d,
            RP {
                layout: Some(&pl),
                buffers: &[EMPTY_VERTEX_BUFFER],
                ..Default::default()
            },
        )
    });
}

fn draw_past_max_bind_groups_plus_vertex_buffers(s: &mut S) {
    let d = s.d();
    let pipeline = render_pipeline(d, RP::default());
    let l = layout(d, &[]);
    let g = group(d, &l, &[]);
    let vb = buf(d, 64, BU::VERTEX);
    let v = target(d, TF::Rgba8Unorm);
    record(s, |e| {
        let mut p = pass(e, &v);
        p.set_pipeline(&pipeline);
        p.set_bind_group(0, &g, &[]);
        p.set_vertex_buffer(1, vb.slice(..));
        p.draw(0..3, 0..1);
    });
}

// ---------------------------------------------------------------------------
// The areas

const BUFFERS: &[Case] = cases![
    buffer_with_no_usage,
    map_read_buffer_with_storage_usage,
    map_write_buffer_with_copy_dst,
    mapped_at_creation_unaligned_size,
    buffer_over_max_buffer_size,
    invalid_buffer_used_in_copy,
    buffer_with_blas_input_usage,
];

const TEXTURES_AND_VIEWS: &[Case] = cases![
    texture_of_zero_size,
    texture_with_no_usage,
    texture_with_too_many_mips,
    texture_with_sample_count_3,
    multisampled_texture_with_mips,
    multisampled_storage_texture,
    texture_over_max_dimension,
    storage_usage_on_a_non_storage_format,
    depth_format_in_a_3d_texture,
    render_attachment_on_a_non_renderable_format,
    view_format_not_listed,
    view_mips_past_the_texture,
    view_layers_past_the_texture,
    view_aspect_the_format_lacks,
    cube_view_of_two_layers,
    view_2d_of_a_3d_texture_with_all_layers,
    sampler_with_anisotropy_and_nearest_filters,
    sampler_with_lod_min_above_lod_max,
    compressed_texture_of_a_partial_block_width,
    compressed_texture_of_a_partial_block_height,
    multisampled_texture_without_render_attachment,
    multisampled_texture_of_a_format_webgpu_does_not_multisample,
    view_usage_not_in_the_texture,
    view_of_a_transient_texture_with_less_usage,
    array_view_of_a_multisampled_texture,
];

const BIND_GROUPS_AND_LAYOUTS: &[Case] = cases![
    layout_with_a_duplicate_binding,
    group_missing_an_entry,
    group_buffer_range_past_the_end,
    group_buffer_smaller_than_min_binding_size,
    group_uniform_buffer_without_uniform_usage,
    group_uniform_offset_unaligned,
    group_sampler_where_a_buffer_goes,
    group_texture_of_the_wrong_sample_type,
    group_storage_texture_without_storage_usage,
    group_comparison_sampler_for_a_filtering_binding,
    group_filtering_sampler_for_a_non_filtering_binding,
    group_multisampled_view_for_a_single_sampled_binding,
    group_3d_view_for_a_2d_binding,
    set_bind_group_made_for_another_layout,
    set_bind_group_past_the_group_limit,
    filtering_sampler_with_a_non_filterable_texture,
    layout_with_an_atomic_storage_texture,
    layout_with_unknown_visibility_bits,
    group_storage_binding_of_an_unaligned_size,
    group_storage_texture_view_of_two_mips,
    group_view_whose_own_usage_lacks_texture_binding,
    pipeline_layout_with_a_derived_group_layout,
];

const PIPELINES: &[Case] = cases![
    compute_pipeline_with_a_missing_entry_point,
    shader_binding_missing_from_the_layout,
    shader_binding_of_another_type_in_the_layout,
    workgroup_over_the_invocation_limit,
    invalid_wgsl,
    color_target_of_another_scalar_type,
    vertex_attribute_the_shader_reads_is_missing,
    vertex_attribute_of_the_wrong_type,
    vertex_attribute_past_the_stride,
    render_pipeline_with_sample_count_3,
    depth_stencil_state_with_a_color_format,
    color_target_of_a_non_renderable_format,
    blending_on_a_non_blendable_format,
    get_bind_group_layout_past_max_bind_groups,
    strip_index_format_with_a_list_topology,
    conservative_rasterization_with_line_polygons,
    color_write_mask_with_unknown_bits,
    color_target_without_the_sample_count,
    second_source_blend_factor_on_target_1,
    dual_source_blending_with_two_targets,
    dual_source_blending_without_blend_src_outputs,
    max_blend_operation_with_a_factor_other_than_one,
    depth_test_on_a_stencil_only_format,
    depth_format_without_depth_write_enabled,
    depth_write_without_a_depth_compare,
    stencil_test_on_a_depth_only_format,
    depth_format_without_the_sample_count,
    depth_bias_with_a_line_topology,
    fragment_input_the_vertex_stage_does_not_write,
    fragment_input_wider_than_the_vertex_output,
    fragment_input_interpolated_otherwise,
    fragment_input_sampled_otherwise,
    vertex_output_location_past_the_limit,
    too_many_vertex_outputs_for_a_point_list,
    too_many_fragment_inputs_with_a_built_in,
    fragment_output_location_past_max_color_attachments,
    fragment_depth_write_without_a_depth_attachment,
    get_bind_group_layout_of_an_invalid_pipeline,
];

const COPIES: &[Case] = cases![
    copy_buffer_past_the_source_end,
    copy_buffer_past_the_destination_end,
    copy_buffer_of_an_unaligned_size,
    copy_buffer_at_an_unaligned_offset,
    copy_buffer_to_itself,
    copy_buffer_without_copy_src,
    copy_buffer_without_copy_dst,
    copy_to_texture_with_unaligned_bytes_per_row,
    copy_to_texture_past_its_extent,
    copy_to_texture_from_a_too_small_buffer,
    copy_to_texture_at_an_offset_not_of_the_block_size,
    copy_to_texture_without_copy_dst,
    copy_from_texture_without_copy_src,
    copy_from_texture_mip_past_its_count,
    copy_between_textures_of_different_formats,
    copy_between_textures_past_the_destination,
    copy_between_multisampled_and_single_sampled,
    copy_depth_stencil_with_aspect_all,
    copy_multiple_rows_without_bytes_per_row,
    clear_buffer_at_an_unaligned_offset,
    clear_buffer_past_its_end,
    clear_buffer_without_copy_dst,
    clear_texture_without_the_feature,
];

const COMPUTE_PASSES: &[Case] = cases![
    dispatch_without_a_pipeline,
    dispatch_without_its_bind_group,
    dispatch_past_max_workgroups_per_dimension,
    dispatch_indirect_without_indirect_usage,
    dispatch_indirect_past_the_buffer,
    dispatch_indirect_at_an_unaligned_offset,
    storage_read_write_and_uniform_in_one_dispatch,
    storage_written_and_indirect_in_one_dispatch,
    invalid_compute_pipeline_set,
    unbalanced_debug_group_in_a_compute_pass,
    dispatch_with_a_binding_smaller_than_the_shader_reads,
    set_bind_group_none_with_dynamic_offsets_in_a_compute_pass,
    transition_resources_in_a_compute_pass_in_conflicting_states,
];

const RENDER_PASSES: &[Case] = cases![
    rgba8_pipeline_in_a_bgra8_pass,
    pipeline_with_a_trailing_empty_target,
    pass_with_a_trailing_empty_attachment,
    draw_without_a_pipeline,
    draw_with_a_vertex_slot_left_unbound,
    draw_past_the_vertex_buffer,
    draw_indexed_without_an_index_buffer,
    draw_indexed_past_the_index_buffer,
    strip_index_format_other_than_the_index_buffer,
    draw_indirect_without_indirect_usage,
    draw_indexed_indirect_past_the_buffer,
    vertex_buffer_without_vertex_usage,
    vertex_buffer_at_an_unaligned_offset,
    vertex_buffer_slot_past_the_limit,
    index_buffer_without_index_usage,
    storage_written_and_vertex_buffer_in_one_pass,
    attachments_of_different_sample_counts,
    color_and_depth_of_different_sizes,
    color_texture_as_the_depth_attachment,
    depth_texture_as_a_color_attachment,
    attachment_without_render_attachment_usage,
    attachment_view_of_two_mips,
    pass_without_attachments,
    resolve_target_of_a_single_sampled_attachment,
    depth_pipeline_in_a_pass_without_depth,
    depth_writing_pipeline_in_a_read_only_depth_pass,
    pipeline_of_another_sample_count,
    scissor_rect_past_the_attachment,
    viewport_of_negative_width,
    viewport_depth_range_past_one,
    occlusion_query_in_a_pass_without_a_set,
    multi_draw_indirect_count_without_the_feature,
    too_many_color_attachments,
    draw_after_execute_bundles_reset_the_pipeline,
    draw_past_the_instance_buffer,
    index_buffer_at_an_unaligned_offset,
    draw_indexed_indirect_without_an_index_buffer,
    multi_draw_indirect_past_the_buffer,
    resolve_target_of_another_format,
    resolve_target_of_another_size,
    one_view_as_two_color_attachments,
    attachment_sampled_in_the_same_pass,
    depth_slice_on_a_2d_attachment,
    a_3d_attachment_without_a_depth_slice,
    stencil_ops_on_a_depth_only_attachment,
    transient_attachment_stored,
    transient_depth_attachment_read_only,
    depth_clear_value_past_one,
    cube_view_as_an_attachment,
    attachment_view_of_two_layers,
    depth_attachment_showing_the_depth_aspect_only,
    resolve_target_of_an_unresolvable_format,
    transient_resolve_target,
    set_bind_group_none_with_dynamic_offsets_in_a_render_pass,
    draw_without_the_blend_constant,
];

const RENDER_BUNDLES: &[Case] = cases![
    bundle_draw_without_a_pipeline,
    bundle_pipeline_of_another_format,
    bundle_of_another_format_executed,
    bundle_writing_depth_in_a_read_only_depth_pass,
    bundle_with_a_bind_group_past_the_limit,
    bundle_with_a_depth_format_as_color,
    bundle_with_no_attachments,
    bundle_draw_indexed_without_an_index_buffer,
    bundle_set_bind_group_none_with_dynamic_offsets,
];

const QUERIES: &[Case] = cases![
    query_set_over_the_maximum_count,
    resolve_queries_past_the_set,
    resolve_queries_to_a_misaligned_offset,
    resolve_queries_without_query_resolve_usage,
    resolve_queries_past_the_buffer,
    occlusion_query_index_past_the_set,
    occlusion_query_begun_twice,
    occlusion_query_ended_without_begin,
    timestamp_writes_into_an_occlusion_set,
    timestamp_write_index_past_the_set,
    same_timestamp_index_at_both_ends,
    timestamp_set_as_the_occlusion_set,
    write_timestamp_on_the_encoder_without_the_feature,
    write_timestamp_in_a_compute_pass_without_the_feature,
    write_timestamp_in_a_render_pass_without_the_feature,
    occlusion_set_destroyed_before_submit,
    timestamp_set_of_a_compute_pass_destroyed_before_submit,
];

const QUEUE_WRITES: &[Case] = cases![
    write_texture_past_its_extent,
    write_texture_from_too_little_data,
    write_texture_without_copy_dst,
    write_texture_to_a_mip_past_its_count,
    write_texture_to_a_depth_texture,
    write_texture_of_a_partial_bc_block,
    write_buffer_past_its_end,
    write_buffer_at_an_unaligned_offset,
    write_buffer_of_an_unaligned_size,
    write_buffer_without_copy_dst,
    write_buffer_with_past_its_end,
    write_buffer_with_to_a_buffer_destroyed_before_the_write,
];

const MAPPING: &[Case] = cases![
    map_read_without_map_read_usage,
    map_write_of_a_map_read_buffer,
    map_twice,
    map_at_an_unaligned_offset,
    get_mapped_range_of_an_unmapped_buffer,
    get_mapped_range_outside_the_mapped_range,
    unmap_of_an_unmapped_buffer,
    submit_with_a_mapped_buffer,
    submit_while_a_map_is_pending,
    write_buffer_to_a_mapped_buffer,
    map_of_a_destroyed_buffer,
    unmap_of_a_destroyed_buffer,
];

const DESTROYED_RESOURCES: &[Case] = cases![
    destroyed_buffer_in_a_copy,
    buffer_destroyed_between_finish_and_submit,
    destroyed_texture_in_a_copy,
    destroyed_texture_as_an_attachment,
    destroyed_buffer_bound_in_a_dispatch,
    group_made_with_a_destroyed_buffer,
    view_of_a_destroyed_texture,
    write_buffer_to_a_destroyed_buffer,
    write_texture_to_a_destroyed_texture,
    destroyed_vertex_buffer_in_a_draw,
    compute_group_replaced_before_dispatch_holds_a_destroyed_buffer,
    transition_resources_of_a_buffer_destroyed_before_submit,
];

const FOREIGN_DEVICE: &[Case] = cases![
    copy_with_a_buffer_of_another_device,
    group_with_a_buffer_of_another_device,
    pipeline_of_another_device_set,
    attachment_of_another_device,
    command_buffer_of_another_device_submitted,
    write_buffer_of_another_device,
    pipeline_layout_with_a_layout_of_another_device,
];

const ENCODER_STATE: &[Case] = cases![
    finish_with_a_pass_still_open,
    second_pass_while_one_is_open,
    copy_while_a_pass_is_open,
    pop_debug_group_without_a_push,
    push_debug_group_without_a_pop,
    pass_debug_group_left_open,
    pass_commands_after_the_encoder_finished,
    submit_of_an_encoder_finished_with_a_pass_open,
    transition_resources_in_conflicting_states,
    transition_resources_of_an_invalid_texture,
];

const IMMEDIATES_AND_DYNAMIC_OFFSETS: &[Case] = cases![
    dynamic_offsets_of_the_wrong_count,
    dynamic_offset_missing,
    dynamic_offset_unaligned,
    dynamic_offset_past_the_buffer,
    dynamic_uniform_offset_unaligned_in_a_render_pass,
    immediates_past_the_layout_size,
    immediates_at_an_unaligned_offset,
    immediates_of_an_unaligned_size,
    immediates_layout_over_the_limit,
    immediates_set_before_a_pipeline,
    dispatch_without_the_immediates_it_reads,
];

const LIMITS: &[Case] = cases![
    pipeline_layout_past_max_bind_groups,
    layout_past_max_storage_buffers_per_stage,
    layout_past_max_uniform_buffers_per_stage,
    uniform_binding_past_max_uniform_binding_size,
    vertex_buffers_past_max_vertex_buffers,
    vertex_stride_past_the_limit,
    texture_array_past_max_layers,
    texture_3d_past_max_dimension,
    dispatch_over_max_workgroups_in_y,
    immediates_layout_without_the_feature,
    timestamp_set_without_the_feature,
];

const BINDING_ARRAYS: &[Case] = cases![
    layout_with_a_binding_array_and_a_dynamic_buffer,
    layout_with_a_binding_array_and_a_uniform_buffer,
];

const TIGHT_LIMITS: &[Case] = cases![
    layout_past_max_buffers_and_acceleration_structures,
    pipeline_past_max_bind_groups_plus_vertex_buffers,
    pipeline_past_max_vertex_stage_buffers,
    draw_past_max_bind_groups_plus_vertex_buffers,
];

#[test]
fn buffers() {
    run_area("buffers", wgpu::Features::empty(), BUFFERS);
}

#[test]
fn textures_and_views() {
    run_area(
        "textures_and_views",
        wgpu::Features::TEXTURE_COMPRESSION_BC,
        TEXTURES_AND_VIEWS,
    );
}

#[test]
fn bind_groups_and_layouts() {
    run_area(
        "bind_groups_and_layouts",
        wgpu::Features::empty(),
        BIND_GROUPS_AND_LAYOUTS,
    );
}

#[test]
fn pipelines() {
    run_area("pipelines", wgpu::Features::DUAL_SOURCE_BLENDING, PIPELINES);
}

#[test]
fn copies() {
    run_area("copies", wgpu::Features::empty(), COPIES);
}

#[test]
fn compute_passes() {
    run_area("compute_passes", wgpu::Features::empty(), COMPUTE_PASSES);
}

#[test]
fn render_passes() {
    run_area("render_passes", wgpu::Features::empty(), RENDER_PASSES);
}

#[test]
fn render_bundles() {
    run_area("render_bundles", wgpu::Features::empty(), RENDER_BUNDLES);
}

#[test]
fn queries() {
    run_area("queries", wgpu::Features::TIMESTAMP_QUERY, QUERIES);
}

#[test]
fn queue_writes() {
    run_area(
        "queue_writes",
        wgpu::Features::TEXTURE_COMPRESSION_BC,
        QUEUE_WRITES,
    );
}

#[test]
fn mapping() {
    run_area("mapping", wgpu::Features::empty(), MAPPING);
}

#[test]
fn destroyed_resources() {
    run_area(
        "destroyed_resources",
        wgpu::Features::empty(),
        DESTROYED_RESOURCES,
    );
}

#[test]
fn foreign_device() {
    run_area("foreign_device", wgpu::Features::empty(), FOREIGN_DEVICE);
}

#[test]
fn encoder_state() {
    run_area("encoder_state", wgpu::Features::empty(), ENCODER_STATE);
}

#[test]
fn immediates_and_dynamic_offsets() {
    run_area(
        "immediates_and_dynamic_offsets",
        wgpu::Features::IMMEDIATES,
        IMMEDIATES_AND_DYNAMIC_OFFSETS,
    );
}

#[test]
fn limits() {
    run_area("limits", wgpu::Features::empty(), LIMITS);
}

/// Default limits with room for binding arrays.
fn binding_array_limits(adapter: &wgpu::Adapter) -> wgpu::Limits {
    wgpu::Limits {
        max_binding_array_elements_per_shader_stage: adapter
            .limits()
            .max_binding_array_elements_per_shader_stage
            .min(64),
        ..area_limits(adapter)
    }
}

#[test]
fn binding_arrays() {
    run_area_with(
        "binding_arrays",
        wgpu::Features::TEXTURE_BINDING_ARRAY,
        binding_array_limits,
        BINDING_ARRAYS,
    );
}

#[test]
fn tight_limits_area() {
    run_area_with(
        "tight_limits",
        wgpu::Features::empty(),
        tight_limits,
        TIGHT_LIMITS,
    );
}

/// Every area with its cases.
const AREAS: &[(&str, &[Case])] = &[
    ("buffers", BUFFERS),
    ("textures_and_views", TEXTURES_AND_VIEWS),
    ("bind_groups_and_layouts", BIND_GROUPS_AND_LAYOUTS),
    ("pipelines", PIPELINES),
    ("copies", COPIES),
    ("compute_passes", COMPUTE_PASSES),
    ("render_passes", RENDER_PASSES),
    ("render_bundles", RENDER_BUNDLES),
    ("queries", QUERIES),
    ("queue_writes", QUEUE_WRITES),
    ("mapping", MAPPING),
    ("destroyed_resources", DESTROYED_RESOURCES),
    ("foreign_device", FOREIGN_DEVICE),
    ("encoder_state", ENCODER_STATE),
    (
        "immediates_and_dynamic_offsets",
        IMMEDIATES_AND_DYNAMIC_OFFSETS,
    ),
    ("limits", LIMITS),
    ("binding_arrays", BINDING_ARRAYS),
    ("tight_limits", TIGHT_LIMITS),
];

#[test]
fn summary() {
    let total: usize = AREAS.iter().map(|(_, cases)| cases.len()).sum();
    for (area, cases) in AREAS {
        println!("misuse area {area}: {} cases", cases.len());
    }
    println!("misuse summary: {total} cases in {} areas", AREAS.len());
    assert!(total >= 70, "the suite has {total} cases");
}
