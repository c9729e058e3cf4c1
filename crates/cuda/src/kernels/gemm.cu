// Tensor-core GEMM for prefill: Y[M,N] = A[M,K] . B[N,K]^T with bf16 inputs and f32
// accumulation, on Hopper's warpgroup MMA (wgmma, operands read straight from shared memory).
// B is a weight matrix as the checkpoint stores it (row-major [out, in]), so both operands are
// K-major. A block computes a 128 x 256 tile with two warpgroups (64 rows each, m64n256k16);
// K moves in steps of 64 through a 4-stage ring; the grid is persistent (one block per SM,
// taking tile after tile, the ring running on across tiles). The tensor memory accelerator
// (TMA) brings B (the weights) and, where its rows are consecutive, A (the activations): one
// box per operand and K step, asked for by thread 0 and counted in on the stage's mbarrier.
// SwiGLU's A rows are tokens picked through a row map and come by cp.async, each thread its
// chunks. (One box per tile and operand: boxes of a few rows each ran the expert GEMMs slower
// than cp.async; the loaders measured: docs/TRIED.md, "Prefill: dense and expert GEMMs".) Each
// stage holds 128-byte rows in the 128-byte swizzle (16-byte chunk c of row r stored at chunk
// c ^ (r % 8)), the layout the wgmma descriptors name, so the tensor cores read it without
// bank conflicts.
// The tile is wide because the products are bound by the bytes moved from L2 to the SMs, not by
// the MMAs: 128 x 128 tiles of the expert GEMMs moved ~9 TB/s at 8K tokens; 128 x 256 moves a
// third less per flop.
// M, N and K are guarded (K a multiple of 8: a TMA box reads zeros outside its tensor, and the
// cp.async loader zero-fills rows past a tile's end and chunks past K).
// The grouped variants run the MoE over (token, expert) pairs sorted by expert: a tile table
// says which expert and which sorted rows each tile takes; expert NUM_EXPERTS is the shared
// expert (its weights are passed separately).
// What earlier kernels wrote (the tile table and its count, the row map, the routing weights) is
// read with __ldcg, from L2: a block starts before the previous kernel ends (programmatic
// dependent launch), so that data is not read-only for the kernel's lifetime, which the
// read-only path (ld.global.nc, what a const __restrict__ load becomes) assumes.
// Needs: NUM_EXPERTS.

#define GEMM_BM 128
#define GEMM_BN 256
#define GEMM_BK 64
#define GEMM_STAGES 4
#define GEMM_THREADS 256
#define GEMM_STAGE_BYTES ((GEMM_BM + GEMM_BN) * GEMM_BK * 2)
// The swizzle atoms must start on 1024-byte boundaries: the extra 1 KB lets the kernel align.
#define GEMM_SMEM (GEMM_STAGES * GEMM_STAGE_BYTES + 1024)

// Epilogues: f32 store or accumulate; SwiGLU of interleaved gate/up columns to bf16; bf16 store
// scaled per row (a pair's routing weight: the MoE pair outputs, which moe_combine sums in f32;
// in f32 they were 600 MB per layer at 8K tokens, written here and read back there).
#define EPI_F32 0
#define EPI_SWIGLU 1
#define EPI_SCALED 2

// B's tile of one K step, GEMM_BN rows x GEMM_BK columns, is one TMA box (gemm.rs builds the
// maps). A plain weight is (K, rows, matrices, 1, 1): the box is the tile's 256 consecutive
// rows. For SwiGLU the block's 256 columns are 128 intermediate units: in each group of 16, 8
// gate rows then the 8 matching up rows, so accumulator chunks 2j and 2j+1 hold gate and up of
// the same units in the same registers; the map is (K, 8 rows, gate|up, units / 8, matrices)
// and the box (64, 8, 2, 16, 1) lands the rows in that order. Rows past the weights read zeros.
template <int EPI>
__device__ __forceinline__ void tma_load_b(unsigned dst, const TensorMap* map, int k0, int n0, int e, unsigned bar) {
    if constexpr (EPI == EPI_SWIGLU)
        tma_load_5d(dst, map, k0, 0, 0, n0 / 16, e, bar);
    else
        tma_load_5d(dst, map, k0, n0, e, 0, 0, bar);
}

// One output tile: rows [row0, row_end) (SwiGLU's A row of output row r: rowmap[r]; the
// others' is r), columns from n0, of the weights `map` names (matrix e of it: N rows of K).
struct GemmJob {
    int row0, row_end, n0, e;
    const TensorMap* map;
};

// The output row of a thread's accumulator half (0: d[4i], d[4i + 1]; 1: d[4i + 2], d[4i + 3]).
__device__ __forceinline__ int gemm_out_row(const GemmJob& j, int wg, int warp, int lane, int half) {
    return j.row0 + wg * 64 + (warp & 3) * 16 + (lane >> 2) + half * 8;
}

// The f32 epilogue: store, or add to what Y holds. Accumulator chunk i (columns 8i..8i+7) of
// warp w: d[4i + e] is row 16w + lane/4 (+8 for e >= 2), column 8i + 2*(lane%4) + e%2. A
// lane's column pair is 8 bytes, so 4 lanes fill a 32-byte sector.
template <int BN>
__device__ __forceinline__ void gemm_store_f32(const float d[BN / 2], const GemmJob& j, int N, float* __restrict__ Y,
                                               int accumulate, int wg, int warp, int lane) {
    const int t2 = (lane & 3) * 2;
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int row = gemm_out_row(j, wg, warp, lane, half);
        if (row >= j.row_end) continue;
#pragma unroll
        for (int i = 0; i < BN / 8; i++) {
            const int col = j.n0 + i * 8 + t2;
            float* y = Y + (long)row * N + col;
            float2 v = make_float2(d[4 * i + half * 2], d[4 * i + half * 2 + 1]);
            if ((N & 1) == 0 && col + 1 < N) {
                // Both columns in one 8-byte store (N even keeps it aligned).
                if (accumulate) {
                    const float2 old = *reinterpret_cast<const float2*>(y);
                    v.x += old.x;
                    v.y += old.y;
                }
                *reinterpret_cast<float2*>(y) = v;
            } else {
                if (col < N) y[0] = accumulate ? y[0] + v.x : v.x;
                if (col + 1 < N) y[1] = accumulate ? y[1] + v.y : v.y;
            }
        }
    }
}

// The bf16 epilogues go through shared memory: each thread's packed column pairs land in its
// warpgroup's 64 staged rows, then every lane stores 16 consecutive bytes of a row. Stored
// from registers, a warp's 4-byte pairs covered 8 rows x 16 bytes, half of each 32-byte
// sector, in 64 stores per thread: in gemm_moe_down (K = 512, 8 steps a tile) that epilogue
// held ~40% of the kernel's stall samples (Nsight Compute). `staging` is 64 rows of
// GEMM_OUT_STRIDE<EPI> bytes (gemm_jobs lends it a stage the tile is done with).
// EPI_SWIGLU: silu(gate) * up of the interleaved gate/up columns, GEMM_BN / 2 units of H's
// N / 2 columns per tile. EPI_SCALED: the N columns scaled per row (row_scale: this thread's
// two rows, gemm_row_scales). The launchers check that H's columns are a multiple of 8 (whole
// 16-byte chunks) and H 16-byte aligned.
template <int EPI>
constexpr int GEMM_OUT_COLS = EPI == EPI_SWIGLU ? GEMM_BN / 2 : GEMM_BN;
// 16 bytes past each row put the 8 rows of a warp's pair stores 4 banks apart: no conflict.
template <int EPI>
constexpr int GEMM_OUT_STRIDE = GEMM_OUT_COLS<EPI> * 2 + 16;
static_assert(64 * GEMM_OUT_STRIDE<EPI_SCALED> <= GEMM_STAGE_BYTES, "a warpgroup's staged rows fit a stage");
template <int EPI>
__device__ __forceinline__ void gemm_store_bf16(const float d[GEMM_BN / 2], const GemmJob& j, int N,
                                                bf16* __restrict__ H, const float (&row_scale)[2], int wg, int warp,
                                                int lane, unsigned staging) {
    constexpr int STRIDE = GEMM_OUT_STRIDE<EPI>, CHUNKS = GEMM_OUT_COLS<EPI> / 8;
    const int t2 = (lane & 3) * 2;
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const unsigned at = staging + ((warp & 3) * 16 + (lane >> 2) + half * 8) * STRIDE + t2 * 2;
        if (gemm_out_row(j, wg, warp, lane, half) >= j.row_end) continue;
        if constexpr (EPI == EPI_SWIGLU) {
#pragma unroll
            for (int jj = 0; jj < GEMM_BN / 16; jj++) {
                const float* gate = &d[8 * jj + half * 2];
                const float* up = &d[8 * jj + 4 + half * 2];
                st_shared_u32(at + jj * 16, (unsigned)f2bf(silu(gate[0]) * up[0]) |
                                                ((unsigned)f2bf(silu(gate[1]) * up[1]) << 16));
            }
        } else {
            const float s = row_scale[half];
#pragma unroll
            for (int i = 0; i < GEMM_BN / 8; i++) {
                const float* v = &d[4 * i + half * 2];
                st_shared_u32(at + i * 16, (unsigned)f2bf(v[0] * s) | ((unsigned)f2bf(v[1] * s) << 16));
            }
        }
    }
    // The warpgroup's 128 threads (named barrier 1 + wg, a constant: a register operand makes
    // ptxas reserve all 16) have staged their rows.
    if (wg == 0)
        asm volatile("bar.sync 1, 128;" ::: "memory");
    else
        asm volatile("bar.sync 2, 128;" ::: "memory");
    const int cols = EPI == EPI_SWIGLU ? N / 2 : N, col0 = EPI == EPI_SWIGLU ? j.n0 / 2 : j.n0;
#pragma unroll 4
    for (int c = (warp & 3) * 32 + lane; c < 64 * CHUNKS; c += 128) {
        const int r = c / CHUNKS, col = col0 + (c % CHUNKS) * 8, row = j.row0 + wg * 64 + r;
        if (row < j.row_end && col < cols)
            *reinterpret_cast<uint4*>(H + (long)row * cols + col) = ld_shared_v4(staging + r * STRIDE + (c % CHUNKS) * 16);
    }
}

// The scales of the two rows a thread stores in a tile, asked for when the tile starts: read in
// the epilogue they were its largest stall (ncu, gemm_moe_down at 8K: 4.7% of the samples
// waited on them).
__device__ __forceinline__ void gemm_row_scales(const float* __restrict__ scale, const GemmJob& j, int wg, int warp,
                                                int lane, float (&row_scale)[2]) {
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int row = gemm_out_row(j, wg, warp, lane, half);
        row_scale[half] = row < j.row_end ? __ldcg(scale + row) : 0.f;
    }
}

// The product over every job a source names. The block is persistent: it takes jobs
// blockIdx.x, blockIdx.x + gridDim.x, ... and its loads run two K steps ahead across job
// boundaries, so the next tile's first stages are in flight while this tile's epilogue stores
// (at K = 512, the experts' down projection, a tile is only 8 steps: the pipeline's fill and
// the epilogue were about half of its time when each block took one tile).
// Jobs: count() and get(j, job) (j < count).
// A's tile is rows of the activations: for SwiGLU the tokens of the sorted pairs, gathered
// through `rowmap` by cp.async (each thread its chunks); for the others consecutive rows, one
// TMA box of `a_map` (A unused) beside B's.
// BN: the tile's columns, GEMM_BN or (the dense product only) 128, B's box as many rows.
template <int EPI, int BN, class Jobs>
__device__ __forceinline__ void gemm_jobs(const Jobs& jobs, const bf16* __restrict__ A, const TensorMap* a_map,
                                          const int* __restrict__ rowmap, int N, int K, float* __restrict__ Y,
                                          bf16* __restrict__ H, const float* __restrict__ scale, int accumulate) {
    constexpr bool A_TMA = EPI != EPI_SWIGLU;
    constexpr int A_CHUNKS = A_TMA ? 1 : GEMM_BM * 8 / GEMM_THREADS;  // 16-byte chunks per thread per stage
    static_assert(BN == GEMM_BN || (BN == 128 && EPI == EPI_F32), "narrow tiles are the dense product's");
    constexpr unsigned STAGE_TX = ((A_TMA ? GEMM_BM : 0) + BN) * GEMM_BK * 2;
    extern __shared__ __align__(16) unsigned char gemm_smem[];
    // One mbarrier per stage: its phase completes when the stage's boxes have landed.
    __shared__ __align__(8) unsigned long long stage_bar[GEMM_STAGES];
    const unsigned base = (smem_u32(gemm_smem) + 1023) & ~1023u;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = warp >> 2;
    const int KT = (K + GEMM_BK - 1) / GEMM_BK;
    const int count = jobs.count();
    auto bar = [&](int stage) { return smem_u32(&stage_bar[stage]); };
    if (tid == 0) {
#pragma unroll
        for (int i = 0; i < GEMM_STAGES; i++) mbar_init(bar(i), 1);
        // The TMA (the async proxy) must see the barriers initialised.
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        fence_async_shared();
    }
    __syncthreads();

    // cp.async's A: chunk c of the tile is row c / 8, 16-byte column c % 8, stored swizzled (as
    // the TMA stores its boxes); a thread's chunks are the same in every stage and job.
    unsigned a_dst[A_CHUNKS];
#pragma unroll
    for (int i = 0; i < A_CHUNKS; i++) {
        const int c = tid + i * GEMM_THREADS, r = c >> 3;
        a_dst[i] = r * 128 + (((c & 7) ^ (r & 7)) << 4);
    }

    // The loader: the job and K step it loads next, and for cp.async that job's A chunks at K
    // step 0 (a bit of a_ok clear: a row past the tile's end, zero-filled).
    int l_job = blockIdx.x, l_kt = 0;
    const bf16* a_src[A_CHUNKS];
    unsigned a_ok = 0;
    GemmJob l;
    auto start_job = [&]() {
        if (l_job >= count) return;
        jobs.get(l_job, l);
        a_ok = 0;
        if constexpr (!A_TMA) {
#pragma unroll
            for (int i = 0; i < A_CHUNKS; i++) {
                const int c = tid + i * GEMM_THREADS, row = l.row0 + (c >> 3);
                const bool ok = row < l.row_end;
                const long a_row = ok ? __ldcg(rowmap + row) : 0;
                a_src[i] = A + a_row * K + (c & 7) * 8;
                a_ok |= (unsigned)ok << i;
            }
        }
    };
    // Issues the loader's next K step into `stage` (nothing past the last job) and moves on.
    auto load_next = [&](int stage) {
        if (l_job >= count) return;
        const unsigned sa = base + stage * GEMM_STAGE_BYTES, sb = sa + GEMM_BM * GEMM_BK * 2;
        const int k0 = l_kt * GEMM_BK;
        if constexpr (!A_TMA) {
#pragma unroll
            for (int i = 0; i < A_CHUNKS; i++) {
                const bool ok = (a_ok >> i & 1) && k0 + ((tid + i * GEMM_THREADS) & 7) * 8 < K;
                cp_async16(sa + a_dst[i], a_src[i] + (ok ? k0 : 0), ok);
            }
        }
        if (tid == 0) {
            mbar_arrive_expect_tx(bar(stage), STAGE_TX);
            if constexpr (A_TMA) tma_load_5d(sa, a_map, k0, l.row0, 0, 0, 0, bar(stage));
            tma_load_b<EPI>(sb, l.map, k0, l.n0, l.e, bar(stage));
        }
        if (++l_kt == KT) {
            l_kt = 0;
            l_job += gridDim.x;
            start_job();
        }
    };

    start_job();
    int step = 0;  // K steps consumed by this block, over all its jobs: the ring position
    load_next(0);
    cp_async_commit();
    load_next(1);
    cp_async_commit();
    GemmJob next;
    if ((int)blockIdx.x < count) jobs.get(blockIdx.x, next);
    for (int job = blockIdx.x; job < count; job += gridDim.x) {
        // The following job's table entry is read now and used a tile later (no stall).
        const GemmJob j = next;
        if (job + (int)gridDim.x < count) jobs.get(job + gridDim.x, next);
        // A warpgroup whose 64 rows are all past the tile's end (an expert's last tile) skips
        // its MMAs: the tensor cores then serve the other warpgroup alone.
        const bool live_rows = j.row0 + wg * 64 < j.row_end;
        float row_scale[2] = {0.f, 0.f};
        if constexpr (EPI == EPI_SCALED) gemm_row_scales(scale, j, wg, warp, lane, row_scale);
        float d[BN / 2];
#pragma unroll
        for (int i = 0; i < BN / 2; i++) d[i] = 0.f;
        // Loads run two steps ahead: the stage a load overwrites was read by the MMAs of two
        // steps back, which every warpgroup has waited for before the barrier that precedes it.
        // Load number L fills stage L % GEMM_STAGES in that stage's phase L / GEMM_STAGES, and
        // step s consumes load s.
        for (int kt = 0; kt < KT; kt++, step++) {
            cp_async_wait<1>();
            mbar_wait(bar(step % GEMM_STAGES), (step / GEMM_STAGES) & 1);
            fence_async_shared();
            __syncthreads();
            load_next((step + 2) % GEMM_STAGES);
            cp_async_commit();
            const unsigned sa = base + (step % GEMM_STAGES) * GEMM_STAGE_BYTES;
            const unsigned sb = sa + GEMM_BM * GEMM_BK * 2;
            const u64 da = smem_desc(sa + wg * 64 * 128), db = smem_desc(sb);
            if (live_rows) {
                wgmma_fence();
#pragma unroll
                for (int k = 0; k < GEMM_BK / 16; k++) {
                    if constexpr (BN == 128)
                        wgmma_m64n128k16(d, da + 2 * k, db + 2 * k, 1);
                    else
                        wgmma_m64n256k16(d, da + 2 * k, db + 2 * k, 1);
                }
                wgmma_commit();
                wgmma_wait<1>();
            }
        }
        wgmma_wait<0>();
        if constexpr (EPI == EPI_F32) {
            gemm_store_f32<BN>(d, j, N, Y, accumulate, wg, warp, lane);
        } else {
            // The loads in flight fill the stages of steps `step` and `step + 1`; those of the
            // tile's last two steps are free once both warpgroups' MMAs are done with them, and
            // stay free until the next step's barrier: warpgroup w stages in the one w + 1 back.
            __syncthreads();
            gemm_store_bf16<EPI>(d, j, N, H, row_scale, wg, warp, lane,
                                 base + ((step + GEMM_STAGES - 1 - wg) % GEMM_STAGES) * GEMM_STAGE_BYTES);
        }
    }
    cp_async_wait<0>();
}

// The dense product's jobs: column tiles (BN wide) outer, row tiles inner, so the blocks running
// at one time share a few column tiles of B (and all of A, which L2 holds at 8K tokens).
template <int BN>
struct DenseJobs {
    const TensorMap* B;
    int M, row_tiles, col_tiles;
    __device__ int count() const { return row_tiles * col_tiles; }
    __device__ void get(int j, GemmJob& job) const {
        job.row0 = (j % row_tiles) * GEMM_BM;
        job.row_end = M;
        job.n0 = (j / row_tiles) * BN;
        job.e = 0;
        job.map = B;
    }
};

template <int BN>
__device__ __forceinline__ void gemm_dense(const TensorMap* A, const TensorMap* B, float* __restrict__ Y, int M, int N,
                                           int K, int accumulate) {
    pdl_launch_next();
    pdl_wait();
    const DenseJobs<BN> jobs{B, M, (M + GEMM_BM - 1) / GEMM_BM, (N + BN - 1) / BN};
    gemm_jobs<EPI_F32, BN>(jobs, nullptr, A, nullptr, N, K, Y, nullptr, nullptr, accumulate);
}

// Y (+)= A B^T; a persistent grid of at most ceil(M / 128) * ceil(N / 256) blocks.
extern "C" __global__ void __launch_bounds__(GEMM_THREADS)
gemm_bf16(const __grid_constant__ TensorMap A, const __grid_constant__ TensorMap B, float* __restrict__ Y, int M, int N,
          int K, int accumulate) {
    gemm_dense<GEMM_BN>(&A, &B, Y, M, N, K, accumulate);
}

// The same in 128 x 128 tiles, for products of few tiles: at 1,024 rows out_proj (N 2,048) is
// 64 tiles of 256 columns on 132 SMs, the router (N 257) 16, so half the SMs or more idle; in
// tiles half as wide they are twice as many at half the work each. B's map has boxes of 128
// rows (gemm.rs).
extern "C" __global__ void __launch_bounds__(GEMM_THREADS)
gemm_bf16_n128(const __grid_constant__ TensorMap A, const __grid_constant__ TensorMap B, float* __restrict__ Y, int M,
               int N, int K, int accumulate) {
    gemm_dense<128>(&A, &B, Y, M, N, K, accumulate);
}

// The grouped products' jobs: the tile table (tiles[i] = expert, first sorted row, end row,
// unused; *ntiles of them) times the column tiles, column tiles inner, so the blocks running at
// one time read a row tile's A from DRAM once (the down projection's A, the SwiGLU outputs, is
// 75 MB at 8K tokens: more than L2 holds) and an expert's weights while its 2-3 row tiles run.
struct ExpertJobs {
    const int4* tiles;
    const TensorMap *experts, *shared;
    int tile_count, col_tiles;
    __device__ int count() const { return tile_count * col_tiles; }
    __device__ void get(int j, GemmJob& job) const {
        const int4 v = __ldcg(tiles + j / col_tiles);
        job.row0 = v.y;
        job.row_end = v.z;
        job.n0 = (j % col_tiles) * GEMM_BN;
        const bool sh = v.x == NUM_EXPERTS;
        job.e = sh ? 0 : v.x;
        job.map = sh ? shared : experts;
    }
};

// h[p] = silu(x[token(p)] . gate_e) * (x[token(p)] . up_e) for every sorted pair p, bf16.
// gate_up: [NUM_EXPERTS][2 inter][K], shared_gate_up: [2 inter][K], as tensor maps (gemm.rs).
// A persistent grid.
extern "C" __global__ void __launch_bounds__(GEMM_THREADS)
gemm_moe_gate_up(const bf16* __restrict__ x, const int* __restrict__ sorted_token,
                 const __grid_constant__ TensorMap gate_up, const __grid_constant__ TensorMap shared_gate_up,
                 const int4* __restrict__ tiles, const int* __restrict__ ntiles, bf16* __restrict__ h, int inter,
                 int K) {
    pdl_launch_next();
    pdl_wait();
    const ExpertJobs jobs{tiles, &gate_up, &shared_gate_up, __ldcg(ntiles), (2 * inter + GEMM_BN - 1) / GEMM_BN};
    gemm_jobs<EPI_SWIGLU, GEMM_BN>(jobs, x, nullptr, sorted_token, 2 * inter, K, nullptr, h, nullptr, 0);
}

// out[p] = bf16(weight[p] * (down_e . h[p])) for every sorted pair p.
// h: [pairs][inter], down: [NUM_EXPERTS][N][inter], shared_down: [N][inter], as tensor maps
// (gemm.rs). A persistent grid.
extern "C" __global__ void __launch_bounds__(GEMM_THREADS)
gemm_moe_down(const __grid_constant__ TensorMap h, const __grid_constant__ TensorMap down,
              const __grid_constant__ TensorMap shared_down, const int4* __restrict__ tiles,
              const int* __restrict__ ntiles, const float* __restrict__ weight, bf16* __restrict__ out, int N,
              int inter) {
    pdl_launch_next();
    pdl_wait();
    const ExpertJobs jobs{tiles, &down, &shared_down, __ldcg(ntiles), (N + GEMM_BN - 1) / GEMM_BN};
    gemm_jobs<EPI_SCALED, GEMM_BN>(jobs, nullptr, &h, nullptr, N, inter, nullptr, out, weight, 0);
}

// An FP8 model's weights as these GEMMs read them: out[r][c] = bf16(e4m3 w[r][c] * scale of its
// block), for a matrix (or stacked matrices) flattened to [rows][cols] whose scales are
// [ceil(rows / W_BLOCK_ROWS)][ceil(cols / W_BLOCK_COLS)] (stacked matrices have whole row
// blocks each). A chunk's layer is dequantised before its products: the bf16 tiles are what
// the tensor cores take, at the cost of writing them (docs/PERFORMANCE.md, FP8 prefill).
// 16 values per thread and step.
extern "C" __global__ void dequant_e4m3(const uint4* __restrict__ w, const float* __restrict__ scale,
                                        uint4* __restrict__ out, long long chunks, int cols) {
    pdl_launch_next();
    pdl_wait();
    const int scale_cols = (cols + W_BLOCK_COLS - 1) / W_BLOCK_COLS, chunks_per_row = cols / 16;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < chunks;
         i += (long long)gridDim.x * blockDim.x) {
        const long long row = i / chunks_per_row;
        const int col = (int)(i % chunks_per_row) * 16;
        const float s = scale[(row / W_BLOCK_ROWS) * scale_cols + col / W_BLOCK_COLS];
        const uint4 v = w[i];
        const unsigned ws[4] = {v.x, v.y, v.z, v.w};
        unsigned o[8];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            unsigned lo16, hi16;
            e4m3x4_f16x4(ws[j], lo16, hi16);
            const float2 lo = f16x2_f32(lo16), hi = f16x2_f32(hi16);
            o[2 * j] = (unsigned)f2bf(lo.x * s) | ((unsigned)f2bf(lo.y * s) << 16);
            o[2 * j + 1] = (unsigned)f2bf(hi.x * s) | ((unsigned)f2bf(hi.y * s) << 16);
        }
        out[2 * i] = make_uint4(o[0], o[1], o[2], o[3]);
        out[2 * i + 1] = make_uint4(o[4], o[5], o[6], o[7]);
    }
}
