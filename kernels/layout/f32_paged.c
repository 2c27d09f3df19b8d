#include "kernels/layout/f32_paged.h"

#include <string.h>

int64_t ckw_f32_token_to_paged_scratch_bytes(int64_t NB, int64_t R) {
  // One bit per pool row, in 64-bit words.
  if (NB <= 0 || R <= 0) return 0;
  return (int64_t)sizeof(uint64_t) * ((NB * R + 63) / 64);
}

// Sequence b's first written row: pos[b], or 0 without positions (a cross-K/V entry).
static inline int64_t start_of(const int32_t* pos, int64_t b) { return pos ? pos[b] : 0; }

// The rows of one sequence, as runs inside one block: logical rows [j, j + n) are rows
// [r, r + n) of block entry k of its table. Returns the run's length n.
static inline int64_t run_at(int64_t j, int64_t end, int64_t R, int64_t* k, int64_t* r) {
  *k = j / R;
  *r = j - *k * R;
  return R - *r < end - j ? R - *r : end - j;
}

// Bits [a, e) of the bitmap, word by word: 0 clears the words they touch; 1 tests then sets
// them (returns 1, and stops, when one was already set).
static int bits_range(uint64_t* bits, int64_t a, int64_t e, int set) {
  while (a < e) {
    const int64_t w = a >> 6, s = a & 63;
    const int64_t cnt = 64 - s < e - a ? 64 - s : e - a;
    if (!set) {
      bits[w] = 0;
    } else {
      const uint64_t mask = (cnt == 64 ? ~(uint64_t)0 : (((uint64_t)1 << cnt) - 1)) << s;
      if (bits[w] & mask) return 1;
      bits[w] |= mask;
    }
    a += cnt;
  }
  return 0;
}

int ckw_token_to_paged_with(ckw_layout_store_fn store, void* pool, const float* src, const int32_t* pos,
                            const int32_t* table, void* scratch, int64_t B, int64_t T, int64_t H, int64_t Dh,
                            int64_t NB, int64_t R, int64_t MB) {
  if (B < 0 || T < 0 || H < 0 || Dh < 0 || NB < 0 || R < 0 || MB < 0) return CKW_PAGED_ERR_SHAPE;
  const int64_t rows = MB * R;
  for (int64_t b = 0; b < B; ++b) {
    const int64_t p = start_of(pos, b);
    if (p < 0 || p > rows - T) return CKW_PAGED_ERR_POS;
  }
  if (T == 0) return CKW_PAGED_OK;  // (R > 0 from here: T <= MB * R)
  // Only the entries the written rows use: [p / R, (p + T - 1) / R] of each table.
  for (int64_t b = 0; b < B; ++b) {
    const int64_t p = start_of(pos, b);
    for (int64_t k = p / R; k <= (p + T - 1) / R; ++k) {
      const int32_t id = table[b * MB + k];
      if (id < 0 || id >= NB) return CKW_PAGED_ERR_ID;
    }
  }
  // Collisions: clear the words of every written pool row, then test-and-set each run's bits.
  uint64_t* bits = scratch;
  for (int pass = 0; pass < 2; ++pass) {
    for (int64_t b = 0; b < B; ++b) {
      const int64_t p = start_of(pos, b);
      int64_t k, r;
      for (int64_t j = p, n; j < p + T; j += n) {
        n = run_at(j, p + T, R, &k, &r);
        const int64_t row = (int64_t)table[b * MB + k] * R + r;
        if (bits_range(bits, row, row + n, pass)) return CKW_PAGED_ERR_COLLISION;
      }
    }
  }
  const int64_t W = H * Dh;  // a token-major row
  for (int64_t b = 0; b < B; ++b) {
    const int64_t p = start_of(pos, b);
    int64_t k, r;
    for (int64_t j = p, n; j < p + T; j += n) {
      n = run_at(j, p + T, R, &k, &r);
      const int64_t id = table[b * MB + k];
      const float* s = src + (b * T + (j - p)) * W;
      for (int64_t h = 0; h < H; ++h) {
        const int64_t d = ((id * H + h) * R + r) * Dh;
        for (int64_t i = 0; i < n; ++i) store(pool, d + i * Dh, s + i * W + h * Dh, Dh);
      }
    }
  }
  return CKW_PAGED_OK;
}

int ckw_f32_token_to_paged(float* restrict pool, const float* restrict src, const int32_t* restrict pos,
                           const int32_t* restrict table, void* restrict scratch, int64_t B, int64_t T, int64_t H,
                           int64_t Dh, int64_t NB, int64_t R, int64_t MB) {
  return ckw_token_to_paged_with(ckw_layout_store_f32, pool, src, pos, table, scratch, B, T, H, Dh, NB, R, MB);
}

int ckw_f32_copy_blocks(float* dst, const float* src, const int32_t* restrict src_ids, const int32_t* restrict dst_ids,
                        int64_t n, int64_t NB, int64_t X) {
  if (n < 0 || NB < 0 || X < 0) return CKW_PAGED_ERR_SHAPE;
  for (int64_t i = 0; i < n; ++i) {
    if (src_ids[i] < 0 || src_ids[i] >= NB || dst_ids[i] < 0 || dst_ids[i] >= NB) return CKW_PAGED_ERR_ID;
  }
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      if ((j < i && dst_ids[j] == dst_ids[i]) || src_ids[j] == dst_ids[i]) return CKW_PAGED_ERR_DST;
    }
  }
  // Destinations are distinct and no source, so no copy overlaps another's source or target.
  for (int64_t i = 0; i < n; ++i)
    memcpy(dst + (int64_t)dst_ids[i] * X, src + (int64_t)src_ids[i] * X, sizeof(float) * (size_t)X);
  return CKW_PAGED_OK;
}

const char* ckw_f32_paged_strerror(int code) {
  switch (code) {
    case CKW_PAGED_OK:
      return "ok";
    case CKW_PAGED_ERR_ID:
      return "paged: a block id (a used block-table entry, or a copy's source or destination) is outside [0, NB)";
    case CKW_PAGED_ERR_POS:  // == CKW_PAGED_ERR_DST
      return "paged: a position outside [0, MB * R - T] (the sequence's blocks are full), or a copy destination "
             "repeated or also a source";
    case CKW_PAGED_ERR_COLLISION:
      return "paged: two written rows land on the same pool row (a block shared without copy-on-write)";
    case CKW_PAGED_ERR_SHAPE:
      return "paged: negative dims";
    default:
      return "paged: unknown error";
  }
}
