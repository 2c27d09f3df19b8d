#include "kernels/common/simd_avx2.h"
#include "kernels/activation/f32_top_log_probs__simd.inc"
