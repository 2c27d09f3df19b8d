// Shared by the f32 and bf16 embedding tests: every error code of the embedding kernels, with y
// untouched on error.
#ifndef CKW_KERNELS_EMBEDDING_EMBEDDING_TEST_UTIL_H_
#define CKW_KERNELS_EMBEDDING_EMBEDDING_TEST_UTIL_H_

#include <stdio.h>
#include <string.h>

#include "kernels/embedding/f32_embedding_positions.h"

// Runs each bad input through `embed` (the kernel: y, tokens, table, pos, B, T, D, V, NCTX,
// offset) with `table`, `pos` and a y of at least 4 * D floats; evaluates to the failures. V, D
// and NCTX are the test's constants; strerror_fn is the kernel's strerror.
#define EMBEDDING_BAD_INPUT_FAILURES(embed, strerror_fn, y, table, pos)                                    \
  __extension__({                                                                                         \
    int failures_ = 0;                                                                                    \
    const struct {                                                                                        \
      int32_t tok0;                                                                                       \
      int64_t T, offset, want;                                                                            \
    } bad_[] = {{V, 2, 0, CKW_EMBEDDING_ERR_TOKEN},          {-1, 2, 0, CKW_EMBEDDING_ERR_TOKEN},           \
                {0, 4, 5, CKW_EMBEDDING_ERR_POSITION},       {0, 1, -1, CKW_EMBEDDING_ERR_POSITION},        \
                {0, NCTX + 1, 0, CKW_EMBEDDING_ERR_POSITION}, {0, -1, 0, CKW_EMBEDDING_ERR_SHAPE}};         \
    for (size_t i_ = 0; i_ < sizeof bad_ / sizeof bad_[0]; ++i_) {                                         \
      int32_t toks_[NCTX + 1] = {0};                                                                      \
      toks_[0] = bad_[i_].tok0;                                                                           \
      for (int j_ = 0; j_ < 4 * D; ++j_) (y)[j_] = -99.0f;                                                \
      const int rc_ = embed((y), toks_, (table), (pos), 1, bad_[i_].T, D, V, NCTX, bad_[i_].offset);       \
      int touched_ = 0;                                                                                   \
      for (int j_ = 0; j_ < 4 * D; ++j_) touched_ |= (y)[j_] != -99.0f;                                   \
      if (rc_ != bad_[i_].want || touched_ || strlen(strerror_fn(rc_)) < 5) {                             \
        fprintf(stderr, "case %zu: rc=%d want %lld (%s), touched=%d\n", i_, rc_, (long long)bad_[i_].want, \
                strerror_fn(rc_), touched_);                                                              \
        ++failures_;                                                                                      \
      }                                                                                                   \
    }                                                                                                     \
    failures_;                                                                                            \
  })

#endif  // CKW_KERNELS_EMBEDDING_EMBEDDING_TEST_UTIL_H_
