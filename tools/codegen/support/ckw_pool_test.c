// ckw_pool: N chunked jobs on 1 to 4 threads give the same outputs, each element written once by
// one chunk whose bounds sit on multiples of the grain; short extents run whole on the caller;
// workers that went to sleep wake for the next job; two pools run at once in two threads; the
// thread count from the argument, CKW_NUM_THREADS and the cap.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/common/test_util.h"
#include "tools/codegen/support/ckw_pool.h"

enum { kMaxTotal = 1000, kJobs = 40 };

// One job: out[i] = value(job, i) over [0, total), chunk by chunk.
struct job {
  int64_t job, total, grain, threads;
  uint64_t out[kMaxTotal];
  _Atomic int writes[kMaxTotal];
  _Atomic int bad_chunks;  // a chunk off the grain or out of range, or a slot out of range
  _Atomic int chunks;
};

static uint64_t value(int64_t job, int64_t i) {
  uint64_t x = (uint64_t)job * 0x9e3779b97f4a7c15ULL + (uint64_t)i;
  for (int r = 0; r < 200; ++r) x = x * 6364136223846793005ULL + 1442695040888963407ULL;  // some work per element
  return x;
}

static void chunk(const void *args, int64_t slot, int64_t start, int64_t count) {
  struct job *j = (struct job *)args;
  atomic_fetch_add(&j->chunks, 1);
  const int whole = start == 0 && count == j->total;
  const int on_grain =
      start % j->grain == 0 && count >= j->grain && (start + count == j->total || count % j->grain == 0);
  if (slot < 0 || slot >= j->threads || start < 0 || count < 0 || start + count > j->total || !(whole || on_grain)) {
    atomic_fetch_add(&j->bad_chunks, 1);
    return;
  }
  for (int64_t i = start; i < start + count; ++i) {
    j->out[i] = value(j->job, i);
    atomic_fetch_add(&j->writes[i], 1);
  }
}

static const int64_t kTotals[] = {0, 1, 7, 63, 64, 127, 128, 129, 500, 1000};
static const int64_t kGrains[] = {1, 3, 64};

// Runs every (total, grain) job on a pool of `threads`; sum of all outputs into *digest.
static void run_jobs(struct ckw_pool *p, int threads, int pause_us, uint64_t *digest) {
  struct job *job = calloc(1, sizeof(*job));
  int64_t n = 0;
  for (size_t t = 0; t < sizeof(kTotals) / sizeof(kTotals[0]); ++t) {
    for (size_t g = 0; g < sizeof(kGrains) / sizeof(kGrains[0]); ++g, ++n) {
      memset(job, 0, sizeof(*job));
      job->job = n;
      job->total = kTotals[t];
      job->grain = kGrains[g];
      job->threads = threads;
      ckw_pool_run(p, job->total, job->grain, chunk, job);
      EXPECT(atomic_load(&job->bad_chunks) == 0, "threads=%d total=%lld grain=%lld: a chunk off the grain or range",
             threads, (long long)job->total, (long long)job->grain);
      const int64_t units = job->total / job->grain;
      const int most = units < threads ? (int)units : threads;
      const int want_chunks = most <= 1 ? 1 : most;
      EXPECT(atomic_load(&job->chunks) == want_chunks, "threads=%d total=%lld grain=%lld: %d chunks, want %d", threads,
             (long long)job->total, (long long)job->grain, atomic_load(&job->chunks), want_chunks);
      for (int64_t i = 0; i < job->total; ++i) {
        if (atomic_load(&job->writes[i]) != 1 || job->out[i] != value(job->job, i)) {
          EXPECT(0, "threads=%d total=%lld grain=%lld: element %lld written %d times", threads, (long long)job->total,
                 (long long)job->grain, (long long)i, atomic_load(&job->writes[i]));
          break;
        }
        *digest = *digest * 31 + job->out[i];
      }
      if (pause_us) usleep((useconds_t)pause_us);  // long enough for the workers to go to sleep
    }
  }
  free(job);
}

struct parallel_run {
  int threads;
  uint64_t digest;
};

static void *run_pool(void *arg) {
  struct parallel_run *r = arg;
  struct ckw_pool *p = ckw_pool_create(r->threads);
  for (int rep = 0; rep < 20; ++rep) run_jobs(p, ckw_pool_threads(p), 0, &r->digest);
  ckw_pool_free(p);
  return NULL;
}

static void test_thread_counts_give_the_same_outputs(void) {
  uint64_t want = 0;
  for (int threads = 1; threads <= 4; ++threads) {
    struct ckw_pool *p = ckw_pool_create(threads);
    EXPECT(p != NULL, "create(%d)", threads);
    if (!p) continue;
    EXPECT(ckw_pool_threads(p) == threads, "create(%d) has %d threads", threads, ckw_pool_threads(p));
    for (int rep = 0; rep < kJobs; ++rep) {
      uint64_t digest = 0;
      run_jobs(p, threads, rep % 8 == 7 ? 300 : 0, &digest);  // every 8th round: workers sleep between jobs
      if (threads == 1 && rep == 0) want = digest;
      EXPECT(digest == want, "threads=%d round %d: outputs differ from one thread's", threads, rep);
    }
    ckw_pool_free(p);
  }
}

static void test_two_pools_at_once(void) {
  struct parallel_run runs[2] = {{2, 0}, {3, 0}};
  pthread_t t[2];
  for (int i = 0; i < 2; ++i) EXPECT(pthread_create(&t[i], NULL, run_pool, &runs[i]) == 0, "pthread_create");
  for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
  struct parallel_run alone = {1, 0};
  run_pool(&alone);
  EXPECT(runs[0].digest == alone.digest && runs[1].digest == alone.digest, "two pools at once: outputs differ");
}

static void test_thread_count(void) {
  unsetenv("CKW_NUM_THREADS");
  EXPECT(ckw_pool_thread_count(3, 8) == 3, "requested 3");
  EXPECT(ckw_pool_thread_count(20, 8) == 8, "capped at 8");
  EXPECT(ckw_pool_thread_count(2, 0) == 1, "cap below 1: one thread");
  const int cpus = ckw_pool_thread_count(0, 64);
  EXPECT(cpus >= 1, "the CPUs: %d", cpus);
  setenv("CKW_NUM_THREADS", "2", 1);
  EXPECT(ckw_pool_thread_count(0, 8) == 2, "CKW_NUM_THREADS=2");
  EXPECT(ckw_pool_thread_count(5, 8) == 5, "an argument wins over CKW_NUM_THREADS");
  setenv("CKW_NUM_THREADS", "99", 1);
  EXPECT(ckw_pool_thread_count(0, 8) == 8, "CKW_NUM_THREADS=99 capped");
  const char *ignored[] = {"", "0", "-3", "2x", "two"};
  for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); ++i) {
    setenv("CKW_NUM_THREADS", ignored[i], 1);
    EXPECT(ckw_pool_thread_count(0, 64) == cpus, "CKW_NUM_THREADS='%s' is ignored", ignored[i]);
  }
  unsetenv("CKW_NUM_THREADS");
  EXPECT(ckw_pool_threads(NULL) == 1, "no pool: one thread");
  struct ckw_pool *one = ckw_pool_create(0);
  EXPECT(one && ckw_pool_threads(one) == 1, "create(0): one thread");
  ckw_pool_free(one);
  ckw_pool_free(NULL);
}

int main(void) {
  test_thread_count();
  test_thread_counts_give_the_same_outputs();
  test_two_pools_at_once();
  return test_finish("ckw_pool");
}
