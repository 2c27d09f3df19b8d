"""The tolerance policy, written once (mirrors tolerance.h).

Integers exact; a float kernel passes when
``max_abs_err <= c * eps32 * sqrt(K) * max(max|ref|, FLOOR)``, K the reduction length and c the
constant stated in the kernel's map (``contract.tolerance_c``).
"""

import numpy as np

FLOOR = 1.0
EPS32 = float(np.finfo(np.float32).eps)


def bound(c: float, k: int, max_abs_ref: float) -> float:
    return c * EPS32 * np.sqrt(max(int(k), 1)) * max(float(max_abs_ref), FLOOR)


def assert_close(got, ref, c: float, k: int, what: str = "kernel") -> None:
    got = np.asarray(got)
    ref = np.asarray(ref)
    if got.shape != ref.shape:
        raise AssertionError(f"{what}: shape {got.shape} != reference shape {ref.shape}")
    if np.issubdtype(ref.dtype, np.integer):
        if not np.array_equal(got, ref):
            bad = np.argwhere(got != ref)[0]
            raise AssertionError(f"{what}: integer mismatch at {tuple(bad)}: {got[tuple(bad)]} != {ref[tuple(bad)]}")
        return
    err = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    limit = bound(c, k, np.max(np.abs(ref)) if ref.size else 0.0)
    if ref.size and not (np.nanmax(err) <= limit and not np.isnan(err).any()):
        i = np.unravel_index(np.nanargmax(err) if not np.isnan(err).any() else np.argmax(np.isnan(err)), err.shape)
        raise AssertionError(
            f"{what}: max_abs_err {err[i]:.3g} > bound {limit:.3g} (c={c}, K={k}) at {i}: "
            f"got {got[i]!r} want {ref[i]!r}"
        )
