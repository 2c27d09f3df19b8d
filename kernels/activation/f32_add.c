#include "kernels/activation/f32_add.h"

#include "kernels/common/cpu.h"

void ckw_f32_add__scalar(float* y, const float* a, const float* b, int64_t T, int64_t D) {
  for (int64_t i = 0; i < T * D; ++i) y[i] = a[i] + b[i];
}

void ckw_f32_add(float* y, const float* a, const float* b, int64_t T, int64_t D) {
  CKW_DISPATCH(ckw_f32_add, y, a, b, T, D);
}
