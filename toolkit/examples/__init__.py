"""Example programs written against toolkit (and, for comparison, jax)."""
