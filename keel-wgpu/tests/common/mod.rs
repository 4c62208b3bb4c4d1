//! The harness the integration tests share: a device of each backend
//! (keel-wgpu noop, keel-wgpu Vulkan, stock wgpu), run one at a time, with
//! keel's side checked for leaks and validation-layer messages.

#![allow(dead_code)]

use parking_lot::Mutex;

/// One Vulkan instance at a time: Debian 12's layer crashes when instances
/// are made on several threads at once.
pub static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Where a test runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// keel-wgpu on keel-hal's noop backend.
    Noop,
    /// keel-wgpu on keel-hal's Vulkan backend.
    Vulkan,
    /// Stock wgpu (wgpu-core and wgpu-hal) on Vulkan: the reference.
    Stock,
}

/// A device of one backend.
pub struct Gpu {
    pub backend: Backend,
    pub name: &'static str,
    pub instance: wgpu::Instance,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    /// The adapter `device` came from (a second device of it for tests of
    /// objects of another device).
    pub adapter: wgpu::Adapter,
}

/// A device with `features`, and those of `optional` the adapter has.
pub fn open(backend: Backend, features: wgpu::Features, optional: wgpu::Features) -> Option<Gpu> {
    open_with_limits(backend, features, optional, |_| wgpu::Limits::default())
}

/// As [`open`], with the limits `limits` picks for the adapter.
pub fn open_with_limits(
    backend: Backend,
    features: wgpu::Features,
    optional: wgpu::Features,
    limits: impl FnOnce(&wgpu::Adapter) -> wgpu::Limits,
) -> Option<Gpu> {
    let (name, choice) = match backend {
        Backend::Noop => ("noop", keel_wgpu::BackendChoice::Noop),
        Backend::Vulkan => ("vulkan", keel_wgpu::BackendChoice::Vulkan),
        Backend::Stock => ("stock wgpu", keel_wgpu::BackendChoice::Vulkan),
    };
    let instance = if backend == Backend::Stock {
        // No layer of stock's own: the comparison is of what the program
        // sees. Indirect calls are checked, as by wgpu's default flags.
        wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::VULKAN,
            flags: wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL,
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        })
    } else {
        match keel_wgpu::instance_with(choice, true) {
            Ok(i) => i,
            Err(e) => {
                eprintln!("skip {name}: no instance ({e})");
                return None;
            }
        }
    };
    let adapter = match pollster::block_on(instance.request_adapter(&Default::default())) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("skip {name}: no adapter ({e})");
            return None;
        }
    };
    if !adapter.features().contains(features) {
        eprintln!(
            "skip {name}: the adapter lacks {:?}",
            features - adapter.features()
        );
        return None;
    }
    let required_features = features | (optional & adapter.features());
    let experimental_features =
        if required_features.intersects(wgpu::Features::all_experimental_mask()) {
            // SAFETY: the tests that ask for experimental features use them
            // only as their documentation allows.
            unsafe { wgpu::ExperimentalFeatures::enabled() }
        } else {
            wgpu::ExperimentalFeatures::disabled()
        };
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_features,
        required_limits: limits(&adapter),
        experimental_features,
        ..Default::default()
    }))
    .expect("device");
    Some(Gpu {
        backend,
        name,
        instance,
        device,
        queue,
        adapter,
    })
}

/// Runs `f` on keel-wgpu's noop and Vulkan backends, then checks that
/// nothing leaked and the layer said nothing; and on stock wgpu.
pub fn each_backend(features: wgpu::Features, f: impl Fn(&Gpu)) {
    each_backend_with(features, wgpu::Features::empty(), f)
}

/// As [`each_backend`], also asking for those of `optional` the adapter has.
pub fn each_backend_with(features: wgpu::Features, optional: wgpu::Features, f: impl Fn(&Gpu)) {
    each_backend_limits(features, optional, |_| wgpu::Limits::default(), f)
}

/// As [`each_backend_with`], with the limits `limits` picks for each adapter.
pub fn each_backend_limits(
    features: wgpu::Features,
    optional: wgpu::Features,
    limits: impl Fn(&wgpu::Adapter) -> wgpu::Limits,
    f: impl Fn(&Gpu),
) {
    let _one = ONE_AT_A_TIME.lock();
    for backend in [Backend::Noop, Backend::Vulkan, Backend::Stock] {
        let Some(gpu) = open_with_limits(backend, features, optional, &limits) else {
            continue;
        };
        eprintln!("on {}", gpu.name);
        f(&gpu);
        if backend == Backend::Stock {
            continue;
        }
        let leftovers = end_checks(gpu);
        assert!(leftovers.is_empty(), "{}", leftovers.join("; "));
    }
}

/// Closes a keel-wgpu device and says what it left: keel-hal objects
/// still alive, then validation-layer messages once the device is gone.
pub fn end_checks(gpu: Gpu) -> Vec<String> {
    let Gpu {
        name,
        instance,
        device,
        queue,
        ..
    } = gpu;
    let mut out = Vec::new();
    let live = keel_wgpu::live_counts(&device);
    if live != Some(Default::default()) {
        out.push(format!("{name}: keel-hal objects left alive: {live:?}"));
    }
    drop((device, queue));
    let messages = keel_wgpu::validation_errors(&instance);
    if messages != Some(0) {
        out.push(format!("{name}: {messages:?} validation-layer messages"));
    }
    out
}

/// The validation error `f` caused, if any.
pub fn caught(device: &wgpu::Device, f: impl FnOnce()) -> Option<String> {
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    f();
    pollster::block_on(scope.pop()).map(|e| e.to_string())
}
