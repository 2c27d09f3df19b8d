#include "kernels/layout/f16_paged.h"

#include "kernels/layout/f16_layout.h"  // ckw_layout_store_f16

int ckw_f16_token_to_paged(uint16_t* restrict pool, const float* restrict src, const int32_t* restrict pos,
                           const int32_t* restrict table, void* restrict scratch, int64_t B, int64_t T, int64_t H,
                           int64_t Dh, int64_t NB, int64_t R, int64_t MB) {
  return ckw_token_to_paged_with(ckw_layout_store_f16, pool, src, pos, table, scratch, B, T, H, Dh, NB, R, MB);
}

const char* ckw_f16_paged_strerror(int code) { return ckw_f32_paged_strerror(code); }
