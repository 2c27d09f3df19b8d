// Row gather: exact copies for repeated and permuted indices, bad indices rejected with dst
// untouched, nothing written past dst.
#include <stdio.h>
#include <string.h>

#include "kernels/common/test_util.h"
#include "kernels/layout/f32_gather_rows.h"
#include "kernels/layout/f32_gather_rows_contract.h"

_Static_assert(CKW_F32_GATHER_ROWS_EXACT, "f32_gather_rows.json states an exact contract");

int main(void) {
  enum { N = 5, R = 7, B = 6, GUARD = 3 };
  float src[N * R], dst[(B + GUARD) * R];
  for (int i = 0; i < N * R; ++i) src[i] = (float)i * 0.25f - 3.0f;
  const int32_t index[B] = {4, 0, 0, 2, 4, 1};
  for (int i = 0; i < (B + GUARD) * R; ++i) dst[i] = -1.0f;
  EXPECT(ckw_f32_gather_rows(dst, src, index, B, R, N) == CKW_GATHER_OK, "status");
  for (int b = 0; b < B; ++b) EXPECT(memcmp(dst + b * R, src + index[b] * R, sizeof(float) * R) == 0, "row %d", b);
  for (int i = B * R; i < (B + GUARD) * R; ++i) EXPECT(dst[i] == -1.0f, "wrote past dst at %d", i);

  float before[(B + GUARD) * R];
  memcpy(before, dst, sizeof before);
  const int32_t bad[2][B] = {{0, 1, 2, 3, 4, N}, {0, -1, 0, 0, 0, 0}};
  for (int k = 0; k < 2; ++k) {
    EXPECT(ckw_f32_gather_rows(dst, src, bad[k], B, R, N) == CKW_GATHER_ERR_INDEX, "bad index set %d", k);
    EXPECT(memcmp(before, dst, sizeof before) == 0, "dst changed on error %d", k);
  }
  EXPECT(strstr(ckw_f32_gather_rows_strerror(CKW_GATHER_ERR_INDEX), "index") != NULL, "strerror");
  EXPECT(ckw_f32_gather_rows(dst, src, index, 0, R, N) == CKW_GATHER_OK, "B = 0");

  // Batch reorder, in place, against the out-of-place result: every index vector over 4 batches
  // (identity, repeats, swaps, 3- and 4-cycles, trees into cycles), rows past n and batches past
  // B untouched; a bad index or shape leaves x as it was.
  enum { BK = 5, S = 2, L = 6, W = 3, NB = 4, NL = 4 };
  float x[BK * S * L * W], want[BK * S * L * W], orig[BK * S * L * W];
  float scratch[(2 * 8 * BK + 4 * S * L * W) / 4 + 1];
  for (int i = 0; i < BK * S * L * W; ++i) orig[i] = (float)i;
  int combos = 0;
  for (int code = 0; code < NB * NB * NB * NB; ++code) {
    int32_t idx[NB];
    for (int b = 0, c = code; b < NB; ++b, c /= NB) idx[b] = c % NB;
    memcpy(x, orig, sizeof x);
    memcpy(want, orig, sizeof want);
    EXPECT(ckw_f32_reorder_batches(want, orig, idx, scratch, NB, BK, S, L, W, NL) == CKW_GATHER_OK, "out of place");
    EXPECT(ckw_f32_reorder_batches(x, x, idx, scratch, NB, BK, S, L, W, NL) == CKW_GATHER_OK, "in place");
    for (int b = 0; b < BK; ++b)
      for (int s = 0; s < S; ++s)
        for (int r = 0; r < L; ++r)
          for (int w = 0; w < W; ++w) {
            const int at = ((b * S + s) * L + r) * W + w;
            const float expect = (b < NB && r < NL) ? orig[((idx[b] * S + s) * L + r) * W + w] : orig[at];
            if (want[at] != expect || x[at] != expect) {
              EXPECT(0, "reorder %d %d %d %d: [%d,%d,%d,%d]", idx[0], idx[1], idx[2], idx[3], b, s, r, w);
              return test_finish("f32_gather_rows_test");
            }
          }
    ++combos;
  }
  EXPECT(combos == 256, "combos");
  memcpy(x, orig, sizeof x);
  const int32_t out_of_range[NB] = {0, 1, NB, 2};  // a parked batch >= B is not a live sequence
  EXPECT(ckw_f32_reorder_batches(x, x, out_of_range, scratch, NB, BK, S, L, W, NL) == CKW_GATHER_ERR_INDEX, "index B");
  EXPECT(ckw_f32_reorder_batches(x, x, index, scratch, BK + 1, BK, S, L, W, NL) == CKW_GATHER_ERR_SHAPE, "B > Bk");
  EXPECT(ckw_f32_reorder_batches(x, x, index, scratch, NB, BK, S, L, W, L + 1) == CKW_GATHER_ERR_SHAPE, "n > L");
  EXPECT(memcmp(x, orig, sizeof x) == 0, "x changed on error");
  EXPECT(ckw_f32_reorder_batches_scratch_bytes(NB, S, L, W) <= (int64_t)sizeof scratch, "scratch size");
  return test_finish("f32_gather_rows_test");
}
