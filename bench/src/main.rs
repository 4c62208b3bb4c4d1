//! keel-hal vs wgpu-hal 30 vs raw `ash` on one Vulkan adapter.
//!
//! ```text
//! cargo run --release -p bench -- [--rounds N] [--smoke] [--json PATH] [--only TEXT]
//! ```
//! Each workload runs on every side, interleaved (keel-hal, wgpu-hal, raw,
//! rotated each round) for N rounds after one warm-up sample per side that
//! is not counted. A counted sample repeats the workload's cycle until 2 ms
//! have passed (`BENCH_MIN_SAMPLE_MS`) and reports the mean. Most workloads report ns per op; the compaction cycle
//! reports several numbers, one row each. Every sample also reports the
//! Vulkan calls its timed region made (`count.rs`: `vkAllocateMemory`,
//! `vkFreeMemory`, `vkCreateQueryPool`, `vkDestroyQueryPool`,
//! `vkAllocateDescriptorSets`), counted the same way on every side.
//! `BENCH_ADAPTER` picks the adapter by a name substring; the raw side
//! chooses it and the others open the adapter of that name.

mod count;
#[cfg(feature = "keel")]
mod keel;
#[cfg(feature = "keel")]
mod keel_accel;
#[cfg(feature = "keel")]
mod keel_external;
mod raw;
mod report;
mod stats;
mod wgpu_hal;
mod wgpu_hal_accel;
mod workload;

use std::path::PathBuf;

use report::{Report, Row};
use workload::{Scale, Side};

struct Args {
    rounds: usize,
    smoke: bool,
    json: PathBuf,
    only: Option<String>,
}

const USAGE: &str =
    "usage: bench [--rounds N (>= 1, default 15)] [--smoke] [--json PATH] [--only TEXT]
  --smoke      2 rounds and tiny iteration counts (for CI)
  --json PATH  where to write the results (default target/bench.json)
  --only TEXT  run only workloads whose name contains TEXT
  env BENCH_ADAPTER=TEXT picks the first Vulkan adapter whose name contains TEXT";

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        rounds: 15,
        smoke: false,
        json: PathBuf::from("target/bench.json"),
        only: None,
    };
    let mut rounds = None;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--rounds" => {
                let n = it
                    .next()
                    .and_then(|n| n.parse::<usize>().ok())
                    .filter(|&n| n >= 1);
                rounds = Some(n.ok_or("--rounds needs a number >= 1")?);
            }
            "--smoke" => args.smoke = true,
            "--json" => args.json = it.next().ok_or("--json needs a path")?.into(),
            "--only" => args.only = Some(it.next().ok_or("--only needs text")?),
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    args.rounds = rounds.unwrap_or(if args.smoke { 2 } else { 15 });
    Ok(args)
}

/// The first item whose name contains `filter` (case-insensitive), or the
/// first item when there is no filter.
pub fn pick_adapter<'a, T>(
    items: &'a [T],
    name: impl Fn(&T) -> &str,
    filter: Option<&str>,
) -> Option<&'a T> {
    match filter {
        None => items.first(),
        Some(f) => {
            let f = f.to_lowercase();
            items.iter().find(|t| name(t).to_lowercase().contains(&f))
        }
    }
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!(
                "{}{USAGE}",
                if e.is_empty() {
                    String::new()
                } else {
                    format!("{e}\n")
                }
            );
            std::process::exit(if e.is_empty() { 0 } else { 2 });
        }
    };
    if let Err(e) = run(&args) {
        eprintln!("bench: {e}");
        std::process::exit(1);
    }
}

/// A sample runs its workload's cycle again until it has taken this long
/// (short cycles, such as 1,000 bind groups at 40 ns each, are otherwise
/// at the mercy of one interrupt), up to [`MAX_CYCLES`] times.
/// `BENCH_MIN_SAMPLE_MS` overrides it (0: one cycle per sample, as a
/// profiler wants).
const MIN_SAMPLE_MS: u64 = 2;
/// The most cycles one sample runs.
const MAX_CYCLES: u32 = 64;

/// One counted sample: the workload's cycle run back to back until
/// the minimum sample time has passed (at least once), its numbers the mean over
/// the cycles; returns them and the cycle count. A cycle that fails or has
/// no numbers ends the sample with that answer.
fn batched_sample(
    side: &mut dyn Side,
    work: &workload::Workload,
) -> (Result<Option<Vec<f64>>, String>, u32) {
    let min = std::time::Duration::from_millis(
        std::env::var("BENCH_MIN_SAMPLE_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(MIN_SAMPLE_MS),
    );
    let start = std::time::Instant::now();
    let mut sums: Vec<f64> = Vec::new();
    let mut cycles = 0;
    while cycles < MAX_CYCLES && (cycles == 0 || start.elapsed() < min) {
        match side.sample_metrics(work) {
            Ok(Some(values)) if cycles == 0 || values.len() == sums.len() => {
                if cycles == 0 {
                    sums = values;
                } else {
                    sums.iter_mut().zip(values).for_each(|(s, v)| *s += v);
                }
                cycles += 1;
            }
            // A different count of numbers: the caller reports it.
            Ok(Some(values)) => return (Ok(Some(values)), cycles.max(1)),
            other => return (other, cycles.max(1)),
        }
    }
    let n = f64::from(cycles);
    (Ok(Some(sums.into_iter().map(|s| s / n).collect())), cycles)
}

/// The sides in column order; a side that cannot start is reported and left out.
fn open_sides(raw: raw::Raw) -> [Option<Box<dyn Side>>; 3] {
    let name = raw.report.name.clone();
    let keel: Option<Box<dyn Side>> = open_keel(&name);
    let wgpu: Option<Box<dyn Side>> = match wgpu_hal::WgpuHal::new(&name) {
        Ok(s) => Some(Box::new(s)),
        Err(e) => {
            eprintln!("wgpu-hal side not run: {e}");
            None
        }
    };
    [keel, wgpu, Some(Box::new(raw))]
}

#[cfg(feature = "keel")]
fn open_keel(name: &str) -> Option<Box<dyn Side>> {
    let side = keel::vulkan_instance()
        .and_then(|instance| keel::Keel::<keel_hal::vulkan::Api>::new(instance, name));
    match side {
        Ok(s) => Some(Box::new(s)),
        Err(e) => {
            eprintln!("keel-hal side not run: {e}");
            None
        }
    }
}

#[cfg(not(feature = "keel"))]
fn open_keel(_name: &str) -> Option<Box<dyn Side>> {
    eprintln!("keel-hal side not built (feature `keel` off)");
    None
}

fn run(args: &Args) -> Result<(), String> {
    let filter = std::env::var("BENCH_ADAPTER").ok();
    let raw = raw::Raw::new(filter.as_deref())?;
    let adapter = raw.report.clone();
    eprintln!("adapter: {} ({})", adapter.name, adapter.driver_info);
    let mut sides = open_sides(raw);
    let opened = [0, 1, 2].map(|i| sides[i].as_ref().map(|s| s.adapter_name().to_owned()));
    if opened.iter().flatten().any(|n| *n != adapter.name) {
        eprintln!("warning: the sides opened different adapters: {opened:?}");
    }

    let scale = if args.smoke {
        Scale::SMOKE
    } else {
        Scale::FULL
    };
    let mut rows = Vec::new();
    for work in scale.workloads() {
        let name = work.to_string();
        if args
            .only
            .as_ref()
            .is_some_and(|o| !name.contains(o.as_str()))
        {
            continue;
        }
        eprintln!("{name}");
        // One row per number the workload reports.
        let metrics = work.metrics();
        let mut group: Vec<Row> = metrics
            .iter()
            .map(|m| Row {
                workload: if m.is_empty() {
                    name.clone()
                } else {
                    format!("{name}: {m}")
                },
                samples: Default::default(),
                errors: Default::default(),
                counts: Default::default(),
                keel_memory: None,
            })
            .collect();
        // Warm-up (not counted), then rounds with the side order rotated.
        for round in 0..=args.rounds {
            for k in 0..3 {
                let i = (k + round) % 3;
                let Some(side) = sides[i].as_mut().filter(|_| group[0].errors[i].is_none()) else {
                    continue;
                };
                count::take_timed();
                let (result, cycles) = if round == 0 {
                    (side.sample_metrics(&work), 1)
                } else {
                    batched_sample(side.as_mut(), &work)
                };
                let calls = count::take_timed().per_cycle(cycles);
                match result {
                    Ok(_) if round == 0 => {}
                    Ok(Some(values)) if values.len() == metrics.len() => {
                        for (row, v) in group.iter_mut().zip(values) {
                            row.samples[i].push(Some(v));
                        }
                        group[0].counts[i].push(calls);
                    }
                    Ok(Some(values)) => {
                        group[0].errors[i] = Some(format!(
                            "{} numbers for {} metrics",
                            values.len(),
                            metrics.len()
                        ))
                    }
                    Ok(None) => group.iter_mut().for_each(|row| row.samples[i].push(None)),
                    Err(e) => group[0].errors[i] = Some(e),
                }
            }
        }
        group[0].keel_memory = sides[0].as_ref().and_then(|s| s.memory_held());
        rows.extend(group);
    }
    drop(sides);

    let report = Report {
        adapter,
        opened,
        date: report::today(),
        rounds: args.rounds,
        smoke: args.smoke,
        rows,
    };
    print!("{}", report.table());
    if let Some(dir) = args.json.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(&args.json, report.json())
        .map_err(|e| format!("{}: {e}", args.json.display()))?;
    eprintln!("wrote {}", args.json.display());
    Ok(())
}
