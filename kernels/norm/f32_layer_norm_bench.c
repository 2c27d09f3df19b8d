// Layer norm throughput per ISA path at Whisper sizes (GB/s of x read + y written).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/common/bench_util.h"
#include "kernels/common/cpu.h"
#include "kernels/norm/f32_layer_norm.h"
#include "kernels/norm/f32_layer_norm_contract.h"

typedef void (*ln_fn)(float*, const float*, const float*, const float*, int64_t, int64_t, float);

int main(int argc, char** argv) {
  const int bench = ckw_bench_requested(argc, argv);
  const int64_t T = bench ? 1500 : 3, D = bench ? 384 : 19;
  float* x = malloc(sizeof(float) * T * D);
  float* y = malloc(sizeof(float) * T * D);
  float* g = malloc(sizeof(float) * D);
  float* b = malloc(sizeof(float) * D);
  for (int64_t i = 0; i < T * D; ++i) x[i] = (float)(i % 101) * 0.1f;
  for (int64_t i = 0; i < D; ++i) g[i] = 1.0f, b[i] = 0.0f;
  struct {
    const char* name;
    int ok;
    ln_fn f;
  } isas[] = {
#define ISA(isa) {#isa, ckw_cpu_has_##isa(), ckw_f32_layer_norm__##isa},
      CKW_F32_LAYER_NORM_ISAS(ISA)
#undef ISA
  };
  int bad = 0;
  if (bench) printf("layer_norm %lldx%lld (encoder), best of 20\n", (long long)T, (long long)D);
  for (size_t i = 0; i < sizeof isas / sizeof isas[0]; ++i) {
    if (!isas[i].ok) continue;
    double t;
    CKW_BENCH_BEST(t, bench ? 20 : 1, isas[i].f(y, x, g, b, T, D, 1e-5f));
    for (int64_t j = 0; j < T * D; ++j) bad |= !isfinite(y[j]);
    if (bench) printf("  %-8s %8.1f us  %6.1f GB/s\n", isas[i].name, t * 1e6, 8.0 * T * D / t * 1e-9);
  }
  free(x), free(y), free(g), free(b);
  if (!bench) printf("smoke run ok (pass --benchmark for the table)\n");
  return bad;
}
