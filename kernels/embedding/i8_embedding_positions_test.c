// int8-table embedding + positions: every bit against the stated formula, (float)q * scale then
// + position in f32 (with scales whose products round, rows of every sign, the extreme values), at
// an offset, for several sequences, and every error code with y untouched; the _rows kernel (a
// position per sequence) bit for bit the per-sequence calls, and its error codes.
#include <stdio.h>
#include <string.h>

#include "kernels/embedding/embedding_test_util.h"
#include "kernels/embedding/i8_embedding_positions.h"

enum { V = 11, D = 5, NCTX = 8 };
static float g_scale[V];

// The kernels with the f32 kernels' arguments (the shared checks' shape), the scales from g_scale.
static int embed_(float* y, const int32_t* tokens, const int8_t* table, const float* positions, int64_t B, int64_t T,
                  int64_t d, int64_t vocab, int64_t n_ctx, int64_t offset) {
  return ckw_i8_embedding_positions(y, tokens, table, g_scale, positions, B, T, d, vocab, n_ctx, offset);
}
static int rows_(float* y, const int32_t* tokens, const int8_t* table, const float* positions, const int32_t* pos,
                 int64_t B, int64_t T, int64_t d, int64_t vocab, int64_t n_ctx) {
  return ckw_i8_embedding_positions_rows(y, tokens, table, g_scale, positions, pos, B, T, d, vocab, n_ctx);
}

int main(void) {
  int8_t table[V * D];
  float pos[NCTX * D], y[6 * D], per_seq[6 * D];
  for (int i = 0; i < V * D; ++i) table[i] = (int8_t)(i % 3 == 0 ? (i % 2 ? 127 : -127) : (i * 37) % 255 - 127);
  for (int v = 0; v < V; ++v) g_scale[v] = (v % 2 ? 1.0f : -1.0f) * 0.0123456789f * (float)(v + 1);
  for (int i = 0; i < NCTX * D; ++i) pos[i] = 0.011f * (float)(i * i % 97) - 0.5f;
  int fails = 0;
  // Three sequences of two tokens at positions 6, 7 (the last legal window for T = 2).
  const int32_t beams[6] = {1, 2, 9, 2, 0, 10};
  int rc = ckw_i8_embedding_positions(y, beams, table, g_scale, pos, 3, 2, D, V, NCTX, 6);
  for (int i = 0; i < 6; ++i)
    for (int d = 0; d < D; ++d) {
      const float product = (float)table[beams[i] * D + d] * g_scale[beams[i]];  // rounded to f32 first
      const float want = product + pos[(6 + i % 2) * D + d];
      if (rc != 0 || memcmp(&y[i * D + d], &want, sizeof want) != 0) {
        fprintf(stderr, "3 sequences: rc=%d, row %d col %d: %.9g want %.9g\n", rc, i, d, y[i * D + d], want);
        ++fails;
      }
    }
  fails += EMBEDDING_BAD_INPUT_FAILURES(embed_, ckw_i8_embedding_positions_strerror, y, table, pos);
  // One position per sequence: each sequence's rows are the scalar-offset kernel's at offset pos[b].
  fails += EMBEDDING_ROWS_MATCH_FAILURES(rows_, embed_, y, per_seq, table, pos);
  fails += EMBEDDING_ROWS_BAD_INPUT_FAILURES(rows_, ckw_i8_embedding_positions_strerror, y, table, pos);
  printf("i8_embedding_positions: %d failures\n", fails);
  return fails != 0;
}
