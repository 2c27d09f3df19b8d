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

int ckw_f32_gather_rows(float* restrict dst, const float* restrict src, const int32_t* restrict index, int64_t B,
                        int64_t R, int64_t n_src);
const char* ckw_f32_gather_rows_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_LAYOUT_F32_GATHER_ROWS_H_
