//! A small stand-in for wgpu's `wgpu_test` harness: `TestParameters`,
//! `TestingContext`, `fail`/`valid`/`fail_if`, and [`gpu_test!`], which
//! turns one test body into three `#[test]`s, `NAME::noop`, `NAME::vulkan`
//! and `NAME::stock`, run on keel-wgpu's noop and Vulkan backends and on
//! stock wgpu (wgpu-core on Vulkan).
//!
//! As in wgpu's harness, a device gets exactly the features and limits the
//! test asks for (by default `Limits::downlevel_webgl2_defaults()`), a test
//! whose adapter lacks them is skipped with a line saying why, and a test
//! expected to fail on a backend must fail there. After a keel run that
//! passed, every keel-hal object must be gone and the validation layer must
//! have said nothing (`common::each_backend`'s checks).

#![allow(dead_code)]

use std::panic::{catch_unwind, AssertUnwindSafe};

pub use crate::common::Backend;

/// A set of backends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct On(u8);

impl On {
    pub const NOOP: On = On(1);
    pub const VULKAN: On = On(2);
    pub const STOCK: On = On(4);
    /// keel-wgpu on either backend.
    pub const KEEL: On = On(3);
    pub const ALL: On = On(7);

    fn has(self, backend: Backend) -> bool {
        let bit = match backend {
            Backend::Noop => 1,
            Backend::Vulkan => 2,
            Backend::Stock => 4,
        };
        self.0 & bit != 0
    }
}

/// What a test needs and where it is expected to fail.
#[derive(Clone, Debug)]
pub struct TestParameters {
    pub required_features: wgpu::Features,
    pub required_downlevel_flags: wgpu::DownlevelFlags,
    pub required_limits: wgpu::Limits,
    skips: Vec<(On, &'static str)>,
    failures: Vec<(On, &'static str)>,
}

impl Default for TestParameters {
    fn default() -> Self {
        Self {
            required_features: wgpu::Features::empty(),
            required_downlevel_flags: wgpu::DownlevelFlags::empty(),
            required_limits: wgpu::Limits::downlevel_webgl2_defaults(),
            skips: Vec::new(),
            failures: Vec::new(),
        }
    }
}

impl TestParameters {
    /// wgpu's `test_features_limits`: compute shaders and downlevel limits.
    pub fn test_features_limits(self) -> Self {
        self.downlevel_flags(wgpu::DownlevelFlags::COMPUTE_SHADERS)
            .limits(wgpu::Limits::downlevel_defaults())
    }

    pub fn features(mut self, features: wgpu::Features) -> Self {
        self.required_features |= features;
        self
    }

    pub fn downlevel_flags(mut self, flags: wgpu::DownlevelFlags) -> Self {
        self.required_downlevel_flags |= flags;
        self
    }

    pub fn limits(mut self, limits: wgpu::Limits) -> Self {
        self.required_limits = limits;
        self
    }

    /// Not run on `on`, for `reason`.
    pub fn skip(mut self, on: On, reason: &'static str) -> Self {
        self.skips.push((on, reason));
        self
    }

    /// Not run on keel's noop backend: what it checks comes from shaders,
    /// which noop does not run.
    pub fn skip_noop_shaders(self) -> Self {
        self.skip(
            On::NOOP,
            "keel noop runs no shaders: the result checked is a shader's",
        )
    }

    /// Must fail (panic) on `on`, for `reason`; passing there fails the
    /// test.
    pub fn expect_fail(mut self, on: On, reason: &'static str) -> Self {
        self.failures.push((on, reason));
        self
    }
}

/// What a test body gets, as in wgpu's harness.
pub struct TestingContext {
    pub backend: Backend,
    pub instance: wgpu::Instance,
    pub adapter: wgpu::Adapter,
    pub adapter_info: wgpu::AdapterInfo,
    pub adapter_downlevel_capabilities: wgpu::DownlevelCapabilities,
    pub device: wgpu::Device,
    pub device_features: wgpu::Features,
    pub device_limits: wgpu::Limits,
    pub queue: wgpu::Queue,
}

impl TestingContext {
    /// `device.poll(PollType::wait_indefinitely())`, unwrapped (wgpu's
    /// `ctx.async_poll(PollType::wait()).await.unwrap()`).
    pub fn poll_wait(&self) -> wgpu::PollStatus {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("poll")
    }

    /// A second device of the same adapter, with the same features and
    /// limits (wgpu's `initialize_device`).
    pub fn another_device(&self) -> (wgpu::Device, wgpu::Queue) {
        pollster::block_on(self.adapter.request_device(&wgpu::DeviceDescriptor {
            required_features: self.device_features,
            required_limits: self.device_limits.clone(),
            ..Default::default()
        }))
        .expect("second device")
    }
}

/// Runs `callback` in a validation error scope and asserts that it caused
/// an error (whose message contains `expected`, case-insensitively).
#[track_caller]
pub fn fail<T>(
    device: &wgpu::Device,
    callback: impl FnOnce() -> T,
    expected: Option<&'static str>,
) -> T {
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let result = callback();
    let error = pollster::block_on(scope.pop())
        .expect("expected validation error in callback, but no validation error was emitted");
    if let Some(expected) = expected {
        let actual = error.to_string();
        assert!(
            actual.to_lowercase().contains(&expected.to_lowercase()),
            "expected validation error case-insensitively containing {expected:?}, \
             but it was not present in actual error message:\n{actual}\n{error:?}"
        );
    }
    result
}

/// Runs `callback` in a validation error scope and asserts that it caused
/// none.
#[track_caller]
pub fn valid<T>(device: &wgpu::Device, callback: impl FnOnce() -> T) -> T {
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let result = callback();
    if let Some(error) = pollster::block_on(scope.pop()) {
        panic!(
            "`valid` block at {} encountered wgpu error:\n{error}",
            std::panic::Location::caller()
        );
    }
    result
}

/// [`fail`] or [`valid`], as `should_fail` says.
#[track_caller]
pub fn fail_if<T>(
    device: &wgpu::Device,
    should_fail: bool,
    callback: impl FnOnce() -> T,
    expected: Option<&'static str>,
) -> T {
    if should_fail {
        fail(device, callback, expected)
    } else {
        valid(device, callback)
    }
}

fn open(backend: Backend, params: &TestParameters) -> Result<TestingContext, String> {
    let instance = match backend {
        Backend::Stock => wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::VULKAN,
            // wgpu's harness runs with `InstanceFlags::debugging()`, whose
            // GPU-side validation of indirect calls some tests check; no
            // validation layer of stock's own.
            flags: wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL,
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        }),
        Backend::Noop => keel_wgpu::instance_with(keel_wgpu::BackendChoice::Noop, true)
            .map_err(|e| format!("no instance ({e})"))?,
        Backend::Vulkan => keel_wgpu::instance_with(keel_wgpu::BackendChoice::Vulkan, true)
            .map_err(|e| format!("no instance ({e})"))?,
    };
    let adapter = pollster::block_on(instance.request_adapter(&Default::default()))
        .map_err(|e| format!("no adapter ({e})"))?;
    let missing = params.required_features - adapter.features();
    if !missing.is_empty() {
        return Err(format!("the adapter lacks features {missing:?}"));
    }
    let mut over = Vec::new();
    params.required_limits.check_limits_with_fail_fn(
        &adapter.limits(),
        false,
        |name, wanted, allowed| over.push(format!("{name} {wanted} (has {allowed})")),
    );
    if !over.is_empty() {
        return Err(format!("the adapter lacks limits {}", over.join(", ")));
    }
    let downlevel = adapter.get_downlevel_capabilities();
    let missing = params.required_downlevel_flags - downlevel.flags;
    if !missing.is_empty() {
        return Err(format!("the adapter lacks downlevel flags {missing:?}"));
    }
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_features: params.required_features,
        required_limits: params.required_limits.clone(),
        ..Default::default()
    }))
    .map_err(|e| format!("no device ({e})"))?;
    Ok(TestingContext {
        backend,
        instance,
        adapter_info: adapter.get_info(),
        adapter_downlevel_capabilities: downlevel,
        adapter,
        device,
        device_features: params.required_features,
        device_limits: params.required_limits.clone(),
        queue,
    })
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

/// Runs `test` on `backend` with `params`.
pub fn run(backend: Backend, params: TestParameters, test: impl FnOnce(TestingContext)) {
    let name = match backend {
        Backend::Noop => "keel noop",
        Backend::Vulkan => "keel vulkan",
        Backend::Stock => "stock wgpu",
    };
    if let Some((_, reason)) = params.skips.iter().find(|(on, _)| on.has(backend)) {
        eprintln!("SKIP on {name}: {reason}");
        return;
    }
    // One Vulkan instance at a time (Debian 12's layer); noop needs none.
    let _one = (backend != Backend::Noop).then(|| crate::common::ONE_AT_A_TIME.lock());
    let ctx = match open(backend, &params) {
        Ok(ctx) => ctx,
        Err(why) => {
            eprintln!("SKIP on {name}: {why}");
            return;
        }
    };
    let device = ctx.device.clone();
    let queue = ctx.queue.clone();
    let instance = ctx.instance.clone();
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        test(ctx);
        if backend != Backend::Stock {
            // Queue writes not yet submitted legitimately hold their
            // staging memory and destinations: a last submit flushes them.
            queue.submit([]);
            drop(queue);
            assert_eq!(
                keel_wgpu::live_counts(&device),
                Some(Default::default()),
                "{name}: keel-hal objects left alive"
            );
            drop(device);
            assert_eq!(
                keel_wgpu::validation_errors(&instance),
                Some(0),
                "{name}: validation messages"
            );
        }
    }));
    let expected = params.failures.iter().find(|(on, _)| on.has(backend));
    match (outcome, expected) {
        (Ok(()), None) => {}
        (Err(panic), None) => std::panic::resume_unwind(panic),
        (Err(panic), Some((_, reason))) => eprintln!(
            "EXPECTED FAILURE on {name} ({reason}): {}",
            panic_text(&*panic)
        ),
        (Ok(()), Some((_, reason))) => {
            panic!("{name}: expected to fail ({reason}) but passed")
        }
    }
}

/// `gpu_test!(NAME, PARAMETERS, BODY)`: the test `NAME::{noop,vulkan,stock}`
/// running `BODY` (an `FnOnce(TestingContext)`) with `PARAMETERS` (a
/// `TestParameters`) on each backend.
macro_rules! gpu_test {
    ($name:ident, $params:expr, $body:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            fn __parameters() -> $crate::wgpu_gpu::harness::TestParameters {
                $params
            }

            #[test]
            fn noop() {
                $crate::wgpu_gpu::harness::run(
                    $crate::wgpu_gpu::harness::Backend::Noop,
                    __parameters(),
                    $body,
                )
            }

            #[test]
            fn vulkan() {
                $crate::wgpu_gpu::harness::run(
                    $crate::wgpu_gpu::harness::Backend::Vulkan,
                    __parameters(),
                    $body,
                )
            }

            #[test]
            fn stock() {
                $crate::wgpu_gpu::harness::run(
                    $crate::wgpu_gpu::harness::Backend::Stock,
                    __parameters(),
                    $body,
                )
            }
        }
    };
}
