"""`dtensor.Layout`: how each axis of a tensor is split over a mesh's dimensions, as one JAX `NamedSharding`."""

from __future__ import annotations

from collections.abc import Sequence

from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from tapejax.experimental.dtensor.mesh import Mesh

UNSHARDED = "unsharded"
MATCH = "match"


class Layout:
    """Per tensor axis, the mesh dimension it is split over, or `UNSHARDED` (`tf.experimental.dtensor.Layout`).

    A tensor with this layout is a tapejax tensor whose `jax.Array` carries the `NamedSharding` of the same
    partition spec, so ops on it run SPMD through JAX's sharding propagation.

    >>> import tapejax as tf
    >>> dtensor = tf.experimental.dtensor
    >>> mesh = dtensor.create_mesh([("batch", 1)], device_type="CPU")
    >>> dtensor.Layout(["batch", dtensor.UNSHARDED], mesh).sharding_specs
    ['batch', 'unsharded']

    Raises:
      ValueError: a spec that is neither a dimension of the mesh nor UNSHARDED/MATCH, a mesh dimension used twice,
        a `mesh` that is not a Mesh (TF's messages).
    """

    def __init__(self, sharding_specs: Sequence[str], mesh: Mesh):
        if not isinstance(mesh, Mesh):
            raise ValueError("mesh is not a valid Mesh object.")
        specs = [str(s) for s in sharding_specs]
        for spec in specs:
            if spec not in (UNSHARDED, MATCH) and not mesh.contains_dim(spec):
                raise ValueError(f"{spec}: A dimension sharding must either be a valid mesh dimension or UNSHARDED.")
        named = [s for s in specs if s not in (UNSHARDED, MATCH)]
        for spec in named:
            if named.count(spec) > 1:
                raise ValueError(f"Mesh dimension {spec} was repeated in sharding specification {specs}. Mesh "
                                 "dimensions must be unique in a layout.")
        self._specs = specs
        self._mesh = mesh

    # -- constructors ----------------------------------------------------------------------------------------

    @staticmethod
    def replicated(mesh: Mesh, rank: int) -> Layout:
        """Every axis unsharded: each device holds the whole tensor."""
        return Layout([UNSHARDED] * rank, mesh)

    @staticmethod
    def batch_sharded(mesh: Mesh, batch_dim: str, rank: int, axis: int = 0) -> Layout:
        """Axis `axis` split over the mesh dimension `batch_dim`, the others unsharded."""
        return Layout._one_sharded(mesh, batch_dim, rank, axis)

    @staticmethod
    def inner_sharded(mesh: Mesh, inner_dim: str, rank: int) -> Layout:
        """The last axis split over the mesh dimension `inner_dim`, the others unsharded."""
        return Layout._one_sharded(mesh, inner_dim, rank, rank - 1)

    @staticmethod
    def _one_sharded(mesh: Mesh, dim: str, rank: int, axis: int) -> Layout:
        if not mesh.contains_dim(dim):  # TF's C++ status, raised as RuntimeError by these constructors
            raise RuntimeError(f"INVALID_ARGUMENT: sharding spec ({dim}) refers to mesh dimension not contained in "
                               f"mesh {mesh.to_string()}")
        specs = [UNSHARDED] * rank
        specs[axis] = dim
        return Layout(specs, mesh)

    @staticmethod
    def from_string(layout_str: str) -> Layout:
        """The layout a `to_string()` describes: "sharding_specs:batch,unsharded, mesh:|batch=4|...|..."."""
        specs, mesh = layout_str.split(" mesh:", 1)
        specs = specs.removeprefix("sharding_specs:").rstrip(",")
        return Layout(specs.split(",") if specs else [], Mesh.from_string(mesh))

    def delete(self, dims: Sequence[int]) -> Layout:
        """This layout without the axes `dims`."""
        drop = {d % self.rank for d in dims}
        return Layout([s for i, s in enumerate(self._specs) if i not in drop], self._mesh)

    # -- queries ---------------------------------------------------------------------------------------------

    @property
    def sharding_specs(self) -> list[str]:
        return list(self._specs)

    @property
    def rank(self) -> int:
        return len(self._specs)

    @property
    def mesh(self) -> Mesh:
        return self._mesh

    def num_shards(self, idx: int) -> int:
        """Into how many pieces axis `idx` is split."""
        spec = self._specs[idx]
        return 1 if spec in (UNSHARDED, MATCH) else self._mesh.dim_size(spec)

    def is_fully_replicated(self) -> bool:
        return all(s == UNSHARDED for s in self._specs)

    def is_batch_parallel(self) -> bool:
        return bool(self._specs) and self._specs[0] != UNSHARDED and all(s == UNSHARDED for s in self._specs[1:])

    def is_single_device(self) -> bool:
        return False

    def to_string(self) -> str:
        return f"sharding_specs:{','.join(self._specs)}{',' if self._specs else ''} mesh:{self._mesh.to_string()}"

    def __repr__(self) -> str:
        return f"Layout.from_string({self.to_string()})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Layout) and self._specs == other._specs and self._mesh == other._mesh

    def __hash__(self) -> int:
        return hash((tuple(self._specs), self._mesh))

    # -- JAX -------------------------------------------------------------------------------------------------

    def _sharding(self, matched: Sequence[str] | None = None) -> NamedSharding:
        """The `NamedSharding` of this layout; MATCH axes take `matched`'s spec (relayout's current layout)."""
        specs = [m if s == MATCH and matched is not None else s for s, m in zip(self._specs, matched or self._specs)]
        if MATCH in specs:
            raise ValueError(f"{self}: dtensor.MATCH keeps an axis's current sharding, so it is only meaningful in "
                             "dtensor.relayout; name a mesh dimension or UNSHARDED here.")
        return NamedSharding(self._mesh._jax, P(*[None if s == UNSHARDED else s for s in specs]))


def of_sharding(sharding: NamedSharding, rank: int) -> Layout:
    """The layout a `NamedSharding` of a rank-`rank` array has (JAX drops trailing unsharded axes from its spec)."""
    specs = []
    for entry in tuple(sharding.spec) + (None,) * (rank - len(sharding.spec)):
        if isinstance(entry, tuple):  # one axis over several mesh dimensions: JAX can, a dtensor Layout cannot
            if len(entry) != 1:
                raise ValueError(f"The sharding {sharding} splits one axis over several mesh dimensions, which a "
                                 "tf.experimental.dtensor.Layout cannot express.")
            entry = entry[0]
        specs.append(UNSHARDED if entry is None else entry)
    return Layout(specs, Mesh._from_jax(sharding.mesh))
