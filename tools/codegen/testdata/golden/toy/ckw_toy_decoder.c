// Generated from tools/codegen/testdata/toy/toy_decoder.json by //tools/codegen. Do not edit.
#define _GNU_SOURCE
#include "ckw_toy_decoder.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>

#include "tools/codegen/testdata/toy/toy_kernels.h"
#include "tools/codegen/support/xxh64.h"

#define API __attribute__((visibility("default")))

enum {
  kArenaBytes = 576,
  kStateBytes = 1728,
};
static const char kManifestSha256[] = "7fab5cbc7642f4730c30c8d92f1a0f82c7468dea13115b8537eb64759715b17f";
static const int64_t kWeightsBytes = 4640;  // the weights file's exact size
// The tensors this library reads and the xxh64 the manifest records for each: create() hashes
// them (about the cost of reading them once), so a corrupt file is refused, never computed with.
static const struct {
  int64_t offset, nbytes;
  uint64_t xxh64;
} kWeightChecks[] = {
    {0, 352, 0xaa03124accb8ac5aULL},  // embed.tokens
    {384, 192, 0x21eac3dc17997ef0ULL},  // embed.positions
    {576, 32, 0xf868a3f6536b387cULL},  // blocks.0.norm.g
    {640, 32, 0x786220842c8ef3a4ULL},  // blocks.0.norm.b
    {704, 256, 0x5e8c43f6c3eabb47ULL},  // blocks.0.k.w
    {960, 32, 0x85a42bcb76ab1b1aULL},  // blocks.0.k.b
    {1024, 256, 0x0bc9912574480ae5ULL},  // blocks.0.v.w
    {1280, 32, 0x3bd92c4be9612d48ULL},  // blocks.0.v.b
    {1344, 256, 0x97d182605b799cebULL},  // blocks.0.q.w
    {1600, 32, 0xb4029f126d506416ULL},  // blocks.0.q.b
    {1664, 256, 0xf205bb2bf643b6ccULL},  // blocks.0.xk.w
    {1920, 32, 0xd48024c1a485aa65ULL},  // blocks.0.xk.b
    {1984, 256, 0xeabc2ce48acdfae1ULL},  // blocks.0.xv.w
    {2240, 32, 0xe6c138d537fc67edULL},  // blocks.0.xv.b
    {2304, 256, 0xc7d9ed3902462c67ULL},  // blocks.0.mlp.w
    {2560, 32, 0x801ee49af476b7a0ULL},  // blocks.0.mlp.b
    {2624, 32, 0x7700f8e569b19300ULL},  // blocks.1.norm.g
    {2688, 32, 0x36a0c6cd68917423ULL},  // blocks.1.norm.b
    {2752, 256, 0x2f37fe3851ecf0f7ULL},  // blocks.1.k.w
    {3008, 32, 0xa73063c8854546e4ULL},  // blocks.1.k.b
    {3072, 256, 0xa60d37e43f809f23ULL},  // blocks.1.v.w
    {3328, 32, 0x360ce14c53c42252ULL},  // blocks.1.v.b
    {3392, 256, 0xecf6ec776e98c254ULL},  // blocks.1.q.w
    {3648, 32, 0x63597ac413a7dcfcULL},  // blocks.1.q.b
    {3712, 256, 0xff71b545adf0eeeeULL},  // blocks.1.xk.w
    {3968, 32, 0x2fe933af5b03b7a3ULL},  // blocks.1.xk.b
    {4032, 256, 0xecdc2641571a830eULL},  // blocks.1.xv.w
    {4288, 32, 0x2c4fbbfdfd89b5feULL},  // blocks.1.xv.b
    {4352, 256, 0x23784b30f5a414d3ULL},  // blocks.1.mlp.w
    {4608, 32, 0xe70f21a24bbaa600ULL},  // blocks.1.mlp.b
};

// ---- The handle's worker threads ----------------------------------------------------------
// Calls whose kernel map declares a split ("parallel") run as chunks along one output dim.
// Chunk boundaries depend only on the extent, the grain and the thread count, and each chunk
// computes whole outputs exactly as the unsplit call would, so results are the same bits for
// any thread count and whichever thread runs a chunk. The caller and the workers claim chunks
// from a shared counter (a late or descheduled worker's share is taken by the others); workers
// spin briefly between calls (kernel calls come back to back), then sleep.

enum {
  kMaxThreads = 8,
  // Chunks per thread when the extent allows. 1 measured best on an idle machine (2 cuts GEMM
  // rows into more packing blocks); a late thread's chunk is still taken by the others.
  kChunksPerThread = 1,
};
static const int64_t kSpinNanos = 100000;  // how long a waiting thread spins before sleeping
// Scratch per thread after the first (the first uses the arena): the largest split call's.
static const int64_t kThreadScratchBytes = 0;

// Runs the chunk [start, start + count); slot (0 .. n_threads - 1) is the running thread's,
// for its private scratch.
typedef void (*ckw_chunk_fn)(const void *args, int64_t slot, int64_t start, int64_t count);

struct ckw_pool;
struct ckw_worker {
  struct ckw_pool *pool;
  int index;  // 1 .. n_threads - 1 (the caller is 0)
};

struct ckw_pool {
  int n_threads;  // including the calling thread; 1: no workers, calls run whole
  int n_workers;  // started
  int sync_ok;    // mutex and condition variables initialized
  pthread_t threads[kMaxThreads];
  struct ckw_worker workers[kMaxThreads];
  pthread_mutex_t mu;
  pthread_cond_t wake;  // workers: a new task was published
  pthread_cond_t done;  // caller: every chunk of the task finished
  // The task: written by the caller before it publishes `claim`; stable while a chunk of it is
  // unfinished (a thread reads it only after claiming a chunk).
  ckw_chunk_fn fn;
  const void *args;
  int64_t total, grain;
  int64_t n_chunks;
  // (task number << 32) | chunks not yet claimed; a claim decrements it for that task only.
  _Atomic uint64_t claim;
  _Atomic int64_t unfinished;  // chunks of the task not yet done
  _Atomic int stop;
  _Atomic int sleeping;  // workers blocked on `wake`
  _Atomic int waiting;   // the caller is blocked on `done`
};

static inline void ckw_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static inline int64_t ckw_now_nanos(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// Claims and runs chunks of task `task` until none is left. Chunk i of n over [0, total) has
// boundaries on multiples of grain and is at least grain long.
static void ckw_pool_work(struct ckw_pool *p, uint64_t task, int slot) {
  uint64_t c = atomic_load(&p->claim);
  while ((c >> 32) == task && (c & 0xffffffffu) != 0) {
    if (!atomic_compare_exchange_weak(&p->claim, &c, c - 1)) continue;
    const int64_t n = p->n_chunks, i = n - (int64_t)(c & 0xffffffffu);
    const int64_t units = p->total / p->grain;
    const int64_t begin = units * i / n * p->grain;
    const int64_t end = i == n - 1 ? p->total : units * (i + 1) / n * p->grain;
    p->fn(p->args, slot, begin, end - begin);
    if (atomic_fetch_sub(&p->unfinished, 1) == 1 && atomic_load(&p->waiting)) {
      pthread_mutex_lock(&p->mu);
      pthread_cond_signal(&p->done);
      pthread_mutex_unlock(&p->mu);
    }
    c = atomic_load(&p->claim);
  }
}

static void *ckw_pool_worker(void *arg) {
  struct ckw_worker *w = arg;
  struct ckw_pool *p = w->pool;
  uint64_t seen = 0;  // the last task this worker looked at
  for (;;) {
    uint64_t task = atomic_load(&p->claim) >> 32;
    if (task == seen) {
      const int64_t deadline = ckw_now_nanos() + kSpinNanos;
      for (int spins = 1; (task = atomic_load(&p->claim) >> 32) == seen; ++spins) {
        ckw_cpu_relax();
        if (spins % 64 == 0 && ckw_now_nanos() > deadline) {
          pthread_mutex_lock(&p->mu);
          atomic_fetch_add(&p->sleeping, 1);
          while ((task = atomic_load(&p->claim) >> 32) == seen) pthread_cond_wait(&p->wake, &p->mu);
          atomic_fetch_sub(&p->sleeping, 1);
          pthread_mutex_unlock(&p->mu);
          break;
        }
      }
    }
    seen = task;
    if (atomic_load(&p->stop)) return NULL;
    ckw_pool_work(p, task, w->index);
  }
}

// Runs fn over [0, total) in chunks on the pool (the calling thread takes part) and returns
// when all are done. Too short for two chunks of `grain`: one call on the calling thread.
static void ckw_pool_run(struct ckw_pool *p, int64_t total, int64_t grain, ckw_chunk_fn fn, const void *args) {
  const int64_t units = total > 0 ? total / grain : 0;
  const int64_t most = (int64_t)p->n_threads * (p->n_threads > 1 ? kChunksPerThread : 1);
  const int64_t n = units < most ? units : most;
  if (n <= 1) {
    fn(args, 0, 0, total);
    return;
  }
  p->fn = fn;
  p->args = args;
  p->total = total;
  p->grain = grain;
  p->n_chunks = n;
  atomic_store(&p->unfinished, n);
  const uint64_t task = (atomic_load(&p->claim) >> 32) + 1;
  atomic_store(&p->claim, task << 32 | (uint64_t)n);  // publishes the task
  if (atomic_load(&p->sleeping) > 0) {
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
  }
  ckw_pool_work(p, task, 0);
  if (atomic_load(&p->unfinished) == 0) return;
  const int64_t deadline = ckw_now_nanos() + kSpinNanos;
  for (int spins = 1; atomic_load(&p->unfinished) != 0; ++spins) {
    ckw_cpu_relax();
    if (spins % 64 == 0 && ckw_now_nanos() > deadline) {
      pthread_mutex_lock(&p->mu);
      atomic_store(&p->waiting, 1);
      while (atomic_load(&p->unfinished) != 0) pthread_cond_wait(&p->done, &p->mu);
      atomic_store(&p->waiting, 0);
      pthread_mutex_unlock(&p->mu);
      return;
    }
  }
}

// Threads for a new handle: `requested` >= 1, else CKW_NUM_THREADS (a positive integer), else
// the CPUs this process may run on; at most kMaxThreads.
static int ckw_pool_thread_count(int requested) {
  long n = requested;
  if (n < 1) {
    const char *env = getenv("CKW_NUM_THREADS");
    char *end = NULL;
    n = env && *env ? strtol(env, &end, 10) : 0;
    if (!end || *end != '\0' || n < 1) {
      cpu_set_t set;
      n = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : sysconf(_SC_NPROCESSORS_ONLN);
    }
  }
  return n < 1 ? 1 : n > kMaxThreads ? kMaxThreads : (int)n;
}

// Starts the workers (signals blocked in them: they belong to the embedding process's main
// thread). A worker that cannot start leaves the pool smaller, never broken. 0 on success.
static int ckw_pool_start(struct ckw_pool *p, int n_threads) {
  p->n_threads = 1;
  if (n_threads <= 1) return 0;
  if (pthread_mutex_init(&p->mu, NULL) != 0) return -1;
  if (pthread_cond_init(&p->wake, NULL) != 0) {
    pthread_mutex_destroy(&p->mu);
    return -1;
  }
  if (pthread_cond_init(&p->done, NULL) != 0) {
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mu);
    return -1;
  }
  p->sync_ok = 1;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  for (int i = 1; i < n_threads; ++i) {
    p->workers[i].pool = p;
    p->workers[i].index = i;
    if (pthread_create(&p->threads[i], NULL, ckw_pool_worker, &p->workers[i]) != 0) break;
    p->n_workers = i;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  p->n_threads = p->n_workers + 1;
  return 0;
}

static void ckw_pool_stop(struct ckw_pool *p) {
  if (p->n_workers > 0) {
    atomic_store(&p->stop, 1);
    atomic_store(&p->claim, ((atomic_load(&p->claim) >> 32) + 1) << 32);  // a task with no chunks
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int i = 1; i <= p->n_workers; ++i) pthread_join(p->threads[i], NULL);
    p->n_workers = 0;
  }
  if (p->sync_ok) {
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mu);
    p->sync_ok = 0;
  }
  p->n_threads = 1;
}

// ckw_f32_gemm_nt_bias: its arguments for a whole call, and one function per declared split that runs
// it on the chunk [start, start + count) (kernel map "parallel") with the scratch of thread `slot`.
struct ckw_f32_gemm_nt_bias__args {
  float *y;
  const float *x;
  const float *w;
  const float *b;
  int64_t M;
  int64_t N;
  int64_t K;
};

static void ckw_f32_gemm_nt_bias__chunk0(const void *p, int64_t slot, int64_t start, int64_t count) {  // along M
  const struct ckw_f32_gemm_nt_bias__args *a = p;
  (void)slot;
  (void)start;
  (void)count;
  ckw_f32_gemm_nt_bias(
      a->y + (start * a->N),  // y
      a->x + (start * a->K),  // x
      a->w,  // w
      a->b,  // b
      (int64_t)(count),  // M
      a->N,  // N
      a->K  // K
  );
}

// ckw_f32_logits: its arguments for a whole call, and one function per declared split that runs
// it on the chunk [start, start + count) (kernel map "parallel") with the scratch of thread `slot`.
struct ckw_f32_logits__args {
  float *y;
  const float *x;
  const float *w;
  int64_t M;
  int64_t V;
  int64_t D;
};

static void ckw_f32_logits__chunk0(const void *p, int64_t slot, int64_t start, int64_t count) {  // along V
  const struct ckw_f32_logits__args *a = p;
  (void)slot;
  (void)start;
  (void)count;
  ckw_f32_logits(
      a->y + start,  // y
      a->x,  // x
      a->w + (start * a->D),  // w
      a->M,  // M
      (int64_t)(count),  // V
      a->D  // D
  );
}

static void ckw_f32_logits__chunk1(const void *p, int64_t slot, int64_t start, int64_t count) {  // along M
  const struct ckw_f32_logits__args *a = p;
  (void)slot;
  (void)start;
  (void)count;
  ckw_f32_logits(
      a->y + (start * a->V),  // y
      a->x + (start * a->D),  // x
      a->w,  // w
      (int64_t)(count),  // M
      a->V,  // V
      a->D  // D
  );
}

// A handle runs one call at a time: kBusy while an entry point runs (another call gets E_BUSY),
// kFreeWhenIdle when free() came during a call (the call frees the handle as it returns).
enum { kIdle = 0, kBusy = 1, kFreeWhenIdle = 2 };

struct ckw_toy_decoder_handle {
  atomic_int call_state;  // kIdle, kBusy or kFreeWhenIdle
  const uint8_t *weights;  // read-only mapping of the weights file
  size_t weights_bytes;
  uint8_t *arena;  // per-call scratch, 576 bytes
  uint8_t *state;  // persistent regions, 1728 bytes
  int has_memory;
  int64_t position;
  int cross_kv_valid;
  int64_t cross_kv_projections;
  size_t arena_bytes;
  ckw_toy_decoder_tap_fn tap;  // edge inspection: called after each call with its f32 outputs; NULL: off
  void *tap_user;
  int kernel_status;  // last failing kernel's code and message (E_KERNEL)
  const char *kernel_error;
  struct ckw_pool pool;  // worker threads for calls split across threads
  uint8_t *thread_scratch;  // (pool.n_threads - 1) * kThreadScratchBytes: the workers' scratch
};

static inline int64_t ckw_max64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t ckw_align64(int64_t n) { return (n + 63) / 64 * 64; }

static void destroy(ckw_toy_decoder_handle *h);

// Records a kernel failure on the handle; returns E_KERNEL.
static inline int kernel_failed(ckw_toy_decoder_handle *h, int status, const char *(*message)(int)) {
  h->kernel_status = status;
  h->kernel_error = message ? message(status) : "kernel failed";
  return CKW_TOY_DECODER_E_KERNEL;
}

API const char *ckw_toy_decoder_strerror(int code) {
  switch (code) {
    case CKW_TOY_DECODER_OK:
      return "ckw_toy_decoder: ok";
    case CKW_TOY_DECODER_E_ARGUMENT:
      return "ckw_toy_decoder: invalid argument (null pointer or a count out of range)";
    case CKW_TOY_DECODER_E_IO:
      return "ckw_toy_decoder: cannot read the weights or manifest file";
    case CKW_TOY_DECODER_E_MANIFEST_MISMATCH:
      return "ckw_toy_decoder: manifest_sha256 differs from the one this library was generated for";
    case CKW_TOY_DECODER_E_WEIGHTS_SIZE:
      return "ckw_toy_decoder: weights file size differs from the manifest's (truncated, or another checkpoint's weights)";
    case CKW_TOY_DECODER_E_NO_MEMORY:
      return "ckw_toy_decoder: out of memory";
    case CKW_TOY_DECODER_E_MISSING_INPUT:
      return "ckw_toy_decoder: a required input was not set (call the set_* function first)";
    case CKW_TOY_DECODER_E_CROSS_KV_INVALID:
      return "ckw_toy_decoder: cross-K/V cache is not valid: run prefill after setting encoder memory";
    case CKW_TOY_DECODER_E_CONTEXT_FULL:
      return "ckw_toy_decoder: the position would pass the text context capacity";
    case CKW_TOY_DECODER_E_KERNEL:
      return "ckw_toy_decoder: a kernel reported an error";
    case CKW_TOY_DECODER_E_WEIGHTS_CORRUPT:
      return "ckw_toy_decoder: a tensor in the weights file fails the xxh64 checksum its manifest records: the file is corrupt";
    case CKW_TOY_DECODER_E_BUSY:
      return "ckw_toy_decoder: the handle is in use by another call (one call at a time per handle: give each thread its own)";
    default:
      return "ckw_toy_decoder: unknown error code";
  }
}

API const char *ckw_toy_decoder_manifest_sha256(void) { return kManifestSha256; }

// This library's ABI description, the same bytes as the abi.json generated beside it.
API const char *ckw_toy_decoder_abi_json(void) {
  static const char kAbiJson[] =
      "{\n"
      "  \"abi_version\": 1,\n"
      "  \"circuit\": \"toy_decoder\",\n"
      "  \"errors\": [\n"
      "    {\n"
      "      \"code\": 0,\n"
      "      \"name\": \"OK\",\n"
      "      \"text\": \"ok\"\n"
      "    },\n"
      "    {\n"
      "      \"code\": -1,\n"
      "      \"name\": \"E_ARGUMENT\",\n"
      "      \"text\": \"invalid argument (null pointer or a count out of range)\"\n"
      "    },\n"
      "    {\n"
      "      \"code\": -2,\n"
      "      \"name\": \"E_IO\",\n"
      "      \"text\": \"cannot read the weights or manifest file\"\n"
      "    },\n"
      "    {\n"
      "      \"code\": -3,\n"
      "      \"name\": \"E_MANIFEST_MISMATCH\",\n"
      "      \"text\": \"manifest_sha256 differs from the one this library was generated for\"\n"
      "    },\n"
      "    {\n"
      "      \"code\": -4,\n"
      "      \"name\": \"E_WEIGHTS_SIZE\",\n"
      "      \"text\": \"weights file size differs from the manifest's (truncated, or another checkpoint's weights)\"\n"
      "    },\n"
      "    {\n"
      "      \"code\": -5,\n"
      "      \"name\": \"E_NO_MEMORY\",\n"
      "      \"text\": \"out of memory\"\n"
      "    },\n"
      "    {\n"
      "      \"code\": -6,\n"
      "      \"name\": \"E_MISSING_INPUT\",\n"
      "      \"text\": \"a required input was not set (call the set_* function first)\"\n"
      "    },\n"
      "    {\n"
      "      \"code\": -7,\n"
      "      \"name\": \"E_CROSS_KV_INVALID\",\n"
      "      \"text\": \"cross-K/V cache is not valid: run prefill after setting encoder memory\"\n"
      "    },\n"
      "    {\n"
      "      \"code\": -8,\n"
      "      \"name\": \"E_CONTEXT_FULL\",\n"
      "      \"text\": \"the position would pass the text context capacity\"\n"
      "    },\n"
      "    {\n"
      "      \"code\": -9,\n"
      "      \"name\": \"E_KERNEL\",\n"
      "      \"text\": \"a kernel reported an error\"\n"
      "    },\n"
      "    {\n"
      "      \"code\": -10,\n"
      "      \"name\": \"E_WEIGHTS_CORRUPT\",\n"
      "      \"text\": \"a tensor in the weights file fails the xxh64 checksum its manifest records: the file is corrupt\"\n"
      "    },\n"
      "    {\n"
      "      \"code\": -11,\n"
      "      \"name\": \"E_BUSY\",\n"
      "      \"text\": \"the handle is in use by another call (one call at a time per handle: give each thread its own)\"\n"
      "    }\n"
      "  ],\n"
      "  \"functions\": [\n"
      "    {\n"
      "      \"doc\": \"Maps the weights file read-only and allocates the handle's arena and state. The manifest's manifest_sha256 must equal the one baked in here (CKW_TOY_DECODER_E_MANIFEST_MISMATCH otherwise), the file must have the manifest's size (CKW_TOY_DECODER_E_WEIGHTS_SIZE) and every tensor this library reads its manifest's xxh64 (CKW_TOY_DECODER_E_WEIGHTS_CORRUPT).\\nEvery entry point that takes a non-const handle runs one call at a time on it: a call while another runs (another thread, or a tap re-entering) returns CKW_TOY_DECODER_E_BUSY and changes nothing.\",\n"
      "      \"name\": \"ckw_toy_decoder_create\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"const char *\",\n"
      "          \"doc\": \"the weights file (NULL for a library without weights)\",\n"
      "          \"name\": \"weights_path\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"const char *\",\n"
      "          \"doc\": \"NULL: manifest.json next to the weights file\",\n"
      "          \"name\": \"manifest_path\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"ckw_toy_decoder_handle **\",\n"
      "          \"doc\": \"the new handle (NULL on failure)\",\n"
      "          \"name\": \"out\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"int\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"As create, and the handle starts its worker threads (joined by free). Calls whose kernel declares a split run in chunks over outputs only, so every thread count gives the same bits. create() is create_with_threads(..., 0, out). Negative num_threads: CKW_TOY_DECODER_E_ARGUMENT.\",\n"
      "      \"name\": \"ckw_toy_decoder_create_with_threads\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"const char *\",\n"
      "          \"doc\": \"as create\",\n"
      "          \"name\": \"weights_path\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"const char *\",\n"
      "          \"doc\": \"as create\",\n"
      "          \"name\": \"manifest_path\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"int\",\n"
      "          \"doc\": \">= 1: that many (the caller's included); 0: CKW_NUM_THREADS (a positive integer), else the CPUs this process may run on; at most 8\",\n"
      "          \"name\": \"num_threads\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"ckw_toy_decoder_handle **\",\n"
      "          \"doc\": \"the new handle (NULL on failure)\",\n"
      "          \"name\": \"out\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"int\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"Threads the handle runs calls on, the caller's included (1 .. 8).\",\n"
      "      \"name\": \"ckw_toy_decoder_num_threads\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"const ckw_toy_decoder_handle *\",\n"
      "          \"doc\": \"\",\n"
      "          \"name\": \"h\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"int\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"Joins the handle's threads and releases everything it owns (NULL: no-op). During a call on the handle (from another thread or a tap), the call frees it as it returns.\",\n"
      "      \"name\": \"ckw_toy_decoder_free\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"ckw_toy_decoder_handle *\",\n"
      "          \"doc\": \"\",\n"
      "          \"name\": \"h\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"void\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"A return code's message (static storage).\",\n"
      "      \"name\": \"ckw_toy_decoder_strerror\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"int\",\n"
      "          \"doc\": \"CKW_TOY_DECODER_OK or a CKW_TOY_DECODER_E_* code\",\n"
      "          \"name\": \"code\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"const char *\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"The manifest hash this library was generated against (64 hex digits, \\\"\\\" when weightless).\",\n"
      "      \"name\": \"ckw_toy_decoder_manifest_sha256\",\n"
      "      \"params\": [],\n"
      "      \"returns\": \"const char *\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"The failing kernel's own message after CKW_TOY_DECODER_E_KERNEL (\\\"\\\" otherwise).\",\n"
      "      \"name\": \"ckw_toy_decoder_last_error\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"const ckw_toy_decoder_handle *\",\n"
      "          \"doc\": \"\",\n"
      "          \"name\": \"h\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"const char *\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"A resolved circuit dim by name, or -1 when there is none.\",\n"
      "      \"name\": \"ckw_toy_decoder_dim\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"const char *\",\n"
      "          \"doc\": \"e.g. \\\"n_vocab\\\"\",\n"
      "          \"name\": \"name\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"int64_t\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"This ABI as JSON (the artifact's abi.json, byte for byte): functions, parameters, types and error codes; runtime/abi.py builds its ctypes table from it.\",\n"
      "      \"name\": \"ckw_toy_decoder_abi_json\",\n"
      "      \"params\": [],\n"
      "      \"returns\": \"const char *\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"Sets the handle's edge tap. Returns CKW_TOY_DECODER_OK, or CKW_TOY_DECODER_E_ARGUMENT without a handle.\",\n"
      "      \"name\": \"ckw_toy_decoder_set_tap\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"ckw_toy_decoder_handle *\",\n"
      "          \"doc\": \"\",\n"
      "          \"name\": \"h\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"ckw_toy_decoder_tap_fn\",\n"
      "          \"doc\": \"NULL disables the tap (then each call costs one untaken branch)\",\n"
      "          \"name\": \"fn\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"void *\",\n"
      "          \"doc\": \"passed to fn as is\",\n"
      "          \"name\": \"user\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"int\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"Copies memory [5, 8] into the handle. Invalidates the cross-K/V cache: the next prefill projects it again; decode fails until then.\",\n"
      "      \"name\": \"ckw_toy_decoder_set_memory\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"ckw_toy_decoder_handle *\",\n"
      "          \"doc\": \"\",\n"
      "          \"name\": \"h\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"const float *\",\n"
      "          \"doc\": \"encoder memory\",\n"
      "          \"name\": \"memory\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"int\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"Runs the prompt tokens from position 0; projects memory into the cross cache once.\",\n"
      "      \"name\": \"ckw_toy_decoder_prefill\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"ckw_toy_decoder_handle *\",\n"
      "          \"doc\": \"\",\n"
      "          \"name\": \"h\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"const int32_t *\",\n"
      "          \"doc\": \"token ids\",\n"
      "          \"name\": \"tokens\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"int64_t\",\n"
      "          \"doc\": \"1 <= n_tokens <= 6\",\n"
      "          \"name\": \"n_tokens\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"float *\",\n"
      "          \"doc\": \"[n_tokens, 11]\",\n"
      "          \"name\": \"logits\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"int\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"Runs one token at the current position.\",\n"
      "      \"name\": \"ckw_toy_decoder_decode\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"ckw_toy_decoder_handle *\",\n"
      "          \"doc\": \"\",\n"
      "          \"name\": \"h\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"int32_t\",\n"
      "          \"doc\": \"token ids\",\n"
      "          \"name\": \"tokens\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"float *\",\n"
      "          \"doc\": \"[1, 11]\",\n"
      "          \"name\": \"logits\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"int\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"Forgets the token sequence (position = 0); keeps inputs set with set_* and the cross-K/V cache.\",\n"
      "      \"name\": \"ckw_toy_decoder_reset\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"ckw_toy_decoder_handle *\",\n"
      "          \"doc\": \"\",\n"
      "          \"name\": \"h\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"int\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"Tokens in the sequence so far (at most 6); -1 without a handle.\",\n"
      "      \"name\": \"ckw_toy_decoder_position\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"const ckw_toy_decoder_handle *\",\n"
      "          \"doc\": \"\",\n"
      "          \"name\": \"h\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"int64_t\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"How many times the cross-K/V cache was computed from encoder memory (once per memory).\",\n"
      "      \"name\": \"ckw_toy_decoder_cross_kv_projections\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"const ckw_toy_decoder_handle *\",\n"
      "          \"doc\": \"\",\n"
      "          \"name\": \"h\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"int64_t\"\n"
      "    }\n"
      "  ],\n"
      "  \"part\": \"decoder\",\n"
      "  \"prefix\": \"ckw_toy_decoder\",\n"
      "  \"types\": [\n"
      "    {\n"
      "      \"doc\": \"Opaque: owns the weights mapping, arena, state and threads.\",\n"
      "      \"kind\": \"struct\",\n"
      "      \"name\": \"ckw_toy_decoder_handle\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"Edge inspection. After every kernel call of an entry point (circuit ops and the layout converters the compiler inserted, in call order) the handle's tap, when set, is called once per f32 output of that call. An output written as a window into persistent state (a KV-cache append) is reported as the whole cache instance it writes into, with the cache's full shape. Calls that an entry point skips (e.g. cached cross-K/V projections) report nothing.\",\n"
      "      \"kind\": \"function_pointer\",\n"
      "      \"name\": \"ckw_toy_decoder_tap_fn\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"void *\",\n"
      "          \"doc\": \"set_tap's user\",\n"
      "          \"name\": \"user\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"const char *\",\n"
      "          \"doc\": \"\\\"<node>.<port>\\\", e.g. \\\"blocks.0.q_proj.y\\\" (converters: \\\"<consumer>:<port><-<layout>.<port>\\\")\",\n"
      "          \"name\": \"edge\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"const float *\",\n"
      "          \"doc\": \"the output as the call left it, valid only during the callback (the arena is reused)\",\n"
      "          \"name\": \"data\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"int64_t\",\n"
      "          \"doc\": \"entries of shape\",\n"
      "          \"name\": \"rank\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"const int64_t *\",\n"
      "          \"doc\": \"dims, row-major, as the kernel sees the tensor\",\n"
      "          \"name\": \"shape\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"void\"\n"
      "    }\n"
      "  ]\n"
      "}\n";
  return kAbiJson;
}

API const char *ckw_toy_decoder_last_error(const ckw_toy_decoder_handle *h) {
  return h && h->kernel_error ? h->kernel_error : "";
}

API int64_t ckw_toy_decoder_dim(const char *name) {
  static const struct {
    const char *name;
    int64_t value;
  } kDims[] = {
      {"ctx", 6},
      {"d_model", 8},
      {"eot", 10},
      {"head_dim", 4},
      {"mem_len", 5},
      {"n_beam", 1},
      {"n_ctx", 6},
      {"n_head", 2},
      {"n_heads", 2},
      {"n_layer", 2},
      {"n_mem", 5},
      {"n_state", 8},
      {"n_vocab", 11},
  };
  if (!name) return -1;
  for (size_t i = 0; i < sizeof(kDims) / sizeof(kDims[0]); ++i) {
    if (strcmp(kDims[i].name, name) == 0) return kDims[i].value;
  }
  return -1;
}

// Reads the "manifest_sha256" string of a manifest file into out (65 bytes); 0 on success.
static int read_manifest_hash(const char *path, char out[65]) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[1 << 16];
  size_t have = 0;
  ssize_t got;
  int found = -1;
  // The key may sit anywhere; scan in overlapping windows so it is never split.
  while ((got = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
    have += (size_t)got;
    buf[have] = 0;
    const char *key = strstr(buf, "\"manifest_sha256\"");
    if (key) {
      const char *p = key + strlen("\"manifest_sha256\"");
      while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' || *p == ':') ++p;
      if (*p == '"' && (size_t)(buf + have - (p + 1)) >= 65) {
        memcpy(out, p + 1, 64);
        out[64] = 0;
        found = p[65] == '"' ? 0 : -1;
        break;
      }
      if (key + 128 < buf + have) break;
    }
    if (have > 256) {  // keep a tail so a key split across reads is seen whole
      memmove(buf, buf + have - 256, 256);
      have = 256;
    }
  }
  close(fd);
  return found;
}

API int ckw_toy_decoder_create(const char *weights_path, const char *manifest_path, ckw_toy_decoder_handle **out) {
  return ckw_toy_decoder_create_with_threads(weights_path, manifest_path, 0, out);
}

API int ckw_toy_decoder_create_with_threads(const char *weights_path, const char *manifest_path, int num_threads, ckw_toy_decoder_handle **out) {
  if (!out || num_threads < 0) return CKW_TOY_DECODER_E_ARGUMENT;
  *out = NULL;
  ckw_toy_decoder_handle *h = calloc(1, sizeof(*h));
  if (!h) return CKW_TOY_DECODER_E_NO_MEMORY;
  int rc = CKW_TOY_DECODER_OK;
  atomic_init(&h->call_state, kIdle);
  if (kWeightsBytes > 0) {
    if (!weights_path) {
      rc = CKW_TOY_DECODER_E_ARGUMENT;
      goto fail;
    }
    char default_manifest[4096];
    if (!manifest_path) {
      const char *slash = strrchr(weights_path, '/');
      size_t dir = slash ? (size_t)(slash - weights_path + 1) : 0;
      if (dir + sizeof("manifest.json") > sizeof(default_manifest)) {
        rc = CKW_TOY_DECODER_E_ARGUMENT;
        goto fail;
      }
      memcpy(default_manifest, weights_path, dir);
      memcpy(default_manifest + dir, "manifest.json", sizeof("manifest.json"));
      manifest_path = default_manifest;
    }
    char hash[65];
    if (read_manifest_hash(manifest_path, hash) != 0) {
      rc = CKW_TOY_DECODER_E_IO;
      goto fail;
    }
    if (strcmp(hash, kManifestSha256) != 0) {
      rc = CKW_TOY_DECODER_E_MANIFEST_MISMATCH;
      goto fail;
    }
    int fd = open(weights_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      rc = CKW_TOY_DECODER_E_IO;
      goto fail;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size != kWeightsBytes) {
      close(fd);
      rc = CKW_TOY_DECODER_E_WEIGHTS_SIZE;
      goto fail;
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
      rc = CKW_TOY_DECODER_E_IO;
      goto fail;
    }
    h->weights = map;
    h->weights_bytes = (size_t)st.st_size;
    for (size_t i = 0; i < sizeof(kWeightChecks) / sizeof(kWeightChecks[0]); ++i) {
      if (ckw_xxh64(h->weights + kWeightChecks[i].offset, (size_t)kWeightChecks[i].nbytes, 0) != kWeightChecks[i].xxh64) {
        rc = CKW_TOY_DECODER_E_WEIGHTS_CORRUPT;
        goto fail;
      }
    }
  }
  h->arena_bytes = kArenaBytes > 0 ? kArenaBytes : 64;
  h->arena = aligned_alloc(64, h->arena_bytes);
  h->state = aligned_alloc(64, kStateBytes > 0 ? kStateBytes : 64);
  if (!h->arena || !h->state) {
    rc = CKW_TOY_DECODER_E_NO_MEMORY;
    goto fail;
  }
  memset(h->state, 0, kStateBytes > 0 ? kStateBytes : 64);
  if (ckw_pool_start(&h->pool, ckw_pool_thread_count(num_threads)) != 0) {
    rc = CKW_TOY_DECODER_E_NO_MEMORY;
    goto fail;
  }
  if (kThreadScratchBytes > 0 && h->pool.n_threads > 1) {
    h->thread_scratch = aligned_alloc(64, (size_t)((h->pool.n_threads - 1) * kThreadScratchBytes));
    if (!h->thread_scratch) {
      rc = CKW_TOY_DECODER_E_NO_MEMORY;
      goto fail;
    }
  }
  *out = h;
  return CKW_TOY_DECODER_OK;
fail:
  destroy(h);
  return rc;
}

// Starts a call on h; 0 when another call is running (or free() is pending).
static inline int enter(ckw_toy_decoder_handle *h) {
  int idle = kIdle;
  return atomic_compare_exchange_strong(&h->call_state, &idle, kBusy);
}

// Ends a call; frees the handle when free() was called meanwhile.
static inline void leave(ckw_toy_decoder_handle *h) {
  int busy = kBusy;
  if (!atomic_compare_exchange_strong(&h->call_state, &busy, kIdle)) destroy(h);
}

API void ckw_toy_decoder_free(ckw_toy_decoder_handle *h) {
  if (!h) return;
  int state = atomic_load(&h->call_state);
  for (;;) {  // idle: free now; busy: the running call frees it; already pending: nothing to do
    if (state == kIdle && atomic_compare_exchange_weak(&h->call_state, &state, kBusy)) break;
    if (state == kBusy && atomic_compare_exchange_weak(&h->call_state, &state, kFreeWhenIdle)) return;
    if (state == kFreeWhenIdle) return;
  }
  destroy(h);
}

static void destroy(ckw_toy_decoder_handle *h) {
  ckw_pool_stop(&h->pool);
  free(h->thread_scratch);
  if (h->weights) munmap((void *)h->weights, h->weights_bytes);
  free(h->arena);
  free(h->state);
  free(h);
}

API int ckw_toy_decoder_num_threads(const ckw_toy_decoder_handle *h) {
  return h ? h->pool.n_threads : CKW_TOY_DECODER_E_ARGUMENT;
}

static int ckw_toy_decoder_set_tap__in_call(ckw_toy_decoder_handle *h, ckw_toy_decoder_tap_fn fn, void *user) {
  h->tap = fn;
  h->tap_user = fn ? user : NULL;
  return CKW_TOY_DECODER_OK;
}

// ckw_toy_decoder_set_tap__in_call as one call at a time on the handle.
API int ckw_toy_decoder_set_tap(ckw_toy_decoder_handle *h, ckw_toy_decoder_tap_fn fn, void *user) {
  if (!h) return CKW_TOY_DECODER_E_ARGUMENT;
  if (!enter(h)) return CKW_TOY_DECODER_E_BUSY;
  const int rc = ckw_toy_decoder_set_tap__in_call(h, fn, user);
  leave(h);
  return rc;
}

static int ckw_toy_decoder_set_memory__in_call(ckw_toy_decoder_handle *h, const float *memory) {
  if (!memory) return CKW_TOY_DECODER_E_ARGUMENT;
  memcpy(h->state + 0, memory, 160);
  h->has_memory = 1;
  h->cross_kv_valid = 0;  // the cached projections belong to the previous memory
  return CKW_TOY_DECODER_OK;
}

// ckw_toy_decoder_set_memory__in_call as one call at a time on the handle.
API int ckw_toy_decoder_set_memory(ckw_toy_decoder_handle *h, const float *memory) {
  if (!h) return CKW_TOY_DECODER_E_ARGUMENT;
  if (!enter(h)) return CKW_TOY_DECODER_E_BUSY;
  const int rc = ckw_toy_decoder_set_memory__in_call(h, memory);
  leave(h);
  return rc;
}

static int ckw_toy_decoder_reset__in_call(ckw_toy_decoder_handle *h) {
  h->position = 0;
  return CKW_TOY_DECODER_OK;
}

// ckw_toy_decoder_reset__in_call as one call at a time on the handle.
API int ckw_toy_decoder_reset(ckw_toy_decoder_handle *h) {
  if (!h) return CKW_TOY_DECODER_E_ARGUMENT;
  if (!enter(h)) return CKW_TOY_DECODER_E_BUSY;
  const int rc = ckw_toy_decoder_reset__in_call(h);
  leave(h);
  return rc;
}

API int64_t ckw_toy_decoder_position(const ckw_toy_decoder_handle *h) { return h ? h->position : -1; }

API int64_t ckw_toy_decoder_cross_kv_projections(const ckw_toy_decoder_handle *h) { return h ? h->cross_kv_projections : -1; }

static int ckw_toy_decoder_prefill__in_call(ckw_toy_decoder_handle *h, const int32_t *tokens, int64_t n_tokens, float *logits) {
  if (!tokens || !logits) return CKW_TOY_DECODER_E_ARGUMENT;
  const int64_t pos = 0;
  if (n_tokens < 1 || n_tokens > 6) return CKW_TOY_DECODER_E_ARGUMENT;
  if (0 + n_tokens > 6) return CKW_TOY_DECODER_E_CONTEXT_FULL;
  if (!h->has_memory) return CKW_TOY_DECODER_E_MISSING_INPUT;
  uint8_t *const arena = h->arena;
  uint8_t *const state = h->state;
  const uint8_t *const weights = h->weights;
  const ckw_toy_decoder_tap_fn tap = h->tap;  // edge inspection: NULL costs one untaken branch per call
  void *const tap_user = h->tap_user;
  (void)arena;
  (void)state;
  (void)weights;
  (void)tap;
  (void)tap_user;
  (void)pos;
  if (!h->cross_kv_valid) {  // project the encoder memory once; decode steps reuse it
    // blocks.0.cross_k_proj: split across the handle's threads (along M, grain 1, when always)
    {
      const struct ckw_f32_gemm_nt_bias__args args = {
          .y = (float *)(arena + 0),  // arena blocks.0.cross_k_proj.y
          .x = (const float *)(state + 0),  // state external:memory
          .w = (const float *)(weights + 1664),  // weight blocks.0.xk.w
          .b = (const float *)(weights + 1920),  // weight blocks.0.xk.b
          .M = 5,  // dim M
          .N = 8,  // dim N
          .K = 8,  // dim K
      };
      ckw_pool_run(&h->pool, 5, 1, ckw_f32_gemm_nt_bias__chunk0, &args);
    }
    if (tap) {
      tap(tap_user, "blocks.0.cross_k_proj.y", (const float *)(arena + 0), 2, (const int64_t[]){5, 8});
    }

    // state:cross_k[0,0]<-head_major
    ckw_f32_token_to_head_major(
        (float *)(state + 192),  // y: state state:cross_k[0,0]
        (const float *)(arena + 0),  // x: arena blocks.0.cross_k_proj.y
        5,  // T: dim T
        2,  // H: dim H
        4,  // Dh: dim Dh
        5,  // C: dim C
        0  // row0: dim R0
    );
    if (tap) {
      tap(tap_user, "state:cross_k[0,0]<-head_major.y", (const float *)(state + 192), 3, (const int64_t[]){2, 5, 4});
    }

    // blocks.0.cross_v_proj: split across the handle's threads (along M, grain 1, when always)
    {
      const struct ckw_f32_gemm_nt_bias__args args = {
          .y = (float *)(arena + 0),  // arena blocks.0.cross_v_proj.y
          .x = (const float *)(state + 0),  // state external:memory
          .w = (const float *)(weights + 1984),  // weight blocks.0.xv.w
          .b = (const float *)(weights + 2240),  // weight blocks.0.xv.b
          .M = 5,  // dim M
          .N = 8,  // dim N
          .K = 8,  // dim K
      };
      ckw_pool_run(&h->pool, 5, 1, ckw_f32_gemm_nt_bias__chunk0, &args);
    }
    if (tap) {
      tap(tap_user, "blocks.0.cross_v_proj.y", (const float *)(arena + 0), 2, (const int64_t[]){5, 8});
    }

    // state:cross_v[0,0]<-head_major
    ckw_f32_token_to_head_major(
        (float *)(state + 576),  // y: state state:cross_v[0,0]
        (const float *)(arena + 0),  // x: arena blocks.0.cross_v_proj.y
        5,  // T: dim T
        2,  // H: dim H
        4,  // Dh: dim Dh
        5,  // C: dim C
        0  // row0: dim R0
    );
    if (tap) {
      tap(tap_user, "state:cross_v[0,0]<-head_major.y", (const float *)(state + 576), 3, (const int64_t[]){2, 5, 4});
    }

    // blocks.1.cross_k_proj: split across the handle's threads (along M, grain 1, when always)
    {
      const struct ckw_f32_gemm_nt_bias__args args = {
          .y = (float *)(arena + 0),  // arena blocks.1.cross_k_proj.y
          .x = (const float *)(state + 0),  // state external:memory
          .w = (const float *)(weights + 3712),  // weight blocks.1.xk.w
          .b = (const float *)(weights + 3968),  // weight blocks.1.xk.b
          .M = 5,  // dim M
          .N = 8,  // dim N
          .K = 8,  // dim K
      };
      ckw_pool_run(&h->pool, 5, 1, ckw_f32_gemm_nt_bias__chunk0, &args);
    }
    if (tap) {
      tap(tap_user, "blocks.1.cross_k_proj.y", (const float *)(arena + 0), 2, (const int64_t[]){5, 8});
    }

    // state:cross_k[1,0]<-head_major
    ckw_f32_token_to_head_major(
        (float *)(state + 384),  // y: state state:cross_k[1,0]
        (const float *)(arena + 0),  // x: arena blocks.1.cross_k_proj.y
        5,  // T: dim T
        2,  // H: dim H
        4,  // Dh: dim Dh
        5,  // C: dim C
        0  // row0: dim R0
    );
    if (tap) {
      tap(tap_user, "state:cross_k[1,0]<-head_major.y", (const float *)(state + 384), 3, (const int64_t[]){2, 5, 4});
    }

    // blocks.1.cross_v_proj: split across the handle's threads (along M, grain 1, when always)
    {
      const struct ckw_f32_gemm_nt_bias__args args = {
          .y = (float *)(arena + 0),  // arena blocks.1.cross_v_proj.y
          .x = (const float *)(state + 0),  // state external:memory
          .w = (const float *)(weights + 4032),  // weight blocks.1.xv.w
          .b = (const float *)(weights + 4288),  // weight blocks.1.xv.b
          .M = 5,  // dim M
          .N = 8,  // dim N
          .K = 8,  // dim K
      };
      ckw_pool_run(&h->pool, 5, 1, ckw_f32_gemm_nt_bias__chunk0, &args);
    }
    if (tap) {
      tap(tap_user, "blocks.1.cross_v_proj.y", (const float *)(arena + 0), 2, (const int64_t[]){5, 8});
    }

    // state:cross_v[1,0]<-head_major
    ckw_f32_token_to_head_major(
        (float *)(state + 768),  // y: state state:cross_v[1,0]
        (const float *)(arena + 0),  // x: arena blocks.1.cross_v_proj.y
        5,  // T: dim T
        2,  // H: dim H
        4,  // Dh: dim Dh
        5,  // C: dim C
        0  // row0: dim R0
    );
    if (tap) {
      tap(tap_user, "state:cross_v[1,0]<-head_major.y", (const float *)(state + 768), 3, (const int64_t[]){2, 5, 4});
    }

    h->cross_kv_valid = 1;
    h->cross_kv_projections += 1;
  }
  // embed
  ckw_f32_embed_positions(
      (float *)(arena + 0),  // y: arena embed.y
      (const int32_t *)tokens,  // tokens: argument tokens
      (const float *)(weights + 0),  // table: weight embed.tokens
      (const float *)(weights + 384),  // positions: weight embed.positions
      n_tokens,  // T: dim T
      8,  // D: dim D
      0  // offset: dim offset
  );
  if (tap) {
    tap(tap_user, "embed.y", (const float *)(arena + 0), 2, (const int64_t[]){n_tokens, 8});
  }

  // blocks.0.norm
  ckw_f32_layer_norm(
      (float *)(arena + 192),  // y: arena blocks.0.norm.y
      (const float *)(arena + 0),  // x: arena embed.y
      (const float *)(weights + 576),  // g: weight blocks.0.norm.g
      (const float *)(weights + 640),  // b: weight blocks.0.norm.b
      n_tokens,  // M: dim M
      8,  // D: dim D
      1e-05f  // eps: attr eps
  );
  if (tap) {
    tap(tap_user, "blocks.0.norm.y", (const float *)(arena + 192), 2, (const int64_t[]){n_tokens, 8});
  }

  // blocks.0.k_proj: split across the handle's threads (along M, grain 1, when always)
  {
    const struct ckw_f32_gemm_nt_bias__args args = {
        .y = (float *)(arena + 0),  // arena blocks.0.k_proj.y
        .x = (const float *)(arena + 192),  // arena blocks.0.norm.y
        .w = (const float *)(weights + 704),  // weight blocks.0.k.w
        .b = (const float *)(weights + 960),  // weight blocks.0.k.b
        .M = n_tokens,  // dim M
        .N = 8,  // dim N
        .K = 8,  // dim K
    };
    ckw_pool_run(&h->pool, n_tokens, 1, ckw_f32_gemm_nt_bias__chunk0, &args);
  }
  if (tap) {
    tap(tap_user, "blocks.0.k_proj.y", (const float *)(arena + 0), 2, (const int64_t[]){n_tokens, 8});
  }

  // state:self_k[0,0]<-head_major
  ckw_f32_token_to_head_major(
      (float *)(state + 960),  // y: state state:self_k[0,0]
      (const float *)(arena + 0),  // x: arena blocks.0.k_proj.y
      n_tokens,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      6,  // C: dim C
      0  // row0: dim R0
  );
  if (tap) {
    // whole cache view; this call wrote from row 0 on axis 1
    tap(tap_user, "state:self_k[0,0]<-head_major.y", (const float *)(state + 960), 3, (const int64_t[]){2, 6, 4});
  }

  // blocks.0.v_proj: split across the handle's threads (along M, grain 1, when always)
  {
    const struct ckw_f32_gemm_nt_bias__args args = {
        .y = (float *)(arena + 0),  // arena blocks.0.v_proj.y
        .x = (const float *)(arena + 192),  // arena blocks.0.norm.y
        .w = (const float *)(weights + 1024),  // weight blocks.0.v.w
        .b = (const float *)(weights + 1280),  // weight blocks.0.v.b
        .M = n_tokens,  // dim M
        .N = 8,  // dim N
        .K = 8,  // dim K
    };
    ckw_pool_run(&h->pool, n_tokens, 1, ckw_f32_gemm_nt_bias__chunk0, &args);
  }
  if (tap) {
    tap(tap_user, "blocks.0.v_proj.y", (const float *)(arena + 0), 2, (const int64_t[]){n_tokens, 8});
  }

  // state:self_v[0,0]<-head_major
  ckw_f32_token_to_head_major(
      (float *)(state + 1344),  // y: state state:self_v[0,0]
      (const float *)(arena + 0),  // x: arena blocks.0.v_proj.y
      n_tokens,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      6,  // C: dim C
      0  // row0: dim R0
  );
  if (tap) {
    // whole cache view; this call wrote from row 0 on axis 1
    tap(tap_user, "state:self_v[0,0]<-head_major.y", (const float *)(state + 1344), 3, (const int64_t[]){2, 6, 4});
  }

  // blocks.0.q_proj: split across the handle's threads (along M, grain 1, when always)
  {
    const struct ckw_f32_gemm_nt_bias__args args = {
        .y = (float *)(arena + 0),  // arena blocks.0.q_proj.y
        .x = (const float *)(arena + 192),  // arena blocks.0.norm.y
        .w = (const float *)(weights + 1344),  // weight blocks.0.q.w
        .b = (const float *)(weights + 1600),  // weight blocks.0.q.b
        .M = n_tokens,  // dim M
        .N = 8,  // dim N
        .K = 8,  // dim K
    };
    ckw_pool_run(&h->pool, n_tokens, 1, ckw_f32_gemm_nt_bias__chunk0, &args);
  }
  if (tap) {
    tap(tap_user, "blocks.0.q_proj.y", (const float *)(arena + 0), 2, (const int64_t[]){n_tokens, 8});
  }

  // blocks.0.self_attn
  ckw_f32_attention(
      (float *)(arena + 192),  // y: arena blocks.0.self_attn.y
      (const float *)(arena + 0),  // q: arena blocks.0.q_proj.y
      (const float *)(state + 960),  // k: state state:self_k[0,0]
      (const float *)(state + 1344),  // v: state state:self_v[0,0]
      n_tokens,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      6,  // kv_stride: dim C
      n_tokens,  // S: dim S
      0,  // q0: dim q0
      1,  // causal: attr causal
      (float *)(arena + 384)  // scores: scratch 144 bytes
  );
  if (tap) {
    tap(tap_user, "blocks.0.self_attn.y", (const float *)(arena + 192), 2, (const int64_t[]){n_tokens, 8});
  }

  // blocks.0.cross_attn
  ckw_f32_attention(
      (float *)(arena + 0),  // y: arena blocks.0.cross_attn.y
      (const float *)(arena + 192),  // q: arena blocks.0.self_attn.y
      (const float *)(state + 192),  // k: state state:cross_k[0,0]
      (const float *)(state + 576),  // v: state state:cross_v[0,0]
      n_tokens,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      5,  // kv_stride: dim C
      5,  // S: dim S
      0,  // q0: dim q0
      0,  // causal: attr causal
      (float *)(arena + 384)  // scores: scratch 120 bytes
  );
  if (tap) {
    tap(tap_user, "blocks.0.cross_attn.y", (const float *)(arena + 0), 2, (const int64_t[]){n_tokens, 8});
  }

  // blocks.0.mlp
  ckw_f32_gemm_nt_bias_gelu(
      (float *)(arena + 192),  // y: arena blocks.0.mlp.y
      (const float *)(arena + 0),  // x: arena blocks.0.cross_attn.y
      (const float *)(weights + 2304),  // w: weight blocks.0.mlp.w
      (const float *)(weights + 2560),  // b: weight blocks.0.mlp.b
      n_tokens,  // M: dim M
      8,  // N: dim N
      8  // K: dim K
  );
  if (tap) {
    tap(tap_user, "blocks.0.mlp.y", (const float *)(arena + 192), 2, (const int64_t[]){n_tokens, 8});
  }

  // blocks.1.norm
  ckw_f32_layer_norm(
      (float *)(arena + 0),  // y: arena blocks.1.norm.y
      (const float *)(arena + 192),  // x: arena blocks.0.mlp.y
      (const float *)(weights + 2624),  // g: weight blocks.1.norm.g
      (const float *)(weights + 2688),  // b: weight blocks.1.norm.b
      n_tokens,  // M: dim M
      8,  // D: dim D
      1e-05f  // eps: attr eps
  );
  if (tap) {
    tap(tap_user, "blocks.1.norm.y", (const float *)(arena + 0), 2, (const int64_t[]){n_tokens, 8});
  }

  // blocks.1.k_proj: split across the handle's threads (along M, grain 1, when always)
  {
    const struct ckw_f32_gemm_nt_bias__args args = {
        .y = (float *)(arena + 192),  // arena blocks.1.k_proj.y
        .x = (const float *)(arena + 0),  // arena blocks.1.norm.y
        .w = (const float *)(weights + 2752),  // weight blocks.1.k.w
        .b = (const float *)(weights + 3008),  // weight blocks.1.k.b
        .M = n_tokens,  // dim M
        .N = 8,  // dim N
        .K = 8,  // dim K
    };
    ckw_pool_run(&h->pool, n_tokens, 1, ckw_f32_gemm_nt_bias__chunk0, &args);
  }
  if (tap) {
    tap(tap_user, "blocks.1.k_proj.y", (const float *)(arena + 192), 2, (const int64_t[]){n_tokens, 8});
  }

  // state:self_k[1,0]<-head_major
  ckw_f32_token_to_head_major(
      (float *)(state + 1152),  // y: state state:self_k[1,0]
      (const float *)(arena + 192),  // x: arena blocks.1.k_proj.y
      n_tokens,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      6,  // C: dim C
      0  // row0: dim R0
  );
  if (tap) {
    // whole cache view; this call wrote from row 0 on axis 1
    tap(tap_user, "state:self_k[1,0]<-head_major.y", (const float *)(state + 1152), 3, (const int64_t[]){2, 6, 4});
  }

  // blocks.1.v_proj: split across the handle's threads (along M, grain 1, when always)
  {
    const struct ckw_f32_gemm_nt_bias__args args = {
        .y = (float *)(arena + 192),  // arena blocks.1.v_proj.y
        .x = (const float *)(arena + 0),  // arena blocks.1.norm.y
        .w = (const float *)(weights + 3072),  // weight blocks.1.v.w
        .b = (const float *)(weights + 3328),  // weight blocks.1.v.b
        .M = n_tokens,  // dim M
        .N = 8,  // dim N
        .K = 8,  // dim K
    };
    ckw_pool_run(&h->pool, n_tokens, 1, ckw_f32_gemm_nt_bias__chunk0, &args);
  }
  if (tap) {
    tap(tap_user, "blocks.1.v_proj.y", (const float *)(arena + 192), 2, (const int64_t[]){n_tokens, 8});
  }

  // state:self_v[1,0]<-head_major
  ckw_f32_token_to_head_major(
      (float *)(state + 1536),  // y: state state:self_v[1,0]
      (const float *)(arena + 192),  // x: arena blocks.1.v_proj.y
      n_tokens,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      6,  // C: dim C
      0  // row0: dim R0
  );
  if (tap) {
    // whole cache view; this call wrote from row 0 on axis 1
    tap(tap_user, "state:self_v[1,0]<-head_major.y", (const float *)(state + 1536), 3, (const int64_t[]){2, 6, 4});
  }

  // blocks.1.q_proj: split across the handle's threads (along M, grain 1, when always)
  {
    const struct ckw_f32_gemm_nt_bias__args args = {
        .y = (float *)(arena + 192),  // arena blocks.1.q_proj.y
        .x = (const float *)(arena + 0),  // arena blocks.1.norm.y
        .w = (const float *)(weights + 3392),  // weight blocks.1.q.w
        .b = (const float *)(weights + 3648),  // weight blocks.1.q.b
        .M = n_tokens,  // dim M
        .N = 8,  // dim N
        .K = 8,  // dim K
    };
    ckw_pool_run(&h->pool, n_tokens, 1, ckw_f32_gemm_nt_bias__chunk0, &args);
  }
  if (tap) {
    tap(tap_user, "blocks.1.q_proj.y", (const float *)(arena + 192), 2, (const int64_t[]){n_tokens, 8});
  }

  // blocks.1.self_attn
  ckw_f32_attention(
      (float *)(arena + 0),  // y: arena blocks.1.self_attn.y
      (const float *)(arena + 192),  // q: arena blocks.1.q_proj.y
      (const float *)(state + 1152),  // k: state state:self_k[1,0]
      (const float *)(state + 1536),  // v: state state:self_v[1,0]
      n_tokens,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      6,  // kv_stride: dim C
      n_tokens,  // S: dim S
      0,  // q0: dim q0
      1,  // causal: attr causal
      (float *)(arena + 384)  // scores: scratch 144 bytes
  );
  if (tap) {
    tap(tap_user, "blocks.1.self_attn.y", (const float *)(arena + 0), 2, (const int64_t[]){n_tokens, 8});
  }

  // blocks.1.cross_attn
  ckw_f32_attention(
      (float *)(arena + 192),  // y: arena blocks.1.cross_attn.y
      (const float *)(arena + 0),  // q: arena blocks.1.self_attn.y
      (const float *)(state + 384),  // k: state state:cross_k[1,0]
      (const float *)(state + 768),  // v: state state:cross_v[1,0]
      n_tokens,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      5,  // kv_stride: dim C
      5,  // S: dim S
      0,  // q0: dim q0
      0,  // causal: attr causal
      (float *)(arena + 384)  // scores: scratch 120 bytes
  );
  if (tap) {
    tap(tap_user, "blocks.1.cross_attn.y", (const float *)(arena + 192), 2, (const int64_t[]){n_tokens, 8});
  }

  // blocks.1.mlp
  ckw_f32_gemm_nt_bias_gelu(
      (float *)(arena + 0),  // y: arena blocks.1.mlp.y
      (const float *)(arena + 192),  // x: arena blocks.1.cross_attn.y
      (const float *)(weights + 4352),  // w: weight blocks.1.mlp.w
      (const float *)(weights + 4608),  // b: weight blocks.1.mlp.b
      n_tokens,  // M: dim M
      8,  // N: dim N
      8  // K: dim K
  );
  if (tap) {
    tap(tap_user, "blocks.1.mlp.y", (const float *)(arena + 0), 2, (const int64_t[]){n_tokens, 8});
  }

  // logits: split across the handle's threads (along V, grain 2, when n_tokens == 1; along M, grain 1, when always)
  {
    const struct ckw_f32_logits__args args = {
        .y = (float *)logits,  // output logits
        .x = (const float *)(arena + 0),  // arena blocks.1.mlp.y
        .w = (const float *)(weights + 0),  // weight embed.tokens
        .M = n_tokens,  // dim M
        .V = 11,  // dim V
        .D = 8,  // dim D
    };
    if (n_tokens == 1)
      ckw_pool_run(&h->pool, 11, 2, ckw_f32_logits__chunk0, &args);
    else
      ckw_pool_run(&h->pool, n_tokens, 1, ckw_f32_logits__chunk1, &args);
  }
  if (tap) {
    tap(tap_user, "logits.y", (const float *)logits, 2, (const int64_t[]){n_tokens, 11});
  }

  h->position = 0 + n_tokens;
  return CKW_TOY_DECODER_OK;
}

// ckw_toy_decoder_prefill__in_call as one call at a time on the handle.
API int ckw_toy_decoder_prefill(ckw_toy_decoder_handle *h, const int32_t *tokens, int64_t n_tokens, float *logits) {
  if (!h) return CKW_TOY_DECODER_E_ARGUMENT;
  if (!enter(h)) return CKW_TOY_DECODER_E_BUSY;
  const int rc = ckw_toy_decoder_prefill__in_call(h, tokens, n_tokens, logits);
  leave(h);
  return rc;
}

static int ckw_toy_decoder_decode__in_call(ckw_toy_decoder_handle *h, int32_t tokens, float *logits) {
  if (!logits) return CKW_TOY_DECODER_E_ARGUMENT;
  const int64_t n_tokens = 1;
  const int64_t pos = h->position;
  if (pos > 5) return CKW_TOY_DECODER_E_CONTEXT_FULL;
  if (pos + 1 > 6) return CKW_TOY_DECODER_E_CONTEXT_FULL;
  if (!h->cross_kv_valid) return CKW_TOY_DECODER_E_CROSS_KV_INVALID;
  uint8_t *const arena = h->arena;
  uint8_t *const state = h->state;
  const uint8_t *const weights = h->weights;
  const ckw_toy_decoder_tap_fn tap = h->tap;  // edge inspection: NULL costs one untaken branch per call
  void *const tap_user = h->tap_user;
  (void)arena;
  (void)state;
  (void)weights;
  (void)tap;
  (void)tap_user;
  (void)n_tokens;
  (void)pos;
  // embed
  ckw_f32_embed_positions(
      (float *)(arena + 0),  // y: arena embed.y
      (const int32_t *)&tokens,  // tokens: argument tokens
      (const float *)(weights + 0),  // table: weight embed.tokens
      (const float *)(weights + 384),  // positions: weight embed.positions
      1,  // T: dim T
      8,  // D: dim D
      pos  // offset: dim offset
  );
  if (tap) {
    tap(tap_user, "embed.y", (const float *)(arena + 0), 2, (const int64_t[]){1, 8});
  }

  // blocks.0.norm
  ckw_f32_layer_norm(
      (float *)(arena + 64),  // y: arena blocks.0.norm.y
      (const float *)(arena + 0),  // x: arena embed.y
      (const float *)(weights + 576),  // g: weight blocks.0.norm.g
      (const float *)(weights + 640),  // b: weight blocks.0.norm.b
      1,  // M: dim M
      8,  // D: dim D
      1e-05f  // eps: attr eps
  );
  if (tap) {
    tap(tap_user, "blocks.0.norm.y", (const float *)(arena + 64), 2, (const int64_t[]){1, 8});
  }

  // blocks.0.k_proj
  ckw_f32_gemm_nt_bias(
      (float *)(arena + 0),  // y: arena blocks.0.k_proj.y
      (const float *)(arena + 64),  // x: arena blocks.0.norm.y
      (const float *)(weights + 704),  // w: weight blocks.0.k.w
      (const float *)(weights + 960),  // b: weight blocks.0.k.b
      1,  // M: dim M
      8,  // N: dim N
      8  // K: dim K
  );
  if (tap) {
    tap(tap_user, "blocks.0.k_proj.y", (const float *)(arena + 0), 2, (const int64_t[]){1, 8});
  }

  // state:self_k[0,0]<-head_major
  ckw_f32_token_to_head_major(
      (float *)(state + 960),  // y: state state:self_k[0,0]
      (const float *)(arena + 0),  // x: arena blocks.0.k_proj.y
      1,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      6,  // C: dim C
      pos  // row0: dim R0
  );
  if (tap) {
    // whole cache view; this call wrote from row pos on axis 1
    tap(tap_user, "state:self_k[0,0]<-head_major.y", (const float *)(state + 960), 3, (const int64_t[]){2, 6, 4});
  }

  // blocks.0.v_proj
  ckw_f32_gemm_nt_bias(
      (float *)(arena + 0),  // y: arena blocks.0.v_proj.y
      (const float *)(arena + 64),  // x: arena blocks.0.norm.y
      (const float *)(weights + 1024),  // w: weight blocks.0.v.w
      (const float *)(weights + 1280),  // b: weight blocks.0.v.b
      1,  // M: dim M
      8,  // N: dim N
      8  // K: dim K
  );
  if (tap) {
    tap(tap_user, "blocks.0.v_proj.y", (const float *)(arena + 0), 2, (const int64_t[]){1, 8});
  }

  // state:self_v[0,0]<-head_major
  ckw_f32_token_to_head_major(
      (float *)(state + 1344),  // y: state state:self_v[0,0]
      (const float *)(arena + 0),  // x: arena blocks.0.v_proj.y
      1,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      6,  // C: dim C
      pos  // row0: dim R0
  );
  if (tap) {
    // whole cache view; this call wrote from row pos on axis 1
    tap(tap_user, "state:self_v[0,0]<-head_major.y", (const float *)(state + 1344), 3, (const int64_t[]){2, 6, 4});
  }

  // blocks.0.q_proj
  ckw_f32_gemm_nt_bias(
      (float *)(arena + 0),  // y: arena blocks.0.q_proj.y
      (const float *)(arena + 64),  // x: arena blocks.0.norm.y
      (const float *)(weights + 1344),  // w: weight blocks.0.q.w
      (const float *)(weights + 1600),  // b: weight blocks.0.q.b
      1,  // M: dim M
      8,  // N: dim N
      8  // K: dim K
  );
  if (tap) {
    tap(tap_user, "blocks.0.q_proj.y", (const float *)(arena + 0), 2, (const int64_t[]){1, 8});
  }

  // blocks.0.self_attn
  ckw_f32_attention(
      (float *)(arena + 64),  // y: arena blocks.0.self_attn.y
      (const float *)(arena + 0),  // q: arena blocks.0.q_proj.y
      (const float *)(state + 960),  // k: state state:self_k[0,0]
      (const float *)(state + 1344),  // v: state state:self_v[0,0]
      1,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      6,  // kv_stride: dim C
      pos + 1,  // S: dim S
      pos,  // q0: dim q0
      1,  // causal: attr causal
      (float *)(arena + 128)  // scores: scratch 24 bytes
  );
  if (tap) {
    tap(tap_user, "blocks.0.self_attn.y", (const float *)(arena + 64), 2, (const int64_t[]){1, 8});
  }

  // blocks.0.cross_attn
  ckw_f32_attention(
      (float *)(arena + 0),  // y: arena blocks.0.cross_attn.y
      (const float *)(arena + 64),  // q: arena blocks.0.self_attn.y
      (const float *)(state + 192),  // k: state state:cross_k[0,0]
      (const float *)(state + 576),  // v: state state:cross_v[0,0]
      1,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      5,  // kv_stride: dim C
      5,  // S: dim S
      0,  // q0: dim q0
      0,  // causal: attr causal
      (float *)(arena + 128)  // scores: scratch 20 bytes
  );
  if (tap) {
    tap(tap_user, "blocks.0.cross_attn.y", (const float *)(arena + 0), 2, (const int64_t[]){1, 8});
  }

  // blocks.0.mlp
  ckw_f32_gemm_nt_bias_gelu(
      (float *)(arena + 64),  // y: arena blocks.0.mlp.y
      (const float *)(arena + 0),  // x: arena blocks.0.cross_attn.y
      (const float *)(weights + 2304),  // w: weight blocks.0.mlp.w
      (const float *)(weights + 2560),  // b: weight blocks.0.mlp.b
      1,  // M: dim M
      8,  // N: dim N
      8  // K: dim K
  );
  if (tap) {
    tap(tap_user, "blocks.0.mlp.y", (const float *)(arena + 64), 2, (const int64_t[]){1, 8});
  }

  // blocks.1.norm
  ckw_f32_layer_norm(
      (float *)(arena + 0),  // y: arena blocks.1.norm.y
      (const float *)(arena + 64),  // x: arena blocks.0.mlp.y
      (const float *)(weights + 2624),  // g: weight blocks.1.norm.g
      (const float *)(weights + 2688),  // b: weight blocks.1.norm.b
      1,  // M: dim M
      8,  // D: dim D
      1e-05f  // eps: attr eps
  );
  if (tap) {
    tap(tap_user, "blocks.1.norm.y", (const float *)(arena + 0), 2, (const int64_t[]){1, 8});
  }

  // blocks.1.k_proj
  ckw_f32_gemm_nt_bias(
      (float *)(arena + 64),  // y: arena blocks.1.k_proj.y
      (const float *)(arena + 0),  // x: arena blocks.1.norm.y
      (const float *)(weights + 2752),  // w: weight blocks.1.k.w
      (const float *)(weights + 3008),  // b: weight blocks.1.k.b
      1,  // M: dim M
      8,  // N: dim N
      8  // K: dim K
  );
  if (tap) {
    tap(tap_user, "blocks.1.k_proj.y", (const float *)(arena + 64), 2, (const int64_t[]){1, 8});
  }

  // state:self_k[1,0]<-head_major
  ckw_f32_token_to_head_major(
      (float *)(state + 1152),  // y: state state:self_k[1,0]
      (const float *)(arena + 64),  // x: arena blocks.1.k_proj.y
      1,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      6,  // C: dim C
      pos  // row0: dim R0
  );
  if (tap) {
    // whole cache view; this call wrote from row pos on axis 1
    tap(tap_user, "state:self_k[1,0]<-head_major.y", (const float *)(state + 1152), 3, (const int64_t[]){2, 6, 4});
  }

  // blocks.1.v_proj
  ckw_f32_gemm_nt_bias(
      (float *)(arena + 64),  // y: arena blocks.1.v_proj.y
      (const float *)(arena + 0),  // x: arena blocks.1.norm.y
      (const float *)(weights + 3072),  // w: weight blocks.1.v.w
      (const float *)(weights + 3328),  // b: weight blocks.1.v.b
      1,  // M: dim M
      8,  // N: dim N
      8  // K: dim K
  );
  if (tap) {
    tap(tap_user, "blocks.1.v_proj.y", (const float *)(arena + 64), 2, (const int64_t[]){1, 8});
  }

  // state:self_v[1,0]<-head_major
  ckw_f32_token_to_head_major(
      (float *)(state + 1536),  // y: state state:self_v[1,0]
      (const float *)(arena + 64),  // x: arena blocks.1.v_proj.y
      1,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      6,  // C: dim C
      pos  // row0: dim R0
  );
  if (tap) {
    // whole cache view; this call wrote from row pos on axis 1
    tap(tap_user, "state:self_v[1,0]<-head_major.y", (const float *)(state + 1536), 3, (const int64_t[]){2, 6, 4});
  }

  // blocks.1.q_proj
  ckw_f32_gemm_nt_bias(
      (float *)(arena + 64),  // y: arena blocks.1.q_proj.y
      (const float *)(arena + 0),  // x: arena blocks.1.norm.y
      (const float *)(weights + 3392),  // w: weight blocks.1.q.w
      (const float *)(weights + 3648),  // b: weight blocks.1.q.b
      1,  // M: dim M
      8,  // N: dim N
      8  // K: dim K
  );
  if (tap) {
    tap(tap_user, "blocks.1.q_proj.y", (const float *)(arena + 64), 2, (const int64_t[]){1, 8});
  }

  // blocks.1.self_attn
  ckw_f32_attention(
      (float *)(arena + 0),  // y: arena blocks.1.self_attn.y
      (const float *)(arena + 64),  // q: arena blocks.1.q_proj.y
      (const float *)(state + 1152),  // k: state state:self_k[1,0]
      (const float *)(state + 1536),  // v: state state:self_v[1,0]
      1,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      6,  // kv_stride: dim C
      pos + 1,  // S: dim S
      pos,  // q0: dim q0
      1,  // causal: attr causal
      (float *)(arena + 128)  // scores: scratch 24 bytes
  );
  if (tap) {
    tap(tap_user, "blocks.1.self_attn.y", (const float *)(arena + 0), 2, (const int64_t[]){1, 8});
  }

  // blocks.1.cross_attn
  ckw_f32_attention(
      (float *)(arena + 64),  // y: arena blocks.1.cross_attn.y
      (const float *)(arena + 0),  // q: arena blocks.1.self_attn.y
      (const float *)(state + 384),  // k: state state:cross_k[1,0]
      (const float *)(state + 768),  // v: state state:cross_v[1,0]
      1,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      5,  // kv_stride: dim C
      5,  // S: dim S
      0,  // q0: dim q0
      0,  // causal: attr causal
      (float *)(arena + 128)  // scores: scratch 20 bytes
  );
  if (tap) {
    tap(tap_user, "blocks.1.cross_attn.y", (const float *)(arena + 64), 2, (const int64_t[]){1, 8});
  }

  // blocks.1.mlp
  ckw_f32_gemm_nt_bias_gelu(
      (float *)(arena + 0),  // y: arena blocks.1.mlp.y
      (const float *)(arena + 64),  // x: arena blocks.1.cross_attn.y
      (const float *)(weights + 4352),  // w: weight blocks.1.mlp.w
      (const float *)(weights + 4608),  // b: weight blocks.1.mlp.b
      1,  // M: dim M
      8,  // N: dim N
      8  // K: dim K
  );
  if (tap) {
    tap(tap_user, "blocks.1.mlp.y", (const float *)(arena + 0), 2, (const int64_t[]){1, 8});
  }

  // logits: split across the handle's threads (along V, grain 2, when always)
  {
    const struct ckw_f32_logits__args args = {
        .y = (float *)logits,  // output logits
        .x = (const float *)(arena + 0),  // arena blocks.1.mlp.y
        .w = (const float *)(weights + 0),  // weight embed.tokens
        .M = 1,  // dim M
        .V = 11,  // dim V
        .D = 8,  // dim D
    };
    ckw_pool_run(&h->pool, 11, 2, ckw_f32_logits__chunk0, &args);
  }
  if (tap) {
    tap(tap_user, "logits.y", (const float *)logits, 2, (const int64_t[]){1, 11});
  }

  h->position = pos + 1;
  return CKW_TOY_DECODER_OK;
}

// ckw_toy_decoder_decode__in_call as one call at a time on the handle.
API int ckw_toy_decoder_decode(ckw_toy_decoder_handle *h, int32_t tokens, float *logits) {
  if (!h) return CKW_TOY_DECODER_E_ARGUMENT;
  if (!enter(h)) return CKW_TOY_DECODER_E_BUSY;
  const int rc = ckw_toy_decoder_decode__in_call(h, tokens, logits);
  leave(h);
  return rc;
}
