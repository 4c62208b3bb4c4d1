//! One counted round: every side's sample of one workload, their cycles
//! interleaved.
//!
//! A sample is the mean of a side's cycles in the round. The sides take
//! turns one cycle at a time (in the round's turn order) until each has
//! run for at least the minimum sample time, or [`MAX_CYCLES`] cycles, so
//! the cycles of keel-hal, wgpu-hal and raw of one round ran side by side
//! in the same few milliseconds. A machine whose speed drifts over tens of
//! milliseconds (on the 2-core lavapipe host a fixed CPU loop ran 1.3–2.5 ms
//! in phases that last that long) then slows all three alike, and the
//! round's ratios cancel the drift; back-to-back samples, one side after
//! the other, put each side in a different phase.

use std::time::{Duration, Instant};

use crate::count::{self, Counts};
use crate::workload::{Side, Workload};

/// Each side's cycles in one round add up to at least this long (so short
/// cycles, such as 1,000 bind groups at 40 ns each, are not at the mercy
/// of one interrupt, and several cycles of each side interleave), up to
/// [`MAX_CYCLES`] cycles. `BENCH_MIN_SAMPLE_MS` overrides it (0: one cycle
/// per side per round, as a profiler wants).
const MIN_SAMPLE_MS: u64 = 20;
/// The most cycles one side runs in one round.
const MAX_CYCLES: u32 = 256;

/// The minimum sample time: [`MIN_SAMPLE_MS`] or `BENCH_MIN_SAMPLE_MS`.
fn min_sample() -> Duration {
    Duration::from_millis(
        std::env::var("BENCH_MIN_SAMPLE_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(MIN_SAMPLE_MS),
    )
}

/// One side's sample in a round.
pub struct Sample {
    /// The mean of each number over the cycles; `Ok(None)`: the workload
    /// does not apply to this side; an error, or numbers of a different
    /// count than the first cycle's, end the sample with that answer.
    pub result: Result<Option<Vec<f64>>, String>,
    /// The counted Vulkan calls of the cycles' timed regions, per cycle
    /// (rounded up: a call in any cycle shows).
    pub calls: Counts,
}

/// A side's sample while the round runs.
#[derive(Default)]
struct Running {
    sums: Vec<f64>,
    cycles: u32,
    elapsed: Duration,
    calls: Counts,
    /// The sample ended early with this answer.
    ended: Option<Result<Option<Vec<f64>>, String>>,
}

impl Running {
    fn wants_more(&self, min: Duration) -> bool {
        self.ended.is_none() && self.cycles < MAX_CYCLES && (self.cycles == 0 || self.elapsed < min)
    }

    fn finish(self) -> Sample {
        let cycles = self.cycles.max(1);
        let result = match self.ended {
            Some(answer) => answer,
            None => {
                let n = f64::from(cycles);
                Ok(Some(self.sums.into_iter().map(|s| s / n).collect()))
            }
        };
        Sample {
            result,
            calls: self.calls.per_cycle(cycles),
        }
    }
}

/// Runs one round of `work` on the sides `order` names (indices into
/// `sides`; `None` entries and sides not named are skipped), their cycles
/// interleaved; returns each named side's sample, by index.
pub fn interleaved(
    sides: &mut [Option<Box<dyn Side>>; 3],
    order: &[usize],
    work: &Workload,
) -> [Option<Sample>; 3] {
    let min = min_sample();
    let mut running: [Option<Running>; 3] = Default::default();
    for &i in order {
        if sides[i].is_some() {
            running[i] = Some(Running::default());
        }
    }
    loop {
        let mut ran = false;
        for &i in order {
            let (Some(side), Some(run)) = (sides[i].as_mut(), running[i].as_mut()) else {
                continue;
            };
            if !run.wants_more(min) {
                continue;
            }
            ran = true;
            // Whatever was counted outside a cycle is not this one's.
            count::take_timed();
            let start = Instant::now();
            let answer = side.sample_metrics(work);
            run.elapsed += start.elapsed();
            run.calls.add(&count::take_timed());
            match answer {
                Ok(Some(values)) if run.cycles == 0 => {
                    run.sums = values;
                    run.cycles = 1;
                }
                Ok(Some(values)) if values.len() == run.sums.len() => {
                    run.sums.iter_mut().zip(values).for_each(|(s, v)| *s += v);
                    run.cycles += 1;
                }
                // A different count of numbers: the caller reports it.
                other => run.ended = Some(other),
            }
        }
        if !ran {
            break;
        }
    }
    running.map(|run| run.map(Running::finish))
}
