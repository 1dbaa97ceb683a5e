"""Effects toolkit has never seen: kept as opaque effects named by their type string; inspect and call work.

The blobs are written by JAX with a primitive of the test's own (an ordered
and an unordered effect type JAX registers here, as JAX's own export tests
do), so the effect type names are ones toolkit cannot know. An ordered
effect's token is threaded through ``@main``; toolkit chains the tokens of
successive calls in one computation.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")
from jax import export as jexport  # noqa: E402
from jax._src import core as jax_core  # noqa: E402
from jax._src import effects as jax_effects  # noqa: E402
from jax._src.interpreters import mlir as jax_mlir  # noqa: E402
from jaxlib.mlir.dialects import stablehlo  # noqa: E402

import toolkit  # noqa: E402
from toolkit import export  # noqa: E402

F32 = np.float32


class ToolkitTestOrderedEffect(jax_effects.Effect):
    """An ordered effect toolkit has never heard of (nullary constructor, equal by type: serializable by JAX)."""

    def __eq__(self, other):
        return type(other) is type(self)

    def __hash__(self):
        return hash(type(self))


class ToolkitTestUnorderedEffect(jax_effects.Effect):
    """An unordered one (not a subclass: JAX's effect sets match by isinstance)."""

    def __eq__(self, other):
        return type(other) is type(self)

    def __hash__(self):
        return hash(type(self))


for _effect in (ToolkitTestOrderedEffect, ToolkitTestUnorderedEffect):
    jax_effects.lowerable_effects.add_type(_effect)
    jax_effects.control_flow_allowed_effects.add_type(_effect)
jax_effects.ordered_effects.add_type(ToolkitTestOrderedEffect)

_double_p = jax_core.Primitive("toolkit_test_effectful_double")
_double_p.def_effectful_abstract_eval(lambda x, *, effect: (x, {effect}))
_double_p.def_impl(lambda x, *, effect: x + x)


def _double_lowering(ctx, x, *, effect):
    if isinstance(effect, ToolkitTestOrderedEffect):
        ctx.set_tokens_out(jax_mlir.TokenSet({effect: stablehlo.AfterAllOp([ctx.tokens_in.get(effect)]).result}))
    return [stablehlo.add(x, x)]


jax_mlir.register_lowering(_double_p, _double_lowering)


def _f(x):
    y = _double_p.bind(x, effect=ToolkitTestOrderedEffect())
    return _double_p.bind(y, effect=ToolkitTestUnorderedEffect()) + 1


def _blob() -> bytes:
    return bytes(jexport.export(jax.jit(_f))(np.ones(3, F32)).serialize())


ORDERED = str(ToolkitTestOrderedEffect)
UNORDERED = str(ToolkitTestUnorderedEffect)


def test_unknown_effects_read_as_opaque_and_round_trip():
    blob = _blob()
    exp = export.deserialize(blob)
    assert exp.ordered_effects == (export.Effect(ORDERED),)
    assert exp.unordered_effects == (export.Effect(UNORDERED),)
    assert ORDERED not in export.known_effect_type_names
    assert bytes(exp.serialize()) == blob  # the same bytes JAX wrote
    jax_view = jexport.deserialize(bytes(exp.serialize()))
    assert list(jax_view.ordered_effects) == [ToolkitTestOrderedEffect()]


def test_call_threads_the_token():
    exp = export.deserialize(_blob())
    x = np.arange(3, dtype=F32)
    want = np.asarray(jexport.deserialize(_blob()).call(x))
    np.testing.assert_allclose(np.asarray(exp.call(x)), want)
    np.testing.assert_allclose(np.asarray(exp.call(x)), 4 * x + 1)


def test_calls_in_one_computation_chain_their_tokens():
    exp = export.deserialize(_blob())
    twice = toolkit.jit(lambda x: exp.call(exp.call(x)))
    text = twice.lower(np.ones(3, F32)).as_text()
    main = text[text.index("func.func public @main"):text.index("func.func private")]
    # One fresh token; the second call takes the token the first returned.
    assert main.count("stablehlo.after_all") == 1
    assert "(%0, %arg0)" in main and "(%1#0, %1#1)" in main
    x = np.arange(3, dtype=F32)
    np.testing.assert_allclose(np.asarray(twice(x)), 4 * (4 * x + 1) + 1)


def test_inspect_names_the_opaque_effects(tmp_path):
    path = tmp_path / "effects.bin"
    path.write_bytes(_blob())
    result = subprocess.run([sys.executable, "-m", "toolkit.tools.export_cli", "export", "inspect", str(path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "ToolkitTestOrderedEffect" in result.stdout and "ToolkitTestUnorderedEffect" in result.stdout
    assert "token" in result.stdout  # the token argument of @main


def test_effect_names_must_be_non_empty():
    with pytest.raises(ValueError, match="non-empty string"):
        export.Effect("")


def test_toolkit_export_calling_it_records_the_unordered_effect():
    inner = export.deserialize(_blob())
    outer = export.export(toolkit.jit(lambda x: inner.call(x) * 2))(np.ones(3, F32))
    assert outer.unordered_effects == (export.Effect(UNORDERED),)
    assert outer.ordered_effects == ()  # not declared: toolkit threads no tokens through @main (documented)
    np.testing.assert_allclose(np.asarray(outer.call(np.arange(3, dtype=F32))), 2 * (4 * np.arange(3) + 1))
