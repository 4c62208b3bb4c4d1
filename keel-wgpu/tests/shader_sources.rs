//! Shader sources wgpu takes beyond WGSL: SPIR-V words
//! (`ShaderSource::SpirV`, parsed by naga with wgpu's options), naga
//! modules (`ShaderSource::Naga`) and passthrough SPIR-V
//! (`create_shader_module_passthrough`), each run on keel-wgpu (noop,
//! Vulkan) and stock wgpu: the same results, and the same validation errors
//! for sources that do not parse or validate and for passthrough misuse.

mod common;

use common::{caught, each_backend, Backend, Gpu};
use wgpu::util::DeviceExt;

/// Writes `i * 3 + 1` to element `i` of 64.
const FILL: &str = "
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    data[id.x] = id.x * 3u + 1u;
}
";

fn naga_module(source: &str) -> naga::Module {
    naga::front::wgsl::parse_str(source).expect("test WGSL parses")
}

fn spirv_words(source: &str) -> Vec<u32> {
    let module = naga_module(source);
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::empty(),
    )
    .validate(&module)
    .expect("test WGSL validates");
    naga::back::spv::write_vec(&module, &info, &Default::default(), None).expect("SPIR-V out")
}

/// Runs FILL from `source` and returns the 64 values (`None` on noop,
/// which runs no shaders).
fn fill(gpu: &Gpu, source: wgpu::ShaderSource<'_>) -> Option<Vec<u32>> {
    let module = gpu
        .device
        .create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("fill"),
            source,
        });
    run_fill(gpu, &module, None)
}

/// FILL's layout written out: one read-write storage buffer.
fn fill_layout(device: &wgpu::Device) -> wgpu::PipelineLayout {
    let group = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: None,
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: false },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }],
    });
    device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: None,
        bind_group_layouts: &[Some(&group)],
        immediate_size: 0,
    })
}

/// Runs FILL's dispatch with `module` (and `layout`, else a derived one).
fn run_fill(
    gpu: &Gpu,
    module: &wgpu::ShaderModule,
    layout: Option<&wgpu::PipelineLayout>,
) -> Option<Vec<u32>> {
    let device = &gpu.device;
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout,
        module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let data = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: &[0; 256],
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
    });
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 256,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: data.as_entire_binding(),
        }],
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }
    encoder.copy_buffer_to_buffer(&data, 0, &readback, 0, 256);
    gpu.queue.submit([encoder.finish()]);
    readback
        .slice(..)
        .map_async(wgpu::MapMode::Read, |r| r.expect("mapped"));
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("poll");
    let values =
        bytemuck::cast_slice::<u8, u32>(&readback.slice(..).get_mapped_range().expect("range"))
            .to_vec();
    readback.unmap();
    (gpu.backend != Backend::Noop).then_some(values)
}

#[test]
fn spirv_and_naga_sources_run_as_wgsl_does() {
    let expected: Vec<u32> = (0..64).map(|i| i * 3 + 1).collect();
    let words = spirv_words(FILL);
    each_backend(wgpu::Features::empty(), |gpu| {
        for (what, source) in [
            ("WGSL", wgpu::ShaderSource::Wgsl(FILL.into())),
            ("SPIR-V", wgpu::ShaderSource::SpirV(words.as_slice().into())),
            (
                "naga",
                wgpu::ShaderSource::Naga(std::borrow::Cow::Owned(naga_module(FILL))),
            ),
        ] {
            let mut values = None;
            let error = caught(&gpu.device, || values = fill(gpu, source));
            assert_eq!(error, None, "{}: {what}", gpu.name);
            if let Some(values) = values {
                assert_eq!(values, expected, "{}: {what}", gpu.name);
            }
        }
    });
}

/// A module whose words are not SPIR-V, and one that parses but does not
/// validate (a storage write through a read-only binding), are validation
/// errors at creation, and pipelines made from them are errors too.
#[test]
fn spirv_that_does_not_parse_or_validate_is_a_validation_error() {
    let not_spirv = [0x0723_0203u32, 0x0001_0000, 0, 7, 0, 0xdead_beef];
    let mut module = naga_module(FILL);
    for (_, var) in module.global_variables.iter_mut() {
        var.space = naga::AddressSpace::Storage {
            access: naga::StorageAccess::LOAD,
        };
    }
    each_backend(wgpu::Features::empty(), |gpu| {
        let device = &gpu.device;
        let parse = caught(device, || {
            let _ = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("garbage"),
                source: wgpu::ShaderSource::SpirV(not_spirv.as_slice().into()),
            });
        });
        let parse = parse.unwrap_or_else(|| panic!("{}: garbage SPIR-V accepted", gpu.name));
        assert!(parse.contains("garbage"), "{}: {parse}", gpu.name);
        let invalid = caught(device, || {
            let _ = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("read-only write"),
                source: wgpu::ShaderSource::Naga(std::borrow::Cow::Owned(module.clone())),
            });
        });
        let invalid =
            invalid.unwrap_or_else(|| panic!("{}: invalid naga module accepted", gpu.name));
        assert!(
            invalid.contains("Shader validation"),
            "{}: {invalid}",
            gpu.name
        );
    });
}

/// Passthrough entry points named `names`, FILL's workgroup size.
fn passthrough(names: &[&'static str]) -> Vec<wgpu::PassthroughShaderEntryPoint<'static>> {
    names
        .iter()
        .map(|&name| wgpu::PassthroughShaderEntryPoint {
            name: name.into(),
            workgroup_size: (64, 1, 1),
        })
        .collect()
}

/// Passthrough SPIR-V reaches the driver unread and runs as the checked
/// module does, with the program's own layout.
#[test]
fn passthrough_spirv_runs_with_an_explicit_layout() {
    let expected: Vec<u32> = (0..64).map(|i| i * 3 + 1).collect();
    let words = spirv_words(FILL);
    each_backend(wgpu::Features::PASSTHROUGH_SHADERS, |gpu| {
        let entry_points = passthrough(&["main"]);
        // SAFETY: naga wrote the words from a module it validated, for
        // the layout given below.
        let module = unsafe {
            gpu.device
                .create_shader_module_passthrough(wgpu::ShaderModuleDescriptorPassthrough {
                    label: Some("fill"),
                    entry_points: entry_points.into(),
                    spirv: Some(words.as_slice().into()),
                    ..Default::default()
                })
        };
        let layout = fill_layout(&gpu.device);
        let mut values = None;
        let error = caught(&gpu.device, || {
            values = run_fill(gpu, &module, Some(&layout))
        });
        assert_eq!(error, None, "{}", gpu.name);
        if let Some(values) = values {
            assert_eq!(values, expected, "{}", gpu.name);
        }
    });
}

/// What wgpu-core checks of a passthrough module is checked: the feature,
/// code for the backend, and the entry point a pipeline names.
#[test]
fn passthrough_misuse_is_what_stock_reports() {
    let words = spirv_words(FILL);
    let with = |device: &wgpu::Device, spirv: Option<&[u32]>| {
        // SAFETY: the words (where given) are naga's, valid for FILL's
        // layout; the rest is refused before any driver sees it.
        unsafe {
            device.create_shader_module_passthrough(wgpu::ShaderModuleDescriptorPassthrough {
                label: Some("fill"),
                entry_points: passthrough(&["main"]).into(),
                spirv: spirv.map(Into::into),
                wgsl: Some(FILL.into()),
                ..Default::default()
            })
        }
    };
    // Without the feature.
    each_backend(wgpu::Features::empty(), |gpu| {
        let error = caught(&gpu.device, || {
            let _ = with(&gpu.device, Some(&words));
        });
        let error = error.unwrap_or_else(|| panic!("{}: accepted without the feature", gpu.name));
        assert!(
            error.contains("PASSTHROUGH_SHADERS"),
            "{}: {error}",
            gpu.name
        );
    });
    each_backend(wgpu::Features::PASSTHROUGH_SHADERS, |gpu| {
        // No SPIR-V: nothing this backend takes.
        let error = caught(&gpu.device, || {
            let _ = with(&gpu.device, None);
        });
        let error = error.unwrap_or_else(|| panic!("{}: WGSL-only passthrough accepted", gpu.name));
        assert!(
            error.contains("compatible with this backend"),
            "{}: {error}",
            gpu.name
        );
        // A pipeline naming an entry point the module does not list.
        let module = with(&gpu.device, Some(&words));
        let layout = fill_layout(&gpu.device);
        let error = caught(&gpu.device, || {
            let _ = gpu
                .device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: None,
                    layout: Some(&layout),
                    module: &module,
                    entry_point: Some("other"),
                    compilation_options: Default::default(),
                    cache: None,
                });
        });
        let error = error.unwrap_or_else(|| panic!("{}: unknown entry point accepted", gpu.name));
        assert!(error.contains("other"), "{}: {error}", gpu.name);
        // No layout: nothing to derive one from.
        let error = caught(&gpu.device, || {
            let _ = gpu
                .device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: None,
                    layout: None,
                    module: &module,
                    entry_point: Some("main"),
                    compilation_options: Default::default(),
                    cache: None,
                });
        });
        let error = error.unwrap_or_else(|| panic!("{}: implicit layout accepted", gpu.name));
        assert!(
            error.contains("implicit pipeline layout"),
            "{}: {error}",
            gpu.name
        );
    });
}
