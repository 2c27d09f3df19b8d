#include "kernels/layout/f32_gather_rows.h"

#include <string.h>

int ckw_f32_gather_rows(float* restrict dst, const float* restrict src, const int32_t* restrict index, int64_t B,
                        int64_t R, int64_t n_src) {
  // Validate first so a bad index leaves dst untouched.
  for (int64_t b = 0; b < B; ++b) {
    if (index[b] < 0 || index[b] >= n_src) return CKW_GATHER_ERR_INDEX;
  }
  for (int64_t b = 0; b < B; ++b) memcpy(dst + b * R, src + (int64_t)index[b] * R, sizeof(float) * (size_t)R);
  return CKW_GATHER_OK;
}

const char* ckw_f32_gather_rows_strerror(int code) {
  switch (code) {
    case CKW_GATHER_OK:
      return "ok";
    case CKW_GATHER_ERR_INDEX:
      return "gather_rows: an index is outside the source rows";
    default:
      return "gather_rows: unknown error";
  }
}
