#include "kernels/common/simd_avx512.h"
#include "kernels/recurrent/f32_lstm__simd.inc"
