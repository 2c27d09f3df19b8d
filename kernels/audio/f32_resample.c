#include "kernels/audio/f32_resample.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "kernels/common/cpu.h"

#define PI 3.14159265358979323846
#define LANES 8  // partial sums per dot product; also the tap-count granularity

typedef struct {
  int64_t n_phases;  // L = sr_out / gcd: output n uses phase n mod L
  int64_t step;      // M = sr_in / gcd: input samples advanced per L outputs
  int64_t half;      // J: taps span input k0 - J .. k0 + J + 1 around t = k0 + frac
  int64_t taps;      // 2J + 2 rounded up to LANES (the extra taps are exact zeros)
  double fc;
} plan;

static int64_t gcd(int64_t a, int64_t b) {
  while (b != 0) {
    int64_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}

static int check_rates(int64_t sr_in, int64_t sr_out) {
  if (sr_in < 1 || sr_in > CKW_RESAMPLE_MAX_RATE) return CKW_RESAMPLE_ERR_RATE;
  if (sr_out < 1 || sr_out > CKW_RESAMPLE_MAX_RATE) return CKW_RESAMPLE_ERR_RATE;
  if (sr_in > CKW_RESAMPLE_MAX_DOWN_RATIO * sr_out) return CKW_RESAMPLE_ERR_RATIO;
  return CKW_RESAMPLE_OK;
}

static plan make_plan(int64_t sr_in, int64_t sr_out) {
  plan p;
  int64_t g = gcd(sr_in, sr_out);
  p.n_phases = sr_out / g;
  p.step = sr_in / g;
  p.fc = CKW_RESAMPLE_ROLLOFF * (sr_out < sr_in ? (double)sr_out / (double)sr_in : 1.0);
  p.half = (int64_t)floor(CKW_RESAMPLE_ZERO_CROSSINGS / p.fc);
  p.taps = (2 * p.half + 2 + LANES - 1) / LANES * LANES;
  return p;
}

int64_t ckw_f32_resample_output_length(int64_t n_in, int64_t sr_in, int64_t sr_out) {
  int rc = check_rates(sr_in, sr_out);
  if (rc != CKW_RESAMPLE_OK) return rc;
  if (n_in < 0) return CKW_RESAMPLE_ERR_ARGUMENT;
  if (n_in > (INT64_MAX - sr_in) / sr_out) return CKW_RESAMPLE_ERR_TOO_LONG;
  return (n_in * sr_out + sr_in - 1) / sr_in;
}

int64_t ckw_f32_resample_scratch_bytes(int64_t n_in, int64_t sr_in, int64_t sr_out) {
  int64_t n_out = ckw_f32_resample_output_length(n_in, sr_in, sr_out);
  if (n_out <= 0 || sr_in == sr_out) return n_out < 0 ? n_out : 0;
  const plan p = make_plan(sr_in, sr_out);
  const int64_t rows = n_out < p.n_phases ? n_out : p.n_phases;
  const int64_t table = rows * p.taps * (int64_t)sizeof(float);
  return table <= CKW_RESAMPLE_SCRATCH_BYTES ? table : p.taps * (int64_t)sizeof(float);
}

// Modified Bessel function of the first kind, order 0 (power series; x <= beta here).
static double bessel_i0(double x) {
  double q = 0.25 * x * x, term = 1.0, sum = 1.0;
  for (int k = 1; k < 500 && term > 1e-17 * sum; ++k) {
    term *= q / ((double)k * (double)k);
    sum += term;
  }
  return sum;
}

static double kernel(double u, double inv_i0_beta) {
  const double z = CKW_RESAMPLE_ZERO_CROSSINGS;
  if (fabs(u) >= z) return 0.0;
  double r = u / z;
  double window = bessel_i0(CKW_RESAMPLE_KAISER_BETA * sqrt(1.0 - r * r)) * inv_i0_beta;
  return u == 0.0 ? window : sin(PI * u) / (PI * u) * window;
}

// Taps of output n = r (mod L) over x[k0 - J + i], i < taps, where t(n) = k0 + frac.
static void fill_phase(float* restrict c, const plan* p, int64_t r, double inv_i0_beta) {
  const double frac = (double)(r * p->step % p->n_phases) / (double)p->n_phases;
  for (int64_t i = 0; i < p->taps; ++i) {
    double d = frac + (double)(p->half - i);
    c[i] = (float)(p->fc * kernel(p->fc * d, inv_i0_beta));
  }
}

// Fixed summation order per output: LANES interleaved partial sums, then a pairwise fold.
// dot4 runs four outputs side by side (independent chains keep the adders busy) with each
// output's order unchanged, so dot, dot4 and their AVX2 builds all give the same bits.
typedef float v8 __attribute__((vector_size(LANES * sizeof(float))));

// Vectors never cross a function boundary (that ABI differs with and without AVX).
static inline float fold(const v8* acc) {
  float a[LANES];
  memcpy(a, acc, sizeof a);
  for (int w = LANES / 2; w > 0; w /= 2) {
    for (int l = 0; l < w; ++l) a[l] += a[l + w];
  }
  return a[0];
}

#define MAC(acc, cp, xp)          \
  do {                            \
    v8 cv, xv;                    \
    memcpy(&cv, (cp), sizeof cv); \
    memcpy(&xv, (xp), sizeof xv); \
    (acc) += cv * xv;             \
  } while (0)

#define DOT_BODY                                                    \
  v8 acc = {0};                                                     \
  for (int64_t i = 0; i < taps; i += LANES) MAC(acc, c + i, x + i); \
  return fold(&acc);

#define DOT4_BODY                             \
  v8 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};  \
  for (int64_t i = 0; i < taps; i += LANES) { \
    MAC(a0, c[0] + i, x[0] + i);              \
    MAC(a1, c[1] + i, x[1] + i);              \
    MAC(a2, c[2] + i, x[2] + i);              \
    MAC(a3, c[3] + i, x[3] + i);              \
  }                                           \
  y[0] = fold(&a0), y[1] = fold(&a1), y[2] = fold(&a2), y[3] = fold(&a3);

static float dot(const float* restrict c, const float* restrict x, int64_t taps) { DOT_BODY }

// Four outputs: taps c[k] against x[k], k < 4.
static void dot4(float* restrict y, const float* const c[4], const float* const x[4], int64_t taps){DOT4_BODY}
#if defined(__x86_64__) || defined(__i386__)
#define AVX2 __attribute__((target("avx2,fma")))
AVX2 static float dot__avx2(const float* restrict c, const float* restrict x, int64_t taps){DOT_BODY} AVX2
    static void dot4__avx2(float* restrict y, const float* const c[4], const float* const x[4], int64_t taps) {
  DOT4_BODY
}
#endif

typedef float (*dot_fn)(const float*, const float*, int64_t);
typedef void (*dot4_fn)(float*, const float* const[4], const float* const[4], int64_t);

static int use_avx2(void) {
#if defined(CKW_RESAMPLE_BASELINE_ONLY)  // the test-only baseline build
  return 0;
#else
  return ckw_cpu_has_avx2();
#endif
}

// The same sum with x taken as 0 outside [0, n_in), for outputs near the ends.
static float dot_clipped(const float* restrict c, const float* restrict x, int64_t first, int64_t n_in, int64_t taps) {
  float acc[LANES] = {0};
  for (int64_t i = 0; i < taps; i += LANES) {
    for (int l = 0; l < LANES; ++l) {
      int64_t k = first + i + l;
      float v = (k >= 0 && k < n_in) ? x[k] : 0.0f;
      acc[l] += c[i + l] * v;
    }
  }
  for (int w = LANES / 2; w > 0; w /= 2) {
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
  }
  return acc[0];
}

// One output whose taps c start at input index `first`.
static float output(dot_fn dot_inside, const float* restrict c, const plan* p, const float* restrict x, int64_t n_in,
                    int64_t first) {
  return (first >= 0 && first + p->taps <= n_in) ? dot_inside(c, x + first, p->taps)
                                                 : dot_clipped(c, x, first, n_in, p->taps);
}

// Outputs n_begin .. n_begin + n_y - 1 into y, reading the signal through x, which holds its
// samples x_begin .. x_begin + n_x - 1; taps outside x are zeros (the caller made sure that
// only taps outside the signal are). Output n's value depends on n and the signal alone, so
// any split of the outputs into spans gives the bits of one whole call.
static void resample_span(float* restrict y, int64_t n_begin, int64_t n_y, const float* restrict x, int64_t x_begin,
                          int64_t n_x, const plan* pp, float* table, int64_t table_floats) {
  const plan p = *pp;
  const double inv_i0_beta = 1.0 / bessel_i0(CKW_RESAMPLE_KAISER_BETA);
  const int64_t rows = n_y < p.n_phases ? n_y : p.n_phases;
  const int64_t r0 = n_begin % p.n_phases;  // table row j holds phase (r0 + j) mod L
  const int avx2 = use_avx2();
#if defined(__x86_64__) || defined(__i386__)
  const dot_fn dot_inside = avx2 ? dot__avx2 : dot;
  const dot4_fn dot4_inside = avx2 ? dot4__avx2 : dot4;
#else
  (void)avx2;
  const dot_fn dot_inside = dot;
  const dot4_fn dot4_inside = dot4;
#endif

  if (rows <= table_floats / p.taps) {
    // Whole phase table: outputs in order, streaming through x once.
    for (int64_t j = 0; j < rows; ++j) {
      fill_phase(table + j * p.taps, &p, (r0 + j) % p.n_phases, inv_i0_beta);
    }
    // Output n sits at t = n M / L: phase n mod L, first tap floor(t) - J. Both advance
    // incrementally (floor(t) by M / L plus a carry), without divisions.
    const int64_t whole = p.step / p.n_phases, part = p.step % p.n_phases;
    int64_t row = 0, floor_t = n_begin / p.n_phases * p.step + r0 * p.step / p.n_phases;
    int64_t carry = r0 * p.step % p.n_phases;
    for (int64_t n = 0; n < n_y;) {
      const float* rows_k[4];
      int64_t firsts[4];
      int k = 0;
      for (; k < 4 && n + k < n_y; ++k) {
        rows_k[k] = table + row * p.taps;
        firsts[k] = floor_t - p.half - x_begin;
        floor_t += whole;
        carry += part;
        if (carry >= p.n_phases) carry -= p.n_phases, ++floor_t;
        if (++row == p.n_phases) row = 0;
      }
      if (k == 4 && firsts[0] >= 0 && firsts[3] + p.taps <= n_x) {
        const float* const xs[4] = {x + firsts[0], x + firsts[1], x + firsts[2], x + firsts[3]};
        dot4_inside(y + n, rows_k, xs, p.taps);
      } else {
        for (int q = 0; q < k; ++q) {
          y[n + q] = output(dot_inside, rows_k[q], &p, x, n_x, firsts[q]);
        }
      }
      n += k;
    }
  } else {
    // Too many phases to keep: one phase at a time, its outputs strided by L.
    for (int64_t j = 0; j < rows; ++j) {
      const int64_t r = (r0 + j) % p.n_phases;
      fill_phase(table, &p, r, inv_i0_beta);
      const int64_t n0 = n_begin + j;  // the span's first output of phase r
      int64_t first = n0 / p.n_phases * p.step + r * p.step / p.n_phases - p.half - x_begin;
      for (int64_t i = j; i < n_y; i += p.n_phases, first += p.step) {
        y[i] = output(dot_inside, table, &p, x, n_x, first);
      }
    }
  }
}

static int check_scratch(const plan* p, const void* scratch, int64_t scratch_bytes) {
  if (scratch_bytes < p->taps * (int64_t)sizeof(float)) return CKW_RESAMPLE_ERR_SCRATCH;
  if (scratch == NULL || (uintptr_t)scratch % sizeof(float) != 0) return CKW_RESAMPLE_ERR_ARGUMENT;
  return CKW_RESAMPLE_OK;
}

int ckw_f32_resample(float* restrict y, int64_t n_out, const float* restrict x, int64_t n_in, int64_t sr_in,
                     int64_t sr_out, void* scratch, int64_t scratch_bytes) {
  int64_t want = ckw_f32_resample_output_length(n_in, sr_in, sr_out);
  if (want < 0) return (int)want;
  if (n_out != want) return CKW_RESAMPLE_ERR_OUTPUT_LENGTH;
  if (n_out == 0) return CKW_RESAMPLE_OK;
  if (y == NULL || x == NULL) return CKW_RESAMPLE_ERR_ARGUMENT;
  if (sr_in == sr_out) {
    memcpy(y, x, (size_t)n_out * sizeof *y);
    return CKW_RESAMPLE_OK;
  }
  const plan p = make_plan(sr_in, sr_out);
  int rc = check_scratch(&p, scratch, scratch_bytes);
  if (rc != CKW_RESAMPLE_OK) return rc;
  resample_span(y, 0, n_out, x, 0, n_in, &p, (float*)scratch, scratch_bytes / (int64_t)sizeof(float));
  return CKW_RESAMPLE_OK;
}

int ckw_i64_resample_input_span(int64_t* span, int64_t n_begin, int64_t n_y, int64_t sr_in, int64_t sr_out) {
  int rc = check_rates(sr_in, sr_out);
  if (rc != CKW_RESAMPLE_OK) return rc;
  if (span == NULL || n_begin < 0 || n_y < 0) return CKW_RESAMPLE_ERR_ARGUMENT;
  if (n_y > 0 && n_begin + n_y - 1 > (INT64_MAX - sr_out) / sr_in) return CKW_RESAMPLE_ERR_TOO_LONG;
  if (sr_in == sr_out) {
    span[0] = n_begin;
    span[1] = n_begin + n_y;
    return CKW_RESAMPLE_OK;
  }
  const plan p = make_plan(sr_in, sr_out);
  span[0] = n_begin * sr_in / sr_out - p.half;
  span[1] = n_y > 0 ? (n_begin + n_y - 1) * sr_in / sr_out - p.half + p.taps : span[0];
  return CKW_RESAMPLE_OK;
}

int64_t ckw_f32_resample_range_scratch_bytes(int64_t n_y, int64_t sr_in, int64_t sr_out) {
  int rc = check_rates(sr_in, sr_out);
  if (rc != CKW_RESAMPLE_OK) return rc;
  if (n_y < 0) return CKW_RESAMPLE_ERR_ARGUMENT;
  if (n_y == 0 || sr_in == sr_out) return 0;
  const plan p = make_plan(sr_in, sr_out);
  const int64_t rows = n_y < p.n_phases ? n_y : p.n_phases;
  const int64_t table = rows * p.taps * (int64_t)sizeof(float);
  return table <= CKW_RESAMPLE_SCRATCH_BYTES ? table : p.taps * (int64_t)sizeof(float);
}

int ckw_f32_resample_range(float* restrict y, int64_t n_begin, int64_t n_y, const float* restrict x, int64_t x_begin,
                           int64_t n_x, int64_t n_in, int64_t sr_in, int64_t sr_out, void* scratch,
                           int64_t scratch_bytes) {
  int64_t span[2];
  int rc = ckw_i64_resample_input_span(span, n_begin, n_y, sr_in, sr_out);
  if (rc != CKW_RESAMPLE_OK) return rc;
  const int64_t need_first = span[0], need_end = span[1];
  if (x_begin < 0 || n_x < 0 || (n_in >= 0 && x_begin + n_x > n_in)) return CKW_RESAMPLE_ERR_ARGUMENT;
  if (n_in >= 0) {
    int64_t n_out = ckw_f32_resample_output_length(n_in, sr_in, sr_out);
    if (n_out < 0) return (int)n_out;
    if (n_begin + n_y > n_out) return CKW_RESAMPLE_ERR_OUTPUT_LENGTH;
  }
  if (n_y == 0) return CKW_RESAMPLE_OK;
  // Every tap inside the signal must be in x: below x only the signal's start, past x only
  // its (known) end.
  const int64_t lo = need_first > 0 ? need_first : 0;
  const int64_t hi = n_in >= 0 && n_in < need_end ? n_in : need_end;
  if (x_begin > lo || x_begin + n_x < hi) return CKW_RESAMPLE_ERR_INPUT_SPAN;
  if (y == NULL || (x == NULL && n_x > 0)) return CKW_RESAMPLE_ERR_ARGUMENT;
  if (sr_in == sr_out) {
    memcpy(y, x + (n_begin - x_begin), (size_t)n_y * sizeof *y);
    return CKW_RESAMPLE_OK;
  }
  const plan p = make_plan(sr_in, sr_out);
  rc = check_scratch(&p, scratch, scratch_bytes);
  if (rc != CKW_RESAMPLE_OK) return rc;
  resample_span(y, n_begin, n_y, x, x_begin, n_x, &p, (float*)scratch, scratch_bytes / (int64_t)sizeof(float));
  return CKW_RESAMPLE_OK;
}

const char* ckw_f32_resample_strerror(int code) {
  switch (code) {
    case CKW_RESAMPLE_OK:
      return "ok";
    case CKW_RESAMPLE_ERR_ARGUMENT:
      return "resample: NULL or misaligned buffer, or negative length, passed by the caller";
    case CKW_RESAMPLE_ERR_RATE:
      return "sample rate outside 1 Hz .. 768000 Hz; resample the file first";
    case CKW_RESAMPLE_ERR_RATIO:
      return "resample: downsampling by more than 64x is not supported; resample in two steps";
    case CKW_RESAMPLE_ERR_TOO_LONG:
      return "resample: input too long for the rate ratio (n_in * sr_out overflows int64)";
    case CKW_RESAMPLE_ERR_OUTPUT_LENGTH:
      return "resample: n_out must equal ckw_f32_resample_output_length(n_in, sr_in, sr_out)";
    case CKW_RESAMPLE_ERR_SCRATCH:
      return "resample: scratch smaller than ckw_f32_resample_scratch_bytes(n_in, sr_in, sr_out)";
    case CKW_RESAMPLE_ERR_INPUT_SPAN:
      return "resample: the input block misses samples the requested outputs need (see "
             "ckw_i64_resample_input_span)";
    default:
      return "resample: unknown error code";
  }
}
