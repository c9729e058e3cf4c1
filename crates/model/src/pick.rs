//! How the next token is chosen from the logits when nothing but the logits matters (no
//! penalties, no mask): greedy, or one seeded draw under temperature, top-k, top-p and min-p.
//! A backend may apply a `PickRule` where the logits are (the GPU, with no copy back to the
//! host); `PickRule::pick` is the host implementation and the reference every backend matches.
//!
//! The draw, exactly:
//! 1. `max` = the largest logit. Temperature <= 0 picks the largest logit (lowest id on a tie).
//! 2. Each token's weight is `exp((logit - max) / temperature)` in f32; a token is a candidate
//!    when its weight is > 0 and >= `min_p` (the best token's weight is exactly 1).
//! 3. `top_k` > 0 keeps the `top_k` candidates of largest weight (lower id first on a tie).
//! 4. `top_p` < 1 orders the remaining candidates by weight (lower id first on a tie) and keeps
//!    the shortest prefix whose f64 mass reaches `top_p` times their f64 total.
//! 5. `r = u * (f64 total of the kept weights)`; walking the kept tokens in id order and
//!    subtracting each weight, the first token that takes `r` below zero is the pick (the last
//!    kept token if rounding leaves `r` >= 0).
//!
//! Walking in id order (not weight order) is what lets a GPU draw with one prefix sum over the
//! vocabulary once it knows which tokens are kept; the distribution is the same either way.

/// One token choice. `u` is the draw's uniform number in [0, 1) (unused when greedy).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PickRule {
    /// <= 0: greedy.
    pub temperature: f32,
    /// 0: off.
    pub top_k: u32,
    /// >= 1: off.
    pub top_p: f32,
    /// 0: off.
    pub min_p: f32,
    pub u: f64,
}

/// When only top-p is set, the nucleus is almost always inside the few hundred most likely
/// tokens; selecting those first avoids sorting the whole 248K vocabulary every step.
const NUCLEUS_PRESELECT: usize = 1024;

impl PickRule {
    pub const GREEDY: PickRule = PickRule {
        temperature: 0.0,
        top_k: 0,
        top_p: 1.0,
        min_p: 0.0,
        u: 0.0,
    };

    pub fn is_greedy(&self) -> bool {
        self.temperature <= 0.0
    }

    /// The pick under this rule. `scratch` is reused between calls to avoid a vocabulary-sized
    /// allocation per token.
    pub fn pick(&self, logits: &[f32], scratch: &mut Vec<f32>) -> u32 {
        if self.is_greedy() {
            return argmax(logits);
        }
        self.weights(logits, scratch);
        let drawn = if self.top_k > 0 || self.top_p < 1.0 {
            let mut kept = self.keep_top(scratch);
            kept.sort_unstable_by_key(|c| c.0);
            draw(self.u, kept.iter().copied())
        } else {
            draw(self.u, scratch.iter().enumerate().filter(|(_, &w)| w > 0.0).map(|(i, &w)| (i as u32, w)))
        };
        drawn.unwrap_or_else(|| argmax(logits))
    }

    /// Step 2: each token's weight, 0 where it is not a candidate, into `out`. Not for greedy
    /// rules (their temperature is not a divisor).
    pub fn weights(&self, logits: &[f32], out: &mut Vec<f32>) {
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let (inv_t, min_p) = (1.0 / self.temperature, self.min_p);
        out.clear();
        out.extend(logits.iter().map(|&x| {
            let w = ((x - max) * inv_t).exp();
            if w > 0.0 && w >= min_p {
                w
            } else {
                0.0
            }
        }));
    }

    /// The candidates top-k and top-p keep (steps 3 and 4), in no particular order.
    fn keep_top(&self, weights: &[f32]) -> Vec<(u32, f32)> {
        let mut c: Vec<(u32, f32)> = weights
            .iter()
            .enumerate()
            .filter(|(_, &w)| w > 0.0)
            .map(|(i, &w)| (i as u32, w))
            .collect();
        let by_weight = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        let k = self.top_k as usize;
        if k > 0 && c.len() > k {
            c.select_nth_unstable_by(k - 1, by_weight);
            c.truncate(k);
        }
        if self.top_p < 1.0 {
            let target = self.top_p as f64 * c.iter().map(|c| c.1 as f64).sum::<f64>();
            if c.len() > NUCLEUS_PRESELECT {
                // If the head falls short, the full sort below orders by a total order (weight,
                // then id), so the permutation select leaves does not matter.
                c.select_nth_unstable_by(NUCLEUS_PRESELECT - 1, by_weight);
                let head: f64 = c[..NUCLEUS_PRESELECT].iter().map(|c| c.1 as f64).sum();
                if head >= target {
                    c.truncate(NUCLEUS_PRESELECT);
                }
            }
            c.sort_unstable_by(by_weight);
            let mut mass = 0.0f64;
            if let Some(end) = c.iter().position(|x| {
                mass += x.1 as f64;
                mass >= target
            }) {
                c.truncate(end + 1);
            }
        }
        c
    }
}

/// Step 5 over `kept` (token, weight) in id order: the token whose weight takes `u` times the
/// f64 total below zero, the last one if rounding never does, `None` if nothing is kept.
fn draw(u: f64, kept: impl Iterator<Item = (u32, f32)> + Clone) -> Option<u32> {
    let total: f64 = kept.clone().map(|c| c.1 as f64).sum();
    let mut r = u * total;
    let mut last = None;
    for (i, w) in kept {
        r -= w as f64;
        if r < 0.0 {
            return Some(i);
        }
        last = Some(i);
    }
    last
}

/// Index of the largest logit; the lowest index wins a tie so that greedy output is
/// deterministic across backends. NaNs are never picked over a number.
pub fn argmax(logits: &[f32]) -> u32 {
    let mut best = 0;
    for (i, &x) in logits.iter().enumerate() {
        if x > logits[best] || logits[best].is_nan() && !x.is_nan() {
            best = i;
        }
    }
    best as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(temperature: f32) -> PickRule {
        PickRule {
            temperature,
            ..PickRule::GREEDY
        }
    }

    /// Every kept token reached, nothing else, over a sweep of `u`.
    fn reachable(r: PickRule, logits: &[f32]) -> Vec<bool> {
        let mut seen = vec![false; logits.len()];
        let mut scratch = Vec::new();
        for i in 0..1000 {
            seen[PickRule {
                u: i as f64 / 1000.0,
                ..r
            }
            .pick(logits, &mut scratch) as usize] = true;
        }
        seen
    }

    #[test]
    fn greedy_takes_the_lowest_id_of_the_largest_logit() {
        let mut s = Vec::new();
        assert_eq!(PickRule::GREEDY.pick(&[0.0, 3.0, 1.0, 3.0], &mut s), 1);
        assert_eq!(argmax(&[f32::NAN, 1.0, 2.0]), 2);
    }

    #[test]
    fn top_k_top_p_and_min_p_restrict_the_draw() {
        let logits = [5.0, 4.9, 3.0, -1.0, 4.8];
        let t = rule(1.0);
        assert_eq!(
            reachable(PickRule { top_k: 2, ..t }, &logits),
            [true, true, false, false, false]
        );
        assert_eq!(
            reachable(PickRule { min_p: 0.5, ..t }, &logits),
            [true, true, false, false, true]
        );
        // Tokens 0 and 1 hold more than half the mass: top_p 0.5 keeps just them.
        assert_eq!(
            reachable(PickRule { top_p: 0.5, ..t }, &logits),
            [true, true, false, false, false]
        );
        assert!(
            reachable(t, &logits)[2],
            "token 2 is reachable without filters"
        );
    }

    #[test]
    fn the_draw_walks_the_kept_tokens_in_id_order() {
        // Weights 1, 1, 1, 1 (equal logits): u in [i/4, (i+1)/4) picks token i.
        let logits = [2.0; 4];
        let mut s = Vec::new();
        for (u, want) in [(0.0, 0), (0.26, 1), (0.51, 2), (0.99, 3)] {
            assert_eq!(PickRule { u, ..rule(1.0) }.pick(&logits, &mut s), want);
        }
        // top_k 2 on a tie keeps the lower ids.
        assert_eq!(
            PickRule {
                u: 0.99,
                top_k: 2,
                ..rule(1.0)
            }
            .pick(&logits, &mut s),
            1
        );
    }

    /// Nucleus sampling written out plainly: every weight, one full sort, the cut, an id-order
    /// walk.
    fn nucleus_reference(logits: &[f32], temperature: f32, top_p: f32, u: f64) -> u32 {
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mut c: Vec<(u32, f32)> = logits
            .iter()
            .enumerate()
            .map(|(i, &x)| (i as u32, ((x - max) * (1.0 / temperature)).exp()))
            .filter(|c| c.1 > 0.0)
            .collect();
        let target = top_p as f64 * c.iter().map(|c| c.1 as f64).sum::<f64>();
        c.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut mass = 0.0;
        let keep = c.iter().position(|x| {
            mass += x.1 as f64;
            mass >= target
        });
        c.truncate(keep.map_or(c.len(), |k| k + 1));
        c.sort_unstable_by_key(|x| x.0);
        let mut r = u * c.iter().map(|x| x.1 as f64).sum::<f64>();
        for &(token, w) in &c {
            r -= w as f64;
            if r < 0.0 {
                return token;
            }
        }
        c.last().unwrap().0
    }

    #[test]
    fn the_preselected_nucleus_equals_a_full_sort() {
        // More tokens than the preselection holds; a flat tail so that at high top_p the
        // nucleus does not fit in the preselected head and the full sort is taken.
        let logits: Vec<f32> = (0..5000)
            .map(|i| ((i * 7919) % 409) as f32 * 0.011)
            .collect();
        let mut s = Vec::new();
        for (temperature, top_p) in [(1.0, 0.9), (0.7, 0.5), (0.3, 0.95), (1.0, 0.999)] {
            for i in 0..30 {
                let u = (i as f64 * 0.618_033_988_7).fract();
                let r = PickRule {
                    temperature,
                    top_p,
                    u,
                    ..PickRule::GREEDY
                };
                assert_eq!(
                    r.pick(&logits, &mut s),
                    nucleus_reference(&logits, temperature, top_p, u),
                    "temperature {temperature}, top_p {top_p}, u {u}"
                );
            }
        }
    }
}
