// ckw_f32_relu (op kind "relu"): y = x > 0 ? x : +0.0f elementwise over T*D values, bit-exact on
// every path: -0.0 gives +0.0 and NaN gives +0.0 (the SIMD paths use maxps(x, 0), which returns its
// second operand for NaN and for zeros of either sign, i.e. the same function). y may equal x.
#ifndef CKW_KERNELS_ACTIVATION_F32_RELU_H_
#define CKW_KERNELS_ACTIVATION_F32_RELU_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void ckw_f32_relu(float* y, const float* x, int64_t T, int64_t D);
void ckw_f32_relu__scalar(float* y, const float* x, int64_t T, int64_t D);
void ckw_f32_relu__avx2(float* y, const float* x, int64_t T, int64_t D);
void ckw_f32_relu__avx512(float* y, const float* x, int64_t T, int64_t D);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_ACTIVATION_F32_RELU_H_
