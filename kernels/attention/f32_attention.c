#include "kernels/attention/f32_attention.h"

#include "kernels/attention/f32_attention__scalar.inc"  // the __scalar paths and the dispatching entries

int64_t ckw_f32_attention_scratch_bytes(int64_t Tq, int64_t Tk, int64_t H, int64_t Dh) {
  (void)Tq, (void)H;
  // Blocked path: transposed scores [Tk rounded to 16][32 queries] + q^T [Dh][32] + 32 sums
  // (32 = the AVX-512 block; AVX2 uses 16). The row path needs less: up to 8 rows of scores
  // (Tk rounded to 16) and of q (Dh rounded to the vector).
  const int64_t rows = ((Tk > 0 ? Tk : 1) + 15) / 16 * 16;
  return (32 * rows + 32 * (Dh > 0 ? Dh : 1) + 32) * (int64_t)sizeof(float);
}

int ckw_f32_attention_paged_check(const int32_t* pos, const int32_t* table, int64_t B, int64_t Tq, int64_t Tk,
                                  int64_t NB, int64_t R, int64_t MB, int64_t q0, int causal) {
  if (B < 0 || Tq < 0 || Tk < 0 || NB < 0 || R < 1 || MB < 0 || q0 < 0) return CKW_ATTENTION_ERR_SHAPE;
  for (int64_t b = 0; b < B; ++b) {
    if (pos[b] < 0) return CKW_ATTENTION_ERR_POSITION;
    const int64_t last = pos[b] + q0 + Tq, n = causal && last < Tk ? last : Tk;  // rows the sequence reads
    if (n > MB * R || (causal && last > MB * R)) return CKW_ATTENTION_ERR_POSITION;
    for (int64_t s = 0; s < (n + R - 1) / R; ++s)
      if (table[b * MB + s] < 0 || table[b * MB + s] >= NB) return CKW_ATTENTION_ERR_BLOCK;
  }
  return 0;
}

const char* ckw_f32_attention_paged_strerror(int code) {
  switch (code) {
    case 0:
      return "ok";
    case CKW_ATTENTION_ERR_BLOCK:
      return "a block id the call reads is outside [0, NB)";
    case CKW_ATTENTION_ERR_POSITION:
      return "a position is negative or the rows read pass the table's MB * R rows";
    case CKW_ATTENTION_ERR_SHAPE:
      return "negative dims or R < 1";
    default:
      return "unknown paged attention error";
  }
}

#define CKW_ATTENTION_BATCHED(suffix) \
  CKW_ATTENTION_BATCHED_OVER(ckw_f32_attention_batched##suffix, ckw_f32_attention##suffix)
// Macro instantiations: clang-format would join and indent them as one statement.
// clang-format off
CKW_ATTENTION_BATCHED()
CKW_ATTENTION_BATCHED(__scalar)
CKW_ATTENTION_BATCHED(__avx2)
CKW_ATTENTION_BATCHED(__avx512)
// clang-format on
