// Layout converters: exact round trips, in-place KV append at row pos leaving other rows
// untouched, capacity errors, and the [C, T] <-> [T, C] transposes on odd sizes.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/layout/f32_layout.h"

int main(void) {
  int fails = 0;
  enum { T = 5, H = 3, DH = 7, CAP = 9 };
  float tok[T * H * DH], cache[H * CAP * DH], back[T * H * DH];
  for (int i = 0; i < T * H * DH; ++i) tok[i] = (float)i + 0.5f;
  for (int i = 0; i < H * CAP * DH; ++i) cache[i] = -1.0f;
  // Prefill rows 2..6, then append one decode row at pos 7.
  fails += ckw_f32_token_to_head_major(cache, tok, T, H, DH, CAP, 2) != 0;
  fails += ckw_f32_token_to_head_major(cache, tok + H * DH, 1, H, DH, CAP, 7) != 0;
  for (int h = 0; h < H; ++h)
    for (int r = 0; r < CAP; ++r)
      for (int d = 0; d < DH; ++d) {
        float want = -1.0f;
        if (r >= 2 && r < 2 + T) want = tok[(r - 2) * H * DH + h * DH + d];
        if (r == 7) want = tok[H * DH + h * DH + d];
        if (cache[(h * CAP + r) * DH + d] != want) {
          fprintf(stderr, "token_to_head_major: [%d,%d,%d] = %g want %g\n", h, r, d, cache[(h * CAP + r) * DH + d],
                  want);
          return 1;
        }
      }
  fails += ckw_f32_head_to_token_major(back, cache, T, H, DH, CAP, 2) != 0;
  if (memcmp(back, tok, sizeof tok) != 0) fails += 1, fprintf(stderr, "head_to_token_major round trip differs\n");
  // Capacity: rows 5..9 do not fit in 9; nothing may be written.
  float before[H * CAP * DH];
  memcpy(before, cache, sizeof cache);
  if (ckw_f32_token_to_head_major(cache, tok, T, H, DH, CAP, 5) != CKW_LAYOUT_ERR_ROWS ||
      ckw_f32_head_to_token_major(back, cache, 1, H, DH, CAP, CAP) != CKW_LAYOUT_ERR_ROWS ||
      ckw_f32_token_to_head_major(cache, tok, 1, H, DH, CAP, -1) != CKW_LAYOUT_ERR_ROWS ||
      memcmp(before, cache, sizeof cache) != 0 || strlen(ckw_f32_layout_strerror(CKW_LAYOUT_ERR_ROWS)) < 5) {
    fprintf(stderr, "capacity errors not reported or buffer touched\n");
    ++fails;
  }
  // Batched append: 2 of 3 sequences, one row each at row 4; more sequences than the batch holds
  // is a shape error with nothing written.
  float batch[3 * H * CAP * DH];
  for (int i = 0; i < 3 * H * CAP * DH; ++i) batch[i] = -1.0f;
  fails += ckw_f32_token_to_batch_head_major(batch, tok, 2, 3, 1, H, DH, CAP, 4) != 0;
  for (int b = 0; b < 3; ++b)
    for (int h = 0; h < H; ++h)
      for (int r = 0; r < CAP; ++r)
        for (int d = 0; d < DH; ++d) {
          const float want = (b < 2 && r == 4) ? tok[b * H * DH + h * DH + d] : -1.0f;
          if (batch[((b * H + h) * CAP + r) * DH + d] != want) {
            fprintf(stderr, "token_to_batch_head_major: [%d,%d,%d,%d] wrong\n", b, h, r, d);
            return 1;
          }
        }
  float batch_before[3 * H * CAP * DH];
  memcpy(batch_before, batch, sizeof batch);
  if (ckw_f32_token_to_batch_head_major(batch, tok, 4, 3, 1, H, DH, CAP, 0) != CKW_LAYOUT_ERR_SHAPE ||
      ckw_f32_token_to_batch_head_major(batch, tok, 1, 3, 1, H, DH, CAP, CAP) != CKW_LAYOUT_ERR_ROWS ||
      memcmp(batch_before, batch, sizeof batch) != 0) {
    fprintf(stderr, "batched append errors not reported or buffer touched\n");
    ++fails;
  }
  // Transposes, sizes straddling the 32-wide tiles.
  const int64_t sizes[][2] = {{1, 1}, {80, 3000}, {33, 65}, {7, 1}, {1, 9}};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
    const int64_t C = sizes[s][0], TT = sizes[s][1];
    float* cm = malloc(sizeof(float) * C * TT);
    float* tm = malloc(sizeof(float) * C * TT);
    float* cm2 = malloc(sizeof(float) * C * TT);
    for (int64_t i = 0; i < C * TT; ++i) cm[i] = (float)i;
    ckw_f32_channel_to_token_major(tm, cm, C, TT);
    int ok = 1;
    for (int64_t c = 0; c < C && ok; ++c)
      for (int64_t t = 0; t < TT; ++t) ok &= tm[t * C + c] == cm[c * TT + t];
    ckw_f32_token_to_channel_major(cm2, tm, TT, C);
    ok &= memcmp(cm, cm2, sizeof(float) * C * TT) == 0;
    if (!ok) fprintf(stderr, "transpose C=%lld T=%lld wrong\n", (long long)C, (long long)TT), ++fails;
    free(cm), free(tm), free(cm2);
  }
  printf("layout converters: %d failures\n", fails);
  return fails != 0;
}
