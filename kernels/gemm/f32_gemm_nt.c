// The entry points of the four f32_gemm_nt* kernels (each ISA path and the dispatching one),
// thin calls into the shared engine kernels/common/f32_gemm_nt_core.h.
#include "kernels/gemm/f32_gemm_nt.h"
#include "kernels/gemm/f32_gemm_nt_bias.h"
#include "kernels/gemm/f32_gemm_nt_bias_gelu.h"
#include "kernels/gemm/f32_gemm_nt_bias_residual.h"

#define GEMM_NT_W float
#define GEMM_NT_NAME(kind, sfx) ckw_f32_gemm_nt##kind##sfx
#define GEMM_NT_CORE(sfx) ckw_f32_gemm_nt_core##sfx
#include "kernels/common/gemm_nt_entries.inc"

// Macro instantiations: clang-format would join and indent them as one statement.
// clang-format off
GEMM_NT_ENTRIES(__scalar)
GEMM_NT_ENTRIES(__avx2)
GEMM_NT_ENTRIES(__avx512)
GEMM_NT_ENTRIES()
// clang-format on
