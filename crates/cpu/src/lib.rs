//! The CPU reference forward pass: plain Rust, f32 accumulation. It is the oracle that the
//! CUDA backend and every model path are checked against.
