// The scalar path (the template without a target), the dispatching entry and the messages.
#include "kernels/activation/f32_top_log_probs.h"

#include "kernels/common/cpu.h"

#define CKW_SIMD_TARGET
#define CKW_ISA(name) name##__scalar
#include "kernels/activation/f32_top_log_probs__simd.inc"
#undef CKW_ISA
#undef CKW_SIMD_TARGET

int ckw_f32_top_log_probs(int32_t* tokens, float* logprobs, const float* x, int64_t R, int64_t V, int64_t K) {
  CKW_DISPATCH_RETURN(ckw_f32_top_log_probs, tokens, logprobs, x, R, V, K);
}

const char* ckw_f32_top_log_probs_strerror(int code) {
  switch (code) {
    case CKW_TOP_LOG_PROBS_OK:
      return "ok";
    case CKW_TOP_LOG_PROBS_ERR_MASKED:
      return "top_log_probs: every token of a row is masked (-inf): the logit filters left nothing to choose";
    case CKW_TOP_LOG_PROBS_ERR_K:
      return "top_log_probs: K outside [1, min(V, 4096)]";
    case CKW_TOP_LOG_PROBS_ERR_SHAPE:
      return "top_log_probs: negative dims";
    default:
      return "top_log_probs: unknown error";
  }
}
