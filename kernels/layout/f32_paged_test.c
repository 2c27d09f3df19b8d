// Paged KV pool writes and block copies: bit-exact against a naive reference over random
// shapes, permuted tables (unused entries padded with 0 or garbage), pos NULL and a stale
// scratch bitmap; the logical rows read back through the tables equal src; rows not written
// untouched; every refusal (bad id, full table, collision across sequences or inside one,
// negative dims) leaves the pool byte for byte unchanged; the bitmap stays inside its bytes.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/common/test_util.h"
#include "kernels/layout/f32_paged.h"
#include "kernels/layout/f32_paged_contract.h"

_Static_assert(CKW_F32_TOKEN_TO_PAGED_EXACT, "f32_token_to_paged.json states an exact contract");
_Static_assert(CKW_F32_COPY_BLOCKS_EXACT, "f32_copy_blocks.json states an exact contract");

enum { GUARD_WORDS = 4 };
static const uint64_t GUARD = 0x5a5a5a5a5a5a5a5aull;

static uint64_t g_state = 0x9e3779b97f4a7c15ull;
static int64_t rnd(int64_t n) { return n > 0 ? (int64_t)(test_rng_next(&g_state) % (uint64_t)n) : 0; }

static float* alloc_floats(int64_t n) {
  float* p = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
  for (int64_t i = 0; i < n; ++i) p[i] = frand();
  return p;
}

// Scratch of exactly ckw_f32_token_to_paged_scratch_bytes, full of set bits (a stale bitmap from
// an earlier call), followed by guard words.
typedef struct {
  uint64_t* words;
  int64_t n;
} Scratch;

static Scratch scratch_for(int64_t NB, int64_t R) {
  const int64_t bytes = ckw_f32_token_to_paged_scratch_bytes(NB, R);
  Scratch s = {malloc((size_t)bytes + GUARD_WORDS * sizeof(uint64_t)), bytes / 8};
  EXPECT(bytes % 8 == 0 && bytes >= (NB * R + 7) / 8, "scratch bytes %lld for NB %lld R %lld", (long long)bytes,
         (long long)NB, (long long)R);
  memset(s.words, 0xff, (size_t)bytes);
  for (int i = 0; i < GUARD_WORDS; ++i) s.words[s.n + i] = GUARD;
  return s;
}

static void scratch_check(Scratch* s, const char* what) {
  for (int i = 0; i < GUARD_WORDS; ++i) EXPECT(s->words[s->n + i] == GUARD, "%s: bitmap wrote past its bytes", what);
  free(s->words);
}

// The definition, element by element.
static void ref_token_to_paged(float* pool, const float* src, const int32_t* pos, const int32_t* table, int64_t B,
                               int64_t T, int64_t H, int64_t Dh, int64_t R, int64_t MB) {
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      const int64_t j = (pos ? pos[b] : 0) + t, blk = table[b * MB + j / R];
      for (int64_t h = 0; h < H; ++h)
        for (int64_t d = 0; d < Dh; ++d)
          pool[((blk * H + h) * R + j % R) * Dh + d] = src[(b * T + t) * H * Dh + h * Dh + d];
    }
}

// Reads sequence b's logical rows back through its table and compares them with src.
static int rows_read_back(const float* pool, const float* src, const int32_t* pos, const int32_t* table, int64_t B,
                          int64_t T, int64_t H, int64_t Dh, int64_t R, int64_t MB) {
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      const int64_t j = (pos ? pos[b] : 0) + t, blk = table[b * MB + j / R];
      for (int64_t h = 0; h < H; ++h)
        if (memcmp(pool + ((blk * H + h) * R + j % R) * Dh, src + (b * T + t) * H * Dh + h * Dh, sizeof(float) * Dh))
          return 0;
    }
  return 1;
}

// One call that must succeed, against the reference on the same starting pool.
static void check_write(const char* what, int64_t B, int64_t T, int64_t H, int64_t Dh, int64_t NB, int64_t R,
                        int64_t MB, const int32_t* pos, const int32_t* table) {
  const int64_t P = NB * H * R * Dh;
  float* pool = alloc_floats(P);
  float* want = malloc(sizeof(float) * (size_t)(P > 0 ? P : 1));
  memcpy(want, pool, sizeof(float) * (size_t)P);
  float* src = alloc_floats(B * T * H * Dh);
  Scratch s = scratch_for(NB, R);
  const int rc = ckw_f32_token_to_paged(pool, src, pos, table, s.words, B, T, H, Dh, NB, R, MB);
  EXPECT(rc == CKW_PAGED_OK, "%s: returned %d (%s)", what, rc, ckw_f32_paged_strerror(rc));
  ref_token_to_paged(want, src, pos, table, B, T, H, Dh, R, MB);
  EXPECT(memcmp(pool, want, sizeof(float) * (size_t)P) == 0, "%s: pool differs from the reference", what);
  EXPECT(rows_read_back(pool, src, pos, table, B, T, H, Dh, R, MB), "%s: rows read back differ from src", what);
  scratch_check(&s, what);
  free(pool), free(want), free(src);
}

// One call that must be refused with `code`, the pool unchanged byte for byte.
static void check_refused(const char* what, int code, int64_t B, int64_t T, int64_t H, int64_t Dh, int64_t NB,
                          int64_t R, int64_t MB, const int32_t* pos, const int32_t* table) {
  const int64_t P = NB * H * R * Dh;
  float* pool = alloc_floats(P);
  float* before = malloc(sizeof(float) * (size_t)(P > 0 ? P : 1));
  memcpy(before, pool, sizeof(float) * (size_t)(P > 0 ? P : 0));
  float* src = alloc_floats(B * T * H * Dh);
  Scratch s = scratch_for(NB, R);
  const int rc = ckw_f32_token_to_paged(pool, src, pos, table, s.words, B, T, H, Dh, NB, R, MB);
  EXPECT(rc == code, "%s: returned %d, want %d", what, rc, code);
  EXPECT(P <= 0 || memcmp(pool, before, sizeof(float) * (size_t)P) == 0, "%s: pool changed on refusal", what);
  scratch_check(&s, what);
  free(pool), free(before), free(src);
}

// A random geometry: distinct blocks for every used entry (a permutation of the pool), unused
// entries 0 or a random id (they may repeat used ones: only used entries count).
static void random_trial(int trial) {
  const int64_t H = 1 + rnd(3), Dh = 1 + rnd(5), R = 1 + rnd(5), MB = 1 + rnd(6), B = 1 + rnd(6);
  const int64_t NB = B * MB + rnd(4), T = rnd(MB * R + 1);
  int32_t* pos = malloc(sizeof(int32_t) * (size_t)B);
  int32_t* table = malloc(sizeof(int32_t) * (size_t)(B * MB));
  int32_t* perm = malloc(sizeof(int32_t) * (size_t)NB);
  for (int64_t i = 0; i < NB; ++i) perm[i] = (int32_t)i;
  for (int64_t i = NB - 1; i > 0; --i) {
    const int64_t j = rnd(i + 1);
    const int32_t x = perm[i];
    perm[i] = perm[j], perm[j] = x;
  }
  const int null_pos = trial % 5 == 0;
  for (int64_t b = 0; b < B; ++b) {
    pos[b] = null_pos ? 0 : (int32_t)rnd(MB * R - T + 1);
    const int64_t first = pos[b] / R, last = T ? (pos[b] + T - 1) / R : -1;
    for (int64_t k = 0; k < MB; ++k) {
      const int used = k >= first && k <= last;
      table[b * MB + k] = used ? perm[b * MB + k] : (trial % 2 ? 0 : (int32_t)rnd(NB));
    }
  }
  char what[96];
  snprintf(what, sizeof what, "trial %d (B %lld T %lld H %lld Dh %lld NB %lld R %lld MB %lld%s)", trial, (long long)B,
           (long long)T, (long long)H, (long long)Dh, (long long)NB, (long long)R, (long long)MB,
           null_pos ? ", pos NULL" : "");
  check_write(what, B, T, H, Dh, NB, R, MB, null_pos ? NULL : pos, table);
  free(pos), free(table), free(perm);
}

static void token_to_paged_tests(void) {
  for (int trial = 0; trial < 400; ++trial) random_trial(trial);

  // A hand-made case: 3 sequences, 3 rows per block, pos 1/0/4, T = 4 (runs cross blocks).
  {
    const int32_t pos[3] = {1, 0, 4};
    const int32_t table[3 * 3] = {7, 2, 0, 5, 1, 0, 0, 3, 8};  // seq 2 uses entries 1, 2 (rows 4..7)
    check_write("hand-made", 3, 4, 2, 3, 9, 3, 3, pos, table);
    const int32_t zeros[3] = {0, 0, 0};
    const int32_t table0[3 * 3] = {7, 2, 0, 5, 1, 0, 3, 8, 0};
    // pos NULL is pos all 0: same pools.
    float *a = alloc_floats(9 * 2 * 3 * 3), *b = malloc(sizeof(float) * 9 * 2 * 3 * 3),
          *src = alloc_floats(3 * 4 * 2 * 3);
    memcpy(b, a, sizeof(float) * 9 * 2 * 3 * 3);
    Scratch s = scratch_for(9, 3);
    EXPECT(ckw_f32_token_to_paged(a, src, NULL, table0, s.words, 3, 4, 2, 3, 9, 3, 3) == 0, "pos NULL");
    EXPECT(ckw_f32_token_to_paged(b, src, zeros, table0, s.words, 3, 4, 2, 3, 9, 3, 3) == 0, "pos zeros");
    EXPECT(memcmp(a, b, sizeof(float) * 9 * 2 * 3 * 3) == 0, "pos NULL differs from pos all 0");
    scratch_check(&s, "pos NULL");
    free(a), free(b), free(src);
  }
  // The decode step (64 sequences, one row each, 28-entry tables over a 2048-block pool; a
  // smaller H * Dh keeps the test quick) and a cross-K/V entry (one 1500-row block per entry).
  {
    enum { B = 64, MB = 28, R = 16, NB = 2048 };
    static int32_t pos[B], table[B * MB];
    for (int b = 0; b < B; ++b) {
      pos[b] = (int32_t)rnd(MB * R);
      for (int k = 0; k < MB; ++k) table[b * MB + k] = (int32_t)((b * MB + k) * 7 % NB);  // 7 is prime to 2048
    }
    check_write("decode step", B, 1, 2, 3, NB, R, MB, pos, table);
    const int32_t entry[1] = {11};
    check_write("cross-K/V entry", 1, 1500, 2, 3, 16, 1500, 1, NULL, entry);
    const int32_t entries[3] = {4, 0, 15};
    check_write("three cross-K/V entries", 3, 1500, 1, 2, 16, 1500, 1, NULL, entries);
  }
  // B = 0 and T = 0: nothing written.
  {
    const int32_t pos[2] = {3, 0}, table[4] = {0, 1, 2, 3};
    check_write("B = 0", 0, 2, 2, 2, 4, 2, 2, NULL, NULL);
    check_write("T = 0", 2, 0, 2, 2, 4, 2, 2, pos, table);
  }

  // Refusals: the pool byte for byte unchanged.
  {
    const int32_t pos[2] = {1, 2};
    // -3: two sequences share block 4 and both write its row 2 (seq 0 rows 1..2 -> block 4 rows
    // 1, 2; seq 1 rows 2..3 -> block 4 row 2 and block 6 row 0).
    const int32_t shared[2 * 2] = {4, 5, 4, 6};
    check_refused("shared block, same row", CKW_PAGED_ERR_COLLISION, 2, 2, 2, 3, 8, 3, 2, pos, shared);
    // Sharing a block is no collision while the rows differ: T = 1, seq 0 writes row 0 of
    // block 4, seq 1 its row 2.
    const int32_t pos_apart[2] = {0, 2};
    check_write("shared block, distinct rows", 2, 1, 2, 3, 8, 3, 2, pos_apart, shared);
    // -3: a repeated entry inside one sequence (rows 0..3 over blocks 3, 3: rows 0 and 1 of
    // block 3 written twice).
    const int32_t repeated[1 * 2] = {3, 3};
    check_refused("repeated entry", CKW_PAGED_ERR_COLLISION, 1, 4, 1, 2, 8, 2, 2, NULL, repeated);
    // ... while a repeated unused entry is not read.
    const int32_t repeated_unused[1 * 3] = {3, 5, 3};
    check_write("repeated unused entry", 1, 4, 1, 2, 8, 2, 3, NULL, repeated_unused);
    // -3 across the last word boundary of a big bitmap.
    const int32_t last[2] = {15, 15};
    check_refused("collision in the last block", CKW_PAGED_ERR_COLLISION, 2, 1500, 1, 1, 16, 1500, 1, NULL, last);

    // -1: a used entry outside [0, NB); unused ones may be anything.
    const int32_t bad_hi[2 * 2] = {0, 1, 2, 8}, bad_lo[2 * 2] = {-1, 1, 2, 3}, bad_unused[2 * 2] = {0, -7, 2, 3};
    const int32_t pos_both[2] = {0, 2};  // seq 1 uses entries 0, 1 with T = 2, R = 2 -> rows 2, 3 -> entry 1
    check_refused("id = NB", CKW_PAGED_ERR_ID, 2, 2, 1, 2, 8, 2, 2, pos_both, bad_hi);
    check_refused("id < 0", CKW_PAGED_ERR_ID, 2, 2, 1, 2, 8, 2, 2, pos_both, bad_lo);
    check_write("bad unused id", 2, 2, 1, 2, 8, 2, 2, NULL, bad_unused);
    check_refused("NB = 0", CKW_PAGED_ERR_ID, 1, 1, 1, 1, 0, 1, 1, NULL, bad_unused);

    // -2: pos < 0, pos + T > MB * R (exactly full is fine).
    const int32_t neg[2] = {0, -1}, full[2] = {0, 3}, exact[2] = {0, 2}, table[2 * 2] = {0, 1, 2, 3};
    check_refused("pos < 0", CKW_PAGED_ERR_POS, 2, 2, 1, 2, 8, 2, 2, neg, table);
    check_refused("pos + T > MB * R", CKW_PAGED_ERR_POS, 2, 2, 1, 2, 8, 2, 2, full, table);
    check_write("pos + T == MB * R", 2, 2, 1, 2, 8, 2, 2, exact, table);
    check_refused("T > MB * R, pos NULL", CKW_PAGED_ERR_POS, 1, 5, 1, 2, 8, 2, 2, NULL, table);
    check_refused("R = 0", CKW_PAGED_ERR_POS, 1, 1, 1, 2, 8, 0, 2, NULL, table);
    // The order of the checks: a full table before a bad id before a collision.
    const int32_t bad_and_shared[2 * 2] = {9, 1, 9, 1};
    check_refused("pos before id", CKW_PAGED_ERR_POS, 2, 2, 1, 2, 8, 2, 2, full, bad_and_shared);
    check_refused("id before collision", CKW_PAGED_ERR_ID, 2, 2, 1, 2, 8, 2, 2, NULL, bad_and_shared);

    // -4: negative dims.
    const int64_t dims[7] = {1, 1, 1, 1, 8, 2, 2};
    for (int i = 0; i < 7; ++i) {
      int64_t d[7];
      memcpy(d, dims, sizeof d);
      d[i] = -1;
      float pool[8 * 2 * 2] = {0}, src[4] = {0};
      uint64_t bits[1] = {0};
      EXPECT(ckw_f32_token_to_paged(pool, src, NULL, table, bits, d[0], d[1], d[2], d[3], d[4], d[5], d[6]) ==
                 CKW_PAGED_ERR_SHAPE,
             "negative dim %d", i);
    }
  }
  EXPECT(ckw_f32_token_to_paged_scratch_bytes(2048, 16) == 4096, "scratch 2048 x 16");
  EXPECT(ckw_f32_token_to_paged_scratch_bytes(16, 1500) == 3000, "scratch 16 x 1500");
  EXPECT(ckw_f32_token_to_paged_scratch_bytes(0, 16) == 0 && ckw_f32_token_to_paged_scratch_bytes(3, 0) == 0, "empty");
  EXPECT(ckw_f32_token_to_paged_scratch_bytes(1, 1) == 8, "one row");
}

static void copy_blocks_tests(void) {
  enum { NB = 9, X = 10 };
  float orig[NB * X], pool[NB * X], want[NB * X], dst[NB * X];
  for (int i = 0; i < NB * X; ++i) orig[i] = frand();
  // In place against the definition; out of place from the same source (other blocks of dst
  // keep their values); a block copied to two places.
  const int32_t src_ids[4] = {2, 0, 2, 5}, dst_ids[4] = {7, 3, 1, 8};
  memcpy(pool, orig, sizeof pool);
  memcpy(want, orig, sizeof want);
  for (int i = 0; i < 4; ++i) memcpy(want + dst_ids[i] * X, orig + src_ids[i] * X, sizeof(float) * X);
  EXPECT(ckw_f32_copy_blocks(pool, pool, src_ids, dst_ids, 4, NB, X) == CKW_PAGED_OK, "in place");
  EXPECT(memcmp(pool, want, sizeof pool) == 0, "in place result");
  for (int i = 0; i < NB * X; ++i) dst[i] = -2.0f;
  for (int i = 0; i < NB * X; ++i) want[i] = -2.0f;
  for (int i = 0; i < 4; ++i) memcpy(want + dst_ids[i] * X, orig + src_ids[i] * X, sizeof(float) * X);
  EXPECT(ckw_f32_copy_blocks(dst, orig, src_ids, dst_ids, 4, NB, X) == CKW_PAGED_OK, "out of place");
  EXPECT(memcmp(dst, want, sizeof dst) == 0, "out of place result");
  // Every pair (src, dst) of distinct ids, in place, one copy.
  for (int32_t s = 0; s < NB; ++s)
    for (int32_t d = 0; d < NB; ++d) {
      if (s == d) continue;
      memcpy(pool, orig, sizeof pool);
      EXPECT(ckw_f32_copy_blocks(pool, pool, &s, &d, 1, NB, X) == CKW_PAGED_OK, "copy %d -> %d", s, d);
      for (int b = 0; b < NB; ++b)
        EXPECT(memcmp(pool + b * X, orig + (b == d ? s : b) * X, sizeof(float) * X) == 0, "copy %d -> %d: block %d", s,
               d, b);
    }
  // n = 0 (ids may be NULL), X = 0, NB = 0 with n = 0: no-ops.
  memcpy(pool, orig, sizeof pool);
  EXPECT(ckw_f32_copy_blocks(pool, pool, NULL, NULL, 0, NB, X) == CKW_PAGED_OK, "n = 0");
  EXPECT(ckw_f32_copy_blocks(pool, pool, src_ids, dst_ids, 4, NB, 0) == CKW_PAGED_OK, "X = 0");
  EXPECT(ckw_f32_copy_blocks(pool, pool, NULL, NULL, 0, 0, X) == CKW_PAGED_OK, "NB = 0, n = 0");
  EXPECT(memcmp(pool, orig, sizeof pool) == 0, "no-ops changed the pool");

  // Refusals, in place and out of place: nothing copied.
  struct {
    const char* what;
    int code, n;
    int32_t src[3], dst[3];
  } bad[] = {
      {"src id = NB", CKW_PAGED_ERR_ID, 3, {0, NB, 1}, {4, 5, 6}},
      {"src id < 0", CKW_PAGED_ERR_ID, 3, {0, 1, -1}, {4, 5, 6}},
      {"dst id = NB", CKW_PAGED_ERR_ID, 3, {0, 1, 2}, {4, NB, 6}},
      {"dst id < 0", CKW_PAGED_ERR_ID, 3, {0, 1, 2}, {-3, 5, 6}},
      {"repeated dst", CKW_PAGED_ERR_DST, 3, {0, 1, 2}, {4, 5, 4}},
      {"dst is a later source", CKW_PAGED_ERR_DST, 3, {0, 1, 4}, {4, 5, 6}},
      {"dst is an earlier source", CKW_PAGED_ERR_DST, 3, {6, 1, 2}, {4, 5, 6}},
      {"dst is its own source", CKW_PAGED_ERR_DST, 3, {0, 5, 2}, {4, 5, 6}},
      {"id before dst", CKW_PAGED_ERR_ID, 3, {0, 1, 2}, {4, 4, NB}},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    memcpy(pool, orig, sizeof pool);
    EXPECT(ckw_f32_copy_blocks(pool, pool, bad[i].src, bad[i].dst, bad[i].n, NB, X) == bad[i].code, "%s (in place)",
           bad[i].what);
    EXPECT(memcmp(pool, orig, sizeof pool) == 0, "%s: pool changed (in place)", bad[i].what);
    for (int j = 0; j < NB * X; ++j) dst[j] = -2.0f;
    EXPECT(ckw_f32_copy_blocks(dst, orig, bad[i].src, bad[i].dst, bad[i].n, NB, X) == bad[i].code, "%s (out of place)",
           bad[i].what);
    for (int j = 0; j < NB * X; ++j) EXPECT(dst[j] == -2.0f, "%s: dst changed (out of place)", bad[i].what);
  }
  EXPECT(ckw_f32_copy_blocks(pool, pool, src_ids, dst_ids, -1, NB, X) == CKW_PAGED_ERR_SHAPE, "n < 0");
  EXPECT(ckw_f32_copy_blocks(pool, pool, src_ids, dst_ids, 4, -1, X) == CKW_PAGED_ERR_SHAPE, "NB < 0");
  EXPECT(ckw_f32_copy_blocks(pool, pool, src_ids, dst_ids, 4, NB, -1) == CKW_PAGED_ERR_SHAPE, "X < 0");
  EXPECT(memcmp(pool, orig, sizeof pool) == 0, "pool changed on a shape refusal");
}

int main(void) {
  token_to_paged_tests();
  copy_blocks_tests();
  const int codes[] = {CKW_PAGED_ERR_ID, CKW_PAGED_ERR_POS, CKW_PAGED_ERR_COLLISION, CKW_PAGED_ERR_SHAPE};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < i; ++j)
      EXPECT(strcmp(ckw_f32_paged_strerror(codes[i]), ckw_f32_paged_strerror(codes[j])) != 0, "strerror %d %d", i, j);
  EXPECT(strstr(ckw_f32_paged_strerror(CKW_PAGED_ERR_COLLISION), "same pool row") != NULL, "strerror collision");
  EXPECT(strstr(ckw_f32_paged_strerror(CKW_PAGED_ERR_DST), "destination") != NULL, "strerror dst");
  EXPECT(strcmp(ckw_f32_paged_strerror(CKW_PAGED_OK), "ok") == 0, "strerror ok");
  EXPECT(strstr(ckw_f32_paged_strerror(-99), "unknown") != NULL, "strerror unknown");
  return test_finish("f32_paged_test");
}
