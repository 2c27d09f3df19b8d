"""The Python tolerance policy agrees with the C one and rejects what it must."""

import numpy as np
import pytest

from kernels.common import tolerance


def test_identical_and_ulp_pass():
    ref = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
    tolerance.assert_close(ref.copy(), ref, c=1.0, k=16)
    got = ref.copy()
    got[2] = np.nextafter(np.float32(3.0), np.float32(4.0))
    tolerance.assert_close(got, ref, c=1.0, k=16)


def test_large_error_and_nan_fail():
    ref = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
    got = ref.copy()
    got[2] += 1e-3
    with pytest.raises(AssertionError, match="max_abs_err"):
        tolerance.assert_close(got, ref, c=1.0, k=16)
    got[2] = np.nan
    with pytest.raises(AssertionError):
        tolerance.assert_close(got, ref, c=1000.0, k=16)


def test_integers_exact_and_shapes_checked():
    ref = np.array([1, 2, 3], np.int32)
    tolerance.assert_close(ref.copy(), ref, c=1e9, k=1)
    with pytest.raises(AssertionError, match="integer mismatch"):
        tolerance.assert_close(np.array([1, 2, 4], np.int32), ref, c=1e9, k=1)
    with pytest.raises(AssertionError, match="shape"):
        tolerance.assert_close(np.zeros(2), np.zeros(3), c=1.0, k=1)


def test_bound_scaling():
    assert tolerance.bound(1.0, 64, 1.0) == pytest.approx(2 * tolerance.bound(1.0, 16, 1.0))
    assert tolerance.bound(1.0, 1, 1e-9) == tolerance.bound(1.0, 1, 1.0)
