"""Runs cases of JAX's shape-polymorphism harness corpus through toolkit, in a subprocess.

Used by ``test_jax_poly_harness.py``, which starts several of these so a case
that crashes the process fails alone. Reads case names on the command line
(``--other-size-cases``/``--refinement-cases`` name those that also get those checks), prints one JSON line per event on stdout::

    {"start": NAME}                          before a case (so a crash is blamed on it)
    {"name": NAME, "stored": ..., "other_size": ..., "refinement": ...}

Each check is ``null`` when not asked for, else ``{"ok": bool, "message": str, ...}``:

* ``stored`` — ``toolkit.export.deserialize(blob).call(*inputs)`` against the
  outputs JAX stored for run r0.
* ``other_size`` — the same export at other values of its dimension variables
  (the stored inputs cropped or wrapped to the new shapes). With jax importable,
  JAX's own ``deserialize(blob).call`` at those sizes is the oracle: both accept
  or both reject each size tried, and accepted results agree. Without jax, the
  first size toolkit accepts must give outputs of the exported output shapes.
* ``refinement`` — ``toolkit-opt`` with ``toolkit-bind-shapes`` +
  ``toolkit-refine-shapes`` on the module at the stored shapes, against jaxlib's
  C++ ``refine_polymorphic_shapes``: the same ``@main`` signature, and static
  wherever the C++ result is.

No ``eval``: dimension expressions are parsed by ``toolkit.export.symbolic_shape``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpora" / "jax_poly_harness"
sys.path.insert(0, str(CORPUS))
sys.path.insert(0, str(REPO / "tests"))  # the shared refinement oracle

from _refinement_oracle import bind_arguments, dynamic_leftovers, jaxlib_refine, main_signature  # noqa: E402

import corpus_common  # noqa: E402  (the corpus's own jax-free helpers)

from toolkit import export  # noqa: E402
from jaxlib.mlir import ir  # noqa: E402
from toolkit.core import pytrees  # noqa: E402
from toolkit.export import symbolic_shape  # noqa: E402

try:  # the oracle, when the interop extra is installed
    import jax
    from jax import export as jax_export
except ImportError:  # pragma: no cover - exercised without the interop extra
    jax = None


def _message(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}".replace("\n", " ")[:600]


def _load_blob(entry: dict) -> bytearray:
    return bytearray((CORPUS / entry["files"]["bin"]).read_bytes())


def _compare(actual_leaves: list, expected: list, scale: float) -> str | None:
    if len(actual_leaves) != len(expected):
        return f"{len(actual_leaves)} outputs, expected {len(expected)}"
    problems = []
    for index, (actual, want) in enumerate(zip(actual_leaves, expected)):
        problem = corpus_common.compare_arrays(actual, want, scale=scale, what=f"output {index}")
        if problem:
            problems.append(problem)
    return "; ".join(problems) or None


def _call_toolkit(blob: bytearray, entry: dict, inputs: list) -> list:
    args, kwargs = corpus_common.unflatten(entry["in_structure"], inputs)
    result = export.deserialize(blob).call(*args, **kwargs)
    return [np.asarray(leaf) for leaf in pytrees.tree_leaves(result)]


def _call_jax(blob: bytearray, entry: dict, inputs: list) -> list:
    args, kwargs = corpus_common.unflatten(entry["in_structure"], inputs)
    result = jax_export.deserialize(blob).call(*args, **kwargs)
    return [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(result)]


# -- the stored run ------------------------------------------------------------

def check_stored(entry: dict, blob: bytearray, arrays: dict) -> dict:
    run = entry["runs"][0]
    inputs = corpus_common.run_arrays(arrays, run["prefix"], "in", run["n_in"])
    expected = corpus_common.run_arrays(arrays, run["prefix"], "out", run["n_out"])
    try:
        actual = _call_toolkit(blob, entry, inputs)
    except Exception as error:  # noqa: BLE001 - reported as the case's failure
        return {"ok": False, "message": _message(error)}
    problem = _compare(actual, expected, entry["tol_scale"])
    if problem is not None and jax is not None:
        # The stored outputs are what JAX computed on the machine that wrote the corpus. Where JAX on this
        # machine differs from them too, the difference is the machine's (LAPACK builds return other, equally
        # valid, Schur forms of complex matrices), and JAX here is the oracle toolkit must agree with.
        try:
            theirs = _call_jax(blob, entry, inputs)
        except Exception:  # noqa: BLE001 - then the stored outputs stay the reference
            theirs = None
        if theirs is not None and _compare(theirs, expected, entry["tol_scale"]) is not None:
            vs_jax = _compare(actual, theirs, entry["tol_scale"])
            return {"ok": vs_jax is None,
                    "message": f"JAX here differs from the stored outputs too ({problem}); toolkit vs JAX here: "
                               f"{vs_jax or 'agrees'}"}
    return {"ok": problem is None, "message": problem or ""}


# -- other sizes -----------------------------------------------------------------

def _dim_value(expression: Any, values: dict[str, int]) -> int:
    if isinstance(expression, int):
        return expression
    (dimension,) = symbolic_shape(str(expression))
    return int(dimension) if isinstance(dimension, int) else int(dimension.evaluate(values))


def _resized(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``array`` cropped or wrapped around along each axis to ``shape`` (values stay in the stored range)."""
    for axis, size in enumerate(shape):
        have = array.shape[axis]
        if size <= have:
            array = np.take(array, np.arange(size), axis=axis)
        elif have == 0:
            new_shape = list(array.shape)
            new_shape[axis] = size
            array = np.zeros(new_shape, array.dtype)
        else:
            array = np.take(array, np.arange(size) % have, axis=axis)
    return np.ascontiguousarray(array)


def candidate_sizes(entry: dict) -> list[dict[str, int]]:
    """Values of the dimension variables to try besides the stored ones, most natural first."""
    stored = entry["runs"][0]["dim_values"]
    candidates = []
    for change in (lambda v: v + 1, lambda v: v + 2, lambda v: 2 * v, lambda v: v + 3, lambda v: v + 4):
        values = {name: change(int(value)) for name, value in stored.items()}
        if values not in candidates:
            candidates.append(values)
    return candidates


def _inputs_at(entry: dict, arrays: dict, values: dict[str, int]) -> list:
    run = entry["runs"][0]
    stored = corpus_common.run_arrays(arrays, run["prefix"], "in", run["n_in"])
    inputs = []
    for array, aval in zip(stored, entry["in_avals_struct"]):
        shape = tuple(_dim_value(d, values) for d in aval["shape"])
        inputs.append(_resized(array, shape))
    return inputs


def check_other_size(entry: dict, blob: bytearray, arrays: dict) -> dict:
    if not entry["dim_vars"]:
        return {"ok": True, "message": "no dimension variables", "sizes": None}
    tried = []
    for values in candidate_sizes(entry):
        try:
            inputs = _inputs_at(entry, arrays, values)
        except Exception as error:  # noqa: BLE001 - e.g. a negative size
            tried.append(f"{values}: no inputs ({_message(error)})")
            continue
        ours_error = jax_error = None
        ours = theirs = None
        try:
            ours = _call_toolkit(blob, entry, inputs)
        except Exception as error:  # noqa: BLE001
            ours_error = _message(error)
        if jax is not None:
            try:
                theirs = _call_jax(blob, entry, inputs)
            except Exception as error:  # noqa: BLE001
                jax_error = _message(error)
            if ours_error and jax_error:
                tried.append(f"{values}: both reject")
                continue
            if ours_error or jax_error:
                who = "toolkit" if ours_error else "JAX"
                return {"ok": False, "sizes": values,
                        "message": f"at {values} only {who} rejects the inputs: {ours_error or jax_error}"}
            problem = _compare(ours, theirs, entry["tol_scale"])
            return {"ok": problem is None, "sizes": values,
                    "message": f"at {values} vs JAX: {problem}" if problem else f"{values} agrees with JAX"}
        if ours_error:
            tried.append(f"{values}: {ours_error}")
            continue
        expected_shapes = [tuple(_dim_value(d, values) for d in aval["shape"]) for aval in entry["out_avals_struct"]]
        got = [tuple(a.shape) for a in ours]
        ok = got == expected_shapes
        return {"ok": ok, "sizes": values,
                "message": f"at {values}" + ("" if ok else f": output shapes {got}, expected {expected_shapes}")}
    # Every size was rejected by both (or by toolkit with no oracle): nothing compared.
    return {"ok": True, "sizes": None, "message": "no other size accepted: " + " | ".join(tried)}


# -- refinement through toolkit-opt vs the C++ refinement ------------------------

def _main_types(module_text: str, entry: dict, inputs: list) -> tuple[list[str], str]:
    """The static argument types of ``@main`` for ``inputs`` (leading token/platform arguments kept)."""
    from toolkit.ir.context import make_context

    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(module_text)
        main = next(op for op in module.body.operations
                    if op.operation.name == "func.func" and ir.StringAttr(op.operation.attributes["sym_name"]).value
                    == "main")
        arguments = list(main.regions[0].blocks[0].arguments)
        kept = [inputs[i] for i in entry["module_kept_var_idx"]]
        leading = arguments[:len(arguments) - len(kept)]
        types = [str(a.type) for a in leading]
        for argument, array in zip(arguments[len(leading):], kept):
            old = argument.type
            types.append(str(ir.RankedTensorType.get(list(array.shape), old.element_type)))
    return types, module_text


def check_refinement(entry: dict, blob: bytearray, arrays: dict) -> dict:
    from toolkit.ir.context import make_context
    from toolkit.tools import opt

    run = entry["runs"][0]
    inputs = corpus_common.run_arrays(arrays, run["prefix"], "in", run["n_in"])
    exported = export.deserialize(blob)
    types, text = _main_types(exported.mlir_module(), entry, inputs)
    kept_types = types[len(types) - len(entry["module_kept_var_idx"]):]
    try:
        with make_context():
            theirs = jaxlib_refine(bind_arguments(text, kept_types))
            their_signature, their_leftovers = main_signature(theirs), dynamic_leftovers(theirs)
    except Exception as error:  # noqa: BLE001 - the oracle cannot refine it: nothing to compare
        return {"ok": True, "message": f"C++ refinement fails: {_message(error)}"}
    with tempfile.TemporaryDirectory() as directory:
        source, target = Path(directory, "in.mlir"), Path(directory, "out.mlir")
        source.write_text(text)
        pipeline = ("builtin.module(toolkit-bind-shapes{types=" + ",".join(types) + "}, toolkit-refine-shapes)")
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            status = opt.main([str(source), f"--pass-pipeline={pipeline}", "-o", str(target)])
        if status != 0:
            return {"ok": False, "message": f"toolkit-opt exit {status}: {stderr.getvalue().strip()[:600]}"}
        with make_context():
            ours = ir.Module.parse(target.read_text())
            our_signature, our_leftovers = main_signature(ours), dynamic_leftovers(ours)
    problems = []
    if our_signature != their_signature:
        problems.append(f"@main {our_signature} but C++ gives {their_signature}")
    if our_leftovers and not their_leftovers:
        problems.append(f"not static where C++ refinement is: {', '.join(our_leftovers[:5])}")
    return {"ok": not problems, "message": "; ".join(problems)}


CHECKS = {"stored": check_stored, "other_size": check_other_size, "refinement": check_refinement}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--other-size-cases", default="", help="comma-separated cases that also get `other_size`")
    parser.add_argument("--refinement-cases", default="", help="comma-separated cases that also get `refinement`")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args(argv)
    wanted_cases = {"stored": None,  # every case
                    "other_size": set(filter(None, args.other_size_cases.split(","))),
                    "refinement": set(filter(None, args.refinement_cases.split(",")))}
    entries = {entry["name"]: entry for entry in corpus_common.read_manifest(str(CORPUS))["cases"]}
    out = sys.stdout
    for name in args.names:
        print(json.dumps({"start": name}), file=out, flush=True)
        entry = entries[name]
        record: dict[str, Any] = {"name": name}
        try:
            blob = _load_blob(entry)
            arrays = corpus_common.load_case_arrays(str(CORPUS), entry)
            for check in CHECKS:
                wanted = wanted_cases[check] is None or name in wanted_cases[check]
                record[check] = CHECKS[check](entry, blob, arrays) if wanted else None
        except Exception as error:  # noqa: BLE001 - a bug in the harness itself still names the case
            record["harness_error"] = _message(error) + " " + traceback.format_exc(limit=3).replace("\n", " | ")
        print(json.dumps(record), file=out, flush=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    sys.exit(main())
