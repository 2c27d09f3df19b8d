// Whisper tiny's conv stem: conv1 (80 -> 384, stride 1, T 3000) and conv2 (384 -> 384,
// stride 2) with the fused GELU; GFLOPS = 2 * Tout * Cout * Cin * 3 / time (im2col included).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/common/bench_util.h"
#include "kernels/conv/f32_conv1d_k3.h"

int main(int argc, char** argv) {
  const int bench = ckw_bench_requested(argc, argv);
  const int64_t d = bench ? 384 : 16, T = bench ? 3000 : 40;
  struct {
    const char* label;
    int64_t Cin, Cout, Tin, stride;
  } cases[] = {{"conv1 80->d s1", 80, d, T, 1}, {"conv2 d->d s2", d, d, T, 2}};
  int bad = 0;
  for (int c = 0; c < 2; ++c) {
    const int64_t Cin = cases[c].Cin, Cout = cases[c].Cout, Tin = cases[c].Tin;
    const int64_t Tout = (Tin - 1) / cases[c].stride + 1;
    float* x = malloc(sizeof(float) * Cin * Tin);
    float* w = malloc(sizeof(float) * Cout * Cin * 3);
    float* b = malloc(sizeof(float) * Cout);
    float* y = malloc(sizeof(float) * Tout * Cout);
    float* scratch = malloc((size_t)ckw_f32_conv1d_k3_scratch_bytes(Cin, Tout));
    for (int64_t i = 0; i < Cin * Tin; ++i) x[i] = (float)(i % 11) * 0.1f - 0.5f;
    for (int64_t i = 0; i < Cout * Cin * 3; ++i) w[i] = (float)(i % 7) * 0.01f - 0.03f;
    for (int64_t i = 0; i < Cout; ++i) b[i] = 0.1f;
    double t;
    CKW_BENCH_BEST(t, bench ? 5 : 1,
                   ckw_f32_conv1d_k3_gelu(y, x, w, b, scratch, Cin, Cout, Tin, 0, Tout, cases[c].stride));
    for (int64_t i = 0; i < Tout * Cout; ++i) bad |= !isfinite(y[i]);
    if (bench)
      printf("%-16s Tout=%lld: %7.2f ms %6.1f GFLOPS\n", cases[c].label, (long long)Tout, t * 1e3,
             2.0 * Tout * Cout * Cin * 3 / t * 1e-9);
    free(x), free(w), free(b), free(y), free(scratch);
  }
  if (!bench) printf("smoke run ok (pass --benchmark for the table)\n");
  return bad;
}
