use thiserror::Error;

#[derive(Debug, Error)]
pub enum CudaError {
    #[error("cannot load {library} (tried {tried}): {reason}")]
    LibraryNotFound {
        library: &'static str,
        tried: String,
        reason: String,
    },
    #[error("{library} has no symbol {symbol}: {reason}")]
    MissingSymbol {
        library: &'static str,
        symbol: &'static str,
        reason: String,
    },
    #[error("{call} failed: CUDA error {code} ({name})")]
    Driver {
        call: &'static str,
        code: i32,
        name: String,
    },
    #[error("NVRTC {call} failed with code {code} compiling {source_name}")]
    Nvrtc {
        call: &'static str,
        code: i32,
        source_name: String,
    },
    #[error("kernel source {source_name} does not compile for {arch}:\n{log}")]
    Compile {
        source_name: String,
        arch: String,
        log: String,
    },
    #[error("{tensor} must be {expected}, got {actual}")]
    Shape {
        tensor: String,
        expected: String,
        actual: String,
    },
    #[error(
        "sequence of {max_seq} tokens needs {needed_mib} MiB of GPU memory but only {free_mib} MiB are free"
    )]
    OutOfMemory {
        max_seq: usize,
        needed_mib: usize,
        free_mib: usize,
    },
    #[error("{0}")]
    Invalid(String),
    #[error("weights: {0}")]
    Weights(String),
}

pub type Result<T> = std::result::Result<T, CudaError>;
