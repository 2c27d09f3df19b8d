// A handle's worker threads (the generated libraries' thread pool; tools/codegen/README.md
// "Threads"). Calls whose kernel map declares a split ("parallel") run as chunks along one output
// dim. Chunk boundaries depend only on the extent, the grain and the thread count, and each chunk
// computes whole outputs exactly as the unsplit call would, so results are the same bits for any
// thread count and whichever thread runs a chunk. The caller and the workers claim chunks from a
// shared counter (a late or descheduled worker's share is taken by the others); workers spin
// briefly between calls (kernel calls come back to back), then sleep.
//
// A pool belongs to one handle and holds no global state: pools of several handles, and of
// several generated libraries in one process, run independently. Calls on one pool must not
// overlap (the handle runs one call at a time).
#ifndef CKW_TOOLS_CODEGEN_SUPPORT_CKW_POOL_H_
#define CKW_TOOLS_CODEGEN_SUPPORT_CKW_POOL_H_

#include <stdint.h>

#include "tools/codegen/support/ckw_support.h"

#ifdef __cplusplus
extern "C" {
#endif

// Runs the chunk [start, start + count) of a call; slot (0 .. threads - 1) is the running
// thread's, for its private scratch (0 is the calling thread).
typedef void (*ckw_chunk_fn)(const void *args, int64_t slot, int64_t start, int64_t count);

struct ckw_pool;

// Threads for a new handle: `requested` >= 1, else CKW_NUM_THREADS (a positive integer), else
// the CPUs this process may run on; between 1 and max_threads.
CKW_SUPPORT_API int ckw_pool_thread_count(int requested, int max_threads);

// A pool of n_threads threads, the caller's included (n_threads - 1 workers, signals blocked in
// them: they belong to the embedding process's main thread). A worker that cannot start leaves
// the pool smaller, never broken. NULL when out of memory.
CKW_SUPPORT_API struct ckw_pool *ckw_pool_create(int n_threads);

// Threads calls run on, the caller's included (1 for NULL).
CKW_SUPPORT_API int ckw_pool_threads(const struct ckw_pool *p);

// Runs fn over [0, total) in chunks on the pool (the calling thread takes part) and returns when
// all are done. Chunk i of n has boundaries on multiples of grain and is at least grain long; too
// short for two chunks of `grain`: one call fn(args, 0, 0, total) on the calling thread.
CKW_SUPPORT_API void ckw_pool_run(struct ckw_pool *p, int64_t total, int64_t grain, ckw_chunk_fn fn, const void *args);

// Joins the workers and frees the pool (NULL: no-op).
CKW_SUPPORT_API void ckw_pool_free(struct ckw_pool *p);

#ifdef __cplusplus
}
#endif

#endif  // CKW_TOOLS_CODEGEN_SUPPORT_CKW_POOL_H_
