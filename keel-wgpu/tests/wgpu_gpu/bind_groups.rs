//! wgpu `tests/tests/wgpu-gpu/bind_groups.rs`.

use std::num::NonZeroU64;

use wgpu::{BufferUsages, PollType};

use crate::wgpu_gpu::harness::*;

/// Two bind groups of one layout in one compute pass, for two shaders with
/// different binding sizes (8, then 4). Regression test for
/// gfx-rs/wgpu#7359.
fn multiple_bindings_with_differing_sizes(ctx: TestingContext) {
    const SHADER_SRC: &[&str] = &[
        "
        @group(0) @binding(0)
        var<uniform> buffer : vec2<f32>;

        @compute @workgroup_size(1, 1, 1) fn main() {
            // Just need a static use.
            let _value = buffer.x;
        }
        ",
        "
        @group(0) @binding(0)
        var<uniform> buffer : f32;

        @compute @workgroup_size(1, 1, 1) fn main() {
            // Just need a static use.
            let _value = buffer;
        }
        ",
    ];
    let buffer = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("buffer"),
        size: 8,
        usage: BufferUsages::UNIFORM | BufferUsages::COPY_SRC | BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let bind_group_layout = ctx
        .device
        .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("bgl"),
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: true,
                    min_binding_size: None,
                },
                count: None,
            }],
        });
    let pipeline_layout = ctx
        .device
        .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("pipeline_layout"),
            bind_group_layouts: &[Some(&bind_group_layout)],
            immediate_size: 0,
        });
    let pipelines = SHADER_SRC
        .iter()
        .enumerate()
        .map(|(i, &shader_src)| {
            let module = ctx
                .device
                .create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(&format!("shader{i}")),
                    source: wgpu::ShaderSource::Wgsl(shader_src.into()),
                });
            ctx.device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(&format!("pipeline{i}")),
                    layout: Some(&pipeline_layout),
                    module: &module,
                    entry_point: Some("main"),
                    compilation_options: Default::default(),
                    cache: None,
                })
        })
        .collect::<Vec<_>>();

    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
    let mut cpass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
    for (i, pipeline) in pipelines.iter().enumerate() {
        let bind_group = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(&format!("bg{i}")),
            layout: &bind_group_layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: &buffer,
                    offset: 0,
                    size: Some(NonZeroU64::new(u64::try_from(8 - 4 * i).unwrap()).unwrap()),
                }),
            }],
        });
        cpass.set_pipeline(pipeline);
        cpass.set_bind_group(0, &bind_group, &[0]);
        cpass.dispatch_workgroups(1, 1, 1);
    }
    drop(cpass);

    let data = [0u8; 8];
    ctx.queue.write_buffer(&buffer, 0, &data);
    ctx.queue.submit(Some(encoder.finish()));
    ctx.device.poll(PollType::wait_indefinitely()).unwrap();
}

/// `descriptor` against a layout that requires a non-filtering sampler.
fn try_sampler_nonfiltering_layout(
    ctx: TestingContext,
    descriptor: &wgpu::SamplerDescriptor,
    good: bool,
) {
    let label = descriptor.label;
    let bind_group_layout = ctx
        .device
        .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label,
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::NonFiltering),
                count: None,
            }],
        });
    let sampler = ctx.device.create_sampler(descriptor);
    let create_bind_group = || {
        let _ = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label,
            layout: &bind_group_layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::Sampler(&sampler),
            }],
        });
    };
    if good {
        valid(&ctx.device, create_bind_group);
    } else {
        fail(
            &ctx.device,
            create_bind_group,
            Some("but given a sampler with filtering"),
        );
    }
}

gpu_test!(
    multiple_bindings_with_different_sizes,
    TestParameters::default()
        // Upstream expects a failure everywhere (FailureCase::always(),
        // gfx-rs/wgpu#7359); it passes on wgpu 30.
        .limits(wgpu::Limits::downlevel_defaults()),
    multiple_bindings_with_differing_sizes
);

fn sampler(
    label: &'static str,
    min_filter: wgpu::FilterMode,
    mag_filter: wgpu::FilterMode,
    mipmap_filter: wgpu::MipmapFilterMode,
) -> wgpu::SamplerDescriptor<'static> {
    wgpu::SamplerDescriptor {
        label: Some(label),
        min_filter,
        mag_filter,
        mipmap_filter,
        ..wgpu::SamplerDescriptor::default()
    }
}

use wgpu::FilterMode::{Linear, Nearest};
use wgpu::MipmapFilterMode as Mip;

gpu_test!(
    bind_group_nonfiltering_layout_nonfiltering_sampler,
    TestParameters::default(),
    |ctx| {
        let descriptor = sampler(
            "bind_group_non_filtering_layout_nonfiltering_sampler",
            Nearest,
            Nearest,
            Mip::Nearest,
        );
        try_sampler_nonfiltering_layout(ctx, &descriptor, true);
    }
);

gpu_test!(
    bind_group_nonfiltering_layout_min_sampler,
    TestParameters::default(),
    |ctx| {
        let descriptor = sampler(
            "bind_group_non_filtering_layout_min_sampler",
            Linear,
            Nearest,
            Mip::Nearest,
        );
        try_sampler_nonfiltering_layout(ctx, &descriptor, false);
    }
);

gpu_test!(
    bind_group_nonfiltering_layout_mag_sampler,
    TestParameters::default(),
    |ctx| {
        let descriptor = sampler(
            "bind_group_non_filtering_layout_mag_sampler",
            Nearest,
            Linear,
            Mip::Nearest,
        );
        try_sampler_nonfiltering_layout(ctx, &descriptor, false);
    }
);

gpu_test!(
    bind_group_nonfiltering_layout_mipmap_sampler,
    TestParameters::default(),
    |ctx| {
        let descriptor = sampler(
            "bind_group_non_filtering_layout_mipmap_sampler",
            Nearest,
            Nearest,
            Mip::Linear,
        );
        try_sampler_nonfiltering_layout(ctx, &descriptor, false);
    }
);
