"""JAX 0.10.2's keyword names in toolkit.numpy (issue 23, item 4): clip(min=, max=), reshape(shape=), where=/
initial= on reductions, where(size=, fill_value=), nonzero/argwhere/flatnonzero/unique with size=; side by side
with JAX in the same run, eagerly and under jit, with their error paths."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

jax = pytest.importorskip("jax")
jnp = jax.numpy

X = np.arange(12, dtype=np.float32).reshape(3, 4) - 4
MASK = (np.arange(12).reshape(3, 4) % 3) != 0
INTS = np.array([[0, 3, 0], [5, 0, 7]])


def _same(ours, theirs):
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert o.shape == t.shape and o.dtype == t.dtype, (o.shape, o.dtype, t.shape, t.dtype)
        assert bool(o.aval.weak_type) == bool(t.aval.weak_type)
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-6)


def _both(case, jit=False):
    if jit:
        _same(toolkit.jit(lambda: case(tnp))(), jax.jit(lambda: case(jnp))())
    else:
        _same(case(tnp), case(jnp))


CASES = [
    lambda m: m.clip(m.asarray(X), min=-1, max=3), lambda m: m.clip(m.asarray(X), max=2),
    lambda m: m.clip(m.asarray(X), -1, 3), lambda m: m.reshape(m.asarray(X), shape=(4, 3)),
    lambda m: m.reshape(m.asarray(X), shape=-1),
    lambda m: m.sum(m.asarray(X), where=MASK), lambda m: m.sum(m.asarray(X), axis=1, where=MASK, initial=10.),
    lambda m: m.sum(m.asarray(X), axis=0, keepdims=True, initial=1.),
    lambda m: m.prod(m.asarray(X[:, :2]), where=MASK[:, :2], initial=2.),
    lambda m: m.max(m.asarray(X), where=MASK, initial=-100.), lambda m: m.min(m.asarray(X), axis=0, initial=-3.),
    lambda m: m.amax(m.asarray(X), axis=1, where=MASK, initial=0.),
    lambda m: m.max(m.zeros((0, 3)), axis=0, initial=5.),
    lambda m: m.any(m.asarray(X) > 5, where=MASK), lambda m: m.all(m.asarray(X) > -5, axis=1, where=MASK),
    lambda m: m.mean(m.asarray(X), where=MASK), lambda m: m.mean(m.asarray(X), axis=1, where=MASK, keepdims=True),
    lambda m: m.var(m.asarray(X), where=MASK), lambda m: m.var(m.asarray(X), axis=0, correction=1),
    lambda m: m.std(m.asarray(X), axis=1, ddof=1, where=MASK), lambda m: m.var(m.ones(1), ddof=1),
    lambda m: m.var(m.asarray(X), axis=1, mean=m.mean(m.asarray(X), axis=1, keepdims=True)),
    lambda m: m.sum(m.ones(3, m.uint8), promote_integers=False), lambda m: m.sum(m.ones(3, m.int8)),
    lambda m: m.where(m.asarray(INTS) > 2), lambda m: m.where(m.asarray(INTS) > 2, size=5, fill_value=-1),
    lambda m: m.where(m.asarray(X) > 0, m.asarray(X), 0.),
    lambda m: m.nonzero(m.asarray(INTS), size=5), lambda m: m.nonzero(m.asarray(INTS), size=2, fill_value=(-1, -2)),
    lambda m: m.argwhere(m.asarray(INTS), size=4, fill_value=9), lambda m: m.argwhere(m.asarray(INTS)),
    lambda m: m.flatnonzero(m.asarray(INTS), size=4), lambda m: m.flatnonzero(m.asarray(INTS), size=0),
    lambda m: m.unique(m.asarray(INTS), size=5), lambda m: m.unique(m.asarray(INTS), size=6, fill_value=-1),
    lambda m: m.unique(m.asarray(INTS), return_index=True, return_inverse=True, return_counts=True, size=5),
    lambda m: m.unique(m.asarray([3., np.nan, 1., np.nan])),
]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_keyword_eagerly(i):
    _both(CASES[i])


# Under jit: every case whose size is static (argwhere/where/unique without size depend on the data).
JIT_CASES = [i for i in range(len(CASES)) if i not in (24, 30, 36)]


@pytest.mark.parametrize("i", JIT_CASES)
def test_keyword_under_jit(i):
    _both(CASES[i], jit=True)


@pytest.mark.parametrize("case", [
    lambda m: m.max(m.asarray(X), where=MASK), lambda m: m.max(m.zeros((0, 3)), axis=0),
    lambda m: m.sum(m.asarray(X), where=np.ones((3, 4), np.int32)), lambda m: m.sum(m.asarray(X), out=np.ones(())),
    lambda m: m.sum(m.asarray(X), initial=np.ones(2, np.float32)), lambda m: m.nonzero(m.asarray(3)),
    lambda m: m.where(m.asarray(X) > 0, m.asarray(X)), lambda m: m.where(m.asarray(X) > 0, 1., 0., size=3),
    lambda m: m.nonzero(m.asarray(INTS), size=2, fill_value=(1, 2, 3)), lambda m: m.clip(m.asarray(X), a_min=1),
    lambda m: m.reshape(m.asarray(X), newshape=(4, 3)), lambda m: m.var(m.asarray(X), ddof=1, correction=1),
])
def test_keyword_errors(case):
    with pytest.raises(Exception) as want:
        case(jnp)
    with pytest.raises(want.type):
        case(tnp)


@pytest.mark.parametrize("name", ["nonzero", "argwhere", "flatnonzero", "unique"])
def test_data_dependent_size_under_jit_needs_size(name):
    with pytest.raises(Exception) as want:
        jax.jit(lambda a: getattr(jnp, name)(a))(INTS)
    with pytest.raises(toolkit.errors.ConcretizationTypeError, match="size"):
        toolkit.jit(lambda a: getattr(tnp, name)(a))(INTS)
    assert want.type.__name__ == "ConcretizationTypeError"


def test_nonzero_under_vmap_with_size():
    batch = np.array([[0, 1, 2, 0], [3, 0, 0, 4]])
    _same(toolkit.vmap(lambda r: tnp.nonzero(r, size=3, fill_value=-1))(batch),
          jax.vmap(lambda r: jnp.nonzero(r, size=3, fill_value=-1))(batch))


@pytest.mark.parametrize("shape,kwargs", [((3, 0), {"size": 2}), ((3, 0), {"size": 2, "fill_value": 7}),
                                          ((0,), {"size": 3}), ((2, 2), {"size": 0})])
def test_nonzero_of_an_empty_array_is_zeros_as_jax(shape, kwargs):
    """JAX's nonzero of an empty array gives `size` zeros per axis, fill_value or not (toolkit's divided by a
    zero stride: [2, 2] where JAX has [0, 0])."""
    x = np.zeros(shape, np.float32)
    _same(tnp.nonzero(x, **kwargs), jnp.nonzero(x, **kwargs))
    _same(toolkit.jit(lambda a: tnp.nonzero(a, **kwargs))(x), jax.jit(lambda a: jnp.nonzero(a, **kwargs))(x))


# --- precision= and preferred_element_type= on the products (a probe of JAX's signatures found them missing) ---

_PRODUCTS = {
    "dot": lambda m, a, **kw: m.dot(a, a.T, **kw), "matmul": lambda m, a, **kw: m.matmul(a, a.T, **kw),
    "vdot": lambda m, a, **kw: m.vdot(a, a, **kw), "inner": lambda m, a, **kw: m.inner(a, a, **kw),
    "tensordot": lambda m, a, **kw: m.tensordot(a, a, **kw), "vecdot": lambda m, a, **kw: m.vecdot(a, a[0], **kw),
    "linalg.matmul": lambda m, a, **kw: m.linalg.matmul(a, a.T, **kw),
    "linalg.tensordot": lambda m, a, **kw: m.linalg.tensordot(a, a.T, axes=1, **kw),
    "linalg.vecdot": lambda m, a, **kw: m.linalg.vecdot(a, a, **kw),
}
_OPERANDS = {"f16": X.astype(np.float16) / 4, "f32": X, "i8": X.astype(np.int8), "bool": MASK}


@pytest.mark.parametrize("key", sorted(_OPERANDS))
@pytest.mark.parametrize("name", sorted(_PRODUCTS))
def test_products_take_precision_and_preferred_element_type(name, key):
    a = _OPERANDS[key]
    for kwargs in ({"precision": "highest"}, {"precision": ("default", "high")},
                   {"precision": "highest", "preferred_element_type": np.float32}):
        _same(_PRODUCTS[name](tnp, a, **kwargs), _PRODUCTS[name](jnp, a, **kwargs))
    _same(_PRODUCTS[name](tnp, a, precision=toolkit.lax.Precision.HIGH),
          _PRODUCTS[name](jnp, a, precision=jax.lax.Precision.HIGH))


def test_precision_reaches_the_dot_general():
    text = toolkit.jit(lambda a: tnp.dot(a, a.T, precision="highest")).lower(X).as_text()
    assert "precision = [HIGHEST, HIGHEST]" in text
    text = toolkit.jit(lambda a: tnp.vecdot(a, a, precision="high")).lower(X).as_text()
    assert "stablehlo.dot_general" in text and "precision = [HIGH, HIGH]" in text


# --- the other keywords the signature comparison found missing ---------------------------------------------------

_W = np.array([[True, False, True, True], [True, True, False, False], [False, False, False, False]])
_KEYWORD_CASES = {
    "take_positional": lambda m: m.take(X, np.array([0, 2, 5, -1]), 1, None, "clip"),
    "take_hints": lambda m: m.take(X, np.array([0, 2, 5]), axis=1, mode="fill", unique_indices=True,
                                   indices_are_sorted=True, fill_value=-1),
    "diff_prepend_scalar": lambda m: m.diff(X, prepend=0),
    "diff_both": lambda m: m.diff(X, axis=0, append=X[:1], prepend=-1.5),
    "diff_twice_int_prepend": lambda m: m.diff(X, 2, prepend=np.zeros((3, 2), np.int32)),
    "diff_bool": lambda m: m.diff(np.array([True, False, False]), prepend=True),
    "diff_order_0": lambda m: m.diff(X, 0, prepend=1),
    "concatenate_dtype": lambda m: m.concatenate([X, INTS.reshape(3, 2)], axis=1, dtype=np.int8),
    "concatenate_flat_dtype": lambda m: m.concatenate([X, X], axis=None, dtype=np.float16),
    "concatenate_array_dtype": lambda m: m.concatenate(X, dtype=np.int32),
    "stack_dtype": lambda m: m.stack([X, X], 1, dtype=np.int32),
    "stack_array_dtype": lambda m: m.stack(X, dtype=np.int32),
    "hstack_dtype": lambda m: m.hstack([X, X], dtype=np.complex64),
    "vstack_dtype": lambda m: m.vstack([X[0], X[1]], dtype=bool),
    "dstack_dtype": lambda m: m.dstack([X, X], dtype=np.uint8),
    "logsumexp_where": lambda m: m.logsumexp(X, axis=1, where=_W),
    "logsumexp_where_all": lambda m: m.logsumexp(X, where=_W),
    "logsumexp_where_b_sign": lambda m: m.logsumexp(X, axis=1, b=np.array([1., -2., .5, 1.], np.float32), where=_W,
                                                     return_sign=True),
    "logsumexp_where_complex": lambda m: m.logsumexp((X + 1j).astype(np.complex64), axis=1, where=_W),
}


@pytest.mark.parametrize("name", sorted(_KEYWORD_CASES))
def test_missing_keywords_now_as_jax(name):
    if name.startswith("logsumexp"):
        import jax.nn
        import jax.scipy.special

        import toolkit.nn
        import toolkit.scipy.special
        _same(_KEYWORD_CASES[name](toolkit.nn), _KEYWORD_CASES[name](jax.nn))
        _same(_KEYWORD_CASES[name](toolkit.scipy.special), _KEYWORD_CASES[name](jax.scipy.special))
    else:
        _same(_KEYWORD_CASES[name](tnp), _KEYWORD_CASES[name](jnp))


def test_out_arguments_are_jaxs_errors():
    for fn in (lambda m: m.take(X, np.array([0]), out=np.zeros(1)), lambda m: m.stack([X, X], out=np.zeros(1))):
        with pytest.raises(NotImplementedError) as theirs:
            fn(jnp)
        with pytest.raises(NotImplementedError) as ours:
            fn(tnp)
        assert str(ours.value) == str(theirs.value)


def test_array_and_asarray_copy_order_ndmin_as_jax():
    import numpy.testing as npt

    for m in (tnp, jnp):
        x = m.ones(3)
        copies = [m.array(x), m.asarray(x, copy=True)]
        jit = toolkit.jit if m is tnp else jax.jit
        jit(lambda a: a * 2, donate_argnums=0)(x)  # donated: the copies stay alive (as JAX's)
        for c in copies:
            npt.assert_array_equal(np.asarray(c), np.ones(3))
        with pytest.raises(NotImplementedError, match="Only implemented for order='K'"):
            m.asarray(np.ones(2), order="F")
        with pytest.raises(NotImplementedError, match="Only implemented for order='K'"):
            m.array(np.ones(2), order="C")
    for obj, ndmin in ((np.ones(2), 3), (np.ones(2), 1), (3.0, 2), ([1, 2], 2)):
        _same(tnp.array(obj, ndmin=ndmin), jnp.array(obj, ndmin=ndmin))
    _same(toolkit.jit(lambda a: tnp.array(a, ndmin=3))(np.ones(2)), jax.jit(lambda a: jnp.array(a, ndmin=3))(np.ones(2)))


@pytest.mark.parametrize("method", ["scan", "scan_unrolled", "sort", "compare_all"])
def test_searchsorted_takes_jaxs_methods(method):
    a, v = np.array([0, 1.5, 1.5, 3, np.nan], np.float32), np.array([1.5, -1, 9, np.nan, 0], np.float32)
    for side in ("left", "right"):
        _same(tnp.searchsorted(a, v, side, method=method), jnp.searchsorted(a, v, side, method=method))
    with pytest.raises(ValueError) as theirs:
        jnp.searchsorted(a, v, method="bogus")
    with pytest.raises(ValueError) as ours:
        tnp.searchsorted(a, v, method="bogus")
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("mode", [None, "fill", "clip"])
@pytest.mark.parametrize("wrap", [None, True, False])
def test_take_along_axis_wrap_negative_indices_as_jax(mode, wrap):
    x, i = np.arange(12., dtype=np.float32).reshape(3, 4), np.array([[0, -1], [3, -4], [1, 2]])

    def case(m, a, j):
        return m.take_along_axis(a, j, 1, mode=mode, wrap_negative_indices=wrap)
    _same(case(tnp, x, i), case(jnp, x, i))
    _same(toolkit.jit(lambda a, j: case(tnp, a, j))(x, i), jax.jit(lambda a, j: case(jnp, a, j))(x, i))


_STD = np.random.default_rng(0).normal(size=(3, 5)).astype(np.float32) * 3 + 2
_STD_MASK = np.array([True, False, True, True, False])
_MORE_KEYWORD_CASES = {
    "argsort-dtype": lambda m, nn: m.argsort(m.arange(4)[::-1], dtype=m.int8),
    "argsort-dtype-descending": lambda m, nn: m.argsort(m.asarray([2, 1, 2, 0]), dtype=m.int16, descending=True),
    "argsort-float-indices": lambda m, nn: m.argsort(m.arange(3)[::-1], dtype=m.float32),  # JAX allows it
    "ravel-F-int8": lambda m, nn: m.ravel_multi_index((m.asarray([1, 2]), m.asarray([0, 3])), (3, 4), order="F",
                                                      dtype=m.int8),
    "ravel-ignore": lambda m, nn: m.ravel_multi_index((m.asarray([1, 7]), m.asarray([0, 9])), (3, 4),
                                                      mode="ignore"),
    "ravel-wrap": lambda m, nn: m.ravel_multi_index((m.asarray([1, 7]), m.asarray([0, -9])), (3, 4), mode="wrap"),
    "ravel-clip": lambda m, nn: m.ravel_multi_index((m.asarray([1, 7]), m.asarray([0, -9])), (3, 4), mode="clip"),
    "ravel-scalars": lambda m, nn: m.ravel_multi_index((1, 2), (3, 4)),
    "ravel-narrow-ints": lambda m, nn: m.ravel_multi_index((m.asarray([1, 2], m.uint8), m.asarray([0, 1], m.int8)),
                                                           (3, 4)),
    "standardize-fast": lambda m, nn: nn.standardize(m.asarray(_STD)),
    "standardize-stable": lambda m, nn: nn.standardize(m.asarray(_STD), algorithm="stable"),
    "standardize-where": lambda m, nn: nn.standardize(m.asarray(_STD), axis=0, where=_STD_MASK[:3, None]),
    "standardize-where-stable": lambda m, nn: nn.standardize(m.asarray(_STD), where=_STD_MASK, algorithm="stable"),
}


@pytest.mark.parametrize("name", sorted(_MORE_KEYWORD_CASES))
def test_argsort_ravel_multi_index_standardize_keywords_as_jax(name):
    case = _MORE_KEYWORD_CASES[name]
    _same(case(tnp, toolkit.nn), case(jnp, jax.nn))
    if not name.startswith("ravel") or "ignore" in name or "wrap" in name or "clip" in name:
        _same(toolkit.jit(lambda: case(tnp, toolkit.nn))(), jax.jit(lambda: case(jnp, jax.nn))())


@pytest.mark.parametrize("case,error,message", [
    (lambda m, nn: m.argsort(m.arange(3), kind="stable"), TypeError, "'kind' argument to argsort is not supported"),
    (lambda m, nn: m.argsort(m.arange(3), order=1), TypeError, "'order' argument to argsort is not supported."),
    (lambda m, nn: m.ravel_multi_index((m.asarray([1, 5]), m.asarray([0, 1])), (3, 4)), ValueError,
     "invalid entry in coordinates array"),
    (lambda m, nn: m.ravel_multi_index((m.asarray([1]), m.asarray([0])), (3, 4), dtype=m.float32), ValueError,
     "dtype=dtype('float32') is not an integer type."),
    (lambda m, nn: m.ravel_multi_index((m.asarray([1.]), m.asarray([0])), (3, 4)), ValueError,
     "is not an integer type"),
    (lambda m, nn: m.ravel_multi_index((m.asarray([1]), m.asarray([0])), (300, 400), dtype=m.int8), ValueError,
     "not large enough to hold flattened index for dims=(300, 400)"),
    (lambda m, nn: m.ravel_multi_index((m.asarray([1]), m.asarray([0])), (3, 4), mode="bad"), ValueError,
     "invalid mode='bad'. Expected 'raise', 'wrap', 'clip', or 'ignore'."),
    (lambda m, nn: m.ravel_multi_index((m.asarray([1]), m.asarray([0])), (3, 4), order="X"), ValueError,
     "invalid order='X'. Expected 'C' or 'F'"),
    (lambda m, nn: nn.standardize(m.arange(4.), algorithm="x"), ValueError,
     "Unknown algorithm 'x'. Expected 'fast' or 'stable'."),
    (lambda m, nn: nn.standardize([1., 2.]), TypeError, "requires ndarray or scalar arguments"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_argsort_ravel_multi_index_standardize_errors_as_jax(case, error, message):
    for m, nn in ((tnp, toolkit.nn), (jnp, jax.nn)):
        with pytest.raises(error) as info:
            case(m, nn)
        assert message in str(info.value), (m.__name__, info.value)


def test_ravel_multi_index_raise_mode_needs_concrete_indices_as_jax():
    # JAX's mode="raise" checks the values, so under jit it is a concretization error, not a silent clip.
    from toolkit.core.tracing import ConcretizationTypeError
    with pytest.raises(ConcretizationTypeError, match="Use mode='wrap' or mode='clip' instead"):
        toolkit.jit(lambda a: tnp.ravel_multi_index((a, a), (3, 4)))(np.array([1]))
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda a: jnp.ravel_multi_index((a, a), (3, 4)))(np.array([1]))
