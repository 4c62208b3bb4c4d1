//! Pipeline caches through wgpu's API on keel-wgpu (keel-hal's caches with
//! their checked header), on noop and, where there is one, a Vulkan
//! adapter; and the allocator report. Each device ends with no keel-hal
//! object alive.

fn devices() -> Vec<(String, wgpu::Instance, wgpu::Device, wgpu::Queue)> {
    let mut out = Vec::new();
    for choice in [
        keel_wgpu::BackendChoice::Noop,
        keel_wgpu::BackendChoice::Vulkan,
    ] {
        let Ok(instance) =
            keel_wgpu::instance_with(choice, choice == keel_wgpu::BackendChoice::Vulkan)
        else {
            eprintln!("{choice:?}: skipped: no instance");
            continue;
        };
        let Ok(adapter) = pollster::block_on(instance.request_adapter(&Default::default())) else {
            eprintln!("{choice:?}: skipped: no adapter");
            continue;
        };
        if !adapter.features().contains(wgpu::Features::PIPELINE_CACHE) {
            eprintln!("{choice:?}: skipped: no PIPELINE_CACHE");
            continue;
        }
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            required_features: wgpu::Features::PIPELINE_CACHE,
            ..Default::default()
        }))
        .expect("device");
        out.push((format!("{choice:?}"), instance, device, queue));
    }
    out
}

const SHADER: &str = "
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) { data[id.x] = id.x; }
";

#[test]
fn caches_round_trip_and_damaged_data_is_refused() {
    for (name, instance, device, queue) in devices() {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: None,
            source: wgpu::ShaderSource::Wgsl(SHADER.into()),
        });
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        // SAFETY: no data: an empty cache.
        let cache = unsafe {
            device.create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
                label: Some("cache"),
                data: None,
                fallback: false,
            })
        };
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: None,
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: Some(&cache),
        });
        let data = cache.get_data().expect("the cache's data");
        assert!(!data.is_empty(), "{name}");
        // SAFETY: the data came from `get_data` of this adapter.
        let again = unsafe {
            device.create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
                label: None,
                data: Some(&data),
                fallback: false,
            })
        };
        assert!(pollster::block_on(scope.pop()).is_none(), "{name}");

        // Damaged data: refused, or an empty cache with `fallback`.
        let mut damaged = data.clone();
        let last = damaged.len() - 1;
        damaged[last] ^= 0xff;
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        // SAFETY: keel-hal checks the header and checksum before the driver.
        let refused = unsafe {
            device.create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
                label: None,
                data: Some(&damaged),
                fallback: false,
            })
        };
        let error = pollster::block_on(scope.pop());
        assert!(error.is_some(), "{name}: damaged data must be refused");
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        // SAFETY: as above.
        let fallback = unsafe {
            device.create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
                label: None,
                data: Some(&damaged),
                fallback: true,
            })
        };
        assert!(
            pollster::block_on(scope.pop()).is_none(),
            "{name}: fallback"
        );

        let report = device.generate_allocator_report().expect("a report");
        assert!(
            report.total_reserved_bytes >= report.total_allocated_bytes,
            "{name}"
        );
        drop((pipeline, cache, again, refused, fallback, module));
        let live = keel_wgpu::live_counts(&device).expect("keel device");
        assert_eq!(live, Default::default(), "{name}");
        drop((device, queue));
        // The Vulkan instance runs with the validation layer: no message.
        assert_eq!(keel_wgpu::validation_errors(&instance), Some(0), "{name}");
    }
}
