//! The `wgpu-types` features wgpu-hal 30's Vulkan backend exposes on each
//! adapter, next to the ones keel-hal exposes on the same adapter: the list
//! `docs/design.md` keeps ("Feature parity with wgpu-hal"). Measured, never
//! typed in: both libraries enumerate the adapters of this machine.
//!
//! ```sh
//! cargo run --release -p bench --example feature_parity            # every adapter
//! BENCH_ADAPTER=H200 cargo run --release -p bench --example feature_parity
//! ```
//!
//! Prints one Markdown table per adapter (a row per feature either side
//! exposes) and a summary line; exits non-zero when Vulkan is missing.

use std::process::ExitCode;

use keel_hal::Instance as _;
use wgpu_hal::{self as hal, Instance as _};

fn main() -> ExitCode {
    let wanted = std::env::var("BENCH_ADAPTER").ok();
    let desc = hal::InstanceDescriptor {
        name: "keel-hal feature parity",
        flags: wgt::InstanceFlags::empty(),
        memory_budget_thresholds: wgt::MemoryBudgetThresholds::default(),
        backend_options: wgt::BackendOptions::default(),
        telemetry: None,
        display: None,
    };
    // SAFETY: the system's Vulkan loader is trusted to be conforming.
    let peer = match unsafe { hal::vulkan::Instance::init(&desc) } {
        Ok(instance) => instance,
        Err(e) => {
            eprintln!("wgpu-hal: no Vulkan instance: {e}");
            return ExitCode::FAILURE;
        }
    };
    let keel_desc = keel_hal::InstanceDescriptor {
        name: "keel-hal feature parity",
        ..Default::default()
    };
    // SAFETY: as above.
    let keel = match unsafe { keel_hal::vulkan::Instance::init(&keel_desc) } {
        Ok(instance) => instance,
        Err(e) => {
            eprintln!("keel-hal: no Vulkan instance: {e}");
            return ExitCode::FAILURE;
        }
    };
    // SAFETY: live instances; no surface.
    let (peer_adapters, keel_adapters) =
        unsafe { (peer.enumerate_adapters(None), keel.enumerate_adapters()) };
    let mut shown = 0;
    for theirs in &peer_adapters {
        let name = &theirs.info.name;
        if wanted.as_deref().is_some_and(|w| !name.contains(w)) {
            continue;
        }
        shown += 1;
        let ours = keel_adapters.iter().find(|a| &a.info.name == name);
        let peer_features = theirs.features;
        let keel_features = ours.map_or(wgt::Features::empty(), |a| a.capabilities.features);
        println!(
            "### {name} ({}, {})\n",
            theirs.info.driver, theirs.info.driver_info
        );
        if ours.is_none() {
            println!("keel-hal does not expose this adapter (below its Vulkan 1.3 baseline).\n");
        }
        println!("| feature | wgpu-hal 30 | keel-hal |\n|---|:---:|:---:|");
        let mark = |has: bool| if has { "yes" } else { "**no**" };
        for (flag_name, flag) in wgt::Features::all().iter_names() {
            let (p, k) = (peer_features.contains(flag), keel_features.contains(flag));
            if p || k {
                println!("| `{flag_name}` | {} | {} |", mark(p), mark(k));
            }
        }
        let count = |f: wgt::Features| f.iter().count();
        println!(
            "\nwgpu-hal exposes {}, keel-hal {}; wgpu-hal only: {}; keel-hal only: {}.\n",
            count(peer_features),
            count(keel_features),
            count(peer_features.difference(keel_features)),
            count(keel_features.difference(peer_features)),
        );
    }
    if shown == 0 {
        eprintln!("no Vulkan adapter matched");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
