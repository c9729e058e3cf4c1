// Mixture of experts for decode. Needs: HIDDEN, NUM_EXPERTS, TOP_K, MOE_INTER.
// The shared expert runs as slot TOP_K of the same kernels as the routed ones (same shapes),
// so a layer's 9 experts are one launch for gate|up and one for down.
// Expert ids and weights stay on the GPU: the route kernel writes them, the expert kernels read
// them, and the host never sees them.

#define SLOTS (TOP_K + 1)
#define MOE_WARPS 4

// logits: [router (NUM_EXPERTS) | shared_expert_gate (1)] from one GEMV.
// Softmax in f32, top-k (lowest index wins a tie), renormalised to sum 1;
// weights[TOP_K] = sigmoid(shared gate). One warp.
extern "C" __global__ void moe_route(const float* __restrict__ logits, int* __restrict__ ids,
                                     float* __restrict__ weights) {
    constexpr int PER_LANE = (NUM_EXPERTS + 31) / 32;
    pdl_launch_next();
    pdl_wait();
    const int lane = threadIdx.x;
    float p[PER_LANE];
    float mx = -INFINITY;
#pragma unroll
    for (int j = 0; j < PER_LANE; j++) {
        const int e = lane + 32 * j;
        p[j] = e < NUM_EXPERTS ? logits[e] : -INFINITY;
        mx = fmaxf(mx, p[j]);
    }
    mx = warp_max(mx);
    float sum = 0.f;
#pragma unroll
    for (int j = 0; j < PER_LANE; j++) {
        p[j] = lane + 32 * j < NUM_EXPERTS ? expf(p[j] - mx) : -1.f;
        sum += p[j] > 0.f ? p[j] : 0.f;
    }
    sum = warp_sum(sum);
    float picked_sum = 0.f, picked[TOP_K];
    int picked_id[TOP_K];
#pragma unroll
    for (int k = 0; k < TOP_K; k++) {
        float best = -2.f;
        int best_e = 1 << 30;
#pragma unroll
        for (int j = 0; j < PER_LANE; j++) {
            if (p[j] > best) { best = p[j]; best_e = lane + 32 * j; }
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            const float ob = __shfl_xor_sync(0xffffffffu, best, o);
            const int oe = __shfl_xor_sync(0xffffffffu, best_e, o);
            if (ob > best || (ob == best && oe < best_e)) { best = ob; best_e = oe; }
        }
        picked[k] = best / sum;
        picked_id[k] = best_e;
        picked_sum += picked[k];
#pragma unroll
        for (int j = 0; j < PER_LANE; j++)
            if (lane + 32 * j == best_e) p[j] = -1.f;
    }
    if (lane == 0) {
#pragma unroll
        for (int k = 0; k < TOP_K; k++) {
            ids[k] = picked_id[k];
            weights[k] = picked[k] / picked_sum;
        }
        weights[TOP_K] = sigmoid(logits[NUM_EXPERTS]);
    }
}

// h[s][r] = silu(gate_s[r] . x) * (up_s[r] . x) for the 8 chosen experts and the shared one.
// gate_up: [NUM_EXPERTS][2*MOE_INTER][HIDDEN] (rows 0..I gate, I..2I up); shared: [2*I][HIDDEN].
// grid (SLOTS, I / MOE_WARPS), one warp per intermediate row.
extern "C" __global__ void __launch_bounds__(MOE_WARPS * 32)
moe_gate_up(const bf16* __restrict__ gate_up, const bf16* __restrict__ shared_gate_up,
            const bf16* __restrict__ x, const int* __restrict__ ids, float* __restrict__ h) {
    constexpr int CHUNKS = HIDDEN / 8, PER_LANE = (CHUNKS + 31) / 32;
    __shared__ uint4 xs[CHUNKS];
    pdl_launch_next();
    pdl_wait();
    const int slot = blockIdx.x, lane = threadIdx.x & 31;
    const int r = blockIdx.y * MOE_WARPS + (threadIdx.x >> 5);
    const bool valid = r < MOE_INTER;
    // Weights first (they need only the expert id), then x, so the loads overlap the staging.
    const bf16* base = slot < TOP_K ? gate_up + (long)ids[slot] * 2 * MOE_INTER * HIDDEN : shared_gate_up;
    const int rr = valid ? r : 0;
    const uint4* g = reinterpret_cast<const uint4*>(base + (long)rr * HIDDEN);
    const uint4* u = reinterpret_cast<const uint4*>(base + (long)(MOE_INTER + rr) * HIDDEN);
    uint4 gw[PER_LANE], uw[PER_LANE];
#pragma unroll
    for (int i = 0; i < PER_LANE; i++) {
        const int c = lane + 32 * i;
        if (c < CHUNKS) { gw[i] = __ldg(g + c); uw[i] = __ldg(u + c); }
    }
    for (int c = threadIdx.x; c < CHUNKS; c += blockDim.x) xs[c] = reinterpret_cast<const uint4*>(x)[c];
    __syncthreads();
    if (!valid) return;
    float ga = 0.f, ua = 0.f;
#pragma unroll
    for (int i = 0; i < PER_LANE; i++) {
        const int c = lane + 32 * i;
        if (c < CHUNKS) { ga += dot8(gw[i], xs[c]); ua += dot8(uw[i], xs[c]); }
    }
    ga = warp_sum(ga);
    ua = warp_sum(ua);
    if (lane == 0) h[slot * MOE_INTER + r] = silu(ga) * ua;
}

// x[row] += sum_s weight_s * (down_s[row] . h_s), the residual add included.
// down: [NUM_EXPERTS][HIDDEN][MOE_INTER]; shared: [HIDDEN][MOE_INTER]. grid HIDDEN / MOE_WARPS.
extern "C" __global__ void __launch_bounds__(MOE_WARPS * 32)
moe_down(const bf16* __restrict__ down, const bf16* __restrict__ shared_down, const float* __restrict__ h,
         const int* __restrict__ ids, const float* __restrict__ weights, float* __restrict__ x) {
    constexpr int CHUNKS = MOE_INTER / 8, PER_LANE = (CHUNKS + 31) / 32;
    __shared__ float hs[SLOTS * MOE_INTER];
    pdl_launch_next();
    pdl_wait();
    const int lane = threadIdx.x & 31;
    const int row = blockIdx.x * MOE_WARPS + (threadIdx.x >> 5);
    const bool valid = row < HIDDEN;
    const int rr = valid ? row : 0;
    // Weights first (they need only the expert ids), then h, so the loads overlap the staging.
    uint4 w[SLOTS][PER_LANE];
#pragma unroll
    for (int s = 0; s < SLOTS; s++) {
        const bf16* base = s < TOP_K ? down + (long)ids[s] * HIDDEN * MOE_INTER : shared_down;
        const uint4* wr = reinterpret_cast<const uint4*>(base + (long)rr * MOE_INTER);
#pragma unroll
        for (int i = 0; i < PER_LANE; i++) {
            const int c = lane + 32 * i;
            if (c < CHUNKS) w[s][i] = __ldg(wr + c);
        }
    }
    for (int i = threadIdx.x; i < SLOTS * MOE_INTER; i += blockDim.x) hs[i] = h[i];
    __syncthreads();
    if (!valid) return;
    float total = 0.f;
#pragma unroll
    for (int s = 0; s < SLOTS; s++) {
        float acc = 0.f;
#pragma unroll
        for (int i = 0; i < PER_LANE; i++) {
            const int c = lane + 32 * i;
            if (c < CHUNKS) {
                float wf[8];
                unpack8(w[s][i], wf);
                const float* hh = hs + s * MOE_INTER + c * 8;
#pragma unroll
                for (int k = 0; k < 8; k++) acc = fmaf(wf[k], hh[k], acc);
            }
        }
        total += weights[s] * acc;
    }
    total = warp_sum(total);
    if (lane == 0) x[row] += total;
}
