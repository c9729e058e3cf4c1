//! The model-agnostic CUDA runtime: nothing here knows Qwen3.6.
//!
//! - [`driver`]: the CUDA driver API loaded at run time (`libcuda.so.1`), one stream, graphs,
//!   events, programmatic dependent launch;
//! - [`nvrtc`]: sources compiled at run time for sm_90a with `-D` constants, and
//!   [`cubin_cache`]: their cubins cached on disk between runs;
//! - [`tensor`]: typed device buffers and the views launchers check before dispatch;
//! - [`trace`]: launch marks read back from the device (`lily bench --trace`).

pub mod cubin_cache;
pub mod driver;
pub mod nvrtc;
pub mod tensor;
pub mod trace;
