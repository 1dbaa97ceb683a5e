"""toolkit.lab.measurement: a pipeline measured on programs, one row each (the rows ``toolkit lab`` prints)."""

from __future__ import annotations

import dataclasses
import json
import os
from typing import ClassVar

import numpy as np
import pytest
from jaxlib.mlir import ir

import toolkit
from toolkit import compilation_cache
from toolkit import numpy as tnp
from toolkit.ir.builders import build
from toolkit.lab import measurement, zoo
from toolkit.lab.measurement import (ROW_KEYS, STAGES, LabProgram, LabRow, RunTimes, measure_pipeline,
                                     resolve_programs)
from toolkit.lab.text_table import change, format_table, human
from toolkit.passes.op_stats import count_ops
from toolkit.shard import NamedSharding, PartitionSpec
from toolkit.passes import ModulePass, PassFailure, PatternPass, pattern, register_pass


@pattern("stablehlo.subtract")
def subtract_to_add(op, rewriter):
    # x - y -> x + y: deliberately wrong, the pass numerics checks must catch
    with op.context, op.location, ir.InsertionPoint(op):
        added = build("stablehlo.add", list(op.operands), [op.results[0].type])
    rewriter.replace_op(op, [added.result])
    return True


@register_pass
@dataclasses.dataclass(frozen=True)
class WrongSubtractPass(PatternPass):
    """Rewrites subtract to add (wrong on purpose)."""

    name: ClassVar[str] = "lab-test-wrong-subtract"
    description: ClassVar[str] = "x - y -> x + y (wrong on purpose, for tests)"

    def patterns(self):
        return [subtract_to_add]


@register_pass
@dataclasses.dataclass(frozen=True)
class FailingPass(ModulePass):
    """Fails on modules with a tanh."""

    name: ClassVar[str] = "lab-test-failing"
    description: ClassVar[str] = "fails on modules with a tanh (for tests)"

    def apply(self, op):
        if "stablehlo.tanh" in count_ops(op):
            raise PassFailure("this pass fails on tanh", op=op)


X = np.linspace(-1.0, 1.0, 64, dtype=np.float32).reshape(8, 8)
Y = np.linspace(0.5, 2.0, 64, dtype=np.float32).reshape(8, 8)


def _mlp(x, y):
    # x * 1 and x @ y twice: toolkit-simplify and cse each have something to remove
    h = tnp.tanh(x @ y) * np.ones((8, 8), np.float32)
    return h - x @ y


def _program(name: str = "mlp", fun=_mlp, inputs=(X, Y)) -> LabProgram:
    return LabProgram(name, toolkit.jit(fun).lower(*inputs), list(inputs), origin="test")


@pytest.fixture(scope="module")
def good_row() -> LabRow:
    (row,) = measure_pipeline("toolkit-simplify, cse", [_program()], runs=3)
    return row


def test_a_row_has_op_counts_cost_compile_and_run_times(good_row) -> None:
    row = good_row
    assert row.status == "ok" and row.ok and row.failure is None
    assert row.program == "mlp" and row.origin == "test"
    assert row.pipeline == "builtin.module(toolkit-simplify, cse)"
    before, after = row.ops_before, row.ops_after
    assert before.ops["stablehlo.dot_general"] == 2 and after.ops["stablehlo.dot_general"] == 1
    assert before.ops["stablehlo.multiply"] == 1 and "stablehlo.multiply" not in after.ops
    assert before.total == sum(before.ops.values()) and before.dialects["stablehlo"] < before.total
    assert after.total < before.total
    assert row.cost_after.flops < row.cost_before.flops  # one matmul instead of two
    assert row.optimized_cost_before.flops > 0 and row.optimized_cost_after.flops > 0
    assert row.pipeline_seconds > 0 and row.compile_seconds_before > 0 and row.compile_seconds_after > 0
    for times in (row.run_before, row.run_after):
        assert times.runs == 3 and 0 < times.min <= times.q1 <= times.median <= times.q3 <= times.max
    assert row.numerics is None  # not asked for


def test_rows_as_json_have_the_documented_keys(good_row) -> None:
    data = good_row.to_dict()
    assert tuple(data) == ROW_KEYS
    assert data["status"] == "ok"
    assert set(data["ops_before"]) == {"total", "dialects", "ops"}
    assert set(data["cost_before"]) == {"flops", "transcendentals", "bytes_accessed"}
    assert set(data["run_after"]) == {"runs", "median", "min", "max", "q1", "q3"}
    assert json.loads(json.dumps(data)) == data


def test_cost_matches_jax_for_the_same_function() -> None:
    jax = pytest.importorskip("jax")

    def matmul_tanh(x, y):
        return tnp.tanh(x @ y) + 1.0

    (row,) = measure_pipeline("cse", [_program("mm", matmul_tanh)], runs=1)
    expected = jax.jit(lambda x, y: jax.numpy.tanh(x @ y) + 1.0).lower(X, Y).cost_analysis()
    assert row.cost_before.flops == pytest.approx(expected["flops"])
    assert row.cost_before.transcendentals == pytest.approx(expected["transcendentals"])


def test_a_failing_pass_is_recorded_and_the_next_program_still_runs(tmp_path) -> None:
    rows = measure_pipeline("cse, lab-test-failing", [_program("first"), _program("second", lambda x, y: x + y)],
                            runs=1, reproducer_dir=tmp_path)
    first, second = rows
    assert first.status == "failed: pipeline" and not first.ok
    assert first.failure.stage == "pipeline"
    assert "lab-test-failing" in first.failure.message and "fails on tanh" in first.failure.message
    # What could be measured before the failure is kept.
    assert first.ops_before is not None and first.ops_after is None
    assert first.compile_seconds_before > 0 and first.run_before is not None and first.run_after is None
    assert first.failure.pass_name == "lab-test-failing"
    assert os.path.exists(first.failure.reproducer) and first.failure.reproducer.startswith(str(tmp_path))
    assert second.status == "ok" and second.run_after is not None
    text = format_table(rows)
    assert "first: pipeline failed" in text and "1 of 2 programs ok" in text


def test_an_error_in_any_stage_is_recorded_with_its_stage() -> None:
    wrong_inputs = LabProgram("short", toolkit.jit(_mlp).lower(X, Y), [X])
    many_devices = LabProgram("wide", toolkit.jit(_mlp).lower(X, Y), [X, Y], num_devices=10_000)
    rows = measure_pipeline("cse", [wrong_inputs, many_devices, _program()], runs=1)
    assert rows[0].failure.stage == "inputs" and "1 inputs given, the program takes 2" in rows[0].failure.message
    assert rows[1].failure.stage == "load" and "TOOLKIT_NUM_CPU_DEVICES=10000" in rows[1].failure.message
    assert rows[2].ok


def test_an_error_after_compiling_is_recorded_too(monkeypatch) -> None:
    def broken(self):
        raise RuntimeError("no cost today")

    monkeypatch.setattr(toolkit.Compiled, "cost_analysis", broken)
    first, second = measure_pipeline("cse", [_program("a"), _program("b")], runs=1)
    for row in (first, second):
        assert row.status == "failed: compile before" and "RuntimeError: no cost today" in row.failure.message
        assert row.compile_seconds_before > 0 and row.ops_after is not None


def test_compile_times_are_real_compilations_with_a_persistent_cache_set(tmp_path) -> None:
    compilation_cache.set_cache_dir(tmp_path)
    try:
        (row,) = measure_pipeline("cse", [_program("cached", lambda x, y: x * y + 2.0)], runs=1)
        assert compilation_cache.is_enabled()  # restored afterwards
    finally:
        compilation_cache.set_cache_dir(None)
    assert row.ok and row.compile_seconds_before > 0
    assert compilation_cache.entries() == [] and list(tmp_path.iterdir()) == []  # neither read nor written


def test_progress_reports_every_stage_in_order() -> None:
    seen = []
    measure_pipeline("cse", [_program("a"), _program("b")], runs=1, progress=lambda *event: seen.append(event))
    for index, name in enumerate(("a", "b")):
        stages = [stage for i, total, program, stage in seen if program == name]
        assert all(total == 2 and i == index for i, total, program, _ in seen if program == name)
        assert stages == [s for s in STAGES if s != "numerics"] + ["done"]


def test_a_wrong_pass_is_caught_and_named() -> None:
    def difference(x, y):
        return x - y

    rows = measure_pipeline("toolkit-simplify, lab-test-wrong-subtract, cse",
                            [_program("diff", difference), _program("sum", lambda x, y: x + y)],
                            verify_numerics=True, runs=1)
    wrong, fine = rows
    assert wrong.status == "numerics differ" and not wrong.ok
    assert wrong.numerics.first_divergent_pass == "lab-test-wrong-subtract"
    assert wrong.numerics.max_abs_error > 0 and "lab-test-wrong-subtract" in wrong.numerics.summary
    assert fine.ok and fine.numerics.equal  # no subtract: the wrong rule never fires
    assert "differ at lab-test-wrong-subtract" in format_table(rows)
    # Tolerances reach verify_numerics: |(x + y) - (x - y)| = 2|y| <= 4 passes with atol 5.
    (loose,) = measure_pipeline("lab-test-wrong-subtract", [_program("diff", difference)], verify_numerics=True,
                                runs=1, rtol=0.0, atol=5.0)
    assert loose.ok and loose.numerics.equal


def test_numerics_of_a_program_on_several_devices(mesh) -> None:
    sharded = toolkit.jit(lambda x, y: x - y, in_shardings=NamedSharding(mesh, PartitionSpec("x", "y")))
    program = LabProgram("sharded", sharded.lower(X, Y), [X, Y], num_devices=8)
    good, wrong = (measure_pipeline(pipeline, [program], verify_numerics=True, runs=1)[0]
                   for pipeline in ("toolkit-simplify, cse", "cse, lab-test-wrong-subtract"))
    assert good.ok and good.numerics.equal
    assert wrong.status == "numerics differ" and wrong.numerics.first_divergent_pass == "lab-test-wrong-subtract"


def test_a_module_verify_numerics_cannot_run_has_its_whole_results_compared(monkeypatch) -> None:
    def unsupported(*args, **kwargs):
        raise measurement.pass_numerics.UnsupportedModuleError("cannot run this one")

    monkeypatch.setattr(measurement.pass_numerics, "verify_numerics", unsupported)
    good, wrong = (measure_pipeline(pipeline, [_program("diff", lambda x, y: x - y)], verify_numerics=True,
                                    runs=1)[0]
                   for pipeline in ("toolkit-simplify, cse", "cse, lab-test-wrong-subtract"))
    assert good.ok and "whole-program results compared" in good.numerics.summary
    assert "cannot run this one" in good.numerics.summary
    assert wrong.status == "numerics differ" and wrong.numerics.first_divergent_pass is None
    assert wrong.numerics.result_index == 0 and wrong.numerics.max_abs_error > 0
    assert "no pass is named" in wrong.numerics.summary


def test_compare_results() -> None:
    a = np.array([1.0, np.nan, 3.0], np.float32)
    assert measurement.compare_results([a], [a.copy()], seed=0).equal
    assert measurement.compare_results([a], [a + 1e-7], seed=0).equal  # within f32's default tolerance
    moved_nan = measurement.compare_results([a], [np.array([np.nan, 2.0, 3.0], np.float32)], seed=0)
    assert not moved_nan.equal and moved_nan.result_index == 0
    assert "changed type" in measurement.compare_results([a], [a.astype(np.float64)], seed=0).summary
    assert "number of results" in measurement.compare_results([a], [a, a], seed=0).summary
    ints = np.arange(3, dtype=np.int32)
    assert not measurement.compare_results([ints], [ints + 1], seed=0).equal  # integers: exact


def test_zoo_programs_resolve_with_the_zoo_tolerances() -> None:
    programs = resolve_programs("zoo")
    assert [p.name for p in programs] == [p.name for p in zoo.programs()]
    by_name = {p.name: p for p in programs}
    mixer = by_name["mlp_mixer_toolkit"]
    assert mixer.origin == "zoo (toolkit)" and (mixer.rtol, mixer.atol) == zoo.tolerances(np.float32)
    assert by_name["dp_train_shard_map"].num_devices == 8
    assert [p.name for p in resolve_programs(["vit", "unet"])] == ["vit", "unet"]


def test_programs_resolve_from_pairs_and_get_unique_names() -> None:
    lowered = toolkit.jit(_mlp).lower(X, Y)
    programs = resolve_programs([("named", lowered), lowered, lowered])
    assert [p.name for p in programs] == ["named", "_mlp", "_mlp#2"]
    assert resolve_programs(("only", lowered))[0].name == "only"


@pytest.mark.parametrize("programs, message", [
    ([], "no programs"),
    ("no-such-program-or-file", "neither a file nor a zoo program"),
])
def test_bad_programs_are_named(programs, message) -> None:
    with pytest.raises(ValueError, match=message):
        measure_pipeline("cse", programs)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="runs must be a positive integer"):
        measure_pipeline("cse", [_program()], runs=0)
    for tolerance in ({"rtol": -1.0}, {"atol": "0.1"}, {"rtol": True}):
        with pytest.raises(ValueError, match="must be a non-negative number"):
            measure_pipeline("cse", [_program()], **tolerance)
    with pytest.raises(TypeError, match="pipeline must be pipeline text"):
        measure_pipeline(42, [_program()])
    with pytest.raises(ValueError, match="no-such-pass"):
        measure_pipeline("no-such-pass", [_program()])


def test_number_formatting() -> None:
    assert human(1_234_567) == "1.23M" and human(0.00123, "s") == "1.23ms" and human(None) == "-"
    assert human(0) == "0" and human(12) == "12"
    assert change(200, 150) == "-25.0%" and change(100_000, 99_990) == "-0.01%" and change(0, 0) == "" and change(0, 3) == "new" and change(None, 1) == ""
    times = RunTimes.of([3.0, 1.0, 2.0, 4.0])
    assert (times.median, times.min, times.max, times.runs) == (2.5, 1.0, 4.0, 4)
    with pytest.raises(ValueError, match="no timings"):
        RunTimes.of([])


def test_a_wrong_pass_is_named_on_a_zoo_program() -> None:
    (row,) = measure_pipeline("toolkit-simplify, lab-test-wrong-subtract, cse", ["diffusion_ddpm_step"],
                              verify_numerics=True, runs=1)
    assert row.origin == "zoo (equinox)" and row.status == "numerics differ"
    assert row.numerics.first_divergent_pass == "lab-test-wrong-subtract"
    assert row.ops_before.ops["stablehlo.subtract"] > 0 and "stablehlo.subtract" not in row.ops_after.ops
    assert "toolkit-opt diffusion_ddpm_step.mlir" in row.numerics.summary
