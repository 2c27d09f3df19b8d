// Portable exact-erf GELU, matching torch.nn.functional.gelu(approximate="none").
#ifndef CKW_KERNELS_COMMON_GELU_SCALAR_H_
#define CKW_KERNELS_COMMON_GELU_SCALAR_H_

#include <math.h>

static inline float ckw_gelu_scalar(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }

#endif  // CKW_KERNELS_COMMON_GELU_SCALAR_H_
