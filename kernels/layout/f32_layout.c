#include "kernels/layout/f32_layout.h"

#include <string.h>

static int rows_ok(int64_t T, int64_t H, int64_t Dh, int64_t cap, int64_t row0) {
  if (T < 0 || H < 0 || Dh < 0 || cap < 0) return CKW_LAYOUT_ERR_SHAPE;
  if (row0 < 0 || row0 > cap - T) return CKW_LAYOUT_ERR_ROWS;
  return CKW_LAYOUT_OK;
}

void ckw_layout_store_f32(void* dst, int64_t at, const float* src, int64_t n) {
  memcpy((float*)dst + at, src, sizeof(float) * (size_t)n);
}

int ckw_token_to_head_major_with(ckw_layout_store_fn store, void* dst, const float* src, int64_t T, int64_t H,
                                 int64_t Dh, int64_t cap, int64_t row0) {
  const int rc = rows_ok(T, H, Dh, cap, row0);
  if (rc) return rc;
  for (int64_t h = 0; h < H; ++h)
    for (int64_t t = 0; t < T; ++t) store(dst, (h * cap + row0 + t) * Dh, src + t * H * Dh + h * Dh, Dh);
  return CKW_LAYOUT_OK;
}

int ckw_f32_token_to_head_major(float* restrict dst, const float* restrict src, int64_t T, int64_t H, int64_t Dh,
                                int64_t cap, int64_t row0) {
  return ckw_token_to_head_major_with(ckw_layout_store_f32, dst, src, T, H, Dh, cap, row0);
}

int ckw_f32_head_to_token_major(float* restrict dst, const float* restrict src, int64_t T, int64_t H, int64_t Dh,
                                int64_t cap, int64_t row0) {
  const int rc = rows_ok(T, H, Dh, cap, row0);
  if (rc) return rc;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < H; ++h)
      memcpy(dst + t * H * Dh + h * Dh, src + (h * cap + row0 + t) * Dh, sizeof(float) * (size_t)Dh);
  return CKW_LAYOUT_OK;
}

int ckw_f32_token_to_batch_head_major(float* restrict dst, const float* restrict src, int64_t B, int64_t Bk, int64_t T,
                                      int64_t H, int64_t Dh, int64_t cap, int64_t row0) {
  if (B < 0 || B > Bk) return CKW_LAYOUT_ERR_SHAPE;
  const int rc = rows_ok(T, H, Dh, cap, row0);
  if (rc) return rc;
  for (int64_t b = 0; b < B; ++b)
    ckw_f32_token_to_head_major(dst + b * H * cap * Dh, src + b * T * H * Dh, T, H, Dh, cap, row0);
  return CKW_LAYOUT_OK;
}

// Blocked transpose: 32x32 tiles keep both the read and the write side within a few
// cache lines per row.
static void transpose(float* restrict dst, const float* restrict src, int64_t R, int64_t C) {
  enum { B = 32 };
  for (int64_t r0 = 0; r0 < R; r0 += B) {
    const int64_t r1 = r0 + B < R ? r0 + B : R;
    for (int64_t c0 = 0; c0 < C; c0 += B) {
      const int64_t c1 = c0 + B < C ? c0 + B : C;
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = c0; c < c1; ++c) dst[c * R + r] = src[r * C + c];
    }
  }
}

void ckw_f32_channel_to_token_major(float* restrict dst, const float* restrict src, int64_t C, int64_t T) {
  if (C > 0 && T > 0) transpose(dst, src, C, T);
}

void ckw_f32_token_to_channel_major(float* restrict dst, const float* restrict src, int64_t T, int64_t C) {
  if (C > 0 && T > 0) transpose(dst, src, T, C);
}

const char* ckw_f32_layout_strerror(int code) {
  switch (code) {
    case CKW_LAYOUT_OK:
      return "ok";
    case CKW_LAYOUT_ERR_ROWS:
      return "rows row0..row0+T-1 fall outside the head-major buffer's capacity: the KV cache is full";
    case CKW_LAYOUT_ERR_SHAPE:
      return "negative T, H, Dh or capacity, or more sequences than the batch holds";
    default:
      return "unknown layout error code";
  }
}
