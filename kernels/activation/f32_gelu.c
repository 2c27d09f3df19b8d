#include "kernels/activation/f32_gelu.h"

#include "kernels/common/cpu.h"
#include "kernels/common/gelu_scalar.h"

void ckw_f32_gelu__scalar(float* y, const float* x, int64_t T, int64_t D) {
  for (int64_t i = 0; i < T * D; ++i) y[i] = ckw_gelu_scalar(x[i]);
}

void ckw_f32_gelu(float* y, const float* x, int64_t T, int64_t D) { CKW_DISPATCH(ckw_f32_gelu, y, x, T, D); }
