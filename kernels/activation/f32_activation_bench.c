// gelu / softmax / add / relu / sigmoid throughput per ISA path (Gelem/s; GELU also in the GEMM
// epilogue).
// Smoke run under `bazel test`; `--benchmark` for the table at Whisper sizes.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/common/bench_util.h"
#include "kernels/common/cpu.h"
#include "kernels/activation/f32_add.h"
#include "kernels/activation/f32_gelu.h"
#include "kernels/activation/f32_relu.h"
#include "kernels/activation/f32_sigmoid.h"
#include "kernels/activation/f32_softmax.h"
#include "kernels/activation/f32_activation_contract.h"

typedef void (*unary_fn)(float*, const float*, int64_t, int64_t);

int main(int argc, char** argv) {
  const int bench = ckw_bench_requested(argc, argv);
  const int64_t T = bench ? 1500 : 3, D = bench ? 1536 : 37;  // encoder fc1 activations
  float* x = malloc(sizeof(float) * T * D);
  float* y = malloc(sizeof(float) * T * D);
  for (int64_t i = 0; i < T * D; ++i) x[i] = (float)(i % 2001) * 0.01f - 10.0f;
  struct {
    const char* name;
    int ok;
    unary_fn gelu, softmax, relu, sigmoid;
  } isas[] = {
#define ISA(isa) \
  {#isa, ckw_cpu_has_##isa(), ckw_f32_gelu__##isa, ckw_f32_softmax__##isa, ckw_f32_relu__##isa, ckw_f32_sigmoid__##isa},
      CKW_F32_ACTIVATION_ISAS(ISA)
#undef ISA
  };
  const int reps = bench ? 10 : 1;
  int bad = 0;
  if (bench)
    printf("%-8s %14s %14s %14s %14s %14s   (Gelem/s over %lldx%lld, best of %d)\n", "isa", "gelu", "softmax", "add",
           "relu", "sigmoid", (long long)T, (long long)D, reps);
  for (size_t i = 0; i < sizeof isas / sizeof isas[0]; ++i) {
    if (!isas[i].ok) {
      if (bench) printf("%-8s %14s\n", isas[i].name, "(not on this CPU)");
      continue;
    }
    double tg, ts, ta, tr, tsg;
    CKW_BENCH_BEST(tg, reps, isas[i].gelu(y, x, T, D));
    for (int64_t j = 0; j < T * D; ++j) bad |= !isfinite(y[j]);
    CKW_BENCH_BEST(ts, reps, isas[i].softmax(y, x, T, D));
    for (int64_t j = 0; j < T * D; ++j) bad |= !isfinite(y[j]);
    CKW_BENCH_BEST(ta, reps, ckw_f32_add(y, x, x, T, D));
    CKW_BENCH_BEST(tr, reps, isas[i].relu(y, x, T, D));
    for (int64_t j = 0; j < T * D; ++j) bad |= !isfinite(y[j]);
    CKW_BENCH_BEST(tsg, reps, isas[i].sigmoid(y, x, T, D));
    for (int64_t j = 0; j < T * D; ++j) bad |= !isfinite(y[j]);
    if (bench)
      printf("%-8s %14.2f %14.2f %14.2f %14.2f %14.2f\n", isas[i].name, T * D / tg * 1e-9, T * D / ts * 1e-9,
             T * D / ta * 1e-9, T * D / tr * 1e-9, T * D / tsg * 1e-9);
  }
  free(x), free(y);
  if (bad) fprintf(stderr, "non-finite output\n");
  if (!bench) printf("smoke run ok (pass --benchmark for the table)\n");
  return bad;
}
