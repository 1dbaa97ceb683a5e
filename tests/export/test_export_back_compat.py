"""JAX's back-compat test data (CPU) loads through toolkit's Exported and reproduces the expected outputs.

The data sets ship inside the jax package
(``jax/_src/internal_test_util/export_back_compat_test_data/``); they are
read here as data only — toolkit itself never imports jax. Each holds a
serialized module, its inputs and the outputs JAX computed when it was
serialized. Custom calls (LAPACK) run through jaxlib's CPU kernels, which
``toolkit.runtime`` registers.
"""

from __future__ import annotations

import importlib
import pkgutil

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from toolkit.core import pytrees  # noqa: E402
from toolkit.core.avals import ShapedArray  # noqa: E402
from toolkit.export import Exported  # noqa: E402

#: The data sets include float64/int64 ones: they run with 64-bit types on, as in JAX's own back-compat suite
#: (tests/conftest.py; a 32-bit data set runs the same either way).
pytestmark = pytest.mark.x64

DATA_PACKAGE = "jax._src.internal_test_util.export_back_compat_test_data"

#: Tolerances by output dtype (JAX's tests use 1e-7 by default, looser for float32 decompositions).
RTOL = {np.dtype(np.float32): 1e-5, np.dtype(np.complex64): 1e-5}


def _cpu_data_sets() -> list[tuple[str, dict]]:
    package = importlib.import_module(DATA_PACKAGE)
    found = []
    for info in pkgutil.iter_modules(package.__path__):
        if info.ispkg:
            continue
        module = importlib.import_module(f"{DATA_PACKAGE}.{info.name}")
        for attr in sorted(vars(module)):
            if not attr.startswith("data_"):
                continue
            value = getattr(module, attr)
            entries = [(attr, value)] if "mlir_module_serialized" in value else [
                (f"{attr}[{k}]", v) for k, v in value.items() if isinstance(v, dict)]
            for name, entry in entries:
                if entry.get("platform") == "cpu" and "mlir_module_serialized" in entry:
                    found.append((f"{info.name}.{name}", entry))
    return found


DATA_SETS = _cpu_data_sets()


def exported_from_data(data: dict) -> Exported:
    """The Exported JAX's back-compat harness builds for a data set (all inputs kept, no shardings)."""
    inputs = tuple(np.asarray(x) for x in data["inputs"])
    outputs = data["expected_outputs"]
    in_avals = tuple(ShapedArray(x.shape, x.dtype) for x in inputs)
    out_leaves, out_tree = pytrees.tree_flatten(outputs)
    out_avals = tuple(ShapedArray(np.shape(x), np.asarray(x).dtype) for x in out_leaves)
    return Exported(
        fun_name="run_serialized", in_tree=pytrees.tree_structure((inputs, {})), in_avals=in_avals,
        out_tree=out_tree, out_avals=out_avals, in_shardings_hlo=(), out_shardings_hlo=(),
        nr_devices=data.get("nr_devices", 1), platforms=("cpu",), ordered_effects=(), unordered_effects=(),
        disabled_safety_checks=(), mlir_module_serialized=data["mlir_module_serialized"],
        calling_convention_version=data["xla_call_module_version"],
        module_kept_var_idx=tuple(range(len(in_avals))), uses_global_constants=False)


def test_there_are_cpu_data_sets():
    assert len(DATA_SETS) >= 30, [n for n, _ in DATA_SETS]


#: Decompositions whose outputs are not unique (eigenvectors of repeated eigenvalues, Schur
#: forms): JAX's own back-compat tests check them with custom predicates; here the outputs
#: must equal what JAX computes today from the same module (same jaxlib LAPACK kernels).
NON_UNIQUE = ("cpu_eig_lapack_geev", "cpu_eigh_lapack_syev", "cpu_schur_lapack_gees")

#: Data sets that need JAX's C++ shape refinement, which also rewrites the
#: ``stablehlo.dynamic_*`` custom calls into static ops; toolkit's refinement
#: (``stablehlo-refine-shapes``) does not rewrite them yet.
def _jax_outputs(data: dict) -> list[np.ndarray]:
    """What JAX computes today for the data set's module (its back-compat harness's Exported)."""
    from jax._src.export import _export

    inputs = tuple(np.asarray(x) for x in data["inputs"])
    in_avals = tuple(jax.core.ShapedArray(x.shape, x.dtype) for x in inputs)
    out_leaves, out_tree = jax.tree_util.tree_flatten(data["expected_outputs"])
    out_avals = tuple(jax.core.ShapedArray(np.shape(x), np.asarray(x).dtype) for x in out_leaves)
    exp = _export.Exported(
        fun_name="run_serialized", in_tree=jax.tree_util.tree_structure((inputs, {})), in_avals=in_avals,
        out_tree=out_tree, out_avals=out_avals, _has_named_shardings=True,
        _in_named_shardings=(None,) * len(in_avals), _out_named_shardings=(None,) * len(out_avals),
        in_shardings_hlo=(None,) * len(in_avals), out_shardings_hlo=(None,) * len(out_avals),
        platforms=("cpu",), ordered_effects=(), unordered_effects=(), disabled_safety_checks=(),
        mlir_module_serialized=data["mlir_module_serialized"],
        calling_convention_version=data["xla_call_module_version"], nr_devices=1,
        module_kept_var_idx=tuple(range(len(in_avals))), uses_global_constants=False, _get_vjp=None)
    # The 64-bit data sets need JAX's x64: on for this module's tests (pytestmark, tests/conftest.py).
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(exp.call(*inputs))]


@pytest.mark.parametrize("name,data", DATA_SETS, ids=[n for n, _ in DATA_SETS])
def test_back_compat_data_reproduces_expected_outputs(name, data):
    exp = exported_from_data(data)
    result = exp.call(*[np.asarray(x) for x in data["inputs"]])
    got = pytrees.tree_leaves(result)
    want = _jax_outputs(data) if name.startswith(NON_UNIQUE) else pytrees.tree_leaves(data["expected_outputs"])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        g = np.asarray(g)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        rtol = RTOL.get(w.dtype, 1e-7)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * max(1.0, float(np.max(np.abs(w), initial=0))))
