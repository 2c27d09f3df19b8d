// The entry points of the four i8w_gemm_nt* kernels (each ISA path and the dispatching one), thin
// calls into the shared engine kernels/common/i8w_gemm_nt_core.h.
#include "kernels/gemm/i8w_gemm_nt.h"

#include <stddef.h>

#include "kernels/common/i8w_gemm_nt_core.h"

#define ENTRIES_(sfx, core)                                                                                         \
  CKW_I8W_GEMM_NT_PLAIN_(sfx) { core(y, x, w, w_scale, NULL, NULL, scratch, M, N, K, ldy, CKW_GEMM_EPI_PLAIN); }    \
  CKW_I8W_GEMM_NT_BIAS_(_bias, sfx) { core(y, x, w, w_scale, b, NULL, scratch, M, N, K, ldy, CKW_GEMM_EPI_PLAIN); } \
  CKW_I8W_GEMM_NT_BIAS_(_bias_gelu, sfx) {                                                                          \
    core(y, x, w, w_scale, b, NULL, scratch, M, N, K, ldy, CKW_GEMM_EPI_GELU);                                      \
  }                                                                                                                 \
  CKW_I8W_GEMM_NT_RESIDUAL_(sfx) { core(y, x, w, w_scale, b, r, scratch, M, N, K, ldy, CKW_GEMM_EPI_RESIDUAL); }

#define ISA_ENTRIES_(isa, unused) ENTRIES_(__##isa, ckw_i8w_gemm_nt_core__##isa)
// Macro instantiations: clang-format would join and indent them as one statement.
// clang-format off
CKW_I8W_GEMM_NT_CORE_ISAS(ISA_ENTRIES_, _)
ENTRIES_(, ckw_i8w_gemm_nt_core)
// clang-format on

int64_t ckw_i8w_gemm_nt_scratch_bytes(int64_t M, int64_t K) { return ckw_i8w_scratch_bytes(M, K); }
