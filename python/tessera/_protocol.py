"""The binding's per-operation protocol, in one table: what each XLA FFI operation of
libtessera_jax takes and returns. jax.py builds every call from it, _native.py registers the
handlers by it, and the C side's handler table (python/ffi/handlers.c) is indexed the same way:
_native.py checks at load that the library's entry of each index has the same name and flags,
so that neither side can change alone.

Operands, in order: this device's row shard of A (nl x Np, row-major); the right-hand side when
the operation has one, by its flags: RHS_ROWS this device's rows of B (nl x k), RHS_WHOLE_T the
whole Bᵀ (k x Np) on every device; last, the device's rank on the row axis (s32 scalar).
Results, in order: A's shard in place (aliased to operand 0: the factor or inverse), X in place
(aliased to operand 1) when there is a right-hand side, log det (f64[1]) with LOGDET, and the
status (s32[1]). Attributes: state, site, ndev, n, tile; `lower` with LOWER, `logdet` with
LOGDET (tessera_jax.h describes them).

Per device or the same on every device: A's shard and RHS_ROWS' X are this device's rows; the
status and log det are the leader's, and RHS_WHOLE_T's X is rank 0's solution copied into every
device's buffer, so those are the same on every device (results()' per_device)."""
from dataclasses import dataclass

import numpy as np

# Flags of an operation, as TESSERA_JAX_* in python/ffi/tessera_jax.h.
RHS_ROWS = 1
RHS_WHOLE_T = 2
LOWER = 4
LOGDET = 8


@dataclass(frozen=True)
class Op:
    """One operation: its name (FFI target tessera_<name>), its flags, and whether its tile is
    LU's column panel (else Cholesky's square tile)."""
    name: str
    flags: int
    lu: bool = False

    @property
    def target(self):
        return f"tessera_{self.name}"

    @property
    def rhs(self):
        return bool(self.flags & (RHS_ROWS | RHS_WHOLE_T))

    def operands(self, a, b, rank):
        return (a, b, rank) if self.rhs else (a, rank)

    def aliases(self):
        """Results written in place: A's (and X's) buffers are the operands'."""
        return {0: 0, 1: 1} if self.rhs else {0: 0}

    def results(self, a, b):
        """(role, shape, dtype, per_device) of each result, in order; a and b give the shapes
        and dtypes of the matrix and right-hand side operands."""
        out = [("a", a.shape, a.dtype, True)]
        if self.rhs:
            out.append(("x", b.shape, b.dtype, bool(self.flags & RHS_ROWS)))
        if self.flags & LOGDET:
            out.append(("logdet", (1,), "float64", False))
        out.append(("status", (1,), "int32", False))
        return out

    def attributes(self, *, state, site, ndev, n, tile, lower=False, logdet=False):
        """The attributes this operation takes, as numpy scalars: XLA types them from these."""
        attrs = dict(state=np.uint64(state), site=np.int64(site), ndev=np.int64(ndev),
                     n=np.int64(n), tile=np.int64(tile))
        if self.flags & LOWER:
            attrs["lower"] = np.int64(bool(lower))
        if self.flags & LOGDET:
            attrs["logdet"] = np.int64(bool(logdet))
        return attrs


# Index i is the C handler table's entry i.
OPS = (
    Op("potrs", RHS_ROWS | LOWER | LOGDET),
    Op("potri", LOWER),
    Op("cholesky", LOWER),
    Op("lu_solve", RHS_WHOLE_T, lu=True),
)
BY_NAME = {op.name: op for op in OPS}
