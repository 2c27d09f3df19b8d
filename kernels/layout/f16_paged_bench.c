// The f16 paged cross-K/V entry (us per call, GB/s read + written): 1500 rows of 6 heads of 64
// into one 1500-row block of a 16-entry f16 pool, beside the f32 pool's kernel on the same call.
#include <stdio.h>
#include <stdlib.h>

#include "kernels/common/bench_util.h"
#include "kernels/layout/f16_paged.h"

int main(int argc, char** argv) {
  const int bench = ckw_bench_requested(argc, argv);
  const int64_t T = bench ? 1500 : 30, H = bench ? 6 : 2, Dh = bench ? 64 : 4, NB = 16, R = T, W = H * Dh;
  float* src = malloc(sizeof(float) * (size_t)(T * W));
  float* pool32 = calloc((size_t)(NB * R * W), sizeof(float));
  uint16_t* pool16 = calloc((size_t)(NB * R * W), sizeof(uint16_t));
  void* scratch = malloc((size_t)ckw_f32_token_to_paged_scratch_bytes(NB, R));
  for (int64_t i = 0; i < T * W; ++i) src[i] = (float)(i % 1000) * 0.01f - 5.0f;
  const int32_t entry[1] = {11};
  double t32, t16;
  int rc = 0;
  CKW_BENCH_BEST(t32, bench ? 20 : 1,
                 rc |= ckw_f32_token_to_paged(pool32, src, NULL, entry, scratch, 1, T, H, Dh, NB, R, 1));
  CKW_BENCH_BEST(t16, bench ? 20 : 1,
                 rc |= ckw_f16_token_to_paged(pool16, src, NULL, entry, scratch, 1, T, H, Dh, NB, R, 1));
  if (bench) {
    printf("f32 token_to_paged cross-K/V entry T %lld: %8.2f us %6.1f GB/s\n", (long long)T, t32 * 1e6,
           8.0 * (double)(T * W) / t32 * 1e-9);
    printf("f16 token_to_paged cross-K/V entry T %lld: %8.2f us %6.1f GB/s\n", (long long)T, t16 * 1e6,
           6.0 * (double)(T * W) / t16 * 1e-9);
  } else {
    printf("smoke run ok (pass --benchmark for the table)\n");
  }
  free(src), free(pool32), free(pool16), free(scratch);
  return rc != 0;
}
