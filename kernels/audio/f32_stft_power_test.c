// ckw_f32_stft_power against a direct DFT in double of reflect-padded, Hann-windowed frames,
// for short signals (repeated reflection), every edge and interior frame, partial vector
// blocks and chunked calls. Every ISA variant the CPU runs must give the scalar path's bits.
#include "kernels/audio/f32_stft_power.h"
#include "kernels/audio/f32_stft_power_contract.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/common/test_util.h"
#include "kernels/common/tolerance.h"

#define TOLERANCE_C CKW_F32_STFT_POWER_TOLERANCE_C
#define PI 3.14159265358979323846

void ckw_f32_stft_power__vec16(float* power, int64_t ld_power, const float* x, int64_t n_samples, int64_t frame_begin,
                               int64_t n_frames, const float* window, const float* twiddles);

typedef void (*stft_fn)(float*, int64_t, const float*, int64_t, int64_t, int64_t, const float*, const float*);

// Index into x of padded position i, mirroring step by step (no edge repeat).
static int64_t naive_reflect(int64_t i, int64_t n) {
  if (n == 1) return 0;
  while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
  return i;
}

static void naive_power(double* ref, int64_t ld, const float* x, int64_t n, int64_t t0, int64_t frames) {
  double cs[400], sn[400], frame[400];
  for (int j = 0; j < 400; ++j) cs[j] = cos(2 * PI * j / 400), sn[j] = sin(2 * PI * j / 400);
  for (int64_t t = 0; t < frames; ++t) {
    for (int i = 0; i < 400; ++i) {
      int64_t at = (t0 + t) * 160 - 200 + i;
      double v = n > 0 ? x[naive_reflect(at, n)] : 0.0;
      frame[i] = v * (0.5 - 0.5 * cs[i]);
    }
    for (int f = 0; f <= 200; ++f) {
      double re = 0, im = 0;
      for (int i = 0; i < 400; ++i) {
        re += frame[i] * cs[(f * i) % 400];
        im -= frame[i] * sn[(f * i) % 400];
      }
      ref[f * ld + t] = re * re + im * im;
    }
  }
}

static int64_t frames_with_last(int64_t n) { return n / 160 + 1; }  // torch's count

int main(void) {
  static float window[400], tw[800];
  ckw_f32_stft_tables(window, tw);
  struct {
    const char* name;
    stft_fn fn;
    int runs;
  } variants[] = {
#define ISA(isa) {#isa, ckw_f32_stft_power__##isa, ckw_f32_stft_power_isa_supported(#isa)},
      CKW_F32_STFT_POWER_ISAS(ISA)
#undef ISA
          {"vec16", ckw_f32_stft_power__vec16, 1},
      {"dispatch", ckw_f32_stft_power, 1},
  };
  const int n_variants = sizeof variants / sizeof variants[0];
  for (int v = 0; v < n_variants; ++v) {
    if (!variants[v].runs) printf("note: %s not supported by this CPU, skipped\n", variants[v].name);
  }
  const int64_t sizes[] = {0, 1, 2, 150, 199, 200, 201, 399, 400, 401, 1000, 16037, 48000};
  uint64_t rng = 11;
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
    const int64_t n = sizes[s];
    const int64_t frames = n == 0 ? 3 : frames_with_last(n), ld = frames + 3;
    float* x = malloc((size_t)(n + 1) * sizeof *x);
    for (int64_t i = 0; i < n; ++i) x[i] = test_rng_float(&rng) * (i % 977 == 0 ? 1.0f : 0.3f);
    double* ref = calloc((size_t)(201 * ld), sizeof *ref);
    float* ref32 = calloc((size_t)(201 * ld), sizeof *ref32);
    float* base = calloc((size_t)(201 * ld), sizeof *base);
    float* got = calloc((size_t)(201 * ld), sizeof *got);
    naive_power(ref, ld, x, n, 0, frames);
    for (int64_t i = 0; i < 201 * ld; ++i) ref32[i] = (float)ref[i];
    ckw_f32_stft_power__scalar(base, ld, x, n, 0, frames, window, tw);
    char what[64];
    snprintf(what, sizeof what, "stft n=%lld", (long long)n);
    EXPECT(ckw_check_close(what, base, ref32, 201 * ld, TOLERANCE_C, 400), "%s", what);
    for (int v = 1; v < n_variants; ++v) {
      if (!variants[v].runs) continue;
      for (int64_t i = 0; i < 201 * ld; ++i) got[i] = -1.0f;
      variants[v].fn(got, ld, x, n, 0, frames, window, tw);
      int same = 1;
      for (int64_t f = 0; f < 201; ++f) {
        same &= memcmp(got + f * ld, base + f * ld, (size_t)frames * sizeof *got) == 0;
        for (int64_t t = frames; t < ld; ++t) same &= got[f * ld + t] == -1.0f;  // no spill
      }
      EXPECT(same, "%s differs from scalar (or wrote past n_frames) for n=%lld", variants[v].name, (long long)n);
    }
    // Chunks of 7 frames at frame_begin offsets give the one-call result.
    for (int64_t t0 = 0; t0 < frames; t0 += 7) {
      int64_t nt = frames - t0 < 7 ? frames - t0 : 7;
      ckw_f32_stft_power(got + t0, ld, x, n, t0, nt, window, tw);
    }
    int same = 1;
    for (int64_t f = 0; f < 201; ++f) {
      same &= memcmp(got + f * ld, base + f * ld, (size_t)frames * sizeof *got) == 0;
    }
    EXPECT(same, "chunked frames differ for n=%lld", (long long)n);
    free(x), free(ref), free(ref32), free(base), free(got);
  }
  return test_finish("f32_stft_power_test");
}
