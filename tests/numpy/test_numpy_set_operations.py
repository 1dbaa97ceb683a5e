"""toolkit.numpy's intersect1d, setdiff1d, setxor1d and union1d against jax.numpy 0.10.2: the concrete form, the
static-size form under jit (padding, fill values, indices) and errors."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from tests.numpy._jax_oracle import check

A = np.array([3, 1, 2, 3, 5, 7, 1], np.int32)
B = np.array([1, 9, 3, 3, 4, 8], np.int32)
F = np.array([0.5, np.nan, 2.0, 0.5], np.float32)
E = np.zeros((0,), np.int32)


@pytest.mark.parametrize("name", ["intersect1d", "setdiff1d", "setxor1d", "union1d"])
def test_concrete(name):
    check(lambda m: getattr(m, name)(A.reshape(7, 1), B.astype(np.float32)))  # flattened, promoted


@pytest.mark.parametrize("name", ["intersect1d", "setdiff1d", "setxor1d"])
def test_assume_unique(name):
    check(lambda m: getattr(m, name)(np.array([4, 1, 3], np.int32), np.array([3, 5, 4], np.int32),
                                     assume_unique=True))


@pytest.mark.parametrize("name", ["intersect1d", "setdiff1d", "setxor1d", "union1d"])
def test_sized_under_jit(name):
    def both_sizes(m, a, b):
        return (getattr(m, name)(a, b, size=8), getattr(m, name)(a, b, size=8, fill_value=-1),
                getattr(m, name)(a, b, size=2))
    check(both_sizes, A, B, only_jit=True)


def test_sized_eager_and_empty_operands():
    check(lambda m: m.setxor1d(A, B, size=8))
    check(lambda m: m.intersect1d(A, E, size=3))
    check(lambda m: m.setdiff1d(E, B, size=3, fill_value=4))
    check(lambda m: m.setdiff1d(A, E))
    check(lambda m: m.union1d(E, E))


def test_intersect1d_indices():
    check(lambda m: m.intersect1d(A, B, return_indices=True))
    check(lambda m, a, b: m.intersect1d(a, b, return_indices=True, size=4), A, B, only_jit=True)
    check(lambda m, a, b: m.intersect1d(a, b, return_indices=True, size=3, assume_unique=True),
          np.array([4, 1, 3], np.int32), np.array([3, 5, 4], np.int32), only_jit=True)


def test_floats_with_nan():
    check(lambda m: m.union1d(F, np.array([2.0, 3.0], np.float32)))
    check(lambda m: m.intersect1d(F, np.array([2.0, np.nan], np.float32)))


@pytest.mark.parametrize("method", ["auto", "compare_all", "binary_search", "sort"])
def test_isin_methods_are_jaxs(method):
    """Each of JAX's ``isin`` methods (duplicates, NaNs, promotion between int and float, an N-d element,
    ``invert``, ``assume_unique``, an unknown method); the last three are O((n + m) log(n + m))."""
    ints = np.array([[3, 1, 9], [2, 2, 7]], np.int32)
    for element, test, unique_ in ((ints, B, False), (F, np.array([0.5, np.nan, 3.0], np.float32), False),
                                   (np.array([4, 1, 3], np.int32), np.array([3.0, 5.0, 4.0], np.float32), True)):
        for invert in (False, True):
            check(lambda m: m.isin(element, test, invert=invert, assume_unique=unique_, method=method))
    check(lambda m: m.isin(A, B, method="nope"))


def test_intersect1d_by_bisection_as_jax():
    """intersect1d looks values up by bisection: duplicates, NaNs and signed zeros give JAX's values and
    indices, at a static size under jit too."""
    rng = np.random.default_rng(1)
    for a, b in ((rng.integers(0, 10, 25).astype(np.int32), rng.integers(0, 10, 17).astype(np.int32)),
                 (np.array([0.0, -0.0, np.nan, 1.0, 1.0, -2.0], np.float32),
                  np.array([-0.0, np.nan, 1.0, 3.0], np.float32))):
        check(lambda m: m.intersect1d(a, b, return_indices=True))
        check(lambda m, x, y: m.intersect1d(x, y, return_indices=True, size=6), a, b, only_jit=True)


@pytest.mark.parametrize("name, programs", [("intersect1d", 1), ("setdiff1d", 2), ("setxor1d", 2), ("unique", 2)])
def test_an_eager_call_compiles_one_or_two_programs(name, programs, compilations):
    # The size read from the data (one program where it depends on the data, none where numpy gives it), then one
    # program at that size; bound an operation at a time they compiled up to ~70 (intersect1d; JAX: 31).
    toolkit.clear_caches()  # (the compiled-whole jits keep what earlier tests of this process compiled)
    args = (A,) if name == "unique" else (A, B)
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(getattr(tnp, name)(*args)), getattr(np, name)(*args))
    assert compilations[0] == programs
    values, counts = tnp.unique(F, return_counts=True, equal_nan=False)  # NaNs apart: another count program
    np.testing.assert_array_equal(np.asarray(counts), [2, 1, 1])


def test_eager_vmap_and_grad_of_the_sized_forms_as_jax():
    jax = pytest.importorskip("jax")
    rows = np.stack([A[:6], B]), np.stack([B, A[1:]])
    for name, size in (("intersect1d", 3), ("setdiff1d", 4), ("setxor1d", 6)):
        check(lambda m, a, b: (jax if m is not tnp else toolkit).vmap(
            lambda x, y: getattr(m, name)(x, y, size=size))(a, b), *rows)
    check(lambda m, a, b: (jax if m is not tnp else toolkit).vmap(
        lambda x: m.unique(x, size=5, fill_value=-1, return_counts=True))(a), *rows)
    x = np.array([1.0, 2.0, 3.0, 2.0], np.float32)
    check(lambda m, a: (jax if m is not tnp else toolkit).grad(
        lambda v: (m.intersect1d(v, np.float32([2.0, 3.0]), size=2) * np.float32([1, 10])).sum())(a), x)


def test_errors():
    check(lambda m: m.union1d([1, 2], A))        # lists are refused
    check(lambda m: m.intersect1d(A, [1]))
    with pytest.raises(toolkit.ConcretizationTypeError, match="size="):
        toolkit.jit(lambda a: tnp.setdiff1d(a, B))(A)
    with pytest.raises(toolkit.ConcretizationTypeError):
        toolkit.jit(lambda a: tnp.intersect1d(a, B))(A)
    with pytest.raises(TypeError, match="static integer"):
        tnp.setxor1d(A, B, size=2.5)
    with pytest.raises(ValueError, match="non-negative"):
        tnp.union1d(A, B, size=-1)
    check(lambda m: m.unique(A, size=2.5))  # TypeError, as JAX (it was taken as 2)
    check(lambda m: m.unique(A, size=[2]))


def test_an_eager_unique_sorts_once_as_jax(monkeypatch):
    # JAX sorts, reads the count back, and finishes from what it sorted; toolkit's count program sorted and its
    # second program sorted again (1.9x JAX's time at 100,000 values). The count program hands its sort on now.
    from toolkit import stages

    toolkit.clear_caches()
    compiled: list[str] = []
    original = stages.runtime_executable.compile_module
    monkeypatch.setattr(stages.runtime_executable, "compile_module",
                        lambda module, *a, **k: compiled.append(str(module)) or original(module, *a, **k))
    values, index, inverse, counts = tnp.unique(A, return_index=True, return_inverse=True, return_counts=True)
    expected = np.unique(A, return_index=True, return_inverse=True, return_counts=True)
    for ours, theirs in zip((values, index, inverse, counts), expected):
        np.testing.assert_array_equal(np.asarray(ours), theirs)
    assert len(compiled) == 2 and sum(text.count("stablehlo.sort") for text in compiled) == 1


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.complex64])
def test_setxor1d_and_intersect1d_from_one_operand_sorts_as_jax(dtype):
    # setxor1d, and intersect1d without indices, sort each input's values alone (JAX's algorithm for setxor1d;
    # XLA CPU's argsort costs ~5x a sort), the repeats replaced by a value that sorts last: random inputs with
    # repeats, NaNs and that very value (the dtype's largest), equal to JAX's with and without assume_unique and
    # size (intersect1d's indices too: they keep the argsort).
    jnp = pytest.importorskip("jax.numpy")
    rng = np.random.default_rng(7)
    largest = np.iinfo(dtype).max if np.issubdtype(dtype, np.integer) else np.nan
    for _ in range(5):
        a, b = (rng.integers(0, 5, 8).astype(dtype) for _ in range(2))
        a[rng.random(8) < 0.2] = largest
        b[rng.random(8) < 0.2] = largest
        for name, assume_unique, kwargs in (("setxor1d", False, {}), ("setxor1d", False, {"size": 9}),
                                            ("setxor1d", True, {}), ("intersect1d", False, {"size": 9}),
                                            ("intersect1d", True, {}),
                                            ("intersect1d", False, {"return_indices": True})):
            x, y = (np.unique(a), np.unique(b)) if assume_unique else (a, b)
            ours = getattr(tnp, name)(x, y, assume_unique=assume_unique, **kwargs)
            theirs = getattr(jnp, name)(x, y, assume_unique=assume_unique, **kwargs)
            pairs = zip(ours, theirs) if isinstance(ours, tuple) else [(ours, theirs)]
            for o, t in pairs:
                assert o.dtype == t.dtype
                np.testing.assert_array_equal(np.asarray(o), np.asarray(t), err_msg=f"{name} {a} {b} {kwargs}")


@pytest.mark.parametrize("name", ["setxor1d", "intersect1d", "setdiff1d", "union1d", "unique"])
def test_fill_values_of_another_type_as_jax(name):
    # JAX pads setxor1d and intersect1d with where(..., fill_value): another type promotes the result (an int32
    # result padded with 2.5 is float32); setdiff1d (full_like), union1d and unique (astype) convert it, and a
    # value the dtype cannot hold wraps (-1 as uint8 is 255). toolkit converted everywhere, refusing -1 for uint8.
    jnp = pytest.importorskip("jax.numpy")
    a, b = np.array([1, 2, 3, 5], np.int32), np.array([2, 3, 4], np.int32)
    cases = [(a, b, 2.5), (a, b, np.float32(1.5)), (np.array([True, False]), np.array([True]), 0),
             (a.astype(np.uint8), b.astype(np.uint8), -1)]
    for x, y, fill in cases:
        results = []
        for lib in (tnp, jnp):
            call = getattr(lib, name)
            out = call(x, size=6, fill_value=fill) if name == "unique" else call(x, y, size=6, fill_value=fill)
            results.append((out.dtype, out.weak_type, np.asarray(out).tolist()))
        assert results[0] == results[1], (x.dtype, fill)
