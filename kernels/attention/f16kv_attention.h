// ckw_f16kv_attention, _scores, _paged, _scores_paged (op kinds "attention", "attention_scores",
// "attention_paged", "attention_scores_paged"): the ckw_f32_attention kernels (f32_attention.h:
// arguments, layouts, results) with the K and V rows stored as IEEE binary16 bits (uint16_t,
// kernels/common/f16.h): the decoder's cross-attention cache in the int8 and bf16 builds, half
// the bytes every decode step re-reads. q, o, s, scratch and all arithmetic stay fp32. Each path
// is the f32 kernel's code with every K/V element widened exactly where that path loads it
// (f32_attention_kv.inc), so ckw_f16kv_attention*__<isa> gives, bit for bit, what
// ckw_f32_attention*__<isa> gives on the widened rows, and a paged call each sequence the bits
// of the contiguous call on its gathered rows. Scratch: ckw_f32_attention_scratch_bytes; paged
// calls need what ckw_f32_attention_paged_check checks.
#ifndef CKW_KERNELS_ATTENTION_F16KV_ATTENTION_H_
#define CKW_KERNELS_ATTENTION_F16KV_ATTENTION_H_

#include <stdint.h>

#include "kernels/attention/f32_attention.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CKW_F16KV_ATTENTION_PARAMS CKW_ATTENTION_PARAMS_KV(uint16_t)
#define CKW_F16KV_ATTENTION_SCORES_PARAMS CKW_ATTENTION_SCORES_PARAMS_KV(uint16_t)
#define CKW_F16KV_ATTENTION_PAGED_PARAMS CKW_ATTENTION_PAGED_PARAMS_KV(uint16_t)
#define CKW_F16KV_ATTENTION_SCORES_PAGED_PARAMS CKW_ATTENTION_SCORES_PAGED_PARAMS_KV(uint16_t)

void ckw_f16kv_attention(CKW_F16KV_ATTENTION_PARAMS);
void ckw_f16kv_attention__scalar(CKW_F16KV_ATTENTION_PARAMS);
void ckw_f16kv_attention__avx2(CKW_F16KV_ATTENTION_PARAMS);
void ckw_f16kv_attention__avx512(CKW_F16KV_ATTENTION_PARAMS);

void ckw_f16kv_attention_scores(CKW_F16KV_ATTENTION_SCORES_PARAMS);
void ckw_f16kv_attention_scores__scalar(CKW_F16KV_ATTENTION_SCORES_PARAMS);
void ckw_f16kv_attention_scores__avx2(CKW_F16KV_ATTENTION_SCORES_PARAMS);
void ckw_f16kv_attention_scores__avx512(CKW_F16KV_ATTENTION_SCORES_PARAMS);

void ckw_f16kv_attention_paged(CKW_F16KV_ATTENTION_PAGED_PARAMS);
void ckw_f16kv_attention_paged__scalar(CKW_F16KV_ATTENTION_PAGED_PARAMS);
void ckw_f16kv_attention_paged__avx2(CKW_F16KV_ATTENTION_PAGED_PARAMS);
void ckw_f16kv_attention_paged__avx512(CKW_F16KV_ATTENTION_PAGED_PARAMS);

void ckw_f16kv_attention_scores_paged(CKW_F16KV_ATTENTION_SCORES_PAGED_PARAMS);
void ckw_f16kv_attention_scores_paged__scalar(CKW_F16KV_ATTENTION_SCORES_PAGED_PARAMS);
void ckw_f16kv_attention_scores_paged__avx2(CKW_F16KV_ATTENTION_SCORES_PAGED_PARAMS);
void ckw_f16kv_attention_scores_paged__avx512(CKW_F16KV_ATTENTION_SCORES_PAGED_PARAMS);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_ATTENTION_F16KV_ATTENTION_H_
