// One draw under a PickRule on the GPU, and the end of a decode step. Needs: nothing but the
// common header.
//
// A pick is left in `best` as an argmax key (common.cuh: argmax_key): the largest value wins and
// the lowest index a tie (the same rule as the engine's CPU argmax). lm_head leaves the argmax of
// the logits there (gemv.cu: lm_head_normed with `best`): a greedy rule's pick, and a draw's
// max, which the draw then replaces with its pick; the draw kernels return at once on a greedy
// rule.

// The rule the host writes (sampling.rs::rule_bytes encodes it, 24 bytes) and each step's
// finish_step moves to the next draw of its stream.
struct PickRuleDev {
    float temperature;  // <= 0: greedy
    int top_k;          // 0: off
    float top_p;        // >= 1: off
    float min_p;        // 0: off
    u64 draw;           // the SplitMix64 state of the draw (crates/model/src/pick.rs)
};

// NaN is not greedy (as on the host), so exactly one of lm_head and the draw writes `best`.
__device__ __forceinline__ bool rule_is_greedy(const PickRuleDev* r) { return r->temperature <= 0.f; }

// SplitMix64's output (pick.rs: draw_mix).
__device__ __forceinline__ u64 draw_mix(u64 z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Ends a step: the picked token becomes the next input unless the next position already holds
// a prompt token; the position advances; the argmax cell is cleared for the next step. The pick
// also goes to host memory, picked[(p + 1) % 2] = (p + 1) << 32 | token (mapped: no copy and no
// event between this step and the next in the stream; the host polls for the position tag, and
// the two slots keep a step run ahead from overwriting the one the host reads). One 8-byte
// store: the tag and the token arrive together, so no fence orders them.
// A drawn rule moves to its stream's next draw (pick.rs: PickRule::advanced), the number the
// host's rule for the next token holds: a step run ahead draws what the host would ask for.
extern "C" __global__ void finish_step(u64* best, int* ids, int* pos, const int* prompt_end, u64* picked,
                                       PickRuleDev* rule) {
    pdl_launch_next();
    pdl_wait();
    const int p = *pos;
    const int token = (int)(0xffffffffu - (unsigned)(*best & 0xffffffffu));
    if (p + 1 >= *prompt_end) ids[p + 1] = token;
    *pos = p + 1;
    *best = 0;
    picked[(p + 1) & 1] = (u64)(unsigned)(p + 1) << 32 | (unsigned)token;
    if (!rule_is_greedy(rule)) {
        rule->draw = __ldcg(&rule->draw) + 0x9E3779B97F4A7C15ull;
    }
}

// ---- One draw under a PickRule, entirely on the GPU ----
//
// Reproduces PickRule::pick (crates/model/src/pick.rs) for a rule the host writes into device
// memory before each replay of the captured step. The host launches these for a rule that
// draws, with the select passes of the cuts the rule makes only (sampling.rs: PickPath); each
// returns at once on a greedy rule, so a launch that does not match the rule in memory writes
// nothing.
//
// The top-k and top-p cuts are prefixes of the candidates ordered by (weight desc, id asc). A
// prefix is stored as a threshold: token i is inside when bits(w_i) > tau, or bits(w_i) == tau
// and i <= cut (positive floats order like their bit patterns). Each threshold is found by a
// radix select over the 30 meaningful bits of the weight (w <= 1), 10 bits per pass, with a
// histogram of counts (top-k) or of masses (top-p). Masses are summed as 44-bit fixed point in
// 64-bit integers, so the atomics that build the histograms give the same sums in any order.

#define SAMPLE_CHUNK 1024
#define SAMPLE_THREADS 256
#define SAMPLE_BINS 1024
#define SAMPLE_DIGIT_BITS 10
#define MASS_SCALE 17592186044416.0

// One cut (s = 0: top-k, s = 1: top-p) and the radix select's progress towards it.
struct Selection {
    unsigned prefix;  // the weight bits decided by the passes so far
    int active;       // 0: the cut keeps every candidate
    double goal;      // what is still to be covered: a count (top-k) or a fixed-point mass (top-p)
    unsigned tau;     // the threshold once found; 0 with cut -1 keeps every candidate
    int cut;
};

struct SampleState {
    Selection sel[2];
    unsigned done;  // blocks finished in the current launch (the last one finishes the pass)
    unsigned pad;
};
static_assert(sizeof(SampleState) <= 64, "the scratch layout reserves 64 bytes for the state");

// The scratch layout; `sampling.rs::scratch_bytes` mirrors it.
struct SampleScratch {
    SampleState* st;
    u64* hist_mass;       // [SAMPLE_BINS]
    unsigned* hist_count; // [SAMPLE_BINS]
    double* block_sum;    // [blocks]: each block's f64 sum of kept weights
    unsigned* block_bins; // [blocks][SAMPLE_BINS]: per-block counts of a select's last pass
    float* w;             // [n]: weights, 0 for a token that is not a candidate
};

__device__ __forceinline__ SampleScratch sample_scratch(void* base, int n) {
    const int blocks = (n + SAMPLE_CHUNK - 1) / SAMPLE_CHUNK;
    char* p = (char*)base;
    SampleScratch s;
    s.st = (SampleState*)p;
    p += 64;
    s.hist_mass = (u64*)p;
    p += 8 * SAMPLE_BINS;
    s.hist_count = (unsigned*)p;
    p += 4 * SAMPLE_BINS;
    s.block_sum = (double*)p;
    p += 8 * blocks;
    s.block_bins = (unsigned*)p;
    p += 4 * SAMPLE_BINS * blocks;
    s.w = (float*)p;
    return s;
}

// Exact conversions: the kernels are compiled with fast math (-ftz), whose cvt would flush
// subnormal weights to zero; the host keeps them.
__device__ __forceinline__ float d2f_exact(double d) {
    float f;
    asm("cvt.rn.f32.f64 %0, %1;" : "=f"(f) : "d"(d));
    return f;
}
__device__ __forceinline__ double f2d_exact(float f) {
    double d;
    asm("cvt.f64.f32 %0, %1;" : "=d"(d) : "f"(f));
    return d;
}

__device__ __forceinline__ u64 mass_fixed(unsigned bits) {
    return (u64)__double2ll_rn(f2d_exact(__uint_as_float(bits)) * MASS_SCALE);
}

__device__ __forceinline__ float key_value(u64 key) {
    const unsigned hi = (unsigned)(key >> 32);
    return __uint_as_float((hi & 0x80000000u) ? (hi & 0x7fffffffu) : ~hi);
}

__device__ __forceinline__ bool inside(const Selection& s, unsigned bits, int i) {
    return bits > s.tau || (bits == s.tau && i <= s.cut);
}

// Whether token i (weight bits `bits`) is counted by pass `digit` of selection `s`: a candidate,
// inside the top-k cut when selecting top-p, and matching the bits decided so far.
__device__ __forceinline__ bool in_pass(const SampleState& st, int s, int digit, unsigned bits, int i) {
    if (bits == 0) return false;
    if (s == 1 && !inside(st.sel[0], bits, i)) return false;
    const int above = 30 - SAMPLE_DIGIT_BITS * digit;  // bits at or above this are decided
    return digit == 0 || (bits >> above) == (st.sel[s].prefix >> above);
}

// Fixed-order f64 block sum (deterministic); every thread gets it. `shared8` holds 8 doubles.
__device__ double block_sum_f64(double v, double* shared8) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    __syncthreads();
    if ((threadIdx.x & 31) == 0) shared8[threadIdx.x >> 5] = v;
    __syncthreads();
    double t = 0.0;
    for (int w = 0; w < SAMPLE_THREADS / 32; w++) t += shared8[w];
    return t;
}

// After a block's share of a launch is written: true in the one block that finishes last, which
// then sees every other block's writes.
__device__ bool last_block(unsigned* done) {
    __shared__ int is_last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) is_last = atomicAdd(done, 1u) == gridDim.x - 1;
    __syncthreads();
    if (is_last) __threadfence();
    return is_last;
}

// Step 1: the weights exp((x - max) / T) exactly as the host rounds them (f32 difference and
// product, then exp evaluated in f64 and rounded once: CUDA's expf may be 2 ulp off), with the
// min-p filter; max is the argmax key lm_head left in `best`. Block 0 resets the selection
// state and the histogram.
extern "C" __global__ void __launch_bounds__(SAMPLE_THREADS)
sample_weights(const float* __restrict__ logits, int n, const PickRuleDev* rule, void* scratch,
               const u64* best) {
    pdl_launch_next();
    pdl_wait();
    if (rule_is_greedy(rule)) return;
    const SampleScratch s = sample_scratch(scratch, n);
    const u64 best_key = __ldcg(best);
    // No number at all: the host's max stays -inf and every weight comes out NaN, not kept.
    const float max = best_key ? key_value(best_key) : -INFINITY;
    const float inv_t = __frcp_rn(rule->temperature);
    const double min_p = f2d_exact(rule->min_p);
    for (int j = threadIdx.x; j < SAMPLE_CHUNK; j += SAMPLE_THREADS) {
        const int i = blockIdx.x * SAMPLE_CHUNK + j;
        if (i < n) {
            const float z = __fmul_rn(__fsub_rn(logits[i], max), inv_t);
            const double e = exp(f2d_exact(z));
            const float w = d2f_exact(e);
            const double wd = f2d_exact(w);
            s.w[i] = (wd > 0.0 && wd >= min_p) ? w : 0.f;
        }
    }
    if (blockIdx.x == 0) {
        for (int b = threadIdx.x; b < SAMPLE_BINS; b += SAMPLE_THREADS) {
            s.hist_mass[b] = 0;
            s.hist_count[b] = 0;
        }
        if (threadIdx.x == 0) {
            SampleState* st = s.st;
            const Selection none = {0u, 0, 0.0, 0u, -1};
            st->sel[0] = none;
            st->sel[0].active = rule->top_k > 0;
            st->sel[0].goal = (double)rule->top_k;
            st->sel[1] = none;
            st->sel[1].active = rule->top_p < 1.f;
            st->done = 0;
        }
    }
}

// The first bin (in descending bin order) holding a token and taking the covered amount to
// `goal`: a count when by_mass is false, else a fixed-point mass. Run by one full warp. Returns
// the bin (-1 if none) and what the bins before it hold.
__device__ int find_bin(const unsigned* count, const u64* mass, bool by_mass, double goal,
                        u64* before_count, u64* before_mass) {
    const int lane = threadIdx.x & 31;
    const int hi = SAMPLE_BINS - 1 - 32 * lane;  // this lane's bins: hi, hi - 1, ..., hi - 31
    u64 c = 0, m = 0;
    for (int j = 0; j < 32; j++) {
        c += count[hi - j];
        m += mass[hi - j];
    }
    u64 c_inc = c, m_inc = m;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const u64 c_up = __shfl_up_sync(0xffffffffu, c_inc, o);
        const u64 m_up = __shfl_up_sync(0xffffffffu, m_inc, o);
        if (lane >= o) {
            c_inc += c_up;
            m_inc += m_up;
        }
    }
    u64 rc = c_inc - c, rm = m_inc - m;
    int found = -1;
    u64 fc = 0, fm = 0;
    for (int j = 0; j < 32; j++) {
        const int b = hi - j;
        const unsigned cb = count[b];
        const u64 mb = mass[b];
        const double through = by_mass ? (double)(rm + mb) : (double)(rc + cb);
        if (cb > 0 && through >= goal) {
            found = b;
            fc = rc;
            fm = rm;
            break;
        }
        rc += cb;
        rm += mb;
    }
    const unsigned hits = __ballot_sync(0xffffffffu, found >= 0);
    if (!hits) return -1;
    const int src = __ffs(hits) - 1;
    *before_count = __shfl_sync(0xffffffffu, fc, src);
    *before_mass = __shfl_sync(0xffffffffu, fm, src);
    return __shfl_sync(0xffffffffu, found, src);
}

// Step 2, launched three times for each cut the rule makes: pass = 3 * s + digit, s = 0 for
// top-k and 1 for top-p, digit 0..2 for weight bits 29..20, 19..10, 9..0. Each launch histograms
// its digit over the tokens still in play; the last block to finish picks the bin, and after the
// third digit finds the tie cut.
extern "C" __global__ void __launch_bounds__(SAMPLE_THREADS)
sample_select(int n, const PickRuleDev* rule, void* scratch, int pass) {
    pdl_launch_next();
    pdl_wait();
    if (rule_is_greedy(rule)) return;
    const SampleScratch s = sample_scratch(scratch, n);
    const int sel = pass / 3, digit = pass % 3;
    const int shift = 30 - SAMPLE_DIGIT_BITS * (digit + 1);
    const bool last_digit = digit == 2;
    const SampleState st = *s.st;
    if (!st.sel[sel].active) return;

    __shared__ unsigned count[SAMPLE_BINS];
    __shared__ u64 mass[SAMPLE_BINS];
    for (int b = threadIdx.x; b < SAMPLE_BINS; b += SAMPLE_THREADS) {
        count[b] = 0;
        mass[b] = 0;
    }
    __syncthreads();
    for (int j = threadIdx.x; j < SAMPLE_CHUNK; j += SAMPLE_THREADS) {
        const int i = blockIdx.x * SAMPLE_CHUNK + j;
        if (i >= n) break;
        const unsigned bits = __float_as_uint(s.w[i]);
        if (in_pass(st, sel, digit, bits, i)) {
            const int b = (bits >> shift) & (SAMPLE_BINS - 1);
            atomicAdd(&count[b], 1u);
            if (sel == 1) atomicAdd(&mass[b], mass_fixed(bits));
        }
    }
    __syncthreads();
    for (int b = threadIdx.x; b < SAMPLE_BINS; b += SAMPLE_THREADS) {
        if (count[b]) {
            atomicAdd(&s.hist_count[b], count[b]);
            if (sel == 1) atomicAdd(&s.hist_mass[b], mass[b]);
        }
        if (last_digit) s.block_bins[blockIdx.x * SAMPLE_BINS + b] = count[b];
    }
    if (!last_block(&s.st->done)) return;

    // The last block: the global histogram is complete.
    __shared__ Selection out;
    __shared__ int tie_block, tie_rank;
    const volatile unsigned* hc = s.hist_count;
    const volatile u64* hm = s.hist_mass;
    for (int b = threadIdx.x; b < SAMPLE_BINS; b += SAMPLE_THREADS) {
        count[b] = hc[b];
        mass[b] = hm[b];
    }
    __syncthreads();
    if (threadIdx.x < 32) {
        Selection x = st.sel[sel];
        bool done = false;
        if (digit == 0) {
            u64 c = 0, m = 0;
            for (int b = threadIdx.x; b < SAMPLE_BINS; b += 32) {
                c += count[b];
                m += mass[b];
            }
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) {
                c += __shfl_xor_sync(0xffffffffu, c, o);
                m += __shfl_xor_sync(0xffffffffu, m, o);
            }
            // top-k: no cut when there are no more candidates than k. top-p: the target is
            // top_p times the mass of the tokens in play (the top-k cut's, or every candidate).
            if (sel == 0 && c <= (u64)rule->top_k) {
                x.active = 0;
                done = true;
            }
            if (sel == 1) x.goal = (double)rule->top_p * (double)m;
        }
        if (!done) {
            u64 bc = 0, bm = 0;
            const int b = find_bin(count, mass, sel == 1, x.goal, &bc, &bm);
            if (b < 0) {
                x.active = 0;  // nothing in play (no candidate at all): nothing to cut
                done = true;
            } else {
                x.prefix |= (unsigned)b << shift;
                x.goal -= sel == 1 ? (double)bm : (double)bc;
                if (last_digit) {
                    // How many tokens of weight tau (in id order) the cut takes.
                    x.tau = x.prefix;
                    double take = x.goal;
                    if (sel == 1) {
                        const double m = (double)mass_fixed(x.tau);
                        take = x.goal <= 0.0 || m <= 0.0 ? 1.0 : ceil(x.goal / m);
                    }
                    const unsigned have = count[b];
                    unsigned k = take < 1.0 ? 1u : take > (double)have ? have : (unsigned)take;
                    // Taking every token of weight tau needs no position: the usual case, as
                    // exact ties of weights are rare. Otherwise the block holding the k-th such
                    // token, in block order.
                    if (k == have) {
                        x.cut = 0x7fffffff;
                        k = 0;
                    }
                    const int blocks = k == 0 ? 0 : gridDim.x;
                    const volatile unsigned* bins = s.block_bins;
                    int found = -1;
                    unsigned rank = 0;
                    unsigned seen = 0;
                    for (int base = 0; base < blocks && found < 0; base += 32) {
                        const int blk = base + (int)threadIdx.x;
                        const unsigned c = blk < blocks ? bins[blk * SAMPLE_BINS + b] : 0u;
                        unsigned inc = c;
#pragma unroll
                        for (int o = 1; o < 32; o <<= 1) {
                            const unsigned up = __shfl_up_sync(0xffffffffu, inc, o);
                            if ((int)threadIdx.x >= o) inc += up;
                        }
                        const bool hit = seen + inc >= k && seen + inc - c < k;
                        const unsigned hits = __ballot_sync(0xffffffffu, hit);
                        if (hits) {
                            const int src = __ffs(hits) - 1;
                            found = base + src;
                            rank = k - seen - (__shfl_sync(0xffffffffu, inc, src) -
                                               __shfl_sync(0xffffffffu, c, src));
                        }
                        seen += __shfl_sync(0xffffffffu, inc, 31);
                    }
                    if (threadIdx.x == 0) {
                        tie_block = found;
                        tie_rank = (int)rank;
                    }
                }
            }
        }
        if (threadIdx.x == 0) {
            out = x;
            if (done || !last_digit) tie_block = -1;
        }
    }
    __syncthreads();
    if (last_digit && tie_block >= 0) {
        // The tie_rank-th token of weight tau in block tie_block (1-based, id order) is the cut.
        __shared__ unsigned warp_n[SAMPLE_THREADS / 32];
        __shared__ int cut;
        SampleState cur = st;
        cur.sel[sel].prefix = out.tau;
        const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
        if (threadIdx.x == 0) cut = -1;
        int base = 0;
        for (int j0 = 0; j0 < SAMPLE_CHUNK; j0 += SAMPLE_THREADS) {
            const int i = tie_block * SAMPLE_CHUNK + j0 + threadIdx.x;
            const unsigned bits = i < n ? __float_as_uint(s.w[i]) : 0u;
            const bool f = i < n && bits == out.tau && in_pass(cur, sel, digit, bits, i);
            const unsigned m = __ballot_sync(0xffffffffu, f);
            if (lane == 0) warp_n[warp] = __popc(m);
            __syncthreads();
            int before = base, total = 0;
            for (int w = 0; w < SAMPLE_THREADS / 32; w++) {
                if (w < warp) before += warp_n[w];
                total += warp_n[w];
            }
            if (f && before + __popc(m & ((1u << lane) - 1u)) + 1 == tie_rank) cut = i;
            base += total;
            __syncthreads();
        }
        if (threadIdx.x == 0) out.cut = cut;
        __syncthreads();
    }
    // Leave the histogram and the counter clean for the next launch.
    for (int b = threadIdx.x; b < SAMPLE_BINS; b += SAMPLE_THREADS) {
        s.hist_count[b] = 0;
        s.hist_mass[b] = 0;
    }
    if (threadIdx.x == 0) {
        s.st->sel[sel] = out;
        s.st->done = 0;
    }
}

__device__ __forceinline__ bool kept(const SampleState& st, unsigned bits, int i) {
    return bits != 0 && inside(st.sel[0], bits, i) && inside(st.sel[1], bits, i);
}

// Step 3: r = u * (f64 total of the kept weights); the first kept token (in id order) whose
// running sum exceeds r is the pick. Blocks sum their chunks; the last block finds the chunk where
// r is crossed and the token inside it, and writes the pick to `best` as an argmax key.
extern "C" __global__ void __launch_bounds__(SAMPLE_THREADS)
sample_draw(const float* __restrict__ logits, int n, const PickRuleDev* rule, void* scratch,
            u64* best) {
    pdl_launch_next();
    pdl_wait();
    if (rule_is_greedy(rule)) return;
    const SampleScratch s = sample_scratch(scratch, n);
    const SampleState st = *s.st;
    const int blocks = gridDim.x;
    __shared__ double part[SAMPLE_THREADS / 32];
    // Thread t holds 4 consecutive tokens, so that the last block's scan below is in id order.
    double sum = 0.0;
    for (int j = 0; j < 4; j++) {
        const int i = blockIdx.x * SAMPLE_CHUNK + 4 * threadIdx.x + j;
        const unsigned bits = i < n ? __float_as_uint(s.w[i]) : 0u;
        if (kept(st, bits, i)) sum += f2d_exact(__uint_as_float(bits));
    }
    const double block_total = block_sum_f64(sum, part);
    if (threadIdx.x == 0) s.block_sum[blockIdx.x] = block_total;
    if (!last_block(&s.st->done)) return;

    __shared__ int pick_block;
    __shared__ double pick_r;
    if (threadIdx.x < 32) {
        const int lane = threadIdx.x;
        const int per = (blocks + 31) / 32;
        const int b0 = lane * per, b1 = min(blocks, b0 + per);
        const volatile double* bs = s.block_sum;
        double mine = 0.0;
        for (int b = b0; b < b1; b++) mine += bs[b];
        double inc = mine;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const double up = __shfl_up_sync(0xffffffffu, inc, o);
            if (lane >= o) inc += up;
        }
        const double total = __shfl_sync(0xffffffffu, inc, 31);
        // The draw's uniform number in [0, 1), the top 53 bits of mix(draw) (pick.rs:
        // PickRule::u); the state read at L2: the previous step's finish_step wrote it.
        const double u = (double)(draw_mix(__ldcg(&rule->draw)) >> 11) * 0x1p-53;
        const double r = u * total;
        double run = __shfl_up_sync(0xffffffffu, inc, 1);
        if (lane == 0) run = 0.0;
        int found = -1;
        double found_r = 0.0;
        int last_nonzero = -1;
        for (int b = b0; b < b1; b++) {
            const double v = bs[b];
            if (v > 0.0) last_nonzero = b;
            if (found < 0 && v > 0.0 && run + v > r) {
                found = b;
                found_r = r - run;
            }
            run += v;
        }
        const unsigned hits = __ballot_sync(0xffffffffu, found >= 0);
        int last = last_nonzero;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) last = max(last, __shfl_xor_sync(0xffffffffu, last, o));
        if (lane == 0) {
            pick_block = -1;
            pick_r = 0.0;
        }
        if (hits) {
            const int src = __ffs(hits) - 1;
            const int fb = __shfl_sync(0xffffffffu, found, src);
            const double fr = __shfl_sync(0xffffffffu, found_r, src);
            if (lane == 0) {
                pick_block = fb;
                pick_r = fr;
            }
        } else if (lane == 0 && last >= 0) {
            // Rounding left r at or past the total: the last kept token.
            pick_block = last;
            pick_r = INFINITY;
        }
    }
    __syncthreads();
    if (pick_block < 0) {
        // Nothing kept (no finite weight): the host falls back to the argmax of the logits,
        // which lm_head left in `best` (0 when every logit is NaN: the host's argmax is then 0).
        if (threadIdx.x == 0) {
            if (*best == 0) *best = argmax_key(logits[0], 0);
            s.st->done = 0;
        }
        return;
    }
    // Scan the chosen chunk in id order.
    __shared__ int found_id, last_id;
    if (threadIdx.x == 0) {
        found_id = 0x7fffffff;
        last_id = -1;
    }
    // Kept weights as f64 (0 where not kept; a kept weight is never 0).
    double cw[4];
    double tsum = 0.0;
    const int i0 = pick_block * SAMPLE_CHUNK + 4 * threadIdx.x;
    for (int j = 0; j < 4; j++) {
        const int i = i0 + j;
        const unsigned bits = i < n ? __float_as_uint(s.w[i]) : 0u;
        cw[j] = kept(st, bits, i) ? f2d_exact(__uint_as_float(bits)) : 0.0;
        tsum += cw[j];
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    double inc = tsum;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const double up = __shfl_up_sync(0xffffffffu, inc, o);
        if (lane >= o) inc += up;
    }
    __syncthreads();
    if (lane == 31) part[warp] = inc;
    __syncthreads();
    double run = 0.0;
    for (int q = 0; q < warp; q++) run += part[q];
    const double before = __shfl_up_sync(0xffffffffu, inc, 1);
    if (lane > 0) run += before;
    const double r = pick_r;
    int mine = 0x7fffffff, mine_last = -1;
    for (int j = 0; j < 4; j++) {
        if (cw[j] > 0.0) {
            run += cw[j];
            mine_last = i0 + j;
            if (mine == 0x7fffffff && run > r) mine = i0 + j;
        }
    }
    if (mine != 0x7fffffff) atomicMin(&found_id, mine);
    if (mine_last >= 0) atomicMax(&last_id, mine_last);
    __syncthreads();
    if (threadIdx.x == 0) {
        const int t = found_id != 0x7fffffff ? found_id : last_id;
        *best = argmax_key(logits[t], t);
        s.st->done = 0;
    }
}
