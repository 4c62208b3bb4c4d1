//! What is measured: the workloads, their sizes, the shaders, and the
//! `Side` trait each implementation (keel-hal, wgpu-hal, raw ash) fulfils.

use std::fmt;

/// Memory kind of a buffer workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mem {
    /// GPU-only (Vulkan: DEVICE_LOCAL).
    Device,
    /// CPU writes, GPU reads (Vulkan: HOST_VISIBLE | HOST_COHERENT).
    Upload,
}

/// Which pass an encoding workload records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// `set_bind_group` + `dispatch` in a compute pass.
    Compute,
    /// `set_bind_group` + `draw` in a render pass.
    Render,
}

/// Which floor the raw side's bind-group churn is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetFloor {
    /// Destroyed sets go to a per-layout free list and are rewritten with
    /// one `vkUpdateDescriptorSets` (what keel-hal does while its per-layout
    /// set cache hits).
    Reuse,
    /// `vkAllocateDescriptorSets` + `vkUpdateDescriptorSets` per group,
    /// `vkFreeDescriptorSets` per group, from one FREE_DESCRIPTOR_SET pool.
    Allocate,
}

/// How the workgroup-zeroing workload's shader zeroes its `var<workgroup>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zeroing {
    /// Each side translates [`ZERO_WGSL`] itself, with its own defaults
    /// (naga's native mode, `OpVariable` with a null initializer, where the
    /// device has `shaderZeroInitializeWorkgroupMemory`).
    Native,
    /// Both sides get the same SPIR-V, [`zero_spirv`]: naga's polyfill,
    /// which zeroes the memory in the shader, then a barrier.
    Polyfill,
}

/// Bytes the Upload buffer workloads write through the mapping per buffer.
pub const UPLOAD_WRITE: usize = 64;

/// One thing to measure. Each sample reports nanoseconds per op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// Create `groups` bind groups (all live at once), then destroy them
    /// all; `layouts` layouts used in turn. One op = one create + one
    /// destroy. keel-hal and wgpu-hal do the same for either `floor`.
    BindGroups {
        layouts: usize,
        groups: usize,
        floor: SetFloor,
    },
    /// Create `count` bind group layouts (the three churn layouts in turn,
    /// all live at once), then destroy them all. One op = create + destroy.
    BindGroupLayouts { count: usize },
    /// Buffers of one size and memory kind. `live`: create `iters`
    /// buffers (all live at once), then destroy them all; otherwise create
    /// and destroy one at a time, `iters` times. Upload buffers also get
    /// [`UPLOAD_WRITE`] bytes written through their mapping on every side.
    /// `holes` live buffers interleaved with as many freed ones sit in the
    /// allocator while it runs. One op = create (+ write) + destroy.
    Buffers {
        size: u64,
        mem: Mem,
        holes: usize,
        iters: usize,
        live: bool,
    },
    /// Record `commands` × (set_bind_group + dispatch/draw) between
    /// begin and end of encoding. One op = one pair.
    Encode { pass: Pass, commands: usize },
    /// The compaction cycle of `blases` compactable BLASes of `triangles`
    /// triangles each: create, build (in batches of [`BUILD_BATCH`], one
    /// submission each), read compacted sizes, create the compacted ones,
    /// copy, destroy all. Numbers per [`Workload::metrics`].
    Compaction { blases: usize, triangles: u32 },
    /// Size query + creation of `count` one-triangle BLASes (all live at
    /// once), with or without `ALLOW_COMPACTION`, then destruction of all.
    /// One op = one BLAS created and destroyed.
    BlasCreate { compactable: bool, count: usize },
    /// keel-hal vs raw only (wgpu-hal has no external memory): on device A
    /// create a `size`-byte buffer exportable as an opaque fd and export
    /// it; import it on device B; on B copy [`EXTERNAL_COPY`] bytes out of
    /// it (an acquire barrier, a copy, a submit waited for); destroy both.
    /// One op = one such round; `iters` rounds a sample. Each sample also
    /// checks that the process's open-fd count is where it started.
    External { size: u64, iters: usize },
    /// keel-hal vs wgpu-hal only (no raw floor): `iters` rounds of one
    /// dispatch of [`ZERO_WGSL`], `groups` workgroups, submitted with a
    /// fence and waited for, the encoder reset; the pipeline, buffer, bind
    /// group, encoder and fence are made once. One op = one round.
    WorkgroupZero {
        zeroing: Zeroing,
        groups: u32,
        iters: usize,
    },
}

/// Bytes the external workload copies out of the imported buffer.
pub const EXTERNAL_COPY: u64 = 256;

/// Open file descriptors of this process (the external workload's leak check).
pub fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

/// BLASes built per submission in the compaction cycle (and, on keel-hal,
/// per compacted-size read).
pub const BUILD_BATCH: usize = 256;

/// The numbers of one compaction-cycle sample, in [`Workload::metrics`] order.
pub const COMPACTION_METRICS: &[&str] = &[
    "wall ns/BLAS",
    "CPU ns/BLAS",
    "KiB before compaction",
    "KiB after compaction",
];

impl Workload {
    /// What a sample reports, one row each: `[""]` (ns per op) for most.
    pub fn metrics(&self) -> &'static [&'static str] {
        match self {
            Workload::Compaction { .. } => COMPACTION_METRICS,
            _ => &[""],
        }
    }

    /// Whether it needs acceleration structures.
    pub fn is_acceleration(&self) -> bool {
        matches!(
            self,
            Workload::Compaction { .. } | Workload::BlasCreate { .. }
        )
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Workload::BindGroups {
                layouts,
                groups,
                floor,
            } => write!(
                f,
                "bind-group churn, {layouts} layout(s), {groups} live groups, raw {}",
                match floor {
                    SetFloor::Reuse => "reuses sets",
                    SetFloor::Allocate => "allocates sets",
                }
            ),
            Workload::BindGroupLayouts { count } => {
                write!(f, "bind group layout create+destroy, {count} live")
            }
            Workload::Buffers {
                size,
                mem,
                holes,
                iters,
                live,
            } => {
                let write = if mem == Mem::Upload {
                    format!(" + {UPLOAD_WRITE} B write")
                } else {
                    String::new()
                };
                let how = if live {
                    format!("{iters} live")
                } else {
                    "one at a time".into()
                };
                write!(
                    f,
                    "buffer {} {:?}{write}, {how}, {holes} holes",
                    size_text(size),
                    mem
                )
            }
            Workload::Encode { pass, commands } => {
                let what = match pass {
                    Pass::Compute => "bind+dispatch",
                    Pass::Render => "bind+draw",
                };
                write!(f, "encode {commands} x {what}")
            }
            Workload::Compaction { blases, triangles } => write!(
                f,
                "compaction cycle, {blases} BLASes x {triangles} triangles"
            ),
            Workload::BlasCreate { compactable, count } => write!(
                f,
                "BLAS create+destroy ({count} live x 1 triangle), {}",
                if compactable {
                    "ALLOW_COMPACTION"
                } else {
                    "no compaction flag"
                }
            ),
            Workload::External { size, .. } => {
                write!(f, "external {} export+import+copy", size_text(size))
            }
            Workload::WorkgroupZero {
                zeroing, groups, ..
            } => write!(
                f,
                "workgroup zeroing 16 KiB, {}, {groups} groups",
                match zeroing {
                    Zeroing::Native => "native",
                    Zeroing::Polyfill => "naga polyfill (same SPIR-V both sides)",
                }
            ),
        }
    }
}

fn size_text(size: u64) -> String {
    match size {
        s if s >= 1 << 20 => format!("{} MiB", s >> 20),
        s if s >= 1 << 10 => format!("{} KiB", s >> 10),
        s => format!("{s} B"),
    }
}

/// External rounds per sample at full scale: with the default 15 rounds
/// (plus a warm-up sample) about 10,000 rounds per side, the issue's count.
pub const EXTERNAL_FULL_ITERS: usize = 640;

/// Iteration counts: the full run, or tiny ones for CI (`--smoke`).
#[derive(Clone, Copy, Debug)]
pub struct Scale {
    /// Live bind groups per churn sample (inside keel-hal's set cache).
    pub groups: usize,
    /// Live bind groups per churn sample past keel-hal's per-layout set
    /// cache (1,024 idle sets per layout).
    pub miss_groups: usize,
    /// Live bind group layouts per sample.
    pub layouts: usize,
    /// Live buffers per sample of the live-buffer rows.
    pub live_buffers: usize,
    /// Create+destroy pairs per one-at-a-time buffer sample (small and medium sizes).
    pub buffer_iters: usize,
    /// Create+destroy pairs per one-at-a-time buffer sample (4 MiB).
    pub big_buffer_iters: usize,
    /// Live-hole counts for the one-at-a-time buffer workloads.
    pub holes: [usize; 3],
    /// Commands per encoding sample.
    pub commands: usize,
    /// BLASes per compaction cycle.
    pub blases: usize,
    /// Triangles per BLAS of the large compaction cycle (the other has 1).
    pub blas_triangles: u32,
    /// BLASes per creation sample.
    pub blas_creates: usize,
    /// External-memory rounds per sample.
    pub external_iters: usize,
    /// Dispatch rounds per workgroup-zeroing sample.
    pub zero_iters: usize,
    /// Workgroups per dispatch of the native workgroup-zeroing row.
    pub zero_groups: u32,
    /// Workgroups per dispatch of the polyfill row (naga's polyfill runs
    /// about 100 times slower on lavapipe).
    pub zero_polyfill_groups: u32,
}

impl Scale {
    /// The full scale (issues 3 and 9).
    pub const FULL: Scale = Scale {
        groups: 1000,
        miss_groups: 4096,
        layouts: 1000,
        live_buffers: 1000,
        buffer_iters: 1000,
        big_buffer_iters: 200,
        holes: [0, 1000, 10_000],
        commands: 10_000,
        blases: 1000,
        blas_triangles: 1000,
        blas_creates: 1000,
        external_iters: EXTERNAL_FULL_ITERS,
        zero_iters: 20,
        zero_groups: ZERO_MAX_GROUPS,
        zero_polyfill_groups: 16,
    };
    /// Tiny counts, for CI.
    pub const SMOKE: Scale = Scale {
        groups: 50,
        miss_groups: 60,
        layouts: 30,
        live_buffers: 10,
        buffer_iters: 10,
        big_buffer_iters: 4,
        holes: [0, 10, 100],
        commands: 200,
        blases: 20,
        blas_triangles: 16,
        blas_creates: 20,
        external_iters: 10,
        zero_iters: 1,
        zero_groups: 4,
        zero_polyfill_groups: 4,
    };

    /// Every workload, in run order (buffer workloads grouped by hole
    /// count and memory kind so each side builds its holes once per group).
    pub fn workloads(&self) -> Vec<Workload> {
        let mut list = Vec::new();
        for layouts in [1, 3] {
            for floor in [SetFloor::Reuse, SetFloor::Allocate] {
                list.push(Workload::BindGroups {
                    layouts,
                    groups: self.groups,
                    floor,
                });
            }
        }
        for layouts in [1, 3] {
            list.push(Workload::BindGroups {
                layouts,
                groups: self.miss_groups,
                floor: SetFloor::Allocate,
            });
        }
        list.push(Workload::BindGroupLayouts {
            count: self.layouts,
        });
        for mem in [Mem::Device, Mem::Upload] {
            for size in [256, 64 << 10, 4 << 20] {
                list.push(Workload::Buffers {
                    size,
                    mem,
                    holes: 0,
                    iters: self.live_buffers,
                    live: true,
                });
            }
        }
        for holes in self.holes {
            for mem in [Mem::Device, Mem::Upload] {
                for size in [256, 64 << 10, 4 << 20] {
                    let iters = if size >= 4 << 20 {
                        self.big_buffer_iters
                    } else {
                        self.buffer_iters
                    };
                    list.push(Workload::Buffers {
                        size,
                        mem,
                        holes,
                        iters,
                        live: false,
                    });
                }
            }
        }
        for pass in [Pass::Compute, Pass::Render] {
            list.push(Workload::Encode {
                pass,
                commands: self.commands,
            });
        }
        for compactable in [false, true] {
            list.push(Workload::BlasCreate {
                compactable,
                count: self.blas_creates,
            });
        }
        for triangles in [1, self.blas_triangles] {
            list.push(Workload::Compaction {
                blases: self.blases,
                triangles,
            });
        }
        list.push(Workload::External {
            size: 64 << 20,
            iters: self.external_iters,
        });
        for (zeroing, groups) in [
            (Zeroing::Native, self.zero_groups),
            (Zeroing::Polyfill, self.zero_polyfill_groups),
        ] {
            list.push(Workload::WorkgroupZero {
                zeroing,
                groups,
                iters: self.zero_iters,
            });
        }
        list
    }
}

/// One implementation under test, owning its device and resources.
pub trait Side {
    /// The name of the adapter this side opened.
    fn adapter_name(&self) -> &str;
    /// Runs one sample of `work` (set-up and warm-up excluded from the timing)
    /// and returns nanoseconds per op, or `None` where the workload does not
    /// apply to this side.
    fn sample(&mut self, work: &Workload) -> Result<Option<f64>, String>;
    /// Runs one sample and returns one number per [`Workload::metrics`]
    /// entry (by default the one of [`Side::sample`]).
    fn sample_metrics(&mut self, work: &Workload) -> Result<Option<Vec<f64>>, String> {
        Ok(self.sample(work)?.map(|ns| vec![ns]))
    }
    /// Memory the side holds from the driver now, where it can tell:
    /// (reserved bytes, of which kept for reuse). keel-hal only.
    fn memory_held(&self) -> Option<(u64, u64)> {
        None
    }
}

/// The mesh of each compaction-cycle BLAS: a grid of quads in the z = 0
/// plane, `triangles` triangles (at least 1; an odd count leaves half of the
/// last quad out), as `f32` xyz positions and `u32` indices.
pub fn blas_mesh(triangles: u32) -> (Vec<f32>, Vec<u32>) {
    let triangles = triangles.max(1);
    let quads = triangles.div_ceil(2);
    let cols = (f64::from(quads).sqrt().ceil() as u32).max(1);
    let rows = quads.div_ceil(cols);
    let mut positions = Vec::new();
    for j in 0..=rows {
        for i in 0..=cols {
            positions.extend([i as f32, j as f32, ((i * 7 + j * 3) % 5) as f32 * 0.1]);
        }
    }
    let mut indices = Vec::new();
    for q in 0..quads {
        let (i, j) = (q % cols, q / cols);
        let v = |di: u32, dj: u32| (j + dj) * (cols + 1) + i + di;
        indices.extend([v(0, 0), v(1, 0), v(0, 1), v(0, 1), v(1, 0), v(1, 1)]);
    }
    indices.truncate(3 * triangles as usize);
    (positions, indices)
}

/// Sizes of the buffers that make the holes: log-uniform in 256 B–256 KiB,
/// from a fixed seed, so every side gets the same sequence.
pub fn hole_sizes(count: usize) -> Vec<u64> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..count)
        .map(|_| {
            // xorshift64*
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            let r = state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11;
            let unit = r as f64 / (1u64 << 53) as f64;
            let size = 256.0 * 1024f64.powf(unit);
            (size as u64).clamp(256, 256 << 10) & !3
        })
        .collect()
}

/// Size of the uniform buffer every bind group points at.
pub const UNIFORM_SIZE: u64 = 256;

/// Extent of the sampled texture and of the render target.
pub const TEXTURE_SIZE: u32 = 4;
pub const TARGET_SIZE: u32 = 64;

/// The shaders of the encoding workloads: group 0 is (uniform, texture, sampler).
pub const WGSL: &str = r#"
@group(0) @binding(0) var<uniform> u: vec4<f32>;
@group(0) @binding(1) var t: texture_2d<f32>;
@group(0) @binding(2) var s: sampler;

@compute @workgroup_size(1)
fn cs_main() {
    let x = textureSampleLevel(t, s, vec2<f32>(0.5), 0.0) + u;
}

@vertex
fn vs_main(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    return u + vec4<f32>(f32(i), 0.0, 0.0, 1.0);
}

@fragment
fn fs_main() -> @location(0) vec4<f32> {
    return textureSample(t, s, vec2<f32>(0.5));
}
"#;

/// Parses and validates [`WGSL`] with naga.
pub fn naga_module() -> Result<(naga::Module, naga::valid::ModuleInfo), String> {
    validated(WGSL)
}

/// `source` parsed and validated by naga (default capabilities).
fn validated(source: &str) -> Result<(naga::Module, naga::valid::ModuleInfo), String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::default(),
    )
    .validate(&module)
    .map_err(|e| format!("{e:?}"))?;
    Ok((module, info))
}

/// [`WGSL`] as SPIR-V (all entry points), for the raw side.
pub fn spirv() -> Result<Vec<u32>, String> {
    let (module, info) = naga_module()?;
    let options = naga::back::spv::Options {
        lang_version: (1, 3),
        ..Default::default()
    };
    naga::back::spv::write_vec(&module, &info, &options, None).map_err(|e| e.to_string())
}

/// The workgroup-zeroing shader: 16 KiB of `var<workgroup>` that every
/// invocation reads a 64th of (so the zeroing cannot be left out), its sum
/// written to `out`.
pub const ZERO_WGSL: &str = r#"
var<workgroup> scratch: array<u32, 4096>;
@group(0) @binding(0) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(64)
fn main(
    @builtin(local_invocation_index) index: u32,
    @builtin(workgroup_id) group: vec3<u32>,
) {
    var sum = 0u;
    for (var k = index; k < 4096u; k += 64u) {
        sum += scratch[k];
    }
    out[group.x * 64u + index] = sum;
}
"#;

/// The entry point of [`ZERO_WGSL`].
pub const ZERO_ENTRY: &str = "main";

/// The most workgroups one workgroup-zeroing dispatch has.
pub const ZERO_MAX_GROUPS: u32 = 256;

/// Bytes of the workgroup-zeroing output buffer: one `u32` per invocation
/// of [`ZERO_MAX_GROUPS`] workgroups of 64.
pub const ZERO_OUT_SIZE: u64 = ZERO_MAX_GROUPS as u64 * 64 * 4;

/// The workgroup-zeroing bind group layout: `out`, a read-write storage buffer.
pub const ZERO_LAYOUT: [wgt::BindGroupLayoutEntry; 1] = [wgt::BindGroupLayoutEntry {
    binding: 0,
    visibility: wgt::ShaderStages::COMPUTE,
    ty: wgt::BindingType::Buffer {
        ty: wgt::BufferBindingType::Storage { read_only: false },
        has_dynamic_offset: false,
        min_binding_size: None,
    },
    count: None,
}];

/// Parses and validates [`ZERO_WGSL`] with naga (default capabilities, as
/// for [`WGSL`]), for wgpu-hal's native row.
pub fn zero_module() -> Result<(naga::Module, naga::valid::ModuleInfo), String> {
    validated(ZERO_WGSL)
}

/// [`ZERO_WGSL`]'s entry point as SPIR-V 1.3 with naga's workgroup-zeroing
/// polyfill, made once and handed to both sides (group `g` binding `b` is
/// set `g` binding `b`; no debug info).
pub fn zero_spirv() -> Result<&'static [u32], String> {
    static WORDS: std::sync::OnceLock<Result<Vec<u32>, String>> = std::sync::OnceLock::new();
    let words = WORDS.get_or_init(|| {
        use naga::back::spv;
        let (module, info) = zero_module()?;
        let options = spv::Options {
            lang_version: (1, 3),
            flags: spv::WriterFlags::empty(),
            fake_missing_bindings: true,
            zero_initialize_workgroup_memory: spv::ZeroInitializeWorkgroupMemoryMode::Polyfill,
            ..Default::default()
        };
        let pipeline = spv::PipelineOptions {
            shader_stage: naga::ShaderStage::Compute,
            entry_point: ZERO_ENTRY.into(),
        };
        spv::write_vec(&module, &info, &options, Some(&pipeline)).map_err(|e| e.to_string())
    });
    words.as_deref().map_err(Clone::clone)
}

/// What one binding of a churn layout holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A uniform buffer ([`UNIFORM_SIZE`] bytes).
    Uniform,
    /// A sampled 2D float texture.
    Texture,
    /// A filtering sampler.
    Sampler,
}

/// Bindings 0.. of the three churn layouts. Each starts with the shader's
/// (uniform, texture, sampler), so every layout fits the pipelines, and the
/// extra binding gives layouts 1 and 2 their own descriptor counts.
pub const LAYOUTS: [&[Kind]; 3] = [
    &[Kind::Uniform, Kind::Texture, Kind::Sampler],
    &[Kind::Uniform, Kind::Texture, Kind::Sampler, Kind::Texture],
    &[Kind::Uniform, Kind::Texture, Kind::Sampler, Kind::Uniform],
];

/// Bind groups the encoding workloads cycle through (all of layout 0).
pub const ENCODE_GROUPS: usize = 8;

/// The `wgpu-types` entries of a churn layout (keel-hal and wgpu-hal share them).
pub fn layout_entries(kinds: &[Kind]) -> Vec<wgt::BindGroupLayoutEntry> {
    kinds
        .iter()
        .enumerate()
        .map(|(i, kind)| wgt::BindGroupLayoutEntry {
            binding: i as u32,
            visibility: wgt::ShaderStages::VERTEX_FRAGMENT | wgt::ShaderStages::COMPUTE,
            ty: match kind {
                Kind::Uniform => wgt::BindingType::Buffer {
                    ty: wgt::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                Kind::Texture => wgt::BindingType::Texture {
                    sample_type: wgt::TextureSampleType::Float { filterable: true },
                    view_dimension: wgt::TextureViewDimension::D2,
                    multisampled: false,
                },
                Kind::Sampler => wgt::BindingType::Sampler(wgt::SamplerBindingType::Filtering),
            },
            count: None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blas_mesh_has_the_triangles_asked_for() {
        for t in [1, 2, 3, 16, 1000] {
            let (positions, indices) = blas_mesh(t);
            assert_eq!(indices.len(), 3 * t as usize, "{t} triangles");
            let vertices = positions.len() as u32 / 3;
            assert!(indices.iter().all(|&i| i < vertices));
        }
    }

    #[test]
    fn zeroing_dispatches_fit_the_output_buffer() {
        for scale in [Scale::FULL, Scale::SMOKE] {
            for work in scale.workloads() {
                if let Workload::WorkgroupZero { groups, .. } = work {
                    assert!(groups <= ZERO_MAX_GROUPS, "{work}");
                }
            }
        }
    }

    #[test]
    fn zero_spirv_is_made() {
        assert!(zero_spirv().is_ok_and(|w| w.first() == Some(&0x0723_0203)));
    }

    #[test]
    fn every_workload_name_is_unique() {
        for scale in [Scale::FULL, Scale::SMOKE] {
            let names: Vec<String> = scale.workloads().iter().map(|w| w.to_string()).collect();
            let mut unique = names.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), names.len());
        }
    }
}
