"""jit's caches key on the jit pass pipeline and the partitioner: changing either compiles again.

Before, a function called once kept its first executable after
``set_jit_pipeline``/``extend_jit_pipeline``, while ``f.trace(x).lower().compile()``
used the new pipeline: two answers for one function and input in one process.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np
import pytest

import toolkit
from toolkit import dispatch, stages
from toolkit.ir.builders import build, insert_before
from toolkit.passes import PatternPass, default_pipeline, pattern, register_pass
from toolkit.passes.registry import registry_generation


@pattern("stablehlo.add")
def add_to_multiply(op, rewriter):
    # x + y -> x * y: deliberately wrong, so the answer shows which pipeline compiled it.
    with insert_before(op):
        product = build("stablehlo.multiply", list(op.operands), [op.results[0].type])
    rewriter.replace_op(op, product)
    return True


@register_pass
@dataclasses.dataclass(frozen=True)
class AddToMultiplyPass(PatternPass):
    """Turns every stablehlo.add into stablehlo.multiply (a test probe)."""

    name: ClassVar[str] = "test-jit-add-to-multiply"
    description: ClassVar[str] = "Replace add by multiply."

    def patterns(self):
        return [add_to_multiply]


@pytest.fixture
def restore_jit_pipeline():
    saved = default_pipeline.JIT_PIPELINE
    yield
    default_pipeline.set_jit_pipeline(saved)


X = np.array([2.0, 3.0], np.float32)
Y = np.array([3.0, 4.0], np.float32)


def _add(x, y):
    return x + y


@pytest.mark.parametrize("as_arrays", [True, False], ids=["fast-path", "slow-path"])
def test_answer_follows_the_pipeline_and_back(restore_jit_pipeline, as_arrays):
    f = toolkit.jit(_add)
    x, y = (toolkit.device_put(X), toolkit.device_put(Y)) if as_arrays else (X, Y)
    np.testing.assert_allclose(np.asarray(f(x, y)), X + Y)
    np.testing.assert_allclose(np.asarray(f(x, y)), X + Y)  # cached (fast path for arrays)

    default_pipeline.extend_jit_pipeline("test-jit-add-to-multiply")
    np.testing.assert_allclose(np.asarray(f(x, y)), X * Y)
    np.testing.assert_allclose(np.asarray(f(x, y)), X * Y)
    # The explicit stages agree with the call.
    np.testing.assert_allclose(np.asarray(f.trace(x, y).lower().compile()(x, y)), X * Y)

    default_pipeline.set_jit_pipeline("")
    np.testing.assert_allclose(np.asarray(f(x, y)), X + Y)
    np.testing.assert_allclose(np.asarray(f(x, y)), X + Y)


def test_reset_reuses_the_executable_of_the_same_pipeline(restore_jit_pipeline, compilations):
    f = toolkit.jit(_add)
    x, y = toolkit.device_put(X), toolkit.device_put(Y)
    f(x, y)
    default_pipeline.set_jit_pipeline("test-jit-add-to-multiply")
    f(x, y)
    default_pipeline.set_jit_pipeline("")
    f(x, y)
    f(x, y)
    assert compilations[0] == 2  # the empty pipeline's executable is found again by its printed text


def test_setting_the_same_pipeline_text_compiles_nothing_new(restore_jit_pipeline, compilations):
    default_pipeline.set_jit_pipeline("cse")
    f = toolkit.jit(_add)
    x, y = toolkit.device_put(X), toolkit.device_put(Y)
    f(x, y)
    default_pipeline.set_jit_pipeline("builtin.module(cse)")  # same pipeline, other spelling
    np.testing.assert_allclose(np.asarray(f(x, y)), X + Y)
    assert compilations[0] == 1


def test_static_arguments_and_keywords_see_the_new_pipeline(restore_jit_pipeline):
    f = toolkit.jit(lambda x, y, scale: (x + y) * scale, static_argnames="scale")
    np.testing.assert_allclose(np.asarray(f(X, y=Y, scale=2.0)), (X + Y) * 2)
    default_pipeline.set_jit_pipeline("test-jit-add-to-multiply")
    np.testing.assert_allclose(np.asarray(f(X, y=Y, scale=2.0)), X * Y * 2)


def test_eager_operations_see_the_new_pipeline(restore_jit_pipeline):
    x, y = toolkit.device_put(X), toolkit.device_put(Y)
    np.testing.assert_allclose(np.asarray(x + y), X + Y)
    default_pipeline.set_jit_pipeline("test-jit-add-to-multiply")
    np.testing.assert_allclose(np.asarray(x + y), X * Y)
    default_pipeline.set_jit_pipeline("")
    np.testing.assert_allclose(np.asarray(x + y), X + Y)


def test_overriding_a_pass_class_recompiles(restore_jit_pipeline):
    def register(op_name):
        @pattern("stablehlo.add")
        def rewrite(op, rewriter):
            with insert_before(op):
                new = build(op_name, list(op.operands), [op.results[0].type])
            rewriter.replace_op(op, new)
            return True

        @dataclasses.dataclass(frozen=True)
        class Swap(PatternPass):
            name: ClassVar[str] = "test-jit-swap"

            def patterns(self):
                return [rewrite]

        return Swap

    first = register_pass(register("stablehlo.multiply"), override=True)
    default_pipeline.set_jit_pipeline("test-jit-swap")
    try:
        f = toolkit.jit(_add)
        x, y = toolkit.device_put(X), toolkit.device_put(Y)
        np.testing.assert_allclose(np.asarray(f(x, y)), X * Y)
        before = registry_generation()
        register_pass(register("stablehlo.subtract"), override=True)
        assert registry_generation() > before
        np.testing.assert_allclose(np.asarray(f(x, y)), X - Y)
    finally:
        default_pipeline.set_jit_pipeline("")
        del first


def test_generation_moves_on_every_change(restore_jit_pipeline):
    start = default_pipeline.jit_pipeline_generation()
    default_pipeline.set_jit_pipeline("cse")
    after_set = default_pipeline.jit_pipeline_generation()
    default_pipeline.extend_jit_pipeline("canonicalize")
    assert start < after_set < default_pipeline.jit_pipeline_generation()
    assert default_pipeline.jit_pipeline_text() == "builtin.module(cse, canonicalize)"
    default_pipeline.set_jit_pipeline("")
    assert default_pipeline.jit_pipeline_text() == "builtin.module()"


def test_a_bad_pipeline_changes_nothing(restore_jit_pipeline):
    default_pipeline.set_jit_pipeline("cse")
    generation = default_pipeline.jit_pipeline_generation()
    with pytest.raises(ValueError, match="unknown pass 'no-such-pass'"):
        default_pipeline.set_jit_pipeline("no-such-pass")
    assert default_pipeline.jit_pipeline_generation() == generation
    assert default_pipeline.jit_pipeline_text() == "builtin.module(cse)"


def test_partitioner_is_part_of_the_key(mesh, monkeypatch, compilations):
    from toolkit.shard import NamedSharding, PartitionSpec as P

    rows = NamedSharding(mesh, P("x"))
    f = toolkit.jit(lambda a: a * 2.0 + 1.0, in_shardings=rows, out_shardings=rows)
    x = toolkit.device_put(np.arange(16, dtype=np.float32).reshape(8, 2), rows)
    monkeypatch.delenv("TOOLKIT_PARTITIONER", raising=False)
    expected = np.arange(16, dtype=np.float32).reshape(8, 2) * 2 + 1
    np.testing.assert_allclose(np.asarray(f(x)), expected)
    np.testing.assert_allclose(np.asarray(f(x)), expected)
    assert compilations[0] == 1
    monkeypatch.setenv("TOOLKIT_PARTITIONER", "gspmd")
    np.testing.assert_allclose(np.asarray(f(x)), expected)
    assert compilations[0] == 2  # compiled again, for GSPMD
    gspmd = [c for c in f._cache.values() if c._plan.partitioner == "gspmd"]
    assert len(gspmd) == 1
    monkeypatch.setenv("TOOLKIT_PARTITIONER", "shardy")
    f(x)
    assert compilations[0] == 2  # unset means Shardy: "shardy" spelled out finds the first executable


def test_single_device_executables_ignore_the_partitioner(monkeypatch, compilations):
    # With one partition the partitioner changes nothing, so the fast path
    # does not read $TOOLKIT_PARTITIONER (about 1.5 µs) for such executables.
    f = toolkit.jit(_add)
    x, y = toolkit.device_put(X), toolkit.device_put(Y)
    f(x, y)
    monkeypatch.setenv("TOOLKIT_PARTITIONER", "shardy")
    np.testing.assert_allclose(np.asarray(f(x, y)), X + Y)
    assert compilations[0] == 1
    # A new signature lowers again and checks the variable.
    monkeypatch.setenv("TOOLKIT_PARTITIONER", "auto")
    with pytest.raises(ValueError, match="'gspmd' or 'shardy'"):
        f(X[:1], Y[:1])


def test_the_current_mesh_is_part_of_the_key(compilations):
    # A bare PartitionSpec means a NamedSharding over the current mesh: another mesh is another executable.
    from toolkit.shard import PartitionSpec as P
    if len(toolkit.devices()) < 8:
        pytest.skip("needs 8 devices")
    wide, tall = toolkit.make_mesh((2, 4), ("x", "y")), toolkit.make_mesh((4, 2), ("x", "y"))
    f = toolkit.jit(lambda a: a * 2.0, out_shardings=P("x"))
    data = np.ones((8, 8), np.float32)
    with toolkit.set_mesh(wide):
        first = f(data)
        f(data)
    with toolkit.set_mesh(tall):
        second = f(data)
    assert compilations[0] == 2
    assert first.sharding.mesh == wide and second.sharding.mesh == tall


def test_partitioned_executables_take_the_fast_path_under_the_default_partitioner(mesh, monkeypatch):
    from toolkit.shard import NamedSharding, PartitionSpec as P
    monkeypatch.delenv("TOOLKIT_PARTITIONER", raising=False)
    rows = NamedSharding(mesh, P("x"))
    f = toolkit.jit(lambda a: a + 1.0, in_shardings=rows, out_shardings=rows)
    x = toolkit.device_put(np.ones((8, 2), np.float32), rows)
    f(x)
    calls = []
    monkeypatch.setattr(stages.Compiled, "_call_fast", lambda self, leaves: calls.append(1) or dispatch.MISS)
    f(x)
    assert calls == [1]  # the fast cache hit (then fell back, as MISS asks)
