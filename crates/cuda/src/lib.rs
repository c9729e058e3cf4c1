//! The H200 backend: hand-written CUDA kernels, each beside its Rust launcher.
//! CUDA libraries are loaded at run time so this crate builds where CUDA is absent.
