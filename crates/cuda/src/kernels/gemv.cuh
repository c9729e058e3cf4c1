// The row products' device code, shared by gemv.cu (decode's products) and moe.cu (the router
// is a row product with the norm fused). Included by both (kernels/mod.rs: family).
// BF16 matrix-vector product for decode: y[r] (+)= W[r,:] . x, W row-major bf16, x bf16, y f32.
// Each warp takes GEMV_ROWS consecutive rows and every lane issues all of its 16-byte loads of
// them before the first use: GEMV_LOADS loads per lane in flight (16: one 4096-column row, or
// two 2048-column rows; a caller may take fewer rows per warp for more blocks). x is staged once per
// block in shared memory.
// `accumulate` adds into y: that is how the residual add rides on the output projections.
// With NORMED it takes the f32 residual stream instead of x and applies the zero-centred
// RMSNorm in its prologue (each block recomputes it from L2, which removes a launch per norm);
// block 0 also writes the normed vector out when another kernel needs it (the experts). The
// MoE router uses it so; the large normed products stream instead (gemv_hidden_normed below).
// Needs: HIDDEN, GDN_OUT (value heads * value dim), ATTN_OUT (heads * head dim).

// Launch shapes (shapes.rs): GEMV_LOADS for every row product, and warps per block by entry
// point: GEMV_OUT_WARPS (GDN out_proj, o_proj), LM_HEAD_WARPS (lm_head_normed); moe.cu's router
// has ROUTER_WARPS; the streamed products (gemv_hidden_normed, gemv_embed_normed) have
// GEMV_NORMED_WARPS and GEMV_NORMED_STAGES.
// 16-byte chunks of an input vector (8 bf16, or the 8 f16 an FP8 product stages), of a weight
// row (8 bf16 or, with F8, 16 e4m3), each lane's share of a row, and rows per warp (gemv.rs:
// rows_per_block). An FP8 row is half the bytes; its rows per warp are what a bf16 row of the
// same width gets (half the loads in flight per lane), so that the output projections keep
// their blocks on every multiprocessor (twice the rows per warp left half of them idle).
#define GEMV_CHUNKS(cols) ((cols) / 8)
#define W_CHUNKS(F8, cols) ((cols) / ((F8) ? 16 : 8))
#define W_PER_LANE(F8, cols) ((W_CHUNKS(F8, cols) + 31) / 32)
#define W_ROWS(F8, cols) W_ROWS_OF(W_PER_LANE(false, cols))
#define W_ROWS_OF(per_lane) ((per_lane) >= GEMV_LOADS ? 1 : GEMV_LOADS / (per_lane))

// A weight row's dot with the input staged in shared memory (`xs`, f16 for F8), summed over
// the warp: the lane's chunks (chunk(i): its i-th, chunk lane + 32 i) and, for F8, their block
// scales (scale(i)). The bf16 sum is the one decode has always done (same order, same bits).
template <bool F8, int COLS, typename Chunk, typename Scale>
__device__ __forceinline__ float row_dot(Chunk chunk, Scale scale, const uint4* xs) {
    constexpr int CHUNKS = W_CHUNKS(F8, COLS), PER_LANE = W_PER_LANE(F8, COLS);
    const int lane = threadIdx.x & 31;
    float acc = 0.f;
#pragma unroll
    for (int i = 0; i < PER_LANE; i++) {
        const int c = lane + 32 * i;
        if (c < CHUNKS) {
            if constexpr (F8)
                acc += scale(i) * dot16_e4m3(chunk(i), xs[2 * c], xs[2 * c + 1]);
            else
                acc += dot8(chunk(i), xs[c]);
        }
    }
    acc = warp_sum(acc);
    return F8 ? acc * E4M3_UNIT : acc;
}

// A lane's block scales of one FP8 row (one per chunk it reads), asked for with the row.
template <bool F8, int COLS>
struct RowScales {
    static constexpr int N = F8 ? W_PER_LANE(true, COLS) : 1;
    float s[N];
    __device__ __forceinline__ void load(const float* scales, long row) {
        if constexpr (F8) {
            const int lane = threadIdx.x & 31;
#pragma unroll
            for (int i = 0; i < N; i++) {
                const int c = lane + 32 * i;
                s[i] = c < W_CHUNKS(true, COLS) ? __ldg(block_scale_at<COLS>(scales, row, c)) : 0.f;
            }
        }
    }
    __device__ __forceinline__ float operator()(int i) const { return F8 ? s[i] : 1.f; }
};

// The staged input's 16-byte chunk from a bf16 chunk: as is, or as f16 for an FP8 product.
template <bool F8>
__device__ __forceinline__ uint4 stage_chunk(const uint4 v) {
    if constexpr (F8) return bf16x8_f16x8(v);
    else return v;
}

// The chunks of the norm weight a thread scales in stage_rmsnorm: a weight, so its callers ask
// for it before their PDL wait instead of one more memory round trip after the block sum.
template <int COLS, int THREADS>
struct NormWeights {
    static constexpr int CHUNKS = GEMV_CHUNKS(COLS), MINE = (CHUNKS + THREADS - 1) / THREADS;
    uint4 w[MINE];
    __device__ __forceinline__ void load(const bf16* __restrict__ norm_w) {
#pragma unroll
        for (int j = 0; j < MINE; j++) {
            const int c = threadIdx.x + j * THREADS;
            if (c < CHUNKS) w[j] = ld_early(reinterpret_cast<const uint4*>(norm_w) + c);
        }
    }
};

// What a normed product normalises, 8 values (one 16-byte chunk of bf16 x) at a time: the
// residual stream (f32, read at L2), or, for the first layer of a decode step, the step's
// token's embedding row (bf16), which block 0 also writes out as the residual stream.
struct ResidRow {
    const float* resid;
    __device__ __forceinline__ void load(int c, float e[8]) const {
        const float4 a = __ldcg(reinterpret_cast<const float4*>(resid) + 2 * c);
        const float4 b = __ldcg(reinterpret_cast<const float4*>(resid) + 2 * c + 1);
        e[0] = a.x, e[1] = a.y, e[2] = a.z, e[3] = a.w, e[4] = b.x, e[5] = b.y, e[6] = b.z, e[7] = b.w;
    }
    __device__ __forceinline__ void keep(int, const float*) const {}
};
struct EmbedRow {
    const bf16* row;  // nullptr: the token is outside the table, and the values are NaN
    float* resid_out;
    __device__ __forceinline__ void load(int c, float e[8]) const {
        if (row == nullptr) {
#pragma unroll
            for (int i = 0; i < 8; i++) e[i] = __int_as_float(0x7fc00000);
            return;
        }
        unpack8(ld_early(reinterpret_cast<const uint4*>(row) + c), e);
    }
    __device__ __forceinline__ void keep(int c, const float* e) const {
        if (blockIdx.x != 0) return;
        float4* out = reinterpret_cast<float4*>(resid_out) + 2 * c;
        out[0] = make_float4(e[0], e[1], e[2], e[3]);
        out[1] = make_float4(e[4], e[5], e[6], e[7]);
    }
};

// x = bf16(in * rsqrt(mean(in^2) + eps) * (1 + w)) into shared memory (and xn_out), `in` read
// through `src` (ResidRow or EmbedRow). One pass: each thread keeps its chunks of the input in
// registers between the sum and the scaling. `issued` runs once the input's loads are issued
// and before their first use: loads it issues then queue behind them, not in front.
// With F8 the staged copy is f16 (of the bf16 values; xn_out stays bf16).
template <int COLS, int THREADS, bool F8 = false, typename Src, typename Issued>
__device__ __forceinline__ void stage_rmsnorm(uint4* xs, const Src& src, const NormWeights<COLS, THREADS>& nw,
                                             bf16* __restrict__ xn_out, float eps, Issued issued) {
    constexpr int CHUNKS = GEMV_CHUNKS(COLS), MINE = NormWeights<COLS, THREADS>::MINE;
    __shared__ float scratch[32];
    float v[MINE][8];
#pragma unroll
    for (int j = 0; j < MINE; j++) {
        const int c = threadIdx.x + j * THREADS;
        if (c < CHUNKS) src.load(c, v[j]);
    }
    issued();
    float ss = 0.f;
#pragma unroll
    for (int j = 0; j < MINE; j++) {
        const int c = threadIdx.x + j * THREADS;
        if (c < CHUNKS) {
            const float* a = v[j];
            ss += a[0] * a[0] + a[1] * a[1] + a[2] * a[2] + a[3] * a[3] + a[4] * a[4] + a[5] * a[5] + a[6] * a[6] +
                  a[7] * a[7];
        }
    }
    const float r = rsqrtf(block_sum(ss, scratch) / COLS + eps);
#pragma unroll
    for (int j = 0; j < MINE; j++) {
        const int c = threadIdx.x + j * THREADS;
        if (c >= CHUNKS) continue;
        const float* e = v[j];
        src.keep(c, e);
        float wf[8];
        unpack8(nw.w[j], wf);
        unsigned packed[4];
#pragma unroll
        for (int i = 0; i < 4; i++)
            packed[i] = (unsigned)f2bf(e[2 * i] * r * (1.f + wf[2 * i])) |
                        ((unsigned)f2bf(e[2 * i + 1] * r * (1.f + wf[2 * i + 1])) << 16);
        const uint4 q = make_uint4(packed[0], packed[1], packed[2], packed[3]);
        xs[c] = stage_chunk<F8>(q);
        if (xn_out != nullptr && blockIdx.x == 0) reinterpret_cast<uint4*>(xn_out)[c] = q;
    }
}

// With `best` (lm_head: a greedy rule's pick, a draw's max) the product is also the argmax of y: the largest
// (value, lowest row) key goes to `best` by atomicMax, NaN left out (sampling.cu's rule): a
// separate argmax launch would be one more latency-bound boundary on the step's path.
// With F8, W is e4m3 with block scales `scale` (gemv_rows' rows and scales both asked for
// before the wait); lm_head and the router stay bf16 in every model.
template <int COLS, bool NORMED, int WARPS, bool F8 = false, int ROWS = W_ROWS(F8, COLS)>
__device__ __forceinline__ void gemv_rows(const void* __restrict__ W, const float* __restrict__ scale,
                                          const bf16* __restrict__ x, const float* __restrict__ resid,
                                          const bf16* __restrict__ norm_w, bf16* __restrict__ xn_out, float eps,
                                          float* __restrict__ y, int rows, int accumulate, u64* best) {
    constexpr int CHUNKS = W_CHUNKS(F8, COLS), PER_LANE = W_PER_LANE(F8, COLS);
    constexpr int X_CHUNKS = GEMV_CHUNKS(COLS), ROW_BYTES = F8 ? COLS : 2 * COLS;
    __shared__ uint4 xs[X_CHUNKS];
    __shared__ u64 keys[WARPS];
    pdl_launch_next();
    const int lane = threadIdx.x & 31;
    const long row0 = ((long)blockIdx.x * WARPS + (threadIdx.x >> 5)) * ROWS;
    // The weights are issued before waiting for the previous kernel: they overlap its tail.
    NormWeights<COLS, WARPS * 32> nw;
    if constexpr (NORMED) nw.load(norm_w);
    uint4 w[ROWS][PER_LANE];
    RowScales<F8, COLS> sc[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
        const long row = row0 + r < rows ? row0 + r : 0;
        const uint4* wr = reinterpret_cast<const uint4*>(static_cast<const char*>(W) + row * ROW_BYTES);
#pragma unroll
        for (int i = 0; i < PER_LANE; i++) {
            const int c = lane + 32 * i;
            if (c < CHUNKS) w[r][i] = ld_stream<L2_ROWS>(wr + c);
        }
        sc[r].load(scale, row);
    }
    pdl_wait();
    // What an accumulating product adds to, asked for now rather than after the sums.
    float y_old[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; r++) y_old[r] = accumulate && lane == 0 && row0 + r < rows ? __ldcg(y + row0 + r) : 0.f;
    if constexpr (NORMED) {
        stage_rmsnorm<COLS, WARPS * 32, F8>(xs, ResidRow{resid}, nw, xn_out, eps, [] {});
    } else {
        for (int c = threadIdx.x; c < X_CHUNKS; c += blockDim.x)
            xs[c] = stage_chunk<F8>(__ldcg(reinterpret_cast<const uint4*>(x) + c));
    }
    __syncthreads();
    u64 key = 0;  // the warp's argmax over its rows, when `best` asks for one
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
        const long row = row0 + r;
        if (row >= rows) break;
        const float acc = row_dot<F8, COLS>([&](int i) { return w[r][i]; }, sc[r], xs);
        if (lane == 0) y[row] = accumulate ? y_old[r] + acc : acc;
        if (best != nullptr && acc == acc) {
            const u64 k = argmax_key(acc, (int)row);
            key = k > key ? k : key;
        }
    }
    // One atomic per block on `best` (lm_head: 15,520 over the launch).
    if (best != nullptr) {
        if (lane == 0) keys[threadIdx.x >> 5] = key;
        __syncthreads();
        if (threadIdx.x == 0) {
            u64 k = 0;
#pragma unroll
            for (int w = 0; w < WARPS; w++) k = keys[w] > k ? keys[w] : k;
            if (k) atomicMax(best, k);
        }
    }
}

// The layer-input products (GDN in_proj, attention q|k|v: 50.6 and 37.7 MB) streamed by a
// fixed GEMV_NORMED_BLOCKS blocks per SM (gemv.rs sizes the grid) instead of waves of short
// blocks: with waves, the last blocks of in_proj start long after its PDL release, each wave
// paying its own norm and the ramp of its loads. Warp g of the grid's G
// takes rows g, g + G, ...: the first GEMV_NORMED_REG_ROWS (0 or 1) into registers, the others
// through the warp's ring of GEMV_NORMED_STAGES rows in shared memory, where each lane copies
// its 16-byte chunks of a row (lane + 32 i) with cp.async and reads back only those same
// chunks, so a lane's own wait_group is the only synchronisation the ring needs: no barrier,
// no copy engine. Registers and ring are filled before the PDL wait; each ring row consumed
// asks for the one STAGES rows later. x stays in shared memory (not registers), which keeps a
// block small enough to become resident beside the previous kernel's blocks.
// What it buys is mostly not its own path: one wave of blocks lets its dependents launch at once
// (PDL waits for every block's trigger), so gdn_decode's early loads are done by its release.
// The ring needs at least two stages and 16 warps x 3 rows per SM to keep the stream full
// (the sweeps: docs/TRIED.md, "Decode: row products").
// Dynamic shared memory: GEMV_NORMED_WARPS * GEMV_NORMED_STAGES rows (gemv.rs: stream_ring_bytes),
// and with F8 each lane's block scales of each ring row after them.
// `make_src` gives the normed input's source once the wait is over (stage_rmsnorm's Src).
// With F8, W's `rows` are e4m3 with block scales `scale`, and `tail_rows` bf16 rows (`tail`: an
// FP8 checkpoint's projections kept in bf16, GDN's b|a) follow them in y: warp g < tail_rows
// of the grid takes tail row g, asked for before the wait like the register row.
template <bool F8, typename MakeSrc>
__device__ __forceinline__ void stream_normed(const void* W, const float* scale, const bf16* tail, int tail_rows,
                                              MakeSrc make_src, const bf16* norm_w, bf16* xn_out, float eps,
                                              float* y, int rows) {
    constexpr int CHUNKS = W_CHUNKS(F8, HIDDEN), PER_LANE = W_PER_LANE(F8, HIDDEN), STAGES = GEMV_NORMED_STAGES;
    constexpr int X_CHUNKS = GEMV_CHUNKS(HIDDEN), ROW_BYTES = F8 ? HIDDEN : 2 * HIDDEN;
    constexpr int REG = GEMV_NORMED_REG_ROWS;
    extern __shared__ uint4 ring[];
    __shared__ uint4 xs[X_CHUNKS];
    pdl_launch_next();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long first = (long)blockIdx.x * GEMV_NORMED_WARPS + warp, stride = (long)gridDim.x * GEMV_NORMED_WARPS;
    uint4* mine = ring + warp * STAGES * CHUNKS;
    // FP8: the lane's scales of ring row k at mine_scale[(k % STAGES) * PER_LANE * 32 + i * 32 + lane].
    float* mine_scale = reinterpret_cast<float*>(ring + GEMV_NORMED_WARPS * STAGES * CHUNKS) + warp * STAGES * PER_LANE * 32;
    auto row_chunks = [&](long row) {
        return reinterpret_cast<const uint4*>(static_cast<const char*>(W) + row * ROW_BYTES);
    };
    // The warp's ring row k (its row REG + k) into stage k % STAGES; a group per k, empty past
    // the last row, so that wait_group<STAGES - 1> always means "ring row k has landed".
    auto ask = [&](long k) {
        const long row = first + (k + REG) * stride;
        if (row < rows) {
            const uint4* src = row_chunks(row);
            uint4* dst = mine + (k % STAGES) * CHUNKS;
#pragma unroll
            for (int i = 0; i < PER_LANE; i++) {
                const int c = lane + 32 * i;
                if (c < CHUNKS) {
                    cp_async_stream<L2_NORMED>(dst + c, src + c);
                    if constexpr (F8)
                        cp_async4(mine_scale + (k % STAGES) * PER_LANE * 32 + i * 32 + lane,
                                  block_scale_at<HIDDEN>(scale, row, c));
                }
            }
        }
        cp_async_commit();
    };
    // y[row] = the row . x.
    auto finish = [&](auto chunk, auto scales, long row) {
        const float acc = row_dot<F8, HIDDEN>(chunk, scales, xs);
        if (lane == 0) y[row] = acc;
    };
    NormWeights<HIDDEN, GEMV_NORMED_WARPS * 32> nw;
    nw.load(norm_w);
    uint4 w0[REG ? PER_LANE : 1];
    RowScales<F8, HIDDEN> s0;
    if constexpr (REG) {
        const long row = first < rows ? first : 0;
        const uint4* src = row_chunks(row);
#pragma unroll
        for (int i = 0; i < PER_LANE; i++) {
            const int c = lane + 32 * i;
            if (c < CHUNKS) w0[i] = ld_stream<L2_NORMED>(src + c);
        }
        s0.load(scale, row);
    }
    constexpr int TAIL_PER_LANE = F8 ? W_PER_LANE(false, HIDDEN) : 1;
    uint4 wt[TAIL_PER_LANE];
    if constexpr (F8) {
        if (first < tail_rows) {
            const uint4* src = reinterpret_cast<const uint4*>(tail + first * HIDDEN);
#pragma unroll
            for (int i = 0; i < TAIL_PER_LANE; i++) {
                const int c = lane + 32 * i;
                if (c < W_CHUNKS(false, HIDDEN)) wt[i] = ld_stream<L2_NORMED>(src + c);
            }
        }
    }
    // GEMV_NORMED_EARLY ring rows are asked for before the wait, the others once the norm's
    // reads of the residual are on their way: the loads asked before the wait fill the memory
    // system, and the norm's reads, the first thing after it, queue behind them, delaying every
    // row's use; none early leaves the stream idle during the wait. One of two measured best
    // (docs/TRIED.md, "Decode: row products").
    constexpr int EARLY = GEMV_NORMED_EARLY < STAGES ? GEMV_NORMED_EARLY : STAGES;
#pragma unroll
    for (int k = 0; k < EARLY; k++) ask(k);
    pdl_wait();
    stage_rmsnorm<HIDDEN, GEMV_NORMED_WARPS * 32, F8>(xs, make_src(), nw, xn_out, eps, [&] {
#pragma unroll
        for (int k = EARLY; k < STAGES; k++) ask(k);
    });
    __syncthreads();
    if (REG && first < rows) finish([&](int i) { return w0[i]; }, s0, first);
    if constexpr (F8) {
        // The tail's bf16 rows against the f16 staging (times 2^-8): 8 values a chunk, in f32.
        if (first < tail_rows) {
            float acc = 0.f;
#pragma unroll
            for (int i = 0; i < TAIL_PER_LANE; i++) {
                const int c = lane + 32 * i;
                if (c < W_CHUNKS(false, HIDDEN)) {
                    float wf[8];
                    unpack8(wt[i], wf);
                    const uint4 xv = xs[c];
                    const unsigned xw[4] = {xv.x, xv.y, xv.z, xv.w};
#pragma unroll
                    for (int j = 0; j < 4; j++) {
                        const float2 xf = f16x2_f32(xw[j]);
                        acc = fmaf(wf[2 * j], xf.x, acc);
                        acc = fmaf(wf[2 * j + 1], xf.y, acc);
                    }
                }
            }
            acc = warp_sum(acc) * E4M3_UNIT;
            if (lane == 0) y[rows + first] = acc;
        }
    }
    for (long k = 0, row = first + REG * stride; row < rows; k++, row += stride) {
        cp_async_wait<STAGES - 1>();
        const uint4* src = mine + (k % STAGES) * CHUNKS;
        const float* ss = mine_scale + (k % STAGES) * PER_LANE * 32 + lane;
        finish([&](int i) { return src[lane + 32 * i]; }, [&](int i) { return F8 ? ss[i * 32] : 1.f; }, row);
        // After the sum, which needed this lane's reads of the stage: only then is it refilled.
        ask(k + STAGES);
    }
}
