"""``--arg`` values (toolkit/tools/argument_values.py): read from ``.npy`` or JSON, fitted to a parameter losslessly."""

from __future__ import annotations

import numpy as np
import pytest

from toolkit.tools.argument_values import checked_array, load_argument_value


@pytest.mark.parametrize("text, expected", [
    ("2", np.array(2)), ("[1, 2.5]", np.array([1, 2.5])), ("true", np.array(True)),
    ("[nan, -inf, inf]", np.array([np.nan, -np.inf, np.inf])),
])
def test_json_literals(text, expected) -> None:
    value, literal = load_argument_value(text)
    assert literal
    np.testing.assert_array_equal(value, expected)


def test_npy_files_are_not_literals(tmp_path) -> None:
    np.save(tmp_path / "x.npy", np.arange(3, dtype=np.int8))
    value, literal = load_argument_value(str(tmp_path / "x.npy"))
    assert not literal and value.dtype == np.int8
    with pytest.raises(ValueError, match="cannot read the .npy file"):
        load_argument_value(str(tmp_path / "missing.npy"))


@pytest.mark.parametrize("text, message", [
    ('"x"', "is neither a .npy file nor a JSON number/list"),
    ('{"a": 1}', "is neither a .npy file nor a JSON number/list"),
    ("", "is neither a .npy file nor a JSON number/list"),
    ("[[1, 2], [3]]", "is not a rectangular list of numbers"),
    ("123456789012345678901234567890", "does not fit in 64 bits"),
])
def test_unreadable_values(text, message) -> None:
    with pytest.raises(ValueError, match=message):
        load_argument_value(text)


@pytest.mark.parametrize("value, dtype, message", [
    (1.5, np.int32, "1.5 is not an integer"),
    (4000000000, np.int32, "4000000000 is out of the range of int32"),
    (-1, np.uint8, "-1 is out of the range of uint8"),
    (2, np.bool_, "2 is not a boolean"),
    (1e300, np.float32, "overflows float32"),
    (2**24 + 1, np.float32, "is not exactly representable in float32"),
])
def test_literals_never_convert_lossily(value, dtype, message) -> None:
    with pytest.raises(ValueError, match=message):
        checked_array(np.asarray(value), dtype)


def test_literals_that_survive_convert() -> None:
    assert checked_array(np.asarray(3.0), np.int32).dtype == np.int32
    assert checked_array(np.asarray([0, 1]), np.bool_).tolist() == [False, True]
    assert checked_array(np.asarray(2), np.float32, (2, 2)).tolist() == [[2, 2], [2, 2]]  # a scalar broadcasts


def test_npy_arrays_cast_only_safely() -> None:
    assert checked_array(np.int8(3), np.int32, literal=False).dtype == np.int32
    with pytest.raises(ValueError, match="has dtype float64, the parameter is float32"):
        checked_array(np.ones(2), np.float32, literal=False)


def test_shapes() -> None:
    assert checked_array(np.ones((5, 3)), np.float64, (None, 3)).shape == (5, 3)  # None: a symbolic size
    with pytest.raises(ValueError, match=r"has shape \(2,\), the parameter is float64\[\?, 3\]"):
        checked_array(np.ones(2), np.float64, (None, 3))
