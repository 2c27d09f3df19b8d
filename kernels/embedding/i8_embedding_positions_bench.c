// int8-table embedding + positions next to the f32 table: per decoder prefill (T = 448), per decode
// step (T = 1) and per decode step of 64 sequences at their own positions (the _rows kernels).
#include <stdio.h>
#include <stdlib.h>

#include "kernels/common/bench_util.h"
#include "kernels/embedding/i8_embedding_positions.h"

int main(int argc, char** argv) {
  const int bench = ckw_bench_requested(argc, argv);
  const int64_t V = bench ? 51865 : 100, D = bench ? 384 : 8, NCTX = 448;
  int8_t* table = malloc((size_t)(V * D));
  float* scale = malloc(sizeof(float) * V);
  float* table32 = malloc(sizeof(float) * V * D);
  float* pos = malloc(sizeof(float) * NCTX * D);
  float* y = malloc(sizeof(float) * NCTX * D);
  int32_t tok[448], seq_pos[64];
  for (int64_t i = 0; i < V * D; ++i) table[i] = (int8_t)(i % 255 - 127), table32[i] = (float)(i % 17);
  for (int64_t i = 0; i < V; ++i) scale[i] = 0.01f;
  for (int64_t i = 0; i < NCTX * D; ++i) pos[i] = (float)(i % 5);
  for (int i = 0; i < 448; ++i) tok[i] = (int32_t)((i * 7919) % V);
  for (int b = 0; b < 64; ++b) seq_pos[b] = (int32_t)((b * 97) % NCTX);
  int rc = 0;
  double t8, t32;
  const int64_t Ts[2] = {448, 1};
  for (int c = 0; c < 2; ++c) {
    CKW_BENCH_BEST(t8, bench ? 50 : 1,
                   rc |= ckw_i8_embedding_positions(y, tok, table, scale, pos, 1, Ts[c], D, V, NCTX, 0));
    CKW_BENCH_BEST(t32, bench ? 50 : 1,
                   rc |= ckw_f32_embedding_positions(y, tok, table32, pos, 1, Ts[c], D, V, NCTX, 0));
    if (bench)
      printf("embedding_positions T=%-4lld D=%lld: i8 table %8.2f us, f32 table %8.2f us\n", (long long)Ts[c],
             (long long)D, t8 * 1e6, t32 * 1e6);
  }
  CKW_BENCH_BEST(t8, bench ? 50 : 1,
                 rc |= ckw_i8_embedding_positions_rows(y, tok, table, scale, pos, seq_pos, 64, 1, D, V, NCTX));
  CKW_BENCH_BEST(t32, bench ? 50 : 1,
                 rc |= ckw_f32_embedding_positions_rows(y, tok, table32, pos, seq_pos, 64, 1, D, V, NCTX));
  if (bench)
    printf("embedding_positions_rows B=64 T=1 D=%lld: i8 table %8.2f us, f32 table %8.2f us\n", (long long)D, t8 * 1e6,
           t32 * 1e6);
  if (rc) fprintf(stderr, "unexpected error %d: %s\n", rc, ckw_i8_embedding_positions_strerror(rc));
  free(table), free(scale), free(table32), free(pos), free(y);
  if (!bench) printf("smoke run ok (pass --benchmark for the table)\n");
  return rc != 0;
}
