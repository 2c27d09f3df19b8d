// Fill bandwidth (GB/s written): Silero VAD's state reset (2 x 128 LSTM floats and 64 samples of
// context) and a 1 MiB buffer.
#include <stdio.h>
#include <stdlib.h>

#include "kernels/common/bench_util.h"
#include "kernels/layout/f32_fill.h"

int main(int argc, char** argv) {
  const int bench = ckw_bench_requested(argc, argv);
  const int64_t sizes[] = {320, 262144};
  float* y = malloc(sizeof(float) * (size_t)sizes[1]);
  int ok = 1;
  for (int s = 0; s < 2; ++s) {
    const int64_t n = bench ? sizes[s] : 5;
    double t;
    CKW_BENCH_BEST(t, bench ? 200 : 1, ckw_f32_fill(y, n, 0.0f));
    ok &= y[n - 1] == 0.0f;
    if (bench) printf("fill %8lld floats: %8.3f us %6.1f GB/s\n", (long long)n, t * 1e6, 4.0 * (double)n / t * 1e-9);
  }
  if (!bench) printf("smoke run ok (pass --benchmark for the table)\n");
  free(y);
  return !ok;
}
