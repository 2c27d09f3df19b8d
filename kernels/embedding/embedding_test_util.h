// Shared by the f32, f16 and bf16 embedding tests: every error code of the embedding kernels,
// with y untouched on error, and the _rows kernels against the scalar-offset ones.
#ifndef CKW_KERNELS_EMBEDDING_EMBEDDING_TEST_UTIL_H_
#define CKW_KERNELS_EMBEDDING_EMBEDDING_TEST_UTIL_H_

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels/embedding/f32_embedding_positions.h"

// Fills y[0, n) with -99, runs `call` (a kernel call that must fail with `want`) and evaluates to
// 1, saying why on stderr, when it returns another code, writes into y or has no message; else 0.
// `what` and `i` name the case.
#define EMBEDDING_EXPECT_ERROR_(call, want, strerror_fn, y, n, what, i)                                                \
  __extension__({                                                                                                      \
    for (int64_t ej_ = 0; ej_ < (n); ++ej_) (y)[ej_] = -99.0f;                                                         \
    const int erc_ = (call);                                                                                           \
    int etouched_ = 0;                                                                                                 \
    for (int64_t ej_ = 0; ej_ < (n); ++ej_) etouched_ |= (y)[ej_] != -99.0f;                                           \
    const int efailed_ = erc_ != (want) || etouched_ || strlen(strerror_fn(erc_)) < 5;                                 \
    if (efailed_)                                                                                                      \
      fprintf(stderr, "%s case %zu: rc=%d want %lld (%s), touched=%d\n", (what), (size_t)(i), erc_, (long long)(want), \
              strerror_fn(erc_), etouched_);                                                                           \
    efailed_;                                                                                                          \
  })

// Runs each bad input through `embed` (the kernel: y, tokens, table, pos, B, T, D, V, NCTX,
// offset) with `table`, `pos` and a y of at least 4 * D floats; evaluates to the failures. V, D
// and NCTX are the test's constants; strerror_fn is the kernel's strerror.
#define EMBEDDING_BAD_INPUT_FAILURES(embed, strerror_fn, y, table, pos)                                          \
  __extension__({                                                                                                \
    int failures_ = 0;                                                                                           \
    const struct {                                                                                               \
      int32_t tok0;                                                                                              \
      int64_t T, offset, want;                                                                                   \
    } bad_[] = {{V, 2, 0, CKW_EMBEDDING_ERR_TOKEN},           {-1, 2, 0, CKW_EMBEDDING_ERR_TOKEN},               \
                {0, 4, 5, CKW_EMBEDDING_ERR_POSITION},        {0, 1, -1, CKW_EMBEDDING_ERR_POSITION},            \
                {0, NCTX + 1, 0, CKW_EMBEDDING_ERR_POSITION}, {0, -1, 0, CKW_EMBEDDING_ERR_SHAPE}};              \
    for (size_t i_ = 0; i_ < sizeof bad_ / sizeof bad_[0]; ++i_) {                                               \
      int32_t toks_[NCTX + 1] = {0};                                                                             \
      toks_[0] = bad_[i_].tok0;                                                                                  \
      failures_ +=                                                                                               \
          EMBEDDING_EXPECT_ERROR_(embed((y), toks_, (table), (pos), 1, bad_[i_].T, D, V, NCTX, bad_[i_].offset), \
                                  bad_[i_].want, strerror_fn, y, 4 * D, "offset", i_);                           \
    }                                                                                                            \
    failures_;                                                                                                   \
  })

// The same for `rows` (the _rows kernel: y, tokens, table, positions, pos, B, T, D, V, NCTX) with
// three sequences, one of them bad (a token, or a position among good ones), and a y of at least
// 6 * D floats; positions are checked before tokens. NCTX >= 8.
#define EMBEDDING_ROWS_BAD_INPUT_FAILURES(rows, strerror_fn, y, table, positions)                                  \
  __extension__({                                                                                                  \
    int failures_ = 0;                                                                                             \
    const struct {                                                                                                 \
      int64_t B, T;                                                                                                \
      int32_t pos[3], at, tok;                                                                                     \
      int want;                                                                                                    \
    } bad_[] = {                                                                                                   \
        {3, 2, {0, 3, NCTX - 2}, 5, V, CKW_EMBEDDING_ERR_TOKEN},                                                   \
        {3, 2, {0, 3, NCTX - 2}, 2, -1, CKW_EMBEDDING_ERR_TOKEN},                                                  \
        {3, 2, {0, -1, NCTX - 2}, 0, 0, CKW_EMBEDDING_ERR_POSITION},                                               \
        {3, 2, {0, 3, NCTX - 1}, 0, 0, CKW_EMBEDDING_ERR_POSITION},                                                \
        {3, 1, {NCTX, 0, NCTX - 1}, 0, 0, CKW_EMBEDDING_ERR_POSITION},                                             \
        {3, 2, {0, INT32_MAX, 3}, 0, 0, CKW_EMBEDDING_ERR_POSITION},                                               \
        {3, 2, {INT32_MIN, 3, 3}, 0, 0, CKW_EMBEDDING_ERR_POSITION},                                               \
        {3, NCTX + 1, {0, 0, 0}, 0, 0, CKW_EMBEDDING_ERR_POSITION},                                                \
        {3, 2, {0, NCTX, 0}, 0, V, CKW_EMBEDDING_ERR_POSITION},                                                    \
        {-1, 2, {0, 0, 0}, 0, 0, CKW_EMBEDDING_ERR_SHAPE},                                                         \
        {3, -1, {0, 0, 0}, 0, 0, CKW_EMBEDDING_ERR_SHAPE},                                                         \
    };                                                                                                             \
    for (size_t i_ = 0; i_ < sizeof bad_ / sizeof bad_[0]; ++i_) {                                                 \
      int32_t toks_[3 * (NCTX + 1)] = {0};                                                                         \
      toks_[bad_[i_].at] = bad_[i_].tok;                                                                           \
      failures_ += EMBEDDING_EXPECT_ERROR_(                                                                        \
          rows((y), toks_, (table), (positions), bad_[i_].pos, bad_[i_].B, bad_[i_].T, D, V, NCTX), bad_[i_].want, \
          strerror_fn, y, 6 * D, "rows", i_);                                                                      \
    }                                                                                                              \
    failures_;                                                                                                     \
  })

// Runs `rows` (as above) and `embed` (the scalar-offset kernel of the same table) once per
// sequence b at offset pos[b], over batches with different, repeated and last-window positions,
// T from 1 to 4 and B = 0; evaluates to the failures: a nonzero rc, rows that differ in any bit,
// or a write past the B * T rows. y and ref hold at least 6 * D floats; NCTX >= 8.
#define EMBEDDING_ROWS_MATCH_FAILURES(rows, embed, y, ref, table, positions)                                          \
  __extension__({                                                                                                     \
    int failures_ = 0;                                                                                                \
    const struct {                                                                                                    \
      int64_t B, T;                                                                                                   \
      int32_t pos[6];                                                                                                 \
    } batch_[] = {{3, 2, {NCTX - 2, 0, 3}}, {5, 1, {NCTX - 1, NCTX - 1, 0, 2, 5}}, {2, 3, {NCTX - 3, 1}},             \
                  {1, 4, {NCTX - 4}},       {6, 1, {0, 1, 2, 3, 4, NCTX - 1}},     {0, 2, {0}}};                      \
    for (size_t c_ = 0; c_ < sizeof batch_ / sizeof batch_[0]; ++c_) {                                                \
      const int64_t B_ = batch_[c_].B, T_ = batch_[c_].T, n_ = B_ * T_ * D;                                           \
      int32_t toks_[6];                                                                                               \
      for (int64_t i_ = 0; i_ < B_ * T_; ++i_) toks_[i_] = (int32_t)((i_ * 7 + (int64_t)c_) % V);                     \
      for (int j_ = 0; j_ < 6 * D; ++j_) (y)[j_] = -99.0f, (ref)[j_] = -77.0f;                                        \
      int rc_ = rows((y), toks_, (table), (positions), batch_[c_].pos, B_, T_, D, V, NCTX);                           \
      for (int64_t b_ = 0; b_ < B_; ++b_)                                                                             \
        rc_ |=                                                                                                        \
            embed((ref) + b_ * T_ * D, toks_ + b_ * T_, (table), (positions), 1, T_, D, V, NCTX, batch_[c_].pos[b_]); \
      int differs_ = memcmp((y), (ref), sizeof(float) * (size_t)n_) != 0;                                             \
      for (int64_t j_ = n_; j_ < 6 * D; ++j_) differs_ |= (y)[j_] != -99.0f;                                          \
      if (rc_ || differs_) {                                                                                          \
        fprintf(stderr, "rows batch %zu (B=%lld T=%lld): rc=%d, differs from the per-sequence calls: %d\n", c_,       \
                (long long)B_, (long long)T_, rc_, differs_);                                                         \
        ++failures_;                                                                                                  \
      }                                                                                                               \
    }                                                                                                                 \
    failures_;                                                                                                        \
  })

#endif  // CKW_KERNELS_EMBEDDING_EMBEDDING_TEST_UTIL_H_
