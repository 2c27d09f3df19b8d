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

int64_t ckw_f32_reorder_batches_scratch_bytes(int64_t B, int64_t S, int64_t L, int64_t W) {
  // Bookkeeping (two int64 per batch) and one parked batch of up to L live rows.
  const int64_t rows = (S > 0 ? S : 0) * (L > 0 ? L : 0) * (W > 0 ? W : 0);
  return 2 * (int64_t)sizeof(int64_t) * (B > 0 ? B : 0) + (int64_t)sizeof(float) * rows;
}

// Copies rows [0, n) of the S segments of one batch (segment stride seg floats, rows of W).
static void copy_rows(float* dst, const float* src, int64_t S, int64_t seg_dst, int64_t seg_src, int64_t rows) {
  for (int64_t s = 0; s < S; ++s) memmove(dst + s * seg_dst, src + s * seg_src, sizeof(float) * (size_t)rows);
}

int ckw_f32_reorder_batches(float* dst, const float* src, const int32_t* restrict index, void* restrict scratch,
                            int64_t B, int64_t Bk, int64_t S, int64_t L, int64_t W, int64_t n) {
  if (B < 0 || B > Bk || S < 0 || L < 0 || W < 0 || n < 0 || n > L) return CKW_GATHER_ERR_SHAPE;
  for (int64_t b = 0; b < B; ++b) {
    if (index[b] < 0 || index[b] >= B) return CKW_GATHER_ERR_INDEX;
  }
  const int64_t seg = L * W, batch = S * seg, rows = n * W;
  if (dst != src) {
    for (int64_t b = 0; b < B; ++b) copy_rows(dst + b * batch, src + index[b] * batch, S, seg, seg, rows);
    return CKW_GATHER_OK;
  }
  // In place. from[b]: the batch b still has to copy (-1: done, -2: the parked copy in tmp);
  // readers[c]: pending batches that still read batch c.
  int64_t* from = scratch;
  int64_t* readers = from + B;
  float* tmp = (float*)(readers + B);
  for (int64_t b = 0; b < B; ++b) readers[b] = 0;
  int64_t pending = 0;
  for (int64_t b = 0; b < B; ++b) {
    from[b] = index[b] == b ? -1 : index[b];
    if (from[b] >= 0) ++readers[from[b]], ++pending;
  }
  while (pending) {
    int progress = 0;
    for (int64_t b = 0; b < B; ++b) {
      if (from[b] == -1 || readers[b]) continue;  // done, or still a source for someone
      if (from[b] == -2) {
        copy_rows(dst + b * batch, tmp, S, seg, rows, rows);
      } else {
        copy_rows(dst + b * batch, dst + from[b] * batch, S, seg, seg, rows);
        --readers[from[b]];
      }
      from[b] = -1, --pending, progress = 1;
    }
    if (progress) continue;
    // Every pending batch is read by another: they form cycles. Park one in tmp and point
    // its reader there; the cycle then unwinds.
    int64_t c = 0;
    while (from[c] == -1) ++c;
    copy_rows(tmp, dst + c * batch, S, rows, seg, rows);
    for (int64_t b = 0; b < B; ++b)
      if (from[b] == c) from[b] = -2, --readers[c];
  }
  return CKW_GATHER_OK;
}

const char* ckw_f32_gather_rows_strerror(int code) {
  switch (code) {
    case CKW_GATHER_OK:
      return "ok";
    case CKW_GATHER_ERR_INDEX:
      return "gather_rows: an index is outside the source rows (reorder: outside [0, B), the active sequences)";
    case CKW_GATHER_ERR_SHAPE:
      return "gather_rows: negative dims, more sequences than the batch holds, or more live rows than capacity";
    default:
      return "gather_rows: unknown error";
  }
}
