// The entry points of the four f16w_gemm_nt* kernels (each ISA path and the dispatching one),
// thin calls into the shared engine kernels/common/f16w_gemm_nt_core.h.
#include "kernels/common/f16w_gemm_nt_core.h"
#include "kernels/gemm/f16w_gemm_nt.h"
#include "kernels/gemm/f16w_gemm_nt_bias.h"
#include "kernels/gemm/f16w_gemm_nt_bias_gelu.h"
#include "kernels/gemm/f16w_gemm_nt_bias_residual.h"

#define GEMM_NT_W uint16_t
#define GEMM_NT_NAME(kind, sfx) ckw_f16w_gemm_nt##kind##sfx
#define GEMM_NT_CORE(sfx) ckw_f16w_gemm_nt_core##sfx
#include "kernels/common/gemm_nt_entries.inc"

#define ISA_ENTRIES_(isa, unused) GEMM_NT_ENTRIES(__##isa)
// Macro instantiations: clang-format would join and indent them as one statement.
// clang-format off
CKW_F16W_GEMM_NT_CORE_ISAS(ISA_ENTRIES_, _)
GEMM_NT_ENTRIES()
// clang-format on
