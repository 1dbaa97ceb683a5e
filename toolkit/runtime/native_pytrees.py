"""jaxlib's C++ pytree flattening, for dispatch's hot paths (built-in nodes only).

``toolkit.core.pytrees`` is the pytree implementation (its ``PyTreeDef``,
registry, key paths and error messages are the API). Flattening a
1,200-leaf training state through it costs milliseconds of Python per call;
jaxlib's C++ ``PyTreeRegistry`` does the same walk about 7× faster. This
module holds one such registry that knows only the built-in nodes (``None``,
``tuple``, ``list``, ``dict`` with sorted keys, named tuples), which flatten
exactly as ``toolkit.core.pytrees`` flattens them: the same leaves in the
same order. Everything else (``OrderedDict``, ``defaultdict``, classes
registered with toolkit) is a leaf here, so a caller that needs toolkit's
meaning must check what it got (``toolkit.dispatch`` accepts a C++ flatten
only when every leaf is a toolkit ``Array`` and the structure was seen, and
checked, through toolkit's own flatten before).
"""

from __future__ import annotations

from typing import Any, Sequence

from jaxlib import _jax
from jaxlib._jax import pytree as _pytree

#: jaxlib's structure type: hashable, compared by value in C++.
NativeTreeDef = _pytree.PyTreeDef

_REGISTRY = _pytree.PyTreeRegistry(enable_none=True, enable_tuple=True, enable_namedtuple=True,
                                   enable_list=True, enable_dict=True)
_flatten = _REGISTRY.flatten


def flatten(tree: Any) -> tuple[list[Any], Any] | None:
    """``tree``'s leaves and C++ structure over the built-in nodes; None when jaxlib cannot flatten it.

    (jaxlib raises for dict keys that do not sort; toolkit's flatten then
    gives the error users see.)
    """
    try:
        return _flatten(tree)
    except Exception:  # noqa: BLE001 - jaxlib's own error types; the caller takes toolkit's path for the message
        return None


def block_until_ready(impls: Sequence[Any]) -> None:
    """Wait for every runtime array in ``impls`` with one call into jaxlib (its ``batched_block_until_ready``).

    Raises what jaxlib raises for a deleted array (``RuntimeError`` or
    ``ValueError``); callers wanting per-array messages wait one by one then.
    """
    _jax.batched_block_until_ready(list(impls))
