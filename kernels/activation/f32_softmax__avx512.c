#include "kernels/activation/simd_avx512.h"
#include "kernels/activation/f32_softmax__simd.inc"
