//! wgpu `tests/tests/wgpu-gpu/pipeline.rs`.

use crate::wgpu_gpu::harness::*;

const INVALID_SHADER_DESC: wgpu::ShaderModuleDescriptor = wgpu::ShaderModuleDescriptor {
    label: Some("invalid shader"),
    source: wgpu::ShaderSource::Wgsl(std::borrow::Cow::Borrowed("not valid wgsl")),
};

const TRIVIAL_COMPUTE_SHADER_DESC: wgpu::ShaderModuleDescriptor = wgpu::ShaderModuleDescriptor {
    label: Some("trivial compute shader"),
    source: wgpu::ShaderSource::Wgsl(std::borrow::Cow::Borrowed(
        "@compute @workgroup_size(1) fn main() {}",
    )),
};

const TRIVIAL_VERTEX_SHADER_DESC: wgpu::ShaderModuleDescriptor = wgpu::ShaderModuleDescriptor {
    label: Some("trivial vertex shader"),
    source: wgpu::ShaderSource::Wgsl(std::borrow::Cow::Borrowed(
        "@vertex fn main() -> @builtin(position) vec4<f32> { return vec4<f32>(0); }",
    )),
};

const TRIVIAL_FRAGMENT_SHADER_DESC: wgpu::ShaderModuleDescriptor = wgpu::ShaderModuleDescriptor {
    label: Some("trivial fragment shader"),
    source: wgpu::ShaderSource::Wgsl(std::borrow::Cow::Borrowed(
        "@fragment fn main() -> @location(0) vec4<f32> { return vec4<f32>(0); }",
    )),
};

// An invalid shader, a compute pipeline of it with a default layout, and
// that layout asked for: a validation error, no panic.
gpu_test!(
    compute_pipeline_default_layout_bad_module,
    TestParameters::default(),
    |ctx| {
        // Upstream pushes a scope it never pops (it takes stray errors).
        let _outer = ctx.device.push_error_scope(wgpu::ErrorFilter::Validation);
        fail(
            &ctx.device,
            || {
                let module = ctx.device.create_shader_module(INVALID_SHADER_DESC);
                let pipeline =
                    ctx.device
                        .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                            label: Some("compute pipeline"),
                            layout: None,
                            module: &module,
                            entry_point: Some("doesn't exist"),
                            compilation_options: Default::default(),
                            cache: None,
                        });
                // gfx-rs/wgpu#4167: this used to panic
                pipeline.get_bind_group_layout(0);
            },
            Some("Shader 'invalid shader' parsing error"),
        );
    }
);

gpu_test!(
    compute_pipeline_default_layout_bad_bgl_index,
    TestParameters::default()
        .test_features_limits()
        .expect_fail(
            On::ALL,
            "wgpu 30 gives an empty layout for a missing group under max_bind_groups, \
         without an error (the test predates it); keel-wgpu does the same"
        ),
    |ctx| {
        let _outer = ctx.device.push_error_scope(wgpu::ErrorFilter::Validation);
        fail(
            &ctx.device,
            || {
                let module = ctx.device.create_shader_module(TRIVIAL_COMPUTE_SHADER_DESC);
                let pipeline =
                    ctx.device
                        .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                            label: Some("compute pipeline"),
                            layout: None,
                            module: &module,
                            entry_point: Some("main"),
                            compilation_options: Default::default(),
                            cache: None,
                        });
                pipeline.get_bind_group_layout(0);
            },
            Some("Invalid group index 0"),
        );
    }
);

gpu_test!(
    render_pipeline_default_layout_bad_module,
    TestParameters::default(),
    |ctx| {
        let _outer = ctx.device.push_error_scope(wgpu::ErrorFilter::Validation);
        fail(
            &ctx.device,
            || {
                let module = ctx.device.create_shader_module(INVALID_SHADER_DESC);
                let pipeline = ctx
                    .device
                    .create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                        label: Some("render pipeline"),
                        layout: None,
                        vertex: wgpu::VertexState {
                            module: &module,
                            entry_point: Some("doesn't exist"),
                            compilation_options: Default::default(),
                            buffers: &[],
                        },
                        primitive: Default::default(),
                        depth_stencil: None,
                        multisample: Default::default(),
                        fragment: None,
                        multiview_mask: None,
                        cache: None,
                    });
                pipeline.get_bind_group_layout(0);
            },
            Some("Shader 'invalid shader' parsing error"),
        );
    }
);

gpu_test!(
    render_pipeline_default_layout_bad_bgl_index,
    TestParameters::default()
        .test_features_limits()
        .expect_fail(
            On::ALL,
            "wgpu 30 gives an empty layout for a missing group under max_bind_groups, \
         without an error (the test predates it); keel-wgpu does the same"
        ),
    |ctx| {
        let _outer = ctx.device.push_error_scope(wgpu::ErrorFilter::Validation);
        fail(
            &ctx.device,
            || {
                let vs_module = ctx.device.create_shader_module(TRIVIAL_VERTEX_SHADER_DESC);
                let fs_module = ctx
                    .device
                    .create_shader_module(TRIVIAL_FRAGMENT_SHADER_DESC);
                let pipeline = ctx
                    .device
                    .create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                        label: Some("render pipeline"),
                        layout: None,
                        vertex: wgpu::VertexState {
                            module: &vs_module,
                            entry_point: Some("main"),
                            compilation_options: Default::default(),
                            buffers: &[],
                        },
                        primitive: Default::default(),
                        depth_stencil: None,
                        multisample: Default::default(),
                        fragment: Some(wgpu::FragmentState {
                            module: &fs_module,
                            entry_point: Some("main"),
                            compilation_options: Default::default(),
                            targets: &[Some(wgpu::ColorTargetState {
                                format: wgpu::TextureFormat::Rgba8Unorm,
                                blend: None,
                                write_mask: wgpu::ColorWrites::ALL,
                            })],
                        }),
                        multiview_mask: None,
                        cache: None,
                    });
                pipeline.get_bind_group_layout(0);
            },
            Some("Invalid group index 0"),
        );
    }
);

gpu_test!(no_targetless_render, TestParameters::default(), |ctx| {
    fail(
        &ctx.device,
        || {
            // Multisampling too: some backends misbehave when asked to
            // compile for an unsupported sample count, which a missing
            // check here once caused.
            for power_of_two in [1, 2, 4, 8, 16, 32, 64] {
                let _ = ctx
                    .device
                    .create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                        label: None,
                        layout: None,
                        vertex: wgpu::VertexState {
                            module: &ctx.device.create_shader_module(TRIVIAL_VERTEX_SHADER_DESC),
                            entry_point: Some("main"),
                            compilation_options: Default::default(),
                            buffers: &[],
                        },
                        primitive: Default::default(),
                        depth_stencil: None,
                        multisample: wgpu::MultisampleState {
                            count: power_of_two,
                            ..Default::default()
                        },
                        fragment: None,
                        multiview_mask: None,
                        cache: None,
                    });
            }
        },
        Some(concat!(
            "At least one color attachment or depth-stencil attachment was expected, ",
            "but no render target for the pipeline was specified."
        )),
    )
});
