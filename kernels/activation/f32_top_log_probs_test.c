// ckw_f32_top_log_probs against a float64 ranking of every token of each row (full sum, no cut,
// then sorted by (-lp, token)): random rows, peaked rows (a few logits far above the rest, as a
// confident decoder's), rows with tied logits and lps, logits a float32 step apart (equal lps
// whose order is the tokens', not the logits'), masked tokens, rows with fewer finite
// tokens than K, K = V; every row split of a call gives the whole call's result; refusals write
// nothing. Every ISA path (and, in the *_avx512emu test, the AVX-512 source built for AVX2).
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/activation/f32_top_log_probs.h"
#include "kernels/activation/f32_top_log_probs_contract.h"
#include "kernels/common/cpu.h"
#include "kernels/common/test_util.h"

_Static_assert(CKW_F32_TOP_LOG_PROBS_EXACT, "f32_top_log_probs.json states an exact contract");

typedef int (*top_fn)(int32_t*, float*, const float*, int64_t, int64_t, int64_t);
#ifdef CKW_TEST_AVX512_EMULATION
int ckw_f32_top_log_probs__avx512emu(int32_t*, float*, const float*, int64_t, int64_t, int64_t);
#endif

typedef struct {
  float lp;
  int32_t t;
} ref_t;

static int by_rank(const void* a, const void* b) {
  const ref_t *p = a, *q = b;
  if (p->lp != q->lp) return p->lp > q->lp ? -1 : 1;
  return p->t < q->t ? -1 : p->t > q->t;
}

// The K best of row x by the header's definition, every token ranked.
static void reference(int32_t* tokens, float* lps, const float* x, int64_t V, int64_t K) {
  double m = -INFINITY, sum = 0.0;
  for (int64_t j = 0; j < V; ++j)
    if (x[j] > -INFINITY && x[j] > m) m = x[j];
  for (int64_t j = 0; j < V; ++j)
    if (x[j] > -INFINITY) sum += exp((double)x[j] - m);
  const double log_sum = log(sum);
  ref_t* all = malloc(sizeof(ref_t) * (size_t)V);
  for (int64_t j = 0; j < V; ++j)
    all[j] = (ref_t){x[j] > -INFINITY ? (float)(((double)x[j] - m) - log_sum) : -INFINITY, (int32_t)j};
  qsort(all, (size_t)V, sizeof *all, by_rank);
  for (int64_t i = 0; i < K; ++i) tokens[i] = all[i].t, lps[i] = all[i].lp;
  free(all);
}

enum { RANDOM, PEAKED, TIED, RAMP, MASKED, FEW, NKIND };

static void fill(float* x, int64_t V, int kind) {
  for (int64_t j = 0; j < V; ++j) x[j] = 4.0f * frand();
  if (kind == PEAKED)
    for (int64_t j = 0; j < V; ++j) x[j] = j % 997 == 3 ? 30.0f + frand() : x[j] - 20.0f;
  if (kind == TIED)  // few distinct values: equal logits, and lps equal after rounding
    for (int64_t j = 0; j < V; ++j) x[j] = roundf(x[j] * 2.0f) * 0.5f + (j % 3 == 0 ? 1e-7f : 0.0f);
  if (kind == RAMP) {  // logits one float32 step apart rising with the token: equal lps, the lowest tokens first
    x[0] = 20.0f;
    for (int64_t j = 1; j < V; ++j) x[j] = j == 1 ? 1.0f : nextafterf(x[j - 1], INFINITY);
  }
  if (kind == MASKED)
    for (int64_t j = 0; j < V; ++j) x[j] = j % 5 ? -INFINITY : x[j];
  if (kind == FEW)  // fewer finite tokens than some K: -inf ones fill the rest in token order
    for (int64_t j = 0; j < V; ++j) x[j] = j == V / 2 || j == 1 ? x[j] : -INFINITY;
}

static int check(top_fn top, int64_t R, int64_t V, int64_t K, int kind) {
  float* x = malloc(sizeof(float) * (size_t)(R * V));
  int32_t *tok = malloc(sizeof(int32_t) * (size_t)(R * K)), *want_t = malloc(sizeof(int32_t) * (size_t)K);
  float *lp = malloc(sizeof(float) * (size_t)(R * K)), *want_lp = malloc(sizeof(float) * (size_t)K);
  for (int64_t r = 0; r < R; ++r) fill(x + r * V, V, kind);
  int ok = top(tok, lp, x, R, V, K) == CKW_TOP_LOG_PROBS_OK;
  for (int64_t r = 0; ok && r < R; ++r) {
    reference(want_t, want_lp, x + r * V, V, K);
    for (int64_t i = 0; ok && i < K; ++i) {
      if (tok[r * K + i] != want_t[i] || memcmp(&lp[r * K + i], &want_lp[i], sizeof(float)) != 0) {
        printf("FAIL R=%lld V=%lld K=%lld kind %d: row %lld rank %lld: token %d lp %.9g, reference %d %.9g\n",
               (long long)R, (long long)V, (long long)K, kind, (long long)r, (long long)i, tok[r * K + i],
               lp[r * K + i], want_t[i], want_lp[i]);
        ok = 0;
      }
    }
  }
  if (ok && R > 1) {  // rows apart: the same as the whole call (the maps' split over R)
    int32_t* t1 = malloc(sizeof(int32_t) * (size_t)(R * K));
    float* l1 = malloc(sizeof(float) * (size_t)(R * K));
    const int64_t h = R / 2;
    ok = top(t1, l1, x, h, V, K) == 0 && top(t1 + h * K, l1 + h * K, x + h * V, R - h, V, K) == 0 &&
         !memcmp(t1, tok, sizeof(int32_t) * (size_t)(R * K)) && !memcmp(l1, lp, sizeof(float) * (size_t)(R * K));
    if (!ok)
      printf("FAIL R=%lld V=%lld K=%lld kind %d: a row split differs\n", (long long)R, (long long)V, (long long)K,
             kind);
    free(t1), free(l1);
  }
  free(x), free(tok), free(want_t), free(lp), free(want_lp);
  return ok;
}

static int refusals(void) {
  float x[2 * 4] = {1, 2, 3, 4, -INFINITY, -INFINITY, -INFINITY, -INFINITY};
  int32_t t[4] = {7, 7, 7, 7};
  float l[4] = {7, 7, 7, 7};
  int ok = ckw_f32_top_log_probs(t, l, x, 2, 4, 2) == CKW_TOP_LOG_PROBS_ERR_MASKED &&
           ckw_f32_top_log_probs(t, l, x, 1, 4, 5) == CKW_TOP_LOG_PROBS_ERR_K &&
           ckw_f32_top_log_probs(t, l, x, 1, 4, 0) == CKW_TOP_LOG_PROBS_ERR_K &&
           ckw_f32_top_log_probs(t, l, x, -1, 4, 2) == CKW_TOP_LOG_PROBS_ERR_SHAPE &&
           ckw_f32_top_log_probs(t, l, x, 0, 4, 2) == CKW_TOP_LOG_PROBS_OK;
  for (int i = 0; i < 4; ++i) ok &= t[i] == 7 && l[i] == 7.0f;  // nothing written
  ok &= strstr(ckw_f32_top_log_probs_strerror(CKW_TOP_LOG_PROBS_ERR_MASKED), "masked") != NULL;
  printf("%s: refusals (a fully masked row, K outside [1, V], negative dims) write nothing\n", ok ? "ok" : "FAIL");
  return ok;
}

int main(void) {
  static const int64_t shapes[][3] = {{1, 1, 1},    {1, 7, 7},     {3, 50, 6},    {5, 51865, 6},
                                      {2, 1000, 9}, {4, 51864, 1}, {8, 4097, 16}, {1, 300, 300}};
  const struct {
    const char* isa;
    int available;
    top_fn top;
  } isas[] = {
#define ISA(I) {#I, ckw_cpu_has_##I(), ckw_f32_top_log_probs__##I},
      CKW_F32_TOP_LOG_PROBS_ISAS(ISA)
#undef ISA
          {"dispatch", 1, ckw_f32_top_log_probs},
#ifdef CKW_TEST_AVX512_EMULATION
      {"avx512-emulated", 1, ckw_f32_top_log_probs__avx512emu},
#endif
  };
  int failures = 0, checked = 0;
  for (size_t i = 0; i < sizeof isas / sizeof isas[0]; ++i) {
    if (!test_isa_runs(isas[i].isa, isas[i].available)) continue;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
      for (int kind = 0; kind < NKIND; ++kind) {
        const int64_t V = shapes[s][1];
        if ((kind == FEW && V < 3) || (kind == MASKED && V < 5)) continue;
        if (!check(isas[i].top, shapes[s][0], V, shapes[s][2], kind)) {
          printf("(path %s)\n", isas[i].isa);
          ++failures;
        }
        ++checked;
      }
  }
  failures += !refusals();
  printf("%d/%d top_log_probs cases passed\n", checked - failures, checked);
  return failures ? 1 : 0;
}
