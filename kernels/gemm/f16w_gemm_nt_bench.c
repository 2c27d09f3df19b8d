// f16-weight GEMM benchmark next to the f32 engine. Under `bazel test` it runs each shape once on
// small sizes as a smoke test; with --benchmark it times Whisper's shapes per ISA path and prints
// GFLOPS (the f32 column is the dispatching f32 engine on the same values as fp32 weights).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/common/bench_util.h"
#include "kernels/common/f16.h"
#include "kernels/common/cpu.h"
#include "kernels/common/f32_gemm_nt_core.h"
#include "kernels/gemm/f16w_gemm_nt_bias.h"
#include "kernels/gemm/f16w_gemm_nt_contract.h"

typedef void (*bias_fn)(float*, const float*, const uint16_t*, const float*, float*, int64_t, int64_t, int64_t, int64_t);

// The scratch the maps declare; the f32 column gets the same.
static float g_scratch[CKW_GEMM_PACK_BYTES / sizeof(float)];

int main(int argc, char** argv) {
  const int bench = ckw_bench_requested(argc, argv);
  const struct {
    const char* label;
    int64_t M, N, K;
  } shapes[] = {
      {"logits M=1 (tiny)", 1, 51865, 384}, {"logits M=5 (beams)", 5, 51865, 384},
      {"decode fc1 M=1", 1, 1536, 384},     {"encoder qkv/out (tiny)", 1500, 384, 384},
      {"encoder fc1 (tiny)", 1500, 1536, 384}, {"encoder fc2 (tiny)", 1500, 384, 1536},
      {"encoder fc1 (base)", 1500, 2048, 512},
  };
  const struct {
    const char* name;
    int ok;
    bias_fn f;
  } paths[] = {
#define ISA(isa) {#isa, ckw_cpu_has_##isa(), ckw_f16w_gemm_nt_bias__##isa},
      CKW_F16W_GEMM_NT_ISAS(ISA)
#undef ISA
  };
  const int npaths = sizeof paths / sizeof paths[0];
  if (bench) {
    printf("%-24s %5s %6s %5s %9s", "shape", "M", "N", "K", "f32");
    for (int p = 0; p < npaths; ++p) printf(" %10s", paths[p].name);
    printf("   (GFLOPS by thread CPU time, best of N, 1 thread; f32: dispatching f32 engine; others: f16w)\n");
  }
  int bad = 0;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    // Smoke mode shrinks every dim so the whole table costs milliseconds.
    const int64_t M = bench ? shapes[s].M : (shapes[s].M + 99) / 100;
    const int64_t N = bench ? shapes[s].N : (shapes[s].N + 99) / 100 + 3;
    const int64_t K = bench ? shapes[s].K : (shapes[s].K + 49) / 50;
    float* x = malloc(sizeof(float) * M * K);
    uint16_t* w = malloc(sizeof(uint16_t) * N * K);
    float* wf = malloc(sizeof(float) * N * K);
    float* b = malloc(sizeof(float) * N);
    float* y = malloc(sizeof(float) * M * N);
    for (int64_t i = 0; i < M * K; ++i) x[i] = (float)((i * 7919) % 1000) * 1e-3f - 0.5f;
    for (int64_t i = 0; i < N * K; ++i) {
      w[i] = ckw_f32_to_f16((float)((i * 104729) % 1000) * 1e-3f - 0.5f);
      wf[i] = ckw_f16_to_f32(w[i]);
    }
    for (int64_t i = 0; i < N; ++i) b[i] = 0.01f * (float)(i % 7);
    const double flop = 2.0 * M * N * K;
    int reps = bench ? (int)(2e9 / (flop + 1e6)) + 3 : 1;
    if (reps > 2000) reps = 2000;
    double t;
    CKW_BENCH_BEST(t, reps, ckw_f32_gemm_nt_core(y, x, wf, b, NULL, g_scratch, CKW_GEMM_PACK_BYTES / sizeof(float), M, N, K, N, CKW_GEMM_EPI_PLAIN));
    if (bench) printf("%-24s %5lld %6lld %5lld %9.1f", shapes[s].label, (long long)M, (long long)N, (long long)K,
                      flop / t * 1e-9);
    for (int p = 0; p < npaths; ++p) {
      if (!paths[p].ok || (bench && strcmp(paths[p].name, "scalar") == 0 && flop > 2e9)) {
        if (bench) printf(" %10s", "-");
        continue;
      }
      CKW_BENCH_BEST(t, reps, paths[p].f(y, x, w, b, g_scratch, M, N, K, N));
      for (int64_t i = 0; i < M * N; ++i) bad |= !isfinite(y[i]);
      if (bench) printf(" %10.1f", flop / t * 1e-9);
    }
    if (bench) printf("\n");
    free(x), free(w), free(wf), free(b), free(y);
  }
  if (bad) fprintf(stderr, "non-finite output\n");
  if (!bench) printf("smoke run ok (pass --benchmark for the GFLOPS table)\n");
  return bad;
}
