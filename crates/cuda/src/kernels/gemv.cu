// Decode's products, entry points over gemv.cuh's row products: the streamed normed products
// (gemv_hidden_normed, gemv_embed_normed: a layer's input product with its norm, the first
// layer's with the token's embedding), lm_head with the final norm and the argmax, and the
// output projections (gemv_gdn_out, gemv_attn_out) with the residual add in `accumulate`.
// In a model with FP8 weights (WEIGHT_FP8) the layer-input and output products read e4m3 with
// block scales (`scale`; null for bf16) and lm_head stays bf16.

extern "C" __global__ void __launch_bounds__(GEMV_NORMED_WARPS * 32)
gemv_hidden_normed(const void* W, const float* scale, const bf16* tail, int tail_rows, const float* resid,
                   const bf16* norm_w, bf16* xn_out, float eps, float* y, int rows) {
    stream_normed<WEIGHT_FP8>(W, scale, tail, tail_rows, [&] { return ResidRow{resid}; }, norm_w, xn_out, eps, y,
                              rows);
}
// The first layer's input product of a decode step with the step's embedding lookup folded in:
// its input is embed[ids[*pos]], which block 0 also writes to `resid_out` as the residual
// stream; a token outside the table gives NaN. A separate embedding launch before it sat on the
// step's path: its three dependent reads queued behind this kernel's early weight loads.
extern "C" __global__ void __launch_bounds__(GEMV_NORMED_WARPS * 32)
gemv_embed_normed(const void* W, const float* scale, const bf16* tail, int tail_rows, const bf16* table,
                  const int* ids, const int* pos, int vocab, float* resid_out, const bf16* norm_w, float eps, float* y,
                  int rows) {
    stream_normed<WEIGHT_FP8>(
        W, scale, tail, tail_rows,
        [&] {
            const int token = __ldcg(ids + __ldcg(pos));
            const bool ok = token >= 0 && token < vocab;
            return EmbedRow{ok ? table + (long)token * HIDDEN : nullptr, resid_out};
        },
        norm_w, nullptr, eps, y, rows);
}
// lm_head with the final norm in its prologue and the argmax in its epilogue (a greedy pick, or a
// draw's max), so neither is a launch of its own on the step's path: short blocks, each
// recomputing the norm from L2 (12 KB per 64 KB of weights) while its rows load. Short blocks
// rather than the streamed ring of the layer-input products: 132 ring blocks read lm_head's
// 1 GB more slowly than many short ones (docs/TRIED.md, "Decode: row products").
extern "C" __global__ void __launch_bounds__(LM_HEAD_WARPS * 32)
lm_head_normed(const bf16* W, const float* resid, const bf16* norm_w, u64* best, float eps, float* y, int rows) {
    gemv_rows<HIDDEN, true, LM_HEAD_WARPS>(W, nullptr, nullptr, resid, norm_w, nullptr, eps, y, rows, 0, best);
}
extern "C" __global__ void __launch_bounds__(GEMV_OUT_WARPS * 32)
gemv_gdn_out(const void* W, const float* scale, const bf16* x, float* y, int rows, int accumulate) {
    gemv_rows<GDN_OUT, false, GEMV_OUT_WARPS, WEIGHT_FP8>(W, scale, x, nullptr, nullptr, nullptr, 0.f, y, rows,
                                                          accumulate, nullptr);
}
extern "C" __global__ void __launch_bounds__(GEMV_OUT_WARPS * 32)
gemv_attn_out(const void* W, const float* scale, const bf16* x, float* y, int rows, int accumulate) {
    gemv_rows<ATTN_OUT, false, GEMV_OUT_WARPS, WEIGHT_FP8>(W, scale, x, nullptr, nullptr, nullptr, 0.f, y, rows,
                                                           accumulate, nullptr);
}
