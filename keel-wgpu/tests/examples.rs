//! Runs every example on keel-wgpu (Vulkan, and noop where it needs no
//! shader execution to finish cleanly) and on stock wgpu (wgpu-core on
//! Vulkan), and compares what they produced.
//!
//! Each example checks itself at exit: no wgpu error, no validation
//! message (keel-hal's layer, with synchronization validation), no
//! keel-hal object left alive. Here the outputs are compared: buffers bit
//! for bit; images texel by texel, every channel within
//! [`IMAGE_CHANNEL_TOLERANCE`] and at most [`IMAGE_DIFFERING_SHARE`] of the
//! bytes different at all (rasterisation and filtering may round
//! differently between two drivers' paths; here both are lavapipe).

use std::path::PathBuf;
use std::process::Command;

use parking_lot::Mutex;

/// The largest difference allowed in one 8-bit channel of an image.
const IMAGE_CHANNEL_TOLERANCE: u8 = 2;
/// The largest share of an image's bytes that may differ at all.
const IMAGE_DIFFERING_SHARE: f64 = 0.005;

/// One example at a time: the Vulkan layer of Debian 12 crashes when
/// instances are made on several threads at once (see the conformance
/// harness), and lavapipe shares the two cores.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

#[derive(Clone, Copy)]
enum Compare {
    Exact,
    Image,
}

/// An X display for the windowed example: `DISPLAY` if set, else a
/// virtual one (Xvfb) for the test's duration, else `None`.
struct Display {
    name: Option<String>,
    xvfb: Option<std::process::Child>,
}

impl Display {
    fn get() -> Self {
        if let Ok(name) = std::env::var("DISPLAY") {
            return Self {
                name: Some(name),
                xvfb: None,
            };
        }
        // Xvfb picks a free display and writes its number to stdout once
        // it accepts connections (`-displayfd`): no guessing, and no stale
        // socket of an earlier server mistaken for a ready one.
        let child = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "320x240x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn();
        let Ok(mut child) = child else {
            return Self {
                name: None,
                xvfb: None,
            };
        };
        let mut number = String::new();
        if let Some(stdout) = child.stdout.take() {
            use std::io::BufRead;
            let _ = std::io::BufReader::new(stdout).read_line(&mut number);
        }
        let number = number.trim();
        Self {
            name: (!number.is_empty()).then(|| format!(":{number}")),
            xvfb: Some(child),
        }
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        if let Some(mut child) = self.xvfb.take() {
            // SIGTERM lets Xvfb remove its socket and lock file.
            let _ = Command::new("kill").arg(child.id().to_string()).status();
            let _ = child.wait();
        }
    }
}

fn example(name: &str) -> PathBuf {
    let mut path = std::env::current_exe().expect("test executable path");
    path.pop();
    if path.ends_with("deps") {
        path.pop();
    }
    path.join("examples").join(name)
}

/// Runs `name` with `args`; its output bytes (`None` when the example
/// said the adapter cannot run it), or why it failed.
fn run(name: &str, args: &[&str]) -> Result<Option<Vec<u8>>, String> {
    run_on(name, args, None)
}

fn run_on(name: &str, args: &[&str], display: Option<&str>) -> Result<Option<Vec<u8>>, String> {
    let out = std::env::temp_dir().join(format!(
        "keel-wgpu-{name}-{}-{}.bin",
        std::process::id(),
        args.join("")
    ));
    let mut command = Command::new(example(name));
    if let Some(display) = display {
        command.env("DISPLAY", display);
    }
    let result = command
        .args(args)
        .env("KEEL_EXAMPLE_OUT", &out)
        .env("RUST_LOG", "warn")
        .output()
        .map_err(|e| format!("{name}: cannot start: {e} (built by `cargo test -p keel-wgpu`)"))?;
    if !result.status.success() {
        let stderr = String::from_utf8_lossy(&result.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(30).collect();
        return Err(format!(
            "{name} {args:?} failed ({}):\n{}\n{}",
            result.status,
            String::from_utf8_lossy(&result.stdout),
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        ));
    }
    let stdout = String::from_utf8_lossy(&result.stdout);
    if let Some(line) = stdout.lines().find(|l| l.contains(": skipped: ")) {
        eprintln!("{line}");
        return Ok(None);
    }
    let bytes = std::fs::read(&out).map_err(|e| format!("{name}: no output file: {e}"))?;
    let _ = std::fs::remove_file(&out);
    Ok(Some(bytes))
}

fn vulkan_adapter() -> bool {
    // SAFETY: the loader is trusted; the instance is dropped right away.
    let instance = keel_hal::dynamic::instance(
        keel_hal::dynamic::BackendChoice::Vulkan,
        &keel_hal::InstanceDescriptor::default(),
    );
    match instance {
        // SAFETY: the instance is alive for the call.
        Ok(chosen) => !unsafe { chosen.instance.enumerate_adapters() }.is_empty(),
        Err(_) => false,
    }
}

fn compare(name: &str, how: Compare, keel: &[u8], stock: &[u8]) {
    assert_eq!(keel.len(), stock.len(), "{name}: output sizes differ");
    match how {
        Compare::Exact => {
            let first = keel.iter().zip(stock).position(|(a, b)| a != b);
            assert!(
                first.is_none(),
                "{name}: outputs differ first at byte {first:?}"
            );
        }
        Compare::Image => {
            let mut differing = 0usize;
            for (i, (a, b)) in keel.iter().zip(stock).enumerate() {
                let d = a.abs_diff(*b);
                assert!(
                    d <= IMAGE_CHANNEL_TOLERANCE,
                    "{name}: byte {i} differs by {d} (keel-wgpu {a}, stock {b})"
                );
                differing += usize::from(d != 0);
            }
            let share = differing as f64 / keel.len().max(1) as f64;
            assert!(
                share <= IMAGE_DIFFERING_SHARE,
                "{name}: {differing} bytes differ ({:.3}%)",
                share * 100.0
            );
        }
    }
}

/// Runs `name` on noop (when `noop`), then on keel-wgpu and stock wgpu
/// over Vulkan, and compares.
fn check(name: &str, how: Compare, noop: bool) {
    let _one = ONE_AT_A_TIME.lock();
    if noop {
        run(name, &["--noop"]).unwrap_or_else(|e| panic!("{e}"));
    }
    if !vulkan_adapter() {
        eprintln!(
            "{name}: skipped on Vulkan: no Vulkan adapter (scripts/setup.sh installs lavapipe)"
        );
        return;
    }
    let keel = run(name, &[]).unwrap_or_else(|e| panic!("{e}"));
    let stock = run(name, &["--stock"]).unwrap_or_else(|e| panic!("{e}"));
    match (keel, stock) {
        (Some(keel), Some(stock)) => compare(name, how, &keel, &stock),
        (None, None) => eprintln!("{name}: skipped on this adapter by both"),
        (keel, _) => {
            panic!(
            "{name}: ran on {} only: keel-wgpu and stock wgpu disagree on what the adapter offers",
            if keel.is_some() { "keel-wgpu" } else { "stock wgpu" }
        )
        }
    }
}

#[test]
fn compute_readback() {
    check("compute_readback", Compare::Exact, true);
}

#[test]
fn render_to_texture() {
    check("render_to_texture", Compare::Image, true);
}

#[test]
fn mesh_shader() {
    check("mesh_shader", Compare::Image, true);
}

#[test]
fn textured_mesh() {
    check("textured_mesh", Compare::Image, true);
}

#[test]
fn mipmaps() {
    check("mipmaps", Compare::Image, true);
}

#[test]
fn msaa() {
    check("msaa", Compare::Image, true);
}

#[test]
fn shadow() {
    check("shadow", Compare::Image, true);
}

#[test]
fn particles() {
    // The image, then the particles' floats: bit for bit on one driver.
    check("particles", Compare::Image, true);
}

#[test]
fn pass_commands() {
    check("pass_commands", Compare::Image, true);
}

#[test]
fn timestamps() {
    check("timestamps", Compare::Exact, true);
}

#[test]
fn window_triangle() {
    let _one = ONE_AT_A_TIME.lock();
    let display = Display::get();
    let Some(name) = display.name.as_deref() else {
        eprintln!(
            "window_triangle: skipped: no DISPLAY and no Xvfb (scripts/setup.sh installs it)"
        );
        return;
    };
    if !vulkan_adapter() {
        eprintln!("window_triangle: skipped: no Vulkan adapter");
        return;
    }
    let keel = run_on("window_triangle", &[], Some(name)).unwrap_or_else(|e| panic!("{e}"));
    let stock =
        run_on("window_triangle", &["--stock"], Some(name)).unwrap_or_else(|e| panic!("{e}"));
    match (keel, stock) {
        (Some(keel), Some(stock)) => compare("window_triangle", Compare::Image, &keel, &stock),
        (keel, stock) => assert_eq!(
            keel.is_some(),
            stock.is_some(),
            "window_triangle ran on one implementation only"
        ),
    }
}
