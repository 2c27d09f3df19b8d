// ckw_bf16_attention (op kind "attention", selected in bf16 builds: its map states "precisions":
// ["bf16"]): ckw_f32_attention's arguments, layouts and results (f32_attention.h), with the two
// products on bf16 inputs where the CPU has AVX512-BF16 (vdpbf16ps, twice the fp32 FMA's rate):
//
// avx512bf16, Tq >= CKW_F32_ATTENTION_BLOCK_MIN_TQ: q, k and v rounded to bf16 (nearest even,
// denormals to 0, as VCVTNE2PS2BF16); each score one fp32 lane chain from 0 over the pairs (d, d + 1)
// of the head in order (the odd d's product, then the even d's; denormals read as 0 and results
// flushed, as the instruction does), times scale; the softmax in fp32 as the f32 kernel's (row max
// subtracted, its exp), the numerators rounded to bf16 and their unrounded fp32 sum kept; each
// output one fp32 lane chain from 0 over the key pairs (j, j + 1) in order, times 1/sum. Every
// query's bits depend on its own row and the keys it sees alone, so any split of the rows or the
// heads gives the whole call's bits. Fewer rows (decode steps, short prompts): the f32 kernel's
// avx512 path.
// scalar, avx2, avx512 (CPUs without AVX512-BF16): ckw_f32_attention__<isa>, bit for bit.
//
// Scratch: ckw_bf16_attention_scratch_bytes bytes (the head's K and V packed in bf16, a block's
// scores and numerators), 64-byte alignment recommended.
#ifndef CKW_KERNELS_ATTENTION_BF16_ATTENTION_H_
#define CKW_KERNELS_ATTENTION_BF16_ATTENTION_H_

#include <stdint.h>

#include "kernels/attention/f32_attention.h"

#ifdef __cplusplus
extern "C" {
#endif

// The paths, oldest first, as an X-macro for CKW_DISPATCH_ISAS (cpu.h).
#define CKW_BF16_ATTENTION_DISPATCH_ISAS(X, name) X(scalar, name) X(avx2, name) X(avx512, name) X(avx512bf16, name)

int64_t ckw_bf16_attention_scratch_bytes(int64_t Tq, int64_t Tk, int64_t H, int64_t Dh);

void ckw_bf16_attention(CKW_F32_ATTENTION_PARAMS);
void ckw_bf16_attention__scalar(CKW_F32_ATTENTION_PARAMS);
void ckw_bf16_attention__avx2(CKW_F32_ATTENTION_PARAMS);
void ckw_bf16_attention__avx512(CKW_F32_ATTENTION_PARAMS);
void ckw_bf16_attention__avx512bf16(CKW_F32_ATTENTION_PARAMS);
// ckw_bf16_attention_batched (op kind "attention_batched", B sequences with their own caches: the
// beams) and ckw_bf16_attention_paged (op kind "attention_paged", caches in a block pool): each
// sequence exactly as ckw_bf16_attention over its own rows, bit for bit, as their f32 namesakes
// are to ckw_f32_attention; so the paged decoder and the beam decoder of a bf16 build agree.
void ckw_bf16_attention_batched(CKW_F32_ATTENTION_BATCHED_PARAMS);
void ckw_bf16_attention_batched__scalar(CKW_F32_ATTENTION_BATCHED_PARAMS);
void ckw_bf16_attention_batched__avx2(CKW_F32_ATTENTION_BATCHED_PARAMS);
void ckw_bf16_attention_batched__avx512(CKW_F32_ATTENTION_BATCHED_PARAMS);
void ckw_bf16_attention_batched__avx512bf16(CKW_F32_ATTENTION_BATCHED_PARAMS);
void ckw_bf16_attention_paged(CKW_F32_ATTENTION_PAGED_PARAMS);
void ckw_bf16_attention_paged__scalar(CKW_F32_ATTENTION_PAGED_PARAMS);
void ckw_bf16_attention_paged__avx2(CKW_F32_ATTENTION_PAGED_PARAMS);
void ckw_bf16_attention_paged__avx512(CKW_F32_ATTENTION_PAGED_PARAMS);
void ckw_bf16_attention_paged__avx512bf16(CKW_F32_ATTENTION_PAGED_PARAMS);

#if defined(CKW_EMULATE_AVX512) || defined(CKW_TEST_AVX512_EMULATION)
void ckw_bf16_attention__avx512bf16emu(CKW_F32_ATTENTION_PARAMS);
void ckw_bf16_attention_paged__avx512bf16emu(CKW_F32_ATTENTION_PAGED_PARAMS);
void ckw_f32_attention__avx512emu(CKW_F32_ATTENTION_PARAMS);
void ckw_f32_attention_paged__avx512emu(CKW_F32_ATTENTION_PAGED_PARAMS);
#endif

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_ATTENTION_BF16_ATTENTION_H_
