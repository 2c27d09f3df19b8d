// Converter bandwidth (GB/s read + written): conv-stem transpose [384, 1500] -> [1500, 384],
// and K/V projection [1500, 384] -> KV cache [6, 1500, 64].
#include <stdio.h>
#include <stdlib.h>

#include "kernels/common/bench_util.h"
#include "kernels/layout/f32_layout.h"

int main(int argc, char** argv) {
  const int bench = ckw_bench_requested(argc, argv);
  const int64_t T = bench ? 1500 : 20, H = 6, Dh = 64, C = H * Dh;
  float* a = malloc(sizeof(float) * T * C);
  float* b = malloc(sizeof(float) * T * C);
  for (int64_t i = 0; i < T * C; ++i) a[i] = (float)i;
  double t1, t2;
  int rc = 0;
  CKW_BENCH_BEST(t1, bench ? 20 : 1, ckw_f32_channel_to_token_major(b, a, C, T));
  CKW_BENCH_BEST(t2, bench ? 20 : 1, rc |= ckw_f32_token_to_head_major(b, a, T, H, Dh, T, 0));
  if (bench) {
    printf("channel_to_token_major %lldx%lld: %7.1f us %6.1f GB/s\n", (long long)C, (long long)T, t1 * 1e6,
           8.0 * T * C / t1 * 1e-9);
    printf("token_to_head_major    %lldx%lld: %7.1f us %6.1f GB/s\n", (long long)T, (long long)C, t2 * 1e6,
           8.0 * T * C / t2 * 1e-9);
  } else {
    printf("smoke run ok (pass --benchmark for the table)\n");
  }
  free(a), free(b);
  return rc != 0;
}
