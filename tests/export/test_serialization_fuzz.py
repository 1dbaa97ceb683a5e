"""Fuzzing ``deserialize``: mutated and truncated blobs raise ValueError or read back benignly.

The format has no checksum (JAX's neither), so a mutation that lands in a
string's bytes, a dimension digit or the embedded module is indistinguishable
from a different valid blob: then ``deserialize`` returns an ``Exported``,
and that object must still be internally consistent (re-serializable).
Every other outcome must be ``ValueError``: never another exception, a hang
or a crash.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _exported_helpers import make_exported
from toolkit.core import pytrees
from toolkit.core.avals import ShapedArray
from toolkit.core.shape_poly import symbolic_shape
from toolkit.export import DisabledSafetyCheck, Exported, ExportedAbstractMesh, ExportedNamedSharding, deserialize


def _rich_exported() -> Exported:
    a, b = symbolic_shape("a, b")
    mesh = ExportedAbstractMesh((2, 4), ("x", "y"), ("Explicit", "Auto"))
    tree = ((collections.OrderedDict([("p", 1), ("q", None)]), [2]), {"k": 3})
    in_avals = (ShapedArray((a, 8), np.float32), ShapedArray((8, b), np.int32), ShapedArray((), np.bool_))
    return make_exported(
        in_tree=pytrees.tree_structure(tree), in_avals=in_avals, out_avals=in_avals[:2],
        out_tree=pytrees.tree_structure((1, 2)), module_kept_var_idx=(0, 2), nr_devices=8,
        platforms=("cpu", "cuda"), uses_global_constants=True,
        disabled_safety_checks=(DisabledSafetyCheck.custom_call("t"), DisabledSafetyCheck.platform()),
        _in_named_shardings=(ExportedNamedSharding(mesh, ("x", "y")), None, None),
        _out_named_shardings=(ExportedNamedSharding(mesh, ("x",)), None),
        _get_vjp=lambda e: make_exported(fun_name="vjp"))


BLOBS = [bytes(make_exported().serialize()), bytes(_rich_exported().serialize(vjp_order=1))]


def _check(blob: bytes) -> None:
    try:
        exp = deserialize(blob)
    except ValueError as e:
        assert str(e), "ValueError without a message"
        return
    assert isinstance(exp, Exported)
    exp.serialize()  # a benign mutation still gives a coherent object


_settings = settings(max_examples=int(__import__("os").environ.get("TOOLKIT_FUZZ_EXAMPLES", "300")), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_settings
@given(which=st.sampled_from(range(len(BLOBS))), data=st.data())
def test_byte_mutations(which, data):
    blob = bytearray(BLOBS[which])
    n = data.draw(st.integers(1, 8))
    for _ in range(n):
        pos = data.draw(st.integers(0, len(blob) - 1))
        blob[pos] = data.draw(st.integers(0, 255))
    _check(bytes(blob))


@_settings
@given(which=st.sampled_from(range(len(BLOBS))), data=st.data())
def test_offset_mutations(which, data):
    """Overwrite aligned 32-bit words (offsets, lengths) with hostile values."""
    blob = bytearray(BLOBS[which])
    pos = data.draw(st.integers(0, len(blob) // 4 - 1)) * 4
    value = data.draw(st.sampled_from([0, 1, 4, 0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, len(blob), len(blob) - 4])
                      | st.integers(0, 2**32 - 1))
    blob[pos:pos + 4] = value.to_bytes(4, "little")
    _check(bytes(blob))


@_settings
@given(which=st.sampled_from(range(len(BLOBS))), data=st.data())
def test_truncations(which, data):
    blob = BLOBS[which]
    cut = data.draw(st.integers(0, len(blob) - 1))
    with pytest.raises(ValueError):
        deserialize(blob[:cut])


@_settings
@given(st.binary(max_size=512))
def test_random_bytes(blob):
    _check(blob)


def test_every_single_truncation_of_the_small_blob():
    blob = BLOBS[0]
    for cut in range(len(blob)):
        with pytest.raises(ValueError):
            deserialize(blob[:cut])
