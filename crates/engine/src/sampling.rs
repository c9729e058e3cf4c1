//! Turning logits into the next token: repetition penalties, a token mask (constrained
//! decoding), temperature, top-k, top-p, min-p, and a seeded random draw so that the same seed
//! gives the same output. Also the log-probabilities that OpenAI's `logprobs` reports.

use std::borrow::Cow;
use std::collections::HashMap;

use lily_model::PickRule;

#[derive(Debug, Clone, PartialEq)]
pub struct SamplingParams {
    /// 0 means greedy (argmax after penalties and mask).
    pub temperature: f32,
    /// Keep the smallest set of tokens whose probability reaches `top_p` (1.0 = off).
    pub top_p: f32,
    /// Keep the `top_k` most likely tokens (0 = off).
    pub top_k: usize,
    /// Drop tokens less likely than `min_p` times the most likely one (0.0 = off).
    pub min_p: f32,
    /// Subtracted once from the logit of every token already generated.
    pub presence_penalty: f32,
    /// Subtracted from a token's logit once per time it was generated.
    pub frequency_penalty: f32,
    /// Same seed, same logits: same tokens. `None` draws a seed from the clock.
    pub seed: Option<u64>,
    /// Added to these tokens' logits before anything else (OpenAI's `logit_bias`: -100 bans a
    /// token in practice, 100 all but forces it).
    pub logit_bias: Vec<(u32, f32)>,
}

impl Default for SamplingParams {
    fn default() -> Self {
        Self {
            temperature: 1.0,
            top_p: 1.0,
            top_k: 0,
            min_p: 0.0,
            presence_penalty: 0.0,
            frequency_penalty: 0.0,
            seed: None,
            logit_bias: Vec::new(),
        }
    }
}

/// One request's sampler: the parameters, the random stream and the counts of generated
/// tokens that the penalties need. The draw itself is `PickRule` (lily-model), which a backend
/// may also apply on its side when no penalty or mask changes the logits.
pub struct Sampler {
    params: SamplingParams,
    /// The last draw's state in the request's SplitMix64 stream (lily_model::pick): tiny,
    /// fast, good enough for one uniform number per token, and its whole state is the seed,
    /// which is what makes seeded runs repeatable.
    draw: u64,
    counts: HashMap<u32, u32>,
    /// Per-token weights of the draw, kept between calls (one vocabulary of f32).
    weights: Vec<f32>,
}

impl Sampler {
    pub fn new(params: SamplingParams) -> Self {
        let seed = params.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0)
        });
        Self {
            params,
            draw: seed,
            counts: HashMap::new(),
            weights: Vec::new(),
        }
    }

    pub fn params(&self) -> &SamplingParams {
        &self.params
    }

    /// Records a generated token for the presence and frequency penalties.
    pub fn observe(&mut self, token: u32) {
        *self.counts.entry(token).or_insert(0) += 1;
    }

    /// The next token's rule: greedy, or a draw with the next number of the seeded stream.
    /// Greedy draws no number, so a request's stream does not depend on how it is split.
    fn next_rule(&mut self) -> PickRule {
        let p = &self.params;
        if p.temperature <= 0.0 {
            return PickRule::GREEDY;
        }
        let rule = PickRule {
            temperature: p.temperature,
            top_k: p.top_k.min(u32::MAX as usize) as u32,
            top_p: p.top_p,
            min_p: p.min_p,
            draw: self.draw,
        }
        .advanced(1);
        self.draw = rule.draw;
        rule
    }

    /// The next token's rule for a backend to apply to its own logits, when the pick depends on
    /// nothing else (no penalties or bias; the caller knows whether it needs a mask or the
    /// logits). Consumes the stream exactly as `pick` would, so either path gives the same tokens.
    pub fn backend_rule(&mut self) -> Option<PickRule> {
        let p = &self.params;
        (p.presence_penalty == 0.0 && p.frequency_penalty == 0.0 && p.logit_bias.is_empty())
            .then(|| self.next_rule())
    }

    /// Chooses the next token. `allowed`, when given, masks out every token that is `false`;
    /// if it allows nothing, the mask is ignored rather than producing an impossible token.
    pub fn pick(&mut self, logits: &[f32], allowed: Option<&[bool]>) -> u32 {
        // The logits are copied only when a bias, penalties or a mask change them (a 1 MB copy per
        // token at the real vocabulary).
        let mut scores = Cow::Borrowed(logits);
        let p = &self.params;
        if !p.logit_bias.is_empty() {
            let scores = scores.to_mut();
            for &(token, bias) in &p.logit_bias {
                if let Some(x) = scores.get_mut(token as usize) {
                    *x += bias;
                }
            }
        }
        if p.presence_penalty != 0.0 || p.frequency_penalty != 0.0 {
            let scores = scores.to_mut();
            for (&token, &count) in &self.counts {
                if let Some(x) = scores.get_mut(token as usize) {
                    *x -= p.presence_penalty + p.frequency_penalty * count as f32;
                }
            }
        }
        if let Some(mask) = allowed {
            if mask.iter().any(|&a| a) {
                for (x, &ok) in scores.to_mut().iter_mut().zip(mask) {
                    if !ok {
                        *x = f32::NEG_INFINITY;
                    }
                }
            }
        }
        let rule = self.next_rule();
        rule.pick(&scores, &mut self.weights)
    }
}

/// The log-probability of the chosen token under the model's distribution (the raw logits,
/// before penalties and temperature, as OpenAI reports it) and the `top_n` most likely tokens.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenLogprob {
    pub token: u32,
    pub logprob: f32,
    /// Most likely first; ties broken by the lower id.
    pub top: Vec<(u32, f32)>,
}

pub fn token_logprob(logits: &[f32], token: u32, top_n: usize) -> TokenLogprob {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let log_z = max
        + logits
            .iter()
            .map(|&x| ((x - max) as f64).exp())
            .sum::<f64>()
            .ln() as f32;
    let logprob = logits
        .get(token as usize)
        .map_or(f32::NEG_INFINITY, |&x| x - log_z);
    let mut top: Vec<(u32, f32)> = Vec::new();
    if top_n > 0 {
        let mut all: Vec<(u32, f32)> = logits
            .iter()
            .enumerate()
            .map(|(i, &x)| (i as u32, x - log_z))
            .collect();
        let order = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        let n = top_n.min(all.len());
        if n < all.len() {
            all.select_nth_unstable_by(n - 1, order);
            all.truncate(n);
        }
        all.sort_unstable_by(order);
        top = all;
    }
    TokenLogprob {
        token,
        logprob,
        top,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(temperature: f32) -> SamplingParams {
        SamplingParams {
            temperature,
            seed: Some(7),
            ..Default::default()
        }
    }

    #[test]
    fn greedy_takes_the_best_allowed_token() {
        let mut s = Sampler::new(params(0.0));
        let logits = [0.0, 3.0, 1.0, 2.0];
        assert_eq!(s.pick(&logits, None), 1);
        assert_eq!(s.pick(&logits, Some(&[true, false, true, true])), 3);
        // A mask that allows nothing is ignored instead of yielding a masked-out token.
        assert_eq!(s.pick(&logits, Some(&[false; 4])), 1);
    }

    #[test]
    fn same_seed_same_tokens_and_different_seed_differs() {
        let logits: Vec<f32> = (0..50).map(|i| ((i * 37) % 11) as f32 * 0.3).collect();
        let run = |seed| {
            let mut s = Sampler::new(SamplingParams {
                seed: Some(seed),
                ..params(1.0)
            });
            (0..64).map(|_| s.pick(&logits, None)).collect::<Vec<_>>()
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
    }

    #[test]
    fn top_k_top_p_and_min_p_restrict_the_draw() {
        let logits = [5.0, 4.9, 3.0, -1.0, 4.8];
        let draw = |p: SamplingParams| {
            let mut s = Sampler::new(p);
            let mut seen = [false; 5];
            for _ in 0..400 {
                seen[s.pick(&logits, None) as usize] = true;
            }
            seen
        };
        assert_eq!(
            draw(SamplingParams {
                top_k: 2,
                ..params(1.0)
            }),
            [true, true, false, false, false]
        );
        assert_eq!(
            draw(SamplingParams {
                min_p: 0.5,
                ..params(1.0)
            }),
            [true, true, false, false, true]
        );
        // Tokens 0 and 1 hold more than half the mass: top_p 0.5 keeps just them.
        assert_eq!(
            draw(SamplingParams {
                top_p: 0.5,
                ..params(1.0)
            }),
            [true, true, false, false, false]
        );
        let all = draw(params(1.0));
        assert!(
            all[2],
            "token 2 should be reachable without filters: {all:?}"
        );
    }

    #[test]
    fn the_backend_rule_draws_what_pick_draws() {
        let logits: Vec<f32> = (0..300).map(|i| ((i * 7919) % 263) as f32 * 0.05).collect();
        let p = SamplingParams {
            top_p: 0.9,
            ..params(0.8)
        };
        let (mut host, mut rules) = (Sampler::new(p.clone()), Sampler::new(p));
        let mut scratch = Vec::new();
        for _ in 0..50 {
            let rule = rules.backend_rule().expect("no penalties");
            assert_eq!(host.pick(&logits, None), rule.pick(&logits, &mut scratch));
        }
        let mut penalised = Sampler::new(SamplingParams {
            presence_penalty: 0.1,
            ..params(1.0)
        });
        assert_eq!(penalised.backend_rule(), None);
    }

    #[test]
    fn penalties_push_away_repeated_tokens() {
        let logits = [1.0, 0.9, 0.0];
        let mut s = Sampler::new(SamplingParams {
            presence_penalty: 0.5,
            ..params(0.0)
        });
        assert_eq!(s.pick(&logits, None), 0);
        s.observe(0);
        assert_eq!(s.pick(&logits, None), 1);
        let mut f = Sampler::new(SamplingParams {
            frequency_penalty: 0.6,
            ..params(0.0)
        });
        f.observe(0);
        assert_eq!(f.pick(&logits, None), 1);
        f.observe(1);
        f.observe(1);
        assert_eq!(f.pick(&logits, None), 0);
    }

    #[test]
    fn logit_bias_moves_the_pick_and_keeps_it_on_the_host() {
        let logits = [1.0, 0.9, 0.0];
        let biased = |bias: Vec<(u32, f32)>| {
            Sampler::new(SamplingParams {
                logit_bias: bias,
                ..params(0.0)
            })
        };
        assert_eq!(biased(vec![]).pick(&logits, None), 0);
        assert_eq!(biased(vec![(2, 1.5)]).pick(&logits, None), 2);
        assert_eq!(biased(vec![(0, -100.0)]).pick(&logits, None), 1);
        // An id past the logits is ignored rather than a panic.
        assert_eq!(biased(vec![(7, 100.0)]).pick(&logits, None), 0);
        assert_eq!(biased(vec![(1, 1.0)]).backend_rule(), None);
    }

    #[test]
    fn logprobs_are_a_normalised_distribution() {
        let logits = [2.0f32, 1.0, 0.0, 1.0];
        let lp = token_logprob(&logits, 1, 3);
        let z: f32 = logits.iter().map(|x| x.exp()).sum();
        assert!((lp.logprob - (1.0f32.exp() / z).ln()).abs() < 1e-5);
        let ids: Vec<u32> = lp.top.iter().map(|t| t.0).collect();
        assert_eq!(ids, vec![0, 1, 3]);
        assert!((lp.top[0].1 - (2.0f32.exp() / z).ln()).abs() < 1e-5);
    }
}
