// GEMM benchmark. Under `bazel test` it runs each shape once on small sizes as a smoke test;
// with --benchmark it times Whisper's shapes per ISA path and prints GFLOPS.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/common/bench_util.h"
#include "kernels/common/cpu.h"
#include "kernels/common/f32_gemm_nt_core.h"
#include "kernels/gemm/f32_gemm_nt.h"
#include "kernels/gemm/f32_gemm_nt_bias.h"
#include "kernels/gemm/f32_gemm_nt_bias_gelu.h"
#include "kernels/gemm/f32_gemm_nt_contract.h"
#include "kernels/gemm/f32_gemm_nt_bias_residual.h"

typedef void (*bias_fn)(float*, const float*, const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t,
                        int);

// The scratch the maps declare (W packed once per column block); "per-block" times the same
// dispatching entry without it (per-block: every panel packed again per row block).
static float g_scratch[CKW_GEMM_PACK_BYTES / sizeof(float)];

// Best-of-`reps` seconds for one call (min filters out the other tenants of the machine).
static double time_call(bias_fn f, float* y, const float* x, const float* w, const float* b, int64_t M, int64_t N,
                        int64_t K, int alone, int reps) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    double t0 = ckw_bench_now();
    f(y, x, w, b, g_scratch, M, N, K, N, alone);
    double t = ckw_bench_now() - t0;
    if (t < best) best = t;
  }
  return best;
}

static void logits_adapter(float* y, const float* x, const float* w, const float* b, float* scratch, int64_t M,
                           int64_t N, int64_t K, int64_t ldy, int alone) {
  (void)b;
  ckw_f32_gemm_nt(y, x, w, scratch, M, N, K, ldy, alone);
}

static void no_scratch_adapter(float* y, const float* x, const float* w, const float* b, float* scratch, int64_t M,
                               int64_t N, int64_t K, int64_t ldy, int alone) {
  (void)scratch;
  ckw_f32_gemm_nt_bias(y, x, w, b, NULL, M, N, K, ldy, alone);
}

int main(int argc, char** argv) {
  int bench = ckw_bench_requested(argc, argv);
  struct {
    const char* label;
    int64_t M, N, K;
    int alone;  // rows_alone: the decode of many sequences, next to the same M without it
  } shapes[] = {
      {"encoder qkv/out (tiny)", 1500, 384, 384, 0},
      {"encoder fc1 (tiny)", 1500, 1536, 384, 0},
      {"encoder fc2 (tiny)", 1500, 384, 1536, 0},
      {"encoder fc1 (base)", 1500, 2048, 512, 0},
      {"decode linear M=1", 1, 384, 384, 0},
      {"decode fc1 M=1", 1, 1536, 384, 0},
      {"prefill M=4", 4, 384, 384, 0},
      {"logits M=1", 1, 51865, 384, 0},
      {"decode fc1 M=16", 16, 1536, 384, 0},
      {"decode fc1 M=16 alone", 16, 1536, 384, 1},
      {"decode fc1 M=40", 40, 1536, 384, 0},
      {"decode fc1 M=40 alone", 40, 1536, 384, 1},
      {"decode fc1 M=64", 64, 1536, 384, 0},
      {"decode fc1 M=64 alone", 64, 1536, 384, 1},
      {"logits M=16", 16, 51865, 384, 0},
      {"logits M=16 alone", 16, 51865, 384, 1},
  };
  struct {
    const char* name;
    int ok;
    bias_fn f;
  } paths[] = {
#define ISA(isa) {#isa, ckw_cpu_has_##isa(), ckw_f32_gemm_nt_bias__##isa},
      CKW_F32_GEMM_NT_ISAS(ISA)
#undef ISA
          {"gelu", 1, ckw_f32_gemm_nt_bias_gelu},
      {"logits", 1, logits_adapter},
      {"per-block", 1, no_scratch_adapter},
  };
  const int npaths = sizeof paths / sizeof paths[0];
  if (bench) {
    printf("%-24s %5s %6s %5s", "shape", "M", "N", "K");
    for (int p = 0; p < npaths; ++p) printf(" %9s", paths[p].name);
    printf("   (GFLOPS by thread CPU time, best of N, 1 thread; gelu/logits: dispatching entry)\n");
  }
  int bad = 0;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    // Smoke mode shrinks every dim so the whole table costs milliseconds.
    int64_t M = bench ? shapes[s].M : (shapes[s].M + 99) / 100;
    int64_t N = bench ? shapes[s].N : (shapes[s].N + 99) / 100 + 3;
    int64_t K = bench ? shapes[s].K : (shapes[s].K + 49) / 50;
    float* x = malloc(sizeof(float) * M * K);
    float* w = malloc(sizeof(float) * N * K);
    float* b = malloc(sizeof(float) * N);
    float* y = malloc(sizeof(float) * M * N);
    for (int64_t i = 0; i < M * K; ++i) x[i] = (float)((i * 7919) % 1000) * 1e-3f - 0.5f;
    for (int64_t i = 0; i < N * K; ++i) w[i] = (float)((i * 104729) % 1000) * 1e-3f - 0.5f;
    for (int64_t i = 0; i < N; ++i) b[i] = 0.01f * (float)(i % 7);
    if (bench) printf("%-24s %5lld %6lld %5lld", shapes[s].label, (long long)M, (long long)N, (long long)K);
    double flop = 2.0 * M * N * K;
    for (int p = 0; p < npaths; ++p) {
      if (!paths[p].ok || (bench && strcmp(paths[p].name, "scalar") == 0 && flop > 2e9)) {
        if (bench) printf(" %9s", "-");
        continue;
      }
      int reps = bench ? (int)(2e9 / (flop + 1e6)) + 3 : 1;
      if (reps > 2000) reps = 2000;
      double t = time_call(paths[p].f, y, x, w, b, M, N, K, shapes[s].alone, reps);
      for (int64_t i = 0; i < M * N; ++i) bad |= !isfinite(y[i]);
      if (bench) printf(" %9.1f", flop / t * 1e-9);
    }
    if (bench) printf("\n");
    free(x), free(w), free(b), free(y);
  }
  if (bad) fprintf(stderr, "non-finite output\n");
  if (!bench) printf("smoke run ok (pass --benchmark for the GFLOPS table)\n");
  return bad;
}
