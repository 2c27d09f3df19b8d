// The LSTM, every ISA path: against a float64 LSTM under the tolerance policy (c from
// f32_lstm.json, K = H) and against the scalar path; streaming (N1 steps, then N2 from their
// state, equal N1 + N2 steps bit for bit on the same path), in place (h_out = h, c_out = c) equal
// to out of place bit for bit, N == 0 copies the state, saturating gates give no NaN, and nothing
// is written outside y, h_out, c_out and the declared scratch (inputs unchanged).
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CKW_TEST_SEED 0xD1B54A32D192ED03ull  // frand()
#include "kernels/common/cpu.h"
#include "kernels/common/tolerance.h"
#include "kernels/common/test_util.h"
#include "kernels/recurrent/f32_lstm.h"
#include "kernels/recurrent/f32_lstm_contract.h"

// Built a second time with CKW_TEST_AVX512_EMULATION (the *_avx512emu_test target) to run the
// AVX-512 template through kernels/common/avx512_emulation.h on CPUs without AVX-512.
#ifdef CKW_TEST_AVX512_EMULATION
void ckw_f32_lstm__avx512emu(float*, float*, float*, const float*, const float*, const float*, const float*, void*,
                             int64_t, int64_t);
#endif

#define TOL_C CKW_F32_LSTM_TOLERANCE_C
#define GUARD 7
#define SENTINEL -555.0f

typedef void (*lstm_fn)(float*, float*, float*, const float*, const float*, const float*, const float*, void*, int64_t,
                        int64_t);
typedef struct {
  const char* isa;
  int available;
  lstm_fn f;
} isa_t;

// One problem: inputs in float32, the float64 reference of y and the final state.
typedef struct {
  int64_t N, H;
  float *gx, *w, *h0, *c0;
  double *ry, *rh, *rc;
} problem_t;

static double sigmoid_d(double x) { return 1.0 / (1.0 + exp(-x)); }

// W_hh as torch.nn.LSTM initializes it (uniform in +-1/sqrt(H)), gx uniform in +-gx_scale, the
// state uniform in +-1 (h) and +-2 (c).
static void make_problem(problem_t* p, int64_t N, int64_t H, float gx_scale) {
  p->N = N, p->H = H;
  p->gx = malloc(sizeof(float) * (size_t)(N * 4 * H + 1));
  p->w = malloc(sizeof(float) * (size_t)(4 * H * H + 1));
  p->h0 = malloc(sizeof(float) * (size_t)(H + 1));
  p->c0 = malloc(sizeof(float) * (size_t)(H + 1));
  p->ry = malloc(sizeof(double) * (size_t)(N * H + 1));
  p->rh = malloc(sizeof(double) * (size_t)(H + 1));
  p->rc = malloc(sizeof(double) * (size_t)(H + 1));
  const float ws = (float)(1.0 / sqrt((double)H));
  for (int64_t i = 0; i < 4 * H * H; ++i) p->w[i] = ws * frand();
  for (int64_t i = 0; i < N * 4 * H; ++i) p->gx[i] = gx_scale * frand();
  for (int64_t i = 0; i < H; ++i) p->h0[i] = frand(), p->c0[i] = 2.0f * frand();
  double* g = malloc(sizeof(double) * (size_t)(4 * H));
  for (int64_t i = 0; i < H; ++i) p->rh[i] = p->h0[i], p->rc[i] = p->c0[i];
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t r = 0; r < 4 * H; ++r) {
      double s = p->gx[n * 4 * H + r];
      for (int64_t k = 0; k < H; ++k) s += (double)p->w[r * H + k] * p->rh[k];
      g[r] = s;
    }
    for (int64_t j = 0; j < H; ++j) {
      const double i = sigmoid_d(g[j]), f = sigmoid_d(g[H + j]), u = tanh(g[2 * H + j]), o = sigmoid_d(g[3 * H + j]);
      p->rc[j] = f * p->rc[j] + i * u;
      p->rh[j] = o * tanh(p->rc[j]);
      p->ry[n * H + j] = p->rh[j];
    }
  }
  free(g);
}

static void free_problem(problem_t* p) {
  free(p->gx), free(p->w), free(p->h0), free(p->c0), free(p->ry), free(p->rh), free(p->rc);
}

// A buffer of n floats with GUARD sentinels on either side.
static float* guarded(int64_t n) {
  float* b = malloc(sizeof(float) * (size_t)(n + 2 * GUARD));
  for (int64_t i = 0; i < n + 2 * GUARD; ++i) b[i] = SENTINEL;
  return b + GUARD;
}
static int guards_ok(const char* what, const char* buf, const float* b, int64_t n) {
  for (int64_t i = 1; i <= GUARD; ++i)
    if (b[-i] != SENTINEL || b[n - 1 + i] != SENTINEL) {
      fprintf(stderr, "%s: wrote outside %s\n", what, buf);
      return 0;
    }
  return 1;
}
static void unguard(float* b) { free(b - GUARD); }

// One call with scratch of exactly the declared size, sentinels past its end checked.
static int call(const isa_t* isa, const char* what, float* y, float* h_out, float* c_out, const float* gx,
                const float* w, const float* h, const float* c, int64_t N, int64_t H) {
  const int64_t sf = ckw_f32_lstm_scratch_bytes(H) / (int64_t)sizeof(float);
  float* scratch = guarded(sf);
  isa->f(y, h_out, c_out, gx, w, h, c, scratch, N, H);
  const int ok = guards_ok(what, "scratch", scratch, sf);
  unguard(scratch);
  return ok;
}

// Under the policy against the float64 reference; *need gets the c this output needed.
static int close_to(const char* what, const char* port, const float* got, const double* ref, int64_t n, int64_t H,
                    double* need) {
  double max_ref = 0.0, max_err = 0.0;
  int64_t worst = 0;
  for (int64_t i = 0; i < n; ++i) max_ref = fmax(max_ref, fabs(ref[i]));
  for (int64_t i = 0; i < n; ++i) {
    const double e = fabs((double)got[i] - ref[i]);
    if (!(e <= max_err)) {
      max_err = e, worst = i;
      if (e != e) break;
    }
  }
  const double unit = ckw_tolerance_bound(1.0, H, max_ref);
  if (max_err / unit > *need) *need = max_err / unit;
  if (max_err <= TOL_C * unit) return 1;
  fprintf(stderr, "%s %s: max_abs_err %.3g > bound %.3g (c=%g, K=%lld) at [%lld]: got %.9g want %.9g\n", what, port,
          max_err, TOL_C * unit, TOL_C, (long long)H, (long long)worst, (double)got[worst], ref[worst]);
  return 0;
}

static int same_bits(const char* what, const float* a, const float* b, int64_t n) {
  if (n == 0 || memcmp(a, b, sizeof(float) * (size_t)n) == 0) return 1;
  fprintf(stderr, "%s: not bit for bit\n", what);
  return 0;
}

// Every check of one path on one problem; scalar_y etc. are the scalar path's outputs (NULL when
// this is the scalar path).
static int check(const isa_t* isa, const problem_t* p, float* out_y, float* out_h, float* out_c, const float* scalar_y,
                 const float* scalar_h, const float* scalar_c, double* need) {
  const int64_t N = p->N, H = p->H;
  char what[160];
  snprintf(what, sizeof what, "%s lstm N=%lld H=%lld", isa->isa, (long long)N, (long long)H);
  int ok = 1;
  float* y = guarded(N * H);
  float* ho = guarded(H);
  float* co = guarded(H);
  float* gx_copy = malloc(sizeof(float) * (size_t)(N * 4 * H + 1));
  memcpy(gx_copy, p->gx, sizeof(float) * (size_t)(N * 4 * H));
  ok &= call(isa, what, y, ho, co, p->gx, p->w, p->h0, p->c0, N, H);
  ok &= guards_ok(what, "y", y, N * H) & guards_ok(what, "h_out", ho, H) & guards_ok(what, "c_out", co, H);
  ok &= same_bits("gx unchanged", gx_copy, p->gx, N * 4 * H);
  ok &= close_to(what, "y", y, p->ry, N * H, H, need);
  ok &= close_to(what, "h_out", ho, p->rh, H, H, need);
  ok &= close_to(what, "c_out", co, p->rc, H, H, need);
  for (int64_t i = 0; i < N * H; ++i) ok &= fabsf(y[i]) <= 1.0f;
  if (N == 0) ok &= same_bits("N == 0: h_out = h", ho, p->h0, H) & same_bits("N == 0: c_out = c", co, p->c0, H);
  if (scalar_y) {  // against the scalar path, the same policy
    char vs[256];
    snprintf(vs, sizeof vs, "%s vs scalar", what);
    ok &= ckw_check_close(vs, y, scalar_y, N * H, TOL_C, H) && ckw_check_close(vs, ho, scalar_h, H, TOL_C, H) &&
          ckw_check_close(vs, co, scalar_c, H, TOL_C, H);
  }
  // In place: h_out is h and c_out is c, the circuit's persistent state.
  float* hs = guarded(H);
  float* cs = guarded(H);
  float* y2 = guarded(N * H);
  memcpy(hs, p->h0, sizeof(float) * (size_t)H), memcpy(cs, p->c0, sizeof(float) * (size_t)H);
  ok &= call(isa, what, y2, hs, cs, p->gx, p->w, hs, cs, N, H);
  ok &= guards_ok(what, "h in place", hs, H) & guards_ok(what, "c in place", cs, H) & guards_ok(what, "y", y2, N * H);
  ok &= same_bits("in place y", y2, y, N * H) & same_bits("in place h", hs, ho, H) & same_bits("in place c", cs, co, H);
  // Streaming: N1 steps, then N - N1 from their state (in place), equal the one call bit for bit.
  const int64_t splits[] = {0, 1, N / 3, N - 1, N};
  for (size_t s = 0; s < sizeof splits / sizeof splits[0]; ++s) {
    const int64_t N1 = splits[s];
    if (N1 < 0 || N1 > N) continue;
    memcpy(hs, p->h0, sizeof(float) * (size_t)H), memcpy(cs, p->c0, sizeof(float) * (size_t)H);
    ok &= call(isa, what, y2, hs, cs, p->gx, p->w, hs, cs, N1, H);
    ok &= call(isa, what, y2 + N1 * H, hs, cs, p->gx + N1 * 4 * H, p->w, hs, cs, N - N1, H);
    char sw[256];
    snprintf(sw, sizeof sw, "%s streamed %lld + %lld", what, (long long)N1, (long long)(N - N1));
    ok &= same_bits(sw, y2, y, N * H) & same_bits(sw, hs, ho, H) & same_bits(sw, cs, co, H);
  }
  memcpy(out_y, y, sizeof(float) * (size_t)(N * H));
  memcpy(out_h, ho, sizeof(float) * (size_t)H), memcpy(out_c, co, sizeof(float) * (size_t)H);
  unguard(y), unguard(ho), unguard(co), unguard(hs), unguard(cs), unguard(y2), free(gx_copy);
  return ok;
}

int main(void) {
  const isa_t isas[] = {
#define ISA(isa) {#isa, ckw_cpu_has_##isa(), ckw_f32_lstm__##isa},
      CKW_F32_LSTM_ISAS(ISA)
#undef ISA
          {"dispatch", 1, ckw_f32_lstm},
#ifdef CKW_TEST_AVX512_EMULATION
      {"avx512-emulated", 1, ckw_f32_lstm__avx512emu},
#endif
  };
  const int n_isas = (int)(sizeof isas / sizeof isas[0]);
  // H: 1, below and around both vector widths, odd (4H not a multiple of 8), Silero's 128.
  const int64_t Hs[] = {1, 2, 3, 5, 8, 16, 17, 24, 31, 33, 64, 128};
  const int64_t Ns[] = {0, 1, 7, 300};
  int fails = 0, cases = 0;
  double need[8] = {0};
  for (size_t a = 0; a < sizeof Hs / sizeof Hs[0]; ++a) {
    for (size_t b = 0; b < sizeof Ns / sizeof Ns[0]; ++b) {
      for (int sat = 0; sat < 2; ++sat) {
        // sat: gx in +-30, the gates saturated (exactly 0 or 1) for most steps.
        problem_t p;
        make_problem(&p, Ns[b], Hs[a], sat ? 30.0f : 2.0f);
        const int64_t n = p.N * p.H;
        float* sy = malloc(sizeof(float) * (size_t)(n + 1));
        float* sh = malloc(sizeof(float) * (size_t)(p.H + 1));
        float* sc = malloc(sizeof(float) * (size_t)(p.H + 1));
        float* ty = malloc(sizeof(float) * (size_t)(n + 1));
        float* th = malloc(sizeof(float) * (size_t)(p.H + 1));
        float* tc = malloc(sizeof(float) * (size_t)(p.H + 1));
        for (int i = 0; i < n_isas; ++i) {
          if (!isas[i].available) continue;
          const int is_scalar = i == 0;
          fails += !check(&isas[i], &p, is_scalar ? sy : ty, is_scalar ? sh : th, is_scalar ? sc : tc,
                          is_scalar ? NULL : sy, is_scalar ? NULL : sh, is_scalar ? NULL : sc, &need[i]);
          ++cases;
        }
        free(sy), free(sh), free(sc), free(ty), free(th), free(tc);
        free_problem(&p);
      }
    }
  }
  for (int i = 0; i < n_isas; ++i) {
    if (test_isa_runs(isas[i].isa, isas[i].available))
      printf("%s: largest error %.2f x FLT_EPSILON sqrt(H) max(|ref|, 1) (map's c = %g)\n", isas[i].isa, need[i],
             TOL_C);
  }
  printf("%d/%d lstm cases passed\n", cases - fails, cases);
  return fails != 0;
}
