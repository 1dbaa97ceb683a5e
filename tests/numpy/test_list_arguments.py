"""toolkit.numpy's non-elementwise functions refuse lists and tuples as JAX's do (``check_arraylike``).

JAX 0.10.2 refuses a list or tuple where it expects an array: ``jnp.reshape([1, 2], (2,))`` is ``TypeError:
reshape requires ndarray or scalar arguments, got <class 'list'> at position 0.``, naming the function JAX's
check names (``ravel`` for ``append``, ``ones_like`` for ``empty_like``, ``matvec`` for ``vecmat``, ...) and the
position among the checked arguments (the elements of a sequence argument for ``stack``/``concatenate``).
The elementwise functions are in ``test_ufunc_list_arguments.py``.

Each case below is one call with arrays (``M``, ``V``, ... markers); every array in it, in turn, is replaced by
its list (and tuple) and both libraries' refusals are compared in the same run: class and message. The values
for the arrays are compared too. ``test_every_shared_name_is_classified`` keeps the table complete: each
public function toolkit.numpy shares with jax.numpy is a case here, an elementwise function, or a name listed
with the reason it takes no list check.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import toolkit  # noqa: E402
import toolkit.numpy as tnp  # noqa: E402

from test_ufunc_list_arguments import BINARY, UNARY  # noqa: E402  (the elementwise names, tested there)


class _Marker:
    """An array argument of a case, replaced by its list or tuple in turn."""

    def __init__(self, value: np.ndarray):
        self.value = value


M = _Marker(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))   # a matrix
V = _Marker(np.array([0.5, 1.5], np.float32))                 # a vector (sorted)
W = _Marker(np.array([2.0, -1.0], np.float32))                # another vector
I = _Marker(np.array([1, 0], np.int32))                       # indices  # noqa: E741
IM = _Marker(np.array([[1, 0], [0, 1]], np.int32))            # indices along an axis
B = _Marker(np.array([True, False]))                          # a mask
V3 = _Marker(np.array([1.0, 2.0, 4.0], np.float32))           # a 3-vector (cross)
T = _Marker(np.arange(8.0, dtype=np.float32).reshape(2, 2, 2))  # rank 3 (dsplit)
U8 = _Marker(np.array([3, 255], np.uint8))                     # bytes (unpackbits)
S = _Marker(np.array([[2.0, 1.0], [1.0, 3.0]], np.float32))    # symmetric positive definite (linalg)

#: name -> calls ``(args, kwargs)`` with markers where arrays go (in sequences too).
CASES: dict[str, list[tuple[tuple, dict]]] = {
    # shapes
    "reshape": [((M, (4,)), {})], "ravel": [((M,), {})], "transpose": [((M,), {})],
    "permute_dims": [((M, (1, 0)), {})], "matrix_transpose": [((M,), {})], "swapaxes": [((M, 0, 1), {})],
    "moveaxis": [((M, 0, 1), {})], "rollaxis": [((M, 1), {})], "squeeze": [((M,), {})],
    "expand_dims": [((M, 0), {})], "atleast_1d": [((V,), {}), ((V, M), {})], "atleast_2d": [((V,), {}), ((W, M), {})],
    "atleast_3d": [((V,), {}), ((V, M), {})], "broadcast_arrays": [((V, M), {})], "broadcast_to": [((V, (2, 2)), {})],
    "concatenate": [(([V, W],), {}), (([M, M],), {"axis": None})], "stack": [(([V, W],), {})],
    "hstack": [(([V, W],), {})], "vstack": [(([V, W],), {})], "dstack": [(([V, W],), {})],
    "column_stack": [(([V, W],), {})], "append": [((V, W), {}), ((M, M), {"axis": 0})],
    "split": [((V, 2), {})], "array_split": [((V, 2), {})], "hsplit": [((M, 2), {})], "vsplit": [((M, 2), {})],
    "unstack": [((M,), {})], "pad": [((M, 1), {})], "flip": [((M,), {})], "fliplr": [((M,), {})],
    "flipud": [((M,), {})], "rot90": [((M,), {})], "roll": [((M, 1), {})], "tile": [((V, 2), {})],
    "repeat": [((V, 2), {}), ((V, I), {})],
    # indexing, sorting, searching
    "take": [((V, I), {})], "take_along_axis": [((M, IM), {"axis": 1})], "sort": [((W,), {})],
    "argsort": [((W,), {})], "lexsort": [(([V, W],), {})], "searchsorted": [((V, W), {}), ((V, W), {"sorter": I})],
    "argpartition": [((W, 1), {})], "partition": [((W, 1), {})], "where": [((B,), {}), ((B, V, W), {})],
    "nonzero": [((B,), {})], "flatnonzero": [((B,), {})], "argwhere": [((B,), {})], "extract": [((B, V), {})],
    "compress": [((B, V), {})], "isin": [((V, W), {})], "digitize": [((W, V), {})],
    "ix_": [((I, I), {})], "meshgrid": [((V, W), {})], "unravel_index": [((I, (2, 2)), {})],
    "ravel_multi_index": [(((I, I), (2, 2)), {})], "tril_indices_from": [((M,), {})],
    "triu_indices_from": [((M,), {})], "diag_indices_from": [((M,), {})],
    # diagonals, triangles, creation
    "diag": [((V,), {}), ((M,), {})], "diagonal": [((M,), {})], "trace": [((M,), {})], "tril": [((M,), {})],
    "triu": [((M,), {})], "vander": [((V,), {})], "full": [(((2,), V), {})], "full_like": [((V, W), {})],
    "zeros_like": [((V,), {})], "ones_like": [((V,), {})], "empty_like": [((V,), {})], "copy": [((V,), {})],
    "linspace": [((V, W, 3), {})], "diagflat": [((V,), {})], "fill_diagonal": [((M, 0.0), {"inplace": False})],
    # tensor contractions
    "dot": [((M, V), {})], "vdot": [((V, W), {})], "inner": [((V, W), {})], "outer": [((V, W), {})],
    "matmul": [((M, V), {})], "matvec": [((M, V), {})], "vecmat": [((V, M), {})], "vecdot": [((V, W), {})],
    "tensordot": [((M, M), {})], "kron": [((M, V), {})], "cross": [((V3, V3), {})],
    # reductions and statistics
    "sum": [((V,), {})], "prod": [((V,), {})], "max": [((V,), {})], "min": [((V,), {})], "amax": [((V,), {})],
    "amin": [((V,), {})], "mean": [((V,), {})], "var": [((V,), {})], "std": [((V,), {})], "any": [((B,), {})],
    "all": [((B,), {})], "argmax": [((V,), {})], "argmin": [((V,), {})], "cumsum": [((V,), {})],
    "cumprod": [((V,), {})], "cumulative_sum": [((V,), {})], "cumulative_prod": [((V,), {})],
    "count_nonzero": [((V,), {})], "allclose": [((V, W), {})], "ptp": [((V,), {})],
    "median": [((V,), {})], "nanmedian": [((V,), {})], "quantile": [((V, V), {})], "nanquantile": [((V, V), {})],
    "percentile": [((V, W), {})], "nanpercentile": [((V, W), {})], "average": [((V,), {})],
    "bincount": [((I,), {})], "nansum": [((V,), {})], "nanmean": [((V,), {})], "nanmax": [((V,), {})],
    "nanargmax": [((V,), {})],
    # signal
    "diff": [((V,), {})], "ediff1d": [((V,), {}), ((V,), {"to_begin": W})], "convolve": [((V, W), {})],
    "correlate": [((V, W), {})], "interp": [((W, V, W), {})], "trapezoid": [((V,), {}), ((V, W), {})],
    "unwrap": [((V,), {})],
    # element functions and aliases
    "iscomplex": [((V,), {})], "isreal": [((V,), {})], "angle": [((V,), {})], "sort_complex": [((W,), {})],
    "bitwise_right_shift": [((I, I), {})], "bitwise_left_shift": [((I, I), {})], "concat": [(([V, W],), {})],
    "unique_values": [((V,), {})], "unique": [((V,), {})], "unique_all": [((V,), {})],
    "unique_counts": [((V,), {})], "unique_inverse": [((V,), {})], "intersect1d": [((V, W), {})],
    "setdiff1d": [((V, W), {})], "setxor1d": [((V, W), {})], "union1d": [((V, W), {})],
    **{name: [((V,), {})] for name in ("acos", "acosh", "asin", "asinh", "atan", "atanh", "frexp", "i0",
                                       "isneginf", "isposinf", "spacing", "nanargmin", "nancumprod", "nancumsum",
                                       "nanmin", "nanprod", "nanstd", "nanvar", "trim_zeros", "poly", "polyder",
                                       "polyint", "roots", "histogram_bin_edges", "histogram")},
    "atan2": [((V, W), {})], "bitwise_count": [((I,), {})], "bitwise_invert": [((I,), {})],
    "astype": [((V, np.int32), {})], "ldexp": [((V, I), {})], "corrcoef": [((M,), {})], "cov": [((M,), {})],
    "histogram2d": [((V, W), {})], "histogramdd": [((M,), {})], "delete": [((V, 0), {})],
    "insert": [((V, 0, 1.0), {})], "dsplit": [((T, 2), {})], "resize": [((V, 4), {})],
    "polyadd": [((V, W), {})], "polysub": [((V, W), {})], "polymul": [((V, W), {})], "polydiv": [((V, W), {})],
    "polyval": [((V, W), {})], "polyfit": [((V, W, 1), {})], "packbits": [((B,), {})],
    "unpackbits": [((U8,), {})], "einsum": [(("i,i", V, W), {})], "choose": [((I, [V, W]), {})],
    "place": [((V, B, W), {"inplace": False})], "put": [((V, I, W), {"inplace": False})],
    "put_along_axis": [((M, IM, 0.0), {"axis": 1, "inplace": False})],
    "select": [(([B], [V]), {})], "piecewise": [((V, [np.array([True, False])], [1.0, 2.0]), {})],
    "geomspace": [((V, W, 3), {})], "logspace": [((V, W, 3), {})], "gradient": [((V,), {})],
    # toolkit.numpy.fft and toolkit.numpy.linalg (JAX's names: jax.numpy.fft.fft, jnp.linalg.inv, cond, ...)
    **{f"fft.{name}": [((M,), {})] for name in (
        "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn", "hfft",
        "fftshift", "ifftshift")},
    **{f"linalg.{name}": [((S,), {})] for name in (
        "cholesky", "svd", "svdvals", "eig", "eigvals", "eigh", "eigvalsh", "qr", "inv", "slogdet", "det", "pinv",
        "matrix_rank", "cond", "norm", "vector_norm", "matrix_norm", "trace", "diagonal", "matrix_transpose")},
    "linalg.matrix_power": [((S, 2), {})], "linalg.solve": [((S, V), {})], "linalg.lstsq": [((S, V), {})],
    "linalg.tensorinv": [((S, 1), {})], "linalg.tensorsolve": [((S, V), {})], "linalg.matmul": [((S, V), {})],
    "linalg.tensordot": [((S, S), {})], "linalg.vecdot": [((V, W), {})], "linalg.outer": [((V, W), {})],
    "linalg.cross": [((V3, V3), {})], "linalg.multi_dot": [(([S, S, V],), {})],
}

#: Cases where JAX fails on a list before its check (a jitted function tracing the list's elements): toolkit
#: refuses with the check JAX's function makes (its name, the position), JAX with another ``TypeError``.
JAX_FAILS_FIRST = {"average": "TracerArrayConversionError", "geomspace": "TypeError", "logspace": "TypeError",
                   "gradient": "TypeError"}

#: Functions JAX checks that are not cases here, with the reason.
NOT_CASES = {
    **{name: "elementwise: test_ufunc_list_arguments.py" for name in UNARY + BINARY},
    # JAX takes lists (or non-arrays) here, as toolkit does.
    **{name: "takes lists in JAX too" for name in (
        "array", "asarray", "array_equal", "array_equiv", "block", "einsum_path", "fromfunction", "vectorize",
        "apply_along_axis", "apply_over_axes", "frompyfunc", "iscomplexobj", "isrealobj", "isscalar", "iterable",
        "ndim", "shape", "size", "can_cast", "issubdtype", "isdtype", "result_type", "promote_types", "finfo",
        "iinfo", "broadcast_shapes", "from_dlpack", "printoptions", "set_printoptions", "get_printoptions",
        "mask_indices", "indices", "tril_indices", "triu_indices", "diag_indices", "eye", "identity", "tri",
        "zeros", "ones", "empty", "arange", "bartlett", "blackman", "hamming", "hanning", "kaiser", "dtype",
        "fft.fftfreq", "fft.rfftfreq", "fft.ihfft")},
    **{name: "host bytes and files, read or written by numpy on the host: no array argument to check "
             "(test_host_io_as_jax.py)" for name in (
        "frombuffer", "fromfile", "fromiter", "fromstring", "load", "save", "savez")},
    "array_repr": "JAX has no check (a list is an AttributeError there); toolkit prints it as numpy does",
    "array_str": "JAX has no check (a list is an AttributeError there); toolkit prints it as numpy does",
}


def _markers(tree, path=()):
    """``(path, marker)`` for every marker in the nested args/kwargs."""
    if isinstance(tree, _Marker):
        yield path, tree
    elif isinstance(tree, (list, tuple)):
        for i, x in enumerate(tree):
            yield from _markers(x, path + (i,))
    elif isinstance(tree, dict):
        for k, x in tree.items():
            yield from _markers(x, path + (k,))


def _fill(tree, replace_path=None, container=list, path=()):
    """The args/kwargs with markers as numpy arrays, the one at ``replace_path`` as a ``container``."""
    if isinstance(tree, _Marker):
        return container(tree.value.tolist()) if path == replace_path else tree.value
    if isinstance(tree, dict):
        return {k: _fill(x, replace_path, container, path + (k,)) for k, x in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_fill(x, replace_path, container, path + (i,)) for i, x in enumerate(tree))
    return tree


def _function(module, name):
    for part in name.split("."):  # "linalg.inv": module.linalg.inv
        module = getattr(module, part)
    return module


def _call(module, name, args, kwargs):
    try:
        return None, _function(module, name)(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - compared between the two libraries
        return (type(e), str(e)), None


_REFUSALS = [pytest.param(name, i, path, container, id=f"{name}-{i}-{'.'.join(map(str, path))}-{container.__name__}")
             for name, calls in CASES.items() for i, call in enumerate(calls) for path, _ in _markers(call)
             for container in (list, tuple)]


@pytest.mark.parametrize("name, case, path, container", _REFUSALS)
def test_a_list_is_refused_as_jax(name, case, path, container):
    args, kwargs = _fill(CASES[name][case], path, container)
    expected, _ = _call(jnp, name, args, kwargs)
    got, _ = _call(tnp, name, args, kwargs)
    if name in JAX_FAILS_FIRST:
        assert expected is not None and expected[0].__name__ == JAX_FAILS_FIRST[name], expected
        assert issubclass(expected[0], TypeError)
        assert got is not None and got[0] is TypeError, got
        assert got[1] == f"{name} requires ndarray or scalar arguments, got {container} at position {path[1]}."
        return
    assert expected is not None and expected[0] is TypeError and "requires ndarray or scalar" in expected[1], \
        expected
    assert got == expected


def _leaves(x):
    if isinstance(x, (list, tuple)):
        return [leaf for e in x for leaf in _leaves(e)]
    return [x]


#: Values compared with JAX in their own test files (slow to compile here; the refusals are tested above): these,
#: and fft's and linalg's (test_fft.py, tests/linalg).
VALUES_ELSEWHERE = {"insert", "histogram", "histogram2d", "intersect1d", "setxor1d", "corrcoef"}


@pytest.mark.parametrize("name", sorted(name for name in CASES if name not in VALUES_ELSEWHERE and "." not in name))
def test_arrays_are_accepted_with_jax_values(name):
    for call in CASES[name]:
        args, kwargs = _fill(call)
        error, want = _call(jnp, name, args, kwargs)
        assert error is None, error
        got = _function(tnp, name)(*args, **kwargs)
        got, want = _leaves(got), _leaves(want)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)
            assert np.asarray(g).dtype == np.asarray(w).dtype, name


def _shared_functions() -> set[str]:
    names = set()
    for prefix, ours, theirs in (("", tnp, jnp), ("fft.", tnp.fft, jnp.fft), ("linalg.", tnp.linalg, jnp.linalg)):
        names |= {prefix + name for name in dir(ours) if not name.startswith("_") and hasattr(theirs, name)
                  and inspect.isroutine(getattr(ours, name))}
    return names


def test_every_shared_name_is_classified():
    missing = sorted(_shared_functions() - set(CASES) - set(NOT_CASES))
    assert not missing, f"add these to CASES (or NOT_CASES with a reason): {missing}"


def test_inside_jit_lists_are_refused_and_tracers_accepted():
    f = toolkit.jit(lambda x: tnp.concatenate([x, tnp.flip(x)]))
    np.testing.assert_allclose(np.asarray(f(np.arange(3.0, dtype=np.float32))), [0, 1, 2, 2, 1, 0])
    with pytest.raises(TypeError, match=r"^stack requires ndarray or scalar arguments, got <class 'list'> at "
                                        r"position 1\.$"):
        toolkit.jit(lambda x: tnp.stack([x, [1.0, 2.0]]))(np.ones(2, np.float32))


def test_array_sequences_are_still_joined():
    """A single array (not a list of arrays) given to the joining functions is split along its first axis."""
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    for name in ("concatenate", "stack", "hstack", "vstack", "dstack", "column_stack"):
        np.testing.assert_allclose(np.asarray(getattr(tnp, name)(tnp.asarray(x))), getattr(jnp, name)(x),
                                   err_msg=name)


def test_the_matmul_operator_defers_to_a_list_as_jax():
    """``x @ [1, 2]``: Python's ``TypeError`` (the operator returns ``NotImplemented``), as JAX's operators."""
    x = np.eye(2, dtype=np.float32)
    for ours, theirs in ((tnp.asarray(x), jnp.asarray(x)),):
        for f in (lambda a: a @ [1.0, 2.0], lambda a: [1.0, 2.0] @ a, lambda a: a @ (1.0, 2.0)):
            with pytest.raises(TypeError, match=r"^unsupported operand type\(s\) for @"):
                f(theirs)
            with pytest.raises(TypeError, match=r"^unsupported operand type\(s\) for @"):
                f(ours)
    np.testing.assert_allclose(np.asarray(tnp.asarray(x) @ np.ones(2, np.float32)), [1.0, 1.0])
