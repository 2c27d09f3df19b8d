"""The machine's yardsticks for //tools:benchmark_e2e: OpenBLAS sgemm GFLOPS (numpy float32 matmul at
the encoder's MLP shape, on the benchmark's thread count), the encoder's FLOPs per 30 s window
from the model dimensions, and the CPU model and ISA flags with the path ckw dispatches to."""

import statistics
import time
from typing import Dict, List, Optional

import numpy as np

ISA_FLAGS = ("avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512_bf16", "amx_bf16")


def cpu_info(path: str = "/proc/cpuinfo") -> Dict:
    """CPU model, logical CPUs and which of ISA_FLAGS the kernel reports."""
    model, flags, cpus = "unknown", set(), 0
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "processor":
                    cpus += 1
                elif key == "model name" and model == "unknown":
                    model = value.strip()
                elif key == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    return {"model": model, "logical_cpus": cpus, "flags": {f: f in flags for f in ISA_FLAGS}}


def ckw_isa(flags: Dict[str, bool], cap: Optional[str] = None) -> str:
    """The path ckw's fp32 kernels take on these flags: kernels/common/cpu.h's rule (AVX-512 needs F, BW,
    DQ, VL and F16C; AVX2 needs AVX2, FMA and F16C; otherwise scalar), at most `cap` (CKW_ISA) when it names a
    slower one. The libraries do not report their choice, so this is the same rule on the same flags."""
    order = ["scalar", "avx2", "avx512"]
    best = "scalar"
    if all(flags.get(f) for f in ("avx512f", "avx512bw", "avx512dq", "avx512vl", "f16c")):
        best = "avx512"
    elif flags.get("avx2") and flags.get("fma") and flags.get("f16c"):
        best = "avx2"
    return cap if cap in order and order.index(cap) < order.index(best) else best


def encoder_flops(config: Dict, frames: int = 3000) -> int:
    """Multiply-adds x 2 of one encoder run over `frames` mel frames (a 30 s window): the two convs
    (kernel 3; the second with stride 2), then per block the Q, K, V and output projections, the
    attention scores and the weighted sum (all heads: n_ctx x n_ctx x d each), and the MLP (d -> 4d ->
    d). Norms, softmax, GELU and biases are left out (under 1%)."""
    d, mels, layers = config["n_audio_state"], config["n_mels"], config["n_audio_layer"]
    ctx = frames // 2
    convs = 2 * frames * mels * 3 * d + 2 * ctx * d * 3 * d
    projections = 4 * 2 * ctx * d * d
    attention = 2 * 2 * ctx * ctx * d
    mlp = 2 * 2 * ctx * d * 4 * d
    return convs + layers * (projections + attention + mlp)


def blas_info() -> List[Dict]:
    try:
        import threadpoolctl
    except ImportError:
        return []
    return [
        {
            k: v
            for k, v in lib.items()
            if k in ("internal_api", "version", "architecture", "num_threads", "threading_layer", "filepath")
        }
        for lib in threadpoolctl.threadpool_info()
        if lib.get("user_api") == "blas"
    ]


class Sgemm:
    """numpy float32 C = A @ B, A [m, k], B [k, n] (default: the encoder MLP's first matmul), with
    OpenBLAS limited to `threads` through threadpoolctl while it runs."""

    def __init__(self, m: int, k: int, n: int, threads: int, reps: int = 10):
        rng = np.random.default_rng(0)
        self.a = rng.standard_normal((m, k), dtype=np.float32)
        self.b = rng.standard_normal((k, n), dtype=np.float32)
        self.c = np.empty((m, n), np.float32)
        self.shape, self.threads, self.reps = (m, k, n), threads, reps
        self.flops = 2 * m * k * n

    def run(self) -> float:
        """Median GFLOPS over `reps` products (after one untimed product)."""
        try:
            from threadpoolctl import threadpool_limits

            limit = threadpool_limits(limits=self.threads, user_api="blas")
        except ImportError:
            limit = None  # OPENBLAS_NUM_THREADS, if set before numpy loaded, still applies
        try:
            np.matmul(self.a, self.b, out=self.c)
            times = []
            for _ in range(self.reps):
                t0 = time.perf_counter()
                np.matmul(self.a, self.b, out=self.c)
                times.append(time.perf_counter() - t0)
        finally:
            if limit is not None:
                limit.restore_original_limits()
        return self.flops / statistics.median(times) / 1e9
