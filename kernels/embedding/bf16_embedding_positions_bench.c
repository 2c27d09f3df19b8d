// bf16-table embedding + positions next to the f32 table (the body: f32_embedding_positions_w16_bench.inc).
#include "kernels/embedding/bf16_embedding_positions.h"

#define W16_KERNEL ckw_bf16_embedding_positions
#define W16_ROWS_KERNEL ckw_bf16_embedding_positions_rows
#define W16_STRERROR ckw_bf16_embedding_positions_strerror
#define W16_ONE 0x3f80
#define W16_NAME "bf16"
#include "kernels/embedding/f32_embedding_positions_w16_bench.inc"
