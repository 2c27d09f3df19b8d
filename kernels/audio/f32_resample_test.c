// ckw_f32_resample against a naive double-precision evaluation of the windowed-sinc sum
// (no phase table, no partial sums), over up/down/odd rate pairs and odd lengths; the
// in-order and phase-by-phase paths must agree bit for bit; plus the identity path, DC gain,
// and every error code.
#include "kernels/audio/f32_resample.h"
#include "kernels/audio/f32_resample_contract.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/common/test_util.h"
#include "kernels/common/tolerance.h"

#define TOLERANCE_C CKW_F32_RESAMPLE_TOLERANCE_C

// f32_resample__baseline_testonly.c: the same kernel without its AVX2 path.
int ckw_f32_resample__baseline(float* y, int64_t n_out, const float* x, int64_t n_in, int64_t sr_in, int64_t sr_out,
                               void* scratch, int64_t scratch_bytes);

static double naive_i0(double x) {
  double sum = 1.0, term = 1.0;
  for (int k = 1; k < 1000 && term > 1e-20 * sum; ++k) {
    term *= (x / (2.0 * k)) * (x / (2.0 * k));
    sum += term;
  }
  return sum;
}

static double naive_h(double u) {
  const double z = CKW_RESAMPLE_ZERO_CROSSINGS, beta = CKW_RESAMPLE_KAISER_BETA;
  if (fabs(u) >= z) return 0.0;
  double sinc = u == 0.0 ? 1.0 : sin(3.14159265358979323846 * u) / (3.14159265358979323846 * u);
  return sinc * naive_i0(beta * sqrt(1.0 - (u / z) * (u / z))) / naive_i0(beta);
}

static void naive_resample(float* y, int64_t n_out, const float* x, int64_t n_in, int64_t sr_in, int64_t sr_out) {
  double fc = CKW_RESAMPLE_ROLLOFF * (sr_out < sr_in ? (double)sr_out / sr_in : 1.0);
  double half_width = CKW_RESAMPLE_ZERO_CROSSINGS / fc;
  for (int64_t n = 0; n < n_out; ++n) {
    double t = (double)n * (double)sr_in / (double)sr_out;
    double acc = 0.0;
    for (int64_t k = (int64_t)floor(t - half_width); k <= (int64_t)ceil(t + half_width); ++k) {
      if (k >= 0 && k < n_in) acc += (double)x[k] * fc * naive_h(fc * (t - (double)k));
    }
    y[n] = (float)acc;
  }
}

static int64_t taps_of(int64_t sr_in, int64_t sr_out) {
  double fc = CKW_RESAMPLE_ROLLOFF * (sr_out < sr_in ? (double)sr_out / sr_in : 1.0);
  return 2 * (int64_t)floor(CKW_RESAMPLE_ZERO_CROSSINGS / fc) + 2;
}

static int run_with(float* y, int64_t n_out, const float* x, int64_t n_in, int64_t sr_in, int64_t sr_out,
                    int64_t scratch_bytes) {
  void* scratch = malloc((size_t)scratch_bytes);
  int rc = ckw_f32_resample(y, n_out, x, n_in, sr_in, sr_out, scratch, scratch_bytes);
  free(scratch);
  return rc;
}

static int run(float* y, int64_t n_out, const float* x, int64_t n_in, int64_t sr_in, int64_t sr_out) {
  return run_with(y, n_out, x, n_in, sr_in, sr_out, CKW_RESAMPLE_SCRATCH_BYTES);
}

// Bytes of one phase's taps: the least scratch, which forces the phase-by-phase order.
static int64_t min_scratch(int64_t sr_in, int64_t sr_out) {
  return (taps_of(sr_in, sr_out) + 7) / 8 * 8 * (int64_t)sizeof(float);
}

static void test_against_naive(void) {
  const int64_t rates[][2] = {{8000, 16000},  {44100, 16000}, {48000, 16000}, {22050, 16000}, {11025, 16000},
                              {16001, 16000}, {12345, 16000}, {96000, 16000}, {7, 16000},     {16000, 8000},
                              {16000, 44100}, {44101, 16000}, {768000, 12000}};
  const int64_t lengths[] = {0, 1, 2, 37, 1001, 4097};
  uint64_t rng = 1;
  for (size_t r = 0; r < sizeof rates / sizeof rates[0]; ++r) {
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; ++l) {
      const int64_t sr_in = rates[r][0], sr_out = rates[r][1], n_in = lengths[l];
      if (sr_in == 7 && n_in > 37) continue;  // 2286x upsampling: short inputs suffice
      const int64_t n_out = ckw_f32_resample_output_length(n_in, sr_in, sr_out);
      EXPECT(n_out == (n_in * sr_out + sr_in - 1) / sr_in, "length %lld", (long long)n_out);
      float* x = malloc((size_t)(n_in + 1) * sizeof *x);
      float* y = malloc((size_t)(n_out + 1) * sizeof *y);
      float* ref = malloc((size_t)(n_out + 1) * sizeof *ref);
      for (int64_t i = 0; i < n_in; ++i) x[i] = test_rng_float(&rng);
      y[n_out] = 5.0f;
      int rc = run(y, n_out, x, n_in, sr_in, sr_out);
      EXPECT(rc == 0, "%lld->%lld n=%lld: %s", (long long)sr_in, (long long)sr_out, (long long)n_in,
             ckw_f32_resample_strerror(rc));
      EXPECT(y[n_out] == 5.0f, "wrote past n_out");
      naive_resample(ref, n_out, x, n_in, sr_in, sr_out);
      char what[96];
      snprintf(what, sizeof what, "resample %lld->%lld n_in=%lld", (long long)sr_in, (long long)sr_out,
               (long long)n_in);
      EXPECT(ckw_check_close(what, y, ref, n_out, TOLERANCE_C, taps_of(sr_in, sr_out)), "%s", what);
      const int64_t queried = ckw_f32_resample_scratch_bytes(n_in, sr_in, sr_out);
      EXPECT(queried >= 0 && queried <= CKW_RESAMPLE_SCRATCH_BYTES, "%s: scratch query %lld", what, (long long)queried);
      if (queried > 0) {
        rc = run_with(ref, n_out, x, n_in, sr_in, sr_out, queried);
        EXPECT(rc == 0 && memcmp(ref, y, (size_t)n_out * sizeof *y) == 0, "%s: queried scratch differs (rc %d)", what,
               rc);
      }
      {
        void* scratch = malloc(CKW_RESAMPLE_SCRATCH_BYTES);
        rc = ckw_f32_resample__baseline(ref, n_out, x, n_in, sr_in, sr_out, scratch, CKW_RESAMPLE_SCRATCH_BYTES);
        free(scratch);
        EXPECT(rc == 0 && memcmp(ref, y, (size_t)n_out * sizeof *y) == 0,
               "%s: the baseline (non-AVX2) path differs (rc %d)", what, rc);
      }
      // The phase-by-phase order (least scratch) computes the very same sums.
      rc = run_with(ref, n_out, x, n_in, sr_in, sr_out, min_scratch(sr_in, sr_out));
      EXPECT(rc == 0 && memcmp(ref, y, (size_t)n_out * sizeof *y) == 0, "%s: phase-by-phase order differs (rc %d)",
             what, rc);
      free(x), free(y), free(ref);
    }
  }
}

// Spans of the outputs from blocks of the input (as a stream feeds them) give the whole call's
// bits: with the length known, and while it is not (only spans whose taps are all received).
static void test_range_matches_whole(void) {
  const int64_t rates[][2] = {{8000, 16000},  {44100, 16000}, {48000, 16000}, {22050, 16000},
                              {16000, 16000}, {44101, 16000}, {12345, 16000}};
  const int64_t n_in = 20011;
  uint64_t rng = 5;
  float* x = malloc((size_t)n_in * sizeof *x);
  for (int64_t i = 0; i < n_in; ++i) x[i] = test_rng_float(&rng);
  void* scratch = malloc(CKW_RESAMPLE_SCRATCH_BYTES);
  for (size_t r = 0; r < sizeof rates / sizeof rates[0]; ++r) {
    const int64_t sr_in = rates[r][0], sr_out = rates[r][1];
    const int64_t n_out = ckw_f32_resample_output_length(n_in, sr_in, sr_out);
    float* whole = malloc((size_t)n_out * sizeof *whole);
    float* part = malloc((size_t)n_out * sizeof *part);
    EXPECT(run(whole, n_out, x, n_in, sr_in, sr_out) == 0, "whole %lld", (long long)sr_in);
    for (int pass = 0; pass < 3; ++pass) {  // known length, unknown length, least scratch
      memset(part, 0, (size_t)n_out * sizeof *part);
      for (int64_t n0 = 0; n0 < n_out;) {
        int64_t n_y = 1 + (int64_t)(test_rng_next(&rng) % 3000);
        if (n_y > n_out - n0) n_y = n_out - n0;
        int64_t span[2] = {0, 0};
        EXPECT(ckw_i64_resample_input_span(span, n0, n_y, sr_in, sr_out) == 0, "input span");
        const int64_t first = span[0], end = span[1];
        const int64_t margin = (int64_t)(test_rng_next(&rng) % 50);
        int64_t lo = first - margin < 0 ? 0 : first - margin;
        int64_t hi = end + margin > n_in ? n_in : end + margin;
        const int64_t known = (pass == 1 && end <= n_in) ? -1 : n_in;
        const int64_t bytes =
            pass == 2 ? min_scratch(sr_in, sr_out) : ckw_f32_resample_range_scratch_bytes(n_y, sr_in, sr_out);
        int rc = ckw_f32_resample_range(part + n0, n0, n_y, x + lo, lo, hi - lo, known, sr_in, sr_out, scratch, bytes);
        EXPECT(rc == 0, "%lld Hz span %lld+%lld: %s", (long long)sr_in, (long long)n0, (long long)n_y,
               ckw_f32_resample_strerror(rc));
        if (first > 0) {  // one needed sample short at either end
          rc = ckw_f32_resample_range(part + n0, n0, n_y, x + first + 1, first + 1, hi - first - 1, n_in, sr_in, sr_out,
                                      scratch, bytes);
          EXPECT(rc == CKW_RESAMPLE_ERR_INPUT_SPAN, "missing first sample: %d", rc);
        }
        if (end < n_in) {
          rc =
              ckw_f32_resample_range(part + n0, n0, n_y, x + lo, lo, end - 1 - lo, n_in, sr_in, sr_out, scratch, bytes);
          EXPECT(rc == CKW_RESAMPLE_ERR_INPUT_SPAN, "missing last sample: %d", rc);
        }
        n0 += n_y;
      }
      EXPECT(memcmp(part, whole, (size_t)n_out * sizeof *part) == 0,
             "%lld -> %lld Hz pass %d: spans differ from the whole call", (long long)sr_in, (long long)sr_out, pass);
    }
    EXPECT(ckw_f32_resample_range(part, n_out, 1, x, 0, n_in, n_in, sr_in, sr_out, scratch,
                                  CKW_RESAMPLE_SCRATCH_BYTES) == CKW_RESAMPLE_ERR_OUTPUT_LENGTH,
           "output past the end");
    free(whole), free(part);
  }
  int64_t span[2];
  EXPECT(ckw_i64_resample_input_span(span, -1, 1, 8000, 16000) == CKW_RESAMPLE_ERR_ARGUMENT, "negative start");
  EXPECT(ckw_f32_resample_range_scratch_bytes(10, 0, 16000) == CKW_RESAMPLE_ERR_RATE, "rate");
  free(x), free(scratch);
}

static void test_identity_and_gain(void) {
  enum { N = 3001 };
  static float x[N], y[N * 3];
  uint64_t rng = 3;
  for (int i = 0; i < N; ++i) x[i] = test_rng_float(&rng);
  EXPECT(ckw_f32_resample(y, N, x, N, 16000, 16000, NULL, 0) == 0, "identity");
  EXPECT(memcmp(x, y, sizeof x) == 0, "identity must copy bits");
  // DC passes with unit gain away from the edges (passband ripple is ~5e-4).
  for (int i = 0; i < N; ++i) x[i] = 1.0f;
  const int64_t pairs[][2] = {{8000, 16000}, {44100, 16000}, {22050, 16000}};
  for (int p = 0; p < 3; ++p) {
    int64_t n_out = ckw_f32_resample_output_length(N, pairs[p][0], pairs[p][1]);
    EXPECT(run(y, n_out, x, N, pairs[p][0], pairs[p][1]) == 0, "dc run");
    double worst = 0.0;
    for (int64_t i = n_out / 4; i < 3 * n_out / 4; ++i) {
      if (fabs(y[i] - 1.0) > worst) worst = fabs(y[i] - 1.0);
    }
    EXPECT(worst < 1e-3, "DC gain off by %g at %lld Hz", worst, (long long)pairs[p][0]);
  }
}

static void test_errors(void) {
  float x[8] = {0}, y[32];
  static float scratch_f[CKW_RESAMPLE_SCRATCH_BYTES / sizeof(float)];
  char* scratch = (char*)scratch_f;
  EXPECT(ckw_f32_resample_output_length(8, 0, 16000) == CKW_RESAMPLE_ERR_RATE, "rate 0");
  EXPECT(ckw_f32_resample_output_length(8, 16000, -1) == CKW_RESAMPLE_ERR_RATE, "rate < 0");
  EXPECT(ckw_f32_resample_output_length(8, CKW_RESAMPLE_MAX_RATE + 1, 16000) == CKW_RESAMPLE_ERR_RATE, "rate too high");
  EXPECT(ckw_f32_resample_output_length(8, 768000, 11999) == CKW_RESAMPLE_ERR_RATIO, "ratio above 64");
  EXPECT(ckw_f32_resample_output_length(-1, 8000, 16000) == CKW_RESAMPLE_ERR_ARGUMENT, "n<0");
  EXPECT(ckw_f32_resample_output_length(INT64_MAX / 2, 8000, 16000) == CKW_RESAMPLE_ERR_TOO_LONG, "overflow");
  EXPECT(
      ckw_f32_resample(y, 15, x, 8, 8000, 16000, scratch, CKW_RESAMPLE_SCRATCH_BYTES) == CKW_RESAMPLE_ERR_OUTPUT_LENGTH,
      "n_out mismatch");
  const int64_t need = min_scratch(8000, 16000);
  EXPECT(ckw_f32_resample_scratch_bytes(8, 0, 16000) == CKW_RESAMPLE_ERR_RATE, "scratch rate");
  EXPECT(ckw_f32_resample_scratch_bytes(8, 8000, 16000) == need * 2, "8 -> 16 outputs: 2 phases");
  EXPECT(ckw_f32_resample_scratch_bytes(5, 16000, 16000) == 0, "identity needs no scratch");
  EXPECT(ckw_f32_resample_scratch_bytes(100000, 44101, 16000) == min_scratch(44101, 16000),
         "44101 Hz: one phase at a time");
  EXPECT(ckw_f32_resample(y, 16, x, 8, 8000, 16000, scratch, need - 1) == CKW_RESAMPLE_ERR_SCRATCH,
         "scratch too small");
  EXPECT(ckw_f32_resample(y, 16, x, 8, 8000, 16000, NULL, need) == CKW_RESAMPLE_ERR_ARGUMENT, "NULL scratch");
  EXPECT(ckw_f32_resample(y, 16, x, 8, 8000, 16000, scratch + 1, need) == CKW_RESAMPLE_ERR_ARGUMENT,
         "misaligned scratch");
  EXPECT(ckw_f32_resample(NULL, 16, x, 8, 8000, 16000, scratch, need) == CKW_RESAMPLE_ERR_ARGUMENT, "NULL y");
  EXPECT(ckw_f32_resample(y, 0, NULL, 0, 8000, 16000, NULL, 0) == 0, "empty is fine");
  for (int c = CKW_RESAMPLE_ERR_MIN; c <= 0; ++c) {
    const char* m = ckw_f32_resample_strerror(c);
    EXPECT(m && strlen(m) > 1, "message %d", c);
    for (int d = CKW_RESAMPLE_ERR_MIN; d < c; ++d) {
      EXPECT(strcmp(m, ckw_f32_resample_strerror(d)) != 0, "codes %d and %d share", c, d);
    }
  }
  EXPECT(strstr(ckw_f32_resample_strerror(7), "unknown") != NULL, "unknown code");
}

int main(void) {
  test_against_naive();
  test_range_matches_whole();
  test_identity_and_gain();
  test_errors();
  return test_finish("f32_resample_test");
}
