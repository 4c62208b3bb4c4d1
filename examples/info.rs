//! Lists every adapter of every backend this build has, with what it can do,
//! then which backend `BackendChoice::Auto` picks and why.
//!
//! ```text
//! cargo run --example info
//! cargo run --example info --no-default-features   # noop only
//! ```

use keel_hal::wgt;
use keel_hal::{BackendChoice, DynExposedAdapter, DynInstance, HalFeatures, InstanceDescriptor};

fn main() {
    env_logger::init();
    let desc = InstanceDescriptor {
        name: "keel-hal info",
        ..Default::default()
    };

    #[cfg(feature = "vulkan")]
    list("vulkan", BackendChoice::Vulkan, &desc);
    #[cfg(not(feature = "vulkan"))]
    println!("vulkan: not built (feature `vulkan` is off)\n");
    list("noop", BackendChoice::Noop, &desc);

    match keel_hal::instance(BackendChoice::Auto, &desc) {
        Ok(chosen) => println!(
            "BackendChoice::Auto picks {}: {}",
            chosen.backend, chosen.reason
        ),
        Err(e) => println!("BackendChoice::Auto fails: {e}"),
    }
}

/// Prints every adapter of one backend, or why there is none.
fn list(name: &str, choice: BackendChoice, desc: &InstanceDescriptor) {
    let chosen = match keel_hal::instance(choice, desc) {
        Ok(chosen) => chosen,
        Err(e) => {
            println!("{name}: unavailable: {e}\n");
            return;
        }
    };
    // SAFETY: the instance is live for the whole call; adapters are only read.
    let adapters = unsafe { chosen.instance.enumerate_adapters() };
    println!("{name}: {} adapter(s)", adapters.len());
    for (index, adapter) in adapters.iter().enumerate() {
        print_adapter(index, adapter);
    }
    println!();
}

fn print_adapter(index: usize, exposed: &DynExposedAdapter) {
    let info = &exposed.info;
    let caps = &exposed.capabilities;
    let (major, minor, patch) = info.api_version;
    println!("  [{index}] {}", info.name);
    println!("      backend        {}", info.backend);
    println!("      device type    {:?}", info.device_type);
    println!(
        "      vendor/device  {:#06x}/{:#06x}",
        info.vendor, info.device
    );
    println!(
        "      driver         {} ({})",
        info.driver, info.driver_info
    );
    println!("      API version    {major}.{minor}.{patch}");

    let yes_no = |f: HalFeatures| {
        if caps.hal_features.contains(f) {
            "yes"
        } else {
            "no"
        }
    };
    println!(
        "      shader execution        {}",
        yes_no(HalFeatures::SHADER_EXECUTION)
    );
    println!(
        "      ray-tracing pipelines   {}",
        yes_no(HalFeatures::RAY_TRACING_PIPELINE)
    );
    println!(
        "      ray query               {}",
        yes_no(HalFeatures::RAY_QUERY)
    );
    println!(
        "      acceleration structures {}",
        yes_no(HalFeatures::ACCELERATION_STRUCTURE)
    );
    let external: Vec<&str> = [
        (HalFeatures::EXTERNAL_MEMORY_FD, "opaque fd"),
        (HalFeatures::EXTERNAL_MEMORY_DMA_BUF, "dma-buf"),
        (HalFeatures::EXTERNAL_MEMORY_HOST, "host pointer"),
        (HalFeatures::EXTERNAL_SEMAPHORE_FD, "semaphore fd"),
        (HalFeatures::DRM_FORMAT_MODIFIER, "DRM format modifiers"),
    ]
    .into_iter()
    .filter(|(f, _)| caps.hal_features.contains(*f))
    .map(|(_, what)| what)
    .collect();
    println!(
        "      external memory         {}",
        if external.is_empty() {
            "none".to_string()
        } else {
            external.join(", ")
        }
    );

    if caps.features.contains(wgt::Features::TIMESTAMP_QUERY) {
        println!(
            "      timestamps              yes, {} ns per tick",
            caps.timestamp_period
        );
    } else {
        println!("      timestamps              no");
    }

    let l = &caps.limits;
    println!("      limits");
    println!(
        "        max_buffer_size                 {}",
        l.max_buffer_size
    );
    println!(
        "        max_texture_dimension 1d/2d/3d  {}/{}/{}",
        l.max_texture_dimension_1d, l.max_texture_dimension_2d, l.max_texture_dimension_3d
    );
    println!(
        "        max_texture_array_layers        {}",
        l.max_texture_array_layers
    );
    println!(
        "        max_bind_groups                 {}",
        l.max_bind_groups
    );
    println!(
        "        max_storage_buffer_binding_size {}",
        l.max_storage_buffer_binding_size
    );
    println!(
        "        max_compute_workgroup_size      {}x{}x{} ({} invocations)",
        l.max_compute_workgroup_size_x,
        l.max_compute_workgroup_size_y,
        l.max_compute_workgroup_size_z,
        l.max_compute_invocations_per_workgroup
    );
    println!(
        "        min_uniform/storage alignment   {}/{}",
        l.min_uniform_buffer_offset_alignment, l.min_storage_buffer_offset_alignment
    );
}
