// Paged pool writes and block copies (us per call, GB/s read + written, warm caches): a decode
// step of B = 8..64 sequences with one row each into a 2048-block pool of 16-row blocks (H = 6,
// Dh = 64, 28-entry tables: tiny's self-K/V), a cross-K/V entry (1500 rows into a 16-entry pool
// of 1500-row blocks) and a beam fork's in-place block copies.
#include <stdio.h>
#include <stdlib.h>

#include "kernels/common/bench_util.h"
#include "kernels/layout/f32_paged.h"

static int64_t bench_write(int bench, const char* what, int64_t B, int64_t T, int64_t H, int64_t Dh, int64_t NB,
                           int64_t R, int64_t MB) {
  float* pool = calloc((size_t)(NB * H * R * Dh), sizeof(float));
  float* src = malloc(sizeof(float) * (size_t)(B * T * H * Dh));
  int32_t* pos = malloc(sizeof(int32_t) * (size_t)B);
  int32_t* table = malloc(sizeof(int32_t) * (size_t)(B * MB));
  void* scratch = malloc((size_t)ckw_f32_token_to_paged_scratch_bytes(NB, R) + 8);
  for (int64_t i = 0; i < B * T * H * Dh; ++i) src[i] = (float)i;
  // Sequences spread over the pool (7 is prime to the pool sizes used), at varied positions.
  for (int64_t b = 0; b < B; ++b) {
    pos[b] = (int32_t)((b * 37) % (MB * R - T + 1));
    for (int64_t k = 0; k < MB; ++k) table[b * MB + k] = (int32_t)((b * MB + k) * 7 % NB);
  }
  const int inner = bench ? (T > 1 ? 20 : 2000) : 1;
  double t;
  int64_t rc = 0;
  CKW_BENCH_BEST(t, bench ? 20 : 1,
                 for (int i = 0; i < inner; ++i) rc |=
                 ckw_f32_token_to_paged(pool, src, pos, table, scratch, B, T, H, Dh, NB, R, MB));
  t /= inner;
  if (bench)
    printf("token_to_paged %-16s B %2lld T %4lld: %8.2f us %6.1f GB/s\n", what, (long long)B, (long long)T, t * 1e6,
           8.0 * (double)(B * T * H * Dh) / t * 1e-9);
  free(pool), free(src), free(pos), free(table), free(scratch);
  return rc;
}

static int64_t bench_copy(int bench, int64_t n, int64_t NB, int64_t X) {
  float* pool = calloc((size_t)(NB * X), sizeof(float));
  int32_t* src_ids = malloc(sizeof(int32_t) * (size_t)n);
  int32_t* dst_ids = malloc(sizeof(int32_t) * (size_t)n);
  for (int64_t i = 0; i < n; ++i) src_ids[i] = (int32_t)(2 * i * 7 % NB | 1), dst_ids[i] = (int32_t)(2 * i);
  const int inner = bench ? 200 : 1;
  double t;
  int64_t rc = 0;
  CKW_BENCH_BEST(t, bench ? 20 : 1,
                 for (int i = 0; i < inner; ++i) rc |= ckw_f32_copy_blocks(pool, pool, src_ids, dst_ids, n, NB, X));
  t /= inner;
  if (bench)
    printf("copy_blocks in place n %2lld, blocks of %lld floats: %8.2f us %6.1f GB/s\n", (long long)n, (long long)X,
           t * 1e6, 8.0 * (double)(n * X) / t * 1e-9);
  free(pool), free(src_ids), free(dst_ids);
  return rc;
}

int main(int argc, char** argv) {
  const int bench = ckw_bench_requested(argc, argv);
  const int64_t H = bench ? 6 : 2, Dh = bench ? 64 : 4, NB = bench ? 2048 : 64, R = 16, MB = bench ? 28 : 4;
  int64_t rc = 0;
  const int64_t batches[4] = {8, 16, 32, 64};
  for (int i = 0; i < (bench ? 4 : 1); ++i) rc |= bench_write(bench, "decode step", batches[i], 1, H, Dh, NB, R, MB);
  const int64_t cross = bench ? 1500 : 30;
  rc |= bench_write(bench, "cross-K/V entry", 1, cross, H, Dh, 16, cross, 1);
  rc |= bench_copy(bench, 5, NB, H * R * Dh);
  if (bench) rc |= bench_copy(bench, 64, NB, H * R * Dh);
  if (!bench) printf("smoke run ok (pass --benchmark for the table)\n");
  return rc != 0;
}
