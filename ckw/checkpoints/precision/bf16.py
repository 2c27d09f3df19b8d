"""float32 -> bfloat16 bit patterns, rounded to nearest even, NaN kept a (quiet) NaN."""

import numpy as np


def round_to_bf16(x: np.ndarray) -> np.ndarray:
    """The bf16 bits (uint16) nearest to each float32 of `x`; ties go to the even pattern, values
    past the largest bf16 round to infinity as IEEE says, and a NaN stays a NaN with its sign
    (truncating could turn a NaN whose payload is all in the low bits into infinity)."""
    bits = np.ascontiguousarray(x, dtype="<f4").view("<u4").astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    quiet_nan = ((bits >> 16) | 0x0040).astype(np.uint16)
    return np.where(np.isnan(x), quiet_nan, rounded).astype("<u2")


def widen(bits: np.ndarray) -> np.ndarray:
    """bf16 bits (uint16) -> float32, exact."""
    return (np.asarray(bits, dtype="<u2").astype(np.uint32) << 16).view("<f4")
