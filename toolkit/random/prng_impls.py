"""JAX 0.10.2's six PRNG implementations as data: key shape, seed, split, fold_in, random_bits, name and tag.

A :class:`PRNGImpl` is what ``jax._src.random.prng.PRNGImpl`` is: the functions of
one PRNG on the raw ``uint32`` data of a *single* key (``key_shape``), which
``toolkit.random``'s key functions and samplers call through the key's
implementation instead of naming a hash. The registry :data:`PRNGS` holds them
by name, in JAX's registration order:

=============  ===========  =====  ==================================================
name           key shape    tag    module
=============  ===========  =====  ==================================================
philox2x32     ``(1,)``     phx2   :mod:`toolkit.random.philox`
philox4x32     ``(2,)``     phx4   :mod:`toolkit.random.philox`
threefry2x32   ``(2,)``     fry    :mod:`toolkit.random.threefry` (the default)
rbg            ``(4,)``     rbg    :mod:`toolkit.random.rbg`
unsafe_rbg     ``(4,)``     urbg   :mod:`toolkit.random.rbg`
threefry4x32   ``(4,)``     fry4   :mod:`toolkit.random.threefry4x32`
=============  ===========  =====  ==================================================

``jax_default_prng_impl`` (``toolkit.config``) names the implementation that
``key()``/``PRNGKey()`` use when given none and that raw ``uint32`` keys are read
with (:func:`default_prng_impl`). Typed keys carry theirs; their dtype is the
implementation's :class:`KeyTy` (``key<tag>``).

Example::

    impl = resolve_prng_impl("philox4x32")
    data = impl.seed(0)                      # uint32[2]
    bits = impl.random_bits(data, 32, (3,))  # == jax.random.bits(jax.random.key(0, impl="philox4x32"), (3,))
"""

from __future__ import annotations

import math
from typing import Any, Callable

from toolkit.core.config import flag_value
from toolkit.random import philox, rbg, threefry, threefry4x32

__all__ = ["PRNGImpl", "KeyTy", "PRNGS", "register_prng", "default_prng_impl", "resolve_prng_impl", "THREEFRY2X32"]


class KeyTy:
    """The dtype of typed keys of one implementation: ``str()`` is ``key<tag>`` (``key<fry>``, ``key<rbg>``...).

    Equal to the dtype of the same implementation only, as JAX's ``KeyTy``.
    """

    __slots__ = ("_impl",)

    def __init__(self, impl: PRNGImpl):
        self._impl = impl

    @property
    def name(self) -> str:
        """``key<tag>``, JAX's name of the dtype."""
        return f"key<{self._impl.tag}>"

    @property
    def itemsize(self) -> int:
        """Bytes of one key's data (4 per ``uint32`` word)."""
        return math.prod(self._impl.key_shape) * 4

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other: Any) -> bool:
        return type(other) is KeyTy and other._impl is self._impl

    def __hash__(self) -> int:
        return hash((KeyTy, self._impl.name))


class PRNGImpl:
    """One PRNG: the shape of a key's ``uint32`` data and the functions on one key's data.

    * ``seed(seed) -> uint32[*key_shape]`` from an integer scalar;
    * ``split(key, shape) -> uint32[*shape, *key_shape]`` (``shape`` a tuple of ints);
    * ``fold_in(key, data) -> uint32[*key_shape]`` (``data`` a ``uint32`` scalar);
    * ``random_bits(key, bit_width, shape) -> uint<bit_width>[*shape]``.

    ``str()`` is the tag, as JAX's; implementations are singletons (compared and hashed by identity, so one is a
    cheap static argument of the samplers' ``jit``\\ s).
    """

    __slots__ = ("key_shape", "key_ndim", "seed", "split", "random_bits", "fold_in", "name", "tag", "key_dtype")

    def __init__(self, key_shape: tuple[int, ...], seed: Callable, split: Callable, random_bits: Callable,
                 fold_in: Callable, name: str, tag: str):
        self.key_shape = tuple(key_shape)
        self.key_ndim = len(self.key_shape)
        self.seed, self.split, self.random_bits, self.fold_in = seed, split, random_bits, fold_in
        self.name, self.tag = name, tag
        self.key_dtype = KeyTy(self)

    def __str__(self) -> str:
        return self.tag

    def __repr__(self) -> str:
        # JAX's NamedTuple repr, the form its key-data errors print.
        functions = ", ".join(f"{field}=<function {getattr(fn, '__name__', fn)} at {id(fn):#x}>" for field, fn in
                              (("seed", self.seed), ("split", self.split), ("random_bits", self.random_bits),
                               ("fold_in", self.fold_in)))
        return f"PRNGImpl(key_shape={self.key_shape}, {functions}, name={self.name!r}, tag={self.tag!r})"


#: The implementations by name, in JAX's registration order (the order its "Did you mean" message lists them).
PRNGS: dict[str, PRNGImpl] = {}


def register_prng(impl: PRNGImpl) -> PRNGImpl:
    """Add ``impl`` to :data:`PRNGS` under its name (a name registered twice is a ``ValueError``, as JAX's)."""
    if impl.name in PRNGS:
        raise ValueError(f"PRNG with name {impl.name} already registered: {impl}")
    PRNGS[impl.name] = impl
    return impl


register_prng(PRNGImpl((1,), philox.philox2x32_seed, philox.philox2x32_split, philox.philox2x32_random_bits,
                       philox.philox2x32_fold_in, "philox2x32", "phx2"))
register_prng(PRNGImpl((2,), philox.philox4x32_seed, philox.philox4x32_split, philox.philox4x32_random_bits,
                       philox.philox4x32_fold_in, "philox4x32", "phx4"))
THREEFRY2X32 = register_prng(PRNGImpl((2,), threefry.threefry_seed, threefry.threefry_split,
                                      threefry.threefry_random_bits, threefry.threefry_fold_in, "threefry2x32", "fry"))
register_prng(PRNGImpl((4,), rbg.rbg_seed, rbg.rbg_split, rbg.rbg_random_bits, rbg.rbg_fold_in, "rbg", "rbg"))
register_prng(PRNGImpl((4,), rbg.rbg_seed, rbg.unsafe_rbg_split, rbg.rbg_random_bits, rbg.unsafe_rbg_fold_in,
                       "unsafe_rbg", "urbg"))
register_prng(PRNGImpl((4,), threefry4x32.threefry4x32_seed, threefry4x32.threefry4x32_split,
                       threefry4x32.threefry4x32_random_bits, threefry4x32.threefry4x32_fold_in, "threefry4x32",
                       "fry4"))


def default_prng_impl() -> PRNGImpl:
    """The implementation ``jax_default_prng_impl`` names (``key()``/``PRNGKey()`` without ``impl``, raw keys)."""
    return PRNGS[flag_value("jax_default_prng_impl")]


def resolve_prng_impl(impl_spec: Any) -> PRNGImpl:
    """The implementation ``impl_spec`` names: None (the default), a name, a key dtype or a :class:`PRNGImpl`.

    An unknown name is JAX's ``ValueError`` listing the names; any other type its ``TypeError``.
    """
    if impl_spec is None:
        return default_prng_impl()
    if type(impl_spec) is PRNGImpl:
        return impl_spec
    if type(impl_spec) is KeyTy:
        return impl_spec._impl
    if type(impl_spec) is str:
        if impl_spec in PRNGS:
            return PRNGS[impl_spec]
        names = ", ".join(f'"{name}"' for name in PRNGS)
        raise ValueError(f'unrecognized PRNG implementation "{impl_spec}". Did you mean one of: {names}?')
    raise TypeError(f"unrecognized type {type(impl_spec)} for specifying PRNG implementation.")
