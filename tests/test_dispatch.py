"""jit's fast call path (``toolkit.dispatch``: ``FastPath`` before the signature, ``fast_caller``).

The fast path answers calls of pytrees of Arrays from what an earlier call
remembered (a dict's key order, the last hit's tree and avals, the
executable's expected shardings). These tests pin what it must give: the
same values and output structure as the full path, and a fall back to the
full path (never a wrong answer) whenever an input is not what it remembered.
"""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from toolkit import dispatch


def _params(keys, shape=(8,)):
    return {k: toolkit.device_put(np.full(shape, i, np.float32)) for i, k in enumerate(keys)}


def _inc_tree(p):
    return {k: v + 1 for k, v in p.items()}


@pytest.mark.parametrize("keys", [["w0", "w1", "w2"], ["b", "c", "a"]], ids=["sorted", "unsorted"])
def test_dict_argument_repeated_and_fed_back(keys, compilations):
    f = toolkit.jit(_inc_tree)
    params = _params(keys)
    expected = {k: np.full(8, i + 1, np.float32) for i, k in enumerate(keys)}
    for _ in range(3):  # the same dict again: the remembered key order gives its leaves
        out = f(params)
        assert list(out) == sorted(keys)  # as tree_unflatten builds dicts: keys in sorted order
        for k in keys:
            np.testing.assert_array_equal(np.asarray(out[k]), expected[k])
    out = params
    for step in range(4):  # outputs fed back: new aval objects equal to the remembered ones
        out = f(out)
        for i, k in enumerate(keys):
            np.testing.assert_array_equal(np.asarray(out[k]), np.full(8, i + 1 + step, np.float32))
    assert compilations[0] == 1


def test_dict_of_another_shape_with_the_same_keys_compiles_again(compilations):
    f = toolkit.jit(_inc_tree)
    f(_params(["a", "b"]))
    out = f(_params(["a", "b"], shape=(2, 3)))
    assert out["b"].shape == (2, 3)
    np.testing.assert_array_equal(np.asarray(out["b"]), np.full((2, 3), 2, np.float32))
    assert compilations[0] == 2
    out = f(_params(["a", "b"]))  # and back: the first executable, no third compile
    assert out["a"].shape == (8,) and compilations[0] == 2


def test_a_leaf_that_is_not_an_array_takes_the_full_path(compilations):
    f = toolkit.jit(_inc_tree)
    params = _params(["a", "b"])
    f(params)
    mixed = {"a": params["a"], "b": np.full(8, 5, np.float32)}  # numpy leaf: same avals, not an Array
    out = f(mixed)
    np.testing.assert_array_equal(np.asarray(out["b"]), np.full(8, 6, np.float32))
    assert compilations[0] == 1


def test_arguments_on_another_device_are_moved_not_misread():
    devices = toolkit.devices()
    if len(devices) < 2:
        pytest.skip("needs two devices")
    f = toolkit.jit(_inc_tree)
    f(_params(["a", "b"]))
    elsewhere = {k: toolkit.device_put(np.full(8, i, np.float32), devices[1]) for i, k in enumerate("ab")}
    out = f(elsewhere)  # committed to device 1: the expected-sharding check misses, the full path runs
    np.testing.assert_array_equal(np.asarray(out["b"]), np.full(8, 2, np.float32))
    assert out["b"].devices() == {devices[1]}


@pytest.mark.parametrize("make", [tuple, list], ids=["tuple", "list"])
def test_flat_sequence_outputs_keep_their_type(make):
    f = toolkit.jit(lambda a, b: make([a + 1, b * 2, a - b]))
    a, b = (toolkit.device_put(np.full(4, v, np.float32)) for v in (3, 2))
    for _ in range(2):
        out = f(a, b)
        assert type(out) is make and len(out) == 3
        np.testing.assert_array_equal(np.asarray(out[2]), np.full(4, 1, np.float32))


def test_output_builder_handles_only_flat_containers():
    flat_dict = toolkit.tree_util.tree_structure({"b": 0, "a": 0})
    build = dispatch.output_builder(flat_dict, 2)
    assert build(["x", "y"]) == {"a": "x", "b": "y"}
    nested = toolkit.tree_util.tree_structure({"a": (0, 0)})
    assert dispatch.output_builder(nested, 2) is None


def test_clear_cache_forgets_the_last_hits_too():
    f = toolkit.jit(lambda a: a + 1)
    x = toolkit.device_put(np.ones(4, np.float32))
    f(f(x))  # the last hit remembered
    f.clear_cache()
    fast = f._fast_path
    assert fast.entries == {} and fast.last_single is None and fast.last_many is None
    np.testing.assert_array_equal(np.asarray(f(x)), np.full(4, 2, np.float32))  # the full path, then remembered
    assert fast.last_single is None and len(fast.entries) == 1
