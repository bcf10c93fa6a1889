"""tessera: dense linear algebra across every GPU and CPU core of a node.

The C library is used from C, from the `tessera` command line, and from JAX through
`tessera.jax` (a drop-in for jaxmg's multi-device solvers).
"""

__version__ = "0.1.0"
