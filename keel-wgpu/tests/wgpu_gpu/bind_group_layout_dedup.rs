//! wgpu `tests/tests/wgpu-gpu/bind_group_layout_dedup.rs`.

use std::num::NonZeroU64;

use crate::wgpu_gpu::harness::*;

const SHADER_SRC: &str = "
@group(0) @binding(0)
var<uniform> buffer : f32;

@compute @workgroup_size(1, 1, 1) fn no_resources() {}
@compute @workgroup_size(1, 1, 1) fn resources() {
    // Just need a static use.
    let _value = buffer;
}
";

const ENTRY: wgpu::BindGroupLayoutEntry = wgpu::BindGroupLayoutEntry {
    binding: 0,
    visibility: wgpu::ShaderStages::COMPUTE,
    ty: wgpu::BindingType::Buffer {
        ty: wgpu::BufferBindingType::Uniform,
        has_dynamic_offset: false,
        min_binding_size: NonZeroU64::new(4),
    },
    count: None,
};

fn module(ctx: &TestingContext, src: &str) -> wgpu::ShaderModule {
    ctx.device
        .create_shader_module(wgpu::ShaderModuleDescriptor {
            label: None,
            source: wgpu::ShaderSource::Wgsl(src.into()),
        })
}

fn uniform_buffer(ctx: &TestingContext, size: u64) -> wgpu::Buffer {
    ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size,
        usage: wgpu::BufferUsages::UNIFORM,
        mapped_at_creation: false,
    })
}

fn compute_pipeline(
    ctx: &TestingContext,
    layout: Option<&wgpu::PipelineLayout>,
    module: &wgpu::ShaderModule,
    entry_point: Option<&str>,
) -> wgpu::ComputePipeline {
    ctx.device
        .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: None,
            layout,
            module,
            entry_point,
            compilation_options: Default::default(),
            cache: None,
        })
}

fn buffer_group(
    ctx: &TestingContext,
    layout: &wgpu::BindGroupLayout,
    buffer: &wgpu::Buffer,
) -> wgpu::BindGroup {
    ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout,
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: buffer.as_entire_binding(),
        }],
    })
}

gpu_test!(
    bind_group_layout_deduplication,
    TestParameters::default().test_features_limits(),
    |ctx| {
        let entries = &[];
        let bgl_1a = ctx
            .device
            .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: None,
                entries,
            });
        let bgl_1b = ctx
            .device
            .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: None,
                entries,
            });
        let bg_1a = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &bgl_1a,
            entries: &[],
        });
        let bg_1b = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &bgl_1b,
            entries: &[],
        });
        let pipeline_layout = ctx
            .device
            .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: None,
                bind_group_layouts: &[Some(&bgl_1b)],
                immediate_size: 0,
            });
        let module = module(&ctx, SHADER_SRC);
        let pipeline =
            compute_pipeline(&ctx, Some(&pipeline_layout), &module, Some("no_resources"));

        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: None,
            timestamp_writes: None,
        });
        pass.set_bind_group(0, &bg_1b, &[]);
        pass.set_pipeline(&pipeline);
        pass.dispatch_workgroups(1, 1, 1);
        pass.set_bind_group(0, &bg_1a, &[]);
        pass.dispatch_workgroups(1, 1, 1);
        drop(pass);
        ctx.queue.submit(Some(encoder.finish()));
    }
);

// https://github.com/gfx-rs/wgpu/issues/4824
gpu_test!(
    bind_group_layout_deduplication_with_dropped_user_handle,
    TestParameters::default().test_features_limits(),
    |ctx| {
        let bgl_1 = ctx
            .device
            .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: None,
                entries: &[ENTRY],
            });
        let pipeline_layout = ctx
            .device
            .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: None,
                bind_group_layouts: &[Some(&bgl_1)],
                immediate_size: 0,
            });
        // bgl_1 stays alive through the pipeline layout: deduplication must
        // still work.
        drop(bgl_1);
        let bgl_2 = ctx
            .device
            .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: None,
                entries: &[ENTRY],
            });
        let buffer = uniform_buffer(&ctx, 4);
        let bg = buffer_group(&ctx, &bgl_2, &buffer);
        let module = module(&ctx, SHADER_SRC);
        let pipeline =
            compute_pipeline(&ctx, Some(&pipeline_layout), &module, Some("no_resources"));

        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: None,
            timestamp_writes: None,
        });
        pass.set_bind_group(0, &bg, &[]);
        pass.set_pipeline(&pipeline);
        pass.dispatch_workgroups(1, 1, 1);
        drop(pass);
        ctx.queue.submit(Some(encoder.finish()));
    }
);

gpu_test!(
    get_derived_bgl,
    TestParameters::default().test_features_limits(),
    |ctx| {
        let buffer = uniform_buffer(&ctx, 4);
        let module = module(&ctx, SHADER_SRC);
        let pipeline = compute_pipeline(&ctx, None, &module, Some("resources"));
        // Two bind groups, taking the layout from the pipeline each time:
        // derived layouts are deduplicated despite several references.
        let bg1 = buffer_group(&ctx, &pipeline.get_bind_group_layout(0), &buffer);
        let bg2 = buffer_group(&ctx, &pipeline.get_bind_group_layout(0), &buffer);

        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: None,
            timestamp_writes: None,
        });
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bg1, &[]);
        pass.dispatch_workgroups(1, 1, 1);
        pass.set_bind_group(0, &bg2, &[]);
        pass.dispatch_workgroups(1, 1, 1);
        drop(pass);
        ctx.queue.submit(Some(encoder.finish()));
    }
);

gpu_test!(
    separate_pipelines_have_incompatible_derived_bgls,
    TestParameters::default().test_features_limits(),
    |ctx| {
        let buffer = uniform_buffer(&ctx, 4);
        let module = module(&ctx, SHADER_SRC);
        // Two pipelines, a bind group from the second.
        let pipeline1 = compute_pipeline(&ctx, None, &module, Some("resources"));
        let pipeline2 = compute_pipeline(&ctx, None, &module, Some("resources"));
        let bg2 = buffer_group(&ctx, &pipeline2.get_bind_group_layout(0), &buffer);

        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: None,
            timestamp_writes: None,
        });
        pass.set_pipeline(&pipeline1);
        // The wrong bind group for this pipeline: must fail.
        pass.set_bind_group(0, &bg2, &[]);
        pass.dispatch_workgroups(1, 1, 1);
        drop(pass);
        fail(
            &ctx.device,
            || encoder.finish(),
            Some("label at index 0 is not compatible with the corresponding bindgrouplayout"),
        );
    }
);

gpu_test!(
    derived_bgls_incompatible_with_regular_bgls,
    TestParameters::default().test_features_limits(),
    |ctx| {
        let buffer = uniform_buffer(&ctx, 4);
        let module = module(&ctx, SHADER_SRC);
        let pipeline = compute_pipeline(&ctx, None, &module, Some("resources"));
        // A matching explicit layout: incompatible with the derived one.
        let bgl = ctx
            .device
            .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: None,
                entries: &[ENTRY],
            });
        let bg = buffer_group(&ctx, &bgl, &buffer);

        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: None,
            timestamp_writes: None,
        });
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bg, &[]);
        pass.dispatch_workgroups(1, 1, 1);
        drop(pass);
        fail(
            &ctx.device,
            || encoder.finish(),
            Some("label at index 0 is not compatible with the corresponding bindgrouplayout"),
        );
    }
);

gpu_test!(
    bind_group_layout_deduplication_derived,
    TestParameters::default().test_features_limits(),
    |ctx| {
        let src = "
            @group(0) @binding(0) var<uniform> u1: vec4f;
            @group(1) @binding(0) var<uniform> u2: vec4f;

            @compute @workgroup_size(1, 1, 1)
            fn main() {
                // Just need a static use.
                let _u1 = u1;
                let _u2 = u2;
            }
        ";
        let module = module(&ctx, src);
        let pipeline = compute_pipeline(&ctx, None, &module, None);
        let bind_group_layout_0 = pipeline.get_bind_group_layout(0);
        let bind_group_layout_1 = pipeline.get_bind_group_layout(1);
        let buffer = uniform_buffer(&ctx, 16);
        // Groups 0 and 1 have the same layout: their bind groups swap.
        let bind_group_0 = buffer_group(&ctx, &bind_group_layout_1, &buffer);
        let bind_group_1 = buffer_group(&ctx, &bind_group_layout_0, &buffer);

        let mut encoder = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: None,
            timestamp_writes: None,
        });
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group_0, &[]);
        pass.set_bind_group(1, &bind_group_1, &[]);
        pass.dispatch_workgroups(1, 1, 1);
        drop(pass);
        ctx.queue.submit(Some(encoder.finish()));
    }
);
