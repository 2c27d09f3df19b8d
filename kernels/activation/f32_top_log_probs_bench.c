// A beam step's ranking: 5 rows (beams) of a 51865-token vocabulary, decoder-like logits (a few
// far above a wide bulk), k = 6, per ISA path, next to the method it replaces (numpy's
// token_choice.top_log_probs) in plain C: libm exp over every finite logit, then one selection
// pass over the row. Under `bazel test` one small call; --benchmark prints the table.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/activation/f32_top_log_probs.h"
#include "kernels/common/bench_util.h"
#include "kernels/common/cpu.h"

typedef struct {
  float lp;
  int32_t t;
} pair_t;

// The plain method: the float64 sum with libm's exp, then every token's lp into a K-list
// (larger lp, then lower token, first).
static void plain(int32_t* tokens, float* lps, const float* x, int64_t R, int64_t V, int64_t K, pair_t* list) {
  for (int64_t r = 0; r < R; ++r, x += V) {
    double m = -INFINITY, sum = 0.0;
    for (int64_t j = 0; j < V; ++j) m = x[j] > m ? x[j] : m;
    for (int64_t j = 0; j < V; ++j) sum += x[j] > -INFINITY ? exp((double)x[j] - m) : 0.0;
    const double ls = log(sum);
    int64_t n = 0;
    for (int64_t j = 0; j < V; ++j) {
      const float v = (float)(((double)x[j] - m) - ls);
      if (n == K && !(v > list[K - 1].lp)) continue;
      int64_t i = n < K ? n++ : K - 1;
      for (; i > 0 && v > list[i - 1].lp; --i) list[i] = list[i - 1];
      list[i] = (pair_t){v, (int32_t)j};
    }
    for (int64_t i = 0; i < K; ++i) tokens[r * K + i] = list[i].t, lps[r * K + i] = list[i].lp;
  }
}

int main(int argc, char** argv) {
  const int bench = ckw_bench_requested(argc, argv);
  const int64_t R = 5, V = bench ? 51865 : 300, K = 6;
  float* x = malloc(sizeof(float) * (size_t)(R * V));
  pair_t all[6];
  int32_t tok[5 * 6], want[5 * 6];
  float lp[5 * 6], want_lp[5 * 6];
  uint32_t seed = 1;
  for (int64_t i = 0; i < R * V; ++i) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = 6.0f * (float)(seed >> 8) / 16777216.0f - 11.0f + (i % 4099 == 7 ? 20.0f : 0.0f);
  }
  double t;
  CKW_BENCH_BEST(t, bench ? 20 : 1, plain(want, want_lp, x, R, V, K, all));
  if (bench)
    printf("%-10s %9.1f us per call of %lld rows x %lld tokens, k = %lld\n", "plain", t * 1e6, (long long)R,
           (long long)V, (long long)K);
  const struct {
    const char* name;
    int ok;
    int (*f)(int32_t*, float*, const float*, int64_t, int64_t, int64_t);
  } paths[] = {{"scalar", 1, ckw_f32_top_log_probs__scalar},
               {"avx2", ckw_cpu_has_avx2(), ckw_f32_top_log_probs__avx2},
               {"avx512", ckw_cpu_has_avx512(), ckw_f32_top_log_probs__avx512}};
  int bad = 0;
  for (size_t p = 0; p < sizeof paths / sizeof paths[0]; ++p) {
    if (!paths[p].ok) continue;
    CKW_BENCH_BEST(t, bench ? 200 : 1, paths[p].f(tok, lp, x, R, V, K));
    for (int i = 0; i < R * K; ++i) bad += tok[i] != want[i] || lp[i] != want_lp[i];
    if (bench) printf("%-10s %9.1f us\n", paths[p].name, t * 1e6);
  }
  if (!bench) printf("smoke run %s (pass --benchmark for the table)\n", bad ? "FAILED" : "ok");
  free(x);
  return bad != 0;
}
