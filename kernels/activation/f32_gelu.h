// ckw_f32_gelu (op kind "gelu"): y = 0.5 x (1 + erf(x / sqrt(2))), elementwise over T*D
// values, matching torch.nn.functional.gelu (approximate="none"). y may equal x.
#ifndef CKW_KERNELS_ACTIVATION_F32_GELU_H_
#define CKW_KERNELS_ACTIVATION_F32_GELU_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void ckw_f32_gelu(float* y, const float* x, int64_t T, int64_t D);
void ckw_f32_gelu__scalar(float* y, const float* x, int64_t T, int64_t D);
void ckw_f32_gelu__avx2(float* y, const float* x, int64_t T, int64_t D);
void ckw_f32_gelu__avx512(float* y, const float* x, int64_t T, int64_t D);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_ACTIVATION_F32_GELU_H_
