// ckw_f32_sigmoid (op kind "sigmoid"): y = 1 / (1 + exp(-x)) elementwise over T*D values, as
// torch.sigmoid. Formed from e = exp(-|x|) <= 1, which never overflows: 1 / (1 + e) for x >= 0,
// e / (1 + e) for x < 0 (the negative tail keeps its relative accuracy). Saturates to exactly 1.0
// for large x and to 0 (or a subnormal) for large -x; +-inf give 1 and 0; NaN gives NaN on every
// path. y may equal x.
#ifndef CKW_KERNELS_ACTIVATION_F32_SIGMOID_H_
#define CKW_KERNELS_ACTIVATION_F32_SIGMOID_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void ckw_f32_sigmoid(float* y, const float* x, int64_t T, int64_t D);
void ckw_f32_sigmoid__scalar(float* y, const float* x, int64_t T, int64_t D);
void ckw_f32_sigmoid__avx2(float* y, const float* x, int64_t T, int64_t D);
void ckw_f32_sigmoid__avx512(float* y, const float* x, int64_t T, int64_t D);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_ACTIVATION_F32_SIGMOID_H_
