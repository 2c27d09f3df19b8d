// The __scalar paths and the dispatching entries: f32_attention.c's, on f16 K/V rows.
#define CKW_ATTENTION_KV_F16
#include "kernels/attention/f32_attention__scalar.inc"
