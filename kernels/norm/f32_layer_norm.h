// ckw_f32_layer_norm (op kind "layer_norm"): per row t of x [T, D] (token-major),
//   y[t] = (x[t] - mean) / sqrt(var + eps) * gamma + beta,  var the biased variance,
// as torch.nn.functional.layer_norm (Whisper: eps = 1e-5). Two-pass mean/variance, so large
// row means do not cancel. y may be the same buffer as x (in place); no other overlap.
#ifndef CKW_KERNELS_NORM_F32_LAYER_NORM_H_
#define CKW_KERNELS_NORM_F32_LAYER_NORM_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void ckw_f32_layer_norm(float* y, const float* x, const float* gamma, const float* beta, int64_t T, int64_t D,
                        float eps);
void ckw_f32_layer_norm__scalar(float* y, const float* x, const float* gamma, const float* beta, int64_t T, int64_t D,
                                float eps);
void ckw_f32_layer_norm__avx2(float* y, const float* x, const float* gamma, const float* beta, int64_t T, int64_t D,
                              float eps);
void ckw_f32_layer_norm__avx512(float* y, const float* x, const float* gamma, const float* beta, int64_t T, int64_t D,
                                float eps);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_NORM_F32_LAYER_NORM_H_
