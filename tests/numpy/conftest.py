"""Fixtures of the toolkit.numpy tests."""

import pytest


@pytest.fixture
def jnp():
    """``jax.numpy``, the oracle of the tests compared with JAX (each is skipped without jax)."""
    return pytest.importorskip("jax.numpy")
