//! wgpu's own GPU tests (gfx-rs/wgpu `tests/tests/wgpu-gpu/`), ported to
//! run on keel-wgpu (noop and Vulkan) and on stock wgpu with their
//! assertions kept. Each test `NAME` of a file becomes
//! `wgpu_gpu::FILE::NAME::{noop,vulkan,stock}`; `harness.rs` stands in for
//! wgpu's `wgpu_test`. docs/wgpu-tests.md tabulates what passes where, and
//! why any difference.
//!
//! The test bodies are adapted from gfx-rs/wgpu (copyright the wgpu
//! developers, MIT OR Apache-2.0), as the issue asks: their assertions are
//! theirs; each file names the upstream file it comes from.

mod common;

mod wgpu_gpu {
    #[macro_use]
    pub mod harness;
    pub mod readback;

    mod bind_group_layout_dedup;
    mod bind_groups;
    mod buffer;
    mod buffer_copy;
    mod buffer_usages;
    mod clear_texture;
    mod compute_pass_ownership;
    mod device;
    mod dispatch_workgroups_indirect;
    mod draw_indirect;
    mod encoder;
    mod life_cycle;
    mod occlusion_query;
    mod pipeline;
    mod poll;
    mod query_set;
    mod queue_transfer;
    mod regression;
    mod render_pass_ownership;
    mod resource_descriptor_accessor;
    mod resource_error;
    mod samplers;
    mod scissor_tests;
    mod texture_bounds;
    mod texture_view_creation;
    mod transfer;
    mod transition_resources;
    mod write_texture;
    mod zero_init_texture_after_discard;
}
