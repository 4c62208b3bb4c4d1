//! The results: a Markdown table for the terminal (and docs/benchmarks.md)
//! and the same numbers as hand-written JSON.

use std::fmt::Write as _;

use crate::count::Counts;
use crate::raw::AdapterReport;
use crate::stats::{self, Summary};

/// Column order of the sides everywhere.
pub const SIDES: [&str; 3] = ["keel-hal", "wgpu-hal", "raw ash"];

/// One workload's samples, by side, by round (`None`: no sample).
pub struct Row {
    pub workload: String,
    pub samples: [Vec<Option<f64>>; 3],
    /// Why a side has no samples, where it failed.
    pub errors: [Option<String>; 3],
    /// The counted Vulkan calls of each sample's timed region, per cycle, by side (the
    /// first row of a workload holds them).
    pub counts: [Vec<Counts>; 3],
    /// keel-hal's memory held from the driver after the workload's last
    /// round (reserved bytes, of which kept for reuse), where known.
    pub keel_memory: Option<(u64, u64)>,
}

impl Row {
    fn medians(&self) -> [Option<f64>; 3] {
        [0, 1, 2].map(|i| stats::median_of(&self.samples[i]))
    }
    fn ratio(&self, other: usize) -> Option<Summary> {
        stats::summarize(&stats::round_ratios(&self.samples[0], &self.samples[other]))
    }
    /// Per counted call (in `Counts::NAMES` order), the summary over rounds.
    fn calls(&self, side: usize) -> Option<Vec<Summary>> {
        let per_round = &self.counts[side];
        if per_round.is_empty() {
            return None;
        }
        (0..Counts::NAMES.len())
            .map(|k| {
                let xs: Vec<f64> = per_round.iter().map(|c| c.values()[k] as f64).collect();
                stats::summarize(&xs)
            })
            .collect()
    }
}

/// One side's counted calls as a table cell: medians joined by " · ",
/// each with its range where rounds differ.
fn calls_cell(calls: Option<Vec<Summary>>) -> String {
    calls.map_or("n/a".into(), |v| {
        v.iter()
            .map(|s| {
                if s.min == s.max {
                    format!("{}", s.median)
                } else {
                    format!("{} ({}–{})", s.median, s.min, s.max)
                }
            })
            .collect::<Vec<_>>()
            .join(" · ")
    })
}

/// Everything a run found.
pub struct Report {
    pub adapter: AdapterReport,
    /// The adapter name each side opened (they must all match).
    pub opened: [Option<String>; 3],
    pub date: String,
    pub rounds: usize,
    pub smoke: bool,
    pub rows: Vec<Row>,
}

fn ns(x: Option<f64>) -> String {
    x.map_or("n/a".into(), |x| {
        if x >= 100.0 {
            format!("{x:.0}")
        } else {
            format!("{x:.1}")
        }
    })
}

fn ratio(s: Option<Summary>) -> String {
    s.map_or("n/a".into(), |s| {
        format!("{:.2} ({:.2}–{:.2})", s.median, s.min, s.max)
    })
}

impl Report {
    /// The header lines and the table, in Markdown.
    pub fn table(&self) -> String {
        let a = &self.adapter;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Adapter: {} — driver {} ({}), Vulkan {}",
            a.name, a.driver, a.driver_info, a.api_version
        );
        let _ = writeln!(out, "Date: {}; {} rounds{}; medians in ns per op (or the unit the workload names); ratios: median (min–max) of per-round ratios", self.date, self.rounds, if self.smoke { " (smoke)" } else { "" });
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "| workload | keel-hal | wgpu-hal | raw ash | keel / wgpu-hal | keel / raw |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|");
        for row in &self.rows {
            let [k, w, r] = row.medians();
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                row.workload,
                ns(k),
                ns(w),
                ns(r),
                ratio(row.ratio(1)),
                ratio(row.ratio(2))
            );
        }
        let _ = writeln!(
            out,
            "\nVulkan calls per cycle, inside the timed region (per cycle of each sample, rounded up; median over rounds, range where they differ): {}",
            Counts::NAMES.join(" · ")
        );
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "| workload | keel-hal | wgpu-hal | raw ash | keel-hal MiB held after (kept for reuse) |"
        );
        let _ = writeln!(out, "|---|---|---|---|---:|");
        for row in self
            .rows
            .iter()
            .filter(|r| r.counts.iter().any(|c| !c.is_empty()))
        {
            let name = row.workload.split(": ").next().unwrap_or(&row.workload);
            let held = row.keel_memory.map_or("n/a".into(), |(reserved, kept)| {
                let mib = |b: u64| b as f64 / f64::from(1 << 20);
                format!("{:.1} ({:.1})", mib(reserved), mib(kept))
            });
            let _ = writeln!(
                out,
                "| {name} | {} | {} | {} | {held} |",
                calls_cell(row.calls(0)),
                calls_cell(row.calls(1)),
                calls_cell(row.calls(2))
            );
        }
        for row in &self.rows {
            for (side, e) in SIDES.iter().zip(&row.errors) {
                if let Some(e) = e {
                    let _ = writeln!(out, "\n{side}, {}: {e}", row.workload);
                }
            }
        }
        out
    }

    /// The same numbers as JSON (raw per-round samples included).
    pub fn json(&self) -> String {
        let a = &self.adapter;
        let mut o = String::from("{\n");
        let _ = writeln!(o, "  \"date\": {},", js(&self.date));
        let _ = writeln!(
            o,
            "  \"rounds\": {},\n  \"smoke\": {},",
            self.rounds, self.smoke
        );
        let _ = writeln!(
            o,
            "  \"adapter\": {{\"name\": {}, \"driver\": {}, \"driver_info\": {}, \"api_version\": {}}},",
            js(&a.name),
            js(&a.driver),
            js(&a.driver_info),
            js(&a.api_version)
        );
        let opened: Vec<String> = self
            .opened
            .iter()
            .map(|n| n.as_deref().map_or("null".into(), js))
            .collect();
        let _ = writeln!(
            o,
            "  \"sides\": {},\n  \"opened\": [{}],",
            list(SIDES.iter().map(|s| js(s))),
            opened.join(", ")
        );
        o.push_str("  \"unit\": \"ns per op, or the unit after the workload's colon\",\n  \"workloads\": [\n");
        for (i, row) in self.rows.iter().enumerate() {
            let medians = list(row.medians().iter().map(|m| num(*m)));
            let samples = list(row.samples.iter().map(|s| list(s.iter().map(|x| num(*x)))));
            let errors = list(
                row.errors
                    .iter()
                    .map(|e| e.as_deref().map_or("null".into(), js)),
            );
            let calls = list(row.counts.iter().map(|per_round| {
                list(per_round.iter().map(|c| {
                    let fields = Counts::NAMES
                        .iter()
                        .zip(c.values())
                        .map(|(n, v)| format!("{}: {v}", js(n)));
                    format!("{{{}}}", fields.collect::<Vec<_>>().join(", "))
                }))
            }));
            let held = row.keel_memory.map_or("null".into(), |(reserved, kept)| {
                format!("{{\"reserved_bytes\": {reserved}, \"kept_bytes\": {kept}}}")
            });
            let _ = write!(
                o,
                "    {{\"name\": {}, \"median\": {medians}, \"keel_over_wgpu_hal\": {}, \"keel_over_raw\": {}, \"samples\": {samples}, \"calls_per_round\": {calls}, \"keel_memory_after\": {held}, \"errors\": {errors}}}",
                js(&row.workload),
                summary(row.ratio(1)),
                summary(row.ratio(2)),
            );
            o.push_str(if i + 1 < self.rows.len() { ",\n" } else { "\n" });
        }
        o.push_str("  ]\n}\n");
        o
    }
}

fn list(items: impl Iterator<Item = String>) -> String {
    format!("[{}]", items.collect::<Vec<_>>().join(", "))
}

fn num(x: Option<f64>) -> String {
    x.filter(|x| x.is_finite())
        .map_or("null".into(), |x| format!("{x:.3}"))
}

fn summary(s: Option<Summary>) -> String {
    s.map_or("null".into(), |s| {
        format!(
            "{{\"median\": {:.4}, \"min\": {:.4}, \"max\": {:.4}, \"rounds\": {}}}",
            s.median, s.min, s.max, s.count
        )
    })
}

/// A JSON string literal.
fn js(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// Today's UTC date as `YYYY-MM-DD`, from the system clock.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // Days since 1970-01-01 to a civil date (proleptic Gregorian calendar).
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(super::js("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
    }

    #[test]
    fn date_has_iso_shape() {
        let d = super::today();
        assert_eq!(d.len(), 10);
        assert!(d.starts_with("20"));
    }
}
