//! Encoding on several threads at once, keel-wgpu against stock wgpu on the
//! same Vulkan adapter, interleaved round by round: 1, 2, 4 and 8 threads
//! each record a command buffer of 10,000 draws with a bind-group change
//! before each (its own render target), or 10,000 dispatches with a
//! bind-group change before each (its own storage buffer), and the main
//! thread submits them together.
//!
//! Reported per thread count, as median (min–max) over the rounds:
//! - CPU time per draw: the recording threads' own CPU time
//!   (`CLOCK_THREAD_CPUTIME_ID`, from the start of recording to `finish`)
//!   plus the submitting thread's for `Queue::submit`, over all draws;
//!   and the per-round ratio keel-wgpu / stock;
//! - throughput against one thread: draws per wall-clock second from the
//!   moment the threads are released to the return of `submit`, over the
//!   same side's one-thread figure.
//!
//! The GPU's work is waited for outside the timed region.
//!
//! ```text
//! cargo run --release -p bench --bin wgpu_threads -- [--rounds N] [--threads 1,2,4,8] [--draws N]
//!     [--work draws|dispatches] [--profile-keel N]
//! ```
//!
//! `--profile-keel N` runs N keel-wgpu rounds and reports nothing, for a
//! profiler; `KEEL_BENCH_NOOP=1` puts keel-wgpu on keel-hal's noop backend
//! (keel-wgpu's own cost without a driver's; not a comparison).

#[path = "../stats.rs"]
#[allow(dead_code)]
mod stats;
#[path = "../wgpu_scene.rs"]
mod wgpu_scene;

use std::sync::Barrier;
use std::time::Instant;
use wgpu_scene::{thread_cpu_seconds, Scene};

#[derive(Clone, Copy, PartialEq)]
enum Work {
    Draws,
    Dispatches,
}

/// What one side has for each recording thread.
struct Side {
    scene: Scene,
    targets: Vec<wgpu::TextureView>,
    compute: Vec<(Vec<wgpu::BindGroup>, wgpu::BindGroup)>,
}

/// One round's figures: CPU seconds (all threads + submit) and wall seconds.
struct Sample {
    cpu: f64,
    wall: f64,
}

impl Side {
    fn new(scene: Scene, threads: usize) -> Self {
        let targets = (0..threads).map(|_| scene.target()).collect();
        let compute = (0..threads).map(|_| scene.compute_groups()).collect();
        Self {
            scene,
            targets,
            compute,
        }
    }

    fn round(&self, work: Work, threads: usize, per_thread: u32) -> Sample {
        let go = Barrier::new(threads + 1);
        let (buffers, cpu, start) = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let go = &go;
                    s.spawn(move || {
                        go.wait();
                        let cpu = thread_cpu_seconds();
                        let buffer = match work {
                            Work::Draws => self.scene.record_draws(&self.targets[t], per_thread),
                            Work::Dispatches => {
                                let (groups, out) = &self.compute[t];
                                self.scene.record_dispatches(groups, out, per_thread)
                            }
                        };
                        (buffer, thread_cpu_seconds() - cpu)
                    })
                })
                .collect();
            go.wait();
            let start = Instant::now();
            let mut buffers = Vec::with_capacity(threads);
            let mut cpu = 0.0;
            for h in handles {
                let (b, c) = h.join().expect("recording thread");
                buffers.push(b);
                cpu += c;
            }
            (buffers, cpu, start)
        });
        let submit = thread_cpu_seconds();
        self.scene.queue.submit(buffers);
        let cpu = cpu + (thread_cpu_seconds() - submit);
        let wall = start.elapsed().as_secs_f64();
        self.scene.wait();
        Sample { cpu, wall }
    }
}

fn arg<T: std::str::FromStr>(args: &[String], name: &str) -> Option<T> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
}

fn fmt(s: Option<stats::Summary>, unit: f64, digits: usize) -> String {
    match s {
        Some(s) => format!(
            "{:.d$} ({:.d$}–{:.d$})",
            s.median * unit,
            s.min * unit,
            s.max * unit,
            d = digits
        ),
        None => "-".into(),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let rounds: usize = arg(&args, "--rounds").unwrap_or(9).max(1);
    let per_thread: u32 = arg(&args, "--draws").unwrap_or(10_000).max(1);
    let counts: Vec<usize> = arg::<String>(&args, "--threads")
        .unwrap_or_else(|| "1,2,4,8".into())
        .split(',')
        .filter_map(|n| n.parse().ok())
        .filter(|&n| n > 0)
        .collect();
    let most = counts.iter().copied().max().unwrap_or(1);
    let (keel, stock) = wgpu_scene::instances()?;
    let keel = Side::new(Scene::open("keel-wgpu", keel)?, most);
    let stock = Side::new(Scene::open("stock wgpu", stock)?, most);
    println!(
        "wgpu_threads on {}: {rounds} rounds, {per_thread} per thread, {} CPU threads, median (min–max)\n",
        keel.scene.adapter,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
    );
    println!("| workload | threads | keel-wgpu CPU ns/draw | stock CPU ns/draw | keel-wgpu / stock | keel-wgpu throughput vs 1 thread | stock throughput vs 1 thread |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let works: Vec<Work> = match arg::<String>(&args, "--work").as_deref() {
        Some("draws") => vec![Work::Draws],
        Some("dispatches") => vec![Work::Dispatches],
        _ => vec![Work::Draws, Work::Dispatches],
    };
    for work in works {
        let label = match work {
            Work::Draws => "draws + bind-group changes",
            Work::Dispatches => "dispatches + bind-group changes",
        };
        let mut one_thread_wall: Option<(f64, f64)> = None;
        for &threads in &counts {
            // `--profile-keel N`: N keel-wgpu rounds alone, nothing reported
            // (for a profiler; with KEEL_BENCH_NOOP=1, keel-wgpu's own cost).
            if let Some(n) = arg::<usize>(&args, "--profile-keel") {
                for _ in 0..n {
                    keel.round(work, threads, per_thread);
                }
                continue;
            }
            // One warm-up each, not counted.
            keel.round(work, threads, per_thread);
            stock.round(work, threads, per_thread);
            let (mut k, mut s) = (vec![], vec![]);
            for r in 0..rounds {
                if r % 2 == 0 {
                    k.push(keel.round(work, threads, per_thread));
                    s.push(stock.round(work, threads, per_thread));
                } else {
                    s.push(stock.round(work, threads, per_thread));
                    k.push(keel.round(work, threads, per_thread));
                }
            }
            let draws = (threads as f64) * f64::from(per_thread);
            let per_draw = |v: &[Sample]| -> Vec<f64> { v.iter().map(|x| x.cpu / draws).collect() };
            let ratios: Vec<f64> = k.iter().zip(&s).map(|(a, b)| a.cpu / b.cpu).collect();
            // Throughput = draws / wall; against one thread's median.
            let median_wall =
                |v: &[Sample]| stats::summarize(&v.iter().map(|x| x.wall).collect::<Vec<_>>());
            let (kw, sw) = (median_wall(&k), median_wall(&s));
            if threads == 1 {
                one_thread_wall = kw.zip(sw).map(|(a, b)| (a.median, b.median));
            }
            let scaling = |v: &[Sample], one: Option<f64>| -> String {
                let Some(one) = one else { return "-".into() };
                let xs: Vec<f64> = v.iter().map(|x| threads as f64 * one / x.wall).collect();
                fmt(stats::summarize(&xs), 1.0, 2)
            };
            println!(
                "| {label} | {threads} | {} | {} | {} | {} | {} |",
                fmt(stats::summarize(&per_draw(&k)), 1e9, 0),
                fmt(stats::summarize(&per_draw(&s)), 1e9, 0),
                fmt(stats::summarize(&ratios), 1.0, 2),
                scaling(&k, one_thread_wall.map(|w| w.0)),
                scaling(&s, one_thread_wall.map(|w| w.1)),
            );
        }
    }
    Ok(())
}
