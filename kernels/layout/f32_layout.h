// Layout converters (value-exact copies). Layouts: token_major [T, H*Dh] (or [T, C]),
// head_major [H, cap, Dh] with row capacity cap, channel_major [C, T].
//
// ckw_f32_token_to_head_major:  dst[h, row0 + t, :] = src[t, h*Dh : (h+1)*Dh]   (t < T)
//   Writes rows row0..row0+T-1 of each head in place, so a decode step appends row `pos`
//   to a KV cache with row0 = pos, T = 1. Other rows are untouched.
// ckw_f32_head_to_token_major:  dst[t, h*Dh + d] = src[h, row0 + t, d]
// Both return 0, or CKW_LAYOUT_ERR_ROWS when row0 < 0 or row0 + T > cap (nothing written).
// ckw_f32_token_to_batch_head_major: B sequences of T rows, src [B * T, H*Dh], appended at
//   row0 to a batch of head-major caches dst [Bk, H, cap, Dh] (B <= Bk): for each b, as
//   ckw_f32_token_to_head_major(dst[b], src rows of b). A beam-search decode step appends one
//   row per beam; batches b >= B and other rows are untouched. CKW_LAYOUT_ERR_SHAPE when B > Bk.
// ckw_f32_channel_to_token_major: dst[t, c] = src[c, t]  (the conv stem's transpose)
// ckw_f32_token_to_channel_major: dst[c, t] = src[t, c]
#ifndef CKW_KERNELS_LAYOUT_F32_LAYOUT_H_
#define CKW_KERNELS_LAYOUT_F32_LAYOUT_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CKW_LAYOUT_OK 0
#define CKW_LAYOUT_ERR_ROWS (-1)
#define CKW_LAYOUT_ERR_SHAPE (-2)

int ckw_f32_token_to_head_major(float* restrict dst, const float* restrict src, int64_t T, int64_t H, int64_t Dh,
                                int64_t cap, int64_t row0);
int ckw_f32_head_to_token_major(float* restrict dst, const float* restrict src, int64_t T, int64_t H, int64_t Dh,
                                int64_t cap, int64_t row0);
int ckw_f32_token_to_batch_head_major(float* restrict dst, const float* restrict src, int64_t B, int64_t Bk, int64_t T,
                                      int64_t H, int64_t Dh, int64_t cap, int64_t row0);
void ckw_f32_channel_to_token_major(float* restrict dst, const float* restrict src, int64_t C, int64_t T);
void ckw_f32_token_to_channel_major(float* restrict dst, const float* restrict src, int64_t T, int64_t C);
const char* ckw_f32_layout_strerror(int code);

// The cache writes of every cache dtype (f32 here, f16 in f16_layout.h, f16_paged.h) are one
// body over a row store: store(dst, at, src, n) writes n f32 values to elements at..at+n-1 of
// dst in the cache's dtype (ckw_layout_store_f32: a copy; ckw_layout_store_f16: rounded).
typedef void (*ckw_layout_store_fn)(void* dst, int64_t at, const float* src, int64_t n);
void ckw_layout_store_f32(void* dst, int64_t at, const float* src, int64_t n);
// ckw_f32_token_to_head_major (same checks and codes) with each row written by store.
int ckw_token_to_head_major_with(ckw_layout_store_fn store, void* dst, const float* src, int64_t T, int64_t H,
                                 int64_t Dh, int64_t cap, int64_t row0);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_LAYOUT_F32_LAYOUT_H_
