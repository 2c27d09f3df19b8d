// Gather bandwidth (GB/s read + written) at a beam-5 self-KV reorder of tiny (4 layers x K/V,
// 448 rows x 384 per beam, one row block per beam).
#include <stdio.h>
#include <stdlib.h>

#include "kernels/common/bench_util.h"
#include "kernels/layout/f32_gather_rows.h"

int main(int argc, char** argv) {
  const int bench = ckw_bench_requested(argc, argv);
  const int64_t B = 5, R = bench ? 448 * 384 : 16;
  float* src = malloc(sizeof(float) * B * R);
  float* dst = malloc(sizeof(float) * B * R);
  for (int64_t i = 0; i < B * R; ++i) src[i] = (float)i;
  const int32_t index[5] = {2, 2, 0, 4, 1};
  double t;
  int rc = 0;
  CKW_BENCH_BEST(t, bench ? 20 : 1, rc |= ckw_f32_gather_rows(dst, src, index, B, R, B));
  if (bench) {
    printf("gather_rows %lldx%lld: %7.1f us %6.1f GB/s\n", (long long)B, (long long)R, t * 1e6, 8.0 * B * R / t * 1e-9);
  } else {
    printf("smoke run ok (pass --benchmark for the table)\n");
  }
  free(src), free(dst);
  return rc != 0;
}
