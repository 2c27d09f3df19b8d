// The f16 cross-K/V cache write (GB/s read + written, us per call): a K or V projection
// [1500, 384] into an f16 cache [6, 1500, 64], beside the f32 converter on the same shape. Run
// once per 30-second window and layer, per K and V.
#include <stdio.h>
#include <stdlib.h>

#include "kernels/common/bench_util.h"
#include "kernels/layout/f16_layout.h"

int main(int argc, char** argv) {
  const int bench = ckw_bench_requested(argc, argv);
  const int64_t T = bench ? 1500 : 20, H = 6, Dh = 64, C = H * Dh;
  float* src = malloc(sizeof(float) * T * C);
  float* dst32 = malloc(sizeof(float) * T * C);
  uint16_t* dst16 = malloc(sizeof(uint16_t) * T * C);
  for (int64_t i = 0; i < T * C; ++i) src[i] = (float)(i % 1000) * 0.01f - 5.0f;
  double t32, t16;
  int rc = 0;
  CKW_BENCH_BEST(t32, bench ? 20 : 1, rc |= ckw_f32_token_to_head_major(dst32, src, T, H, Dh, T, 0));
  CKW_BENCH_BEST(t16, bench ? 20 : 1, rc |= ckw_f16_token_to_head_major(dst16, src, T, H, Dh, T, 0));
  if (bench) {
    printf("f32 token_to_head_major %lldx%lld: %7.1f us %6.1f GB/s\n", (long long)T, (long long)C, t32 * 1e6,
           8.0 * T * C / t32 * 1e-9);
    printf("f16 token_to_head_major %lldx%lld: %7.1f us %6.1f GB/s\n", (long long)T, (long long)C, t16 * 1e6,
           6.0 * T * C / t16 * 1e-9);
  } else {
    printf("smoke run ok (pass --benchmark for the table)\n");
  }
  free(src), free(dst32), free(dst16);
  return rc != 0;
}
