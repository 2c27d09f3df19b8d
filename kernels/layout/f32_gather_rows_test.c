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
  return test_finish("f32_gather_rows_test");
}
