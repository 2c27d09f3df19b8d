// int8-weight GEMM benchmark: each ISA path of ckw_i8w_gemm_nt_bias (x quantized inside, so its
// cost is in the figure) next to the bf16w and f16w engines' best paths on the same values, at
// Whisper tiny's decode (M = 1, 5; 16 and 64 sequences in one step) and encoder (M = 1500) shapes. Under `bazel test`
// each shape runs once on small sizes as a smoke test; with --benchmark it prints GFLOPS (2 M N K per call).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/common/bench_util.h"
#include "kernels/common/bf16.h"
#include "kernels/common/bf16w_gemm_nt_core.h"
#include "kernels/common/cpu.h"
#include "kernels/common/f16.h"
#include "kernels/common/f16w_gemm_nt_core.h"
#include "kernels/gemm/i8w_gemm_nt.h"
#include "kernels/gemm/i8w_gemm_nt_contract.h"

typedef void (*bias_fn)(float*, const float*, const int8_t*, const float*, const float*, void*, int64_t, int64_t,
                        int64_t, int64_t);

static float g_pack[CKW_GEMM_PACK_BYTES / sizeof(float)];  // the w16 maps' scratch

int main(int argc, char** argv) {
  const int bench = ckw_bench_requested(argc, argv);
  const struct {
    const char* label;
    int64_t M, N, K;
  } shapes[] = {
      {"decode qkv/out M=1", 1, 384, 384}, {"decode fc1 M=1", 1, 1536, 384}, {"decode fc2 M=1", 1, 384, 1536},
      {"decode qkv/out M=5", 5, 384, 384}, {"decode fc1 M=5", 5, 1536, 384}, {"decode fc2 M=5", 5, 384, 1536},
      {"encoder qkv/out", 1500, 384, 384}, {"encoder fc1", 1500, 1536, 384}, {"encoder fc2", 1500, 384, 1536},
      {"logits M=1", 1, 51865, 384},       {"logits M=5", 5, 51865, 384},    {"decode fc1 M=16", 16, 1536, 384},
      {"decode fc1 M=64", 64, 1536, 384},
  };
  const struct {
    const char* name;
    int ok;
    bias_fn f;
  } paths[] = {
#define ISA(isa) {#isa, ckw_cpu_has_##isa(), ckw_i8w_gemm_nt_bias__##isa},
      CKW_I8W_GEMM_NT_ISAS(ISA)
#undef ISA
  };
  const int npaths = sizeof paths / sizeof paths[0];
  if (bench) {
    printf("%-20s %5s %6s %5s %8s %8s", "shape (tiny)", "M", "N", "K", "bf16w", "f16w");
    for (int p = 0; p < npaths; ++p) printf(" %10s", paths[p].name);
    printf(
        "   (GFLOPS = 2MNK / thread CPU time, best of N, 1 thread; bf16w, f16w: their best path here; the rest: "
        "i8w, x quantized inside)\n");
  }
  int bad = 0;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    // Smoke mode shrinks every dim so the whole table costs milliseconds.
    const int64_t M = bench ? shapes[s].M : (shapes[s].M + 99) / 100;
    const int64_t N = bench ? shapes[s].N : (shapes[s].N + 99) / 100 + 3;
    const int64_t K = bench ? shapes[s].K : (shapes[s].K + 49) / 50;
    float *x = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * M * N);
    float* ws = malloc(sizeof(float) * N);
    int8_t* w = malloc((size_t)(N * K));
    uint16_t *wb = malloc(sizeof(uint16_t) * N * K), *wh = malloc(sizeof(uint16_t) * N * K);
    void* scratch = malloc((size_t)ckw_i8w_gemm_nt_scratch_bytes(M, K));
    for (int64_t i = 0; i < M * K; ++i) x[i] = (float)((i * 7919) % 1000) * 1e-3f - 0.5f;
    for (int64_t i = 0; i < N * K; ++i) {
      w[i] = (int8_t)((i * 104729) % 255 - 127);
      wb[i] = ckw_f32_to_bf16(w[i] * 0.004f), wh[i] = ckw_f32_to_f16(w[i] * 0.004f);
    }
    for (int64_t i = 0; i < N; ++i) b[i] = 0.01f * (float)(i % 7), ws[i] = 0.004f;
    const double flop = 2.0 * M * N * K;
    int reps = bench ? (int)(2e9 / (flop + 1e6)) + 3 : 1;
    if (reps > 2000) reps = 2000;
    double t;
    if (bench) printf("%-20s %5lld %6lld %5lld", shapes[s].label, (long long)M, (long long)N, (long long)K);
    CKW_BENCH_BEST(t, reps,
                   ckw_bf16w_gemm_nt_core(y, x, wb, b, NULL, g_pack, CKW_GEMM_PACK_BYTES / sizeof(float), M, N, K, N,
                                          CKW_GEMM_EPI_PLAIN));
    if (bench) printf(" %8.1f", flop / t * 1e-9);
    CKW_BENCH_BEST(t, reps,
                   ckw_f16w_gemm_nt_core(y, x, wh, b, NULL, g_pack, CKW_GEMM_PACK_BYTES / sizeof(float), M, N, K, N,
                                         CKW_GEMM_EPI_PLAIN));
    if (bench) printf(" %8.1f", flop / t * 1e-9);
    for (int p = 0; p < npaths; ++p) {
      if (!paths[p].ok || (bench && strcmp(paths[p].name, "scalar") == 0 && flop > 2e9)) {
        if (bench) printf(" %10s", "-");
        continue;
      }
      CKW_BENCH_BEST(t, reps, paths[p].f(y, x, w, ws, b, scratch, M, N, K, N));
      for (int64_t i = 0; i < M * N; ++i) bad |= !isfinite(y[i]);
      if (bench) printf(" %10.1f", flop / t * 1e-9);
    }
    if (bench) printf("\n");
    free(x), free(b), free(y), free(ws), free(w), free(wb), free(wh), free(scratch);
  }
  if (bad) fprintf(stderr, "non-finite output\n");
  if (!bench) printf("smoke run ok (pass --benchmark for the GFLOPS table)\n");
  return bad;
}
