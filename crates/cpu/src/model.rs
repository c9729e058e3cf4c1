//! The forward pass, readable top to bottom: embed, then per layer
//! `x += mixer(input_norm(x)); x += moe(post_attention_norm(x))`, then final norm and lm_head.
//! A call processes T new tokens of one sequence at once (prefill) or one (decode).

use std::path::Path;

use lily_model::config::{Config, LayerKind};
use lily_model::weights::{AttentionWeights, GatedDeltaNetWeights, MixerWeights, Weights};
use lily_model::Backend;

use crate::activation::sigmoid;
use crate::attention::{causal_attention, AttentionShape};
use crate::error::CpuError;
use crate::gdn::{self, GdnInputs, GdnShape};
use crate::products::matmul;
use crate::moe::moe_block;
use crate::norm::{gated_rms_norm, rms_norm_zero_centred, rms_norm_zero_centred_rows};
use crate::rope::{apply_rope, inverse_frequencies};

/// The model on the CPU: the checkpoint's weights (memory-mapped, in their stored dtype) plus
/// f32 copies of the small per-layer vectors that every token reads.
pub struct CpuModel {
    config: Config,
    weights: Weights,
    layers: Vec<SmallWeights>,
    final_norm: Vec<f32>,
    inv_freq: Vec<f32>,
}

/// Norm weights and GDN parameters widened to f32 once at load time (a few KB per layer).
struct SmallWeights {
    input_norm: Vec<f32>,
    post_attention_norm: Vec<f32>,
    mixer: SmallMixer,
}

enum SmallMixer {
    LinearAttention {
        conv: Vec<f32>,
        a_log: Vec<f32>,
        dt_bias: Vec<f32>,
        norm: Vec<f32>,
    },
    FullAttention {
        q_norm: Vec<f32>,
        k_norm: Vec<f32>,
    },
}

/// One sequence's state: everything that depends on the tokens seen so far.
#[derive(Clone)]
pub struct CpuSequence {
    position: usize,
    max_seq: usize,
    layers: Vec<LayerState>,
}

#[derive(Clone)]
enum LayerState {
    /// conv [C, K-1] (last K-1 conv inputs), recurrent [Hv, Dk, Dv].
    LinearAttention { conv: Vec<f32>, recurrent: Vec<f32> },
    /// [position, Hkv, D] for every position so far.
    FullAttention { keys: Vec<f32>, values: Vec<f32> },
}

/// What a forward call returns besides updating the sequence.
pub struct ForwardOutput {
    /// [T, vocab] for every new token if asked for, else [vocab] for the last one.
    pub logits: Vec<f32>,
    /// Each layer's output [T, hidden] (before the final norm), if asked for.
    pub hidden: Vec<Vec<f32>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outputs {
    /// Logits of the last token only (generation).
    LastLogits,
    /// Logits of every token and every layer's output (tests, perplexity).
    Everything,
}

impl CpuModel {
    /// Reads `dir`'s config and maps its weights.
    pub fn load(dir: &Path) -> Result<CpuModel, CpuError> {
        let config = Config::load(dir)?;
        let weights = Weights::load(dir, &config)?;
        Ok(CpuModel::new(config, weights))
    }

    pub fn new(config: Config, weights: Weights) -> CpuModel {
        let layers = weights
            .layers
            .iter()
            .map(|l| SmallWeights {
                input_norm: l.input_layernorm.to_f32_vec(),
                post_attention_norm: l.post_attention_layernorm.to_f32_vec(),
                mixer: match &l.mixer {
                    MixerWeights::LinearAttention(g) => SmallMixer::LinearAttention {
                        conv: g.conv1d.to_f32_vec(),
                        a_log: g.a_log.to_f32_vec(),
                        dt_bias: g.dt_bias.to_f32_vec(),
                        norm: g.norm.to_f32_vec(),
                    },
                    MixerWeights::FullAttention(a) => SmallMixer::FullAttention {
                        q_norm: a.q_norm.to_f32_vec(),
                        k_norm: a.k_norm.to_f32_vec(),
                    },
                },
            })
            .collect();
        let inv_freq =
            inverse_frequencies(config.attention.rotary_dim, config.attention.rope_theta);
        let final_norm = weights.norm.to_f32_vec();
        CpuModel {
            config,
            weights,
            layers,
            final_norm,
            inv_freq,
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn weights(&self) -> &Weights {
        &self.weights
    }

    fn gdn_shape(&self) -> GdnShape {
        let l = &self.config.linear;
        GdnShape {
            num_key_heads: l.num_key_heads,
            num_value_heads: l.num_value_heads,
            key_dim: l.key_head_dim,
            value_dim: l.value_head_dim,
        }
    }

    /// Bytes of state a sequence of `max_seq` tokens needs (KV cache at full length included).
    pub fn sequence_bytes(&self, max_seq: usize) -> usize {
        let (a, l) = (&self.config.attention, &self.config.linear);
        let per_layer = |kind: &LayerKind| match kind {
            LayerKind::LinearAttention => {
                l.conv_dim() * (l.conv_kernel - 1)
                    + l.num_value_heads * l.key_head_dim * l.value_head_dim
            }
            LayerKind::FullAttention => 2 * max_seq * a.num_kv_heads * a.head_dim,
        };
        self.config.layer_kinds.iter().map(per_layer).sum::<usize>() * 4
    }

    /// A fresh sequence for up to `max_seq` tokens; its whole KV cache is reserved now, so a
    /// sequence that cannot fit fails here rather than midway through generation.
    pub fn new_sequence(&self, max_seq: usize) -> Result<CpuSequence, CpuError> {
        if max_seq == 0 {
            return Err(CpuError::EmptySequence);
        }
        let (a, l) = (&self.config.attention, &self.config.linear);
        let kv_len =
            max_seq
                .checked_mul(a.num_kv_heads * a.head_dim)
                .ok_or(CpuError::CacheTooLarge {
                    max_seq,
                    bytes: usize::MAX,
                })?;
        let too_large = || CpuError::CacheTooLarge {
            max_seq,
            bytes: self.sequence_bytes(max_seq),
        };
        let mut layers = Vec::with_capacity(self.config.num_layers());
        for kind in &self.config.layer_kinds {
            layers.push(match kind {
                LayerKind::LinearAttention => LayerState::LinearAttention {
                    conv: vec![0.0; l.conv_dim() * (l.conv_kernel - 1)],
                    recurrent: vec![0.0; l.num_value_heads * l.key_head_dim * l.value_head_dim],
                },
                LayerKind::FullAttention => {
                    let mut keys = Vec::new();
                    let mut values = Vec::new();
                    keys.try_reserve_exact(kv_len).map_err(|_| too_large())?;
                    values.try_reserve_exact(kv_len).map_err(|_| too_large())?;
                    LayerState::FullAttention { keys, values }
                }
            });
        }
        Ok(CpuSequence {
            position: 0,
            max_seq,
            layers,
        })
    }

    /// Runs `tokens` after what `seq` holds. With `Outputs::Everything` returns logits for every
    /// token and each layer's output; otherwise only the last token's logits.
    pub fn forward(
        &self,
        seq: &mut CpuSequence,
        tokens: &[u32],
        outputs: Outputs,
    ) -> Result<ForwardOutput, CpuError> {
        let c = &self.config;
        if tokens.is_empty() {
            return Err(CpuError::NoTokens);
        }
        if seq.position + tokens.len() > seq.max_seq {
            return Err(CpuError::ContextFull {
                position: seq.position,
                adding: tokens.len(),
                max_seq: seq.max_seq,
            });
        }
        if let Some(&token) = tokens.iter().find(|&&t| t as usize >= c.vocab_size) {
            return Err(CpuError::TokenOutOfRange {
                token,
                vocab_size: c.vocab_size,
            });
        }
        let (t_len, h) = (tokens.len(), c.hidden_size);

        let mut x = vec![0.0f32; t_len * h];
        for (t, &token) in tokens.iter().enumerate() {
            self.weights
                .embed_tokens
                .read_f32(token as usize * h, &mut x[t * h..(t + 1) * h]);
        }
        let mut hidden = Vec::new();
        let mut normed = vec![0.0f32; t_len * h];
        let mut mixed = vec![0.0f32; t_len * h];
        for (i, (layer, small)) in self.weights.layers.iter().zip(&self.layers).enumerate() {
            for t in 0..t_len {
                rms_norm_zero_centred(
                    &x[t * h..(t + 1) * h],
                    &small.input_norm,
                    c.rms_norm_eps,
                    &mut normed[t * h..(t + 1) * h],
                );
            }
            match (&layer.mixer, &small.mixer, &mut seq.layers[i]) {
                (
                    MixerWeights::LinearAttention(w),
                    SmallMixer::LinearAttention {
                        conv,
                        a_log,
                        dt_bias,
                        norm,
                    },
                    LayerState::LinearAttention {
                        conv: conv_state,
                        recurrent,
                    },
                ) => {
                    let small = GdnSmall {
                        conv,
                        a_log,
                        dt_bias,
                        norm,
                    };
                    self.gated_delta_net(w, &small, conv_state, recurrent, &normed, &mut mixed)
                }
                (
                    MixerWeights::FullAttention(w),
                    SmallMixer::FullAttention { q_norm, k_norm },
                    LayerState::FullAttention { keys, values },
                ) => self.gated_attention(
                    w,
                    q_norm,
                    k_norm,
                    keys,
                    values,
                    seq.position,
                    &normed,
                    &mut mixed,
                ),
                _ => unreachable!("layer state is built from the same config as the weights"),
            }
            x.iter_mut().zip(&mixed).for_each(|(a, b)| *a += b);

            for t in 0..t_len {
                let row = t * h..(t + 1) * h;
                rms_norm_zero_centred(
                    &x[row.clone()],
                    &small.post_attention_norm,
                    c.rms_norm_eps,
                    &mut normed[row.clone()],
                );
                moe_block(
                    &layer.moe,
                    c.moe.experts_per_token,
                    &normed[row.clone()],
                    &mut mixed[row],
                );
            }
            x.iter_mut().zip(&mixed).for_each(|(a, b)| *a += b);
            if outputs == Outputs::Everything {
                hidden.push(x.clone());
            }
        }
        seq.position += t_len;

        let rows = match outputs {
            Outputs::Everything => &x[..],
            Outputs::LastLogits => &x[(t_len - 1) * h..],
        };
        let mut final_normed = vec![0.0f32; rows.len()];
        for (src, dst) in rows.chunks_exact(h).zip(final_normed.chunks_exact_mut(h)) {
            rms_norm_zero_centred(src, &self.final_norm, c.rms_norm_eps, dst);
        }
        let mut logits = vec![0.0f32; rows.len() / h * c.vocab_size];
        matmul(&self.weights.lm_head, &final_normed, &mut logits);
        Ok(ForwardOutput { logits, hidden })
    }

    /// Gated DeltaNet over `x` [T, H] into `out` [T, H].
    fn gated_delta_net(
        &self,
        w: &GatedDeltaNetWeights,
        small: &GdnSmall,
        conv_state: &mut [f32],
        recurrent: &mut [f32],
        x: &[f32],
        out: &mut [f32],
    ) {
        let l = &self.config.linear;
        let t_len = x.len() / self.config.hidden_size;
        let (kd, vd, cd, hv) = (l.key_dim(), l.value_dim(), l.conv_dim(), l.num_value_heads);
        let mut qkv = vec![0.0f32; t_len * cd];
        let mut z = vec![0.0f32; t_len * vd];
        let mut a = vec![0.0f32; t_len * hv];
        let mut b = vec![0.0f32; t_len * hv];
        matmul(&w.in_proj_qkv, x, &mut qkv);
        matmul(&w.in_proj_z, x, &mut z);
        matmul(&w.in_proj_a, x, &mut a);
        matmul(&w.in_proj_b, x, &mut b);

        let mut conv_out = vec![0.0f32; t_len * cd];
        gdn::causal_conv1d_silu(&qkv, small.conv, conv_state, &mut conv_out);
        let (mut q, mut k, mut v) = (
            Vec::with_capacity(t_len * kd),
            Vec::with_capacity(t_len * kd),
            Vec::with_capacity(t_len * vd),
        );
        for row in conv_out.chunks_exact(cd) {
            q.extend_from_slice(&row[..kd]);
            k.extend_from_slice(&row[kd..2 * kd]);
            v.extend_from_slice(&row[2 * kd..]);
        }
        let mut g = vec![0.0f32; t_len * hv];
        let mut beta = vec![0.0f32; t_len * hv];
        gdn::decay_and_beta(&a, &b, small.a_log, small.dt_bias, &mut g, &mut beta);

        // As in transformers: the recurrent form for a single token, the chunked form otherwise.
        let mut core = vec![0.0f32; t_len * vd];
        let input = GdnInputs {
            q: &q,
            k: &k,
            v: &v,
            g: &g,
            beta: &beta,
        };
        if t_len == 1 {
            gdn::gated_delta_rule_recurrent(self.gdn_shape(), &input, recurrent, &mut core);
        } else {
            gdn::gated_delta_rule_chunked(self.gdn_shape(), &input, recurrent, &mut core);
        }

        let dv = l.value_head_dim;
        let mut gated = vec![0.0f32; t_len * vd];
        for ((o, zh), dst) in core
            .chunks_exact(dv)
            .zip(z.chunks_exact(dv))
            .zip(gated.chunks_exact_mut(dv))
        {
            gated_rms_norm(o, zh, small.norm, self.config.rms_norm_eps, dst);
        }
        matmul(&w.out_proj, &gated, out);
    }

    /// Gated attention over `x` [T, H] at positions `start..start + T`, appending to the cache.
    #[allow(clippy::too_many_arguments)]
    fn gated_attention(
        &self,
        w: &AttentionWeights,
        q_norm: &[f32],
        k_norm: &[f32],
        keys: &mut Vec<f32>,
        values: &mut Vec<f32>,
        start: usize,
        x: &[f32],
        out: &mut [f32],
    ) {
        let a = &self.config.attention;
        let t_len = x.len() / self.config.hidden_size;
        let (nh, nkv, d) = (a.num_heads, a.num_kv_heads, a.head_dim);
        let mut q_gate = vec![0.0f32; t_len * nh * 2 * d];
        let mut k = vec![0.0f32; t_len * nkv * d];
        let mut v = vec![0.0f32; t_len * nkv * d];
        matmul(&w.q_proj, x, &mut q_gate);
        matmul(&w.k_proj, x, &mut k);
        matmul(&w.v_proj, x, &mut v);

        // q_proj's output is, per head, [query (D) | gate (D)].
        let mut q = vec![0.0f32; t_len * nh * d];
        let mut gate = vec![0.0f32; t_len * nh * d];
        for (i, pair) in q_gate.chunks_exact(2 * d).enumerate() {
            q[i * d..(i + 1) * d].copy_from_slice(&pair[..d]);
            gate[i * d..(i + 1) * d].copy_from_slice(&pair[d..]);
        }
        rms_norm_zero_centred_rows(&mut q, q_norm, self.config.rms_norm_eps);
        rms_norm_zero_centred_rows(&mut k, k_norm, self.config.rms_norm_eps);
        for t in 0..t_len {
            for head in q[t * nh * d..(t + 1) * nh * d].chunks_exact_mut(d) {
                apply_rope(head, start + t, &self.inv_freq);
            }
            for head in k[t * nkv * d..(t + 1) * nkv * d].chunks_exact_mut(d) {
                apply_rope(head, start + t, &self.inv_freq);
            }
        }
        keys.extend_from_slice(&k);
        values.extend_from_slice(&v);

        let mut attn = vec![0.0f32; t_len * nh * d];
        let shape = AttentionShape {
            num_heads: nh,
            num_kv_heads: nkv,
            head_dim: d,
        };
        causal_attention(shape, &q, keys, values, 1.0 / (d as f32).sqrt(), &mut attn);
        for (o, g) in attn.iter_mut().zip(&gate) {
            *o *= sigmoid(*g);
        }
        matmul(&w.o_proj, &attn, out);
    }
}

struct GdnSmall<'a> {
    conv: &'a [f32],
    a_log: &'a [f32],
    dt_bias: &'a [f32],
    norm: &'a [f32],
}

impl Backend for CpuModel {
    type Sequence = CpuSequence;
    type Snapshot = CpuSequence;
    type Error = CpuError;

    fn vocab_size(&self) -> usize {
        self.config.vocab_size
    }

    fn new_sequence(&self, max_seq: usize) -> Result<CpuSequence, CpuError> {
        CpuModel::new_sequence(self, max_seq)
    }

    fn prefill(&self, seq: &mut CpuSequence, tokens: &[u32]) -> Result<Vec<f32>, CpuError> {
        Ok(self.forward(seq, tokens, Outputs::LastLogits)?.logits)
    }

    fn decode(&self, seq: &mut CpuSequence, token: u32) -> Result<Vec<f32>, CpuError> {
        Ok(self.forward(seq, &[token], Outputs::LastLogits)?.logits)
    }

    fn position(&self, seq: &CpuSequence) -> usize {
        seq.position
    }

    /// A full copy of the state; the KV cache is copied up to the current position only.
    fn snapshot(&self, seq: &CpuSequence) -> CpuSequence {
        seq.clone()
    }

    fn restore(&self, seq: &mut CpuSequence, snapshot: &CpuSequence) {
        seq.position = snapshot.position;
        seq.max_seq = snapshot.max_seq;
        for (dst, src) in seq.layers.iter_mut().zip(&snapshot.layers) {
            match (dst, src) {
                (
                    LayerState::FullAttention { keys, values },
                    LayerState::FullAttention { keys: k, values: v },
                ) => {
                    // Keeps the reservation made by new_sequence.
                    keys.clear();
                    keys.extend_from_slice(k);
                    values.clear();
                    values.extend_from_slice(v);
                }
                (dst, src) => dst.clone_from(src),
            }
        }
    }
}
