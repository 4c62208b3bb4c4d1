//! Peak resident memory of a `Queue::write_buffer` loop, keel-wgpu against
//! stock wgpu on the same Vulkan adapter: 100 writes of 300 MiB into one
//! buffer, each followed by a submit and a wait, as a program streaming a
//! large upload frame after frame does. Each side runs in a process of its
//! own (a child of this one, the sides alternating which goes first), which
//! reports its peak resident set (`VmHWM`) at the end; the source data and
//! the destination buffer are the same on both sides, so the difference is
//! what each keeps for staging.
//!
//! Reported: the median (min–max) peak per side over the rounds, and the
//! per-round ratio keel-wgpu / stock.
//!
//! ```text
//! cargo run --release -p bench --bin wgpu_memory -- [--rounds N] [--writes N] [--mib N]
//! ```

#[path = "../stats.rs"]
#[allow(dead_code)]
mod stats;

use std::process::Command;

fn arg<T: std::str::FromStr>(args: &[String], name: &str) -> Option<T> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
}

/// A `/proc/self/status` field, in KiB.
fn status_kib(field: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The child: one side's loop; prints its peak resident set in KiB.
fn child(side: &str, writes: usize, mib: u64) -> Result<(), String> {
    let instance = match side {
        "keel" => keel_wgpu::instance_with(keel_wgpu::BackendChoice::Vulkan, false)
            .map_err(|e| format!("keel-wgpu: no instance: {e}"))?,
        _ => wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::VULKAN,
            flags: wgpu::InstanceFlags::empty(),
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        }),
    };
    let adapter = pollster::block_on(instance.request_adapter(&Default::default()))
        .map_err(|e| format!("{side}: no adapter: {e}"))?;
    let size = mib << 20;
    if adapter.limits().max_buffer_size < size {
        return Err(format!(
            "{side}: the adapter's max_buffer_size {} is below {mib} MiB",
            adapter.limits().max_buffer_size
        ));
    }
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_limits: wgpu::Limits {
            max_buffer_size: size,
            ..Default::default()
        },
        ..Default::default()
    }))
    .map_err(|e| format!("{side}: no device: {e}"))?;
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    let mut data = vec![0u8; size as usize];
    for i in 0..writes {
        // Touch every page, a different value each write.
        for page in data.chunks_mut(4096) {
            page[0] = i as u8;
        }
        queue.write_buffer(&buffer, 0, &data);
        queue.submit([]);
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| format!("{side}: poll: {e}"))?;
    }
    let peak = status_kib("VmHWM:").ok_or("no VmHWM in /proc/self/status")?;
    println!("peak_kib {peak}");
    Ok(())
}

/// Runs one side's child and returns its peak in MiB.
fn run_child(side: &str, writes: usize, mib: u64) -> Result<f64, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .args([
            "--child",
            side,
            "--writes",
            &writes.to_string(),
            "--mib",
            &mib.to_string(),
        ])
        .output()
        .map_err(|e| format!("{side}: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "{side}: child failed ({}): {text}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    text.lines()
        .find_map(|l| l.strip_prefix("peak_kib "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|kib| kib / 1024.0)
        .ok_or_else(|| format!("{side}: no peak in {text:?}"))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let writes: usize = arg(&args, "--writes").unwrap_or(100).max(1);
    let mib: u64 = arg(&args, "--mib").unwrap_or(300).max(1);
    if let Some(side) = arg::<String>(&args, "--child") {
        return Ok(child(&side, writes, mib)?);
    }
    let rounds: usize = arg(&args, "--rounds").unwrap_or(7).max(1);
    let (mut keel, mut stock) = (vec![], vec![]);
    for r in 0..rounds {
        if r % 2 == 0 {
            keel.push(run_child("keel", writes, mib)?);
            stock.push(run_child("stock", writes, mib)?);
        } else {
            stock.push(run_child("stock", writes, mib)?);
            keel.push(run_child("keel", writes, mib)?);
        }
    }
    let fmt = |s: Option<stats::Summary>, d: usize| match s {
        Some(s) => format!("{:.d$} ({:.d$}–{:.d$})", s.median, s.min, s.max, d = d),
        None => "-".into(),
    };
    let ratios: Vec<f64> = keel.iter().zip(&stock).map(|(k, s)| k / s).collect();
    println!("wgpu_memory: {rounds} rounds, {writes} × write_buffer({mib} MiB) + submit + wait, peak resident MiB, median (min–max)\n");
    println!("| workload | keel-wgpu | stock wgpu | keel-wgpu / stock |");
    println!("|---|---:|---:|---:|");
    println!(
        "| peak RSS, {writes} × write_buffer({mib} MiB) (MiB) | {} | {} | {} |",
        fmt(stats::summarize(&keel), 0),
        fmt(stats::summarize(&stock), 0),
        fmt(stats::summarize(&ratios), 2)
    );
    Ok(())
}
