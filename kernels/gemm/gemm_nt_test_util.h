// What the f32_gemm_nt and bf16w_gemm_nt C tests share: the four epilogue kinds, the RNG, the
// float64 GELU, the shapes and the loop over ISA paths x shapes x kinds (plus in-place residual).
#ifndef CKW_KERNELS_GEMM_GEMM_NT_TEST_UTIL_H_
#define CKW_KERNELS_GEMM_GEMM_NT_TEST_UTIL_H_

#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "kernels/common/f32_gemm_nt_core.h"

enum { PLAIN, BIAS, GELU, RESIDUAL, NKIND };
static const char* kKindName[NKIND] = {"logits(nt)", "linear", "linear_gelu", "linear_residual"};

static unsigned long long g_rng = 88172645463325252ull;
static inline float frand(void) {  // uniform in [-1, 1)
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (float)((g_rng >> 40) * (1.0 / (1ull << 24)) * 2.0 - 1.0);
}

static inline double gelu_ref(double v) { return 0.5 * v * (1.0 + erf(v / sqrt(2.0))); }

// Odd sizes around the tile edges (MR 6/8, NR 16/32, KC 256, MC 144/128), K tails of 8, 16 and 32
// lanes, decode M = 1, beams (5, 8 rows), the first blocked M (9), K spanning several KC slices, M
// spanning several MC blocks, and empty problems.
static const int64_t kGemmShapes[][3] = {
    {1, 1, 1},    {1, 384, 384}, {1, 33, 1},    {7, 33, 1},    {13, 17, 19}, {6, 16, 256}, {8, 32, 257},
    {9, 47, 600}, {150, 35, 70}, {290, 50, 33}, {2, 70, 513},  {5, 3, 0},    {1, 3, 0},    {0, 5, 5},
    {3, 0, 4},    {5, 385, 384}, {8, 70, 33},   {9, 40, 64},   {3, 21, 47},  {1, 13, 31},  {4, 37, 100},
    {150, 600, 300},
    {41, 70, 64},  // M just past 32-row blocks (AMX) with K whole 32-k steps; empty K with blocked M
    {40, 70, 0}};  // a block whose rows of y outgrow the sweep order (panel-outer), then one that does not

// Runs run_case(&isas[i], kind, M, N, K, in_place) over every available entry of the array
// `isas` (elements with .isa and .available), every shape and kind, and the in-place residual;
// prints the count and evaluates to the process exit code.
#define GEMM_TEST_RUN_ALL(isas, run_case, label)                                                   \
  __extension__({                                                                                  \
    int failures_ = 0, checked_ = 0;                                                               \
    for (size_t i_ = 0; i_ < sizeof(isas) / sizeof(isas)[0]; ++i_) {                               \
      if (!(isas)[i_].available) {                                                                 \
        printf("SKIP %s: this CPU lacks it\n", (isas)[i_].isa);                                    \
        continue;                                                                                  \
      }                                                                                            \
      for (size_t s_ = 0; s_ < sizeof kGemmShapes / sizeof kGemmShapes[0]; ++s_) {                 \
        const int64_t* d_ = kGemmShapes[s_];                                                       \
        for (int kind_ = 0; kind_ < NKIND; ++kind_, ++checked_)                                    \
          failures_ += !run_case(&(isas)[i_], kind_, d_[0], d_[1], d_[2], 0);                      \
        failures_ += !run_case(&(isas)[i_], RESIDUAL, d_[0], d_[1], d_[2], 1);                     \
        ++checked_;                                                                                \
      }                                                                                            \
    }                                                                                              \
    printf("%d/%d %s cases passed\n", checked_ - failures_, checked_, label);                      \
    failures_ ? 1 : 0;                                                                             \
  })

// The scratch floats every kernel call gets (the maps' scratch:1048576).
#define GEMM_TEST_PACK_FLOATS (CKW_GEMM_PACK_BYTES / (int64_t)sizeof(float))

// emu_plain, emu_bias, emu_gelu, emu_res: the four kernels' signatures (weights of type w_t) on an
// engine entry `core` with the core's signature, for the *_avx512emu tests, which build the
// AVX-512 template on kernels/common/avx512_emulation.h and call its __avx512emu core directly.
#define GEMM_TEST_EMU_ENTRIES(core, w_t)                                                                       \
  void core(float*, const float*, const w_t*, const float*, const float*, float*, int64_t, int64_t, int64_t, \
            int64_t, int64_t, int);                                                                            \
  static void emu_plain(float* y, const float* x, const w_t* w, float* s, int64_t M, int64_t N, int64_t K,      \
                        int64_t ldy) {                                                                         \
    core(y, x, w, NULL, NULL, s, GEMM_TEST_PACK_FLOATS, M, N, K, ldy, CKW_GEMM_EPI_PLAIN);                     \
  }                                                                                                            \
  static void emu_bias(float* y, const float* x, const w_t* w, const float* b, float* s, int64_t M, int64_t N, \
                       int64_t K, int64_t ldy) {                                                               \
    core(y, x, w, b, NULL, s, GEMM_TEST_PACK_FLOATS, M, N, K, ldy, CKW_GEMM_EPI_PLAIN);                        \
  }                                                                                                            \
  static void emu_gelu(float* y, const float* x, const w_t* w, const float* b, float* s, int64_t M, int64_t N, \
                       int64_t K, int64_t ldy) {                                                               \
    core(y, x, w, b, NULL, s, GEMM_TEST_PACK_FLOATS, M, N, K, ldy, CKW_GEMM_EPI_GELU);                         \
  }                                                                                                            \
  static void emu_res(float* y, const float* x, const w_t* w, const float* b, const float* r, float* s,        \
                      int64_t M, int64_t N, int64_t K, int64_t ldy) {                                          \
    core(y, x, w, b, r, s, GEMM_TEST_PACK_FLOATS, M, N, K, ldy, CKW_GEMM_EPI_RESIDUAL);                        \
  }

#endif  // CKW_KERNELS_GEMM_GEMM_NT_TEST_UTIL_H_
