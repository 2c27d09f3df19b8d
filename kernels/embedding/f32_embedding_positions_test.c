// Embedding + positions: exact against a direct reference, at an offset, with every error
// code (and y untouched on error); the _rows kernel (a position per sequence) bit for bit the
// per-sequence calls, and its error codes.
#include <stdio.h>
#include <string.h>

#include "kernels/embedding/f32_embedding_positions.h"
#include "kernels/embedding/embedding_test_util.h"

enum { V = 11, D = 5, NCTX = 8 };

int main(void) {
  float table[V * D], pos[NCTX * D], y[6 * D], ref[4 * D], per_seq[6 * D];
  for (int i = 0; i < V * D; ++i) table[i] = 0.37f * (float)i - 3.0f;
  for (int i = 0; i < NCTX * D; ++i) pos[i] = 0.011f * (float)(i * i % 97);
  const int32_t tok[4] = {10, 0, 3, 3};
  int fails = 0;
  const int64_t offset = 4;  // rows 4..7: the last legal window for T = 4
  for (int t = 0; t < 4; ++t)
    for (int d = 0; d < D; ++d) ref[t * D + d] = table[tok[t] * D + d] + pos[(offset + t) * D + d];
  int rc = ckw_f32_embedding_positions(y, tok, table, pos, 1, 4, D, V, NCTX, offset);
  if (rc != 0 || memcmp(y, ref, sizeof ref) != 0) {
    fprintf(stderr, "embedding at offset 4: rc=%d or values differ\n", rc);
    ++fails;
  }
  // Three sequences of two tokens: every sequence at positions offset, offset + 1.
  const int32_t beams[6] = {1, 2, 9, 2, 0, 10};
  rc = ckw_f32_embedding_positions(y, beams, table, pos, 3, 2, D, V, NCTX, 6);
  for (int i = 0; i < 6; ++i)
    for (int d = 0; d < D; ++d)
      if (rc != 0 || y[i * D + d] != table[beams[i] * D + d] + pos[(6 + i % 2) * D + d]) {
        fprintf(stderr, "3 sequences: rc=%d, row %d col %d differs\n", rc, i, d);
        ++fails;
      }
  fails +=
      EMBEDDING_BAD_INPUT_FAILURES(ckw_f32_embedding_positions, ckw_f32_embedding_positions_strerror, y, table, pos);
  // One position per sequence: each sequence's rows are the scalar-offset kernel's at offset pos[b].
  fails += EMBEDDING_ROWS_MATCH_FAILURES(ckw_f32_embedding_positions_rows, ckw_f32_embedding_positions, y, per_seq,
                                         table, pos);
  fails += EMBEDDING_ROWS_BAD_INPUT_FAILURES(ckw_f32_embedding_positions_rows, ckw_f32_embedding_positions_strerror, y,
                                             table, pos);
  printf("embedding_positions: %d failures\n", fails);
  return fails != 0;
}
