// Read-bandwidth ceiling: 1 GiB streamed once per rep by 16-byte loads, 8 in flight per lane.
#include <cstdio>
#include <cuda_runtime.h>
template <int MODE>
__device__ __forceinline__ uint4 ld(const uint4* p) {
    uint4 v;
    if (MODE == 0) asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    if (MODE == 1) asm volatile("ld.global.cg.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    if (MODE == 2 || MODE == 3) {
        unsigned long long pol;
        asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
        if (MODE == 2) asm volatile("ld.global.cg.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(pol));
        else asm volatile("ld.global.cg.L2::cache_hint.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4], %5;" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(pol));
    }
    return v;
}
// Each warp takes a 4 KB "row" (8 loads per lane, lane + 32 i) at a time, as the GEMVs do.
template <int MODE>
__global__ void readk(const uint4* a, long n_rows, unsigned* out) {
    const int lane = threadIdx.x & 31;
    const long warps = (long)gridDim.x * (blockDim.x / 32);
    unsigned acc = 0;
    for (long r = blockIdx.x * (blockDim.x / 32) + (threadIdx.x >> 5); r < n_rows; r += warps) {
        uint4 v[8];
#pragma unroll
        for (int i = 0; i < 8; i++) v[i] = ld<MODE>(a + r * 256 + lane + 32 * i);
#pragma unroll
        for (int i = 0; i < 8; i++) acc ^= v[i].x ^ v[i].y ^ v[i].z ^ v[i].w;
    }
    if (acc == 0x12345678u) out[0] = acc;
}
template <int MODE>
void run(const uint4* a, long rows, unsigned* out, int blocks, int threads) {
    cudaEvent_t s, e;
    cudaEventCreate(&s);
    cudaEventCreate(&e);
    readk<MODE><<<blocks, threads>>>(a, rows, out);
    cudaEventRecord(s);
    const int reps = 20;
    for (int i = 0; i < reps; i++) readk<MODE><<<blocks, threads>>>(a, rows, out);
    cudaEventRecord(e);
    cudaEventSynchronize(e);
    float ms;
    cudaEventElapsedTime(&ms, s, e);
    printf("| %d | %d x %d | %.3f TB/s |\n", MODE, blocks, threads, rows * 4096.0 * reps / (ms * 1e-3) / 1e12);
}
int main() {
    const long bytes = 1l << 30, rows = bytes / 4096;
    uint4* a;
    unsigned* out;
    cudaMalloc(&a, bytes);
    cudaMalloc(&out, 4);
    cudaMemset(a, 1, bytes);
    printf("| mode (0 cg, 1 cg+256B, 2 evict_first, 3 evict_first+256B) | grid | read rate |\n|---|---|---|\n");
    for (int bps : {2, 4, 8}) {
        const int blocks = 132 * bps, threads = 1024 / bps > 512 ? 512 : 1024 / bps;
        run<0>(a, rows, out, blocks, threads);
        run<1>(a, rows, out, blocks, threads);
        run<2>(a, rows, out, blocks, threads);
        run<3>(a, rows, out, blocks, threads);
    }
    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
