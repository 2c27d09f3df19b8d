// ckw_f16_token_to_head_major: ckw_f32_token_to_head_major (f32_layout.h) into an f16 cache,
//   dst[h, row0 + t, :] = f16(src[t, h*Dh : (h+1)*Dh])   (t < T), dst IEEE half bit patterns,
//   f16 = ckw_f32_to_f16 (kernels/common/f16.h): round to nearest even, past 65504 infinity,
//   subnormals rounded, NaN quiet with its payload's top 10 bits. The cross-attention K/V cache
//   of the int8 and bf16 builds (half the bytes each decode step reads). Same rows, checks and
//   CKW_LAYOUT_* codes (nothing written on error); other rows untouched.
#ifndef CKW_KERNELS_LAYOUT_F16_LAYOUT_H_
#define CKW_KERNELS_LAYOUT_F16_LAYOUT_H_

#include <stdint.h>

#include "kernels/layout/f32_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

int ckw_f16_token_to_head_major(uint16_t* restrict dst, const float* restrict src, int64_t T, int64_t H, int64_t Dh,
                                int64_t cap, int64_t row0);
// Same codes as the f32 converters, so the same messages.
const char* ckw_f16_layout_strerror(int code);
// The f16 row store (ckw_layout_store_fn): ckw_f32_to_f16 of each value; F16C where the CPU has
// AVX2 (the same bits, f16_layout_test proves it on every value class).
void ckw_layout_store_f16(void* dst, int64_t at, const float* src, int64_t n);
void ckw_layout_store_f16__scalar(void* dst, int64_t at, const float* src, int64_t n);
void ckw_layout_store_f16__avx2(void* dst, int64_t at, const float* src, int64_t n);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_LAYOUT_F16_LAYOUT_H_
