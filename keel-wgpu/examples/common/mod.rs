//! What every example shares: picking the instance (keel-wgpu on Vulkan or
//! noop, or stock wgpu), opening a device, reading buffers and textures
//! back, and the checks every run ends with. The examples themselves use
//! the plain wgpu API only.

#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// How an example that cannot run on this adapter starts its one line.
pub const SKIPPED: &str = "skipped";

/// Which implementation of wgpu's API runs the example.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    /// keel-wgpu on keel-hal's Vulkan backend.
    KeelVulkan,
    /// keel-wgpu on keel-hal's noop backend (no shader execution).
    KeelNoop,
    /// Stock wgpu (wgpu-core) on Vulkan.
    Stock,
}

impl Which {
    /// From the command line: `--stock`, `--noop`, else keel-wgpu on Vulkan.
    pub fn from_args() -> Self {
        let args: Vec<String> = std::env::args().collect();
        if args.iter().any(|a| a == "--stock") {
            Which::Stock
        } else if args.iter().any(|a| a == "--noop") {
            Which::KeelNoop
        } else {
            Which::KeelVulkan
        }
    }
}

/// An open device and what the checks at the end need.
pub struct Gpu {
    pub which: Which,
    pub instance: wgpu::Instance,
    pub adapter: wgpu::Adapter,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    /// Uncaptured wgpu errors (each is also logged).
    pub errors: Arc<AtomicUsize>,
}

/// Opens `which` with `features` (the example's needs).
pub fn open(which: Which, features: wgpu::Features) -> Result<Gpu, String> {
    let instance = match which {
        Which::KeelVulkan => keel_wgpu::instance_with(keel_wgpu::BackendChoice::Vulkan, true)
            .map_err(|e| e.to_string())?,
        Which::KeelNoop => keel_wgpu::instance_with(keel_wgpu::BackendChoice::Noop, false)
            .map_err(|e| e.to_string())?,
        Which::Stock => wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::VULKAN,
            flags: wgpu::InstanceFlags::VALIDATION,
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        }),
    };
    let adapter = pollster::block_on(instance.request_adapter(&Default::default()))
        .map_err(|e| format!("no adapter: {e}"))?;
    let missing = features - adapter.features();
    if !missing.is_empty() {
        return Err(format!("{SKIPPED}: the adapter lacks {missing:?}"));
    }
    let experimental_features = if features.intersects(wgpu::Features::all_experimental_mask()) {
        // SAFETY: an example that asks for an experimental feature uses it
        // only as wgpu documents it.
        unsafe { wgpu::ExperimentalFeatures::enabled() }
    } else {
        wgpu::ExperimentalFeatures::disabled()
    };
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("example"),
        required_features: features,
        required_limits: adapter.limits(),
        experimental_features,
        ..Default::default()
    }))
    .map_err(|e| format!("no device: {e}"))?;
    let errors = Arc::new(AtomicUsize::new(0));
    let counter = errors.clone();
    device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
        log::error!("wgpu error: {e}");
        counter.fetch_add(1, Ordering::Relaxed);
    }));
    Ok(Gpu {
        which,
        instance,
        adapter,
        device,
        queue,
        errors,
    })
}

/// Copies `size` bytes of `buffer` (COPY_SRC) out through a mapped buffer.
pub fn read_buffer(gpu: &Gpu, buffer: &wgpu::Buffer, size: u64) -> Vec<u8> {
    let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, size);
    gpu.queue.submit([encoder.finish()]);
    map_read(gpu, &staging)
}

/// Maps a MAP_READ buffer and returns its bytes.
pub fn map_read(gpu: &Gpu, buffer: &wgpu::Buffer) -> Vec<u8> {
    let slice = buffer.slice(..);
    slice.map_async(wgpu::MapMode::Read, |r| {
        if let Err(e) = r {
            log::error!("map_async: {e}");
        }
    });
    if let Err(e) = gpu.device.poll(wgpu::PollType::wait_indefinitely()) {
        log::error!("poll: {e}");
    }
    let bytes = match slice.get_mapped_range() {
        Ok(view) => view.to_vec(),
        Err(e) => {
            log::error!("get_mapped_range: {e}");
            Vec::new()
        }
    };
    buffer.unmap();
    bytes
}

/// A 2D texture of `format` and `usage`, `size`×`size`, `mips` levels,
/// `samples` samples.
pub fn texture(
    gpu: &Gpu,
    label: &str,
    size: u32,
    format: wgpu::TextureFormat,
    usage: wgpu::TextureUsages,
    mips: u32,
    samples: u32,
) -> wgpu::Texture {
    gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d {
            width: size,
            height: size,
            depth_or_array_layers: 1,
        },
        mip_level_count: mips,
        sample_count: samples,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage,
        view_formats: &[],
    })
}

/// A colour attachment cleared to `clear` and stored.
pub fn clear_attachment(
    view: &wgpu::TextureView,
    clear: wgpu::Color,
) -> wgpu::RenderPassColorAttachment<'_> {
    wgpu::RenderPassColorAttachment {
        view,
        depth_slice: None,
        resolve_target: None,
        ops: wgpu::Operations {
            load: wgpu::LoadOp::Clear(clear),
            store: wgpu::StoreOp::Store,
        },
    }
}

/// Little-endian bytes of plain values.
pub fn bytes_of_f32(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Reads mip `mip` of a 2D texture with `bytes_per_texel` bytes per
/// texel, rows packed.
pub fn read_mip(gpu: &Gpu, texture: &wgpu::Texture, mip: u32, bytes_per_texel: u32) -> Vec<u8> {
    let (w, h) = (
        (texture.width() >> mip).max(1),
        (texture.height() >> mip).max(1),
    );
    let row = w * bytes_per_texel;
    let padded = row.next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
    let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("mip readback"),
        size: (padded * h) as u64,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    encoder.copy_texture_to_buffer(
        wgpu::TexelCopyTextureInfo {
            texture,
            mip_level: mip,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        wgpu::TexelCopyBufferInfo {
            buffer: &staging,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(padded),
                rows_per_image: None,
            },
        },
        wgpu::Extent3d {
            width: w,
            height: h,
            depth_or_array_layers: 1,
        },
    );
    gpu.queue.submit([encoder.finish()]);
    map_read(gpu, &staging)
        .chunks(padded as usize)
        .flat_map(|r| r[..row as usize].to_vec())
        .collect()
}

/// Reads mip 0 of a 2D texture with `bytes_per_texel` bytes per texel,
/// rows packed.
pub fn read_texture(gpu: &Gpu, texture: &wgpu::Texture, bytes_per_texel: u32) -> Vec<u8> {
    let (w, h) = (texture.width(), texture.height());
    let row = w * bytes_per_texel;
    let padded = row.next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
    let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("texture readback"),
        size: (padded * h) as u64,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    encoder.copy_texture_to_buffer(
        texture.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &staging,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(padded),
                rows_per_image: None,
            },
        },
        texture.size(),
    );
    gpu.queue.submit([encoder.finish()]);
    let bytes = map_read(gpu, &staging);
    bytes
        .chunks(padded as usize)
        .flat_map(|r| r[..row as usize].to_vec())
        .collect()
}

/// The checks every run ends with: no wgpu error, and on keel-wgpu no
/// validation message and no keel-hal object left alive. Consumes the
/// device so everything it made is gone first.
pub fn finish(gpu: Gpu) -> Result<(), String> {
    let errors = gpu.errors.load(Ordering::Relaxed);
    let live = keel_wgpu::live_counts(&gpu.device);
    let Gpu {
        instance,
        adapter,
        device,
        queue,
        ..
    } = gpu;
    drop((device, queue, adapter));
    let validation = keel_wgpu::validation_errors(&instance).unwrap_or(0);
    if errors != 0 {
        return Err(format!("{errors} wgpu errors"));
    }
    if validation != 0 {
        return Err(format!("{validation} validation messages"));
    }
    if let Some(live) = live {
        if live != keel_wgpu::LiveCounts::default() {
            return Err(format!("keel-hal objects left alive: {live:?}"));
        }
    }
    Ok(())
}

/// `main` of every example: opens the device `--stock`/`--noop` ask for,
/// runs, prints a digest of the output, and checks.
pub fn main_with(
    name: &str,
    features: wgpu::Features,
    run: fn(&Gpu) -> Vec<u8>,
) -> Result<(), Box<dyn std::error::Error>> {
    env_logger::init();
    let which = Which::from_args();
    let gpu = match open(which, features) {
        Ok(gpu) => gpu,
        Err(e) if e.starts_with(SKIPPED) => {
            println!("{name} on {which:?}: {e}");
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    let output = run(&gpu);
    let digest = output.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    });
    println!(
        "{name} on {which:?}: {} output bytes, FNV-1a {digest:016x}",
        output.len()
    );
    // The examples test compares keel-wgpu's output with stock wgpu's.
    if let Ok(path) = std::env::var("KEEL_EXAMPLE_OUT") {
        std::fs::write(path, &output)?;
    }
    finish(gpu)?;
    Ok(())
}
