// Small helpers shared by the kernel cc_tests: deterministic RNGs, a failure counter, skipped ISA
// paths.
#ifndef CKW_KERNELS_COMMON_TEST_UTIL_H_
#define CKW_KERNELS_COMMON_TEST_UTIL_H_

#include <stdint.h>
#include <stdio.h>

static int g_failures = 0;

#define EXPECT(cond, ...)                                               \
  do {                                                                  \
    if (!(cond)) {                                                      \
      fprintf(stderr, "%s:%d: FAILED %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                     \
      fputc('\n', stderr);                                              \
      ++g_failures;                                                     \
    }                                                                   \
  } while (0)

// xorshift64*: reproducible across platforms.
static inline uint64_t test_rng_next(uint64_t* s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}

// Uniform in [-1, 1).
static inline float test_rng_float(uint64_t* s) {
  return (float)((double)(test_rng_next(s) >> 11) * (2.0 / 9007199254740992.0) - 1.0);
}

// The xorshift64 stream the kernel tests draw inputs from: uniform in [-1, 1) with 24 random bits.
// A test picks its seed by defining CKW_TEST_SEED before including this header.
#ifndef CKW_TEST_SEED
#define CKW_TEST_SEED 88172645463325252ull
#endif
static unsigned long long g_rng = CKW_TEST_SEED;
static inline float frand(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (float)((g_rng >> 40) * (1.0 / (1ull << 24)) * 2.0 - 1.0);
}

// Uniform in [0, n), from frand().
static inline int64_t rand_below(int64_t n) { return (int64_t)((frand() + 1.0f) * 0.5f * (float)n) % n; }

// ids[i] = 0..n-1 in a random order (Fisher-Yates over rand_below): a shuffled block pool.
static inline void shuffled_ids(int32_t* ids, int64_t n) {
  for (int64_t i = 0; i < n; ++i) ids[i] = (int32_t)i;
  for (int64_t i = n - 1; i > 0; --i) {
    const int64_t j = rand_below(i + 1);
    const int32_t t = ids[i];
    ids[i] = ids[j], ids[j] = t;
  }
}

// Whether a test runs the ISA path `isa` (available: this CPU has it); prints a SKIP line if not.
static inline int test_isa_runs(const char* isa, int available) {
  if (!available) printf("SKIP %s: this CPU lacks it\n", isa);
  return available;
}

static inline int test_finish(const char* name) {
  if (g_failures) {
    fprintf(stderr, "%s: %d check(s) failed\n", name, g_failures);
    return 1;
  }
  printf("%s: all checks passed\n", name);
  return 0;
}

#endif  // CKW_KERNELS_COMMON_TEST_UTIL_H_
