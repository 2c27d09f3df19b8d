// f16-table embedding + positions next to the f32 table: time per decoder prefill (T = 448) and
// per decode step (T = 1).
#include <stdio.h>
#include <stdlib.h>

#include "kernels/common/bench_util.h"
#include "kernels/embedding/f16_embedding_positions.h"

int main(int argc, char** argv) {
  const int bench = ckw_bench_requested(argc, argv);
  const int64_t V = bench ? 51865 : 100, D = bench ? 384 : 8, NCTX = 448;
  uint16_t* table = malloc(sizeof(uint16_t) * V * D);
  float* table32 = malloc(sizeof(float) * V * D);
  float* pos = malloc(sizeof(float) * NCTX * D);
  float* y = malloc(sizeof(float) * NCTX * D);
  int32_t tok[448];
  for (int64_t i = 0; i < V * D; ++i) table[i] = (uint16_t)(0x3c00 + i % 17), table32[i] = (float)(i % 17);
  for (int64_t i = 0; i < NCTX * D; ++i) pos[i] = (float)(i % 5);
  for (int i = 0; i < 448; ++i) tok[i] = (int32_t)((i * 7919) % V);
  int rc = 0;
  const int64_t Ts[2] = {448, 1};
  for (int c = 0; c < 2; ++c) {
    double t16, t32;
    CKW_BENCH_BEST(t16, bench ? 50 : 1, rc |= ckw_f16_embedding_positions(y, tok, table, pos, 1, Ts[c], D, V, NCTX, 0));
    CKW_BENCH_BEST(t32, bench ? 50 : 1, rc |= ckw_f32_embedding_positions(y, tok, table32, pos, 1, Ts[c], D, V, NCTX, 0));
    if (bench)
      printf("embedding_positions T=%-4lld D=%lld: f16 table %8.2f us, f32 table %8.2f us\n", (long long)Ts[c],
             (long long)D, t16 * 1e6, t32 * 1e6);
  }
  if (rc) fprintf(stderr, "unexpected error %d: %s\n", rc, ckw_f16_embedding_positions_strerror(rc));
  free(table), free(table32), free(pos), free(y);
  if (!bench) printf("smoke run ok (pass --benchmark for the table)\n");
  return rc != 0;
}
