"""A memory-read bandwidth probe for //tools:benchmark_e2e and //tools:benchmark_sizes: the
yardstick of a decoder step, which streams the decoder's weights and K/V caches once per token.

Each of `threads` Python threads reads its own 1/threads of a buffer much larger than the L3
(default 1 GiB) with OpenBLAS's sdot of the slice with itself (BLAS limited to one thread per
call, the GIL released inside it): one fused multiply-add per 8 floats loaded is far below what a
core computes, so the time is the memory's, and x . x reads each byte once (numpy's sum is
pairwise, not streaming, and can be compute-bound). GB/s = bytes of the buffer / wall time of all
threads; the median over `reps`, after one untimed pass (page faults). best_of() also tries fewer
threads and keeps the highest rate: on a busy machine one thread can stream faster than two, and
the floor a decoder step is held to should be the most the memory delivered, not the least."""

import statistics
import threading
import time

import numpy as np


class ReadBandwidth:
    def __init__(self, threads: int, nbytes: int = 1 << 30, reps: int = 5):
        self.threads, self.reps = threads, reps
        self.buffer = np.ones(nbytes // 4, np.float32)  # written once: every page is resident
        self.nbytes = self.buffer.nbytes
        step = -(-self.buffer.size // threads)
        self.slices = [self.buffer[i : i + step] for i in range(0, self.buffer.size, step)]

    def _pass(self) -> float:
        def read(x):
            np.dot(x, x)

        workers = [threading.Thread(target=read, args=(s,)) for s in self.slices]
        t0 = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        return time.perf_counter() - t0

    def run(self) -> float:
        """Median GB/s (1e9 bytes) over `reps` passes."""
        try:
            from threadpoolctl import threadpool_limits

            limit = threadpool_limits(limits=1, user_api="blas")  # the threads here are the parallelism
        except ImportError:
            limit = None
        try:
            self._pass()
            times = [self._pass() for _ in range(self.reps)]
        finally:
            if limit is not None:
                limit.restore_original_limits()
        return self.nbytes / statistics.median(times) / 1e9

    def best(self) -> dict:
        """GB/s per thread count 1..threads and the highest of them (the one buffer reused)."""
        rates = {}
        for t in range(1, self.threads + 1):
            step = -(-self.buffer.size // t)
            self.slices = [self.buffer[i : i + step] for i in range(0, self.buffer.size, step)]
            rates[t] = self.run()
        return {"gbps": max(rates.values()), "per_threads": rates, "buffer_bytes": self.nbytes}


def best_of(threads: int, reps: int = 5) -> dict:
    """ReadBandwidth.best on a buffer of its own."""
    return ReadBandwidth(threads, reps=reps).best()
