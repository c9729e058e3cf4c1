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

/// One token choice. A draw's uniform number comes from `draw`, its state in a SplitMix64
/// stream (`u`); the next token's draw is the state one `DRAW_STEP` further (`advanced`). The
/// stream is counter-based, so a backend that holds this token's rule knows the next token's
/// before the caller asks for it, and can run that step ahead (the GPU does).
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
    /// The draw's SplitMix64 state (unused when greedy).
    pub draw: u64,
}

/// SplitMix64's increment: one draw's state to the next's.
pub const DRAW_STEP: u64 = 0x9E37_79B9_7F4A_7C15;
const MIX_1: u64 = 0xBF58_476D_1CE4_E5B9;
const MIX_2: u64 = 0x94D0_49BB_1331_11EB;

/// SplitMix64's output for a state.
pub fn draw_mix(state: u64) -> u64 {
    let mut z = state;
    z = (z ^ (z >> 30)).wrapping_mul(MIX_1);
    z = (z ^ (z >> 27)).wrapping_mul(MIX_2);
    z ^ (z >> 31)
}

/// The state whose output is `z` (`draw_mix` is a bijection: xor-shifts and odd multipliers).
fn draw_unmix(z: u64) -> u64 {
    let unshift = |x: u64, s: u32| (0..64 / s).fold(x, |y, _| x ^ (y >> s));
    // Newton's iteration for the inverse mod 2^64 doubles the correct low bits from 3 (an odd
    // number is its own inverse mod 8).
    let inverse = |m: u64| (0..5).fold(m, |i, _| i.wrapping_mul(2u64.wrapping_sub(m.wrapping_mul(i))));
    let mut x = unshift(z, 31).wrapping_mul(inverse(MIX_2));
    x = unshift(x, 27).wrapping_mul(inverse(MIX_1));
    unshift(x, 30)
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
        draw: 0,
    };

    pub fn is_greedy(&self) -> bool {
        self.temperature <= 0.0
    }

    /// The draw's uniform number in [0, 1): the top 53 bits of the state's output.
    pub fn u(&self) -> f64 {
        (draw_mix(self.draw) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// This rule `steps` tokens later in its stream (a greedy rule draws nothing: itself).
    pub fn advanced(&self, steps: i64) -> PickRule {
        if self.is_greedy() {
            return *self;
        }
        PickRule {
            draw: self.draw.wrapping_add(DRAW_STEP.wrapping_mul(steps as u64)),
            ..*self
        }
    }

    /// A state whose draw takes `u` (in [0, 1), rounded down to 53 bits): for a caller that
    /// needs a given number rather than the next of a stream.
    pub fn draw_for(u: f64) -> u64 {
        let bits = ((u.clamp(0.0, 1.0) * (1u64 << 53) as f64) as u64).min((1u64 << 53) - 1);
        draw_unmix(bits << 11)
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
            draw(self.u(), kept.iter().copied())
        } else {
            draw(self.u(), scratch.iter().enumerate().filter(|(_, &w)| w > 0.0).map(|(i, &w)| (i as u32, w)))
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
                draw: PickRule::draw_for(i as f64 / 1000.0),
                ..r
            }
            .pick(logits, &mut scratch) as usize] = true;
        }
        seen
    }

    /// The stream is SplitMix64's (seeded runs repeat the numbers of earlier versions), a
    /// rule advanced by n draws the n-th next number, and draw_for finds a state for a number.
    #[test]
    fn draws_follow_the_splitmix64_stream() {
        // SplitMix64 from seed 0: the published first outputs.
        assert_eq!(draw_mix(DRAW_STEP), 0xE220_A839_7B1D_CDAF);
        assert_eq!(draw_mix(DRAW_STEP.wrapping_mul(2)), 0x6E78_9E6A_A1B9_65F4);
        let r = PickRule {
            draw: 12345,
            ..rule(0.8)
        };
        assert_eq!(r.advanced(3).draw, 12345u64.wrapping_add(3u64.wrapping_mul(DRAW_STEP)));
        assert_eq!(r.advanced(3).advanced(-3), r);
        assert_eq!(PickRule::GREEDY.advanced(5), PickRule::GREEDY);
        for z in [0u64, 1, 0xDEAD_BEEF, u64::MAX, DRAW_STEP] {
            assert_eq!(draw_mix(draw_unmix(z)), z);
        }
        for u in [0.0, 0.25, 0.37, 0.999_999, 1.0 - 1.0 / (1u64 << 53) as f64] {
            let got = PickRule {
                draw: PickRule::draw_for(u),
                ..rule(1.0)
            }
            .u();
            assert!(got <= u && u - got < 1e-15, "u {u}: drew {got}");
        }
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
            let draw = PickRule::draw_for(u);
            assert_eq!(PickRule { draw, ..rule(1.0) }.pick(&logits, &mut s), want);
        }
        // top_k 2 on a tie keeps the lower ids.
        assert_eq!(
            PickRule {
                draw: PickRule::draw_for(0.99),
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
                let r = PickRule {
                    temperature,
                    top_p,
                    draw: PickRule::draw_for((i as f64 * 0.618_033_988_7).fract()),
                    ..PickRule::GREEDY
                };
                let u = r.u();
                assert_eq!(
                    r.pick(&logits, &mut s),
                    nucleus_reference(&logits, temperature, top_p, u),
                    "temperature {temperature}, top_p {top_p}, u {u}"
                );
            }
        }
    }
}
