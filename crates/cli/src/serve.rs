//! `lily serve`: the OpenAI-compatible server over a checkpoint (on the GPU where the CUDA
//! backend can run it, else on the CPU reference), or, without `--model`, over the small
//! built-in demo checkpoint in assets/demo. With `--upstream`, also the front of a cloud
//! model, every request through the privacy gate (see lily_server::hybrid). `--model` may be a
//! Hugging Face repo id, found in the local hub cache (see `hub`).

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Args;
use lily_cpu::CpuModel;
use lily_cuda::CudaBackend;
use lily_gate::{Gate, Policy};
use lily_model::{ChatText, Config};
use lily_runtime::{BackendKind, RunOn};
use lily_server::hybrid::HybridConfig;
use lily_server::{EngineSpec, ServerConfig};

use crate::hub::{self, ModelSource};

/// Where `scripts/fixtures/make_demo_checkpoint.py` writes the demo checkpoint.
pub(crate) const DEMO_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/demo");
const DEMO_NOTE: &str = "Lily's built-in demo checkpoint: a tiny model of the Qwen3.6 architecture trained for minutes on generated simple English \
                         (see assets/demo/README.md). It shows the whole system working; it is not Qwen3.6.";

// Every flag also reads `LILY_<FLAG>` (`LILY_PORT`, `LILY_MODEL`); the command line wins.
#[derive(Args)]
pub struct ServeArgs {
    /// Checkpoint: a directory (config.json, safetensors, tokenizer.json, chat template) or a
    /// Hugging Face repo id (Qwen/Qwen3.6-35B-A3B) already in the local hub cache (never
    /// downloaded). Without it, the built-in demo checkpoint (assets/demo) is served.
    #[arg(long, env = "LILY_MODEL")]
    model: Option<String>,
    /// With a repo id as --model: the branch, tag or commit of the hub cache to serve.
    #[arg(long, env = "LILY_REVISION", default_value = "main")]
    revision: String,
    /// Address to listen on, host:port; loopback by default. --host and --port, when given,
    /// replace its host and its port.
    #[arg(long, env = "LILY_BIND", default_value = "127.0.0.1:8000")]
    bind: SocketAddr,
    /// Host (name or IP address) to listen on, e.g. 0.0.0.0 for every interface; replaces the
    /// host of --bind.
    #[arg(long, env = "LILY_HOST")]
    host: Option<String>,
    /// Port to listen on; replaces the port of --bind.
    #[arg(long, env = "LILY_PORT")]
    port: Option<u16>,
    /// Context length: prompt plus generated tokens; a longer request is refused (400). At most
    /// the model's own (max_position_embeddings). Default: the model's, capped at 32768.
    #[arg(long = "max-model-len", visible_alias = "max-seq", env = "LILY_MAX_MODEL_LEN")]
    max_model_len: Option<usize>,
    /// The model name clients send and /v1/models lists. Default: the repo id given as
    /// --model, else the checkpoint directory's name.
    #[arg(long = "served-model-name", visible_alias = "model-name", env = "LILY_SERVED_MODEL_NAME")]
    served_model_name: Option<String>,
    /// A chat template file (Jinja, like the checkpoint's chat_template.jinja) used instead of
    /// the checkpoint's; checked at start-up.
    #[arg(long, env = "LILY_CHAT_TEMPLATE")]
    chat_template: Option<PathBuf>,
    /// Require `Authorization: Bearer KEY` on /v1/*.
    #[arg(long, env = "LILY_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// Requests that may wait behind the running one; more are answered 429.
    #[arg(long, env = "LILY_QUEUE", default_value_t = 64)]
    queue: usize,
    /// Seconds a request may take from arrival to its last token.
    #[arg(long, env = "LILY_REQUEST_TIMEOUT", default_value_t = 600)]
    request_timeout: u64,
    /// Seconds queued and running requests may go on after SIGTERM before they are cancelled.
    #[arg(long, env = "LILY_DRAIN_TIMEOUT", default_value_t = 30)]
    drain_timeout: u64,
    /// Memory for prefix-cache snapshots, in MiB.
    #[arg(long, env = "LILY_PREFIX_CACHE_MIB", default_value_t = 1024)]
    prefix_cache_mib: usize,
    /// Largest request body, in MiB.
    #[arg(long, env = "LILY_MAX_BODY_MIB", default_value_t = 4)]
    max_body_mib: usize,
    /// Refuse requests with fields this server does not know (a 400) instead of naming them
    /// in the `x-lily-ignored-fields` response header.
    #[arg(long)]
    strict: bool,
    /// Which backend runs the model.
    #[arg(long, env = "LILY_BACKEND", value_enum, default_value_t = BackendKind::Auto)]
    backend: BackendKind,
    /// Hybrid compute: an OpenAI-compatible base URL (e.g. https://api.openai.com/v1) that
    /// requests for the model `auto` or --upstream-model go to after the privacy gate. Its
    /// key is read from LILY_UPSTREAM_API_KEY.
    #[arg(long, env = "LILY_UPSTREAM", requires = "upstream_model")]
    upstream: Option<String>,
    /// The upstream model's name, as sent upstream and as clients may request it.
    #[arg(long, env = "LILY_UPSTREAM_MODEL", requires = "upstream")]
    upstream_model: Option<String>,
    /// The privacy gate's policy file (JSON); the embedded safe default when absent.
    #[arg(long, env = "LILY_GATE_POLICY", requires = "upstream")]
    gate_policy: Option<PathBuf>,
    /// Seconds to wait for the upstream's response headers, and between two chunks of its stream.
    #[arg(long, env = "LILY_UPSTREAM_TIMEOUT", default_value_t = 60)]
    upstream_timeout: u64,
    /// When the upstream fails, answer 502 instead of falling back to the local model.
    #[arg(long, env = "LILY_NO_FALLBACK")]
    no_fallback: bool,
    /// Seconds a consent id stays valid.
    #[arg(long, env = "LILY_CONSENT_TTL", default_value_t = 600)]
    consent_ttl: u64,
    /// Append one JSON line per routed request (decision, categories, destination, upstream
    /// status and latency; never a value from the request) to this file.
    #[arg(long, env = "LILY_AUDIT_LOG", requires = "upstream")]
    audit_log: Option<PathBuf>,
}

impl ServeArgs {
    /// --bind with --host and --port put in.
    fn address(&self) -> anyhow::Result<SocketAddr> {
        let port = self.port.unwrap_or(self.bind.port());
        let Some(host) = &self.host else { return Ok(SocketAddr::new(self.bind.ip(), port)) };
        // An IPv6 literal may come bracketed, as in a URL.
        let host = host.trim_start_matches('[').trim_end_matches(']');
        (host, port)
            .to_socket_addrs()
            .with_context(|| format!("--host {host}: not an IP address or a name that resolves"))?
            .next()
            .with_context(|| format!("--host {host}: resolves to no address"))
    }
}

/// The gate (loaded once, shared by every request) and the upstream, from the flags.
fn hybrid_config(args: &ServeArgs) -> anyhow::Result<Option<HybridConfig>> {
    let (Some(url), Some(model)) = (&args.upstream, &args.upstream_model) else { return Ok(None) };
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        bail!("--upstream must be an http(s) base URL such as https://host/v1, got {url}");
    }
    let policy = match &args.gate_policy {
        Some(path) => Policy::load(path)?,
        None => Policy::default_policy(),
    };
    let gate = Gate::new(policy).context("loading the privacy gate's learned tiers")?;
    let upstream_key = std::env::var("LILY_UPSTREAM_API_KEY").ok().filter(|k| !k.is_empty());
    if upstream_key.is_none() {
        tracing::warn!("LILY_UPSTREAM_API_KEY is not set: requests go to {url} without a key");
    }
    Ok(Some(HybridConfig {
        upstream_url: url.clone(),
        upstream_model: model.clone(),
        upstream_key,
        gate: Arc::new(gate),
        upstream_timeout: Duration::from_secs(args.upstream_timeout),
        fallback: !args.no_fallback,
        consent_ttl: Duration::from_secs(args.consent_ttl),
        audit_log: args.audit_log.clone(),
    }))
}

pub fn run(args: ServeArgs) -> anyhow::Result<()> {
    let address = args.address()?;
    let (source, demo) = match &args.model {
        Some(model) => (hub::resolve(model, &args.revision)?, false),
        None => {
            let dir = PathBuf::from(DEMO_DIR);
            if !dir.join("config.json").exists() {
                bail!("no --model given and the built-in demo checkpoint is missing ({}); make it with scripts/fixtures/make_demo_checkpoint.py", dir.display());
            }
            (ModelSource { dir, repo_id: None }, true)
        }
    };
    let dir = source.dir;
    let config = Config::load(&dir).with_context(|| format!("reading {}", dir.join("config.json").display()))?;
    let text = ChatText::load(&dir, &config, args.chat_template.as_deref()).with_context(|| match &args.chat_template {
        Some(path) => format!("--chat-template {}", path.display()),
        None => format!("loading the tokenizer and chat template of {}", dir.display()),
    })?;
    let backend = lily_runtime::resolve(args.backend, &config).context("--backend")?;
    let max_seq = match args.max_model_len {
        Some(n) if n > config.max_position_embeddings => bail!(
            "--max-model-len {n} is longer than the model's context ({} tokens, max_position_embeddings in {})",
            config.max_position_embeddings,
            dir.join("config.json").display()
        ),
        Some(n) => n,
        None => config.max_position_embeddings.min(32768),
    };
    if max_seq < 2 {
        bail!("--max-model-len must be at least 2 (one prompt token and one generated), got {max_seq}");
    }
    let model_id = match (&args.served_model_name, source.repo_id, demo) {
        (Some(name), _, _) => name.clone(),
        (None, Some(repo_id), _) => repo_id,
        (None, None, true) => "lily-demo".to_string(),
        (None, None, false) => dir
            .canonicalize()
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "lily".into()),
    };
    if demo {
        tracing::warn!("no --model: serving the built-in DEMO checkpoint from {} as `{model_id}`. {DEMO_NOTE}", dir.display());
    }
    let api_key = args.api_key.clone().filter(|k| !k.is_empty());
    let server_config = ServerConfig {
        model_id,
        demo_note: demo.then(|| DEMO_NOTE.to_string()),
        max_seq,
        queue_capacity: args.queue,
        request_timeout: Duration::from_secs(args.request_timeout),
        drain_timeout: Duration::from_secs(args.drain_timeout),
        max_body_bytes: args.max_body_mib << 20,
        api_key,
        prefix_cache_bytes: args.prefix_cache_mib << 20,
        hybrid: hybrid_config(&args)?,
        strict: args.strict,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(address).await.with_context(|| format!("binding {address}"))?;
        let text = Arc::new(text);
        let load_dir = dir.clone();
        let loading = move |e: &dyn std::fmt::Display| format!("loading {}: {e}", load_dir.display());
        match backend {
            RunOn::Cuda(gpu) => {
                let engine = EngineSpec {
                    make_backend: move || CudaBackend::load(gpu, &dir).map_err(|e| loading(&e)),
                    snapshot_bytes: Box::new(|model: &CudaBackend, position| model.sequence_bytes(position)),
                    // A driver error mid-generation (an illegal address, a launch failure) is
                    // sticky: the context cannot run anything after it.
                    is_fatal: |e| matches!(e, lily_cuda::CudaError::Driver { .. }),
                };
                lily_server::serve(listener, server_config, text, engine, shutdown_signal()).await?;
            }
            RunOn::Cpu => {
                let engine = EngineSpec {
                    make_backend: move || CpuModel::load(&dir).map_err(|e| loading(&e)),
                    // A snapshot holds the KV cache up to its position plus the fixed GDN state.
                    snapshot_bytes: Box::new(|model: &CpuModel, position| model.sequence_bytes(position)),
                    is_fatal: |_| false,
                };
                lily_server::serve(listener, server_config, text, engine, shutdown_signal()).await?;
            }
        }
        Ok(())
    })
}

/// Resolves on SIGTERM or Ctrl-C.
async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {}
                    _ = term.recv() => {}
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM; Ctrl-C still stops the server");
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}
