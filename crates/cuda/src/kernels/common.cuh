// Shared by every kernel family; prepended to each source before NVRTC compiles it.
// bf16 is handled as raw 16-bit patterns so that no CUDA header is needed.
typedef unsigned short bf16;
typedef unsigned long long u64;
#define INFINITY __int_as_float(0x7f800000)

__device__ __forceinline__ float bf2f(bf16 v) { return __uint_as_float(((unsigned)v) << 16); }

// Round to nearest even, NaN kept quiet: the same rounding as torch's float -> bfloat16.
__device__ __forceinline__ bf16 f2bf(float f) {
    unsigned u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (bf16)0x7fc0;
    u += 0x7fffu + ((u >> 16) & 1u);
    return (bf16)(u >> 16);
}

// The 8 bf16 values packed in one 16-byte load.
__device__ __forceinline__ void unpack8(const uint4 v, float out[8]) {
    const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; i++) {
        out[2 * i] = __uint_as_float(w[i] << 16);
        out[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
    }
}

__device__ __forceinline__ float dot8(const uint4 a, const uint4 b) {
    float x[8], y[8];
    unpack8(a, x);
    unpack8(b, y);
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < 8; i++) s = fmaf(x[i], y[i], s);
    return s;
}

// ---- FP8 weights (a model compiled with WEIGHT_FP8): e4m3 values, 16 to a 16-byte chunk, each
// W_BLOCK_ROWS x W_BLOCK_COLS block of a matrix with one f32 scale (the checkpoint's
// weight_scale_inv: value = e4m3 * scale). The decode products dot them with an input staged
// as f16 (the bf16 value times 2^-8, f16_input), in f16x2 pairs, and scale each chunk's sum in f32.
#ifndef WEIGHT_FP8
#define WEIGHT_FP8 0
#endif
#ifndef W_BLOCK_ROWS
#define W_BLOCK_ROWS 128
#define W_BLOCK_COLS 128
#endif

// Four e4m3 bytes of `w` as two f16 pairs (bytes 0,1 in `lo`, 2,3 in `hi`; the lower byte in
// the lower half), exactly: every e4m3 value is an f16 value. One conversion per pair.
__device__ __forceinline__ void e4m3x4_f16x4(unsigned w, unsigned& lo, unsigned& hi) {
    asm("{.reg .b16 a, b; mov.b32 {a, b}, %2; cvt.rn.f16x2.e4m3x2 %0, a; cvt.rn.f16x2.e4m3x2 %1, b;}"
        : "=r"(lo), "=r"(hi)
        : "r"(w));
}
__device__ __forceinline__ unsigned hfma2(unsigned a, unsigned b, unsigned c) {
    unsigned d;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}
__device__ __forceinline__ float2 f16x2_f32(unsigned v) {
    float lo, hi;
    asm("{.reg .b16 l, h; mov.b32 {l, h}, %2; cvt.f32.f16 %0, l; cvt.f32.f16 %1, h;}" : "=f"(lo), "=f"(hi) : "r"(v));
    return make_float2(lo, hi);
}
// Two floats as an f16 pair (round to nearest even), `lo` in the low half.
__device__ __forceinline__ unsigned f32x2_f16x2(float lo, float hi) {
    unsigned d;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
    return d;
}
// An FP8 product's input is staged as f16 times 2^-8 (E4M3_UNIT undoes it once per row): a
// chunk's f16 sums of 8 products of weights up to 448 then stay finite for inputs up to ~4,600
// in magnitude, and the power of two changes no bit of a bf16 input's value (inputs below
// ~0.004 lose low bits to f16's subnormals, far below the sums' rounding).
#define E4M3_UNIT 256.f
__device__ __forceinline__ unsigned f16_input(float lo, float hi) {
    return f32x2_f16x2(lo * (1.f / E4M3_UNIT), hi * (1.f / E4M3_UNIT));
}
// 8 bf16 (one 16-byte chunk) as 8 staged f16 inputs.
__device__ __forceinline__ uint4 bf16x8_f16x8(const uint4 v) {
    const unsigned w[4] = {v.x, v.y, v.z, v.w};
    unsigned o[4];
#pragma unroll
    for (int i = 0; i < 4; i++) o[i] = f16_input(__uint_as_float(w[i] << 16), __uint_as_float(w[i] & 0xffff0000u));
    return make_uint4(o[0], o[1], o[2], o[3]);
}
// Chunk `w` of 16 e4m3 weights dotted with its 16 staged inputs (x0, x1: 8 f16 each), in units
// of 2^-8 (E4M3_UNIT): two f16x2 chains of four, summed in f32.
__device__ __forceinline__ float dot16_e4m3(const uint4 w, const uint4 x0, const uint4 x1) {
    const unsigned ws[4] = {w.x, w.y, w.z, w.w};
    const unsigned xs[8] = {x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w};
    unsigned a = 0u, b = 0u;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        unsigned lo, hi;
        e4m3x4_f16x4(ws[i], lo, hi);
        a = hfma2(lo, xs[2 * i], a);
        b = hfma2(hi, xs[2 * i + 1], b);
    }
    const float2 fa = f16x2_f32(a), fb = f16x2_f32(b);
    return (fa.x + fa.y) + (fb.x + fb.y);
}

// Where the scale of weight chunk `chunk` (16 values) of row `row` of a COLS-column FP8 matrix
// is: scales row-major, [ceil(rows / W_BLOCK_ROWS)][ceil(COLS / W_BLOCK_COLS)], ragged last
// blocks included.
template <int COLS>
__device__ __forceinline__ const float* block_scale_at(const float* s, long row, int chunk) {
    return s + (row / W_BLOCK_ROWS) * ((COLS + W_BLOCK_COLS - 1) / W_BLOCK_COLS) + chunk * 16 / W_BLOCK_COLS;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Sum over the whole block; every thread gets the result. `scratch` holds 32 floats.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
    v = warp_sum(v);
    __syncthreads();
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    float t = lane < warps ? scratch[lane] : 0.f;
    return warp_sum(t);
}

__device__ __forceinline__ float silu(float x) { return x / (1.f + __expf(-x)); }
__device__ __forceinline__ float sigmoid(float x) { return 1.f / (1.f + __expf(-x)); }

// The key an argmax maximises (atomicMax over u64): the float's bits mapped to an unsigned
// order in the high word, the complement of the index in the low word, so the largest value
// wins and the lowest index wins a tie. NaN is the caller's to leave out.
__device__ __forceinline__ u64 argmax_key(float v, int i) {
    unsigned u = __float_as_uint(v);
    u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    return ((u64)u << 32) | (u64)(0xffffffffu - (unsigned)i);
}

// Programmatic dependent launch (PDL). Every kernel first lets the next kernel in the stream
// begin launching, may then load what no earlier kernel writes (weights), and calls pdl_wait()
// before it reads or writes any activation: that waits until the previous kernel has finished
// and its writes are visible. Without the launch attribute both are no-ops.
// A decode kernel may also read before the wait what only an earlier step wrote (its own
// layer's recurrent state, the old keys), at L2 (__ldcg, cp.async.cg): an L1 line may be older.
// Not the position, which finish_step writes: a plain early load of it was stale on the H200.
// ptxas moves a read-only-path load (ld.global.nc: __ldg, or a `const __restrict__` pointer)
// across griddepcontrol.wait either way, as if nothing wrote its data while the kernel runs:
// it sank every row product's weight prefetch below the wait and hoisted gdn_decode's read of
// the position above it. So what is asked for before the wait is read with ld_early (L2, a load
// ptxas keeps in place), and a value another kernel writes is read after it with __ldcg: not
// through a plain pointer, whose load may be served by an L1 line that an earlier launch left
// on this SM (on the H200 gdn_decode's conv history, read with plain loads, once gave another
// decode than read at L2, which is what the position and the other blocks' writes say). Reads
// through `const __restrict__` pointers (ld.global.nc, also cached in L1) remain in the decode step:
// the attention kernels' q, partials and position, moe_gate_up's x, the downs' h, the final
// rmsnorm's x, and argmax's and finish_step's plain reads; moving all of them to L2 gave the
// same bits and a markedly slower step (docs/TRIED.md, "l2-everywhere"), so they stay until one
// is shown stale. The pdl_order test checks the compiled code (SASS) for the first rule.
__device__ __forceinline__ uint4 ld_early(const uint4* p) { return __ldcg(p); }
__device__ __forceinline__ bf16 ld_early(const bf16* p) { return __ldcg(p); }
__device__ __forceinline__ float ld_early(const float* p) { return __ldcg(p); }
// L2 eviction priorities (shapes.rs: l2_evict_first, l2_ahead_rows). A decode step streams
// 6.7 GB through the 50 MB L2; the weights of the products in the mask L2_EVICT_FIRST are read
// with evict_first, so they pass through without pushing out what is read again (the step's
// activations, the keys and values, the rows moe_router asks for ahead). Most of the gain is
// the experts' streams (57 MB a layer, more than L2). The normed products are left out of the
// default mask: the ahead rows are asked into L2 for them, and reading them with evict_first
// measured slower (the mask's measurements: docs/TRIED.md, "Decode: step structure").
// Sites of the mask:
#define L2_NORMED 1  // the layer-input products (gemv_hidden_normed)
#define L2_GATE_UP 2 // the experts' gate|up (routed and shared)
#define L2_DOWN 4    // the experts' down (routed and shared)
#define L2_ROWS 8    // gemv_rows: output projections, lm_head, the router
// ld_early, with evict_first where SITE is in the mask.
template <int SITE>
__device__ __forceinline__ uint4 ld_stream(const uint4* p) {
    if constexpr ((L2_EVICT_FIRST & SITE) != 0) {
        u64 policy;
        asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
        uint4 v;
        asm volatile("ld.global.cg.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(p), "l"(policy));
        return v;
    } else {
        return ld_early(p);
    }
}
// `bytes` (a multiple of 16) from p into L2, with L2_AHEAD_LAST evict_last (else normal, which
// lets the experts' streams in between push some of the rows out again).
__device__ __forceinline__ void l2_ahead(const void* p, unsigned bytes) {
    u64 policy;
#if L2_AHEAD_LAST
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
#else
    asm("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;" : "=l"(policy));
#endif
    asm volatile("cp.async.bulk.prefetch.L2.global.L2::cache_hint [%0], %1, %2;" ::"l"(p), "r"(bytes), "l"(policy)
                 : "memory");
}
#ifdef LILY_TRACE_BUF
// lily bench --trace (trace.rs): thread 0 of each block stores its grid id, the global timer at
// the block's start (at = 0) and after its PDL wait (at = 1), and its SM, to the slot (grid id
// mod TRACE_LAUNCHES, block). Plain stores: an atomic's round trip would lengthen the chains
// being timed. Only in a traced build: without LILY_TRACE_BUF the marks compile to nothing.
#define TRACE_LAUNCHES 512
#define TRACE_BLOCKS 16384
__device__ __forceinline__ void trace_mark(int at) {
    if (threadIdx.x | threadIdx.y | threadIdx.z) return;
    const unsigned long long block =
        blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
    if (block >= TRACE_BLOCKS) return;
    unsigned long long grid, t;
    unsigned sm;
    asm volatile("mov.u64 %0, %%gridid;" : "=l"(grid));
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    unsigned long long* slot = reinterpret_cast<unsigned long long*>((unsigned long long)LILY_TRACE_BUF) +
                               4 * ((grid % TRACE_LAUNCHES) * TRACE_BLOCKS + block);
    if (at == 0) {
        slot[0] = grid;
        slot[1] = t;
        slot[3] = sm;
    } else {
        slot[2] = t;
    }
}
#define TRACE_MARK(at) trace_mark(at)
#else
#define TRACE_MARK(at)
#endif
__device__ __forceinline__ void pdl_launch_next() {
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    TRACE_MARK(0);
}
__device__ __forceinline__ void pdl_wait() {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    TRACE_MARK(1);
}

// Shared-memory address of a generic pointer, as cp.async and ldmatrix take it.
__device__ __forceinline__ unsigned smem_u32(const void* p) {
    unsigned a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}
// Four 8 x 8 matrices of 16-bit elements from shared memory, lane l giving the address of row
// l % 8 of matrix l / 8; lane l receives 32-bit word l % 4 of row l / 4 of each. On 32-bit
// elements (tf32) a matrix is 8 rows of 4 words: exactly an m16n8k8 fragment's register.
__device__ __forceinline__ void ldsm_x4(unsigned addr, unsigned r[4]) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

// c += a (16x16, row) * b (16x8, col); the PTX ISA's m16n8k16 fragment layouts.
__device__ __forceinline__ void mma_bf16(float c[4], const unsigned a[4], unsigned b0, unsigned b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two floats as bf16x2 (round to nearest even), lo in the low half: the element with the lower index.
__device__ __forceinline__ unsigned pack_bf16(float lo, float hi) {
    unsigned d;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(d) : "f"(hi), "f"(lo));
    return d;
}

__device__ __forceinline__ void st_shared_u32(unsigned addr, unsigned v) {
    asm volatile("st.shared.u32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ uint4 ld_shared_v4(unsigned addr) {
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr) : "memory");
    return v;
}

// 16 bytes global -> shared, asynchronously and past L1; zero-filled when !valid (src is then
// not read).
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, bool valid = true) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0)
                 : "memory");
}
__device__ __forceinline__ void cp_async16(void* dst, const void* src) { cp_async16(smem_u32(dst), src); }
// 4 bytes global -> shared, asynchronously (an FP8 row's block scales beside it in a ring).
__device__ __forceinline__ void cp_async4(void* dst, const void* src) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(smem_u32(dst)), "l"(src) : "memory");
}
// cp_async16 (always valid), with evict_first where SITE is in L2_EVICT_FIRST.
template <int SITE>
__device__ __forceinline__ void cp_async_stream(void* dst, const void* src) {
    if constexpr ((L2_EVICT_FIRST & SITE) != 0) {
        u64 policy;
        asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
        asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;" ::"r"(smem_u32(dst)), "l"(src),
                     "l"(policy)
                     : "memory");
    } else {
        cp_async16(dst, src);
    }
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

// ---------------------------------------------------------------------------------------------
// Hopper's warpgroup MMA (wgmma): operands in shared memory in the 128-byte swizzle (16-byte
// chunk c of 128-byte row r stored at chunk c ^ (r % 8), atoms of 8 rows on 1024-byte
// boundaries), named by descriptors.

// Shared-memory matrix descriptor, swizzle mode 1 (128 B): start address, leading byte offset
// `lbo` (K-major operands: unused; MN-major: from one 64-element column block to the next),
// stride byte offset 1024 (from one 8-row swizzle atom to the next).
__device__ __forceinline__ u64 smem_desc(unsigned addr, unsigned lbo = 16) {
    return (u64)((addr & 0x3FFFF) >> 4) | ((u64)(lbo >> 4) << 16) | ((u64)(1024 >> 4) << 32) | ((u64)1 << 62);
}
// d (+)= A (64 x 16) . B (256 x 16)^T for one warpgroup, both from shared memory, K-major;
// `accumulate` 0 overwrites d.
__device__ __forceinline__ void wgmma_m64n256k16(float d[128], u64 a, u64 b, int accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, %128, %129, p, 1, 1, 0, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
                 : "l"(a), "l"(b), "r"(accumulate));
}
// d (+)= A (64 x 16) . B (128 x 16)^T for one warpgroup, both from shared memory, K-major;
// `accumulate` 0 overwrites d.
__device__ __forceinline__ void wgmma_m64n128k16(float d[64], u64 a, u64 b, int accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(a), "l"(b), "r"(accumulate));
}
// d (+)= A (64 x 16) . B (64 x 16)^T for one warpgroup, both from shared memory, K-major;
// `accumulate` 0 overwrites d.
__device__ __forceinline__ void wgmma_m64n64k16(float d[32], u64 a, u64 b, int accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 0, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(a), "l"(b), "r"(accumulate));
}
// d (+)= A (64 x 16, in registers: the m16n8k16 A fragment of each warp's 16 rows) . B (16 x 256),
// B from shared memory MN-major (its 256 columns contiguous, transposed by the MMA).
__device__ __forceinline__ void wgmma_m64n256k16_rt(float d[128], const unsigned a[4], u64 b, int accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, {%128,%129,%130,%131}, %132, p, 1, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory"); }
// Makes cp.async's writes (generic proxy) visible to wgmma's reads (async proxy).
__device__ __forceinline__ void fence_async_shared() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// ---------------------------------------------------------------------------------------------
// The tensor memory accelerator (TMA) and the mbarriers that count its bytes in.

// A TMA descriptor (CUtensorMap, driver.rs: TensorMap), taken by value as a __grid_constant__
// parameter: the TMA reads it where the parameter lives.
struct __align__(64) TensorMap {
    unsigned long long opaque[16];
};
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
// The one arrival of a stage's phase, with the bytes its copies will bring.
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
    asm volatile(
        "{\n.reg .pred done;\nLAB_WAIT:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra LAB_WAIT;\n}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
// A warpgroup gives registers back to, or takes them from, the block's pool (a loader needs
// few, the MMA warpgroups' accumulators many).
template <int REGS>
__device__ __forceinline__ void setmaxnreg_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(REGS)); }
template <int REGS>
__device__ __forceinline__ void setmaxnreg_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(REGS)); }
// Box (c0, .., c4) of the 5-D tensor `map` (innermost coordinate first, in elements) into
// shared memory at `dst`, its bytes counted on `bar`.
__device__ __forceinline__ void tma_load_5d(unsigned dst, const TensorMap* map, int c0, int c1, int c2, int c3, int c4,
                                            unsigned bar) {
    asm volatile(
        "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7];" ::"r"(dst),
        "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(bar)
        : "memory");
}
