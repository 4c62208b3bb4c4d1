//! Promises wgpu makes to every program, kept on keel-wgpu: objects are
//! checked against the device they are used on, new memory reads as zeros,
//! queue writes take their data at the call, compressed small mips copy
//! with their physical size, error scopes are per thread, and what keel-hal
//! refuses at submit reaches the program.
//!
//! Each test runs on keel-wgpu's noop and Vulkan backends (lavapipe here;
//! skipped with a line saying why where there is no adapter), with the
//! validation layer on: the instance must count zero validation messages at
//! the end and every keel-hal object must be gone. Each runs on stock wgpu
//! (wgpu-core on Vulkan) too, with the same assertions: a wrong program
//! gets the error stock wgpu gives, and a correct one stock's results.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

mod common;
use common::*;

fn buffer(device: &wgpu::Device, size: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size,
        usage,
        mapped_at_creation: false,
    })
}

/// Reads `size` bytes of `src` at `offset` through a readback buffer.
fn read_buffer(gpu: &Gpu, src: &wgpu::Buffer, offset: u64, size: u64) -> Vec<u8> {
    let readback = buffer(
        &gpu.device,
        size,
        wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
    );
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(src, offset, &readback, 0, size);
    gpu.queue.submit([encoder.finish()]);
    map_read(gpu, &readback)
}

fn map_read(gpu: &Gpu, readback: &wgpu::Buffer) -> Vec<u8> {
    readback
        .slice(..)
        .map_async(wgpu::MapMode::Read, |r| r.expect("mapped"));
    gpu.device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("poll");
    let bytes = readback
        .slice(..)
        .get_mapped_range()
        .expect("mapped range")
        .to_vec();
    readback.unmap();
    bytes
}

// ---------------------------------------------------------------------------
// Objects of another device

const COMPUTE: &str = "
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@compute @workgroup_size(1) fn main() { data[0] = 1u; }
";

fn storage_layout(device: &wgpu::Device) -> wgpu::BindGroupLayout {
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: None,
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: false },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }],
    })
}

fn assert_mismatch(error: Option<String>, what: &str) {
    let error = error.unwrap_or_else(|| panic!("{what}: another device's object was accepted"));
    assert!(error.contains("doesn't match Device"), "{what}: {error}");
}

#[test]
fn objects_of_another_device_are_validation_errors() {
    each_backend(wgpu::Features::empty(), |a| {
        // Device B: a second device of the same instance and adapter (the
        // case wgpu defines: objects of two instances are not comparable
        // on stock wgpu, whose ids index one instance's tables).
        let adapter =
            pollster::block_on(a.instance.request_adapter(&Default::default())).expect("adapter");
        let (device_b, _queue_b) =
            pollster::block_on(adapter.request_device(&Default::default())).expect("device B");
        let usage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::INDIRECT;
        let foreign = buffer(&device_b, 256, usage);
        let own = buffer(&a.device, 256, usage);
        let foreign_layout = storage_layout(&device_b);
        let layout = storage_layout(&a.device);
        let module_b = device_b.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: None,
            source: wgpu::ShaderSource::Wgsl(COMPUTE.into()),
        });

        // A bind group of A with B's buffer: the crash this test was
        // written for.
        assert_mismatch(
            caught(&a.device, || {
                let _ = a.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &layout,
                    entries: &[wgpu::BindGroupEntry {
                        binding: 0,
                        resource: foreign.as_entire_binding(),
                    }],
                });
            }),
            "create_bind_group with a buffer",
        );
        // ... with B's layout.
        assert_mismatch(
            caught(&a.device, || {
                let _ = a.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &foreign_layout,
                    entries: &[wgpu::BindGroupEntry {
                        binding: 0,
                        resource: own.as_entire_binding(),
                    }],
                });
            }),
            "create_bind_group with a layout",
        );
        // A pipeline layout with B's group layout; a pipeline with B's module.
        assert_mismatch(
            caught(&a.device, || {
                let _ = a
                    .device
                    .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                        label: None,
                        bind_group_layouts: &[Some(&foreign_layout)],
                        immediate_size: 0,
                    });
            }),
            "create_pipeline_layout",
        );
        assert_mismatch(
            caught(&a.device, || {
                let _ = a
                    .device
                    .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                        label: None,
                        layout: None,
                        module: &module_b,
                        entry_point: None,
                        compilation_options: Default::default(),
                        cache: None,
                    });
            }),
            "create_compute_pipeline",
        );
        // Commands: a copy, a clear, an indirect dispatch with B's buffer,
        // and a bind group of B set in A's pass.
        assert_mismatch(
            caught(&a.device, || {
                let mut encoder = a.device.create_command_encoder(&Default::default());
                encoder.copy_buffer_to_buffer(&foreign, 0, &own, 0, 64);
                let _ = encoder.finish();
            }),
            "copy_buffer_to_buffer",
        );
        assert_mismatch(
            caught(&a.device, || {
                let mut encoder = a.device.create_command_encoder(&Default::default());
                encoder.clear_buffer(&foreign, 0, None);
                let _ = encoder.finish();
            }),
            "clear_buffer",
        );
        let group_b = device_b.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &foreign_layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: foreign.as_entire_binding(),
            }],
        });
        assert_mismatch(
            caught(&a.device, || {
                let mut encoder = a.device.create_command_encoder(&Default::default());
                {
                    let mut pass = encoder.begin_compute_pass(&Default::default());
                    pass.set_bind_group(0, &group_b, &[]);
                    pass.dispatch_workgroups_indirect(&foreign, 0);
                }
                let _ = encoder.finish();
            }),
            "set_bind_group",
        );
        // Queue writes and a command buffer of B submitted on A.
        assert_mismatch(
            caught(&a.device, || a.queue.write_buffer(&foreign, 0, &[1; 16])),
            "write_buffer",
        );
        let encoder = device_b.create_command_encoder(&Default::default());
        let finished = encoder.finish();
        assert_mismatch(
            caught(&a.device, || {
                a.queue.submit([finished]);
            }),
            "submit",
        );
        // A's own objects still work: a write and a read back.
        a.queue.write_buffer(&own, 0, &[7; 16]);
        assert_eq!(read_buffer(a, &own, 0, 16), [7; 16]);
        drop((foreign, foreign_layout, module_b, group_b));
        if a.backend != Backend::Stock {
            assert_eq!(keel_wgpu::live_counts(&device_b), Some(Default::default()));
        }
    });
}

// ---------------------------------------------------------------------------
// Error scopes

/// A buffer descriptor wgpu refuses (MAP_READ with STORAGE).
fn refused_buffer(device: &wgpu::Device) {
    let _ = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 64,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
}

#[test]
fn error_scopes_are_per_thread() {
    each_backend(wgpu::Features::empty(), |gpu| {
        let uncaptured = Arc::new(AtomicUsize::new(0));
        let count = uncaptured.clone();
        gpu.device.on_uncaptured_error(Arc::new(move |_| {
            count.fetch_add(1, Ordering::SeqCst);
        }));
        // This thread's scope does not catch another thread's error: that
        // one has no scope, so it is uncaptured.
        let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
        std::thread::scope(|s| {
            s.spawn(|| refused_buffer(&gpu.device));
        });
        assert!(pollster::block_on(scope.pop()).is_none(), "{}", gpu.name);
        assert_eq!(uncaptured.load(Ordering::SeqCst), 1, "{}", gpu.name);
        // The other thread's own scope catches its error, and this
        // thread's, open meanwhile, stays empty.
        let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let theirs = std::thread::scope(|s| {
            s.spawn(|| {
                let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
                refused_buffer(&gpu.device);
                pollster::block_on(scope.pop()).is_some()
            })
            .join()
            .expect("thread")
        });
        assert!(
            theirs,
            "{}: the other thread's scope caught nothing",
            gpu.name
        );
        assert!(pollster::block_on(scope.pop()).is_none(), "{}", gpu.name);
        assert_eq!(uncaptured.load(Ordering::SeqCst), 1, "{}", gpu.name);
    });
}

/// The panic message of `f`, which must panic.
fn panic_message(f: impl FnOnce() + Send) -> String {
    std::thread::scope(|s| {
        let payload = s.spawn(f).join().expect_err("must panic");
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

#[test]
fn mismatched_pops_are_what_wgpu_says() {
    each_backend(wgpu::Features::empty(), |gpu| {
        // Out of order: the outer guard popped while the inner is open.
        // (On its own thread: the inner scope is left open there, as in
        // wgpu, and that thread's scopes go with it.)
        let message = panic_message(|| {
            let outer = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
            let inner = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
            drop(outer.pop());
            drop(inner);
        });
        assert!(message.contains("popped in reverse order"), "{message}");
        // Nested scopes of one thread pop in order, each with its error.
        let outer = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let inner = gpu.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        refused_buffer(&gpu.device);
        assert!(pollster::block_on(inner.pop()).is_none(), "{}", gpu.name);
        assert!(pollster::block_on(outer.pop()).is_some(), "{}", gpu.name);
        // Nothing is left open: an error now reaches the handler.
        let seen = Arc::new(AtomicUsize::new(0));
        let count = seen.clone();
        gpu.device.on_uncaptured_error(Arc::new(move |_| {
            count.fetch_add(1, Ordering::SeqCst);
        }));
        refused_buffer(&gpu.device);
        assert_eq!(seen.load(Ordering::SeqCst), 1, "{}", gpu.name);
    });
}

// ---------------------------------------------------------------------------
// Queue writes, then destroy

fn texture(
    device: &wgpu::Device,
    format: wgpu::TextureFormat,
    size: wgpu::Extent3d,
    mips: u32,
    samples: u32,
    usage: wgpu::TextureUsages,
) -> wgpu::Texture {
    device.create_texture(&wgpu::TextureDescriptor {
        label: None,
        size,
        mip_level_count: mips,
        sample_count: samples,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage,
        view_formats: &[],
    })
}

fn extent(width: u32, height: u32) -> wgpu::Extent3d {
    wgpu::Extent3d {
        width,
        height,
        depth_or_array_layers: 1,
    }
}

#[test]
fn a_queue_write_then_destroy_then_submit_is_valid() {
    each_backend(wgpu::Features::empty(), |gpu| {
        let b = buffer(&gpu.device, 256, wgpu::BufferUsages::COPY_DST);
        let t = texture(
            &gpu.device,
            wgpu::TextureFormat::Rgba8Unorm,
            extent(4, 4),
            1,
            1,
            wgpu::TextureUsages::COPY_DST,
        );
        let error = caught(&gpu.device, || {
            gpu.queue.write_buffer(&b, 0, &[1; 64]);
            b.destroy();
            gpu.queue.write_texture(
                t.as_image_copy(),
                &[2; 64],
                wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(16),
                    rows_per_image: None,
                },
                extent(4, 4),
            );
            t.destroy();
            gpu.queue.submit([]);
        });
        assert_eq!(error, None, "{}", gpu.name);
        // Writes to what is still alive, queued beside them, land.
        let live = buffer(
            &gpu.device,
            16,
            wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
        );
        let gone = buffer(&gpu.device, 16, wgpu::BufferUsages::COPY_DST);
        gpu.queue.write_buffer(&gone, 0, &[3; 16]);
        gpu.queue.write_buffer(&live, 0, &[4; 16]);
        gone.destroy();
        assert_eq!(read_buffer(gpu, &live, 0, 16), [4; 16], "{}", gpu.name);
    });
}

// ---------------------------------------------------------------------------
// Workgroup memory

/// Each workgroup first finds its 16 KiB array zeroed (it adds what it
/// found to the output), then fills it with its own pattern, which the next
/// workgroup on the same core must not see.
const WORKGROUP: &str = "
var<workgroup> scratch: array<u32, 4096>;
@group(0) @binding(0) var<storage, read_write> found: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) i: u32, @builtin(workgroup_id) g: vec3<u32>) {
    var sum = 0u;
    for (var k = i; k < 4096u; k += 64u) {
        sum += scratch[k];
    }
    workgroupBarrier();
    for (var k = i; k < 4096u; k += 64u) {
        scratch[k] = 0xdeadbeefu + k + g.x;
    }
    found[g.x * 64u + i] = sum;
}
";

#[test]
fn workgroup_memory_reads_as_zeros() {
    each_backend(wgpu::Features::empty(), |gpu| {
        let groups = 32u32;
        let size = groups as u64 * 64 * 4;
        let found = buffer(
            &gpu.device,
            size,
            wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        );
        let module = gpu
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: None,
                source: wgpu::ShaderSource::Wgsl(WORKGROUP.into()),
            });
        let pipeline = gpu
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: None,
                layout: None,
                module: &module,
                entry_point: None,
                compilation_options: Default::default(),
                cache: None,
            });
        let group = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: found.as_entire_binding(),
            }],
        });
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.dispatch_workgroups(groups, 1, 1);
        }
        gpu.queue.submit([encoder.finish()]);
        let bytes = read_buffer(gpu, &found, 0, size);
        if gpu.backend != Backend::Noop {
            assert!(
                bytes.iter().all(|&b| b == 0),
                "{}: a workgroup found stale memory",
                gpu.name
            );
        }
    });
}

// ---------------------------------------------------------------------------
// Zero-initialisation

/// Rounds of the zero-initialisation sweep: each fills a resource with a
/// pattern, destroys it, waits (so its memory is free for reuse), makes
/// another of the same kind and reads all of it.
const ZERO_ROUNDS: usize = 1000;

/// The kinds of resource the sweep cycles through.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// A device-local buffer, read by a copy.
    Buffer,
    /// A `MAP_READ` buffer, read by mapping it.
    Mapped,
    /// A storage buffer, read by a shader.
    Storage,
    /// A colour texture (`Rgba8Unorm`), read by a copy, every mip.
    Color,
    /// A `Depth32Float` texture, its depth read by a copy.
    Depth,
    /// A `Bc1RgbaUnorm` texture with mips down to 1×1, read by copies of
    /// each mip's physical size (where the adapter has BC).
    Compressed,
    /// A 4× multisampled colour texture, read through a resolve.
    Multisampled,
    /// A storage-only texture (`R32Uint`, no copy usage), read by a shader.
    StorageOnly,
}

const KINDS: [Kind; 8] = [
    Kind::Buffer,
    Kind::Mapped,
    Kind::Storage,
    Kind::Color,
    Kind::Depth,
    Kind::Compressed,
    Kind::Multisampled,
    Kind::StorageOnly,
];

const STORAGE_READ: &str = "
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x < arrayLength(&dst) { dst[id.x] = src[id.x]; }
}
";

const STORAGE_TEXTURE: &str = "
@group(0) @binding(0) var tex: texture_storage_2d<r32uint, read_write>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> fill: u32;
@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let size = textureDimensions(tex);
    if id.x >= size.x || id.y >= size.y { return; }
    if fill != 0u {
        textureStore(tex, id.xy, vec4<u32>(fill));
    } else {
        dst[id.y * size.x + id.x] = textureLoad(tex, id.xy).x;
    }
}
";

/// The sweep's state on one device: shared pipelines, and what it read.
struct Sweep<'g> {
    gpu: &'g Gpu,
    storage_read: wgpu::ComputePipeline,
    storage_texture: wgpu::ComputePipeline,
    executes_shaders: bool,
    bc: bool,
    reads: usize,
}

fn compute_pipeline(device: &wgpu::Device, source: &str) -> wgpu::ComputePipeline {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: None,
        module: &module,
        entry_point: None,
        compilation_options: Default::default(),
        cache: None,
    })
}

impl Sweep<'_> {
    fn submit(&self, f: impl FnOnce(&mut wgpu::CommandEncoder)) {
        let mut encoder = self.gpu.device.create_command_encoder(&Default::default());
        f(&mut encoder);
        self.gpu.queue.submit([encoder.finish()]);
    }

    fn wait(&self) {
        self.gpu
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("poll");
    }

    fn dispatch(
        &self,
        pipeline: &wgpu::ComputePipeline,
        entries: &[wgpu::BindGroupEntry<'_>],
        groups: (u32, u32),
    ) {
        let group = self
            .gpu
            .device
            .create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &pipeline.get_bind_group_layout(0),
                entries,
            });
        self.submit(|e| {
            let mut pass = e.begin_compute_pass(&Default::default());
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.dispatch_workgroups(groups.0, groups.1, 1);
        });
    }

    /// Checks `bytes` are all zero, counting the read.
    fn zero(&mut self, what: String, bytes: &[u8]) {
        self.reads += 1;
        if let Some(i) = bytes.iter().position(|&b| b != 0) {
            panic!(
                "{}: {what}: byte {i} of {} is {:#x}, not zero",
                self.gpu.name,
                bytes.len(),
                bytes[i]
            );
        }
    }

    /// Reads every byte of a buffer of `size` bytes made by `make`.
    fn buffer_round(&mut self, kind: Kind, size: u64) {
        let device = &self.gpu.device;
        let usage = match kind {
            Kind::Buffer => wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            Kind::Mapped => wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            _ => wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        };
        // Fill, destroy, wait: the memory goes back to keel-hal's allocator.
        let old = buffer(device, size, usage);
        self.gpu
            .queue
            .write_buffer(&old, 0, &vec![0xa5; size as usize]);
        self.submit(|_| {});
        old.destroy();
        drop(old);
        self.wait();
        let new = buffer(device, size, usage);
        let bytes = match kind {
            Kind::Buffer => read_buffer(self.gpu, &new, 0, size),
            Kind::Mapped => map_read(self.gpu, &new),
            _ => {
                if !self.executes_shaders {
                    return;
                }
                let out = buffer(
                    device,
                    size,
                    wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                );
                self.dispatch(
                    &self.storage_read,
                    &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: new.as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: out.as_entire_binding(),
                        },
                    ],
                    ((size / 4).div_ceil(64) as u32, 1),
                );
                read_buffer(self.gpu, &out, 0, size)
            }
        };
        self.zero(format!("{kind:?} buffer of {size} bytes"), &bytes);
    }

    /// Copies mip `mip` (its physical size) of `t` out and checks it.
    fn read_mip(&mut self, what: &str, t: &wgpu::Texture, mip: u32, aspect: wgpu::TextureAspect) {
        let format = t.format();
        let (bw, bh) = format.block_dimensions();
        let block = format.block_copy_size(Some(aspect)).expect("copyable") as u64;
        let size = t.size().mip_level_size(mip, t.dimension());
        let size = wgpu::Extent3d {
            width: size.width.next_multiple_of(bw),
            height: size.height.next_multiple_of(bh),
            depth_or_array_layers: t.size().depth_or_array_layers,
        };
        let pitch = (u64::from(size.width / bw) * block).next_multiple_of(256);
        let rows = size.height / bh;
        let bytes = pitch * u64::from(rows) * u64::from(size.depth_or_array_layers);
        let readback = buffer(
            &self.gpu.device,
            bytes,
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        );
        self.submit(|e| {
            e.copy_texture_to_buffer(
                wgpu::TexelCopyTextureInfo {
                    texture: t,
                    mip_level: mip,
                    origin: wgpu::Origin3d::ZERO,
                    aspect,
                },
                wgpu::TexelCopyBufferInfo {
                    buffer: &readback,
                    layout: wgpu::TexelCopyBufferLayout {
                        offset: 0,
                        bytes_per_row: Some(pitch as u32),
                        rows_per_image: Some(rows),
                    },
                },
                size,
            )
        });
        let data = map_read(self.gpu, &readback);
        self.zero(format!("{what} mip {mip} ({size:?})"), &data);
    }

    fn texture_round(&mut self, kind: Kind, side: u32, layers: u32) {
        let device = &self.gpu.device;
        let (format, samples, usage, mips) = match kind {
            Kind::Color => (
                wgpu::TextureFormat::Rgba8Unorm,
                1,
                wgpu::TextureUsages::COPY_SRC | wgpu::TextureUsages::RENDER_ATTACHMENT,
                side.ilog2() + 1,
            ),
            Kind::Depth => (
                wgpu::TextureFormat::Depth32Float,
                1,
                wgpu::TextureUsages::COPY_SRC | wgpu::TextureUsages::RENDER_ATTACHMENT,
                1,
            ),
            Kind::Compressed => (
                wgpu::TextureFormat::Bc1RgbaUnorm,
                1,
                wgpu::TextureUsages::COPY_SRC | wgpu::TextureUsages::COPY_DST,
                side.ilog2() + 1,
            ),
            Kind::Multisampled => (
                wgpu::TextureFormat::Rgba8Unorm,
                4,
                wgpu::TextureUsages::RENDER_ATTACHMENT,
                1,
            ),
            _ => (
                wgpu::TextureFormat::R32Uint,
                1,
                wgpu::TextureUsages::STORAGE_BINDING,
                1,
            ),
        };
        if matches!(kind, Kind::Compressed) && !self.bc {
            return;
        }
        let layers = if samples > 1 || matches!(kind, Kind::StorageOnly) {
            1
        } else {
            layers
        };
        let size = wgpu::Extent3d {
            width: side,
            height: side,
            depth_or_array_layers: layers,
        };
        let make = || texture(device, format, size, mips, samples, usage);
        let view = |t: &wgpu::Texture| t.create_view(&Default::default());
        let one_layer = |t: &wgpu::Texture, mip: u32| {
            t.create_view(&wgpu::TextureViewDescriptor {
                dimension: Some(wgpu::TextureViewDimension::D2),
                base_mip_level: mip,
                mip_level_count: Some(1),
                array_layer_count: Some(1),
                ..Default::default()
            })
        };
        // Fill with a pattern, destroy, wait.
        let old = make();
        match kind {
            Kind::Color => self.submit(|e| {
                for mip in 0..mips {
                    let v = one_layer(&old, mip);
                    let _ = e.begin_render_pass(&wgpu::RenderPassDescriptor {
                        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                            view: &v,
                            depth_slice: None,
                            resolve_target: None,
                            ops: wgpu::Operations {
                                load: wgpu::LoadOp::Clear(wgpu::Color::WHITE),
                                store: wgpu::StoreOp::Store,
                            },
                        })],
                        ..Default::default()
                    });
                }
            }),
            Kind::Depth => self.submit(|e| {
                let v = one_layer(&old, 0);
                let _ = e.begin_render_pass(&wgpu::RenderPassDescriptor {
                    depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                        view: &v,
                        depth_ops: Some(wgpu::Operations {
                            load: wgpu::LoadOp::Clear(0.75),
                            store: wgpu::StoreOp::Store,
                        }),
                        stencil_ops: None,
                    }),
                    ..Default::default()
                });
            }),
            Kind::Compressed => {
                for mip in 0..mips {
                    let blocks = (side >> mip).max(1).div_ceil(4);
                    self.gpu.queue.write_texture(
                        wgpu::TexelCopyTextureInfo {
                            texture: &old,
                            mip_level: mip,
                            origin: wgpu::Origin3d::ZERO,
                            aspect: wgpu::TextureAspect::All,
                        },
                        &vec![0x5a; (blocks * blocks * 8 * layers) as usize],
                        wgpu::TexelCopyBufferLayout {
                            offset: 0,
                            bytes_per_row: Some(blocks * 8),
                            rows_per_image: Some(blocks),
                        },
                        wgpu::Extent3d {
                            width: blocks * 4,
                            height: blocks * 4,
                            depth_or_array_layers: layers,
                        },
                    );
                }
                self.submit(|_| {});
            }
            Kind::Multisampled => self.submit(|e| {
                let v = view(&old);
                let _ = e.begin_render_pass(&wgpu::RenderPassDescriptor {
                    color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                        view: &v,
                        depth_slice: None,
                        resolve_target: None,
                        ops: wgpu::Operations {
                            load: wgpu::LoadOp::Clear(wgpu::Color::WHITE),
                            store: wgpu::StoreOp::Store,
                        },
                    })],
                    ..Default::default()
                });
            }),
            _ => {
                let fill = buffer(
                    device,
                    4,
                    wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                );
                self.gpu
                    .queue
                    .write_buffer(&fill, 0, &0xa5a5_a5a5u32.to_le_bytes());
                let out = buffer(device, 4, wgpu::BufferUsages::STORAGE);
                let v = view(&old);
                self.storage_texture_pass(&v, &out, &fill, side);
            }
        }
        old.destroy();
        drop(old);
        self.wait();

        let new = make();
        let what = format!("{kind:?} {side}×{side}×{layers}");
        match kind {
            Kind::Color | Kind::Compressed => {
                for mip in 0..mips {
                    self.read_mip(&what, &new, mip, wgpu::TextureAspect::All);
                }
            }
            Kind::Depth => self.read_mip(&what, &new, 0, wgpu::TextureAspect::DepthOnly),
            Kind::Multisampled => {
                // Load (no clear) and resolve: the resolve holds the
                // average of the samples, zero if every sample is.
                let resolved = texture(
                    device,
                    format,
                    size,
                    1,
                    1,
                    wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
                );
                let (v, r) = (view(&new), view(&resolved));
                self.submit(|e| {
                    let _ = e.begin_render_pass(&wgpu::RenderPassDescriptor {
                        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                            view: &v,
                            depth_slice: None,
                            resolve_target: Some(&r),
                            ops: wgpu::Operations {
                                load: wgpu::LoadOp::Load,
                                store: wgpu::StoreOp::Discard,
                            },
                        })],
                        ..Default::default()
                    });
                });
                if self.executes_shaders {
                    self.read_mip(&what, &resolved, 0, wgpu::TextureAspect::All);
                }
            }
            _ => {
                if !self.executes_shaders {
                    return;
                }
                let fill = buffer(device, 4, wgpu::BufferUsages::UNIFORM);
                let bytes = u64::from(side * side * 4);
                let out = buffer(
                    device,
                    bytes,
                    wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                );
                let v = view(&new);
                self.storage_texture_pass(&v, &out, &fill, side);
                let data = read_buffer(self.gpu, &out, 0, bytes);
                self.zero(what, &data);
            }
        }
    }

    fn storage_texture_pass(
        &self,
        view: &wgpu::TextureView,
        out: &wgpu::Buffer,
        fill: &wgpu::Buffer,
        side: u32,
    ) {
        self.dispatch(
            &self.storage_texture,
            &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::TextureView(view),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: out.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: fill.as_entire_binding(),
                },
            ],
            (side.div_ceil(8), side.div_ceil(8)),
        );
    }
}

#[test]
fn new_memory_reads_as_zeros() {
    each_backend_with(
        wgpu::Features::empty(),
        wgpu::Features::TEXTURE_COMPRESSION_BC,
        |gpu| {
            let mut sweep = Sweep {
                gpu,
                storage_read: compute_pipeline(&gpu.device, STORAGE_READ),
                storage_texture: compute_pipeline(&gpu.device, STORAGE_TEXTURE),
                executes_shaders: gpu.backend != Backend::Noop,
                bc: gpu
                    .device
                    .features()
                    .contains(wgpu::Features::TEXTURE_COMPRESSION_BC),
                reads: 0,
            };
            if !sweep.bc {
                eprintln!("{}: no BC formats: the compressed rounds skip", gpu.name);
            }
            let buffer_sizes = [4u64, 256, 4 << 10, 60 << 10, 1 << 20];
            let texture_sides = [1u32, 4, 16, 64, 128];
            for round in 0..ZERO_ROUNDS {
                let kind = KINDS[round % KINDS.len()];
                let variant = round / KINDS.len();
                match kind {
                    Kind::Buffer | Kind::Mapped | Kind::Storage => {
                        let size = buffer_sizes[variant % buffer_sizes.len()];
                        sweep.buffer_round(kind, size)
                    }
                    _ => {
                        let side = texture_sides[variant % texture_sides.len()];
                        let side = if matches!(kind, Kind::Compressed) {
                            side.max(4)
                        } else {
                            side
                        };
                        sweep.texture_round(kind, side, 1 + (variant % 3) as u32)
                    }
                }
            }
            eprintln!(
                "{}: {ZERO_ROUNDS} rounds, {} reads, every byte zero",
                gpu.name, sweep.reads
            );
            assert!(
                sweep.reads >= ZERO_ROUNDS / 2,
                "{}: too few reads",
                gpu.name
            );
        },
    );
}

// ---------------------------------------------------------------------------
// Compressed small mips

#[test]
fn compressed_small_mips_copy_with_their_physical_size() {
    each_backend_with(
        wgpu::Features::empty(),
        wgpu::Features::TEXTURE_COMPRESSION_BC,
        |gpu| {
            let format = wgpu::TextureFormat::Bc7RgbaUnorm;
            if !gpu
                .device
                .features()
                .contains(wgpu::Features::TEXTURE_COMPRESSION_BC)
            {
                eprintln!("skip {}: no TEXTURE_COMPRESSION_BC", gpu.name);
                return;
            }
            let mips = 5; // 16, 8, 4, 2, 1
            let t = texture(
                &gpu.device,
                format,
                extent(16, 16),
                mips,
                1,
                wgpu::TextureUsages::COPY_DST | wgpu::TextureUsages::COPY_SRC,
            );
            let layout = |blocks: u32| wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(blocks * 16),
                rows_per_image: None,
            };
            let at = |mip: u32| wgpu::TexelCopyTextureInfo {
                texture: &t,
                mip_level: mip,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            };
            let blocks = |mip: u32| (16u32 >> mip).max(1).div_ceil(4);
            let data = |mip: u32| -> Vec<u8> {
                (0..blocks(mip) * blocks(mip) * 16)
                    .map(|i| (i as u8).wrapping_mul(7).wrapping_add(mip as u8 + 1))
                    .collect()
            };
            let error = caught(&gpu.device, || {
                for mip in 0..mips {
                    let b = blocks(mip);
                    gpu.queue
                        .write_texture(at(mip), &data(mip), layout(b), extent(b * 4, b * 4));
                }
            });
            assert_eq!(
                error, None,
                "{}: physical extents are what wgpu asks",
                gpu.name
            );
            for mip in 0..mips {
                let b = blocks(mip);
                let readback = buffer(
                    &gpu.device,
                    u64::from(b * 256),
                    wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                );
                let mut encoder = gpu.device.create_command_encoder(&Default::default());
                encoder.copy_texture_to_buffer(
                    at(mip),
                    wgpu::TexelCopyBufferInfo {
                        buffer: &readback,
                        layout: wgpu::TexelCopyBufferLayout {
                            offset: 0,
                            bytes_per_row: Some(256),
                            rows_per_image: None,
                        },
                    },
                    extent(b * 4, b * 4),
                );
                gpu.queue.submit([encoder.finish()]);
                let bytes = map_read(gpu, &readback);
                let row = (b * 16) as usize;
                let got: Vec<u8> = bytes.chunks(256).flat_map(|r| r[..row].to_vec()).collect();
                assert_eq!(got, data(mip), "{}: mip {mip}", gpu.name);
            }
            // The logical size of a small mip is not whole blocks; past the
            // physical size is outside: both wgpu's validation errors.
            let error = caught(&gpu.device, || {
                gpu.queue
                    .write_texture(at(3), &[0; 16], layout(1), extent(2, 2))
            })
            .expect("a 2×2 copy of a BC mip is refused");
            assert!(error.contains("multiple of block width"), "{error}");
            let error = caught(&gpu.device, || {
                gpu.queue
                    .write_texture(at(4), &[0; 32], layout(2), extent(8, 4))
            })
            .expect("an 8×4 copy into a 4×4 physical mip is refused");
            assert!(error.contains("overrunning the bounds"), "{error}");
        },
    );
}

// ---------------------------------------------------------------------------
// Refusals reach the program

const VERTEX_PULL: &str = "
@vertex fn vs(@location(0) p: vec2<f32>) -> @builtin(position) vec4<f32> {
    return vec4<f32>(p, 0.0, 1.0);
}
@fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }
";

#[test]
fn what_keel_hal_refuses_reaches_the_program() {
    each_backend(wgpu::Features::empty(), |gpu| {
        let device = &gpu.device;
        // A dispatch over the limit: keel-wgpu's check, wgpu's words.
        let limit = device.limits().max_compute_workgroups_per_dimension;
        let pipeline = compute_pipeline(device, COMPUTE);
        let data = buffer(device, 16, wgpu::BufferUsages::STORAGE);
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: data.as_entire_binding(),
            }],
        });
        let error = caught(device, || {
            let mut encoder = device.create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                pass.set_pipeline(&pipeline);
                pass.set_bind_group(0, &group, &[]);
                pass.dispatch_workgroups(limit + 1, 1, 1);
            }
            let _ = encoder.finish();
        })
        .expect("a dispatch over the limit is refused at finish");
        assert!(error.contains("must be less or equal to"), "{error}");
        // A count draw without MULTI_DRAW_INDIRECT_COUNT: refused at finish.
        let target = texture(
            device,
            wgpu::TextureFormat::Rgba8Unorm,
            extent(4, 4),
            1,
            1,
            wgpu::TextureUsages::RENDER_ATTACHMENT,
        );
        let view = target.create_view(&Default::default());
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: None,
            source: wgpu::ShaderSource::Wgsl(VERTEX_PULL.into()),
        });
        let attributes = wgpu::vertex_attr_array![0 => Float32x2];
        let render = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: None,
            layout: None,
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: None,
                compilation_options: Default::default(),
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: 8,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &attributes,
                })],
            },
            primitive: Default::default(),
            depth_stencil: None,
            multisample: Default::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: None,
                compilation_options: Default::default(),
                targets: &[Some(wgpu::TextureFormat::Rgba8Unorm.into())],
            }),
            multiview_mask: None,
            cache: None,
        });
        let indirect = buffer(device, 64, wgpu::BufferUsages::INDIRECT);
        let pass = |f: &dyn Fn(&mut wgpu::RenderPass<'_>)| {
            let mut encoder = device.create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                    color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                        view: &view,
                        depth_slice: None,
                        resolve_target: None,
                        ops: Default::default(),
                    })],
                    ..Default::default()
                });
                pass.set_pipeline(&render);
                f(&mut pass);
            }
            encoder.finish()
        };
        let vertices = buffer(device, 64, wgpu::BufferUsages::VERTEX);
        let error = caught(device, || {
            let _ = pass(&|p| {
                p.set_vertex_buffer(0, vertices.slice(..));
                p.multi_draw_indirect_count(&indirect, 0, &indirect, 32, 1)
            });
        })
        .expect("a count draw without its feature is refused");
        assert!(error.contains("MULTI_DRAW_INDIRECT_COUNT"), "{error}");
        // A draw without the vertex buffer its pipeline reads, an indexed
        // draw without an index buffer: wgpu's errors (they used to reach
        // the driver: a validation error on Vulkan, nothing on noop).
        let error = caught(device, || {
            let buffer = pass(&|p| p.draw(0..3, 0..1));
            gpu.queue.submit([buffer]);
        })
        .expect("a draw without its vertex buffer is refused");
        assert!(
            error.contains("requires vertex buffer 0 to be set"),
            "{error}"
        );
        let error = caught(device, || {
            let buffer = pass(&|p| {
                p.set_vertex_buffer(0, vertices.slice(..));
                p.draw_indexed(0..3, 0, 0..1)
            });
            gpu.queue.submit([buffer]);
        })
        .expect("an indexed draw without an index buffer is refused");
        assert!(error.contains("Index buffer must be set"), "{error}");
        gpu.device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("poll");
    });
}

/// Buffers are tracked per range: a write of part of a new buffer leaves
/// the rest reading zeros, whether the write is the first use (a queue
/// write, a copy, a clear) and the read comes after, or both are in one
/// submit; memory is reused from a destroyed, patterned buffer each time.
#[test]
fn partial_writes_leave_the_rest_zero() {
    each_backend(wgpu::Features::empty(), |gpu| {
        let usage = wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let size = 4096u64;
        for round in 0..24u64 {
            let old = buffer(&gpu.device, size, usage);
            gpu.queue.write_buffer(&old, 0, &vec![0xee; size as usize]);
            gpu.queue.submit([]);
            old.destroy();
            drop(old);
            gpu.device
                .poll(wgpu::PollType::wait_indefinitely())
                .expect("poll");
            let b = buffer(&gpu.device, size, usage);
            let (start, len) = (round * 64 % 2048, 256 + round * 32);
            let mut expected = vec![0u8; size as usize];
            match round % 3 {
                0 => gpu.queue.write_buffer(&b, start, &vec![7; len as usize]),
                1 => {
                    let src = buffer(&gpu.device, len, usage);
                    gpu.queue.write_buffer(&src, 0, &vec![7; len as usize]);
                    let mut encoder = gpu.device.create_command_encoder(&Default::default());
                    encoder.copy_buffer_to_buffer(&src, 0, &b, start, len);
                    gpu.queue.submit([encoder.finish()]);
                }
                _ => {
                    // A clear is a write of zeros: the bytes around it
                    // must read zero too.
                    let mut encoder = gpu.device.create_command_encoder(&Default::default());
                    encoder.clear_buffer(&b, start, Some(len));
                    gpu.queue.submit([encoder.finish()]);
                }
            }
            if round % 3 != 2 {
                expected[start as usize..(start + len) as usize].fill(7);
            }
            assert!(
                read_buffer(gpu, &b, 0, size) == expected,
                "{}: round {round}: {start}+{len}",
                gpu.name
            );
        }
    });
}

// ---------------------------------------------------------------------------
// Indirect dispatches

const COUNT_WORKGROUPS: &str = "
@group(0) @binding(0) var<storage, read_write> total: atomic<u32>;
@compute @workgroup_size(1) fn main() { atomicAdd(&total, 1u); }
";

const WRITE_COUNTS: &str = "
@group(0) @binding(0) var<storage, read_write> args: array<u32>;
@compute @workgroup_size(1) fn main() { args[100] = 4u; args[101] = 1u; args[102] = 1u; }
";

/// Indirect dispatches run the workgroups their buffers name, wherever
/// the counts are (a 4-aligned offset, either side of a 256-byte boundary)
/// and however they were written (a queue write, a shader earlier in the
/// pass), in one command buffer and the next of the same submit; on keel
/// Vulkan (whose counts are checked on the GPU, as wgpu-core's default
/// `VALIDATION_INDIRECT_CALL` does; this harness's stock instance has no
/// flags) one over `max_compute_workgroups_per_dimension` runs none. The
/// layer's synchronisation validation checks the check's barriers.
#[test]
fn indirect_dispatches_run_their_counts() {
    each_backend(wgpu::Features::empty(), |gpu| {
        let device = &gpu.device;
        let count = compute_pipeline(device, COUNT_WORKGROUPS);
        let write = compute_pipeline(device, WRITE_COUNTS);
        let total = buffer(
            device,
            4,
            wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        );
        let args = buffer(
            device,
            1024,
            wgpu::BufferUsages::INDIRECT
                | wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST,
        );
        let over = device.limits().max_compute_workgroups_per_dimension + 1;
        gpu.queue.write_buffer(&args, 4, bytemuck_u32(&[2, 3, 1]));
        gpu.queue.write_buffer(&args, 252, bytemuck_u32(&[1, 1, 5]));
        gpu.queue
            .write_buffer(&args, 600, bytemuck_u32(&[1, over, 1]));
        let group = |pipeline: &wgpu::ComputePipeline, buffer: &wgpu::Buffer| {
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &pipeline.get_bind_group_layout(0),
                entries: &[wgpu::BindGroupEntry {
                    binding: 0,
                    resource: buffer.as_entire_binding(),
                }],
            })
        };
        let count_group = group(&count, &total);
        let write_group = group(&write, &args);
        let mut first = device.create_command_encoder(&Default::default());
        {
            let mut pass = first.begin_compute_pass(&Default::default());
            pass.set_pipeline(&count);
            pass.set_bind_group(0, &count_group, &[]);
            pass.dispatch_workgroups_indirect(&args, 4);
            pass.dispatch_workgroups(1, 1, 1);
            pass.dispatch_workgroups_indirect(&args, 252);
            if gpu.backend == Backend::Vulkan {
                pass.dispatch_workgroups_indirect(&args, 600);
            }
            pass.set_pipeline(&write);
            pass.set_bind_group(0, &write_group, &[]);
            pass.dispatch_workgroups(1, 1, 1);
            pass.set_pipeline(&count);
            pass.set_bind_group(0, &count_group, &[]);
            pass.dispatch_workgroups_indirect(&args, 400);
        }
        let mut second = device.create_command_encoder(&Default::default());
        {
            let mut pass = second.begin_compute_pass(&Default::default());
            pass.set_pipeline(&count);
            pass.set_bind_group(0, &count_group, &[]);
            pass.dispatch_workgroups_indirect(&args, 4);
        }
        gpu.queue.submit([first.finish(), second.finish()]);
        let total = read_buffer(gpu, &total, 0, 4);
        let total = u32::from_le_bytes([total[0], total[1], total[2], total[3]]);
        // Noop runs no shaders: nothing is counted there.
        let expected = if gpu.backend == Backend::Noop {
            0
        } else {
            6 + 1 + 5 + 4 + 6
        };
        assert_eq!(total, expected, "{}", gpu.name);
    });
}

/// Each fragment a point draws adds one: with a 1x1 target, every vertex
/// drawn of every instance counts once.
const COUNT_FRAGMENTS: &str = "
@group(0) @binding(0) var<storage, read_write> total: atomic<u32>;
@vertex fn vs(@location(0) p: vec2f, @location(1) q: vec2f) -> @builtin(position) vec4f {
    return vec4f(p * 0.0 + q * 0.0, 0.0, 1.0);
}
@fragment fn fs() -> @location(0) vec4f {
    atomicAdd(&total, 1u);
    return vec4f(1.0);
}
";

/// Indirect draws are checked on the GPU as wgpu-core checks them: a draw
/// whose vertex, index or instance range ends past what the bound buffers
/// hold, or with a first instance without `INDIRECT_FIRST_INSTANCE`,
/// draws nothing; the others draw what they say. Checked in a pass, in a
/// bundle, and in a multi-draw long enough to need two chunks of checked
/// arguments (the second chunk's draws are checked too).
#[test]
fn indirect_draws_out_of_range_draw_nothing() {
    each_backend(wgpu::Features::empty(), |gpu| {
        let device = &gpu.device;
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: None,
            source: wgpu::ShaderSource::Wgsl(COUNT_FRAGMENTS.into()),
        });
        let layouts = [
            Some(wgpu::VertexBufferLayout {
                array_stride: 8,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &wgpu::vertex_attr_array![0 => Float32x2],
            }),
            Some(wgpu::VertexBufferLayout {
                array_stride: 8,
                step_mode: wgpu::VertexStepMode::Instance,
                attributes: &wgpu::vertex_attr_array![1 => Float32x2],
            }),
        ];
        let format = wgpu::TextureFormat::Rgba8Unorm;
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: None,
            layout: None,
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs"),
                compilation_options: Default::default(),
                buffers: &layouts,
            },
            primitive: wgpu::PrimitiveState {
                topology: wgpu::PrimitiveTopology::PointList,
                ..Default::default()
            },
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
        let total = buffer(
            device,
            4,
            wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        );
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: total.as_entire_binding(),
            }],
        });
        // Four vertices, two instances, six indices.
        let vertices = buffer(device, 32, wgpu::BufferUsages::VERTEX);
        let instances = buffer(device, 16, wgpu::BufferUsages::VERTEX);
        let indices = buffer(
            device,
            24,
            wgpu::BufferUsages::INDEX | wgpu::BufferUsages::COPY_DST,
        );
        // Indexed arguments: one multi-draw of `many` (past one 1 MiB
        // chunk of 20-byte arguments), mostly empty.
        let many = 53_000u32;
        let indexed = buffer(
            device,
            u64::from(many) * 20,
            wgpu::BufferUsages::INDIRECT | wgpu::BufferUsages::COPY_DST,
        );
        let late = 52_500u64;
        gpu.queue
            .write_buffer(&indexed, 0, bytemuck_u32(&[3, 1, 0, 0, 0]));
        gpu.queue.write_buffer(
            &indexed,
            late * 20,
            bytemuck_u32(&[
                6, 2, 0, 0, 0, // 12
                7, 1, 0, 0, 0, // past the indices
                3, 1, 4, 0, 0, // ends past the indices
                1, 3, 0, 0, 0, // past the instances
            ]),
        );
        let plain = buffer(
            device,
            256,
            wgpu::BufferUsages::INDIRECT | wgpu::BufferUsages::COPY_DST,
        );
        gpu.queue.write_buffer(
            &plain,
            0,
            bytemuck_u32(&[
                4, 2, 0, 0, // 8
                5, 1, 0, 0, // past the vertices
                2, 1, 3, 0, // ends past the vertices
                1, 1, 0, 1, // a first instance without the feature
                1, 1, 3, 0, // 1 (in the bundle)
                1, 3, 0, 0, // past the instances (in the bundle)
            ]),
        );
        let target = texture(
            device,
            format,
            extent(1, 1),
            1,
            1,
            wgpu::TextureUsages::RENDER_ATTACHMENT,
        );
        let view = target.create_view(&Default::default());
        let mut bundle =
            device.create_render_bundle_encoder(&wgpu::RenderBundleEncoderDescriptor {
                label: None,
                color_formats: &[Some(format)],
                depth_stencil: None,
                sample_count: 1,
                multiview: None,
            });
        bundle.set_pipeline(&pipeline);
        bundle.set_bind_group(0, &group, &[]);
        bundle.set_vertex_buffer(0, vertices.slice(..));
        bundle.set_vertex_buffer(1, instances.slice(..));
        bundle.draw_indirect(&plain, 64);
        bundle.draw_indirect(&plain, 80);
        let bundle = bundle.finish(&Default::default());
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: None,
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: Default::default(),
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.set_vertex_buffer(0, vertices.slice(..));
            pass.set_vertex_buffer(1, instances.slice(..));
            pass.set_index_buffer(indices.slice(..), wgpu::IndexFormat::Uint32);
            pass.multi_draw_indexed_indirect(&indexed, 0, many);
            for offset in [0, 16, 32, 48] {
                pass.draw_indirect(&plain, offset);
            }
            pass.execute_bundles([&bundle]);
        }
        gpu.queue.submit([encoder.finish()]);
        let total = read_buffer(gpu, &total, 0, 4);
        let total = u32::from_le_bytes([total[0], total[1], total[2], total[3]]);
        let expected = if gpu.backend == Backend::Noop {
            0
        } else {
            3 + 12 + 8 + 1
        };
        assert_eq!(total, expected, "{}", gpu.name);
    });
}

fn bytemuck_u32(words: &[u32]) -> &[u8] {
    bytemuck::cast_slice(words)
}
