#include "kernels/common/simd_avx512.h"
#include "kernels/norm/f32_layer_norm__simd.inc"
