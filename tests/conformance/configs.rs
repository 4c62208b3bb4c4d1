//! The configurations a test runs on, and how each creates its instance.
//!
//! A configuration is a backend, a path (static type set or [`DynApi`]) and
//! an adapter index. Vulkan configurations are found once per process: one
//! probe instance is created with validation, checked, and its adapters listed.

use std::sync::Arc;

use keel_hal::{Api, Backend, BackendChoice, DynApi, Instance, InstanceDescriptor, InstanceFlags};

/// Reads an instance's validation-error count. It keeps working after the
/// instance and its devices are dropped, so errors reported while they are
/// destroyed (a leaked object, say) are counted too: read it last.
pub type ErrorCount = Arc<dyn Fn() -> u64 + Send + Sync>;

/// The noop backend's count: it validates nothing, so always 0.
fn no_errors() -> ErrorCount {
    Arc::new(|| 0)
}

/// An instance and its validation-error count.
pub struct MadeInstance<A: Api> {
    /// The instance.
    pub instance: A::Instance,
    /// Its count, readable after the instance is dropped.
    pub errors: ErrorCount,
}

/// Creates an instance of a configuration's backend from a descriptor.
pub type MakeInstance<A> =
    Arc<dyn Fn(&InstanceDescriptor) -> Result<MadeInstance<A>, String> + Send + Sync>;

/// One configuration: a backend, a path and an adapter.
pub struct Config<A: Api> {
    /// Printed name, e.g. `vulkan llvmpipe (dyn)`.
    pub name: String,
    /// The backend the objects really belong to.
    pub backend: Backend,
    /// Whether the objects travel through [`DynApi`].
    pub is_dyn: bool,
    /// Which of the instance's adapters to open.
    pub adapter_index: usize,
    /// The descriptor the configuration's instance is made with.
    pub desc: InstanceDescriptor<'static>,
    /// Makes an instance (tests use it for instances with other descriptors).
    pub make_instance: MakeInstance<A>,
}

/// Whether `KEEL_BACKENDS` (comma-separated; unset or empty = all) selects `backend`.
pub fn selected(backend: Backend) -> bool {
    match std::env::var("KEEL_BACKENDS") {
        Ok(list) if !list.trim().is_empty() => list
            .split(',')
            .any(|b| b.trim().eq_ignore_ascii_case(&backend.to_string())),
        _ => true,
    }
}

/// Whether `KEEL_ALLOW_NO_VALIDATION=1` lets Vulkan run without the validation layer.
#[cfg(feature = "vulkan")]
fn allow_no_validation() -> bool {
    std::env::var("KEEL_ALLOW_NO_VALIDATION").is_ok_and(|v| v == "1")
}

/// The descriptor every configuration starts from: validation and debug labels on.
pub fn base_desc(flags: InstanceFlags) -> InstanceDescriptor<'static> {
    InstanceDescriptor {
        name: "keel-hal conformance",
        flags,
        noop_memory_budget: None,
    }
}

/// The noop backend, statically typed.
pub fn noop_static() -> Config<keel_hal::noop::Api> {
    Config {
        name: "noop".into(),
        backend: Backend::Noop,
        is_dyn: false,
        adapter_index: 0,
        desc: base_desc(InstanceFlags::VALIDATION | InstanceFlags::DEBUG),
        make_instance: Arc::new(|desc| {
            // SAFETY: the noop backend loads no runtime library.
            let instance = unsafe { <keel_hal::noop::Instance as Instance>::init(desc) }
                .map_err(|e| e.to_string())?;
            Ok(MadeInstance {
                instance,
                errors: no_errors(),
            })
        }),
    }
}

/// The noop backend through [`DynApi`].
pub fn noop_dyn() -> Config<DynApi> {
    Config {
        name: "noop (dyn)".into(),
        backend: Backend::Noop,
        is_dyn: true,
        adapter_index: 0,
        desc: base_desc(InstanceFlags::VALIDATION | InstanceFlags::DEBUG),
        make_instance: Arc::new(|desc| {
            Ok(MadeInstance {
                instance: dyn_instance(BackendChoice::Noop, Backend::Noop, desc)?,
                errors: no_errors(),
            })
        }),
    }
}

/// An instance from [`keel_hal::instance`], checked to be of the expected backend.
pub fn dyn_instance(
    choice: BackendChoice,
    expected: Backend,
    desc: &InstanceDescriptor,
) -> Result<<DynApi as Api>::Instance, String> {
    let chosen = keel_hal::instance(choice, desc).map_err(|e| e.to_string())?;
    if chosen.backend != expected {
        return Err(format!(
            "asked for {choice:?}, got {} ({})",
            chosen.backend, chosen.reason
        ));
    }
    Ok(chosen.instance)
}

/// A device of another backend than a configuration's, for foreign-resource tests.
/// Fields drop in order: device, queue, instance.
pub struct OtherBackend {
    /// The other backend's device, through the dyn path.
    pub device: <DynApi as Api>::Device,
    /// Its queue.
    pub queue: <DynApi as Api>::Queue,
    /// Its instance.
    pub instance: <DynApi as Api>::Instance,
    /// Its instance's validation-error count (read after dropping it).
    pub errors: ErrorCount,
}

/// Opens a device of a backend other than `backend`, if this build and
/// machine have one (noop for Vulkan configurations, Vulkan for noop ones).
pub fn other_backend(backend: Backend) -> Result<Option<OtherBackend>, String> {
    let made = match backend {
        Backend::Vulkan => MadeInstance {
            instance: dyn_instance(
                BackendChoice::Noop,
                Backend::Noop,
                &base_desc(InstanceFlags::VALIDATION | InstanceFlags::DEBUG),
            )?,
            errors: no_errors(),
        },
        Backend::Noop => {
            #[cfg(feature = "vulkan")]
            if selected(Backend::Vulkan) {
                if let Ok(setup) = vulkan_setup() {
                    let made = vulkan_dyn_instance(&base_desc(setup.flags))?;
                    return open_first(made).map(Some);
                }
            }
            return Ok(None);
        }
    };
    open_first(made).map(Some)
}

fn open_first(made: MadeInstance<DynApi>) -> Result<OtherBackend, String> {
    let MadeInstance { instance, errors } = made;
    use keel_hal::Adapter;
    // SAFETY: live instance.
    let exposed = unsafe { instance.enumerate_adapters() }
        .into_iter()
        .next()
        .ok_or("the other backend has no adapter")?;
    // SAFETY: the adapter comes from the live instance.
    let open = unsafe { exposed.adapter.open(&Default::default()) }.map_err(|e| e.to_string())?;
    Ok(OtherBackend {
        device: open.device,
        queue: open.queue,
        instance,
        errors,
    })
}

#[cfg(feature = "vulkan")]
pub use vulkan::*;

#[cfg(feature = "vulkan")]
mod vulkan {
    use std::sync::{Arc, Mutex, OnceLock};

    use keel_hal::{Backend, DynApi, Instance, InstanceDescriptor, InstanceFlags};

    use super::{allow_no_validation, base_desc, Config, ErrorCount, MadeInstance};

    /// What the probe found: the flags to use and the adapters.
    pub struct VulkanSetup {
        /// `VALIDATION | DEBUG`, or `DEBUG` alone where the layer is missing and allowed to be.
        pub flags: InstanceFlags,
        /// Adapter names, in enumeration order.
        pub adapters: Vec<String>,
        /// The loaded validation layer's version (`specVersion`), or `None`.
        pub validation_layer: Option<u32>,
    }

    /// The process-wide Vulkan probe, or why Vulkan cannot be tested here.
    pub fn vulkan_setup() -> Result<&'static VulkanSetup, String> {
        static SETUP: OnceLock<Result<VulkanSetup, String>> = OnceLock::new();
        SETUP.get_or_init(probe).as_ref().map_err(Clone::clone)
    }

    const HINT: &str = "set KEEL_BACKENDS=noop to test the noop backend only";

    fn probe() -> Result<VulkanSetup, String> {
        let mut flags = InstanceFlags::VALIDATION | InstanceFlags::DEBUG;
        // SAFETY: the system's Vulkan loader is trusted to be conforming.
        // A missing validation layer does not fail `init`: the instance
        // reports it through `validation_enabled`, checked below.
        let instance = unsafe { keel_hal::vulkan::Instance::init(&base_desc(flags)) }
            .map_err(|e| format!("cannot create a Vulkan instance: {e} ({HINT})"))?;
        check_validation(&instance, flags)?;
        if !instance.validation_enabled() {
            println!(
                "vulkan: validation layer not active; KEEL_ALLOW_NO_VALIDATION=1, going on without"
            );
            flags = InstanceFlags::DEBUG;
        }
        // SAFETY: live instance.
        let exposed = unsafe { instance.enumerate_adapters() };
        // NVIDIA's proprietary driver names itself "NVIDIA"; NVK is Mesa's.
        let nvidia_proprietary = exposed
            .iter()
            .any(|a| a.info.vendor == 0x10de && a.info.driver.starts_with("NVIDIA"));
        let adapters: Vec<String> = exposed.into_iter().map(|a| a.info.name).collect();
        if adapters.is_empty() {
            return Err(format!(
                "no Vulkan adapter meets the Vulkan 1.3 baseline ({HINT})"
            ));
        }
        let setup = VulkanSetup {
            flags,
            adapters,
            validation_layer: instance.validation_layer_version(),
        };
        let layer = setup.validation_layer.is_some();
        keep_until_exit(instance, nvidia_proprietary && !layer);
        Ok(setup)
    }

    /// The probe's instance, held from the probe until the process exits:
    /// the loader unloads the driver when the last instance goes, and
    /// NVIDIA's driver cannot be loaded again and again in one process (its
    /// static TLS block runs out: "cannot allocate memory in static TLS
    /// block", then no driver at all).
    static KEEPALIVE: Mutex<Option<keel_hal::vulkan::Instance>> = Mutex::new(None);

    /// Keeps `instance` in [`KEEPALIVE`]; with `release_at_exit` (NVIDIA's
    /// proprietary driver without a validation layer), has `exit` destroy it.
    ///
    /// NVIDIA's driver registers its own exit handler when an instance is
    /// created, and that handler tearing down an instance that is still
    /// alive deadlocks now and then (580.159 on the H200: the tests had
    /// all passed and printed their result, and the process never exited;
    /// gfx-rs/wgpu#8365 reports the same). Handlers run in the reverse order
    /// of registration, so this one, registered after the driver's, destroys
    /// the instance first and the driver's finds nothing alive. Elsewhere
    /// the instance is left to the end of the process: Debian 13's lavapipe
    /// crashed when it was destroyed inside `exit` (its own exit handlers,
    /// registered later, had run first), and so did NVIDIA's with validation
    /// layer 1.4.309 loaded (SIGSEGV at exit on the H200 in the parent and
    /// in `cross_process_import`'s child, after every test had passed: the
    /// layer's own exit-time teardown had run first); with a layer the
    /// instance too is left to the end of the process.
    fn keep_until_exit(instance: keel_hal::vulkan::Instance, release_at_exit: bool) {
        /// Runs inside `exit`, after every test has returned.
        extern "C" fn release() {
            let mut held = KEEPALIVE.lock().unwrap_or_else(|e| e.into_inner());
            drop(held.take());
        }
        *KEEPALIVE.lock().unwrap_or_else(|e| e.into_inner()) = Some(instance);
        if !release_at_exit {
            return;
        }
        // SAFETY: `release` is a plain function that touches only
        // `KEEPALIVE`, which is never locked across a test's end; libtest
        // has joined every test thread before `main` returns into `exit`.
        if unsafe { libc::atexit(release) } != 0 {
            println!("vulkan: atexit failed: the probe instance lives until the process ends");
        }
    }

    /// Fails when validation was asked for but the layer is not really on.
    fn check_validation(
        instance: &keel_hal::vulkan::Instance,
        flags: InstanceFlags,
    ) -> Result<(), String> {
        if flags.contains(InstanceFlags::VALIDATION)
            && !instance.validation_enabled()
            && !allow_no_validation()
        {
            return Err("VK_LAYER_KHRONOS_validation is not active: install it \
                        (scripts/setup.sh) or set KEEL_ALLOW_NO_VALIDATION=1"
                .into());
        }
        Ok(())
    }

    /// A Vulkan instance, checked for validation, with its error counter
    /// (which outlives the instance).
    fn vulkan_instance(
        desc: &InstanceDescriptor,
    ) -> Result<(keel_hal::vulkan::Instance, ErrorCount), String> {
        // SAFETY: the system's Vulkan loader is trusted to be conforming.
        let instance =
            unsafe { keel_hal::vulkan::Instance::init(desc) }.map_err(|e| e.to_string())?;
        check_validation(&instance, desc.flags)?;
        let counter = instance.validation_counter();
        Ok((instance, Arc::new(move || counter.errors())))
    }

    /// A Vulkan instance through [`DynApi`]. Made here rather than by
    /// `keel_hal::instance` so that its error counter can be taken first.
    pub fn vulkan_dyn_instance(desc: &InstanceDescriptor) -> Result<MadeInstance<DynApi>, String> {
        let (instance, errors) = vulkan_instance(desc)?;
        let instance: Box<dyn keel_hal::DynInstance> = Box::new(instance);
        Ok(MadeInstance { instance, errors })
    }

    /// Vulkan adapter `index`, statically typed.
    pub fn vulkan_static(setup: &VulkanSetup, index: usize) -> Config<keel_hal::vulkan::Api> {
        Config {
            name: format!("vulkan {}", setup.adapters[index]),
            backend: Backend::Vulkan,
            is_dyn: false,
            adapter_index: index,
            desc: base_desc(setup.flags),
            make_instance: Arc::new(|desc| {
                let (instance, errors) = vulkan_instance(desc)?;
                Ok(MadeInstance { instance, errors })
            }),
        }
    }

    /// Vulkan adapter `index` through [`DynApi`].
    pub fn vulkan_dyn(setup: &VulkanSetup, index: usize) -> Config<DynApi> {
        Config {
            name: format!("vulkan {} (dyn)", setup.adapters[index]),
            backend: Backend::Vulkan,
            is_dyn: true,
            adapter_index: index,
            desc: base_desc(setup.flags),
            make_instance: Arc::new(|desc: &InstanceDescriptor| vulkan_dyn_instance(desc)),
        }
    }
}
