// im2row bandwidth (GB/s written) at Silero VAD's first encoder convolution over 30 s of 16 kHz
// audio in one call: 937 windows of 4 frames x 129 bins, K 3, padding 1.
#include <stdio.h>
#include <stdlib.h>

#include "kernels/common/bench_util.h"
#include "kernels/layout/f32_im2row.h"

int main(int argc, char** argv) {
  const int bench = ckw_bench_requested(argc, argv);
  const int64_t B = bench ? 937 : 2, Tin = 4, Tout = 4, C = 129, K = 3;
  float* x = malloc(sizeof(float) * (size_t)(B * Tin * C));
  float* y = malloc(sizeof(float) * (size_t)(B * Tout * K * C));
  for (int64_t i = 0; i < B * Tin * C; ++i) x[i] = (float)i;
  double t;
  CKW_BENCH_BEST(t, bench ? 50 : 1, ckw_f32_im2row(y, x, B, Tin, Tout, C, K, 1, 1));
  // Row 1 of sequence B - 1 is its frames 0, 1, 2.
  const int ok = y[((B - 1) * Tout + 1) * K * C] == x[(B - 1) * Tin * C] && y[0] == 0.0f;
  if (bench) {
    printf("im2row %lldx%lldx%lld K %lld: %7.1f us %6.1f GB/s written\n", (long long)B, (long long)Tin, (long long)C,
           (long long)K, t * 1e6, 4.0 * (double)(B * Tout * K * C) / t * 1e-9);
  } else {
    printf("smoke run ok (pass --benchmark for the table)\n");
  }
  free(x), free(y);
  return !ok;
}
