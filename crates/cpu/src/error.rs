use lily_model::ModelError;

#[derive(Debug, thiserror::Error)]
pub enum CpuError {
    #[error(transparent)]
    Model(#[from] ModelError),

    #[error("a sequence must hold at least one token (max_seq is 0)")]
    EmptySequence,

    #[error("cannot reserve the state of a {max_seq}-token sequence ({bytes} bytes)")]
    CacheTooLarge { max_seq: usize, bytes: usize },

    #[error("no tokens to run")]
    NoTokens,

    #[error("token id {token} is outside the vocabulary (size {vocab_size})")]
    TokenOutOfRange { token: u32, vocab_size: usize },

    #[error("sequence full: {position} tokens held, {adding} more would exceed max_seq {max_seq}")]
    ContextFull {
        position: usize,
        adding: usize,
        max_seq: usize,
    },
}
