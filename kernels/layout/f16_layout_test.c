// f16 KV-cache writes (token_major -> head_major): every element of the written rows is
// ckw_f32_to_f16 of its source and the f32 converter's output rounded, over random windows (some
// refused: the same code as the f32 converter, nothing written) and the cross-K/V shape; the
// edge values (overflow, ties, subnormals, -0, NaN, inf) give their pinned bits; rows outside
// the window keep a sentinel; negative dims and full caches are refused untouched.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/common/cpu.h"
#include "kernels/common/f16.h"
#include "kernels/common/test_util.h"
#include "kernels/layout/f16_cache_test_util.h"
#include "kernels/layout/f16_layout.h"
#include "kernels/layout/f16_layout_contract.h"

_Static_assert(CKW_F16_TOKEN_TO_HEAD_MAJOR_EXACT, "f16_token_to_head_major.json states an exact contract");

enum { SENTINEL = 0x5bad };

static uint64_t g_state = 0x243f6a8885a308d3ull;
static int64_t rnd(int64_t n) { return n > 0 ? (int64_t)(test_rng_next(&g_state) % (uint64_t)n) : 0; }

// One call on a sentinel-filled cache against the definition, and against the f32 converter on
// the widened cache (the same status; its output rounded is ours).
static void check(const char* what, const float* src, int64_t T, int64_t H, int64_t Dh, int64_t cap, int64_t row0) {
  const int64_t n = H * cap * Dh;
  uint16_t* cache = malloc(sizeof(uint16_t) * (size_t)(n > 0 ? n : 1));
  float* cache32 = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
  for (int64_t i = 0; i < n; ++i) cache[i] = SENTINEL, cache32[i] = ckw_f16_to_f32(SENTINEL);
  const int rc = ckw_f16_token_to_head_major(cache, src, T, H, Dh, cap, row0);
  const int rc32 = ckw_f32_token_to_head_major(cache32, src, T, H, Dh, cap, row0);
  EXPECT(rc == rc32, "%s: returned %d, the f32 converter %d", what, rc, rc32);
  int bad = 0, bad32 = 0;
  for (int64_t h = 0; h < H; ++h)
    for (int64_t r = 0; r < cap; ++r)
      for (int64_t d = 0; d < Dh; ++d) {
        const int64_t i = (h * cap + r) * Dh + d, t = r - row0;
        const uint16_t want = rc == 0 && t >= 0 && t < T ? ckw_f32_to_f16(src[t * H * Dh + h * Dh + d]) : SENTINEL;
        if (cache[i] != want && bad++ < 3)
          fprintf(stderr, "%s: [%lld,%lld,%lld] = 0x%04x want 0x%04x\n", what, (long long)h, (long long)r, (long long)d,
                  cache[i], want);
        bad32 += cache[i] != ckw_f32_to_f16(cache32[i]);
      }
  EXPECT(bad == 0, "%s: %d elements differ from the definition", what, bad);
  EXPECT(bad32 == 0, "%s: %d elements differ from the f32 converter's, rounded", what, bad32);
  free(cache), free(cache32);
}

int main(void) {
  // Random windows, some past the capacity or before row 0 (refused).
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t H = 1 + rnd(4), Dh = 1 + rnd(9), cap = rnd(12), T = rnd(cap + 3), row0 = rnd(cap + 2) - 1;
    float* src = malloc(sizeof(float) * (size_t)(T * H * Dh + 1));
    f16_test_src(src, T * H * Dh, &g_state);
    char what[80];
    snprintf(what, sizeof what, "trial %d (T %lld H %lld Dh %lld cap %lld row0 %lld)", trial, (long long)T,
             (long long)H, (long long)Dh, (long long)cap, (long long)row0);
    check(what, src, T, H, Dh, cap, row0);
    free(src);
  }
  // The cross-K/V entry (1500 rows of 6 heads of 64) and a decode step's append at the last row.
  {
    enum { T = 1500, H = 6, DH = 64 };
    float* src = malloc(sizeof(float) * T * H * DH);
    f16_test_src(src, T * H * DH, &g_state);
    check("cross-K/V", src, T, H, DH, T, 0);
    check("append at 447", src, 1, H, DH, 448, 447);
    free(src);
  }
  // The edge values, each at its place (T = 3 rows of 2 heads, at row 1 of 5): pinned bits.
  {
    enum { T = 3, H = 2, DH = (F16_EDGES + T * H - 1) / (T * H), CAP = 5 };
    float src[T * H * DH];
    uint16_t cache[H * CAP * DH];
    for (int i = 0; i < T * H * DH; ++i) src[i] = ckw_f32_from_bits(kF16Edges[i % F16_EDGES].f32);
    for (int i = 0; i < H * CAP * DH; ++i) cache[i] = SENTINEL;
    EXPECT(ckw_f16_token_to_head_major(cache, src, T, H, DH, CAP, 1) == CKW_LAYOUT_OK, "edge values");
    for (int t = 0; t < T; ++t)
      for (int h = 0; h < H; ++h)
        for (int d = 0; d < DH; ++d) {
          const F16Edge e = kF16Edges[(t * H * DH + h * DH + d) % F16_EDGES];
          const uint16_t got = cache[(h * CAP + 1 + t) * DH + d];
          EXPECT(got == e.f16, "edge 0x%08x: 0x%04x want 0x%04x", e.f32, got, e.f16);
        }
    check("edge values", src, T, H, DH, CAP, 1);
  }
  // Refusals leave the cache untouched: full cache, negative row0, negative dims.
  {
    enum { H = 2, DH = 3, CAP = 4 };
    const float src[5 * H * DH] = {1.0f};
    uint16_t cache[H * CAP * DH];
    for (int i = 0; i < H * CAP * DH; ++i) cache[i] = SENTINEL;
    EXPECT(ckw_f16_token_to_head_major(cache, src, 1, H, DH, CAP, CAP) == CKW_LAYOUT_ERR_ROWS, "row0 = cap");
    EXPECT(ckw_f16_token_to_head_major(cache, src, 5, H, DH, CAP, 0) == CKW_LAYOUT_ERR_ROWS, "T > cap");
    EXPECT(ckw_f16_token_to_head_major(cache, src, 1, H, DH, CAP, -1) == CKW_LAYOUT_ERR_ROWS, "row0 < 0");
    const int64_t dims[4] = {1, H, DH, CAP};
    for (int i = 0; i < 4; ++i) {
      int64_t d[4];
      memcpy(d, dims, sizeof d);
      d[i] = -1;
      EXPECT(ckw_f16_token_to_head_major(cache, src, d[0], d[1], d[2], d[3], 0) == CKW_LAYOUT_ERR_SHAPE,
             "negative dim %d", i);
    }
    for (int i = 0; i < H * CAP * DH; ++i) EXPECT(cache[i] == SENTINEL, "refusals wrote element %d", i);
  }
  // Both row stores, on random values and every edge value at every lane and tail position.
  if (ckw_cpu_has_avx2()) {
    enum { N = 4099 };
    float* src = malloc(sizeof(float) * N);
    uint16_t *a = malloc(sizeof(uint16_t) * N), *b = malloc(sizeof(uint16_t) * N);
    f16_test_src(src, N, &g_state);
    for (int i = 0; i < N; i += 3) src[i] = ckw_f32_from_bits(kF16Edges[(i / 3) % F16_EDGES].f32);
    for (int64_t n = 0; n <= 19; ++n) {  // lengths around the 8-lane vector: the tail
      ckw_layout_store_f16__scalar(a, 1, src + n, N - 1 - n);
      ckw_layout_store_f16__avx2(b, 1, src + n, N - 1 - n);
      EXPECT(memcmp(a + 1, b + 1, sizeof(uint16_t) * (size_t)(N - 1 - n)) == 0, "F16C store != scalar (offset %lld)",
             (long long)n);
    }
    free(src), free(a), free(b);
  } else {
    fprintf(stderr, "f16_layout_test: no AVX2/F16C here: the scalar store alone\n");
  }
  const int codes[] = {CKW_LAYOUT_OK, CKW_LAYOUT_ERR_ROWS, CKW_LAYOUT_ERR_SHAPE, -99};
  for (int i = 0; i < 4; ++i)
    EXPECT(strcmp(ckw_f16_layout_strerror(codes[i]), ckw_f32_layout_strerror(codes[i])) == 0, "strerror %d", codes[i]);
  return test_finish("f16_layout_test");
}
