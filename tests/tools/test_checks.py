"""check.* semantics of StableHLO's test programs."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from toolkit.tools.checks import compare, ulp_distance


def test_expect_eq() -> None:
    assert compare("expect_eq", np.array([1, 2]), np.array([1, 2])).ok
    verdict = compare("expect_eq", np.array([1, 2]), np.array([1, 3]))
    assert not verdict.ok and "1/2 elements differ" in verdict.message
    assert compare("expect_eq", np.array([np.nan]), np.array([np.nan])).ok
    assert not compare("expect_eq", np.array([1.0], np.float32), np.array([1.0], np.float64)).ok


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, ml_dtypes.bfloat16])
def test_expect_close_counts_ulps(dtype) -> None:
    one = np.array([1.0], dtype)
    up3 = one.copy()
    for _ in range(3):
        up3 = np.nextafter(up3.astype(np.float64), 2).astype(dtype) if dtype == ml_dtypes.bfloat16 else np.nextafter(up3, dtype(2))
    if dtype != ml_dtypes.bfloat16:
        assert ulp_distance(one, up3)[0] == 3
        assert compare("expect_close", one, up3).ok
        up4 = np.nextafter(up3, dtype(2))
        assert not compare("expect_close", one, up4).ok


def test_expect_close_special_values() -> None:
    f = np.float32
    assert compare("expect_close", np.array([np.nan], f), np.array([np.nan], f)).ok
    assert compare("expect_close", np.array([np.inf], f), np.array([np.inf], f)).ok
    assert not compare("expect_close", np.array([np.inf], f), np.array([-np.inf], f)).ok
    assert not compare("expect_close", np.array([np.nan], f), np.array([1.0], f)).ok
    # +0 and -0 are adjacent in ULP terms (distance 0).
    assert compare("expect_close", np.array([0.0], f), np.array([-0.0], f)).ok
    tiny = np.array([np.finfo(f).smallest_subnormal], f)
    assert ulp_distance(tiny, -tiny)[0] == 2


def test_expect_close_complex_takes_the_worse_part() -> None:
    a = np.array([1 + 1j], np.complex64)
    b = np.array([1 + complex(0, float(np.nextafter(np.float32(1), np.float32(2))))], np.complex64)
    assert compare("expect_close", a, b).ok
    far = np.array([1 + 2j], np.complex64)
    assert not compare("expect_close", a, far).ok


def test_expect_close_on_integers_is_exact() -> None:
    assert compare("expect_close", np.array([3], np.int8), np.array([3], np.int8)).ok
    assert not compare("expect_close", np.array([3], np.int8), np.array([4], np.int8)).ok


def test_expect_almost_eq() -> None:
    assert compare("expect_almost_eq", np.array([1.0]), np.array([1.0009])).ok
    assert not compare("expect_almost_eq", np.array([1.0]), np.array([1.0011])).ok
    assert compare("expect_almost_eq", np.array([np.nan, np.inf]), np.array([np.nan, np.inf])).ok
    assert not compare("expect_almost_eq", np.array([np.inf]), np.array([1.0])).ok


def test_unknown_kind_and_shape_mismatch() -> None:
    assert "unknown check kind 'check.expect_magic'" in compare("expect_magic", np.zeros(1), np.zeros(1)).message
    verdict = compare("expect_eq", np.zeros((2,)), np.zeros((3,)))
    assert not verdict.ok and "float64[2] vs expected float64[3]" in verdict.message
