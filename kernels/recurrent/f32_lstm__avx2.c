#include "kernels/common/simd_avx2.h"
#include "kernels/recurrent/f32_lstm__simd.inc"
