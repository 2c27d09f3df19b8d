// ckw_f32_softmax (op kind "softmax"): row-wise softmax over the last dim of x [T, D],
// numerically stable (the row max is subtracted before exp). y may equal x.
#ifndef CKW_KERNELS_ACTIVATION_F32_SOFTMAX_H_
#define CKW_KERNELS_ACTIVATION_F32_SOFTMAX_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void ckw_f32_softmax(float* y, const float* x, int64_t T, int64_t D);
void ckw_f32_softmax__scalar(float* y, const float* x, int64_t T, int64_t D);
void ckw_f32_softmax__avx2(float* y, const float* x, int64_t T, int64_t D);
void ckw_f32_softmax__avx512(float* y, const float* x, int64_t T, int64_t D);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_ACTIVATION_F32_SOFTMAX_H_
