//! Shared by the GPU tests and the micro-benchmarks (benches/): opening the GPU (or skipping
//! where there is none), the tiny fixture, seeded random inputs, poisoned outputs, the error
//! measure, and timing.
#![allow(dead_code)]

pub mod gdn;
pub mod sampling;

use std::sync::Arc;

use lily_cuda::dims::Dims;
use lily_cuda::runtime::driver::Gpu;
use lily_cuda::runtime::nvrtc::Nvrtc;
use lily_cuda::runtime::tensor::{DType, Matrix, Tensor};
use lily_cuda::WeightFormat;
use lily_cuda::weights::f32_to_bf16;
use lily_cuda::CudaError;
use lily_model::weights::{ExpertWeights, MoeWeights};
use lily_model::Tensor as HostTensor;

/// The tiny checkpoint of lily-cpu's golden fixtures (docs/DESIGN.md §1): LILY_TINY_FIXTURE
/// where the test binary runs away from the repository (scripts/gpu/gpu_check.sh stages a
/// copy), else the repository's.
pub fn fixture() -> std::path::PathBuf {
    std::env::var_os("LILY_TINY_FIXTURE")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../cpu/tests/fixtures/linear3_full1")
        })
}

/// The same checkpoint in the official FP8 layout, as `lily quantize --fp8` writes it (lily-cpu's
/// fixture `linear3_full1_fp8`): LILY_TINY_FP8_FIXTURE where staged, else the repository's.
pub fn fp8_fixture() -> std::path::PathBuf {
    std::env::var_os("LILY_TINY_FP8_FIXTURE")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../cpu/tests/fixtures/linear3_full1_fp8")
        })
}

/// The GPU, or None (with a notice) where there is no CUDA driver. Any other failure is a bug.
pub fn gpu(test: &str) -> Option<Arc<Gpu>> {
    match Gpu::open() {
        Ok(g) => Some(g),
        Err(CudaError::LibraryNotFound { .. }) => {
            eprintln!("SKIPPED {test}: no CUDA driver on this machine");
            None
        }
        Err(e) => panic!("{test}: {e}"),
    }
}

/// NVRTC, or None (with a notice) where it is not installed; a failure instead when
/// `LILY_REQUIRE_NVRTC=1` says the tools were installed (scripts/test.sh sets it).
pub fn nvrtc(test: &str) -> Option<&'static Nvrtc> {
    match Nvrtc::get() {
        Ok(n) => Some(n),
        Err(e) => {
            assert!(
                !tools_required(),
                "LILY_REQUIRE_NVRTC=1 but NVRTC did not load: {e}"
            );
            eprintln!("SKIPPED {test}: no NVRTC ({e}); set LILY_NVRTC");
            None
        }
    }
}

/// The path of a tool the environment variable `var` names, or None (with a notice) where it
/// is not set; a failure instead under `LILY_REQUIRE_NVRTC=1`.
pub fn tool(test: &str, var: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os(var).map(std::path::PathBuf::from);
    if path.is_none() {
        assert!(
            !tools_required(),
            "LILY_REQUIRE_NVRTC=1 but {var} is not set"
        );
        eprintln!("SKIPPED {test}: set {var}");
    }
    path
}

fn tools_required() -> bool {
    std::env::var("LILY_REQUIRE_NVRTC").as_deref() == Ok("1")
}

/// xorshift64*: fresh inputs per test from a seed derived from the clock, printed so a failure
/// can be replayed with LILY_TEST_SEED.
pub struct Rng(u64);

impl Rng {
    pub fn new(test: &str) -> Rng {
        let seed = std::env::var("LILY_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
            });
        eprintln!("{test}: LILY_TEST_SEED={seed}");
        Rng(seed | 1)
    }
    /// Uniform in [-1, 1).
    pub fn next(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        ((self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32 / (1u64 << 24) as f32) * 2.0
            - 1.0
    }
    pub fn vec(&mut self, n: usize, scale: f32) -> Vec<f32> {
        (0..n).map(|_| self.next() * scale).collect()
    }
    /// Values already rounded to bf16, so the CPU sees exactly what the GPU reads.
    pub fn vec_bf16(&mut self, n: usize, scale: f32) -> Vec<f32> {
        self.vec(n, scale).into_iter().map(round_bf16).collect()
    }
}

pub fn round_bf16(x: f32) -> f32 {
    f32::from_bits((f32_to_bf16(x) as u32) << 16)
}

pub fn upload(gpu: &Arc<Gpu>, name: &str, dtype: DType, shape: &[usize], data: &[f32]) -> Tensor {
    assert_eq!(shape.iter().product::<usize>(), data.len(), "{name}");
    let t = Tensor::new(gpu, name, dtype, shape).unwrap();
    let bytes: Vec<u8> = match dtype {
        DType::F32 => data.iter().flat_map(|x| x.to_le_bytes()).collect(),
        DType::BF16 => data
            .iter()
            .flat_map(|x| f32_to_bf16(*x).to_le_bytes())
            .collect(),
        DType::I32 => data
            .iter()
            .flat_map(|x| (*x as i32).to_le_bytes())
            .collect(),
        DType::U64 => data
            .iter()
            .flat_map(|x| (*x as u64).to_le_bytes())
            .collect(),
        DType::F8E4M3 => data.iter().map(|x| lily_model::tensor::f32_to_e4m3(*x)).collect(),
    };
    gpu.upload(t.ptr(), &bytes).unwrap();
    t
}

/// An output tensor filled with NaN, so an element the kernel fails to write shows up.
pub fn poisoned(gpu: &Arc<Gpu>, name: &str, dtype: DType, shape: &[usize]) -> Tensor {
    let t = Tensor::new(gpu, name, dtype, shape).unwrap();
    let pattern = if dtype == DType::BF16 {
        0x7fc0_7fc0
    } else {
        0x7fc0_0000
    };
    gpu.memset_u32(t.ptr(), pattern, t.bytes() / 4).unwrap();
    t
}

pub fn download(gpu: &Arc<Gpu>, t: &Tensor) -> Vec<f32> {
    let mut bytes = vec![0u8; t.bytes()];
    gpu.download(&mut bytes, t.ptr()).unwrap();
    match t.dtype {
        DType::F32 => bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
        DType::BF16 => bytes
            .chunks_exact(2)
            .map(|b| f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16))
            .collect(),
        DType::I32 => bytes
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32)
            .collect(),
        DType::U64 => bytes
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap()) as f32)
            .collect(),
        DType::F8E4M3 => bytes.iter().map(|b| lily_model::tensor::e4m3_to_f32(*b)).collect(),
    }
}

/// max|ours - ref| / max|ref|; infinite if `ours` holds a NaN or infinity (an unwritten or
/// broken element).
pub fn rel_error(ours: &[f32], reference: &[f32]) -> f32 {
    assert_eq!(ours.len(), reference.len());
    if ours.iter().any(|x| !x.is_finite()) {
        return f32::INFINITY;
    }
    let scale = reference.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    ours.iter()
        .zip(reference)
        .fold(0.0f32, |m, (a, b)| m.max((a - b).abs()))
        / scale
}

/// Asserts `rel_error <= bound` and prints the measured error (the performance log quotes it).
pub fn check(what: &str, ours: &[f32], reference: &[f32], bound: f32) {
    let e = rel_error(ours, reference);
    eprintln!("{what}: max relative error {e:.3e} (bound {bound:.0e})");
    if e > bound {
        // Where it went wrong: the first and the worst element, and how many are off.
        let scale = reference.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        // Negated so that a NaN counts as off.
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        let off = |i: usize| !((ours[i] - reference[i]).abs() <= bound * scale);
        let bad: Vec<usize> = (0..ours.len()).filter(|&i| off(i)).collect();
        let worst = (0..ours.len())
            .max_by(|&a, &b| {
                let d = |i: usize| (ours[i] - reference[i]).abs();
                d(a).partial_cmp(&d(b))
                    .unwrap_or(std::cmp::Ordering::Greater)
            })
            .unwrap_or(0);
        panic!(
            "{what}: relative error {e:.3e} exceeds {bound:.0e}: {} of {} elements off, first at {} \
             ({} vs {}), worst at {worst} ({} vs {})",
            bad.len(),
            ours.len(),
            bad[0],
            ours[bad[0]],
            reference[bad[0]],
            ours[worst],
            reference[worst]
        );
    }
}

/// A host tensor holding `values` rounded to bf16, for the CPU reference.
pub fn host_bf16(name: &str, shape: Vec<usize>, values: &[f32]) -> HostTensor {
    let bits: Vec<u16> = values.iter().map(|x| f32_to_bf16(*x)).collect();
    HostTensor::from_bf16_bits(name, shape, &bits)
}

/// A product's matrix [.., rows, cols] of `values` in `format`, as the CPU reference reads it and
/// as the GPU holds it: bf16 (the values rounded), or e4m3 with one f32 scale per block of each
/// matrix (its largest magnitude / 448, as a quantiser makes them), which the reference
/// dequantises.
pub fn product_matrix(
    gpu: &Arc<Gpu>,
    name: &str,
    format: WeightFormat,
    shape: &[usize],
    values: &[f32],
) -> (HostTensor, Matrix) {
    let WeightFormat::Fp8 {
        block_rows: br,
        block_cols: bc,
    } = format
    else {
        return (
            host_bf16(name, shape.to_vec(), values),
            Matrix {
                w: upload(gpu, name, DType::BF16, shape, values),
                scale: None,
            },
        );
    };
    let n = shape.len();
    let (rows, cols) = (shape[n - 2], shape[n - 1]);
    let mut scale_shape = shape.to_vec();
    scale_shape[n - 2] = rows.div_ceil(br);
    scale_shape[n - 1] = cols.div_ceil(bc);
    // Each matrix of a stack quantised on its own, as a checkpoint stores its experts.
    let (mut bits, mut scales) = (Vec::new(), Vec::new());
    for m in values.chunks(rows * cols) {
        let (q, s) = lily_model::fp8::quantize_blocks(m, rows, cols, [br, bc]).expect("finite values");
        bits.extend(q);
        scales.extend(s);
    }
    let host = HostTensor::from_e4m3_bits(
        name,
        shape.to_vec(),
        &bits,
        lily_model::tensor::BlockScale {
            scale_inv: HostTensor::from_f32(&format!("{name} scales"), scale_shape.clone(), &scales),
            block: [br, bc],
        },
    );
    let w = Tensor::new(gpu, name, DType::F8E4M3, shape).unwrap();
    gpu.upload(w.ptr(), &bits).unwrap();
    let scale = upload(gpu, &format!("{name} scales"), DType::F32, &scale_shape, &scales);
    (host, Matrix { w, scale: Some(scale) })
}

/// One layer's MoE with seeded random bf16 weights, as the CPU reference sees it and as the GPU
/// holds it (router | shared_expert_gate concatenated, experts stacked).
pub struct RandomMoe {
    pub host: MoeWeights,
    pub router: Tensor,
    pub gate_up: Matrix,
    pub down: Matrix,
    pub shared_gate_up: Matrix,
    pub shared_down: Matrix,
}

/// Its experts' and shared expert's matrices in `d.weights`' format (the router stays bf16).
pub fn random_moe(gpu: &Arc<Gpu>, rng: &mut Rng, d: &Dims) -> RandomMoe {
    let (e, hid, i) = (d.experts, d.hidden, d.moe_inter);
    let s = 1.0 / (hid as f32).sqrt();
    let router = rng.vec_bf16((e + 1) * hid, s);
    let gate_up = rng.vec_bf16(e * 2 * i * hid, s);
    let down = rng.vec_bf16(e * hid * i, 1.0 / (i as f32).sqrt());
    let shared_gate_up = rng.vec_bf16(2 * i * hid, s);
    let shared_down = rng.vec_bf16(hid * i, 1.0 / (i as f32).sqrt());
    let f = d.weights;
    let (gate_up_h, gate_up) = product_matrix(gpu, "gate_up", f, &[e, 2 * i, hid], &gate_up);
    let (down_h, down) = product_matrix(gpu, "down", f, &[e, hid, i], &down);
    let (shared_gate_up_h, shared_gate_up) =
        product_matrix(gpu, "shared_gate_up", f, &[2 * i, hid], &shared_gate_up);
    let (shared_down_h, shared_down) = product_matrix(gpu, "shared_down", f, &[hid, i], &shared_down);
    let expert = |gu: &HostTensor, dn: HostTensor| ExpertWeights {
        gate_proj: gu.slice_rows(0..i),
        up_proj: gu.slice_rows(i..2 * i),
        down_proj: dn,
    };
    let host = MoeWeights {
        router: host_bf16("router", vec![e, hid], &router[..e * hid]),
        experts: (0..e).map(|j| expert(&gate_up_h.index(j), down_h.index(j))).collect(),
        shared_expert: expert(&shared_gate_up_h, shared_down_h),
        shared_expert_gate: host_bf16("shared gate", vec![1, hid], &router[e * hid..]),
    };
    RandomMoe {
        host,
        router: upload(gpu, "router", DType::BF16, &[e + 1, hid], &router),
        gate_up,
        down,
        shared_gate_up,
        shared_down,
    }
}

/// The input a normed product multiplies: the CPU's zero-centred RMSNorm of `resid`, rounded to
/// bf16 as the kernels stage it.
pub fn normed_bf16(resid: &[f32], norm_w: &[f32], eps: f32) -> Vec<f32> {
    let mut xn = vec![0.0; resid.len()];
    lily_cpu::norm::rms_norm_zero_centred(resid, norm_w, eps, &mut xn);
    xn.into_iter().map(round_bf16).collect()
}

/// A micro-benchmark binary's main: runs the benchmarks named on the command line, or all,
/// when `--bench` is given (`cargo bench` passes it; scripts/gpu/gpu_check.sh too), so that
/// `cargo test` builds them without running them.
pub fn run_benches(benches: &[(&str, fn())]) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.iter().any(|a| a == "--bench") {
        eprintln!("micro-benchmarks: run with --bench [NAME...]");
        return;
    }
    let names: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    for (name, bench) in benches {
        if names.is_empty() || names.iter().any(|n| name.contains(n.as_str())) {
            eprintln!("-- {name}");
            bench();
        }
    }
}

/// What a micro-benchmark measures of `run`, the one way every benchmark times: after one
/// warm-up call, the mean milliseconds of `reps` calls back to back on the stream (events), and
/// each launch of `reps` more calls, profiled (labels "name grid XxYxZ").
pub struct Timing {
    pub ms: f32,
    launches: Vec<(String, f32)>,
    reps: usize,
}

pub fn time(gpu: &Arc<Gpu>, reps: usize, mut run: impl FnMut()) -> Timing {
    run();
    gpu.synchronize().unwrap();
    let (begin, end) = (gpu.event().unwrap(), gpu.event().unwrap());
    begin.record().unwrap();
    for _ in 0..reps {
        run();
    }
    end.record().unwrap();
    let ms = end.since(&begin).unwrap() / reps as f32;
    gpu.synchronize().unwrap();
    gpu.profile_start();
    for _ in 0..reps {
        run();
    }
    let launches = gpu.profile_finish().unwrap();
    Timing { ms, launches, reps }
}

impl Timing {
    /// Mean milliseconds of the profiled launches whose label starts with `kernel`; panics if
    /// there is none, so a renamed kernel cannot time as zero.
    pub fn kernel_ms(&self, kernel: &str) -> f32 {
        let t: Vec<f32> = self
            .launches
            .iter()
            .filter(|(label, _)| label.starts_with(kernel))
            .map(|(_, ms)| *ms)
            .collect();
        assert!(!t.is_empty(), "no timed launch of {kernel}");
        t.iter().sum::<f32>() / t.len() as f32
    }

    /// The launches of the last profiled call, in order.
    pub fn last_call(&self) -> &[(String, f32)] {
        &self.launches[self.launches.len() - self.launches.len() / self.reps..]
    }
}

/// Lets the next launch begin, then writes `value` to `pos` once `ns` nanoseconds have passed:
/// the split-KV kernel two launches later is resident by then and reads the old position before
/// its PDL wait, so it must notice the new one after the wait. Its PDL calls are common.cuh's,
/// which it includes as the kernel families do.
pub const WRITE_LATE: &str = concat!(
    include_str!("../../src/kernels/common.cuh"),
    r#"
extern "C" __global__ void write_late(int* pos, int value, unsigned long long ns) {
    pdl_launch_next();
    pdl_wait();
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
    *pos = value;
}
"#
);

/// A model small enough for a test, with every kind of layer: what the kernel checks without a
/// GPU compile besides the full model.
pub fn tiny_dims() -> Dims {
    Dims {
        hidden: 64,
        vocab: 512,
        attention_layers: vec![false, false, false, true],
        gdn_key_heads: 2,
        gdn_value_heads: 4,
        gdn_key_dim: 16,
        gdn_value_dim: 16,
        attn_heads: 4,
        attn_kv_heads: 1,
        attn_head_dim: 32,
        rope_dim: 8,
        experts: 8,
        top_k: 2,
        moe_inter: 32,
        shared_inter: 32,
        ..Dims::qwen36_35b_a3b()
    }
}

/// Launch shapes other than the defaults, for every key (the checks without a GPU compile the
/// decode kernels under them too).
pub const SWEPT_SHAPES: &str = "gemv_normed_warps=4,gemv_normed_reg_rows=1,gemv_normed_stages=2,gemv_normed_blocks=3,gemv_out_warps=8,lm_head_warps=2,router_warps=1,gemv_loads=8,moe_warps=8,moe_down_rows=3,moe_down_warp_rows=3,attn_split_keys=256,l2_ahead_rows=3,l2_ahead_last=0,l2_evict_first=15,gemv_normed_early=0";
