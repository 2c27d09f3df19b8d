// Test-only build of f32_resample.c that never takes the AVX2 path, under renamed symbols,
// so the test can check that both paths give the same bits on an AVX2 machine.
#define CKW_RESAMPLE_BASELINE_ONLY 1
#define ckw_f32_resample ckw_f32_resample__baseline
#define ckw_f32_resample_output_length ckw_f32_resample_output_length__baseline
#define ckw_f32_resample_scratch_bytes ckw_f32_resample_scratch_bytes__baseline
#define ckw_f32_resample_strerror ckw_f32_resample_strerror__baseline
#define ckw_f32_resample_range ckw_f32_resample_range__baseline
#define ckw_i64_resample_input_span ckw_i64_resample_input_span__baseline
#define ckw_f32_resample_range_scratch_bytes ckw_f32_resample_range_scratch_bytes__baseline
#include "kernels/audio/f32_resample.c"
