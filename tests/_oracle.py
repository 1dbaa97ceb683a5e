"""Helpers for tests that use JAX as the oracle (importable from every test folder: tests/ is on sys.path)."""

import pytest


def raises_like(ours, theirs):
    """``ours()`` raises what ``theirs()`` (the JAX call) raises: the same exception type and message."""
    with pytest.raises(Exception) as want:
        theirs()
    with pytest.raises(want.type) as got:
        ours()
    assert str(got.value) == str(want.value)
