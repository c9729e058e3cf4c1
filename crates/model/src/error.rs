//! Everything that can be wrong with a checkpoint directory, each error naming the file and the
//! field or tensor at fault and what was expected.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },

    #[error("{path}: invalid JSON: {source}")]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },

    /// The configuration describes something Lily was not built for (or is malformed).
    #[error("{path}: field `{field}`: expected {expected}, found {actual}")]
    Config {
        path: PathBuf,
        field: String,
        expected: String,
        actual: String,
    },

    #[error("{path}: not a valid safetensors file: {reason}")]
    Safetensors { path: PathBuf, reason: String },

    #[error(
        "{dir}: no weights found (expected model.safetensors or model.safetensors.index.json)"
    )]
    NoWeights { dir: PathBuf },

    #[error("tensor `{tensor}` is missing from the checkpoint (searched {searched})")]
    MissingTensor { tensor: String, searched: String },

    #[error("{index}: tensor `{tensor}` is listed in shard {shard}, which does not contain it")]
    NotInShard {
        index: PathBuf,
        tensor: String,
        shard: String,
    },

    #[error("{path}: tensor `{tensor}`: expected shape {expected:?}, found {actual:?}")]
    Shape {
        path: PathBuf,
        tensor: String,
        expected: Vec<usize>,
        actual: Vec<usize>,
    },

    #[error(
        "{path}: tensor `{tensor}`: dtype {actual} is not supported (expected F32, BF16, F16, or F8_E4M3 with block scales)"
    )]
    DType {
        path: PathBuf,
        tensor: String,
        actual: String,
    },

    /// An FP8 tensor and its block scales do not go together: a missing or misshapen
    /// `weight_scale_inv`, a scale without an FP8 weight, FP8 weights without a
    /// `quantization_config`, or an FP8 fused tensor that cannot be cut on block boundaries.
    #[error("{path}: tensor `{tensor}`: {reason}")]
    Fp8 {
        path: PathBuf,
        tensor: String,
        reason: String,
    },
}

pub type Result<T, E = ModelError> = std::result::Result<T, E>;
