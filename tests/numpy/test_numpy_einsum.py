"""toolkit.numpy.einsum against numpy (every kind of subscripts, promotion, the lowering, errors) and
against ``jax.numpy``."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

from _vs_numpy import C, RNG, SQ, check, f32


A34, B45 = f32(3, 4), f32(4, 5)


EINSUM_CASES = [
    ("ij,jk->ik", (A34, B45)),
    ("ij,jk", (A34, B45)),
    ("ij->ji", (A34,)),
    ("ij", (A34,)),
    ("ji", (A34,)),
    ("ii->i", (SQ,)),
    ("ii", (SQ,)),
    ("ij->", (A34,)),
    ("ij->j", (A34,)),
    ("bij,jk->bik", (C, B45)),
    ("...ij,jk->...ik", (C, B45)),
    ("...ij->...ji", (C,)),
    ("...i->...", (C,)),
    ("i...->...", (C,)),
    ("ij,ij->", (A34, A34)),
    ("ij,ij->ij", (A34, A34)),
    ("i,j->ij", (A34[0], B45[0])),
    ("i,i", (A34[0], A34[1])),
    ("ij,kj->ik", (A34, A34)),
    ("bij,bkj->bik", (C, C)),
    ("ijk->k", (C,)),
    ("ijk->kji", (C,)),
    ("ij,jk,kl->il", (A34, B45, B45.T)),
    ("ij,j->i", (A34, B45[:, 0])),
    ("i,i,i->i", (A34[0], A34[1], A34[2])),
    ("ab,bc,ca->", (A34, B45[:, :3] if False else f32(4, 2), f32(2, 3))),
    ("iij->ij", (f32(3, 3, 2),)),
    ("bii->b", (f32(2, 3, 3),)),
    ("...,...->...", (f32(3, 1), f32(1, 4))),
    (" ij , jk -> ik ", (A34, B45)),
]


@pytest.mark.parametrize("spec,operands", EINSUM_CASES, ids=[c[0].replace(" ", "_") for c in EINSUM_CASES])
def test_einsum_matches_numpy(spec, operands):
    check(tnp.einsum(spec, *operands), np.einsum(spec, *operands), rtol=1e-4, atol=1e-4)


def test_einsum_lowers_to_dot_general(jnp):
    # As JAX's: "bki" is batch + the right operand's free label + the left's, so the product is taken with the
    # operands swapped and needs no transpose; "bik" takes them in order.
    import jax
    for spec in ("bij,bjk->bki", "bij,bjk->bik", "bij,bjk->kbi"):
        ours = toolkit.jit(lambda a, b: tnp.einsum(spec, a, b)).lower(f32(2, 3, 4), f32(2, 4, 5)).as_text()
        theirs = jax.jit(lambda a, b: jnp.einsum(spec, a, b)).lower(f32(2, 3, 4), f32(2, 4, 5)).as_text()
        for op in ("stablehlo.dot_general", "stablehlo.transpose"):
            assert ours.count(op) == theirs.count(op), (spec, op)
        assert "stablehlo.dot_general" in ours


def test_einsum_promotes_and_preferred_type():
    a = RNG.integers(0, 5, (2, 3)).astype(np.int32)
    check(tnp.einsum("ij,jk->ik", a, a.T), a @ a.T)
    out = tnp.einsum("ij,jk->ik", A34, B45, preferred_element_type=np.float32)
    assert out.dtype == np.float32


@pytest.mark.parametrize("spec,operands,message", [
    ("ij,jk->ik", (A34,), "name 2 operands but 1 were given"),
    ("ijk,jk->ik", (A34, B45), "names 3 dimensions but the operand has rank 2"),
    ("ij,jk->iz", (A34, B45), "output subscript 'z' does not appear"),
    ("ij,jk->ii", (A34, B45), "repeats a subscript"),
    ("i1,jk->ik", (A34, B45), "invalid subscript '1'"),
    ("ij,jk->ik->i", (A34, B45), "more than one '->'"),
    ("ij,ij->i", (A34, B45), "subscript 'i' has size 4 in operand 1 but 3"),
    ("i..j,jk->ik", (A34, B45), "malformed ellipsis"),
])
def test_einsum_bad_spec_raises_value_error(spec, operands, message):
    with pytest.raises(ValueError, match=message):
        tnp.einsum(spec, *operands)


def test_einsum_matches_jax(jnp):
    a = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(tnp.einsum("bij,bkj->bik", a, a)),
                               np.asarray(jnp.einsum("bij,bkj->bik", a, a)), rtol=1e-5, atol=1e-5)


def test_preferred_element_type_makes_the_result_strong_as_jax(jnp):
    """JAX's einsum: weak operands give a weak result, unless a preferred_element_type is given."""
    import jax
    ours_weak, theirs_weak = toolkit.lax.full((3,), 2.0), jax.lax.full((3,), 2.0)
    for spec in ("i,i->i", "i,i->"):
        for pref in (None, np.float32):
            ours = tnp.einsum(spec, ours_weak, ours_weak, preferred_element_type=pref)
            theirs = jnp.einsum(spec, theirs_weak, theirs_weak, preferred_element_type=pref)
            assert (ours.dtype, ours.weak_type) == (theirs.dtype, theirs.weak_type), (spec, pref)


# Chains whose contraction order matters for rounding: JAX contracts pair by pair in the order of
# opt_einsum.contract_path(optimize="auto"), with its own choice of left operand and intermediate axis order.
CHAINS = [("ij,jk,kl->il", [(21, 26), (26, 34), (34, 12)]), ("ij,jk,kl->il", [(30, 19), (19, 3), (3, 19)]),
          ("ij,jk,kl,lm->im", [(21, 26), (26, 34), (34, 12), (12, 5)]), ("abc,cd,de->abe", [(7, 4, 28), (28, 21),
                                                                                             (21, 20)]),
          ("ij,j,jk->ik", [(9, 17), (17,), (17, 6)]), ("ab,bc,ca->", [(8, 13), (13, 5), (5, 8)]),
          ("i,ij,jk,k->", [(11,), (11, 23), (23, 7), (7,)]), ("...j,jk,kl->...l", [(2, 3, 4), (4, 5), (5, 6)])]


def _chain_operands(shapes):
    rng = np.random.default_rng(len(shapes) * 7 + shapes[0][0])
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


@pytest.mark.parametrize("spec,shapes", CHAINS, ids=[c[0] for c in CHAINS])
def test_chains_are_jaxs_bit_for_bit(jnp, spec, shapes):
    # toolkit contracted greedily (the smallest result first): the same value, other rounding (81 of 180 random
    # three- and four-operand chains differed from JAX in the last bits).
    import jax
    ops = _chain_operands(shapes)
    for optimize in ("auto", "greedy", "optimal", False, True):
        theirs = np.asarray(jnp.einsum(spec, *ops, optimize=optimize))
        np.testing.assert_array_equal(np.asarray(tnp.einsum(spec, *ops, optimize=optimize)), theirs)
        jitted = toolkit.jit(lambda *o, optimize=optimize: tnp.einsum(spec, *o, optimize=optimize))
        np.testing.assert_array_equal(np.asarray(jitted(*ops)),
                                      np.asarray(jax.jit(lambda *o: jnp.einsum(spec, *o, optimize=optimize))(*ops)))


def test_optimize_is_the_contraction_order(jnp):
    ops = _chain_operands([(21, 26), (26, 34), (34, 12)])

    def first_product(optimize):
        program = toolkit.make_jaxpr(lambda *o: tnp.einsum("ij,jk,kl->il", *o, optimize=optimize))(*ops)
        return [tuple(v.aval.shape) for v in program.eqns[0].inputs]
    assert first_product(False) == [(26, 34), (21, 26)]  # left to right (the later operand on the left, as JAX)
    assert first_product([(1, 2), (0, 1)]) == [(34, 12), (26, 34)]
    assert first_product("auto") == [(34, 12), (26, 34)]
    np.testing.assert_array_equal(np.asarray(tnp.einsum("ij,jk,kl->il", *ops, optimize=[(1, 2), (0, 1)])),
                                  np.asarray(jnp.einsum("ij,jk,kl->il", *ops, optimize=[(1, 2), (0, 1)])))


def test_chains_without_opt_einsum_follow_numpys_path(monkeypatch):
    # Without opt_einsum (jax's dependency, not toolkit's) numpy's port of it gives the path.
    import sys
    ops = _chain_operands([(21, 26), (26, 34), (34, 12), (12, 5)])
    with_opt_einsum = np.asarray(tnp.einsum("ij,jk,kl,lm->im", *ops))
    monkeypatch.setitem(sys.modules, "opt_einsum", None)
    np.testing.assert_array_equal(np.asarray(tnp.einsum("ij,jk,kl,lm->im", *ops)), with_opt_einsum)
    np.testing.assert_allclose(np.asarray(tnp.einsum("ij,jk,kl,lm->im", *ops, optimize=False)),
                               np.einsum("ij,jk,kl,lm->im", *ops), rtol=1e-4, atol=1e-4)


def test_an_eager_chain_is_one_program(compilations):
    ops = _chain_operands([(21, 26), (26, 34), (34, 12)])
    tnp.einsum("ij,jk,kl->il", *ops)
    assert len(compilations) == 1  # (the products ran as two executables before)


def test_one_operand_steps_and_longer_steps_of_a_path():
    # opt_einsum's paths are pairs; a one-operand step only moves its operand last (as JAX pops and appends it),
    # and a step of three operands falls back to the greedy order: the value is the product either way.
    from toolkit.numpy.einsum import _einsum
    a, b, c = _chain_operands([(4, 5), (5, 6), (6, 3)])
    want = a @ b @ c
    for path in ((((0,), "ij"), ((1, 0), "ik")), (((0, 1, 2), "il"),)):
        operands = (a, b) if len(path) == 2 else (a, b, c)
        spec = "ij,jk->ik" if len(operands) == 2 else "ij,jk,kl->il"
        got = _einsum(*map(tnp.asarray, operands), subscripts=spec, preferred_element_type=None, path=path)
        np.testing.assert_allclose(np.asarray(got), a @ b if len(operands) == 2 else want, rtol=1e-5, atol=1e-5)
