#include "kernels/attention/bf16_attention.h"

#include "kernels/common/cpu.h"

// The avx512bf16 path's scratch (bf16_attention__avx512bf16.c lays it out) after the f32 path's,
// which the same call may take instead: K^T in pairs [ceil(Dh / 2)][np], V in key pairs
// [np / 2][Dv], a block's scores [32][np] and numerators [32][np] (bf16), its q rows [32][Dv]
// (bf16) and 32 sums; np = Tk rounded up to 32, Dv = Dh rounded up to 32.
int64_t ckw_bf16_attention_scratch_bytes(int64_t Tq, int64_t Tk, int64_t H, int64_t Dh) {
  const int64_t np = ((Tk > 0 ? Tk : 1) + 31) / 32 * 32, dh = Dh > 0 ? Dh : 1, Dv = (dh + 31) / 32 * 32;
  return ckw_f32_attention_scratch_bytes(Tq, Tk, H, Dh) + 4 * ((dh + 1) / 2) * np + 2 * np * Dv + 6 * 32 * np +
         2 * 32 * Dv + 4 * 32;
}

// Without AVX512-BF16, the f32 kernels' paths (widening q, k and v costs what fp32 costs).
#define CKW_BF16_ATTENTION_AS_F32(isa)                                                                               \
  void ckw_bf16_attention__##isa(CKW_F32_ATTENTION_PARAMS) {                                                         \
    ckw_f32_attention__##isa(o, q, k, v, scratch, Tq, Tk, H, Dh, ld, cap, q_pos, causal, scale);                     \
  }                                                                                                                  \
  void ckw_bf16_attention_paged__##isa(CKW_F32_ATTENTION_PAGED_PARAMS) {                                             \
    ckw_f32_attention_paged__##isa(o, q, k, v, pos, table, scratch, B, Tq, Tk, H, Dh, ld, Hp, NB, R, MB, q0, causal, \
                                   scale);                                                                           \
  }
// Macro instantiations: clang-format would join and indent them as one statement.
// clang-format off
CKW_BF16_ATTENTION_AS_F32(scalar)
CKW_BF16_ATTENTION_AS_F32(avx2)
CKW_BF16_ATTENTION_AS_F32(avx512)
// clang-format on

void ckw_bf16_attention(CKW_F32_ATTENTION_PARAMS) {
  CKW_DISPATCH_ISAS(CKW_BF16_ATTENTION_DISPATCH_ISAS, ckw_bf16_attention, o, q, k, v, scratch, Tq, Tk, H, Dh, ld, cap,
                    q_pos, causal, scale);
}

void ckw_bf16_attention_paged(CKW_F32_ATTENTION_PAGED_PARAMS) {
  CKW_DISPATCH_ISAS(CKW_BF16_ATTENTION_DISPATCH_ISAS, ckw_bf16_attention_paged, o, q, k, v, pos, table, scratch, B, Tq,
                    Tk, H, Dh, ld, Hp, NB, R, MB, q0, causal, scale);
}

#define CKW_BF16_ATTENTION_BATCHED(suffix) \
  CKW_ATTENTION_BATCHED_OVER(ckw_bf16_attention_batched##suffix, ckw_bf16_attention##suffix)
// Macro instantiations: clang-format would join and indent them as one statement.
// clang-format off
CKW_BF16_ATTENTION_BATCHED()
CKW_BF16_ATTENTION_BATCHED(__scalar)
CKW_BF16_ATTENTION_BATCHED(__avx2)
CKW_BF16_ATTENTION_BATCHED(__avx512)
CKW_BF16_ATTENTION_BATCHED(__avx512bf16)
// clang-format on
