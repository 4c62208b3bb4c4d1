//! The conformance suite: every test is written once, generic over
//! `A: keel_hal::Api`, and runs on every configuration found:
//!
//! * `noop` — the noop backend, statically typed;
//! * `noop (dyn)` — the noop backend through [`keel_hal::DynApi`];
//! * with feature `vulkan`: `vulkan <adapter>` and `vulkan <adapter> (dyn)`
//!   for every Vulkan adapter, with the validation layer on.
//!
//! After each configuration the harness checks that the device's live
//! object counts are back where they started and that the validation layer
//! reported no error, counted until after the device and the instance are
//! dropped (so objects leaked until then are seen too). Environment:
//!
//! * `KEEL_BACKENDS=noop` or `vulkan` (comma-separated) restricts the backends;
//! * `KEEL_ALLOW_NO_VALIDATION=1` lets Vulkan configurations run where the
//!   Khronos validation layer is not installed (otherwise they fail).
//!
//! Run with `cargo test --test conformance -- --nocapture` to see each
//! configuration's `ok` / `skipped: <reason>` line.

#![warn(unsafe_op_in_unsafe_fn)]

// Test modules live in tests/conformance/; a test crate's root looks for
// its modules next to itself, hence the paths.

#[path = "conformance/configs.rs"]
mod configs;
#[path = "support/fds.rs"]
mod fds;
#[macro_use]
#[path = "conformance/harness.rs"]
mod harness;
#[path = "conformance/helpers.rs"]
mod helpers;
#[path = "conformance/pipelines.rs"]
mod pipelines;

#[path = "conformance/binding_errors.rs"]
mod binding_errors;
#[path = "conformance/buffer_errors.rs"]
mod buffer_errors;
#[path = "conformance/buffers.rs"]
mod buffers;
#[path = "conformance/compute.rs"]
mod compute;
#[path = "conformance/cooperative_matrix.rs"]
mod cooperative_matrix;
#[path = "conformance/encoders.rs"]
mod encoders;
#[path = "conformance/external.rs"]
mod external;
#[path = "conformance/external_errors.rs"]
mod external_errors;
#[path = "conformance/external_interop.rs"]
mod external_interop;
#[path = "conformance/external_side.rs"]
mod external_side;
#[path = "conformance/feature_cases.rs"]
mod feature_cases;
#[path = "conformance/lifecycle.rs"]
mod lifecycle;
#[path = "conformance/memory_report.rs"]
mod memory_report;
#[path = "conformance/mesh.rs"]
mod mesh;
#[path = "conformance/multiview.rs"]
mod multiview;
#[path = "conformance/planar.rs"]
mod planar;
#[path = "conformance/queries.rs"]
mod queries;
#[path = "conformance/ray_tracing.rs"]
mod ray_tracing;
#[path = "conformance/ray_tracing_scene.rs"]
mod ray_tracing_scene;
#[path = "conformance/render.rs"]
mod render;
#[path = "conformance/samplers.rs"]
mod samplers;
#[path = "conformance/shader_errors.rs"]
mod shader_errors;
#[path = "conformance/shader_features.rs"]
mod shader_features;
#[path = "conformance/shared_checks.rs"]
mod shared_checks;
#[path = "conformance/sync.rs"]
mod sync;
#[path = "conformance/texture_errors.rs"]
mod texture_errors;
#[path = "conformance/texture_kinds.rs"]
mod texture_kinds;
#[path = "conformance/textures.rs"]
mod textures;
#[path = "conformance/views.rs"]
mod views;
