"""``toolkit.nn``: neural-network activations and helpers with ``jax.nn`` semantics.

Built from ``toolkit.numpy`` and ``toolkit.lax``, so they trace inside ``jit``
and run eagerly outside it.

Example::

    import toolkit, toolkit.nn as nn
    probs = toolkit.jit(lambda logits: nn.softmax(logits, axis=-1))(logits)
"""

from toolkit.nn.functions import (  # noqa: F401
    celu, elu, gelu, glu, hard_sigmoid, hard_swish, hard_tanh, leaky_relu, log_sigmoid, log_softmax, logsumexp,
    one_hot, relu, relu6, selu, sigmoid, silu, soft_sign, softmax, softplus, standardize, swish,
)
from toolkit.nn import initializers  # noqa: F401,E402  (jax.nn.initializers)
from toolkit.nn.attention import dot_product_attention  # noqa: F401,E402  (jax.nn.dot_product_attention)
from toolkit.nn.activations import (  # noqa: F401,E402  (the rest of jax.nn's activations)
    hard_silu, identity, log1mexp, logmeanexp, mish, sparse_plus, sparse_sigmoid, squareplus, tanh,
)
