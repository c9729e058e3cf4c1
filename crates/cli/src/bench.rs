//! `lily bench`: the benchmark contract of docs/DESIGN.md §3 on the CUDA backend.
//!
//! Batch 1, greedy (or, with --temperature, every token drawn on the GPU under that rule with
//! a fixed uniform 0.5, so rounds still repeat); synthetic prompt token i = ((i * 2654435761) mod 2^32) mod vocab; for each
//! context an exact-shape warm-up, then rounds of one measured prefill (prompt tokens / time to
//! first token) and exactly `steps` measured decode steps; the median over rounds is reported
//! and the generated ids' digest must repeat across rounds. Each decode figure is given as a
//! fraction of the bandwidth ceiling (bytes a token must read / measured copy bandwidth), each
//! prefill figure as a fraction of the bf16 matrix rate.
//! Beside the contract's decode figure (the captured step replayed back to back), each round
//! also generates the same tokens through the engine's token loop (`lily_engine::generate`, as
//! `lily run` and the server do: the host reads each pick back before the next step), so the
//! table shows what the per-token round trip costs; its tokens must match the replays'. The
//! warm-up runs that loop once too (it replays a one-step graph the replays do not capture).
//! With --plot the results are also drawn as an SVG (crate::plot); with --from, saved results
//! are drawn instead of running anything, so that needs no GPU.

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::Args as ClapArgs;
use lily_cuda::runtime::driver::Gpu;
use lily_cuda::{CudaBackend, CudaSequence, Dims, WeightFormat};
use lily_engine::{GenerateOptions, Pick};
use lily_model::{Backend, PickRule};

use crate::plot;

#[derive(ClapArgs)]
pub struct Args {
    /// Seeded random weights of the exact Qwen3.6-35B-A3B shapes, generated on the GPU.
    #[arg(long, conflicts_with = "model")]
    synthetic: bool,
    /// A checkpoint directory (or a Hugging Face repo id in the local hub cache) instead of
    /// synthetic weights: bf16, or FP8 (its format is the checkpoint's).
    #[arg(long, value_parser = crate::hub::model_dir)]
    model: Option<PathBuf>,
    /// The synthetic weights' format: bf16, or fp8 (e4m3 products with 128 x 128 block scales,
    /// the official FP8 checkpoint's layout; embeddings, norms, router, lm_head and GDN's b | a
    /// stay bf16).
    #[arg(long, value_enum, default_value_t = BenchDtype::Bf16, conflicts_with = "model")]
    dtype: BenchDtype,
    /// Contexts (prompt lengths) to measure.
    #[arg(long, value_delimiter = ',', default_values_t = [256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072])]
    contexts: Vec<usize>,
    /// Measured rounds per context (the median is reported).
    #[arg(long, default_value_t = 2)]
    rounds: usize,
    /// Measured decode steps per round.
    #[arg(long, default_value_t = 64)]
    steps: usize,
    /// Seed of the synthetic weights.
    #[arg(long, default_value_t = 0)]
    seed: u32,
    /// Copy bandwidth of the GPU in TB/s (read + write), the decode ceiling's denominator.
    #[arg(long, default_value_t = 4.3)]
    bandwidth_tbs: f64,
    /// Dense bf16 matrix rate in TFLOP/s, the prefill ceiling.
    #[arg(long, default_value_t = 790.0)]
    matrix_tflops: f64,
    /// After each context, time one eager (non-graph) step launch by launch and print the
    /// per-kernel table.
    #[arg(long)]
    profile: bool,
    /// Draw every token on the GPU at this temperature instead of the greedy pick (the draw's
    /// uniform number is fixed at 0.5 so that rounds repeat).
    #[arg(long, default_value_t = 0.0)]
    temperature: f32,
    /// Nucleus of the draw (with --temperature).
    #[arg(long, default_value_t = 1.0)]
    top_p: f32,
    /// Top-k of the draw (with --temperature; 0: off).
    #[arg(long, default_value_t = 0)]
    top_k: u32,
    /// Where to write the results as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Draw tok/s against context (decode and prefill, each with its ceiling, log-scale
    /// context axis) from the run's results, as an SVG at FILE.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// With --plot: draw from these saved results (what --json writes) instead of running
    /// the benchmark; needs no GPU.
    #[arg(long, value_name = "RESULTS.json", requires = "plot")]
    from: Option<PathBuf>,
    /// With --plot: another runtime's figures on the same axes, from a file of the same
    /// `results` rows (`context`, `decode_tok_s`, `prefill_tok_s`; e.g. what
    /// scripts/reference/bench_transformers.py --json writes). Repeatable.
    #[arg(long, value_name = "NAME=FILE.json", requires = "plot")]
    peer: Vec<String>,
    /// Skip every launch of this kernel, by name or by the label --profile prints ("name grid
    /// XxYxZ"); repeatable. Times what a step costs without it (scripts/profile/ablate_decode.py); the
    /// generated tokens are then meaningless.
    #[arg(long = "leave-out", value_name = "KERNEL")]
    leave_out: Vec<String>,
    /// Write a per-block timeline of one decode step (graph replay) at the first context to
    /// FILE, as CSV: when each block of each launch started and when its PDL wait returned, on
    /// which SM (scripts/profile/trace_summary.py summarises it). The kernels are then compiled with the
    /// marks (a store or three per block): compare that run's table only with traced runs.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// At the first context, replay one decode step (graph, after two warm-up replays) with the
    /// profiler's capture on, for a profiler started with it off (scripts/profile/ncu_step.sh: ncu's
    /// sampled DRAM and SM activity over one step).
    #[arg(long)]
    profiler_step: bool,
    /// Leave out the token-loop measurement (its own prefill each round: at 128K that doubles
    /// a context's time).
    #[arg(long)]
    no_token_loop: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum BenchDtype {
    Bf16,
    Fp8,
}

struct Row {
    context: usize,
    prefill_tok_s: f64,
    decode_tok_s: f64,
    /// Decode through the engine's token loop (one host round trip per token), unless left out.
    loop_tok_s: Option<f64>,
    decode_ceiling: f64,
    prefill_fraction: f64,
    digest: u64,
}

/// The contract's prompt: token i = ((i * 2654435761) mod 2^32) mod vocab.
fn prompt(len: usize, vocab: usize) -> Vec<u32> {
    (0..len)
        .map(|i| ((i as u64 * 2_654_435_761) % (1 << 32)) as u32 % vocab as u32)
        .collect()
}

fn fnv1a(ids: &[u32]) -> u64 {
    ids.iter()
        .flat_map(|t| t.to_le_bytes())
        .fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
        })
}

/// Bytes one decode token must move at `context`: every active weight once (the products' in
/// the model's format, with an FP8 model's block scales; lm_head, the router and GDN's b | a in
/// bf16), the GDN state read and written (f32), and the KV cache read.
fn decode_bytes(d: &Dims, context: usize) -> f64 {
    let h = d.hidden;
    let experts = (d.top_k * 3 * d.moe_inter + 3 * d.shared_inter) * h;
    let gdn = (d.gdn_in_rows() - d.gdn_ba_rows()) * h + h * d.gdn_out();
    let attn = d.attn_in_rows() * h + h * d.attn_out();
    let products = d.gdn_layers() * (gdn + experts) + d.attn_layers() * (attn + experts);
    let bf16 = d.vocab * h + d.layers() * (d.experts + 1) * h + d.gdn_layers() * d.gdn_ba_rows() * h;
    let scales = match d.weights {
        WeightFormat::Bf16 => 0,
        WeightFormat::Fp8 {
            block_rows,
            block_cols,
        } => 4 * products / (block_rows * block_cols),
    };
    let state = d.gdn_layers() * d.gdn_value_heads * d.gdn_key_dim * d.gdn_value_dim * 4 * 2;
    (products * d.weights.bytes() + scales + 2 * bf16 + state + context * d.kv_bytes_per_token()) as f64
}

/// FLOPs per prompt token at `context`: 2 per active weight plus the causal attention
/// (q.k and p.v over, on average, half the context).
fn prefill_flops(d: &Dims, context: usize) -> f64 {
    let h = d.hidden;
    let moe = (d.experts + 1) * h + (d.top_k * 3 * d.moe_inter + 3 * d.shared_inter) * h;
    let gdn = d.gdn_in_rows() * h + h * d.gdn_out();
    let attn = d.attn_in_rows() * h + h * d.attn_out();
    let params = d.vocab * h + d.gdn_layers() * (gdn + moe) + d.attn_layers() * (attn + moe);
    let attn_ops = d.attn_layers() * 2 * 2 * d.attn_heads * d.attn_head_dim * context / 2;
    (2 * params + attn_ops) as f64
}

/// The bench's rule, each token's the next draw of its stream (as a step moves it on the GPU),
/// given to the backend: the engine's loop then picks on the GPU what the replayed steps pick
/// (`pick`, the host's side of the same rule, is never asked).
struct RuleStream(PickRule);

impl Pick for RuleStream {
    fn rule(&mut self) -> Option<PickRule> {
        let rule = self.0;
        self.0 = rule.advanced(1);
        Some(rule)
    }
    fn pick(&mut self, logits: &[f32]) -> u32 {
        self.0.pick(logits, &mut Vec::new())
    }
}

/// The prompt and `steps` through the engine's loop on a cleared sequence: the prefill's pick,
/// then `steps` decoded tokens, each read back by the host. Its decode rate and every token.
fn token_loop_round(
    backend: &CudaBackend,
    seq: &mut CudaSequence,
    tokens: &[u32],
    steps: usize,
    rule: PickRule,
) -> anyhow::Result<(f64, Vec<u32>)> {
    let mut generated = Vec::with_capacity(steps + 1);
    let options = GenerateOptions {
        max_tokens: steps + 1,
        stop_ids: Vec::new(),
    };
    let max_seq = seq.max_seq;
    let stats = lily_engine::generate(
        backend,
        seq,
        tokens,
        max_seq,
        &options,
        &mut RuleStream(rule),
        |t| {
            generated.push(t);
            ControlFlow::Continue(())
        },
    )?;
    Ok((stats.decode_tokens_per_s(), generated))
}

/// A context's entry in the results file; `token_loop_decode_tok_s` is null when left out.
fn row_json(r: &Row) -> serde_json::Value {
    serde_json::json!({
        "context": r.context,
        "prefill_tok_s": r.prefill_tok_s,
        "prefill_fraction_of_matrix_rate": r.prefill_fraction,
        "decode_tok_s": r.decode_tok_s,
        "decode_ceiling_tok_s": r.decode_ceiling,
        "decode_fraction_of_ceiling": r.decode_tok_s / r.decode_ceiling,
        "digest": format!("{:016x}", r.digest),
        "token_loop_decode_tok_s": r.loop_tok_s,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.rounds == 0 || args.steps == 0 {
        bail!("--rounds and --steps must be at least 1");
    }
    // Peers are read before the GPU: a mistyped file should cost no start-up.
    let peers = args.peer.iter().map(|p| plot::read_peer(p)).collect::<anyhow::Result<Vec<_>>>()?;
    if let (Some(svg), Some(from)) = (&args.plot, &args.from) {
        return plot::write(svg, &plot::Results::read(from)?, &peers);
    }
    // Before the GPU and the weights: a mistyped LILY_SHAPES should cost no start-up.
    let shapes = lily_cuda::shapes::current()?;
    let rule = PickRule { temperature: args.temperature, top_k: args.top_k, top_p: args.top_p, min_p: 0.0, draw: args.seed.into() };
    let pick = if rule.is_greedy() {
        "greedy".to_string()
    } else {
        format!("GPU draw (temperature {}, top_p {}, top_k {}, stream seed {})", rule.temperature, rule.top_p, rule.top_k, args.seed)
    };
    let started = Instant::now();
    if (args.trace.is_some() || args.profiler_step) && args.steps < 4 {
        bail!("--trace and --profiler-step need --steps of at least 4 (they replay steps after the measured ones)");
    }
    let gpu = Gpu::open()?;
    if args.trace.is_some() {
        lily_cuda::runtime::trace::enable(&gpu)?;
    }
    let (backend, source) = match (&args.model, args.synthetic) {
        (Some(dir), _) => (
            CudaBackend::load(gpu, dir).with_context(|| format!("loading {}", dir.display()))?,
            "checkpoint",
        ),
        (None, true) => {
            let weights = match args.dtype {
                BenchDtype::Bf16 => WeightFormat::Bf16,
                BenchDtype::Fp8 => WeightFormat::Fp8 {
                    block_rows: 128,
                    block_cols: 128,
                },
            };
            let dims = Dims {
                weights,
                ..Dims::qwen36_35b_a3b()
            };
            (CudaBackend::synthetic(gpu, dims, args.seed)?, "synthetic")
        }
        (None, false) => bail!("give --synthetic or --model DIR"),
    };
    let precision = match backend.model.dims.weights {
        WeightFormat::Bf16 => format!("bf16 ({source})"),
        WeightFormat::Fp8 {
            block_rows,
            block_cols,
        } => format!("fp8 e4m3, {block_rows} x {block_cols} block scales ({source})"),
    };
    tracing::info!("model ready in {:.1} s", started.elapsed().as_secs_f64());
    let d = backend.model.dims.clone();
    let gpu = &backend.model.gpu;
    gpu.leave_out(args.leave_out.clone());
    let commit = option_env!("LILY_COMMIT").unwrap_or("unknown");
    println!(
        "# lily bench: {} ({}, {} SMs), driver {}, {precision}, commit {commit}",
        gpu.name,
        gpu.arch(),
        gpu.multiprocessors,
        gpu.driver_version
    );
    println!(
        "# batch 1, {pick}, {} decode steps, median of {} rounds; ceilings {} TB/s, {} TFLOP/s",
        args.steps, args.rounds, args.bandwidth_tbs, args.matrix_tflops
    );
    println!("# decode launch shapes (LILY_SHAPES): {shapes}");
    if !args.leave_out.is_empty() {
        println!("# left out of every step (timing only, the tokens are meaningless): {}", args.leave_out.join("; "));
    }
    println!("| context | prefill tok/s | of matrix rate | decode tok/s | ceiling tok/s | of ceiling | digest | token loop tok/s |");
    println!("|---:|---:|---:|---:|---:|---:|---|---:|");
    let mut rows = Vec::new();
    let mut profiles = Vec::new();
    let total = args.contexts.len();
    for (done, &context) in args.contexts.iter().enumerate() {
        tracing::info!(target: lily_model::PROGRESS, stage = "contexts", done, total, "contexts: measuring {context} ({}/{total})", done + 1);
        let tokens = prompt(context, d.vocab);
        let mut seq = backend.new_sequence(context + args.steps + 1)?;
        // Exact-shape warm-up, of the token loop too: its steps replay a one-step graph that the
        // replays' runs do not capture, and capturing it (a few ms) is paid once per
        // sequence and pick path, as a server's worker pays it on its first request.
        backend.set_rule(&mut seq, &rule)?;
        backend.prefill_tokens(&mut seq, &tokens)?;
        backend.run_steps(&mut seq, args.steps)?;
        backend.ids(&seq, 0..1)?;
        if !args.no_token_loop {
            backend.clear(&mut seq)?;
            token_loop_round(&backend, &mut seq, &tokens, args.steps, rule)?;
        }
        let (mut prefill, mut decode, mut digests) = (Vec::new(), Vec::new(), Vec::new());
        let (mut token_loop, mut loop_digests) = (Vec::new(), Vec::new());
        for _ in 0..args.rounds {
            backend.clear(&mut seq)?;
            backend.set_rule(&mut seq, &rule)?;
            let t0 = Instant::now();
            backend.prefill_tokens(&mut seq, &tokens)?;
            backend.ids(&seq, context..context + 1)?;
            prefill.push(context as f64 / t0.elapsed().as_secs_f64());
            let t1 = Instant::now();
            backend.run_steps(&mut seq, args.steps)?;
            let ids = backend.ids(&seq, context + 1..context + 1 + args.steps)?;
            decode.push(args.steps as f64 / t1.elapsed().as_secs_f64());
            digests.push(fnv1a(&ids));
            if args.no_token_loop {
                continue;
            }
            backend.clear(&mut seq)?;
            let (tok_s, generated) = token_loop_round(&backend, &mut seq, &tokens, args.steps, rule)?;
            token_loop.push(tok_s);
            loop_digests.push(fnv1a(&generated[1..]));
        }
        // With launches left out the ids are meaningless, and a kernel whose producer is gone
        // reads whatever an earlier step left (the split-KV partials, for one): no check then.
        if args.leave_out.is_empty() && digests.iter().any(|&g| g != digests[0]) {
            bail!(
                "context {context}: the generated ids differ between rounds (digests {digests:x?})"
            );
        }
        if args.leave_out.is_empty() && loop_digests.iter().any(|&g| g != digests[0]) {
            bail!(
                "context {context}: the engine's token loop generated other ids than the replayed \
                 steps (digests {loop_digests:x?} against {:x})",
                digests[0]
            );
        }
        // The sequence again from its prompt, for the steps replayed after the measured ones.
        let prefilled_again = |seq: &mut CudaSequence| -> anyhow::Result<()> {
            backend.clear(seq)?;
            backend.set_rule(seq, &rule)?;
            backend.prefill_tokens(seq, &tokens)?;
            Ok(())
        };
        if let (Some(path), true) = (&args.trace, context == args.contexts[0]) {
            // The eager step names the launches (the graph replays the same sequence); two
            // replays warm the graph, the third is traced.
            prefilled_again(&mut seq)?;
            let labels: Vec<String> = backend.profile_step(&mut seq)?.into_iter().map(|(l, _)| l).collect();
            backend.run_steps(&mut seq, 2)?;
            lily_cuda::runtime::trace::clear(gpu)?;
            backend.run_steps(&mut seq, 1)?;
            let marks = lily_cuda::runtime::trace::collect(gpu)?;
            // Marks that do not match the eager step's launches are still written, unnamed.
            let (text, what) = match lily_cuda::runtime::trace::launches(&marks, &labels) {
                Ok(launches) => (lily_cuda::runtime::trace::csv(&launches), format!("{} launches", launches.len())),
                Err(e) => {
                    tracing::warn!("{e}; writing the marks by grid id");
                    (lily_cuda::runtime::trace::csv(&lily_cuda::runtime::trace::unnamed(&marks)), "launches not matched".to_string())
                }
            };
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
            println!("# traced one decode step at context {context}: {what}, {} blocks -> {}", marks.len(), path.display());
        }
        if args.profiler_step && context == args.contexts[0] {
            prefilled_again(&mut seq)?;
            backend.run_steps(&mut seq, 2)?;
            gpu.profiler_range(|| backend.run_steps(&mut seq, 1))?;
            println!("# one decode step at context {context} replayed with the profiler's capture on");
        }
        if args.profile {
            profiles.push((format!("decode step at context {context}"), backend.profile_step(&mut seq)?));
            backend.clear(&mut seq)?;
            backend.set_rule(&mut seq, &rule)?;
            gpu.synchronize()?;
            gpu.profile_start();
            let prefilled = backend.prefill_tokens(&mut seq, &tokens);
            let launches = gpu.profile_finish()?;
            prefilled?;
            profiles.push((format!("prefill of {context} tokens"), launches));
        }
        let ceiling = args.bandwidth_tbs * 1e12 / decode_bytes(&d, context);
        let prefill_tok_s = median(prefill);
        let row = Row {
            context,
            prefill_tok_s,
            decode_tok_s: median(decode),
            loop_tok_s: (!token_loop.is_empty()).then(|| median(token_loop)),
            decode_ceiling: ceiling,
            prefill_fraction: prefill_tok_s * prefill_flops(&d, context)
                / (args.matrix_tflops * 1e12),
            digest: digests[0],
        };
        println!(
            "| {} | {:.0} | {:.2}% | {:.1} | {:.0} | {:.1}% | {:016x} | {} |",
            row.context,
            row.prefill_tok_s,
            100.0 * row.prefill_fraction,
            row.decode_tok_s,
            row.decode_ceiling,
            100.0 * row.decode_tok_s / row.decode_ceiling,
            row.digest,
            row.loop_tok_s.map_or("-".to_string(), |t| format!("{t:.1}"))
        );
        rows.push(row);
    }
    tracing::info!(target: lily_model::PROGRESS, stage = "contexts", done = total, total, "contexts: all {total} measured");
    for (what, launches) in &profiles {
        print_profile(what, launches);
    }
    let doc = serde_json::json!({
            "gpu": gpu.name,
            "arch": gpu.arch().to_string(),
            "driver": gpu.driver_version,
            "commit": commit,
            "shapes": shapes.to_string(),
            "precision": precision,
            "steps": args.steps,
            "rounds": args.rounds,
            "bandwidth_tbs": args.bandwidth_tbs,
            "matrix_tflops": args.matrix_tflops,
            "results": rows.iter().map(row_json).collect::<Vec<_>>(),
    });
    if let Some(path) = &args.json {
        std::fs::write(path, format!("{doc:#}\n")).with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = &args.plot {
        plot::write(path, &plot::Results::from_json(&doc, "this run's results")?, &peers)?;
    }
    Ok(())
}

/// Per-kernel times of one eagerly launched step, grouped by kernel and grid (which tells the
/// matrices apart: e.g. gemv_gdn_out over 128 blocks is the GDN output projection).
fn print_profile(what: &str, launches: &[(String, f32)]) {
    let mut groups: Vec<(String, usize, f64)> = Vec::new();
    for (label, ms) in launches {
        match groups.iter_mut().find(|g| &g.0 == label) {
            Some(g) => {
                g.1 += 1;
                g.2 += *ms as f64;
            }
            None => groups.push((label.clone(), 1, *ms as f64)),
        }
    }
    groups.sort_by(|a, b| b.2.total_cmp(&a.2));
    let total: f64 = groups.iter().map(|g| g.2).sum();
    println!();
    println!(
        "## {what}, launched eagerly: {} launches, {:.1} us of kernel time",
        launches.len(),
        total * 1e3
    );
    println!("| kernel, grid | launches | total us | us each | share |");
    println!("|---|---:|---:|---:|---:|");
    for (label, n, ms) in groups {
        println!(
            "| {label} | {n} | {:.1} | {:.2} | {:.1}% |",
            ms * 1e3,
            ms * 1e3 / n as f64,
            100.0 * ms / total
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_follows_the_contract_formula() {
        let p = prompt(4, 248_320);
        assert_eq!(p[0], 0);
        assert_eq!(p[1], (2_654_435_761u64 % 248_320) as u32);
        // i * 2654435761 wraps modulo 2^32 before the vocabulary modulo.
        assert_eq!(p[2], ((2 * 2_654_435_761u64) % (1 << 32) % 248_320) as u32);
        assert!(p.iter().all(|&t| t < 248_320));
    }

    #[test]
    fn the_decode_ceiling_at_1k_matches_the_design_estimate() {
        // docs/DESIGN.md §2: ~712 tok/s at 1K context and 4.3 TB/s.
        let ceiling = 4.3e12 / decode_bytes(&Dims::qwen36_35b_a3b(), 1024);
        assert!((700.0..725.0).contains(&ceiling), "{ceiling}");
        let at_128k = 4.3e12 / decode_bytes(&Dims::qwen36_35b_a3b(), 131_072);
        assert!((480.0..510.0).contains(&at_128k), "{at_128k}");
    }

    #[test]
    fn a_row_is_written_with_its_digest_in_hex_and_a_left_out_loop_as_null() {
        let mut row = Row {
            context: 1024,
            prefill_tok_s: 28_000.0,
            decode_tok_s: 560.0,
            loop_tok_s: Some(540.5),
            decode_ceiling: 712.0,
            prefill_fraction: 0.21,
            digest: 0x894e_1064_0fd7_f3c2,
        };
        let j = row_json(&row);
        assert_eq!(j["digest"], "894e10640fd7f3c2");
        assert_eq!(j["token_loop_decode_tok_s"], 540.5);
        assert!((j["decode_fraction_of_ceiling"].as_f64().unwrap() - 560.0 / 712.0).abs() < 1e-12);
        row.loop_tok_s = None;
        assert!(row_json(&row)["token_loop_decode_tok_s"].is_null());
    }

    #[test]
    fn the_fp8_ceiling_at_1k_counts_the_bf16_tensors_and_the_scales() {
        // docs/DESIGN.md §2: ~1,190 tok/s at 1K for FP8 products with lm_head and the router
        // in bf16.
        let fp8 = Dims {
            weights: WeightFormat::Fp8 {
                block_rows: 128,
                block_cols: 128,
            },
            ..Dims::qwen36_35b_a3b()
        };
        let ceiling = 4.3e12 / decode_bytes(&fp8, 1024);
        assert!((1150.0..1210.0).contains(&ceiling), "{ceiling}");
    }

    #[test]
    fn median_of_two_is_their_mean() {
        assert_eq!(median(vec![3.0, 1.0]), 2.0);
        assert_eq!(median(vec![5.0, 1.0, 3.0]), 3.0);
    }
}
