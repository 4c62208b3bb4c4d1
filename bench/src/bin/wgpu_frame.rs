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
#[path = "../wgpu_scene.rs"]
#[allow(dead_code)]
mod wgpu_scene;

use std::time::Instant;
use wgpu_scene::Scene;

const DRAWS: u32 = 10_000;
const UPLOADS: usize = 1_000;

struct Side {
    scene: Scene,
    view: wgpu::TextureView,
    upload_targets: Vec<wgpu::Buffer>,
}

impl Side {
    fn new(scene: Scene) -> Self {
        let view = scene.target();
        let upload_targets = (0..UPLOADS)
            .map(|_| {
                scene.device.create_buffer(&wgpu::BufferDescriptor {
                    label: None,
                    size: 256,
                    usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::UNIFORM,
                    mapped_at_creation: false,
                })
            })
            .collect();
        Self {
            scene,
            view,
            upload_targets,
        }
    }

    /// Records and submits the 10,000-draw frame; seconds of CPU time.
    fn frame(&self) -> f64 {
        let start = Instant::now();
        let buffer = self.scene.record_draws(&self.view, DRAWS);
        self.scene.queue.submit([buffer]);
        let t = start.elapsed().as_secs_f64();
        self.scene.wait();
        t
    }

    /// 1,000 uploads and the submit carrying them; seconds of CPU time.
    fn uploads(&self, round: usize) -> f64 {
        let data = [round as u8; 256];
        let start = Instant::now();
        for buffer in &self.upload_targets {
            self.scene.queue.write_buffer(buffer, 0, &data);
        }
        self.scene.queue.submit([]);
        let t = start.elapsed().as_secs_f64();
        self.scene.wait();
        t
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
    let (keel, stock) = wgpu_scene::instances()?;
    let keel = Side::new(Scene::open("keel-wgpu", keel)?);
    let stock = Side::new(Scene::open("stock wgpu", stock)?);
    let adapter = keel.scene.adapter.clone();
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
