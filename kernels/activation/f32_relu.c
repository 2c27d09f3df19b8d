#include "kernels/activation/f32_relu.h"

#include "kernels/common/cpu.h"

void ckw_f32_relu__scalar(float* y, const float* x, int64_t T, int64_t D) {
  for (int64_t i = 0; i < T * D; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void ckw_f32_relu(float* y, const float* x, int64_t T, int64_t D) { CKW_DISPATCH(ckw_f32_relu, y, x, T, D); }
