"""The meaning of StableHLO's ``check.*`` custom calls, over numpy arrays.

* ``expect_eq``: every element exactly equal (NaN equals NaN).
* ``expect_close``: ULP distance <= 3 per element (complex: the larger of the
  real and imaginary distances); NaN vs NaN is 0; other non-finite values
  must be bitwise equal.
* ``expect_almost_eq``: |actual - expected| <= 1e-3; NaN equals NaN;
  non-finite values must be equal.

Example::

    verdict = compare("expect_close", actual, expected)
    if not verdict.ok: print(verdict.message)
"""

from __future__ import annotations

import dataclasses

import numpy as np

MAX_ULP = 3
ALMOST_EQ_TOLERANCE = 1e-3


@dataclasses.dataclass(frozen=True)
class Verdict:
    """The outcome of one check: ``ok`` and a one-line ``message``."""

    ok: bool
    message: str


def _is_inexact(array: np.ndarray) -> bool:
    return array.dtype.kind in "fc" or (array.dtype.kind == "V" or "float" in array.dtype.name)


def _float_parts(array: np.ndarray) -> list[np.ndarray]:
    if array.dtype.kind == "c":
        return [np.ascontiguousarray(array.real), np.ascontiguousarray(array.imag)]
    return [array]


def ulp_distance(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Per-element ULP distance (uint64) of two same-dtype real float arrays.

    NaN/NaN gives 0; other pairs involving a non-finite value give 0 when
    bitwise equal and the maximum uint64 otherwise.
    """
    unsigned = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[actual.dtype.itemsize]
    bits = actual.dtype.itemsize * 8
    a_bits = actual.view(unsigned).astype(np.uint64)
    e_bits = expected.view(unsigned).astype(np.uint64)
    sign = np.uint64(1) << np.uint64(bits - 1)
    a_sign, e_sign = (a_bits & sign) != 0, (e_bits & sign) != 0
    a_mag, e_mag = a_bits & (sign - np.uint64(1)), e_bits & (sign - np.uint64(1))
    same = a_sign == e_sign
    distance = np.where(same, np.where(a_mag > e_mag, a_mag - e_mag, e_mag - a_mag), a_mag + e_mag)
    a_f, e_f = actual.astype(np.float64), expected.astype(np.float64)
    a_nan, e_nan = np.isnan(a_f), np.isnan(e_f)
    non_finite = ~np.isfinite(a_f) | ~np.isfinite(e_f)
    big = np.iinfo(np.uint64).max
    distance = np.where(non_finite, np.where(a_bits == e_bits, 0, big), distance)
    distance = np.where(a_nan & e_nan, 0, distance)
    return distance.astype(np.uint64)


def _describe(kind: str, actual: np.ndarray, bad: np.ndarray, detail: str) -> str:
    return (f"{kind} {actual.dtype}{list(actual.shape)}: {int(bad.sum())}/{bad.size} elements differ{detail}")


def compare(kind: str, actual: np.ndarray, expected: np.ndarray) -> Verdict:
    """Judge one ``check.<kind>`` pair; unknown kinds fail with a clear message."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return Verdict(False, f"{kind}: actual {actual.dtype}{list(actual.shape)} vs expected "
                              f"{expected.dtype}{list(expected.shape)}")
    if kind == "expect_eq" or (kind in ("expect_close", "expect_almost_eq") and not _is_inexact(actual)):
        if _is_inexact(actual):
            parts = zip(_float_parts(actual), _float_parts(expected))
            bad = np.zeros(actual.shape, bool)
            for a, e in parts:
                a64, e64 = a.astype(np.float64), e.astype(np.float64)
                bad |= ~((a64 == e64) | (np.isnan(a64) & np.isnan(e64)))
        else:
            bad = actual != expected
        ok = not bad.any()
        return Verdict(ok, f"{kind} {actual.dtype}{list(actual.shape)}: ok" if ok else _describe(kind, actual, bad, ""))
    if kind == "expect_close":
        distance = np.zeros(actual.shape, np.uint64)
        for a, e in zip(_float_parts(actual), _float_parts(expected)):
            distance = np.maximum(distance, ulp_distance(a, e))
        bad = distance > MAX_ULP
        if not bad.any():
            worst = int(distance.max()) if distance.size else 0
            return Verdict(True, f"{kind} {actual.dtype}{list(actual.shape)}: ok (max ULP {worst})")
        worst = distance[bad].max()
        text = "inf" if worst == np.iinfo(np.uint64).max else str(int(worst))
        return Verdict(False, _describe(kind, actual, bad, f" (max ULP {text} > {MAX_ULP})"))
    if kind == "expect_almost_eq":
        bad = np.zeros(actual.shape, bool)
        for a, e in zip(_float_parts(actual), _float_parts(expected)):
            a64, e64 = a.astype(np.float64), e.astype(np.float64)
            both_nan = np.isnan(a64) & np.isnan(e64)
            finite = np.isfinite(a64) & np.isfinite(e64)
            with np.errstate(invalid="ignore", over="ignore"):
                close = np.where(finite, np.abs(a64 - e64) <= ALMOST_EQ_TOLERANCE, a64 == e64)
            bad |= ~(close | both_nan)
        ok = not bad.any()
        return Verdict(ok, f"{kind} {actual.dtype}{list(actual.shape)}: ok" if ok
                       else _describe(kind, actual, bad, f" (|a-e| > {ALMOST_EQ_TOLERANCE})"))
    return Verdict(False, f"unknown check kind 'check.{kind}'")
