#define _GNU_SOURCE
#include "tools/codegen/support/ckw_pool.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum {
  // Chunks per thread when the extent allows. 1 measured best on an idle machine (2 cuts GEMM
  // rows into more packing blocks); a late thread's chunk is still taken by the others.
  kChunksPerThread = 1,
};
static const int64_t kSpinNanos = 100000;  // how long a waiting thread spins before sleeping

struct ckw_worker {
  struct ckw_pool *pool;
  int index;  // 1 .. n_threads - 1 (the caller is 0)
};

struct ckw_pool {
  int n_threads;  // including the calling thread; 1: no workers, calls run whole
  int n_workers;  // started
  int sync_ok;    // mutex and condition variables initialized
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
  _Atomic int sleeping;        // workers blocked on `wake`
  _Atomic int waiting;         // the caller is blocked on `done`
  pthread_t *threads;          // [n_threads]; 1 .. n_workers started
  struct ckw_worker *workers;  // [n_threads]
};

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static inline int64_t now_nanos(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// Claims and runs chunks of task `task` until none is left. Chunk i of n over [0, total) has
// boundaries on multiples of grain and is at least grain long.
static void work(struct ckw_pool *p, uint64_t task, int slot) {
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

static void *worker_main(void *arg) {
  struct ckw_worker *w = arg;
  struct ckw_pool *p = w->pool;
  uint64_t seen = 0;  // the last task this worker looked at
  for (;;) {
    uint64_t task = atomic_load(&p->claim) >> 32;
    if (task == seen) {
      const int64_t deadline = now_nanos() + kSpinNanos;
      for (int spins = 1; (task = atomic_load(&p->claim) >> 32) == seen; ++spins) {
        cpu_relax();
        if (spins % 64 == 0 && now_nanos() > deadline) {
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
    work(p, task, w->index);
  }
}

void ckw_pool_run(struct ckw_pool *p, int64_t total, int64_t grain, ckw_chunk_fn fn, const void *args) {
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
  work(p, task, 0);
  if (atomic_load(&p->unfinished) == 0) return;
  const int64_t deadline = now_nanos() + kSpinNanos;
  for (int spins = 1; atomic_load(&p->unfinished) != 0; ++spins) {
    cpu_relax();
    if (spins % 64 == 0 && now_nanos() > deadline) {
      pthread_mutex_lock(&p->mu);
      atomic_store(&p->waiting, 1);
      while (atomic_load(&p->unfinished) != 0) pthread_cond_wait(&p->done, &p->mu);
      atomic_store(&p->waiting, 0);
      pthread_mutex_unlock(&p->mu);
      return;
    }
  }
}

int ckw_pool_thread_count(int requested, int max_threads) {
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
  if (max_threads < 1) max_threads = 1;
  return n < 1 ? 1 : n > max_threads ? max_threads : (int)n;
}

// Starts the workers; 0 on success, -1 when the mutex or a condition variable cannot be made.
static int start(struct ckw_pool *p, int n_threads) {
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
    if (pthread_create(&p->threads[i], NULL, worker_main, &p->workers[i]) != 0) break;
    p->n_workers = i;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  p->n_threads = p->n_workers + 1;
  return 0;
}

struct ckw_pool *ckw_pool_create(int n_threads) {
  struct ckw_pool *p = calloc(1, sizeof(*p));
  if (!p) return NULL;
  p->n_threads = 1;
  if (n_threads <= 1) return p;
  p->threads = calloc((size_t)n_threads, sizeof(p->threads[0]));
  p->workers = calloc((size_t)n_threads, sizeof(p->workers[0]));
  if (!p->threads || !p->workers || start(p, n_threads) != 0) {
    ckw_pool_free(p);
    return NULL;
  }
  return p;
}

int ckw_pool_threads(const struct ckw_pool *p) { return p ? p->n_threads : 1; }

void ckw_pool_free(struct ckw_pool *p) {
  if (!p) return;
  if (p->n_workers > 0) {
    atomic_store(&p->stop, 1);
    atomic_store(&p->claim, ((atomic_load(&p->claim) >> 32) + 1) << 32);  // a task with no chunks
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int i = 1; i <= p->n_workers; ++i) pthread_join(p->threads[i], NULL);
  }
  if (p->sync_ok) {
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mu);
  }
  free(p->threads);
  free(p->workers);
  free(p);
}
