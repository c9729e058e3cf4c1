// Mixture of experts: decode's kernels, and the routing around prefill's expert GEMMs. Needs:
// HIDDEN, NUM_EXPERTS, TOP_K, MOE_INTER, and gemv.cuh included before it (the router is a
// row product with the norm fused).
// Decode, one token: moe_router (router and the shared expert's gate|up; its last block routes),
// moe_gate_up (the routed experts' gate|up and the shared expert's down), moe_down (the routed
// experts' down, summed into the residual). Prefill, a chunk of tokens (below, "Prefill"):
// moe_route_rows, moe_plan and moe_scatter sort the (token, expert) pairs by expert for gemm.cu's
// grouped GEMMs, and moe_combine sums each token's pairs.
// The shared expert is slot TOP_K. It needs no routing, so each of its products runs one launch
// early, where its weights stream before the PDL wait: its gate|up in the router's launch, its
// down in the routed experts' gate|up launch.
// In a model with FP8 weights (WEIGHT_FP8) the experts' and the shared expert's matrices are e4m3
// with block scales (gate|up: [experts][2 * MOE_INTER / W_BLOCK_ROWS][..], gate's then up's;
// down: [experts][HIDDEN / W_BLOCK_ROWS][..]); the router stays bf16.
// Expert ids and weights stay on the GPU: the route kernel writes them, the expert kernels read
// them (from L2, __ldcg: under programmatic dependent launch they are not read-only for the
// reader's lifetime, as the read-only path assumes), and the host never sees them.

#define SLOTS (TOP_K + 1)

// A float's bits as an unsigned that orders like the float (-inf lowest; 0 is below every
// float, so it marks "taken").
__device__ __forceinline__ unsigned order_key(float f) {
    const unsigned u = __float_as_uint(f);
    return u & 0x80000000u ? ~u : u | 0x80000000u;
}
__device__ __forceinline__ float key_float(unsigned k) { return __uint_as_float(k & 0x80000000u ? k & 0x7fffffffu : ~k); }

// Routing by one warp (moe::route): the TOP_K largest logits (lowest index wins a tie), weighted
// by exp(l - l_max) renormalised over the TOP_K; the softmax's total over all experts cancels,
// so only the winners need an exponential. weights[TOP_K] = sigmoid(shared expert gate logit).
// Each lane first sorts its keys (largest first; a stable sort, so the lower expert first on a
// tie), then each round is two warp reductions (redux.sync: the largest head, then the lowest
// expert holding it) and a shift in the winning lane: the rounds are the serial part.
// logits: [router (NUM_EXPERTS) | shared_expert_gate (1)], read past L1 (other blocks wrote them).
__device__ __forceinline__ void route_warp(const float* logits, int* __restrict__ ids, float* __restrict__ weights) {
    constexpr int PER_LANE = (NUM_EXPERTS + 31) / 32;
    const int lane = threadIdx.x & 31;
    unsigned key[PER_LANE];
    int slot[PER_LANE];
#pragma unroll
    for (int j = 0; j < PER_LANE; j++) {
        const int e = lane + 32 * j;
        key[j] = e < NUM_EXPERTS ? order_key(__ldcg(logits + e)) : 0u;
        slot[j] = j;
    }
    // With the others, not after the rounds: the end of the route is the MoE chain's path.
    const float shared_gate = lane == 0 ? __ldcg(logits + NUM_EXPERTS) : 0.f;
    // Odd-even transposition: swaps of strictly smaller keys only, hence stable.
#pragma unroll
    for (int i = 0; i < PER_LANE; i++) {
#pragma unroll
        for (int j = i & 1; j + 1 < PER_LANE; j += 2) {
            if (key[j] < key[j + 1]) {
                const unsigned k = key[j];
                key[j] = key[j + 1];
                key[j + 1] = k;
                const int t = slot[j];
                slot[j] = slot[j + 1];
                slot[j + 1] = t;
            }
        }
    }
    unsigned picked_key[TOP_K];
    int picked_id[TOP_K];
#pragma unroll
    for (int k = 0; k < TOP_K; k++) {
        const unsigned top = __reduce_max_sync(0xffffffffu, key[0]);
        const int mine = lane + 32 * slot[0];
        const int e = (int)__reduce_min_sync(0xffffffffu, key[0] == top ? (unsigned)mine : 0xffffffffu);
        picked_key[k] = top;
        picked_id[k] = e;
        if (e == mine) {
#pragma unroll
            for (int j = 0; j + 1 < PER_LANE; j++) {
                key[j] = key[j + 1];
                slot[j] = slot[j + 1];
            }
            key[PER_LANE - 1] = 0u;
        }
    }
    if (lane == 0) {
        const float top = key_float(picked_key[0]);
        float p[TOP_K], sum = 0.f;
#pragma unroll
        for (int k = 0; k < TOP_K; k++) {
            p[k] = expf(key_float(picked_key[k]) - top);
            sum += p[k];
        }
#pragma unroll
        for (int k = 0; k < TOP_K; k++) {
            ids[k] = picked_id[k];
            weights[k] = p[k] / sum;
        }
        weights[TOP_K] = sigmoid(shared_gate);
    }
}

// The router's blocks, then the shared expert's gate|up blocks (it needs no routing, so its
// weights stream while the previous kernel finishes, off the router -> gate|up chain), which
// also ask L2 for the next layer's first rows.
#define ROUTER_BLOCKS ((NUM_EXPERTS + 1 + ROUTER_WARPS - 1) / ROUTER_WARPS)

// h[slot][r] = silu(gate[r] . x) * (up[r] . x) for a warp's intermediate row r of one expert,
// with the expert's gate|up [2 * MOE_INTER][HIDDEN] at `base` (and its scales at `scale`); xs is
// x staged in shared memory (f16 with FP8 weights). The weights are loaded by
// expert_rows_load, so a caller can issue them early.
#define EXPERT_PER_LANE W_PER_LANE(WEIGHT_FP8, HIDDEN)
#define EXPERT_ROW_BYTES (WEIGHT_FP8 ? HIDDEN : 2 * HIDDEN)
// Floats of one expert's gate|up and down scales.
#define GATE_UP_SCALES (2 * MOE_INTER / W_BLOCK_ROWS * ((HIDDEN + W_BLOCK_COLS - 1) / W_BLOCK_COLS))
#define DOWN_SCALES (HIDDEN / W_BLOCK_ROWS * ((MOE_INTER + W_BLOCK_COLS - 1) / W_BLOCK_COLS))
struct ExpertRows {
    uint4 g[EXPERT_PER_LANE], u[EXPERT_PER_LANE];
    RowScales<WEIGHT_FP8, HIDDEN> sg, su;
};
__device__ __forceinline__ void expert_rows_load(ExpertRows& w, const void* base, const float* scale, int r) {
    const int lane = threadIdx.x & 31;
    const char* b = static_cast<const char*>(base);
    const uint4* g = reinterpret_cast<const uint4*>(b + (long)r * EXPERT_ROW_BYTES);
    const uint4* u = reinterpret_cast<const uint4*>(b + (long)(MOE_INTER + r) * EXPERT_ROW_BYTES);
#pragma unroll
    for (int i = 0; i < EXPERT_PER_LANE; i++) {
        const int c = lane + 32 * i;
        if (c < W_CHUNKS(WEIGHT_FP8, HIDDEN)) { w.g[i] = ld_stream<L2_GATE_UP>(g + c); w.u[i] = ld_stream<L2_GATE_UP>(u + c); }
    }
    w.sg.load(scale, r);
    w.su.load(scale, MOE_INTER + r);
}
__device__ __forceinline__ void expert_rows_finish(const ExpertRows& w, const uint4* xs, float* __restrict__ h_row) {
    const int lane = threadIdx.x & 31;
    const float ga = row_dot<WEIGHT_FP8, HIDDEN>([&](int i) { return w.g[i]; }, w.sg, xs);
    const float ua = row_dot<WEIGHT_FP8, HIDDEN>([&](int i) { return w.u[i]; }, w.su, xs);
    if (lane == 0) *h_row = silu(ga) * ua;
}

// The router: logits = [router | shared_expert_gate] . rmsnorm(resid) with the norm fused (gemv.cuh
// is included before this file), and block 0 writing the normed x for the experts. The last
// router block to finish does the routing, which saves a launch per layer: `done` counts
// finished router blocks and is reset by that last block. Blocks from ROUTER_BLOCKS on are the
// shared expert's gate|up, a warp per intermediate row, into h[TOP_K].
extern "C" __global__ void __launch_bounds__(ROUTER_WARPS * 32)
moe_router(const bf16* __restrict__ W, const float* __restrict__ resid, const bf16* __restrict__ norm_w,
           bf16* __restrict__ xn_out, float eps, float* logits, unsigned* done, int* __restrict__ ids,
           float* __restrict__ weights, const void* __restrict__ shared_gate_up,
           const float* __restrict__ shared_gate_up_scale, float* __restrict__ h, const void* __restrict__ ahead,
           int ahead_rows) {
    if (blockIdx.x >= ROUTER_BLOCKS) {
        __shared__ uint4 xs[HIDDEN / 8];
        pdl_launch_next();
        const int r = (blockIdx.x - ROUTER_BLOCKS) * ROUTER_WARPS + (threadIdx.x >> 5);
        const bool valid = r < MOE_INTER;
        ExpertRows w;
        expert_rows_load(w, shared_gate_up, shared_gate_up_scale, valid ? r : 0);
        NormWeights<HIDDEN, ROUTER_WARPS * 32> nw;
        nw.load(norm_w);
        pdl_wait();
        // The next layer's input product (gemv_hidden_normed, `ahead`) asked into L2 while the
        // route is worked out and DRAM would idle: the first L2_AHEAD_ROWS rows of every group of
        // GEMV_NORMED_WARPS, which are that product's first warps of each block, so those warps
        // read L2 while the others stream DRAM. Spread over the blocks (block fastest) so that
        // no one SM's copy engine issues them all. Where, when and how much were measured, not
        // derived: asked before the wait or after these blocks' own rows, more than a few rows of
        // each 16 (L2_AHEAD_ROWS, a shape), or the product's last rows instead of its first, the
        // step was slower (docs/TRIED.md, "Decode: step structure").
        if (L2_AHEAD_ROWS > 0 && ahead != nullptr) {
            const int blocks = gridDim.x - ROUTER_BLOCKS, b = blockIdx.x - ROUTER_BLOCKS;
            const int groups = (ahead_rows + GEMV_NORMED_WARPS - 1) / GEMV_NORMED_WARPS;
            for (int g = threadIdx.x * blocks + b; g < groups; g += blockDim.x * blocks) {
                const int row0 = g * GEMV_NORMED_WARPS, n = min(L2_AHEAD_ROWS, ahead_rows - row0);
                l2_ahead(static_cast<const char*>(ahead) + (long)row0 * EXPERT_ROW_BYTES, (unsigned)n * EXPERT_ROW_BYTES);
            }
        }
        stage_rmsnorm<HIDDEN, ROUTER_WARPS * 32, WEIGHT_FP8>(xs, ResidRow{resid}, nw, nullptr, eps, [] {});
        __syncthreads();
        if (valid) expert_rows_finish(w, xs, h + TOP_K * MOE_INTER + r);
        return;
    }
    // One row per warp: the router's 257 rows are 1 MB, so its time is latency, and more blocks
    // spread the loads over more SMs.
    gemv_rows<HIDDEN, true, ROUTER_WARPS, false, 1>(W, nullptr, nullptr, resid, norm_w, xn_out, eps, logits,
                                                    NUM_EXPERTS + 1, 0, nullptr);
    // The barrier orders the block's logits before thread 0's count, whose release (at GPU
    // scope, cumulative over what the barrier ordered) publishes them and whose acquire, in the
    // last block, makes every block's visible: one atomic instead of a fence on either side.
    __shared__ bool last;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned before;
        asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(before) : "l"(done) : "memory");
        last = before == ROUTER_BLOCKS - 1;
    }
    __syncthreads();
    if (!last) return;
    // Nothing more may be asked of memory here: a grid retires only once every request it made
    // is served, and gate|up waits for this one: asking the chosen experts' rows into L2 from
    // here lengthened the router's path two- to fourfold (docs/TRIED.md, "expert-ahead").
    if (threadIdx.x < 32) route_warp(logits, ids, weights);
    if (threadIdx.x == 0) *done = 0;
}

// A warp's DOWN_PER_LANE 16-byte chunks of one down row (MOE_INTER columns) dotted with h_s, in
// the order moe_down has always summed them: the shared expert's rows below give the same bits.
// With FP8 weights h_s is first staged per lane as f16 (DownInput: once per warp, for all its
// rows), and each chunk's sum scaled by its block's scale.
#define DOWN_PER_LANE W_PER_LANE(WEIGHT_FP8, MOE_INTER)
#define DOWN_ROW_BYTES (WEIGHT_FP8 ? MOE_INTER : 2 * MOE_INTER)
struct DownInput {
    const float* h_s;
    uint4 hx[WEIGHT_FP8 ? 2 * DOWN_PER_LANE : 1];
    __device__ __forceinline__ explicit DownInput(const float* h) : h_s(h) {
        if constexpr (WEIGHT_FP8) {
            const int lane = threadIdx.x & 31;
#pragma unroll
            for (int i = 0; i < DOWN_PER_LANE; i++) {
                const int c = lane + 32 * i;
                if (c < W_CHUNKS(true, MOE_INTER)) {
                    const float4* hr = reinterpret_cast<const float4*>(h + c * 16);
#pragma unroll
                    for (int half = 0; half < 2; half++) {
                        const float4 a = __ldcg(hr + 2 * half), b = __ldcg(hr + 2 * half + 1);
                        hx[2 * i + half] = make_uint4(f16_input(a.x, a.y), f16_input(a.z, a.w),
                                                      f16_input(b.x, b.y), f16_input(b.z, b.w));
                    }
                }
            }
        }
    }
};
__device__ __forceinline__ float down_row_dot(const uint4 (&w)[DOWN_PER_LANE], const RowScales<WEIGHT_FP8, MOE_INTER>& sc,
                                              const DownInput& in) {
    const int lane = threadIdx.x & 31;
    float acc = 0.f;
#pragma unroll
    for (int i = 0; i < DOWN_PER_LANE; i++) {
        const int c = lane + 32 * i;
        if constexpr (WEIGHT_FP8) {
            if (c < W_CHUNKS(true, MOE_INTER)) acc += sc(i) * dot16_e4m3(w[i], in.hx[2 * i], in.hx[2 * i + 1]);
        } else if (c < MOE_INTER / 8) {
            float wf[8];
            unpack8(w[i], wf);
            const float4* hr = reinterpret_cast<const float4*>(in.h_s + c * 8);
            const float4 a = hr[0], b = hr[1];
            acc += wf[0] * a.x + wf[1] * a.y + wf[2] * a.z + wf[3] * a.w + wf[4] * b.x + wf[5] * b.y + wf[6] * b.z + wf[7] * b.w;
        }
    }
    return WEIGHT_FP8 ? acc * E4M3_UNIT : acc;
}
__device__ __forceinline__ void down_row_load(uint4 (&w)[DOWN_PER_LANE], RowScales<WEIGHT_FP8, MOE_INTER>& sc,
                                              const void* matrix, const float* scale, long row) {
    const int lane = threadIdx.x & 31;
    const uint4* r = reinterpret_cast<const uint4*>(static_cast<const char*>(matrix) + row * DOWN_ROW_BYTES);
#pragma unroll
    for (int i = 0; i < DOWN_PER_LANE; i++) {
        const int c = lane + 32 * i;
        if (c < W_CHUNKS(WEIGHT_FP8, MOE_INTER)) w[i] = ld_stream<L2_DOWN>(r + c);
    }
    sc.load(scale, row);
}

// Intermediate rows per warp of moe_gate_up and down rows per warp group of moe_down: with FP8
// weights twice bf16's, so that each lane keeps as many 16-byte loads in flight (an FP8 row is
// half the loads). moe.rs sizes the grids from the same factor.
#define MOE_FP8_ROWS (WEIGHT_FP8 ? 2 : 1)
#define GU_ROWS MOE_FP8_ROWS
#define DOWN_WARP_ROWS_ALL (DOWN_WARP_ROWS * MOE_FP8_ROWS)

// The shared expert's down rows per warp of the gate|up launch's column x = TOP_K.
#define GU_BLOCKS_Y ((MOE_INTER + MOE_WARPS * GU_ROWS - 1) / (MOE_WARPS * GU_ROWS))
#define SHARED_DOWN_ROWS ((HIDDEN + MOE_WARPS * GU_BLOCKS_Y - 1) / (MOE_WARPS * GU_BLOCKS_Y))

// grid (TOP_K + 1, GU_BLOCKS_Y), GU_ROWS intermediate rows per warp, MOE_WARPS warps per block (a
// shape: fewer blocks, each with more rows in flight, until too few blocks are left to fill the
// SMs; docs/TRIED.md, "Decode: MoE"). Columns x < TOP_K: the 8 chosen
// experts' h[x][r] (the shared expert's h[TOP_K] is the router's). Column TOP_K: the shared
// expert's down product, weighted, into shared_out [HIDDEN] (SHARED_DOWN_ROWS rows per warp,
// asked for before the wait: they need neither the route nor h), which moe_down adds as the
// last slot. gate_up: [NUM_EXPERTS][2*MOE_INTER][HIDDEN] (rows 0..I gate, I..2I up).
extern "C" __global__ void __launch_bounds__(MOE_WARPS * 32)
moe_gate_up(const void* __restrict__ gate_up, const float* __restrict__ gate_up_scale,
            const void* __restrict__ shared_down, const float* __restrict__ shared_down_scale,
            const bf16* __restrict__ x, const int* __restrict__ ids, const float* __restrict__ weights,
            float* __restrict__ h, float* __restrict__ shared_out) {
    __shared__ uint4 xs[HIDDEN / 8];
    pdl_launch_next();
    const int warp = threadIdx.x >> 5;
    if (blockIdx.x == TOP_K) {
        const int row0 = (blockIdx.y * MOE_WARPS + warp) * SHARED_DOWN_ROWS;
        uint4 w[SHARED_DOWN_ROWS][DOWN_PER_LANE];
        RowScales<WEIGHT_FP8, MOE_INTER> sc[SHARED_DOWN_ROWS];
#pragma unroll
        for (int j = 0; j < SHARED_DOWN_ROWS; j++)
            down_row_load(w[j], sc[j], shared_down, shared_down_scale, row0 + j < HIDDEN ? row0 + j : 0);
        pdl_wait();
        const float wt = __ldcg(weights + TOP_K);
        const DownInput in(h + TOP_K * MOE_INTER);
#pragma unroll
        for (int j = 0; j < SHARED_DOWN_ROWS; j++) {
            const float total = warp_sum(wt * down_row_dot(w[j], sc[j], in));
            if (row0 + j < HIDDEN && (threadIdx.x & 31) == 0) shared_out[row0 + j] = total;
        }
        return;
    }
    pdl_wait();
    const int slot = blockIdx.x;
    const int r0 = (blockIdx.y * MOE_WARPS + warp) * GU_ROWS;
    // Weights first (they need only the expert id), then x, so the loads overlap the staging.
    ExpertRows w[GU_ROWS];
    const long id = __ldcg(ids + slot);
#pragma unroll
    for (int j = 0; j < GU_ROWS; j++)
        expert_rows_load(w[j], static_cast<const char*>(gate_up) + id * 2 * MOE_INTER * EXPERT_ROW_BYTES,
                         gate_up_scale + id * GATE_UP_SCALES, r0 + j < MOE_INTER ? r0 + j : 0);
    for (int c = threadIdx.x; c < HIDDEN / 8; c += blockDim.x)
        xs[c] = stage_chunk<WEIGHT_FP8>(reinterpret_cast<const uint4*>(x)[c]);
    __syncthreads();
#pragma unroll
    for (int j = 0; j < GU_ROWS; j++)
        if (r0 + j < MOE_INTER) expert_rows_finish(w[j], xs, h + slot * MOE_INTER + r0 + j);
}

// x[row] += sum_s weight_s * (down_s[row] . h_s) over the 8 chosen experts, then the shared
// expert's (shared_out, from moe_gate_up): the residual add included.
// down: [NUM_EXPERTS][HIDDEN][MOE_INTER].
// A warp per (slot, group of DOWN_WARP_ROWS rows), DOWN_ROWS groups per block; a row's sums are
// added in slot order (deterministic, unlike atomics), so every shape gives the same bits.
// Several rows per warp (8 by default, shapes.rs) so that the launch's 16.8 MB stream from
// 2,048 warps in one wave of blocks instead of 16,384 warps in two, each warp asking for all its
// rows before the first use (the sweep: docs/TRIED.md, "Decode: MoE").
// Lanes read h straight from L2 (warps of a block share it through L1).
#define DOWN_BLOCK_ROWS (DOWN_ROWS * DOWN_WARP_ROWS_ALL)
extern "C" __global__ void __launch_bounds__(TOP_K * DOWN_ROWS * 32)
moe_down(const void* __restrict__ down, const float* __restrict__ down_scale, const float* __restrict__ h,
         const int* __restrict__ ids, const float* __restrict__ weights, const float* __restrict__ shared_out,
         float* __restrict__ x) {
    __shared__ float partial[DOWN_BLOCK_ROWS][TOP_K];
    pdl_launch_next();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int s = warp % TOP_K, local0 = (warp / TOP_K) * DOWN_WARP_ROWS_ALL;
    const int block_row0 = blockIdx.x * DOWN_BLOCK_ROWS;
    uint4 w[DOWN_WARP_ROWS_ALL][DOWN_PER_LANE];
    RowScales<WEIGHT_FP8, MOE_INTER> sc[DOWN_WARP_ROWS_ALL];
    auto load_rows = [&](int expert_id) {
        const char* expert = static_cast<const char*>(down) + (long)expert_id * HIDDEN * DOWN_ROW_BYTES;
        const float* scale = down_scale + (long)expert_id * DOWN_SCALES;
#pragma unroll
        for (int j = 0; j < DOWN_WARP_ROWS_ALL; j++) {
            const int row = block_row0 + local0 + j;
            down_row_load(w[j], sc[j], expert, scale, row < HIDDEN ? row : 0);
        }
    };
    // The rows are asked for before the wait, for the expert the route names then: a guess.
    // The router ran two launches back, and this grid launches only once every gate|up block
    // has started; on the H200 gate|up's blocks outnumber one wave, so its last ones start after
    // the first ones passed their wait, which the router's end released. Nothing guarantees that
    // in general, so the id is read again after the wait and a warp whose expert changed asks
    // for its rows again: a wrong guess costs time, never a wrong result. The buffer may hold
    // anything before a sequence's first route (it is never cleared), hence the clamp: a guess
    // must stay inside the weights (unclamped, the tiny model's tests read out of bounds).
    const int guess = (int)min((unsigned)__ldcg(ids + s), (unsigned)(NUM_EXPERTS - 1));
    load_rows(guess);
    pdl_wait();
    const int id = __ldcg(ids + s);
    if (id != guess) load_rows(id);
    // Thread t < DOWN_BLOCK_ROWS adds up row block_row0 + t; its residual and shared-expert
    // term are asked for now rather than after the barrier.
    const int add_row = block_row0 + threadIdx.x;
    const bool adds = threadIdx.x < DOWN_BLOCK_ROWS && add_row < HIDDEN;
    const float x_old = adds ? __ldcg(x + add_row) : 0.f, shared = adds ? __ldcg(shared_out + add_row) : 0.f;
    const float wt = __ldcg(weights + s);
    const DownInput in(h + s * MOE_INTER);
#pragma unroll
    for (int j = 0; j < DOWN_WARP_ROWS_ALL; j++) {
        const float total = warp_sum(wt * down_row_dot(w[j], sc[j], in));
        if (lane == 0) partial[local0 + j][s] = total;
    }
    __syncthreads();
    if (adds) {
        float sum = 0.f;
#pragma unroll
        for (int k = 0; k < TOP_K; k++) sum += partial[threadIdx.x][k];
        x[add_row] = x_old + (sum + shared);
    }
}

// ---- Prefill: the experts as a grouped GEMM over (token, expert) pairs sorted by expert ----
// Each token has SLOTS pairs: its TOP_K routed experts and the shared expert, which counts as
// expert NUM_EXPERTS with weight sigmoid(shared_expert_gate). gemm.cu runs the pairs; these
// kernels route, sort and combine them. Every pair's result is computed independently of where
// the sort puts it, and combine sums a token's pairs in slot order, so the output does not depend
// on the (atomic, run-dependent) order within an expert.

// One warp per token: routing of row t of logits [tokens][NUM_EXPERTS + 1] into ids/weights
// [tokens][SLOTS], and the count of each routed expert's pairs.
extern "C" __global__ void moe_route_rows(const float* __restrict__ logits, int tokens, int* __restrict__ ids,
                                          float* __restrict__ weights, int* __restrict__ counts) {
    pdl_launch_next();
    pdl_wait();
    const int t = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (t >= tokens) return;
    route_warp(logits + (long)t * (NUM_EXPERTS + 1), ids + (long)t * SLOTS, weights + (long)t * SLOTS);
    __syncwarp();
    if (lane == 0) ids[(long)t * SLOTS + TOP_K] = NUM_EXPERTS;
    if (lane < TOP_K) atomicAdd(&counts[ids[(long)t * SLOTS + lane]], 1);
}

// One warp: each expert's first sorted row (offsets), the tile table for gemm.cu's grouped
// kernels (tiles of up to `tile_rows` rows that never straddle two experts) and its length.
// Lane l owns a contiguous run of experts; two warp scans (rows, tiles) place each run.
// Leaves counts and cursors zero for the next layer.
__device__ __forceinline__ int warp_exclusive_scan(int v, int lane) {
    int incl = v;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const int n = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o) incl += n;
    }
    return incl - v;
}

extern "C" __global__ void moe_plan(int* __restrict__ counts, int tokens, int tile_rows, int* __restrict__ offsets,
                                    int* __restrict__ cursors, int4* __restrict__ tiles, int* __restrict__ ntiles) {
    constexpr int RUN = (NUM_EXPERTS + 1 + 31) / 32;
    pdl_launch_next();
    pdl_wait();
    const int lane = threadIdx.x;
    if (blockIdx.x != 0 || lane >= 32) return;
    int c[RUN], rows = 0, n_tiles = 0;
#pragma unroll
    for (int j = 0; j < RUN; j++) {
        const int e = lane * RUN + j;
        c[j] = e < NUM_EXPERTS ? counts[e] : e == NUM_EXPERTS ? tokens : 0;
        rows += c[j];
        n_tiles += (c[j] + tile_rows - 1) / tile_rows;
    }
    int row = warp_exclusive_scan(rows, lane), tile = warp_exclusive_scan(n_tiles, lane);
#pragma unroll
    for (int j = 0; j < RUN; j++) {
        const int e = lane * RUN + j;
        if (e > NUM_EXPERTS) break;
        offsets[e] = row;
        for (int r = 0; r < c[j]; r += tile_rows)
            tiles[tile++] = make_int4(e, row + r, row + min(r + tile_rows, c[j]), 0);
        row += c[j];
        if (e < NUM_EXPERTS) counts[e] = 0;
        cursors[e] = 0;
    }
    if (lane == 31) *ntiles = tile;
}

// Pair i = (token i / SLOTS, slot i % SLOTS) takes the next free row of its expert.
extern "C" __global__ void moe_scatter(const int* __restrict__ ids, const float* __restrict__ weights, int pairs,
                                       const int* __restrict__ offsets, int* __restrict__ cursors,
                                       int* __restrict__ sorted_token, float* __restrict__ sorted_weight,
                                       int* __restrict__ pair_row) {
    pdl_launch_next();
    pdl_wait();
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= pairs) return;
    const int e = ids[i];
    const int p = offsets[e] + atomicAdd(&cursors[e], 1);
    sorted_token[p] = i / SLOTS;
    sorted_weight[p] = weights[i];
    pair_row[i] = p;
}

// x[t] += the token's SLOTS pair outputs (already weighted, bf16), in slot order, in f32.
// grid tokens.
extern "C" __global__ void moe_combine(const bf16* __restrict__ pair_out, const int* __restrict__ pair_row,
                                       float* __restrict__ x) {
    pdl_launch_next();
    pdl_wait();
    const long t = blockIdx.x;
    int rows[SLOTS];
#pragma unroll
    for (int s = 0; s < SLOTS; s++) rows[s] = pair_row[t * SLOTS + s];
    float4* xr = reinterpret_cast<float4*>(x + t * HIDDEN);
    for (int c = threadIdx.x; c < HIDDEN / 4; c += blockDim.x) {
        float4 sum = xr[c];
#pragma unroll
        for (int s = 0; s < SLOTS; s++) {
            const uint2 v = reinterpret_cast<const uint2*>(pair_out + (long)rows[s] * HIDDEN)[c];
            sum.x += __uint_as_float(v.x << 16);
            sum.y += __uint_as_float(v.x & 0xffff0000u);
            sum.z += __uint_as_float(v.y << 16);
            sum.w += __uint_as_float(v.y & 0xffff0000u);
        }
        xr[c] = sum;
    }
}
