//! Pipeline-statistics queries through wgpu's API on keel-wgpu (Vulkan):
//! a query counting two statistics resolves two u64 values per query, in
//! wgpu's layout, and counts what the dispatch did.

const SHADER: &str = "
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) { data[id.x] = id.x; }
";

#[test]
fn statistics_resolve_one_u64_per_value() {
    let Ok(instance) = keel_wgpu::instance_with(keel_wgpu::BackendChoice::Vulkan, true) else {
        eprintln!("skipped: no Vulkan instance");
        return;
    };
    let Ok(adapter) = pollster::block_on(instance.request_adapter(&Default::default())) else {
        eprintln!("skipped: no Vulkan adapter");
        return;
    };
    let features = wgpu::Features::PIPELINE_STATISTICS_QUERY;
    if !adapter.features().contains(features) {
        eprintln!("skipped: the adapter lacks PIPELINE_STATISTICS_QUERY");
        return;
    }
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_features: features,
        ..Default::default()
    }))
    .expect("device");
    let data = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 256 * 4,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(SHADER.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: data.as_entire_binding(),
        }],
    });
    let statistics = wgpu::PipelineStatisticsTypes::COMPUTE_SHADER_INVOCATIONS
        | wgpu::PipelineStatisticsTypes::CLIPPER_INVOCATIONS;
    let queries = device.create_query_set(&wgpu::QuerySetDescriptor {
        label: None,
        ty: wgpu::QueryType::PipelineStatistics(statistics),
        count: 2,
    });
    let resolved = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 32,
        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 32,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        for (query, groups) in [(0, 4), (1, 2)] {
            pass.begin_pipeline_statistics_query(&queries, query);
            pass.dispatch_workgroups(groups, 1, 1);
            pass.end_pipeline_statistics_query();
        }
    }
    encoder.resolve_query_set(&queries, 0..2, &resolved, 0);
    encoder.copy_buffer_to_buffer(&resolved, 0, &readback, 0, 32);
    queue.submit([encoder.finish()]);
    readback
        .slice(..)
        .map_async(wgpu::MapMode::Read, |r| r.expect("mapped"));
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("poll");
    let values: Vec<u64> = readback
        .slice(..)
        .get_mapped_range()
        .expect("mapped range")
        .chunks(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    readback.unmap();
    // Per query, values in bit order: clipper invocations, then compute
    // invocations; a dispatch clips nothing.
    assert_eq!(values, [0, 256, 0, 128]);
    drop((pipeline, group, module, data, queries, resolved, readback));
    assert_eq!(keel_wgpu::live_counts(&device), Some(Default::default()));
    drop((device, queue));
    assert_eq!(keel_wgpu::validation_errors(&instance), Some(0));
}
