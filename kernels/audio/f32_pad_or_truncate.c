#include "kernels/audio/f32_pad_or_truncate.h"

#include <string.h>

void ckw_f32_pad_or_truncate(float* restrict y, int64_t n_out, const float* restrict x, int64_t n_in) {
  if (n_out <= 0) return;
  int64_t n_copy = n_in < 0 ? 0 : (n_in < n_out ? n_in : n_out);
  if (n_copy > 0) memcpy(y, x, (size_t)n_copy * sizeof *y);
  memset(y + n_copy, 0, (size_t)(n_out - n_copy) * sizeof *y);  // all-zero bits are +0.0f
}
