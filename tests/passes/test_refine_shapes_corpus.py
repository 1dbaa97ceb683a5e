"""toolkit-refine-shapes on JAX 0.10.2's own shape-polymorphic exports, one module per dynamic form.

Corpus: ``../shared/corpora/jax_poly_harness`` (2,024 ``jax.export`` artifacts
with their inputs and JAX's outputs; no jax needed). For a representative
case of every dynamic form JAX writes, the module is bound to the stored
input shapes and refined by toolkit (bind + refine) and by jaxlib's C++
``refine_polymorphic_shapes`` (the oracle). Ours must have the same ``@main``
signature, be as static (no dynamic type, no shape assertion, no
``stablehlo.dynamic_*`` target, no shape operand), give every custom call the
same operands and attributes as C++ does, and compute JAX's stored outputs
when compiled and run on XLA CPU.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from jaxlib.mlir import ir

from toolkit import export
from toolkit.ir.context import make_context
from toolkit.passes import run_pipeline
from toolkit.runtime import standalone
from _refinement_oracle import bind_arguments, dynamic_leftovers, jaxlib_refine, main_signature

CORPUS = Path(__file__).parents[2] / ".." / "shared" / "corpora" / "jax_poly_harness"

pytestmark = pytest.mark.skipif(not (CORPUS / "manifest.json").exists(),
                                reason="needs ../shared/corpora/jax_poly_harness")

#: case -> the dynamic form it stands for.
CASES = {
    # custom calls with shape operands (indices_of_shape_operands), dropped once static
    "inv_": "lapack getrf + trsm (alias on operand 1, shape operand after it)",
    "qr_shape_float32_2_3_4_5_poly_b1_b2_m_n_full_matrices_True": "lapack geqrf + orgqr",
    "svd_shape_complex64_2_3_4_5_poly_b1_b2_full_matrices_True_compute_uv_True": "lapack gesdd",
    "eig_shape_float32_3_5_5_poly_b_left_True_right_True": "lapack geev",
    "eigh_shape_float32_2_3_4_4_poly_b1_b2_n_n_lower_True": "lapack syevd",
    "vmap_cholesky_shape_bfloat16_2_5_5_": "lapack potrf under vmap",
    "approx_max_k_n_8_k_4_agg_True": "ApproxTopK with shape operands",
    # JAX's stablehlo.dynamic_* custom calls
    "approx_max_k_n_8_k_k_agg_True": "stablehlo.dynamic_approx_top_k",
    "random_choice_threefry_non_partitionable_arr_poly_True_shape_poly_True_replace_True_use_p_True":
        "stablehlo.dynamic_top_k",
    "random_gamma_unsafe_rbg": "stablehlo.dynamic_rng_bit_generator",
    "cumsum_reduce_axis_poly": "stablehlo.dynamic_reduce_window",
    "reduce_window_variadic_generic_window_size_dynamic": "variadic stablehlo.dynamic_reduce_window",
    "tril_indices_has_k_True_has_m_True": "dynamic_reduce_window inside a private callee",
    "random_choice_unsafe_rbg_arr_poly_True_shape_poly_False_replace_False_use_p_True":
        "composite chlo.top_k with a dynamic decomposition + dynamic_rng_bit_generator",
    # composites, select_and_scatter, nested callees with dimension arguments
    "vmap_cosh_shape_bfloat16_20_20_": "composite chlo.cosh",
    "vmap_top_k_dtypes_inshape_bfloat16_5_3_k_2": "composite chlo.top_k",
    "vmap_select_and_scatter_add_dtypes_shape_float32_2_4_6_selectprim_ge_windowdimensions_2_2_2_windowst_4ad6b9e5":
        "select_and_scatter",
    "conv_general_dilated_1d_stride_2_even": "floor_divide callee reached through two specializations",
}

_ELEMENT_TYPES = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16", "int8": "i8",
                  "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "ui8", "uint16": "ui16",
                  "uint32": "ui32", "uint64": "ui64", "bool": "i1", "complex64": "complex<f32>",
                  "complex128": "complex<f64>"}


def _corpus():
    sys.path.insert(0, str(CORPUS))
    # function-level: the corpus' own module is importable only once its directory is on sys.path.
    import corpus_common

    return corpus_common


def _case(name: str) -> dict:
    manifest = _corpus().read_manifest(str(CORPUS))
    return next(entry for entry in manifest["cases"] if entry["name"] == name)


def _tensor_type(array: np.ndarray) -> str:
    return "tensor<" + "".join(f"{d}x" for d in array.shape) + _ELEMENT_TYPES[array.dtype.name] + ">"


def _module_and_inputs(name: str) -> tuple[str, list[str], list[np.ndarray], list[np.ndarray], dict]:
    corpus = _corpus()
    entry = _case(name)
    exported = export.deserialize(bytearray((CORPUS / entry["files"]["bin"]).read_bytes()))
    arrays = corpus.load_case_arrays(str(CORPUS), entry)
    run = entry["runs"][0]
    inputs = corpus.run_arrays(arrays, "r0", "in", run["n_in"])
    outputs = corpus.run_arrays(arrays, "r0", "out", run["n_out"])
    kept = [inputs[i] for i in entry["module_kept_var_idx"]]
    return exported.mlir_module(), [_tensor_type(a) for a in kept], kept, outputs, entry


def _ours(text: str, types: list[str]) -> ir.Module:
    with make_context():
        module = bind_arguments(text, types)
    run_pipeline(module, "builtin.module(toolkit-refine-shapes)")
    return module


def _cxx(text: str, types: list[str]) -> ir.Module:
    with make_context():
        return jaxlib_refine(bind_arguments(text, types))


def _custom_calls(module: ir.Module) -> set[str]:
    """Each custom call as target, operand types and attribute names (what the kernel sees)."""
    found = set()

    def visit(op):
        if op.name == "stablehlo.custom_call":
            target = ir.StringAttr(op.attributes["call_target_name"]).value
            attributes = sorted(name for name in op.attributes if name not in ("api_version", "has_side_effect"))
            layouts = len(ir.ArrayAttr(op.attributes["operand_layouts"])) if "operand_layouts" in op.attributes else None
            found.add(f"{target}({', '.join(str(v.type) for v in op.operands)}) {attributes} layouts={layouts}")
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


@pytest.mark.parametrize("name", sorted(CASES))
def test_as_static_as_cxx_and_runs(name):
    text, types, inputs, outputs, entry = _module_and_inputs(name)
    ours = _ours(text, types)
    theirs = _cxx(text, types)
    assert main_signature(ours) == main_signature(theirs), CASES[name]
    assert dynamic_leftovers(ours) == [], CASES[name]
    assert _custom_calls(ours) == _custom_calls(theirs), CASES[name]
    executable = standalone.compile_module(str(ours))
    got = standalone.execute(executable, inputs)
    assert len(got) == len(outputs)
    for index, (actual, expected) in enumerate(zip(got, outputs)):
        problem = _corpus().compare_arrays(actual, expected, scale=entry["tol_scale"], what=f"out{index}")
        assert not problem, f"{CASES[name]}: {problem}"
