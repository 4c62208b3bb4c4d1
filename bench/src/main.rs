//! keel-hal vs wgpu-hal 30 vs raw `ash` on one Vulkan adapter.
//!
//! ```text
//! cargo run --release -p bench -- [--rounds N] [--smoke] [--json PATH] [--only TEXT]
//! ```
//! Each workload runs on every side for N rounds after one warm-up cycle
//! per side that is not counted. In a round the sides take turns one cycle
//! at a time (keel-hal, wgpu-hal, raw, in one of the six orders in turn)
//! until each has run for 20 ms (`BENCH_MIN_SAMPLE_MS`; `round.rs`); a
//! side's sample is the mean over its cycles. Most workloads report ns per
//! op; the compaction cycle reports several numbers, one row each. Every
//! sample also reports the Vulkan calls its timed regions made (`count.rs`:
//! `vkAllocateMemory`, `vkFreeMemory`, `vkCreateQueryPool`,
//! `vkDestroyQueryPool`, `vkAllocateDescriptorSets`), counted the same way
//! on every side.
//! `BENCH_ADAPTER` picks the adapter by a name substring; the raw side
//! chooses it and the others open the adapter of that name.

mod count;
#[cfg(feature = "keel")]
mod keel;
#[cfg(feature = "keel")]
mod keel_accel;
#[cfg(feature = "keel")]
mod keel_external;
mod phase;
mod raw;
mod report;
mod round;
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

/// The sides' turns in a round, one per round in turn: all six orders, so
/// over six rounds each side goes first, last, and right after each other
/// side equally often (a cycle's cost can depend on what the cycle before
/// it left behind, such as the heap on lavapipe, where the driver's command
/// memory comes from the process's `malloc`).
const ORDERS: [[usize; 3]; 6] = [
    [0, 1, 2],
    [1, 2, 0],
    [2, 0, 1],
    [0, 2, 1],
    [2, 1, 0],
    [1, 0, 2],
];

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
        // Warm-up (not counted): one cycle per side, one side after the
        // other. Then the rounds, each in the next of the six turn orders,
        // the sides' cycles interleaved within it (`round.rs`).
        for (side, error) in sides.iter_mut().zip(&mut group[0].errors) {
            if let Some(Err(e)) = side.as_mut().map(|s| s.sample_metrics(&work)) {
                *error = Some(e);
            }
        }
        count::take_timed();
        for round in 1..=args.rounds {
            let order: Vec<usize> = ORDERS[round % ORDERS.len()]
                .into_iter()
                .filter(|&i| group[0].errors[i].is_none())
                .collect();
            let samples = round::interleaved(&mut sides, &order, &work);
            for i in order {
                let Some(sample) = &samples[i] else {
                    continue;
                };
                match &sample.result {
                    Ok(Some(values)) if values.len() == metrics.len() => {
                        for (row, v) in group.iter_mut().zip(values) {
                            row.samples[i].push(Some(*v));
                        }
                        group[0].counts[i].push(sample.calls);
                    }
                    Ok(Some(values)) => {
                        group[0].errors[i] = Some(format!(
                            "{} numbers for {} metrics",
                            values.len(),
                            metrics.len()
                        ))
                    }
                    Ok(None) => group.iter_mut().for_each(|row| row.samples[i].push(None)),
                    Err(e) => group[0].errors[i] = Some(e.clone()),
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
