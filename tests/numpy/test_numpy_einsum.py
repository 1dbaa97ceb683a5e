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


def test_einsum_lowers_to_dot_general():
    text = toolkit.jit(lambda a, b: tnp.einsum("bij,bjk->bki", a, b)).lower(f32(2, 3, 4), f32(2, 4, 5)).as_text()
    assert "stablehlo.dot_general" in text and "stablehlo.transpose" in text


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
