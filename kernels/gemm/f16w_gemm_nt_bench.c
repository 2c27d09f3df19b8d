// f16-weight GEMM benchmark next to the f32 engine (the body: kernels/common/gemm_w16_bench.inc).
#include "kernels/common/f16.h"
#include "kernels/gemm/f16w_gemm_nt_bias.h"
#include "kernels/gemm/f16w_gemm_nt_contract.h"

#define W16_ISAS CKW_F16W_GEMM_NT_ISAS
#define W16_BIAS(isa) ckw_f16w_gemm_nt_bias__##isa
#define W16_NARROW ckw_f32_to_f16
#define W16_WIDEN ckw_f16_to_f32
#define W16_NAME "f16w"
#include "kernels/common/gemm_w16_bench.inc"
