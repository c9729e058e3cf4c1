//! Lily as a library: load a checkpoint directory onto the CPU reference or the H200 backend,
//! render a conversation through its chat template, and generate (greedy or sampled) with the
//! text streamed as it comes. The `lily` binary is built on this crate; so can any Rust program:
//!
//! ```no_run
//! use lily_runtime::{BackendKind, ChatOptions, Lily, Message, SamplingParams};
//!
//! let lily = Lily::load("assets/demo".as_ref(), BackendKind::Cpu)?;
//! let prompt = lily.chat_prompt(&[Message::new("user", "Hello!")], &ChatOptions::default())?;
//! let greedy = SamplingParams { temperature: 0.0, ..SamplingParams::default() };
//! lily.generate_text(&prompt, 32, greedy, |text| print!("{text}"))?;
//! # Ok::<(), lily_runtime::Error>(())
//! ```
//!
//! The pieces underneath stay public for finer control: `resolve` (which backend), `Model`
//! (the loaded backend, generating token ids under any `Pick`), and lily-model's `ChatText`.

pub mod backend;

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use lily_cpu::CpuModel;
use lily_cuda::{CudaBackend, CudaError};
use lily_engine::sampling::Sampler;
use lily_model::{Backend, ModelError, PickRule, Tokenizer, TokenizerError, Weights};

pub use backend::{resolve, BackendKind, RunOn};
pub use lily_engine::sampling::SamplingParams;
pub use lily_engine::{GenerateOptions, GenerateStats, Greedy, Pick, StopReason};
pub use lily_model::{ChatOptions, ChatTemplate, ChatText, Config, Message, TextError};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("reading {}: {source}", dir.join("config.json").display())]
    Config {
        dir: PathBuf,
        source: Box<ModelError>,
    },
    #[error(transparent)]
    Text(#[from] TextError),
    #[error("the CUDA backend cannot run here: {0}")]
    NoCuda(String),
    #[error("loading the weights of {dir}: {source}")]
    Weights {
        dir: PathBuf,
        source: Box<ModelError>,
    },
    #[error("loading {dir} onto the GPU: {source}")]
    Gpu {
        dir: PathBuf,
        source: Box<CudaError>,
    },
    #[error("the prompt is empty")]
    EmptyPrompt,
    #[error("prompt token {token} is outside the vocabulary (size {vocab_size})")]
    TokenOutOfVocab { token: u32, vocab_size: usize },
    #[error("generating: {0}")]
    Generate(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("decoding generated token {token}: {source}")]
    Decode { token: u32, source: TokenizerError },
}

/// A loaded model on the backend `resolve` chose.
// One per process, loaded once and never moved in a loop: its size does not matter.
#[allow(clippy::large_enum_variant)]
pub enum Model {
    Cpu(CpuModel),
    Cuda(CudaBackend),
}

impl Model {
    /// The weights of the checkpoint in `dir` (described by `config`), loaded onto `run_on`.
    pub fn load(dir: &Path, config: &Config, run_on: RunOn) -> Result<Model, Error> {
        let weights = Weights::load(dir, config).map_err(|source| Error::Weights {
            dir: dir.to_path_buf(),
            source: Box::new(source),
        })?;
        Ok(match run_on {
            RunOn::Cuda(gpu) => Model::Cuda(
                CudaBackend::from_weights(gpu, config, &weights).map_err(|source| Error::Gpu {
                    dir: dir.to_path_buf(),
                    source: Box::new(source),
                })?,
            ),
            RunOn::Cpu => Model::Cpu(CpuModel::new(config.clone(), weights)),
        })
    }

    /// Generates after `prompt` (token ids, checked against `config`'s vocabulary), each token
    /// picked by `picker` and handed to `on_token` as it comes; `on_token` may stop the run.
    pub fn generate(
        &self,
        config: &Config,
        prompt: &[u32],
        options: &GenerateOptions,
        picker: &mut impl Pick,
        on_token: impl FnMut(u32) -> ControlFlow<()>,
    ) -> Result<GenerateStats, Error> {
        check_prompt(config, prompt)?;
        let max_seq = (prompt.len() + options.max_tokens)
            .min(config.max_position_embeddings.max(prompt.len()));
        match self {
            Model::Cpu(model) => run(model, prompt, max_seq, options, picker, on_token),
            Model::Cuda(model) => run(model, prompt, max_seq, options, picker, on_token),
        }
    }

    /// As `generate`, with the answer's text (decoded by `tokenizer`, stop token left out)
    /// handed to `on_text` piece by piece instead of ids.
    pub fn generate_text(
        &self,
        config: &Config,
        tokenizer: &Tokenizer,
        prompt: &[u32],
        options: &GenerateOptions,
        picker: &mut impl Pick,
        mut on_text: impl FnMut(&str) -> ControlFlow<()>,
    ) -> Result<GenerateStats, Error> {
        let mut decoder = tokenizer.stream_decoder();
        let mut decode_error = None;
        let stats = self.generate(config, prompt, options, picker, |token| {
            // The stop token ends the answer; it is not part of its text.
            if options.stop_ids.contains(&token) {
                return ControlFlow::Continue(());
            }
            match decoder.push(token) {
                Ok(text) => on_text(&text),
                Err(source) => {
                    decode_error = Some(Error::Decode { token, source });
                    ControlFlow::Break(())
                }
            }
        })?;
        if let Some(e) = decode_error {
            return Err(e);
        }
        // The answer may end inside a multi-byte character; what is left comes out as it is.
        let _ = on_text(&decoder.finish());
        Ok(stats)
    }
}

/// A prompt the model can run: not empty, every id inside `config`'s vocabulary. `generate`
/// checks it; a caller may check sooner, before the weights load.
pub fn check_prompt(config: &Config, prompt: &[u32]) -> Result<(), Error> {
    if prompt.is_empty() {
        return Err(Error::EmptyPrompt);
    }
    match prompt.iter().find(|&&t| t as usize >= config.vocab_size) {
        Some(&token) => Err(Error::TokenOutOfVocab {
            token,
            vocab_size: config.vocab_size,
        }),
        None => Ok(()),
    }
}

fn run<B: Backend>(
    model: &B,
    prompt: &[u32],
    max_seq: usize,
    options: &GenerateOptions,
    picker: &mut impl Pick,
    on_token: impl FnMut(u32) -> ControlFlow<()>,
) -> Result<GenerateStats, Error> {
    let mut seq = model
        .new_sequence(max_seq)
        .map_err(|e| Error::Generate(Box::new(e)))?;
    lily_engine::generate(model, &mut seq, prompt, max_seq, options, picker, on_token)
        .map_err(|e| Error::Generate(Box::new(e)))
}

/// Every token drawn under `SamplingParams`, on the backend's side where it can apply the rule.
pub struct Sampled(pub Sampler);

impl Pick for Sampled {
    fn rule(&mut self) -> Option<PickRule> {
        self.0.backend_rule()
    }
    fn pick(&mut self, logits: &[f32]) -> u32 {
        self.0.pick(logits, None)
    }
}

/// A checkpoint ready to chat: its config, its text side and its loaded model.
pub struct Lily {
    pub config: Config,
    pub text: ChatText,
    pub model: Model,
}

impl Lily {
    /// The checkpoint in `dir` (config.json, safetensors, tokenizer.json, chat template) on the
    /// backend `kind` decides.
    pub fn load(dir: &Path, kind: BackendKind) -> Result<Lily, Error> {
        let config = Config::load(dir).map_err(|source| Error::Config {
            dir: dir.to_path_buf(),
            source: Box::new(source),
        })?;
        let text = ChatText::load(dir, &config, None)?;
        let run_on = resolve(kind, &config)?;
        let model = Model::load(dir, &config, run_on)?;
        Ok(Lily {
            config,
            text,
            model,
        })
    }

    /// The prompt ids of `messages` through the checkpoint's chat template, ready for the
    /// assistant's turn.
    pub fn chat_prompt(
        &self,
        messages: &[Message],
        options: &ChatOptions,
    ) -> Result<Vec<u32>, Error> {
        Ok(self.text.chat_prompt(messages, &[], options)?)
    }

    /// Up to `max_tokens` tokens after `prompt` under `sampling` (temperature 0: greedy), their
    /// text handed to `on_text` as it comes; stops at the chat format's end of turn.
    pub fn generate_text(
        &self,
        prompt: &[u32],
        max_tokens: usize,
        sampling: SamplingParams,
        mut on_text: impl FnMut(&str),
    ) -> Result<GenerateStats, Error> {
        let options = GenerateOptions {
            max_tokens,
            stop_ids: self.text.stop_ids.clone(),
        };
        let mut picker = Sampled(Sampler::new(sampling));
        self.model.generate_text(
            &self.config,
            &self.text.tokenizer,
            prompt,
            &options,
            &mut picker,
            |text| {
                on_text(text);
                ControlFlow::Continue(())
            },
        )
    }
}
