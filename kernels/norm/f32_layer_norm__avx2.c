#include "kernels/common/simd_avx2.h"
#include "kernels/norm/f32_layer_norm__simd.inc"
