"""Tokens (toolkit/lax/tokens.py: create_token, after_all) and compiler_controls' dce_sink against jax.lax 0.10.2 in
the same run: the token type, the lowering, eager and jit behaviour (tokens as jit arguments and results), grad and
vmap where JAX defines them, and JAX's errors for bad operands."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit.core.avals import abstract_token
from toolkit.lax.compiler_controls import dce_sink
from toolkit.lax.tokens import after_all, create_token

from _oracle import assert_same_typed, raised

jax = pytest.importorskip("jax")
jnp = jax.numpy

X = np.array([0.5, -1.25, 2.0], np.float32)


def merged(create, merge):
    def merged_tokens():
        return merge(create(), create(1.0))
    return merged_tokens


def threaded(merge):
    def token_through(token, x):
        return merge(token), x + 1
    return token_through


def test_lowering_is_jax_s():
    ours = toolkit.jit(merged(create_token, after_all)).lower().as_text()
    theirs = jax.jit(merged(jax.lax.create_token, jax.lax.after_all)).lower().as_text()
    assert ours == theirs
    ours = toolkit.jit(threaded(after_all)).lower(abstract_token, 1.0).as_text()
    theirs = jax.jit(threaded(jax.lax.after_all)).lower(jax.lax.create_token(), 1.0).as_text()
    assert ours == theirs
    assert "stablehlo.after_all  : !stablehlo.token" in toolkit.jit(after_all).lower().as_text()


def test_token_type_eagerly_and_under_jit():
    tokens = [create_token(), create_token(3.0), after_all(), after_all(create_token(), create_token()),
              toolkit.jit(merged(create_token, after_all))()]
    theirs = str(jax.typeof(jax.lax.create_token()))
    for token in tokens:
        assert toolkit.typeof(token) is abstract_token
        assert str(toolkit.typeof(token)) == theirs == "AbstractToken()"
        token.block_until_ready()
    assert abstract_token.str_short() == "Tok"
    assert "Tok = create_token" in str(toolkit.make_jaxpr(lambda x: create_token(x))(1.0))
    assert "Tok = create_token" in str(jax.make_jaxpr(lambda x: jax.lax.create_token(x))(1.0))


def test_token_as_jit_argument_and_result():
    # The token from one jit call fed to another (and an eager one), as JAX allows.
    jitted = toolkit.jit(threaded(after_all))
    token, value = jitted(toolkit.jit(lambda: create_token())(), 1.0)
    token, value = jitted(token, value)
    j_token, j_value = jax.jit(threaded(jax.lax.after_all))(jax.lax.create_token(), 1.0)
    j_token, j_value = jax.jit(threaded(jax.lax.after_all))(j_token, j_value)
    assert toolkit.typeof(token) is abstract_token and str(jax.typeof(j_token)) == "AbstractToken()"
    assert_same_typed(value, j_value, what="value beside the token")
    assert toolkit.typeof(toolkit.jit(lambda t: t)(create_token())) is abstract_token
    # Tokens through control flow: cond's branches and scan's carry.
    cond = toolkit.jit(lambda p, t: toolkit.lax.cond(p, after_all, lambda t: t, t))
    assert toolkit.typeof(cond(True, token)) is abstract_token
    scan = toolkit.jit(lambda t: toolkit.lax.scan(lambda c, _: (after_all(c), None), t, None, length=3)[0])
    assert toolkit.typeof(scan(token)) is abstract_token


def test_grad_and_vmap_around_tokens():
    def f(create, merge, sink, sin):
        def with_effects(x):
            token = merge(create(), create())
            sink(x * 2)
            return sin(x).sum(), token
        return with_effects

    ours = f(create_token, after_all, dce_sink, tnp.sin)
    theirs = f(jax.lax.create_token, jax.lax.after_all, jax.lax.dce_sink, jnp.sin)
    g, token = toolkit.jit(toolkit.grad(ours, has_aux=True))(X)
    j_g, _ = jax.jit(jax.grad(theirs, has_aux=True))(X)
    assert_same_typed(g, j_g, what="grad beside tokens and dce_sink")
    assert toolkit.typeof(token) is abstract_token
    assert_same_typed(toolkit.grad(lambda x: ours(x)[0])(X), jax.grad(lambda x: theirs(x)[0])(X), what="eager grad")
    # vmap of a function making tokens and sinking its batched value (the tokens stay inside: JAX cannot
    # return a token from vmap).
    v = toolkit.vmap(lambda x: ours(x)[0])(X[:, None])
    assert_same_typed(v, jax.vmap(lambda x: theirs(x)[0])(X[:, None]), what="vmap")
    assert "dce_sink" in str(toolkit.make_jaxpr(toolkit.vmap(lambda x: ours(x)[0]))(X[:, None]))


def test_dce_sink_as_jax():
    def f(sink, sin):
        def sunk(x, y):
            sink({"a": x * 2, "b": (y,)})
            return sin(x)
        return sunk

    ours, theirs = f(dce_sink, tnp.sin), f(jax.lax.dce_sink, jnp.sin)
    assert_same_typed(toolkit.jit(ours)(X, 1.0), jax.jit(theirs)(X, 1.0), what="jit")
    assert toolkit.jit(ours).lower(X, 1.0).as_text() == jax.jit(theirs).lower(X, 1.0).as_text()
    program = str(toolkit.make_jaxpr(ours)(X, 1.0))
    assert program.count("dce_sink[prevent_mlir_dce=False]") == 2
    assert dce_sink(toolkit.numpy.ones(3)) is None and jax.lax.dce_sink(jnp.ones(3)) is None

    def kept(sink):
        def sunk_and_kept(x, y):
            sink((x, y), prevent_mlir_dce=True)
        return sunk_and_kept
    y = np.ones((2, 3), np.float32)
    ours_text = toolkit.jit(kept(dce_sink)).lower(1.0, y).as_text()
    assert ours_text == jax.jit(kept(jax.lax.dce_sink)).lower(1.0, y).as_text()
    assert toolkit.jit(kept(dce_sink))(1.0, y) is None  # XLA runs the side-effecting sink


def test_errors_are_jax_s():
    token = create_token()
    bad = [(lambda L: L.after_all(1.0), "Arguments to after_all must be tokens"),
           (lambda L: L.after_all(np.ones(2)), "Arguments to after_all must be tokens"),
           (lambda L: L.after_all([L.create_token()]), "Error interpreting argument to after_all as a JAX value. "
            "The problematic value is of type <class 'list'> and was passed to after_all at position 0."),
           (lambda L: L.after_all(None), "Error interpreting argument to after_all"),
           (lambda L: L.dce_sink(("abc",)), "Error interpreting argument to dce_sink as a JAX value. The "
            "problematic value is of type <class 'str'> and was passed to dce_sink at position 0.")]
    for case, text in bad:
        with pytest.raises(TypeError, match="^" + text.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
            case(jax.lax)
        with pytest.raises(TypeError, match="^" + text.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
            case(toolkit.lax.tokens if "after_all" in text else toolkit.lax.compiler_controls)
    # Under jit: an array among the tokens (toolkit names the operand types after JAX's message).
    with pytest.raises(TypeError, match=r"^Arguments to after_all must be tokens"):
        jax.jit(lambda x: jax.lax.after_all(jax.lax.create_token(), x))(X)
    with pytest.raises(TypeError, match=r"^Arguments to after_all must be tokens, got AbstractToken\(\), float32\[3\]"):
        toolkit.jit(lambda x: after_all(create_token(), x))(X)
    with pytest.raises(TypeError, match=r"^Arguments to after_all must be tokens"):
        after_all(token, X)


def test_concrete_tokens_as_jax():
    """An eager token is a ``Token`` (JAX's ``core.Token``), not an array: no data, no arithmetic, refused by the
    numpy functions, waited for by ``block_until_ready``, and passed to jit calls (an eager one too) as JAX's."""
    def program(L, N):
        token = L.lax.create_token()
        merged = L.lax.after_all(token, L.lax.create_token())
        through = L.jit(threaded(L.lax.after_all))
        passed, value = through(token, 1.0)
        again, value = through(passed, value)
        return [type(t).__name__ for t in (token, merged, passed, again, L.jit(lambda: L.lax.create_token())())], \
            str(L.typeof(token)), np.asarray(value).tolist(), \
            raised(lambda: token + 1)[0], np.asarray(token).dtype, bool(token), hasattr(token, "shape"), \
            raised(lambda: N.sin(token)), token.block_until_ready(), L.block_until_ready((token, value))[0] is token, \
            raised(lambda: L.device_put(token))[0]
    ours, theirs = program(toolkit, tnp), program(jax, jnp)
    assert ours[0] == theirs[0] == ["Token"] * 5
    assert ours[1:7] == theirs[1:7]
    assert ours[7][0] == theirs[7][0] == "TypeError" and ours[7][1].startswith("sin requires ndarray or scalar "
                                                                              "arguments, got <class")
    assert ours[8:] == theirs[8:]
    # A Compiled takes a token where it was compiled for one, and nothing else there (JAX 0.10.2's Compiled
    # call fails on any token: its argument check reads the token type's shape).
    compiled = toolkit.jit(threaded(after_all)).lower(create_token(), 1.0).compile()
    token, value = compiled(create_token(), 2.0)
    assert type(token).__name__ == "Token" and float(value) == 3.0
    with pytest.raises(TypeError, match=r"argument args\[0\] of the compiled function token_through has type "
                                        r"bool\[0\], but it was compiled for Tok"):
        compiled(np.zeros(0, bool), 2.0)


def test_traced_token_refused_by_numpy():
    """A traced token in a numpy function is a ``TypeError`` naming the function (JAX's is an ``AttributeError``
    of its abstract value), not a program XLA refuses."""
    with pytest.raises(TypeError, match=r"^add requires ndarray or scalar arguments, got .* at position 0: a token"):
        toolkit.jit(lambda t: t + 1)(create_token())
    with pytest.raises(AttributeError, match="AbstractToken"):
        jax.jit(lambda t: t + 1)(jax.lax.create_token())


def test_captured_tokens_and_shapes_as_jax():
    """A concrete token closed over by a jit function is a token in its program (a fresh one, after the token's
    computation), and eval_shape / make_jaxpr(return_shape=True) give a token result the token type, as JAX's."""
    def program(L):
        token = L.lax.create_token()
        out, value = L.jit(lambda x: (L.lax.after_all(token), x * 2))(1.5)
        merged = lambda t: L.lax.after_all(t)
        return (type(out).__name__, float(value), str(L.eval_shape(merged, token)),
                str(L.make_jaxpr(merged, return_shape=True)(token)[1]))
    ours, theirs = program(toolkit), program(jax)
    assert ours == theirs == ("Token", 3.0, "AbstractToken()", "AbstractToken()")


def test_vmap_returning_a_token():
    """A token out of vmap: only with out_axes None (a batch of tokens is one token); mapped, a TypeError naming
    the fix (JAX fails on its token type either way)."""
    token = create_token()
    returned = lambda x, t: (x, after_all(t))
    with pytest.raises(TypeError, match="vmap cannot return a token with out_axes=0"):
        toolkit.vmap(returned, in_axes=(0, None))(X, token)
    _, out = toolkit.vmap(returned, in_axes=(0, None), out_axes=(0, None))(X, token)
    assert type(out).__name__ == "Token"
    with pytest.raises(AttributeError):
        jax.vmap(lambda x, t: (x, jax.lax.after_all(t)), in_axes=(0, None))(X, jax.lax.create_token())
