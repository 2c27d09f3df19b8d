// Magnitude throughput at Silero VAD's spectrum: 129 bins a frame, 30 s of 16 kHz audio
// (3748 frames); GB/s read + written.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/audio/f32_complex_magnitude.h"
#include "kernels/common/bench_util.h"

int main(int argc, char** argv) {
  const int bench = ckw_bench_requested(argc, argv);
  const int64_t R = bench ? 3748 : 3, NB = 129;
  float* x = malloc(sizeof(float) * (size_t)(R * 2 * NB));
  float* y = malloc(sizeof(float) * (size_t)(R * NB));
  for (int64_t i = 0; i < R * 2 * NB; ++i) x[i] = (float)(i % 97) * 0.125f - 6.0f;
  double t;
  CKW_BENCH_BEST(t, bench ? 50 : 1, ckw_f32_complex_magnitude(y, x, R, NB));
  const float re = x[(R - 1) * 2 * NB + 5], im = x[(R - 1) * 2 * NB + NB + 5];
  const float re2 = re * re, im2 = im * im;
  const int right = y[(R - 1) * NB + 5] == sqrtf(re2 + im2);
  if (bench) {
    printf("complex_magnitude %lldx%lld: %7.1f us %6.1f GB/s\n", (long long)R, (long long)NB, t * 1e6,
           12.0 * (double)(R * NB) / t * 1e-9);
  } else {
    printf("smoke run ok (pass --benchmark for the table)\n");
  }
  free(x), free(y);
  return !right;
}
