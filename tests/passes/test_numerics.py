"""toolkit.passes.verify_numerics / random_inputs / run_main: differential numerics for passes."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import ml_dtypes
import numpy as np
import pytest
from jaxlib.mlir import ir

import toolkit
import toolkit.numpy as tnp
from toolkit import lax
from toolkit import passes
from toolkit.ir.builders import build
from toolkit.ir.symbols import lookup_function
from toolkit.ir.walk import ops_named
from toolkit.passes import numerics, registry
from toolkit.shard import NamedSharding
from toolkit.shard import PartitionSpec as P

# --------------------------------------------------------------------------
# Throwaway passes (registered per test, the registry restored afterwards)
# --------------------------------------------------------------------------


@passes.pattern("stablehlo.subtract")
def _subtract_to_add(op: Any, rewriter: Any) -> bool:
    # x - y -> x + y (deliberately wrong)
    with op.context, op.location, ir.InsertionPoint(op):
        added = build("stablehlo.add", list(op.operands), [op.results[0].type])
    rewriter.replace_op(op, [added.results[0]])
    return True


@dataclasses.dataclass(frozen=True)
class SubtractToAdd(passes.PatternPass):
    name: ClassVar[str] = "test-numerics-sub-to-add"
    description: ClassVar[str] = "Wrong on purpose: rewrites subtract into add."

    def patterns(self) -> list[passes.Pattern]:
        return [_subtract_to_add]


@passes.pattern("stablehlo.log")
def _log_of_abs(op: Any, rewriter: Any) -> bool:
    # log(x) -> log(|x|) (wrong for x < 0 only: NaN becomes a number)
    source = op.operands[0].owner
    if getattr(source, "name", None) == "stablehlo.abs":
        return False
    with op.context, op.location, ir.InsertionPoint(op):
        absolute = build("stablehlo.abs", [op.operands[0]], [op.operands[0].type])
        log = build("stablehlo.log", [absolute.results[0]], [op.results[0].type])
    rewriter.replace_op(op, [log.results[0]])
    return True


@dataclasses.dataclass(frozen=True)
class LogOfAbs(passes.PatternPass):
    name: ClassVar[str] = "test-numerics-log-abs"
    description: ClassVar[str] = "Moves NaNs: log(x) -> log(|x|)."

    def patterns(self) -> list[passes.Pattern]:
        return [_log_of_abs]


@dataclasses.dataclass(frozen=True)
class Nudge(passes.ModulePass):
    """Multiplies every f32 `stablehlo.tanh` result by (1 + factor): a small relative error."""

    name: ClassVar[str] = "test-numerics-nudge"
    description: ClassVar[str] = "Scales tanh results by 1 + factor."
    factor: float = 1e-4

    def apply(self, op: ir.Operation) -> None:
        for tanh in ops_named(op, "stablehlo.tanh"):
            result = tanh.results[0]
            users = [(use.owner, use.operand_number) for use in result.uses]
            with tanh.context, tanh.location, ir.InsertionPoint.after(tanh):
                scale = build("stablehlo.constant", [], [result.type], {
                    "value": ir.DenseElementsAttr.get_splat(
                        result.type, ir.FloatAttr.get(result.type.element_type, 1 + self.factor))})
                scaled = build("stablehlo.multiply", [result, scale.results[0]], [result.type])
            for owner, number in users:
                owner.operands[number] = scaled.results[0]


@dataclasses.dataclass(frozen=True)
class Raises(passes.ModulePass):
    name: ClassVar[str] = "test-numerics-raises"
    description: ClassVar[str] = "Always raises."

    def apply(self, op: ir.Operation) -> None:
        raise RuntimeError("this pass always fails")


@dataclasses.dataclass(frozen=True)
class ExtraResult(passes.ModulePass):
    """Adds a result to @main: the module's results change in number."""

    name: ClassVar[str] = "test-numerics-extra-result"
    description: ClassVar[str] = "Returns the first argument once more."

    def apply(self, op: ir.Operation) -> None:
        main = lookup_function(op, "main").operation
        block = main.regions[0].blocks[0]
        ret = list(block.operations)[-1]
        argument = block.arguments[0]
        values = list(ret.operands) + [argument]
        with op.context, ret.location, ir.InsertionPoint(ret):
            build("func.return", values, [])
        ret.erase()
        old = ir.TypeAttr(main.attributes["function_type"]).value
        main.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(list(old.inputs), [v.type for v in values]))
        if "res_attrs" in main.attributes:
            del main.attributes["res_attrs"]


@dataclasses.dataclass(frozen=True)
class UnknownCustomCall(passes.ModulePass):
    """Routes every tanh through a custom call XLA has no kernel for: valid IR that XLA cannot compile."""

    name: ClassVar[str] = "test-numerics-unknown-call"
    description: ClassVar[str] = "Valid IR, no XLA kernel."

    def apply(self, op: ir.Operation) -> None:
        for tanh in ops_named(op, "stablehlo.tanh"):
            with tanh.context, tanh.location, ir.InsertionPoint(tanh):
                call = build("stablehlo.custom_call", [tanh.operands[0]], [tanh.results[0].type],
                             {"call_target_name": "toolkit_test_no_such_kernel"})
            tanh.results[0].replace_all_uses_with(call.results[0])
            tanh.erase()


@dataclasses.dataclass(frozen=True)
class BreaksIR(passes.ModulePass):
    """Retypes the first argument of @main without touching its uses: the verifier rejects the module."""

    name: ClassVar[str] = "test-numerics-breaks-ir"
    description: ClassVar[str] = "Leaves invalid IR."

    def apply(self, op: ir.Operation) -> None:
        main = lookup_function(op, "main").operation
        main.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([], []))


@pytest.fixture
def test_passes(monkeypatch):
    """The throwaway passes above, registered for one test only."""
    monkeypatch.setattr(registry, "_registered", dict(registry._registered))
    for cls in (SubtractToAdd, LogOfAbs, Nudge, Raises, ExtraResult, UnknownCustomCall, BreaksIR):
        passes.register_pass(cls)
    return registry


# --------------------------------------------------------------------------
# Real programs (toolkit.jit(...).lower(...).compiler_ir())
# --------------------------------------------------------------------------
def _lower(fn, *args) -> ir.Module:
    return toolkit.jit(fn).lower(*args).compiler_ir()


def mlp(x, w1, b1, w2):
    h = tnp.tanh(x @ w1 + b1)
    centered = h - tnp.mean(h, axis=-1, keepdims=True)
    return centered @ w2


def _mlp_module() -> ir.Module:
    f32 = np.float32
    return _lower(mlp, np.ones((4, 8), f32), np.ones((8, 16), f32), np.ones((16,), f32), np.ones((16, 3), f32))


def gather(table, idx, start):
    rows = table[idx]  # gather with a (5,) index vector
    window = lax.dynamic_slice(table, (start, 0), (2, 3))
    return rows - 1.0, window


def _gather_module() -> ir.Module:
    return _lower(gather, np.ones((7, 3), np.float32), np.zeros((5,), np.int32), np.int32(0))


def integer_program(a, b, flags):
    return (a * b - 3) // 2, tnp.where(flags, a * b, -b), a > b  # a * b twice: cse has work


def _integer_module() -> ir.Module:
    return _lower(integer_program, np.ones((6,), np.int32), np.ones((6,), np.int32), np.ones((6,), bool))


def bf16_program(x, y):
    return tnp.tanh(x * y) - x


def _bf16_module() -> ir.Module:
    bf16 = ml_dtypes.bfloat16
    return _lower(bf16_program, np.ones((8,), bf16), np.ones((8,), bf16))


def nan_program(x):
    return tnp.log(x) - 1.0, tnp.sqrt(x)


def _nan_module() -> ir.Module:
    return _lower(nan_program, np.ones((16,), np.float32))


CORRECT = "toolkit-simplify, cse, canonicalize"


# --------------------------------------------------------------------------
# Divergence found and named
# --------------------------------------------------------------------------
def test_wrong_pass_second_of_three_is_named(test_passes) -> None:
    report = passes.verify_numerics(_mlp_module(), "toolkit-simplify, test-numerics-sub-to-add, cse", seed=7)
    assert not report.ok
    assert report.first_divergent_pass == "test-numerics-sub-to-add"
    assert report.first_divergent_step == 2
    assert report.result_index == 0
    assert report.max_abs_error > 1e-3 and report.max_rel_error > 1e-3
    assert report.seed == 7
    assert report.failed_pass is None
    assert [p.name for p in report.passes] == ["toolkit-simplify", "test-numerics-sub-to-add", "cse"]
    assert [(p.ran, p.checked, p.ok) for p in report.passes] == [
        (True, True, True), (True, True, False), (True, False, False)]
    assert report.passes[0].ok and not report.passes[1].ok
    assert report.result_type == "float32[4,3]"
    text = str(report)
    assert "test-numerics-sub-to-add" in text and "result 0" in text and "seed 7" in text
    assert "result 0 (float32[4,3]): " in text
    assert "toolkit-opt module.mlir --pass-pipeline='builtin.module(toolkit-simplify, test-numerics-sub-to-add, cse)'" in text
    assert "--verify-numerics-seed=7" in text and "differ beyond tolerance" in text
    assert f"{report.max_abs_error:.4g}" in text
    # The module right before the culprit: the one pass alone reproduces the divergence.
    assert "stablehlo.subtract" in report.module_before
    alone = passes.verify_numerics(report.module_before, "test-numerics-sub-to-add", seed=report.seed)
    assert alone.first_divergent_pass == "test-numerics-sub-to-add" and alone.result_index == 0


def test_the_report_reproduces_with_its_seed(test_passes) -> None:
    module = _mlp_module()
    pipeline = "toolkit-simplify, test-numerics-sub-to-add, cse"
    first = passes.verify_numerics(module, pipeline, seed=3)
    again = passes.verify_numerics(module, first.pipeline, seed=first.seed, trials=1)
    assert (again.first_divergent_pass, again.result_index, again.seed) == (
        first.first_divergent_pass, first.result_index, first.seed)
    assert again.max_abs_error == first.max_abs_error
    assert first.command("net.mlir").startswith("toolkit-opt net.mlir --pass-pipeline=")


def test_wrong_pass_nested_under_func_is_named(test_passes) -> None:
    report = passes.verify_numerics(_mlp_module(), "func.func(cse, test-numerics-sub-to-add), canonicalize")
    assert report.first_divergent_pass == "func.func(test-numerics-sub-to-add)"
    assert report.first_divergent_step == 2


def test_the_callers_module_is_left_alone(test_passes) -> None:
    module = _mlp_module()
    before = str(module)
    passes.verify_numerics(module, "test-numerics-sub-to-add")
    assert str(module) == before


# --------------------------------------------------------------------------
# Correct pipelines hold on real programs
# --------------------------------------------------------------------------
@pytest.mark.parametrize("make", [_mlp_module, _gather_module, _integer_module, _bf16_module, _nan_module],
                         ids=["mlp", "gather", "integers", "bf16", "nan"])
def test_a_correct_pipeline_holds(make) -> None:
    report = passes.verify_numerics(make(), CORRECT, trials=2)
    assert report.ok, str(report)
    assert report.first_divergent_pass is None and report.failed_pass is None
    assert [p.name for p in report.passes] == ["toolkit-simplify", "cse", "canonicalize"]
    assert all(p.ran and p.ok for p in report.passes)
    assert "numerics held through all 3 pass(es)" in str(report)


def test_nan_program_really_produces_nans() -> None:
    module = _nan_module()
    results = passes.run_main(module, passes.random_inputs(module, seed=0))
    assert np.isnan(results[0]).any() and not np.isnan(results[0]).all()


def test_cxx_pass_steps_are_counted() -> None:
    report = passes.verify_numerics(_mlp_module(), "func.func(cse, canonicalize), symbol-dce, toolkit-simplify")
    assert report.ok
    assert [(p.step, p.name) for p in report.passes] == [
        (1, "func.func(cse)"), (2, "func.func(canonicalize)"), (3, "symbol-dce"), (4, "toolkit-simplify")]


def test_unchanged_modules_are_compiled_once(compiled_texts) -> None:
    compiled = compiled_texts
    report = passes.verify_numerics(_integer_module(), "cse, cse, symbol-dce, cse", trials=3)
    assert report.ok and report.trials == 3
    changed = [p.changed for p in report.passes]
    assert changed[0] and not any(changed[1:])  # the first cse merges a * b; the rest change nothing
    assert len(compiled) == 2  # before the pipeline, after the first cse: once each, for all three trials


@pytest.fixture
def compiled_texts(monkeypatch):
    """The module texts XLA compiles from now on."""
    compiled: list[str] = []
    original = numerics.runtime_executable.compile_module
    monkeypatch.setattr(numerics.runtime_executable, "compile_module",
                        lambda text, *args, **kwargs: compiled.append(text) or original(text, *args, **kwargs))
    return compiled


def test_bisect_compiles_the_ends_when_they_agree(compiled_texts) -> None:
    report = passes.verify_numerics(_mlp_module(), "toolkit-simplify, canonicalize, cse", bisect=True, trials=1)
    assert report.ok and report.bisected
    assert len(compiled_texts) == 2  # the original and the final module
    changed = [p for p in report.passes if p.changed]
    assert changed[-1].checked and not any(p.checked for p in changed[:-1])
    assert "bisect:" in str(report)


def test_bisect_names_the_divergent_pass(test_passes, compiled_texts) -> None:
    pipeline = "toolkit-simplify, test-numerics-sub-to-add, canonicalize, test-numerics-nudge, cse"
    each = passes.verify_numerics(_mlp_module(), pipeline, trials=1)
    compiled_each = len(compiled_texts)
    compiled_texts.clear()
    bisected = passes.verify_numerics(_mlp_module(), pipeline, trials=1, bisect=True)
    assert each.first_divergent_pass == bisected.first_divergent_pass == "test-numerics-sub-to-add"
    assert bisected.first_divergent_step == 2 and bisected.result_index == 0
    assert bisected.max_abs_error == each.max_abs_error
    assert len(compiled_texts) <= compiled_each + 1


def test_a_parsed_pipeline_and_text_modules_are_accepted() -> None:
    text = str(_integer_module())
    report = passes.verify_numerics(text, passes.parse_pipeline("canonicalize"))
    assert report.ok and len(report.passes) == 1
    assert passes.verify_numerics(text.encode(), "cse").ok


# --------------------------------------------------------------------------
# Tolerances and NaNs
# --------------------------------------------------------------------------
def test_default_tolerances_depend_on_dtype() -> None:
    assert passes.default_tolerance(np.float64)[0] <= 1e-11
    assert passes.default_tolerance(np.float32) == (1e-5, 1e-6)
    assert passes.default_tolerance(ml_dtypes.bfloat16)[0] > passes.default_tolerance(np.float16)[0] > 1e-4
    assert passes.default_tolerance(np.complex64) == passes.default_tolerance(np.float32)
    assert passes.default_tolerance(ml_dtypes.float8_e4m3fn)[0] >= 0.1
    assert passes.default_tolerance(np.int32) == (0.0, 0.0)
    assert passes.default_tolerance(np.bool_) == (0.0, 0.0)


def test_tolerance_arguments_are_respected(test_passes) -> None:
    module = _mlp_module()
    strict = passes.verify_numerics(module, "test-numerics-nudge")
    assert strict.first_divergent_pass == "test-numerics-nudge"
    assert 1e-5 < strict.max_rel_error < 1e-3
    loose = passes.verify_numerics(module, "test-numerics-nudge", rtol=1e-3, atol=1e-3)
    assert loose.ok, str(loose)
    assert 0 < loose.max_abs_error < 1e-2
    assert "--verify-numerics=0.001,0.001" in str(loose)
    # Only rtol given: atol keeps f32's default, which alone does not cover the nudge.
    assert not passes.verify_numerics(module, "test-numerics-nudge", rtol=1e-9).ok
    with pytest.raises(ValueError, match="rtol must be a non-negative number"):
        passes.verify_numerics(module, "cse", rtol=-1.0)
    with pytest.raises(ValueError, match="trials must be a positive integer"):
        passes.verify_numerics(module, "cse", trials=0)


def test_integer_results_must_be_exact_whatever_the_tolerance(test_passes) -> None:
    report = passes.verify_numerics(_integer_module(), "test-numerics-sub-to-add", rtol=10.0, atol=10.0)
    assert not report.ok and report.result_index == 0
    assert "integers must be equal" in report.problem


def test_moved_nans_are_caught(test_passes) -> None:
    report = passes.verify_numerics(_nan_module(), "cse, test-numerics-log-abs")
    assert report.first_divergent_pass == "test-numerics-log-abs"
    assert report.result_index == 0
    assert "NaN positions differ" in report.problem
    assert "NaN positions differ" in str(report)


def test_a_changed_number_of_results_is_a_divergence(test_passes) -> None:
    report = passes.verify_numerics(_integer_module(), "test-numerics-extra-result")
    assert report.first_divergent_pass == "test-numerics-extra-result"
    assert report.result_index is None and "changed in number" in report.problem


# --------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------
def test_random_inputs_are_seeded_and_dtype_aware() -> None:
    module = _lower(lambda a, b, c, d, e, f, g: (a, b, c, d, e, f, g),
                    np.ones((3,), np.float32), np.ones((3,), ml_dtypes.bfloat16), np.ones((3,), np.int8),
                    np.ones((3,), np.uint32), np.ones((40,), bool), np.ones((2,), np.complex64),
                    np.ones((3,), np.float16))
    first = passes.random_inputs(module, seed=5)
    again = passes.random_inputs(module, seed=5)
    other = passes.random_inputs(module, seed=6)
    assert [x.dtype for x in first] == [np.float32, ml_dtypes.bfloat16, np.int8, np.uint32, np.bool_,
                                        np.complex64, np.float16]
    assert all(np.array_equal(x, y) for x, y in zip(first, again))
    assert not np.array_equal(first[0], other[0])
    assert np.all(np.abs(first[2]) <= 8) and np.all(first[3] <= 8)
    assert first[4].any() and not first[4].all()
    assert np.all(first[5].imag != 0)


def test_f8_inputs() -> None:
    text = """
    func.func @main(%a: tensor<4xf8E4M3FN>, %b: tensor<4xf8E5M2>) -> (tensor<4xf32>, tensor<4xf32>) {
      %0 = stablehlo.convert %a : (tensor<4xf8E4M3FN>) -> tensor<4xf32>
      %1 = stablehlo.convert %b : (tensor<4xf8E5M2>) -> tensor<4xf32>
      return %0, %1 : tensor<4xf32>, tensor<4xf32>
    }"""
    inputs = passes.random_inputs(text, seed=1)
    assert [x.dtype for x in inputs] == [ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2]
    out = passes.run_main(text, inputs)
    np.testing.assert_array_equal(out[0], inputs[0].astype(np.float32))
    assert passes.verify_numerics(text, "canonicalize").ok


def test_index_arguments_get_valid_indices() -> None:
    module = _gather_module()
    for seed in range(5):
        table, idx, start = passes.random_inputs(module, seed=seed)
        assert table.dtype == np.float32
        assert idx.dtype == np.int32 and np.all((0 <= idx) & (idx < 7)), idx
        assert 0 <= int(start) <= 5  # 7 rows, windows of 2
        # Valid indices: the gather's rows are the table's rows (no fill values).
        rows, window = passes.run_main(module, [table, idx, start])
        np.testing.assert_array_equal(rows, table[idx] - 1.0)
        np.testing.assert_array_equal(window, table[int(start):int(start) + 2])


def test_index_traced_through_convert_concat_and_call() -> None:
    text = """
    func.func @main(%t: tensor<10x4xf32>, %i: tensor<i64>, %j: tensor<2xi8>, %u: tensor<3x6xf32>,
                    %k: tensor<1xi32>, %x: tensor<i32>) -> (tensor<1x4xf32>, tensor<2x4xf32>, tensor<3x6xf32>, tensor<i32>) {
      %0 = stablehlo.convert %i : (tensor<i64>) -> tensor<i32>
      %z = stablehlo.constant dense<0> : tensor<i32>
      %1 = call @take(%t, %0, %z) : (tensor<10x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x4xf32>
      %2 = stablehlo.convert %j : (tensor<2xi8>) -> tensor<2xi32>
      %3 = stablehlo.reshape %2 : (tensor<2xi32>) -> tensor<2x1xi32>
      %4 = "stablehlo.gather"(%t, %3) {dimension_numbers = #stablehlo.gather<offset_dims = [1],
            collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,
            slice_sizes = array<i64: 1, 4>} : (tensor<10x4xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>
      %c = stablehlo.constant dense<1.0> : tensor<1x2xf32>
      %5 = stablehlo.reshape %k : (tensor<1xi32>) -> tensor<i32>
      %6 = stablehlo.dynamic_update_slice %u, %c, %z, %5 : (tensor<3x6xf32>, tensor<1x2xf32>, tensor<i32>, tensor<i32>) -> tensor<3x6xf32>
      return %1, %4, %6, %x : tensor<1x4xf32>, tensor<2x4xf32>, tensor<3x6xf32>, tensor<i32>
    }
    func.func private @take(%t: tensor<10x4xf32>, %a: tensor<i32>, %b: tensor<i32>) -> tensor<1x4xf32> {
      %0 = stablehlo.dynamic_slice %t, %a, %b, sizes = [1, 4] : (tensor<10x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x4xf32>
      return %0 : tensor<1x4xf32>
    }"""
    seen_i, seen_j, seen_k = set(), set(), set()
    for seed in range(40):
        _, i, j, _, k, x = passes.random_inputs(text, seed=seed)
        seen_i.add(int(i))
        seen_j.update(int(v) for v in j)
        seen_k.add(int(k[0]))
    assert seen_i == set(range(10)) and seen_j == set(range(10)) and seen_k == set(range(5))
    assert passes.verify_numerics(text, CORRECT).ok


def test_given_inputs_are_used() -> None:
    module = _integer_module()
    a = np.arange(6, dtype=np.int32)
    inputs = [a, a + 1, np.ones((6,), bool)]
    report = passes.verify_numerics(module, "canonicalize", inputs=inputs)
    assert report.ok and report.seed is None and report.trials == 1
    assert "the given inputs" in str(report)
    with pytest.raises(ValueError, match="input 0 has shape"):
        passes.verify_numerics(module, "canonicalize", inputs=[a[:2], a, inputs[2]])
    with pytest.raises(ValueError, match="takes 3 arguments, got 2 inputs"):
        passes.run_main(module, inputs[:2])
    with pytest.raises(ValueError, match="input 1 has dtype float32"):
        passes.run_main(module, [a, a.astype(np.float32), inputs[2]])


def test_run_main_agrees_with_jax() -> None:
    jax = pytest.importorskip("jax")
    jnp = jax.numpy

    def f(x, w, i):
        return jnp.tanh(x @ w) - x[i].sum(), (x > 0).sum()

    args = (np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3),
            np.linspace(0, 2, 6, dtype=np.float32).reshape(3, 2), np.int32(2))
    text = jax.jit(f).lower(*args).as_text()
    got = passes.run_main(text, args)
    want = jax.jit(f)(*args)
    np.testing.assert_allclose(got[0], np.asarray(want[0]), rtol=1e-6)
    assert int(got[1]) == int(want[1])


# --------------------------------------------------------------------------
# Shape polymorphism
# --------------------------------------------------------------------------
POLYMORPHIC = """
func.func @main(%x: tensor<?x3xf32>, %y: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = stablehlo.subtract %x, %y : tensor<?x3xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<?x3xf32>
  return %1 : tensor<?x3xf32>
}"""


def test_polymorphic_module_is_bound_first(test_passes) -> None:
    inputs = passes.random_inputs(POLYMORPHIC, seed=0)
    assert [x.shape for x in inputs] == [(4, 3), (4, 3)]
    report = passes.verify_numerics(POLYMORPHIC, "toolkit-simplify, test-numerics-sub-to-add")
    assert report.first_divergent_pass == "test-numerics-sub-to-add"
    assert report.bound_shapes == ("tensor<4x3xf32>", "tensor<4x3xf32>")
    out = passes.run_main(POLYMORPHIC, [np.ones((2, 3), np.float32), np.zeros((2, 3), np.float32)])
    np.testing.assert_array_equal(out[0], np.ones((2, 3), np.float32))
    assert passes.verify_numerics(POLYMORPHIC, "cse", inputs=[np.ones((5, 3), np.float32)] * 2).ok


def test_jax_export_polymorphic_program() -> None:
    jax = pytest.importorskip("jax")
    from jax import export

    def f(x, idx):
        return jax.numpy.tanh(x).sum(axis=0) - x[idx].sum()

    (b,) = export.symbolic_shape("b")
    exported = export.export(jax.jit(f))(jax.ShapeDtypeStruct((b, 3), np.float32),
                                         jax.ShapeDtypeStruct((), np.int32))
    module_text = exported.mlir_module()
    report = passes.verify_numerics(module_text, CORRECT)
    assert report.ok, str(report)
    assert report.bound_shapes[0].startswith("tensor<4x3xf32>")


def test_sizes_the_shape_assertions_refuse_are_skipped() -> None:
    jax = pytest.importorskip("jax")
    from jax import export

    (b,) = export.symbolic_shape("b", constraints=("b <= 3",))
    exported = export.export(jax.jit(lambda x: x * 2))(jax.ShapeDtypeStruct((b, 2), np.float32))
    report = passes.verify_numerics(exported.mlir_module(), "cse")
    assert report.ok and report.bound_shapes == ("tensor<2x2xf32>",)  # 4 breaks b <= 3; 2 is next
    with pytest.raises(passes.UnsupportedModuleError, match="cannot bind the shape-polymorphic @main"):
        passes.run_main(exported.mlir_module(), [np.ones((5, 2), np.float32)])


# --------------------------------------------------------------------------
# Error paths
# --------------------------------------------------------------------------
def test_a_pass_that_raises_is_reported(test_passes) -> None:
    report = passes.verify_numerics(_mlp_module(), "cse, test-numerics-raises, canonicalize")
    assert not report.ok
    assert report.first_divergent_pass is None
    assert report.failed_pass == "test-numerics-raises"
    assert "this pass always fails" in report.error
    assert "func.func" in report.module_before
    assert [(p.name, p.ran, p.ok) for p in report.passes] == [
        ("cse", True, True), ("test-numerics-raises", False, False), ("canonicalize", False, False)]
    assert "pass 2 of 3, 'test-numerics-raises', failed: RuntimeError: this pass always fails" in str(report)


def test_a_module_xla_cannot_compile_is_a_pass_failure(test_passes) -> None:
    report = passes.verify_numerics(_mlp_module(), "cse, test-numerics-unknown-call")
    assert not report.ok and report.first_divergent_pass is None
    assert report.failed_pass == "test-numerics-unknown-call"
    assert "XLA cannot run the module after it" in report.error
    assert report.passes[1].error and not report.passes[1].ok


def test_a_pass_that_breaks_the_ir_is_a_pass_failure(test_passes) -> None:
    report = passes.verify_numerics(_mlp_module(), "cse, test-numerics-breaks-ir")
    assert not report.ok and report.failed_pass == "test-numerics-breaks-ir"
    assert "verification failed" in report.error


def test_bad_pipeline_text() -> None:
    with pytest.raises(passes.PipelineError, match="bad pipeline"):
        passes.verify_numerics(_integer_module(), "cse, (")
    with pytest.raises(passes.UnknownPassError):
        passes.verify_numerics(_integer_module(), "no-such-pass-anywhere")
    with pytest.raises(TypeError, match="pipeline must be"):
        passes.verify_numerics(_integer_module(), 3)  # type: ignore[arg-type]


def test_module_without_main() -> None:
    text = "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> { return %a : tensor<2xf32> }"
    with pytest.raises(passes.UnsupportedModuleError, match="no func.func @main.*@f"):
        passes.verify_numerics(text, "cse")
    with pytest.raises(passes.UnsupportedModuleError, match="no func.func @main"):
        passes.random_inputs(text)


def test_token_and_unsupported_types() -> None:
    token = """
    func.func @main(%t: !stablehlo.token, %a: tensor<2xf32>) -> (!stablehlo.token, tensor<2xf32>) {
      return %t, %a : !stablehlo.token, tensor<2xf32>
    }"""
    with pytest.raises(passes.UnsupportedModuleError, match="argument 0 of @main has type !stablehlo.token"):
        passes.verify_numerics(token, "cse")
    with pytest.raises(passes.UnsupportedModuleError, match="argument 0 of @main has type !stablehlo.token"):
        passes.random_inputs(token)
    result_token = """
    func.func @main(%a: tensor<2xf32>) -> (!stablehlo.token) {
      %t = stablehlo.create_token : !stablehlo.token
      return %t : !stablehlo.token
    }"""
    with pytest.raises(passes.UnsupportedModuleError, match="result 0 of @main"):
        passes.run_main(result_token, [np.ones((2,), np.float32)])


def test_replicated_and_oversized_modules_are_refused() -> None:
    replicas = """
    module attributes {mhlo.num_replicas = 2 : i32} {
      func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> { return %a : tensor<2xf32> }
    }"""
    with pytest.raises(passes.UnsupportedModuleError, match="mhlo.num_replicas = 2"):
        passes.verify_numerics(replicas, "cse")
    too_many = replicas.replace("num_replicas = 2", "num_partitions = 4096")
    with pytest.raises(passes.UnsupportedModuleError, match="partitioned over 4096 devices.*TOOLKIT_NUM_CPU_DEVICES"):
        passes.run_main(too_many, [np.ones((2,), np.float32)])


# --------------------------------------------------------------------------
# Partitioned modules (mhlo.num_partitions > 1) run over that many devices
# --------------------------------------------------------------------------
def test_sharded_program_runs_partitioned(mesh, test_passes) -> None:
    def f(a, b):
        return tnp.tanh(a) * 2 - b.sum(), a.T

    jitted = toolkit.jit(f, in_shardings=(NamedSharding(mesh, P("x", "y")), None))
    module = jitted.lower(np.ones((4, 8), np.float32), np.ones((3,), np.float32)).compiler_ir()
    assert "mhlo.num_partitions = 8" in str(module)
    inputs = passes.random_inputs(module, seed=2)
    got = passes.run_main(module, inputs)
    for have, want in zip(got, jitted(*inputs)):
        np.testing.assert_allclose(have, np.asarray(want), rtol=1e-6)
    assert passes.verify_numerics(module, CORRECT).ok
    report = passes.verify_numerics(module, "cse, test-numerics-sub-to-add")
    assert report.first_divergent_pass == "test-numerics-sub-to-add" and report.result_index == 0


def test_shard_map_program(mesh) -> None:
    def body(x):
        return x - lax.psum(x.sum(), "x")

    sm = toolkit.jit(toolkit.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))
    module = sm.lower(np.ones((8, 3), np.float32)).compiler_ir()
    inputs = passes.random_inputs(module, seed=0)
    np.testing.assert_allclose(passes.run_main(module, inputs)[0], np.asarray(sm(*inputs)), rtol=1e-6)
    assert passes.verify_numerics(module, CORRECT).ok


def test_bad_module_arguments() -> None:
    with pytest.raises(TypeError, match="expected an ir.Module"):
        passes.verify_numerics(42, "cse")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cannot parse the module"):
        passes.verify_numerics("func.func @main(", "cse")


# --------------------------------------------------------------------------
# The comparison itself
# --------------------------------------------------------------------------
def test_comparison_rules() -> None:
    compare = numerics._compare
    f32 = np.float32
    same = np.array([1.0, -np.inf, np.nan, 0.0], f32)
    assert compare(same, same.copy(), None, None).ok
    assert compare(np.array([0.0], f32), np.array([-0.0], f32), None, None).ok  # -0 == +0
    flipped = compare(same, np.array([1.0, np.inf, np.nan, 0.0], f32), None, None)
    assert not flipped.ok and "infinities differ at 1 element(s), first at index (1,)" in flipped.problem
    moved = compare(same, np.array([1.0, -np.inf, 2.0, np.nan], f32), None, None)
    assert not moved.ok and "NaN positions differ at 2 element(s)" in moved.problem
    close = compare(np.array([1.0], f32), np.array([1.0 + 2e-6], f32), None, None)
    assert close.ok and 0 < close.max_rel_error < 1e-5
    retyped = compare(np.zeros((2,), f32), np.zeros((2,), np.float64), None, None)
    assert not retyped.ok and "type changed from float32[2] to float64[2]" in retyped.problem
    c64 = np.array([1 + 1j, complex(np.nan, 0)], np.complex64)
    assert compare(c64, c64.copy(), None, None).ok
    assert not compare(c64, np.array([1 + 2j, complex(np.nan, 0)], np.complex64), None, None).ok
    ints = compare(np.array([3], np.int32), np.array([4], np.int32), 1.0, 1.0)
    assert not ints.ok and ints.max_abs_error == 1.0


def test_complex_program() -> None:
    def f(z, w):
        return z * w - z, tnp.abs(z)

    c64 = np.complex64
    module = _lower(f, np.ones((5,), c64), np.ones((5,), c64))
    inputs = passes.random_inputs(module, seed=0)
    assert all(x.dtype == c64 for x in inputs)
    out = passes.run_main(module, inputs)
    np.testing.assert_allclose(out[0], inputs[0] * inputs[1] - inputs[0], rtol=1e-6)
    assert passes.verify_numerics(module, CORRECT).ok
