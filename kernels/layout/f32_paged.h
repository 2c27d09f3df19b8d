// Paged KV caches (issue 25, docs/multi-stream.md section 3): a block pool [NB, H, R, Dh] of NB
// blocks, each holding R consecutive cache rows of every head; element (block, h, r, d) at
// ((block * H + h) * R + r) * Dh + d. A sequence's logical cache row j lives in block
// table[j / R] at row j % R (table: the sequence's block table of MB entries).
//
// ckw_f32_token_to_paged: writes B sequences of T token-major rows into their blocks,
//   pool[table[b*MB + (p+t)/R], h, (p+t)%R, :] = src[b*T + t, h*Dh : (h+1)*Dh],  p = pos[b]
//   for b < B, t < T, h < H (pos NULL: every p is 0). Rows not written stay as they were.
//   Only the table entries the written rows use are read. Every check runs before the first
//   write, so a refused call writes nothing:
//     CKW_PAGED_ERR_SHAPE     negative dims;
//     CKW_PAGED_ERR_POS       pos[b] < 0 or pos[b] + T > MB * R (the sequence's table is full);
//     CKW_PAGED_ERR_ID        a used table entry outside [0, NB);
//     CKW_PAGED_ERR_COLLISION two written rows land on one pool row (same block and row: e.g.
//                             sequences sharing a block both writing it, a missed copy-on-write).
//   (checked in that order over all sequences). Collisions are found with a bitmap over the
//   NB * R pool rows in scratch (ckw_f32_token_to_paged_scratch_bytes(NB, R) bytes, 8-byte
//   aligned); only the words the written rows touch are cleared, so a call costs O(B * T) bits
//   whatever NB. pool and src must not overlap.
//
// ckw_f32_copy_blocks: dst[dst_ids[i]] = src[src_ids[i]] for i < n, blocks of X floats
//   (X = H * R * Dh for a pool). dst may be src (in place: a beam fork copies a shared partial
//   last block into a fresh one), else the two must not overlap. Refused, nothing copied:
//     CKW_PAGED_ERR_SHAPE     negative dims;
//     CKW_PAGED_ERR_ID        an id outside [0, NB);
//     CKW_PAGED_ERR_DST       a destination id repeated, or a destination that is also a source
//                             (so an in-place copy never reads a block already overwritten;
//                             refused out of place too, so both give the same status).
//   n = 0 is a no-op. The id checks are O(n^2) compares (n is a step's forks).
#ifndef CKW_KERNELS_LAYOUT_F32_PAGED_H_
#define CKW_KERNELS_LAYOUT_F32_PAGED_H_

#include <stdint.h>

#include "kernels/layout/f32_layout.h"  // ckw_layout_store_fn

#ifdef __cplusplus
extern "C" {
#endif

#define CKW_PAGED_OK 0
#define CKW_PAGED_ERR_ID (-1)
#define CKW_PAGED_ERR_POS (-2)  // token_to_paged
#define CKW_PAGED_ERR_DST (-2)  // copy_blocks
#define CKW_PAGED_ERR_COLLISION (-3)
#define CKW_PAGED_ERR_SHAPE (-4)

int64_t ckw_f32_token_to_paged_scratch_bytes(int64_t NB, int64_t R);
int ckw_f32_token_to_paged(float* restrict pool, const float* restrict src, const int32_t* restrict pos,
                           const int32_t* restrict table, void* restrict scratch, int64_t B, int64_t T, int64_t H,
                           int64_t Dh, int64_t NB, int64_t R, int64_t MB);
int ckw_f32_copy_blocks(float* dst, const float* src, const int32_t* restrict src_ids, const int32_t* restrict dst_ids,
                        int64_t n, int64_t NB, int64_t X);
const char* ckw_f32_paged_strerror(int code);
// ckw_f32_token_to_paged (same checks, order and codes) with each pool row written by store
// (f32_layout.h): the body of the f32 and f16 pools' kernels.
int ckw_token_to_paged_with(ckw_layout_store_fn store, void* pool, const float* src, const int32_t* pos,
                            const int32_t* table, void* scratch, int64_t B, int64_t T, int64_t H, int64_t Dh,
                            int64_t NB, int64_t R, int64_t MB);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_LAYOUT_F32_PAGED_H_
