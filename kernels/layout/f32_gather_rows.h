// Row gather: dst[b, :] = src[index[b], :] for b < B, rows of R floats. Beam search reorders
// its per-beam state (e.g. a self-KV cache laid out beam-major) with it after each step.
// dst and src must not overlap. Returns 0, or CKW_GATHER_ERR_INDEX when an index is outside
// [0, n_src) (nothing written).
#ifndef CKW_KERNELS_LAYOUT_F32_GATHER_ROWS_H_
#define CKW_KERNELS_LAYOUT_F32_GATHER_ROWS_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CKW_GATHER_OK 0
#define CKW_GATHER_ERR_INDEX (-1)
#define CKW_GATHER_ERR_SHAPE (-2)

int ckw_f32_gather_rows(float* restrict dst, const float* restrict src, const int32_t* restrict index, int64_t B,
                        int64_t R, int64_t n_src);
const char* ckw_f32_gather_rows_strerror(int code);

// Batch reorder (a beam search's self-KV caches after each step): x is a batch of Bk blocks
// [S, L, W] (e.g. [Bk, H, n_ctx, Dh]); the first B of them are reordered so that
//   dst[b, s, r, :] = src[index[b], s, r, :]   for b < B, s < S, r < n  (n <= L live rows),
// index in [0, B) (repeats allowed). Rows r >= n and batches b >= B are untouched. dst may be
// src (in place): then only batches whose source differs are copied, in an order that reads
// every source before it is overwritten, one batch through scratch when sources form a cycle.
// scratch: ckw_f32_reorder_batches_scratch_bytes(B, S, L, W) bytes, 8-byte aligned. Returns 0,
// CKW_GATHER_ERR_INDEX (an index outside [0, B); nothing written) or CKW_GATHER_ERR_SHAPE
// (negative dims, B > Bk or n > L).
int64_t ckw_f32_reorder_batches_scratch_bytes(int64_t B, int64_t S, int64_t L, int64_t W);
int ckw_f32_reorder_batches(float* dst, const float* src, const int32_t* restrict index, void* restrict scratch,
                            int64_t B, int64_t Bk, int64_t S, int64_t L, int64_t W, int64_t n);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_LAYOUT_F32_GATHER_ROWS_H_
