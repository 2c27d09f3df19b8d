"""float32 -> int8 with one float32 scale per output channel (a weight's row), symmetric.

For each row n of a weight [N, ...]: scale[n] = max|w[n]| / 127 as float32, q = w / scale[n]
rounded half to even into [-127, 127] (float64 arithmetic, so every machine writes the same
bytes); a row of zeros has scale 0 and q 0. The value a kernel computes with is q * scale[n]
(kernels/gemm/i8w_gemm_nt.json)."""

import numpy as np

from ckw.checkpoints.errors import CheckpointError


def quantize_rows(x: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(q int8 of x's shape, scale float32 [rows])."""
    rows = np.asarray(x, dtype=np.float64).reshape(x.shape[0], -1)
    if not np.isfinite(rows).all():
        raise CheckpointError(
            f"tensor {name}: holds NaN or infinity, which int8 cannot store; derive from a finite checkpoint"
        )
    scale = (np.abs(rows).max(axis=1) / 127.0).astype("<f4")
    divisor = np.where(scale > 0, scale.astype(np.float64), 1.0)
    q = np.clip(np.rint(rows / divisor[:, None]), -127, 127).astype("|i1")
    return q.reshape(x.shape), scale


def dequantize_rows(q: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """The float32 values q * scale[n] that the int8 kernels compute with."""
    return (q.reshape(q.shape[0], -1).astype(np.float32) * scale[:, None]).reshape(q.shape)
