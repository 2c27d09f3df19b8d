// bf16-table embedding + positions: exact against a direct reference on the widened table (with
// values that bf16 holds exactly and ones it rounded), at an offset, for several sequences, and
// every error code with y untouched; the _rows kernel (a position per sequence) bit for bit
// the per-sequence calls, and its error codes.
#include <stdio.h>
#include <string.h>

#include "kernels/common/bf16.h"
#include "kernels/embedding/bf16_embedding_positions.h"
#include "kernels/embedding/embedding_test_util.h"

enum { V = 11, D = 5, NCTX = 8 };

int main(void) {
  uint16_t table[V * D];
  float pos[NCTX * D], y[6 * D], per_seq[6 * D];
  for (int i = 0; i < V * D; ++i) table[i] = ckw_f32_to_bf16(0.37f * (float)i - 3.0f);
  for (int i = 0; i < NCTX * D; ++i) pos[i] = 0.011f * (float)(i * i % 97);
  int fails = 0;
  // Three sequences of two tokens at positions 6, 7 (the last legal window for T = 2).
  const int32_t beams[6] = {1, 2, 9, 2, 0, 10};
  int rc = ckw_bf16_embedding_positions(y, beams, table, pos, 3, 2, D, V, NCTX, 6);
  for (int i = 0; i < 6; ++i)
    for (int d = 0; d < D; ++d) {
      // The widening is a 16-bit shift: the value's fp32 bits are the table entry then zeros.
      const float want = ckw_bf16_to_f32(table[beams[i] * D + d]) + pos[(6 + i % 2) * D + d];
      if (rc != 0 || memcmp(&y[i * D + d], &want, sizeof want) != 0) {
        fprintf(stderr, "3 sequences: rc=%d, row %d col %d: %.9g want %.9g\n", rc, i, d, y[i * D + d], want);
        ++fails;
      }
    }
  fails +=
      EMBEDDING_BAD_INPUT_FAILURES(ckw_bf16_embedding_positions, ckw_bf16_embedding_positions_strerror, y, table, pos);
  // One position per sequence: each sequence's rows are the scalar-offset kernel's at offset pos[b].
  fails += EMBEDDING_ROWS_MATCH_FAILURES(ckw_bf16_embedding_positions_rows, ckw_bf16_embedding_positions, y, per_seq,
                                         table, pos);
  fails += EMBEDDING_ROWS_BAD_INPUT_FAILURES(ckw_bf16_embedding_positions_rows, ckw_bf16_embedding_positions_strerror,
                                             y, table, pos);
  printf("bf16_embedding_positions: %d failures\n", fails);
  return fails != 0;
}
