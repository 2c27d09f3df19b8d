// f16 paged pool writes: over random geometries (pos NULL, unused table entries garbage, a stale
// scratch bitmap) and random faults (a full table, a bad id, a shared row, several at once), the
// status is the f32 kernel's and the pool the f32 kernel's pool rounded (so the f32 test's proofs
// of rows, checks and their order carry over); every element written is ckw_f32_to_f16 of its
// source, every other keeps its old bits, a refusal writes nothing; the edge values give their
// pinned bits; the cross-K/V entry at its real shape; the bitmap stays inside its bytes.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/common/f16.h"
#include "kernels/common/test_util.h"
#include "kernels/layout/f16_cache_test_util.h"
#include "kernels/layout/f16_paged.h"
#include "kernels/layout/f16_paged_contract.h"

_Static_assert(CKW_F16_TOKEN_TO_PAGED_EXACT, "f16_token_to_paged.json states an exact contract");

enum { GUARD_WORDS = 4 };
static const uint64_t GUARD = 0x5a5a5a5a5a5a5a5aull;

static uint64_t g_state = 0x13198a2e03707344ull;
static int64_t rnd(int64_t n) { return n > 0 ? (int64_t)(test_rng_next(&g_state) % (uint64_t)n) : 0; }

// The codes seen over the calls checked (index -code).
static int g_seen[5];

// One call on old pool bits, against the definition and against the f32 kernel on the widened
// pool; scratch of ckw_f32_token_to_paged_scratch_bytes, all bits set, then guard words.
static void check(const char* what, const float* src, const int32_t* pos, const int32_t* table, int64_t B, int64_t T,
                  int64_t H, int64_t Dh, int64_t NB, int64_t R, int64_t MB) {
  const int64_t P = NB * H * R * Dh > 0 ? NB * H * R * Dh : 0;
  uint16_t* pool = malloc(sizeof(uint16_t) * (size_t)(P + 1));
  uint16_t* want = malloc(sizeof(uint16_t) * (size_t)(P + 1));
  float* pool32 = malloc(sizeof(float) * (size_t)(P + 1));
  for (int64_t i = 0; i < P; ++i) pool[i] = want[i] = f16_test_old(&g_state), pool32[i] = ckw_f16_to_f32(pool[i]);
  const int64_t words = ckw_f32_token_to_paged_scratch_bytes(NB, R) / 8;
  uint64_t* bits = malloc(sizeof(uint64_t) * (size_t)(words + GUARD_WORDS));
  memset(bits, 0xff, sizeof(uint64_t) * (size_t)words);
  for (int i = 0; i < GUARD_WORDS; ++i) bits[words + i] = GUARD;

  const int rc = ckw_f16_token_to_paged(pool, src, pos, table, bits, B, T, H, Dh, NB, R, MB);
  for (int i = 0; i < GUARD_WORDS; ++i) EXPECT(bits[words + i] == GUARD, "%s: bitmap wrote past its bytes", what);
  const int rc32 = ckw_f32_token_to_paged(pool32, src, pos, table, bits, B, T, H, Dh, NB, R, MB);
  EXPECT(rc == rc32, "%s: returned %d, the f32 kernel %d", what, rc, rc32);
  if (rc <= 0 && rc >= -4) ++g_seen[-rc];
  if (rc == CKW_PAGED_OK)  // the definition, element by element
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t) {
        const int64_t j = (pos ? pos[b] : 0) + t, blk = table[b * MB + j / R];
        for (int64_t h = 0; h < H; ++h)
          for (int64_t d = 0; d < Dh; ++d)
            want[((blk * H + h) * R + j % R) * Dh + d] = ckw_f32_to_f16(src[(b * T + t) * H * Dh + h * Dh + d]);
      }
  int bad = 0, bad32 = 0;
  for (int64_t i = 0; i < P; ++i) {
    if (pool[i] != want[i] && bad++ < 3)
      fprintf(stderr, "%s: [%lld] = 0x%04x want 0x%04x\n", what, (long long)i, pool[i], want[i]);
    bad32 += pool[i] != ckw_f32_to_f16(pool32[i]);
  }
  EXPECT(bad == 0, "%s: %d elements differ from the definition%s", what, bad,
         rc ? " (refused: must write nothing)" : "");
  EXPECT(bad32 == 0, "%s: %d elements differ from the f32 kernel's pool, rounded", what, bad32);
  free(pool), free(want), free(pool32), free(bits);
}

// A random geometry as f32_paged_test's (distinct blocks for the used entries, unused ones 0 or
// any id), then maybe faults: a position past the table or below 0, a used entry out of range,
// a used entry repeated (a shared row), or negative dims.
static void random_trial(int trial) {
  int64_t H = 1 + rnd(3), Dh = 1 + rnd(5), R = 1 + rnd(5), MB = 1 + rnd(6), B = 1 + rnd(6);
  int64_t NB = B * MB + rnd(4), T = rnd(MB * R + 1);
  int32_t* pos = malloc(sizeof(int32_t) * (size_t)B);
  int32_t* table = malloc(sizeof(int32_t) * (size_t)(B * MB));
  int32_t* perm = malloc(sizeof(int32_t) * (size_t)NB);
  for (int64_t i = 0; i < NB; ++i) perm[i] = (int32_t)i;
  for (int64_t i = NB - 1; i > 0; --i) {
    const int64_t j = rnd(i + 1);
    const int32_t x = perm[i];
    perm[i] = perm[j], perm[j] = x;
  }
  int64_t* first = malloc(sizeof(int64_t) * (size_t)B);  // each sequence's first used entry
  const int null_pos = trial % 5 == 0;
  for (int64_t b = 0; b < B; ++b) {
    pos[b] = null_pos ? 0 : (int32_t)rnd(MB * R - T + 1);
    first[b] = pos[b] / R;
    for (int64_t k = 0; k < MB; ++k) table[b * MB + k] = trial % 2 ? perm[b * MB + k] : (int32_t)rnd(NB);
    for (int64_t k = first[b]; T && k <= (pos[b] + T - 1) / R; ++k) table[b * MB + k] = perm[b * MB + k];
  }
  const int faults = trial % 3 == 0 ? 0 : 1 + (int)rnd(3);
  for (int f = 0; f < faults && T > 0; ++f) {
    const int64_t b = rnd(B), b2 = rnd(B);
    switch (rnd(5)) {
      case 0:
        if (!null_pos) pos[b] = rnd(2) ? -1 - (int32_t)rnd(3) : (int32_t)(MB * R - T + 1 + rnd(3));
        break;
      case 1:
        table[b * MB + first[b]] = rnd(2) ? (int32_t)(NB + rnd(3)) : -1 - (int32_t)rnd(3);
        break;
      case 2:  // another used entry's block: the same rows when the row offsets meet
        table[b * MB + first[b]] = table[b2 * MB + first[b2]];
        break;
      case 3:  // b2's position and table: every row shared
        if (b != b2 && !null_pos) pos[b] = pos[b2], first[b] = first[b2];
        if (b != b2) memcpy(table + b * MB, table + b2 * MB, sizeof(int32_t) * (size_t)MB);
        break;
      default:
        if (rnd(4) == 0) H = -1;  // negative dims (nothing is allocated for them)
        break;
    }
  }
  float* src = malloc(sizeof(float) * (size_t)(B * T * (H > 0 ? H : 0) * Dh + 1));
  f16_test_src(src, B * T * (H > 0 ? H : 0) * Dh, &g_state);
  char what[112];
  snprintf(what, sizeof what, "trial %d (B %lld T %lld H %lld Dh %lld NB %lld R %lld MB %lld%s, %d faults)", trial,
           (long long)B, (long long)T, (long long)H, (long long)Dh, (long long)NB, (long long)R, (long long)MB,
           null_pos ? ", pos NULL" : "", faults);
  check(what, src, null_pos ? NULL : pos, table, B, T, H, Dh, NB, R, MB);
  free(pos), free(table), free(perm), free(first), free(src);
}

int main(void) {
  for (int trial = 0; trial < 1500; ++trial) random_trial(trial);
  printf("random trials: %d written, %d refused -1, %d -2, %d -3, %d -4\n", g_seen[0], g_seen[1], g_seen[2], g_seen[3],
         g_seen[4]);
  for (int code = 0; code <= 4; ++code) EXPECT(g_seen[code] > 0, "no random trial returned %d", -code);

  // A cross-K/V entry at tiny's shape (1500 rows of 6 heads of 64 into block 2 of 4), and a
  // decode step of 8 sequences with one row each.
  {
    enum { T = 1500, H = 6, DH = 64 };
    float* src = malloc(sizeof(float) * 8 * T * H * DH);
    f16_test_src(src, 8 * T * H * DH, &g_state);
    const int32_t entry[1] = {2};
    check("cross-K/V entry", src, NULL, entry, 1, T, H, DH, 4, T, 1);
    const int32_t pos[8] = {0, 15, 16, 31, 100, 447, 3, 200};
    int32_t table[8 * 28];
    for (int i = 0; i < 8 * 28; ++i) table[i] = (int32_t)(i * 7 % 256);
    check("decode step", src, pos, table, 8, 1, H, DH, 256, 16, 28);
    free(src);
  }
  // The edge values: two sequences of 3 rows, 2 heads, into 2-row blocks; pinned bits.
  {
    enum { B = 2, T = 3, H = 2, DH = (F16_EDGES + B * T * H - 1) / (B * T * H), NB = 5, R = 2, MB = 2 };
    float src[B * T * H * DH];
    for (int i = 0; i < B * T * H * DH; ++i) src[i] = ckw_f32_from_bits(kF16Edges[i % F16_EDGES].f32);
    const int32_t pos[B] = {1, 0}, table[B * MB] = {3, 0, 4, 1};
    uint16_t pool[NB * H * R * DH];
    uint64_t bits[1];
    memset(pool, 0, sizeof pool);
    EXPECT(ckw_f16_token_to_paged(pool, src, pos, table, bits, B, T, H, DH, NB, R, MB) == CKW_PAGED_OK, "edges");
    for (int b = 0; b < B; ++b)
      for (int t = 0; t < T; ++t)
        for (int h = 0; h < H; ++h)
          for (int d = 0; d < DH; ++d) {
            const int j = pos[b] + t, blk = table[b * MB + j / R];
            const F16Edge e = kF16Edges[((b * T + t) * H * DH + h * DH + d) % F16_EDGES];
            const uint16_t got = pool[((blk * H + h) * R + j % R) * DH + d];
            EXPECT(got == e.f16, "edge 0x%08x: 0x%04x want 0x%04x", e.f32, got, e.f16);
          }
    check("edge values", src, pos, table, B, T, H, DH, NB, R, MB);
  }
  // Each refusal once by hand (the random trials compare them with the f32 kernel's).
  {
    const float src[8] = {1.0f, 2.0f};
    const int32_t full[2] = {0, 3}, table[2 * 2] = {0, 1, 2, 3}, bad_id[2 * 2] = {0, 1, 9, 3};
    const int32_t shared[2 * 2] = {0, 1, 0, 3};
    check("pos + T > MB * R", src, full, table, 2, 2, 1, 2, 8, 2, 2);
    check("id = NB", src, NULL, bad_id + 2, 1, 2, 1, 2, 8, 2, 2);
    check("shared row", src, NULL, shared, 2, 2, 1, 2, 8, 2, 2);
    check("negative Dh", src, NULL, table, 1, 1, 1, -1, 8, 2, 2);
  }
  const int codes[] = {CKW_PAGED_OK, CKW_PAGED_ERR_ID, CKW_PAGED_ERR_POS, CKW_PAGED_ERR_COLLISION, CKW_PAGED_ERR_SHAPE,
                       -99};
  for (int i = 0; i < 6; ++i)
    EXPECT(strcmp(ckw_f16_paged_strerror(codes[i]), ckw_f32_paged_strerror(codes[i])) == 0, "strerror %d", codes[i]);
  return test_finish("f16_paged_test");
}
