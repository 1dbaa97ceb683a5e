"""The zoo (``toolkit.lab.zoo``): every program loads and runs without jax and gives JAX's recorded results.

* in a subprocess where ``import jax`` fails (``sys.modules['jax'] = None``)
  and toolkit has 8 CPU devices: every program, the 8-device data-parallel one
  included, is deserialized (or, for toolkit-written ones, exported) and called
  on its seed-0 inputs; the outputs match the checksums JAX recorded when
  ``scripts/make_zoo.py`` wrote the zoo; the polymorphic program runs at two
  other batch sizes; per-program times are printed (``pytest -s``);
* the catalog, the input specs (integer inputs in range, dtypes and shapes as
  the artifact's ``@main`` takes them), the size limit and the error paths;
* with jax installed, the same artifacts run through JAX on the same inputs
  agree with toolkit's results (a cheap subset by default; the whole zoo, 8
  devices included, in a subprocess with ``TOOLKIT_ZOO_FULL=1``, which also
  checks that ``scripts/make_zoo.py`` writes the committed files byte for byte).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from toolkit.lab import zoo
from toolkit.lab.zoo import toolkit_models

REQUIRED = ("resnet_bn_train", "gpt2_train_adam", "gpt2_decode_kv", "vit", "unet", "lstm_scan", "mlp_mixer",
            "diffusion_ddpm_step", "dp_train_shard_map", "cnn_poly_batch")
TOOLKIT_WRITTEN = ("gpt2_decode_kv_toolkit", "lstm_scan_toolkit", "mlp_mixer_toolkit")
#: Programs cheap enough to compile twice more (toolkit and JAX) in the default run.
CHEAP = ("lstm_scan", "diffusion_ddpm_step", "gpt2_decode_kv")
#: The whole zoo against JAX and the regeneration check compile everything again (~30-45 CPU-seconds each):
#: run with TOOLKIT_ZOO_FULL=1 (e.g. after scripts/make_zoo.py or a jax upgrade).
FULL = os.environ.get("TOOLKIT_ZOO_FULL", "") not in ("", "0")
needs_full = pytest.mark.skipif(not FULL, reason="set TOOLKIT_ZOO_FULL=1 to compile the whole zoo again")

NO_JAX_RUN = textwrap.dedent("""
    import json, sys, time
    sys.modules["jax"] = None  # any `import jax` below fails
    import numpy as np
    import toolkit
    from toolkit.lab import zoo

    assert len(toolkit.devices()) >= 8, toolkit.devices()
    rows = []
    for program in map(zoo.get, sys.argv[1:]):
        start = time.perf_counter()
        exported = program.exported()
        outputs = exported.call(*program.inputs(0))
        outputs = [np.asarray(o) for o in (outputs if isinstance(outputs, (tuple, list)) else [outputs])]
        seconds = time.perf_counter() - start
        start = time.perf_counter()
        exported.call(*program.inputs(1))
        rerun = time.perf_counter() - start
        rows.append({"name": program.name, "seconds": seconds, "rerun": rerun,
                     "mismatches": program.checksum_mismatches(outputs),
                     "finite": all(np.isfinite(o).all() for o in outputs if o.dtype.kind == "f")})
    poly = [p for p in map(zoo.get, sys.argv[1:]) if p.polymorphic]
    shapes = {}
    for program in poly:
        for b in (1, 5):
            (out,) = program.exported().call(*program.inputs(0, dims={"b": b}))
            out = np.asarray(out)
            # log-softmax rows: exp sums to one
            shapes[f"{program.name}@{b}"] = [list(out.shape), float(np.abs(np.exp(out).sum(-1) - 1).max())]
    print("ZOO-RESULT " + json.dumps({"rows": rows, "poly": shapes,
                                      "jax_loaded": "jax" in sys.modules and sys.modules["jax"] is not None}))
""")


def _halves() -> list[list[str]]:
    """The programs in two lists of about equal compile cost (the artifact's size as its measure)."""
    def cost(p: zoo.ZooProgram) -> int:
        return (zoo.ZOO_DIR / f"{p.metadata.get('mirror_of', p.name)}.bin").stat().st_size

    halves: list[list[str]] = [[], []]
    totals = [0, 0]
    for program in sorted(zoo.programs(), key=cost, reverse=True):
        i = totals.index(min(totals))
        halves[i].append(program.name)
        totals[i] += cost(program)
    return halves


def test_every_program_runs_without_jax_and_matches_jax_checksums():
    # Two processes side by side: compiling the zoo is most of this file's time, and CI has two cores.
    env = dict(os.environ, TOOLKIT_NUM_CPU_DEVICES="8")
    processes = [subprocess.Popen([sys.executable, "-c", NO_JAX_RUN, *names], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=env) for names in _halves()]
    report: dict = {"rows": [], "poly": {}, "jax_loaded": False}
    try:
        for process in processes:
            stdout, stderr = process.communicate(timeout=600)
            assert process.returncode == 0, stdout[-3000:] + stderr[-3000:]
            line = next(x for x in stdout.splitlines() if x.startswith("ZOO-RESULT "))
            part = json.loads(line[len("ZOO-RESULT "):])
            report["rows"] += part["rows"]
            report["poly"].update(part["poly"])
            report["jax_loaded"] |= part["jax_loaded"]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert not report["jax_loaded"]
    rows = {r["name"]: r for r in sorted(report["rows"], key=lambda r: r["name"])}
    assert set(rows) == {p.name for p in zoo.programs()}
    for name, row in rows.items():
        assert row["mismatches"] == [], name
        assert row["finite"], name
    assert "dp_train_shard_map" in rows  # ran on toolkit's 8 devices
    assert set(report["poly"]) == {"cnn_poly_batch@1", "cnn_poly_batch@5"}
    for key, (shape, error) in report["poly"].items():
        b = int(key.rsplit("@", 1)[1])
        assert shape == [b, 10] and error < 1e-5, key
    print("\nzoo without jax: compile + first run, second run (s)")
    for name, row in rows.items():
        print(f"  {name:26s} {row['seconds']:7.2f} {row['rerun']:7.3f}")
    print(f"  {'total':26s} {sum(r['seconds'] + r['rerun'] for r in rows.values()):7.2f}")


# ---------------------------------------------------------------------------------------------------------------
# The catalog and its metadata.

def test_catalog_has_every_required_program_and_both_frontends():
    names = [p.name for p in zoo.programs()]
    assert names == sorted(names)
    assert set(REQUIRED) | set(TOOLKIT_WRITTEN) <= set(names)
    assert {p.frontend for p in zoo.programs()} == {"flax", "equinox", "jax", "toolkit"}
    assert sorted(p.name for p in zoo.programs() if p.frontend == "toolkit") == sorted(TOOLKIT_WRITTEN)
    assert [p.name for p in zoo.programs() if p.polymorphic] == ["cnn_poly_batch"]
    assert [(p.name, p.num_devices) for p in zoo.programs() if p.num_devices != 1] == [("dp_train_shard_map", 8)]
    assert zoo.get("cnn_poly_batch").default_dims == {"b": 4}


@pytest.mark.parametrize("program", zoo.programs(), ids=lambda p: p.name)
def test_metadata(program):
    assert len(program.description) > 40
    versions = program.metadata["versions"]
    if program.frontend == "toolkit":
        mirror = zoo.get(program.metadata["mirror_of"])
        assert mirror.input_specs == program.input_specs and mirror.outputs == program.outputs
        assert program.metadata["builder"] in toolkit_models.BUILDERS
        versions = versions["checksums_from"]
    else:
        assert program.metadata["artifact"] == f"{program.name}.bin"
    assert {"jax", "jaxlib", "flax", "equinox", "optax"} <= set(versions)
    assert program.outputs and all({"name", "shape", "dtype", "sum", "abs_sum", "first"} <= set(o)
                                   for o in program.outputs)


def test_total_size_is_at_most_5_mb():
    total = sum(f.stat().st_size for f in zoo.ZOO_DIR.iterdir() if f.suffix in (".bin", ".json", ".md"))
    assert total <= 5 * 1024 * 1024, total


# ---------------------------------------------------------------------------------------------------------------
# Input specs and inputs.

@pytest.mark.parametrize("program", zoo.programs(), ids=lambda p: p.name)
def test_inputs_follow_their_specs_and_the_artifact_signature(program):
    inputs = program.inputs(0)
    assert len(inputs) == len(program.input_specs)
    dims = dict(program.default_dims)
    for spec, value in zip(program.input_specs, inputs):
        assert value.shape == spec.concrete_shape(dims) and str(value.dtype) == spec.dtype, spec.name
        if spec.kind in ("index", "label"):
            assert spec.range is not None and np.issubdtype(value.dtype, np.integer), spec.name
            assert spec.range[0] <= value.min() and value.max() < spec.range[1], spec.name
        elif spec.init["type"] == "ones":
            assert (value == 1).all()
        elif spec.init["type"] == "normal":
            assert np.isfinite(value).all() and value.std() > 0
    if program.frontend != "toolkit":  # the artifact's own signature (cheap: deserializing compiles nothing)
        avals = program.exported().in_avals
        assert [str(a.dtype) for a in avals] == [s.dtype for s in program.input_specs]
        assert [tuple(str(d) if not isinstance(d, int) else d for d in a.shape) for a in avals] == [
            s.shape for s in program.input_specs]


def test_inputs_are_deterministic_per_seed_and_independent_of_other_inputs():
    program = zoo.get("cnn_poly_batch")
    a, b, c = program.inputs(0), program.inputs(0), program.inputs(1)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[-1], c[-1])
    small = program.inputs(0, dims={"b": 2})
    assert small[-1].shape == (2, 8, 8, 3)
    assert all(np.array_equal(x, y) for x, y in zip(a[:-1], small[:-1]))  # weights do not depend on the batch


def test_input_errors_are_named():
    program = zoo.get("cnn_poly_batch")
    with pytest.raises(ValueError, match="no dimension named"):
        program.inputs(0, dims={"batch": 2})
    with pytest.raises(ValueError, match="positive int"):
        program.inputs(0, dims={"b": 0})
    with pytest.raises(ValueError, match="seed"):
        program.inputs(-1)
    with pytest.raises(KeyError, match="'b'"):
        program.input_specs[-1].concrete_shape({})
    with pytest.raises(KeyError, match="no zoo program 'nope'.*mlp_mixer"):
        zoo.get("nope")


@pytest.mark.parametrize("record, message", [
    ({"name": "x", "shape": [2], "dtype": "float32", "kind": "weights", "init": {"type": "ones"}}, "kind"),
    ({"name": "x", "shape": [2], "dtype": "float32", "kind": "weight"}, "lacks the field 'init'"),
    ({"name": "x", "shape": [2], "dtype": "float32", "kind": "weight", "init": {"type": "gauss"}}, "init type"),
    ({"name": "x", "shape": [2], "dtype": "int32", "kind": "index", "init": {"type": "randint"}}, "range"),
    ({"name": "x", "shape": [2], "dtype": "int32", "kind": "index", "init": {"type": "randint"}, "range": [3, 3]},
     "low < high"),
    ({"name": "x", "shape": [2], "dtype": "int8", "kind": "index", "init": {"type": "randint"}, "range": [0, 999]},
     "does not fit"),
    ({"name": "x", "shape": [2], "dtype": "float32", "kind": "index", "init": {"type": "normal"}}, "integer dtype"),
    ({"name": "x", "shape": [2], "dtype": "int32", "kind": "data", "init": {"type": "normal"}}, "does not make"),
    ({"name": "x", "shape": [-1], "dtype": "float32", "kind": "data", "init": {"type": "normal"}}, "dimension"),
    ({"name": "x", "shape": [2], "dtype": "float99", "kind": "data", "init": {"type": "normal"}}, "unknown dtype"),
])
def test_bad_input_specs_are_rejected(record, message):
    with pytest.raises(ValueError, match=message):
        zoo.InputSpec.from_json(record)


def test_spec_json_round_trip_and_init_types():
    spec = zoo.InputSpec("t", ("b", 3), "int32", "index", {"type": "randint"}, (2, 7))
    assert zoo.InputSpec.from_json(json.loads(json.dumps(spec.to_json()))) == spec
    value = zoo.make_input(spec, 0, seed=3, dims={"b": 50})
    assert value.shape == (50, 3) and value.min() >= 2 and value.max() < 7
    mask = zoo.make_input(zoo.InputSpec("m", (100,), "bool", "data", {"type": "bernoulli", "p": 0.3}), 0)
    assert mask.dtype == np.bool_ and 5 < mask.sum() < 60
    low = zoo.make_input(zoo.InputSpec("u", (100,), "bfloat16", "data", {"type": "uniform", "low": 2, "high": 3}), 1)
    assert str(low.dtype) == "bfloat16" and (low.astype(np.float32) >= 2).all()


# ---------------------------------------------------------------------------------------------------------------
# Checksums and tolerances.

def test_checksum_mismatches_name_what_differs():
    program = zoo.get("lstm_scan")
    fake = [np.zeros(o["shape"], o["dtype"]) for o in program.outputs]
    problems = program.checksum_mismatches(fake)
    assert problems and all(p.startswith("lstm_scan: output") for p in problems)
    assert any("sum" in p for p in problems)
    assert program.checksum_mismatches(fake[:1]) == ["lstm_scan: 1 outputs, expected 3"]
    assert "float16[4, 16, 4], expected float32[4, 16, 4]" in program.checksum_mismatches(
        [fake[0], fake[1], np.zeros((4, 16, 4), np.float16)])[-1]


def test_tolerances_by_dtype():
    assert zoo.tolerances(np.int32) == (0.0, 0.0) and zoo.tolerances(np.bool_) == (0.0, 0.0)
    assert zoo.tolerances(np.float32)[0] < zoo.tolerances(np.float16)[0] < zoo.tolerances("bfloat16")[0]
    assert zoo.tolerances(np.float64)[0] < zoo.tolerances(np.float32)[0]


def test_unknown_toolkit_builder_is_named():
    with pytest.raises(ValueError, match="no toolkit-written zoo program 'resnet'"):
        toolkit_models.export_program("resnet", [], {})


# ---------------------------------------------------------------------------------------------------------------
# Through load_module, and the module text.

def test_load_compiles_and_matches_the_checksums():
    program = zoo.get("lstm_scan_toolkit")
    lowered = program.load()
    assert len(lowered.in_avals) == len(program.input_specs)
    outputs = lowered.compile()(*program.inputs(0))
    assert program.checksum_mismatches(outputs) == []
    assert "func.func public @main" in program.module_text()
    assert "stablehlo.while" in program.module_text()  # the scan


# ---------------------------------------------------------------------------------------------------------------
# Against JAX: the same artifact, the same inputs.

def _jax_call(jax, program, inputs):
    from jax import export as jexport

    name = program.metadata.get("mirror_of", program.name)
    exp = jexport.deserialize(bytearray((zoo.ZOO_DIR / f"{name}.bin").read_bytes()))
    return [np.asarray(o) for o in exp.call(*inputs)]


def _assert_close(got, want, label):
    assert len(got) == len(want), label
    for i, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(g)
        rtol, atol = zoo.tolerances(w.dtype)
        assert g.shape == w.shape and g.dtype == w.dtype, (label, i)
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=max(rtol, 1e-6),
                                   atol=max(atol, 1e-6), err_msg=f"{label} output {i}")


@pytest.mark.parametrize("name", CHEAP + ("lstm_scan_toolkit",))
def test_same_artifact_through_jax_agrees(name):
    jax = pytest.importorskip("jax")
    program = zoo.get(name)
    inputs = program.inputs(2)  # not the seed the checksums were recorded for
    _assert_close(program.exported().call(*inputs), _jax_call(jax, program, inputs), name)


def test_polymorphic_program_at_two_batch_sizes_agrees_with_jax():
    jax = pytest.importorskip("jax")
    program = zoo.get("cnn_poly_batch")
    for b in (1, 5):
        inputs = program.inputs(0, dims={"b": b})
        got = program.exported().call(*inputs)
        _assert_close(got, _jax_call(jax, program, inputs), f"b={b}")
        assert np.asarray(got[0]).shape == (b, 10)


JAX_RUN = textwrap.dedent("""
    import json, sys
    import jax, numpy as np
    from jax import export as jexport
    from jax.sharding import Mesh
    from toolkit.lab import zoo

    assert jax.device_count() == 8
    rows = {}
    for program in zoo.programs():
        name = program.metadata.get("mirror_of", program.name)
        exp = jexport.deserialize(bytearray((zoo.ZOO_DIR / f"{name}.bin").read_bytes()))
        inputs = program.inputs(3)
        if exp.nr_devices > 1:
            mesh = Mesh(np.array(jax.devices()[:exp.nr_devices]), ("data",))
            call = jax.jit(exp.call, in_shardings=exp.in_shardings_jax(mesh),
                           out_shardings=exp.out_shardings_jax(mesh))
        else:
            call = exp.call
        want = [np.asarray(o) for o in call(*inputs)]
        got = [np.asarray(o) for o in program.exported().call(*inputs)]
        worst = 0.0
        for g, w in zip(got, want):
            rtol, atol = zoo.tolerances(w.dtype)
            assert g.shape == w.shape and g.dtype == w.dtype, name
            excess = np.abs(g.astype(np.float64) - w) - (rtol * np.abs(w.astype(np.float64)) + max(atol, 1e-6))
            worst = max(worst, float(excess.max(initial=-1.0)))
        rows[program.name] = worst
    print("ZOO-JAX " + json.dumps(rows))
""")


@pytest.mark.slow
@needs_full
def test_whole_zoo_against_jax_in_a_subprocess():
    pytest.importorskip("jax")
    env = dict(os.environ, TOOLKIT_NUM_CPU_DEVICES="8", JAX_PLATFORMS="cpu",
               XLA_FLAGS="--xla_force_host_platform_device_count=8")
    result = subprocess.run([sys.executable, "-c", JAX_RUN], capture_output=True, text=True, timeout=900, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    line = next(x for x in result.stdout.splitlines() if x.startswith("ZOO-JAX "))
    rows = json.loads(line[len("ZOO-JAX "):])
    assert set(rows) == {p.name for p in zoo.programs()}
    assert {name: worst for name, worst in rows.items() if worst > 0} == {}


@pytest.mark.slow
@needs_full
def test_regeneration_writes_the_committed_files(tmp_path):
    pytest.importorskip("flax")
    pytest.importorskip("equinox")
    script = zoo.ZOO_DIR.parents[2] / "scripts" / "make_zoo.py"
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    result = subprocess.run([sys.executable, str(script), "--out", str(tmp_path)], capture_output=True, text=True,
                            timeout=900, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "total" in result.stdout.splitlines()[-1]
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == sorted(p.name for p in zoo.ZOO_DIR.iterdir() if p.suffix in (".bin", ".json"))
    for name in written:
        assert (tmp_path / name).read_bytes() == (zoo.ZOO_DIR / name).read_bytes(), name
