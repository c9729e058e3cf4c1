// Tensor-core GEMM for prefill: Y[M,N] = A[M,K] . B[N,K]^T with bf16 inputs and f32
// accumulation (mma.sync m16n8k16). B is a weight matrix as the checkpoint stores it (row-major
// [out, in]), so both operands are K-contiguous and both fragments come from plain ldmatrix.
// Tiles of 128 x 128 x 32 per block of 8 warps (each warp 64 x 32), a 4-stage cp.async pipeline,
// shared-memory rows padded to 80 bytes so the 8 row addresses of an ldmatrix hit distinct banks.
// K must be a multiple of 32 (2048, 4096 and 512 here); M and N are guarded.
//
// The grouped variants run the MoE: rows are (token, expert) pairs sorted by expert, a tile
// table says which expert and which sorted rows each block takes, and expert NUM_EXPERTS is
// the shared expert (its weights are passed separately).
// Needs: NUM_EXPERTS.

#define GEMM_BM 128
#define GEMM_BN 128
#define GEMM_BK 32
#define GEMM_STAGES 4
#define GEMM_LD (GEMM_BK + 8)
#define GEMM_THREADS 256
#define GEMM_SMEM (GEMM_STAGES * (GEMM_BM + GEMM_BN) * GEMM_LD * 2)

// Epilogues: f32 store or accumulate; SwiGLU of interleaved gate/up columns to bf16; f32 store
// scaled per row (a pair's routing weight).
#define EPI_F32 0
#define EPI_SWIGLU 1
#define EPI_SCALED 2

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    unsigned r;
    asm("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(r) : "l"(p));
    return r;
}

// 16 bytes global -> shared, bypassing L1; src_bytes 0 writes zeros (rows past the end).
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

__device__ __forceinline__ void ldmatrix_x4(unsigned r[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

__device__ __forceinline__ void mma_bf16(float c[4], const unsigned a[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// The weight row that local column `c` of a block's B tile reads. For SwiGLU the block's 128
// columns are 64 intermediate units: in each group of 16, 8 gate rows then the 8 matching up
// rows, so a warp's n-fragments 2j and 2j+1 hold gate and up of the same units in the same
// registers. `half_n` is the intermediate size (gate rows 0..half_n, up rows half_n..2 half_n).
template <int EPI>
__device__ __forceinline__ int b_row(int n0, int c, int half_n) {
    if constexpr (EPI == EPI_SWIGLU) {
        const int unit = n0 / 2 + (c >> 4) * 8 + (c & 7);
        return (c & 8) ? half_n + unit : unit;
    } else {
        return n0 + c;
    }
}

// One 128 x 128 tile: output rows [row0, row_end) (A row of output row r: rowmap[r] when
// given, else r), columns from n0. N is B's row count.
template <int EPI>
__device__ __forceinline__ void gemm_tile(const bf16* __restrict__ A, const int* __restrict__ rowmap,
                                          const bf16* __restrict__ B, int row0, int row_end, int N, int K, int n0,
                                          float* __restrict__ Y, bf16* __restrict__ H,
                                          const float* __restrict__ scale, int accumulate) {
    extern __shared__ __align__(16) unsigned char gemm_smem[];
    bf16* As = reinterpret_cast<bf16*>(gemm_smem);
    bf16* Bs = As + GEMM_STAGES * GEMM_BM * GEMM_LD;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = (warp >> 2) * 64, wn = (warp & 3) * 32;
    const int half_n = N / 2;

    // Each thread copies two 16-byte chunks of A and two of B per stage: chunk c is row c / 4,
    // columns (c % 4) * 8.
    const bf16* a_src[2];
    const bf16* b_src[2];
    int a_bytes[2], b_bytes[2];
    unsigned a_dst[2], b_dst[2];
#pragma unroll
    for (int i = 0; i < 2; i++) {
        const int c = tid + i * GEMM_THREADS, r = c >> 2, kc = (c & 3) * 8;
        const int row = row0 + r;
        const bool a_ok = row < row_end;
        const long a_row = a_ok ? (rowmap != nullptr ? rowmap[row] : row) : 0;
        a_src[i] = A + a_row * K + kc;
        a_bytes[i] = a_ok ? 16 : 0;
        a_dst[i] = smem_addr(As + r * GEMM_LD + kc);
        const int br = b_row<EPI>(n0, r, half_n);
        const bool b_ok = EPI == EPI_SWIGLU ? (n0 / 2 + (r >> 4) * 8 + (r & 7)) < half_n : br < N;
        b_src[i] = B + (long)(b_ok ? br : 0) * K + kc;
        b_bytes[i] = b_ok ? 16 : 0;
        b_dst[i] = smem_addr(Bs + r * GEMM_LD + kc);
    }
    const unsigned a_stage = GEMM_BM * GEMM_LD * 2, b_stage = GEMM_BN * GEMM_LD * 2;
    auto load = [&](int stage, int kt) {
#pragma unroll
        for (int i = 0; i < 2; i++) {
            cp_async16(a_dst[i] + stage * a_stage, a_src[i] + kt * GEMM_BK, a_bytes[i]);
            cp_async16(b_dst[i] + stage * b_stage, b_src[i] + kt * GEMM_BK, b_bytes[i]);
        }
    };

    float acc[4][4][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0.f;

    const int KT = K / GEMM_BK;
#pragma unroll
    for (int s = 0; s < GEMM_STAGES - 1; s++) {
        if (s < KT) load(s, s);
        cp_async_commit();
    }
    // ldmatrix row addresses: for A, lanes 0-15 rows 0-15 at k 0, lanes 16-31 rows 0-15 at k 8;
    // for B, (lane / 16) picks the n-fragment, (lane / 8) % 2 the k half.
    const unsigned a_frag = smem_addr(As + (wm + (lane & 15)) * GEMM_LD + (lane >> 4) * 8);
    const unsigned b_frag = smem_addr(Bs + (wn + ((lane >> 4) << 3) + (lane & 7)) * GEMM_LD + ((lane >> 3) & 1) * 8);
    for (int kt = 0; kt < KT; kt++) {
        cp_async_wait<GEMM_STAGES - 2>();
        __syncthreads();
        const int next = kt + GEMM_STAGES - 1;
        if (next < KT) load(next % GEMM_STAGES, next);
        cp_async_commit();
        const int stage = kt % GEMM_STAGES;
#pragma unroll
        for (int kk = 0; kk < GEMM_BK; kk += 16) {
            unsigned af[4][4], bf[4][2];
#pragma unroll
            for (int mi = 0; mi < 4; mi++)
                ldmatrix_x4(af[mi], a_frag + stage * a_stage + (mi * 16 * GEMM_LD + kk) * 2);
#pragma unroll
            for (int nj = 0; nj < 2; nj++) {
                unsigned r[4];
                ldmatrix_x4(r, b_frag + stage * b_stage + (nj * 16 * GEMM_LD + kk) * 2);
                bf[2 * nj][0] = r[0];
                bf[2 * nj][1] = r[1];
                bf[2 * nj + 1][0] = r[2];
                bf[2 * nj + 1][1] = r[3];
            }
#pragma unroll
            for (int mi = 0; mi < 4; mi++)
#pragma unroll
                for (int ni = 0; ni < 4; ni++) mma_bf16(acc[mi][ni], af[mi], bf[ni][0], bf[ni][1]);
        }
    }
    cp_async_wait<0>();

    // Fragment (mi, ni) element e: row wm + mi*16 + lane/4 (+8 for e >= 2), column
    // wn + ni*8 + 2*(lane%4) + e%2.
    const int g = lane >> 2, t2 = (lane & 3) * 2;
#pragma unroll
    for (int mi = 0; mi < 4; mi++)
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const int row = row0 + wm + mi * 16 + g + half * 8;
            if (row >= row_end) continue;
            if constexpr (EPI == EPI_SWIGLU) {
#pragma unroll
                for (int nj = 0; nj < 2; nj++) {
                    const int unit = n0 / 2 + ((wn + nj * 16) >> 4) * 8 + t2;
                    if (unit >= half_n) continue;
                    const float* gate = &acc[mi][2 * nj][half * 2];
                    const float* up = &acc[mi][2 * nj + 1][half * 2];
                    const unsigned packed = (unsigned)f2bf(silu(gate[0]) * up[0]) |
                                            ((unsigned)f2bf(silu(gate[1]) * up[1]) << 16);
                    *reinterpret_cast<unsigned*>(H + (long)row * half_n + unit) = packed;
                }
            } else {
                const float s = EPI == EPI_SCALED ? scale[row] : 1.f;
#pragma unroll
                for (int ni = 0; ni < 4; ni++)
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        const int col = n0 + wn + ni * 8 + t2 + e;
                        if (col >= N) continue;
                        float* y = Y + (long)row * N + col;
                        const float v = acc[mi][ni][half * 2 + e] * s;
                        *y = accumulate ? *y + v : v;
                    }
            }
        }
}

// Y (+)= A B^T; grid (ceil(M / 128), ceil(N / 128)).
extern "C" __global__ void __launch_bounds__(GEMM_THREADS)
gemm_bf16(const bf16* __restrict__ A, const bf16* __restrict__ B, float* __restrict__ Y, int M, int N, int K,
          int accumulate) {
    pdl_launch_next();
    pdl_wait();
    gemm_tile<EPI_F32>(A, nullptr, B, blockIdx.x * GEMM_BM, M, N, K, blockIdx.y * GEMM_BN, Y, nullptr, nullptr,
                       accumulate);
}

// A block of the grouped GEMM: which expert and which sorted rows (tiles[i] = expert, first
// row, end row, unused), and that expert's weights.
struct ExpertTile {
    int expert, row0, row_end;
    const bf16* b;
};

__device__ __forceinline__ bool expert_tile(const int4* __restrict__ tiles, const int* __restrict__ ntiles,
                                            const bf16* experts, const bf16* shared, long expert_elems,
                                            ExpertTile& t) {
    if ((int)blockIdx.x >= *ntiles) return false;
    const int4 v = tiles[blockIdx.x];
    t.expert = v.x;
    t.row0 = v.y;
    t.row_end = v.z;
    t.b = v.x == NUM_EXPERTS ? shared : experts + v.x * expert_elems;
    return true;
}

// h[p] = silu(x[token(p)] . gate_e) * (x[token(p)] . up_e) for every sorted pair p, bf16.
// gate_up: [NUM_EXPERTS][2 inter][K], shared_gate_up: [2 inter][K]. grid (max tiles, 2 inter / 128).
extern "C" __global__ void __launch_bounds__(GEMM_THREADS)
gemm_moe_gate_up(const bf16* __restrict__ x, const int* __restrict__ sorted_token, const bf16* __restrict__ gate_up,
                 const bf16* __restrict__ shared_gate_up, const int4* __restrict__ tiles,
                 const int* __restrict__ ntiles, bf16* __restrict__ h, int inter, int K) {
    pdl_launch_next();
    pdl_wait();
    ExpertTile t;
    if (!expert_tile(tiles, ntiles, gate_up, shared_gate_up, 2L * inter * K, t)) return;
    gemm_tile<EPI_SWIGLU>(x, sorted_token, t.b, t.row0, t.row_end, 2 * inter, K, blockIdx.y * GEMM_BN, nullptr, h,
                          nullptr, 0);
}

// out[p] = weight[p] * (down_e . h[p]) for every sorted pair p, f32.
// down: [NUM_EXPERTS][N][inter], shared_down: [N][inter]. grid (max tiles, N / 128).
extern "C" __global__ void __launch_bounds__(GEMM_THREADS)
gemm_moe_down(const bf16* __restrict__ h, const bf16* __restrict__ down, const bf16* __restrict__ shared_down,
              const int4* __restrict__ tiles, const int* __restrict__ ntiles, const float* __restrict__ weight,
              float* __restrict__ out, int N, int inter) {
    pdl_launch_next();
    pdl_wait();
    ExpertTile t;
    if (!expert_tile(tiles, ntiles, down, shared_down, (long)N * inter, t)) return;
    gemm_tile<EPI_SCALED>(h, nullptr, t.b, t.row0, t.row_end, N, inter, blockIdx.y * GEMM_BN, out, nullptr, weight,
                          0);
}
