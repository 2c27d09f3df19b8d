// ckw_f16_token_to_paged: ckw_f32_token_to_paged (f32_paged.h) into a pool of f16 values,
//   pool[table[b*MB + (p+t)/R], h, (p+t)%R, :] = f16(src[b*T + t, h*Dh : (h+1)*Dh]),  p = pos[b]
//   (f16 = ckw_f32_to_f16, as ckw_f16_token_to_head_major, f16_layout.h): a cross-K/V entry of
//   the int8 and bf16 builds, whose cross-attention K/V are stored as f16. Same checks, in the
//   same order, same CKW_PAGED_* codes (a refused call writes nothing), same scratch bitmap
//   (ckw_f32_token_to_paged_scratch_bytes(NB, R) bytes); rows not written stay as they were.
#ifndef CKW_KERNELS_LAYOUT_F16_PAGED_H_
#define CKW_KERNELS_LAYOUT_F16_PAGED_H_

#include <stdint.h>

#include "kernels/layout/f32_paged.h"

#ifdef __cplusplus
extern "C" {
#endif

int ckw_f16_token_to_paged(uint16_t* restrict pool, const float* restrict src, const int32_t* restrict pos,
                           const int32_t* restrict table, void* restrict scratch, int64_t B, int64_t T, int64_t H,
                           int64_t Dh, int64_t NB, int64_t R, int64_t MB);
// Same codes as the f32 pool's kernels, so the same messages.
const char* ckw_f16_paged_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_LAYOUT_F16_PAGED_H_
