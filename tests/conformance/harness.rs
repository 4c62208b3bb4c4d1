//! The harness: the per-configuration context a test receives, the runner
//! that checks leaks and validation errors around it, and the macros that
//! turn one generic test function into one `#[test]` over every configuration.

use std::panic::{catch_unwind, AssertUnwindSafe};

use keel_hal::wgt;
use keel_hal::{
    Adapter, Api, Backend, Capabilities, Device, DeviceDescriptor, DynApi, ExposedAdapter,
    Instance, InstanceDescriptor,
};

use crate::configs::{self, Config, MakeInstance};

/// A test failure: any error, hal errors included (so `?` works).
pub type Failure = Box<dyn std::error::Error>;

/// What a test did on one configuration.
#[derive(Debug)]
pub enum Outcome {
    /// Every assertion held.
    Pass,
    /// The configuration lacks something the test needs.
    Skip(String),
}

/// The result of a test function.
pub type TestResult = Result<Outcome, Failure>;

/// A test function, instantiated for one type set.
pub type TestFn<A> = fn(&Ctx<A>) -> TestResult;

/// Skips the test on this configuration with a reason.
pub fn skip(reason: impl Into<String>) -> TestResult {
    Ok(Outcome::Skip(reason.into()))
}

/// Fails the test unless `cond` holds.
macro_rules! check {
    ($cond:expr, $($fmt:tt)+) => {{
        let held: bool = $cond;
        if !held {
            return Err(format!($($fmt)+).into());
        }
    }};
}

/// Fails the test unless `left == right`, printing both.
macro_rules! check_eq {
    ($left:expr, $right:expr, $($fmt:tt)+) => {{
        let (left, right) = (&$left, &$right);
        if left != right {
            return Err(format!(
                "{}: expected {:?}, got {:?}",
                format!($($fmt)+),
                right,
                left
            )
            .into());
        }
    }};
}

/// Declares `#[test]`s, one per generic test function named, in a `run`
/// submodule, each calling `$runner` (one of this module's `run_*`) with the
/// function instantiated for every type set. The three macros below name
/// the runner.
macro_rules! tests_with_runner {
    ($runner:ident; $($name:ident),* $(,)?) => {
        mod run {
            $(
                #[test]
                fn $name() {
                    $crate::harness::$runner(
                        stringify!($name),
                        $crate::harness::Fns {
                            noop: super::$name::<keel_hal::noop::Api>,
                            dynamic: super::$name::<keel_hal::DynApi>,
                            #[cfg(feature = "vulkan")]
                            vulkan: super::$name::<keel_hal::vulkan::Api>,
                        },
                    );
                }
            )*
        }
    };
}

/// `buffers::run::round_trip_4b` runs `buffers::round_trip_4b` on every
/// configuration ([`run_everywhere`]).
macro_rules! conformance_tests {
    ($($name:ident),* $(,)?) => {
        tests_with_runner!(run_everywhere; $($name),*);
    };
}

/// Like [`conformance_tests!`], for tests that must run while no other
/// conformance test runs (see [`run_exclusive`]): those that count the
/// process's open file descriptors. fd counts are process-wide (NVIDIA's
/// driver opens fds per device), so another test's device would move them.
macro_rules! exclusive_conformance_tests {
    ($($name:ident),* $(,)?) => {
        tests_with_runner!(run_exclusive; $($name),*);
    };
}

/// Like [`conformance_tests!`], for the ray-tracing tests, which open
/// acceleration-structure devices of their own: they run alone only where
/// a third-party bug outside the hal needs it ([`run_ray_tracing`]).
macro_rules! ray_tracing_conformance_tests {
    ($($name:ident),* $(,)?) => {
        tests_with_runner!(run_ray_tracing; $($name),*);
    };
}

/// Held shared by every test, and exclusively by the fd-counting ones (and
/// the ray-tracing ones under the old validation layer).
static EXCLUSIVE: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// [`run_everywhere`] while no other conformance test runs.
pub fn run_exclusive(test: &str, fns: Fns) {
    let _alone = EXCLUSIVE.write().unwrap_or_else(|e| e.into_inner());
    everywhere(test, fns);
}

/// The newest validation layer known to crash when instances and devices
/// are created on several threads at once: 1.3.239 (Debian 12's), as
/// `VK_MAKE_API_VERSION(0, 1, 3, 239)`.
#[cfg(feature = "vulkan")]
const LAST_THREAD_UNSAFE_LAYER: u32 = (1 << 22) | (3 << 12) | 239;

/// Whether the ray-tracing tests must run alone: only for bugs outside the
/// hal, each named here with its cause.
///
/// * The 1.3.239 validation layer (and older) crashes when instances and
///   acceleration-structure devices are created on several threads at once
///   (SIGSEGV on lavapipe, 2 runs in 40; on the H200, 1 full run in 5 once
///   two more tests opened such devices beside the others): alone while such
///   a layer is loaded (its version from `Instance::validation_layer_version`).
///   Every test that opens acceleration-structure devices runs this way,
///   whatever its file (`lifecycle::with_structures`,
///   `feature_cases::with_structures`).
/// * Debian 13's loader 1.4.309 crashes in `vkSetDebugUtilsObjectNameEXT`
///   and `vkGetDeviceProcAddr` while other threads create devices: not
///   detected here; CI runs that leg with one test thread.
///
/// NVIDIA's proprietary driver (580.159, H200) deadlocks when ray-tracing
/// pipelines, devices and thread exits meet on several threads; the hal
/// absorbs that (`src/vulkan/workarounds.rs`), so it is not here.
pub fn ray_tracing_needs_isolation() -> Option<&'static str> {
    #[cfg(feature = "vulkan")]
    if configs::selected(Backend::Vulkan) {
        if let Ok(setup) = configs::vulkan_setup() {
            if setup
                .validation_layer
                .is_some_and(|v| v <= LAST_THREAD_UNSAFE_LAYER)
            {
                return Some("validation layer 1.3.239 or older loaded");
            }
        }
    }
    None
}

/// A ray-tracing test: [`run_exclusive`] where
/// [`ray_tracing_needs_isolation`], else [`run_everywhere`].
pub fn run_ray_tracing(test: &str, fns: Fns) {
    if let Some(why) = ray_tracing_needs_isolation() {
        println!("{test}: alone ({why})");
        run_exclusive(test, fns);
    } else {
        run_everywhere(test, fns);
    }
}

/// One test function, instantiated for every type set.
pub struct Fns {
    /// On the noop backend's own types.
    pub noop: TestFn<keel_hal::noop::Api>,
    /// Through the dyn path (noop and Vulkan devices alike).
    pub dynamic: TestFn<DynApi>,
    /// On the Vulkan backend's own types.
    #[cfg(feature = "vulkan")]
    pub vulkan: TestFn<keel_hal::vulkan::Api>,
}

/// What a test receives: an open device on one configuration.
///
/// Fields drop in order: device, queue, adapter.
pub struct Ctx<A: Api> {
    /// Printed configuration name.
    pub name: String,
    /// The device, opened with [`Ctx::features`].
    pub device: A::Device,
    /// Its queue.
    pub queue: A::Queue,
    /// The adapter the device was opened on (tests may open more devices).
    pub adapter: A::Adapter,
    /// What the adapter can do.
    pub caps: Capabilities,
    /// Features the device was opened with (`TIMESTAMP_QUERY` where the adapter has it).
    pub features: wgt::Features,
    /// The backend the objects belong to.
    pub backend: Backend,
    /// Whether the objects travel through [`DynApi`].
    pub is_dyn: bool,
    /// Which adapter of the instance this is.
    pub adapter_index: usize,
    /// The descriptor this configuration's instance was made with.
    pub instance_desc: InstanceDescriptor<'static>,
    make_instance: MakeInstance<A>,
}

impl<A: Api> Ctx<A> {
    /// The device's limits (the adapter's: the device asks for no others).
    pub fn limits(&self) -> &wgt::Limits {
        &self.caps.limits
    }

    /// Prints a line under this configuration's name.
    pub fn note(&self, msg: impl std::fmt::Display) {
        println!("    [{}] {msg}", self.name);
    }

    /// A new instance of this configuration's backend and path, with
    /// another descriptor, and its adapter at this configuration's index.
    pub fn new_instance(
        &self,
        desc: &InstanceDescriptor,
    ) -> Result<(A::Instance, ExposedAdapter<A>), Failure> {
        let instance = (self.make_instance)(desc)?.instance;
        // SAFETY: live instance.
        let exposed = unsafe { instance.enumerate_adapters() }
            .into_iter()
            .nth(self.adapter_index)
            .ok_or("the new instance lacks this configuration's adapter")?;
        Ok((instance, exposed))
    }
}

/// Runs `test` on every selected configuration; panics listing the failures.
pub fn run_everywhere(test: &str, fns: Fns) {
    let _shared = EXCLUSIVE.read().unwrap_or_else(|e| e.into_inner());
    everywhere(test, fns);
}

fn everywhere(test: &str, fns: Fns) {
    // Validation messages go to `log`; RUST_LOG=warn shows them.
    let _ = env_logger::builder().is_test(true).try_init();
    let mut results: Vec<(String, Result<Outcome, String>)> = Vec::new();
    if configs::selected(Backend::Noop) {
        let cfg = configs::noop_static();
        results.push((cfg.name.clone(), run_config(&cfg, fns.noop)));
        let cfg = configs::noop_dyn();
        results.push((cfg.name.clone(), run_config(&cfg, fns.dynamic)));
    }
    #[cfg(feature = "vulkan")]
    if configs::selected(Backend::Vulkan) {
        match configs::vulkan_setup() {
            Ok(setup) => {
                for index in 0..setup.adapters.len() {
                    let cfg = configs::vulkan_static(setup, index);
                    results.push((cfg.name.clone(), run_config(&cfg, fns.vulkan)));
                    let cfg = configs::vulkan_dyn(setup, index);
                    results.push((cfg.name.clone(), run_config(&cfg, fns.dynamic)));
                }
            }
            Err(e) => results.push(("vulkan".into(), Err(e))),
        }
    }
    assert!(
        !results.is_empty(),
        "{test}: KEEL_BACKENDS selects no backend this build has"
    );

    let mut failed = Vec::new();
    for (name, result) in &results {
        match result {
            Ok(Outcome::Pass) => println!("[{name}] ok"),
            Ok(Outcome::Skip(reason)) => println!("[{name}] skipped: {reason}"),
            Err(e) => {
                println!("[{name}] FAILED: {e}");
                failed.push(format!("[{name}] {e}"));
            }
        }
    }
    assert!(
        failed.is_empty(),
        "{test} failed on {} of {} configurations:\n{}",
        failed.len(),
        results.len(),
        failed.join("\n")
    );
}

/// Runs `test` on one configuration, then checks that every object it
/// made is gone and that validation reported nothing.
fn run_config<A: Api>(cfg: &Config<A>, test: TestFn<A>) -> Result<Outcome, String> {
    let made = (cfg.make_instance)(&cfg.desc)?;
    let instance = made.instance;
    // SAFETY: live instance.
    let exposed = unsafe { instance.enumerate_adapters() }
        .into_iter()
        .nth(cfg.adapter_index)
        .ok_or_else(|| format!("adapter {} is gone", cfg.adapter_index))?;
    // What recording tests need, where the adapter has it; the shader and
    // pipeline features are asked for by the tests that check them (on a
    // second device), so this device shows what is refused without them.
    let features = exposed.capabilities.features
        & (wgt::Features::TIMESTAMP_QUERY
            | wgt::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
            | wgt::Features::TIMESTAMP_QUERY_INSIDE_PASSES
            | wgt::Features::MULTI_DRAW_INDIRECT_COUNT
            | wgt::Features::INDIRECT_FIRST_INSTANCE
            | wgt::Features::IMMEDIATES
            | wgt::Features::PIPELINE_STATISTICS_QUERY
            | wgt::Features::CLEAR_TEXTURE
            | wgt::Features::PIPELINE_CACHE
            | wgt::Features::MULTIVIEW
            | wgt::Features::SELECTIVE_MULTIVIEW
            | wgt::Features::EXPERIMENTAL_MESH_SHADER
            | wgt::Features::EXPERIMENTAL_MESH_SHADER_POINTS
            | wgt::Features::EXPERIMENTAL_MESH_SHADER_MULTIVIEW
            | wgt::Features::TEXTURE_FORMAT_NV12
            | wgt::Features::TEXTURE_FORMAT_P010
            | wgt::Features::PASSTHROUGH_SHADERS);
    let desc = DeviceDescriptor {
        label: Some("conformance"),
        required_features: features,
        // Tests need pipelines to exist on noop too (binding, recording and
        // check tests); those that read shader results skip where the
        // adapter lacks SHADER_EXECUTION.
        allow_no_shader_execution: true,
        ..Default::default()
    };
    // SAFETY: the adapter comes from the live instance above.
    let open = unsafe { exposed.adapter.open(&desc) }.map_err(|e| format!("open: {e}"))?;
    let ctx: Ctx<A> = Ctx {
        name: cfg.name.clone(),
        device: open.device,
        queue: open.queue,
        adapter: exposed.adapter,
        caps: exposed.capabilities,
        features,
        backend: cfg.backend,
        is_dyn: cfg.is_dyn,
        adapter_index: cfg.adapter_index,
        instance_desc: cfg.desc.clone(),
        make_instance: cfg.make_instance.clone(),
    };

    let start = ctx.device.live_counts();
    let outcome = catch_unwind(AssertUnwindSafe(|| test(&ctx)));
    // SAFETY: live device; waiting has no other precondition.
    let idle = unsafe { ctx.device.wait_idle() };
    let end = ctx.device.live_counts();
    drop(ctx);
    drop(instance);
    // Read after the device and the instance are gone: a device destroyed
    // with live children, or a device leaked until the instance goes, is
    // only reported then.
    let validation_errors = (made.errors)();

    let mut problems = Vec::new();
    let outcome = match outcome {
        Ok(Ok(outcome)) => Some(outcome),
        Ok(Err(e)) => {
            problems.push(e.to_string());
            None
        }
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "non-text panic".into());
            problems.push(format!("panicked: {msg}"));
            None
        }
    };
    if let Err(e) = idle {
        problems.push(format!("wait_idle: {e}"));
    }
    if end != start {
        problems.push(format!(
            "live objects not back to the start: start {start:?}, end {end:?}"
        ));
    }
    if validation_errors != 0 {
        problems.push(format!(
            "{validation_errors} validation error(s), logged above"
        ));
    }
    match outcome {
        Some(outcome) if problems.is_empty() => Ok(outcome),
        _ => Err(problems.join("; ")),
    }
}
