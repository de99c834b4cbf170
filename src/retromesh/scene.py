"""The format-neutral scene model, in glTF 2.0 conventions.

Right-handed, +Y up, metres (when the source defines units), quaternions ``x, y, z, w``,
counter-clockwise front faces, UV origin at the top-left of the image, animation times in
seconds. Matrices are column-vector 4x4 numpy arrays (``p' = M @ p``).

Formats convert *into* these conventions at their own edge; nothing here knows about any
format. Every object has ``extras`` (a JSON-able dict) for provenance and for what a
conversion could not express.

Objects reference each other by index into the lists of :class:`Scene`, like glTF. Local
invariants (array shapes and dtypes) are checked on construction; cross references are
checked by :meth:`Scene.validate`, which ``load``/``save`` call: besides the references it
requires node TRS of the right lengths (3/4/3) and every number a writer stores (node TRS,
positions, inverse bind matrices, animation keys) finite and within float32.

Before a game-format writer runs, :meth:`Scene.for_writing` makes the few fix-ups writers rely on,
each reported with a :class:`~retromesh.LossWarning` (the caller's scene is not changed):

- a non-indexed triangle primitive whose vertex count is not a multiple of 3 loses the
  incomplete last triangle;
- a zero (or sub-1e-6) node or key-frame scale becomes 1e-6 with its sign, so that the node's
  matrix can be inverted (writers that store bind poses or parent-relative keys need inverses).

A singular inverse bind matrix cannot be fixed up (it names no pose): DocumentError naming the
skin and joint. A scene with more than ``LIMITS["mesh_nodes"]`` (1024) nodes holding a mesh is
refused for game formats (DocumentError): each becomes a MESH, piece, part or limb of its own,
so a small glTF of thousands of nodes sharing one mesh would cost a writer a long time, and the
biggest corpus model has 46. Raise ``retromesh.scene.LIMITS["mesh_nodes"]`` for more.
"""
from __future__ import annotations

import copy
import math
import warnings
from dataclasses import field
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from .arrays import as_dtype
from .errors import DocumentError, LossWarning
from .records import record

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, DTypeLike

__all__ = [
    "Scene", "Node", "Mesh", "Primitive", "Material", "Texture", "TextureRef", "Skin",
    "Animation", "Channel", "MorphTarget", "LIMITS", "finite32", "first_not_finite32",
    "unheld",
]

#: caps of :meth:`Scene.for_writing` (game-format writers); raise them for bigger scenes
LIMITS = {"mesh_nodes": 1024}


@overload
def _array(value: None, dtype: DTypeLike, width: int | None, name: str, owner: str) -> None: ...
@overload
def _array(value: ArrayLike, dtype: DTypeLike, width: int | None, name: str,
           owner: str) -> np.ndarray: ...


def _array(value: ArrayLike | None, dtype: DTypeLike, width: int | None, name: str,
           owner: str) -> np.ndarray | None:
    if value is None:
        return None
    arr = np.ascontiguousarray(as_dtype(value, dtype, f"{owner}.{name}"))
    if width is None:
        if arr.ndim != 1:
            raise DocumentError(f"{owner}.{name} must be 1-D, got shape {arr.shape}")
    elif arr.ndim != 2 or arr.shape[1] != width:
        raise DocumentError(f"{owner}.{name} must have shape (n, {width}), got {arr.shape}")
    return arr


@record
class Texture:
    """An image used by materials: a relative ``uri`` and/or embedded ``image`` bytes."""
    name: str = ""
    uri: str | None = None
    image: bytes | None = None
    mime_type: str | None = None
    wrap_s: int = 10497       # REPEAT; 33071 CLAMP_TO_EDGE, 33648 MIRRORED_REPEAT
    wrap_t: int = 10497
    mipmaps: bool = True
    extras: dict[str, Any] = field(default_factory=dict)


@record
class TextureRef:
    """A material's use of a texture; offset/scale/rotation map to KHR_texture_transform."""
    texture: int
    texcoord: int = 0
    offset: tuple[float, float] = (0.0, 0.0)
    scale: tuple[float, float] = (1.0, 1.0)
    rotation: float = 0.0

    @property
    def has_transform(self) -> bool:
        return (tuple(self.offset) != (0.0, 0.0) or tuple(self.scale) != (1.0, 1.0)
                or self.rotation != 0.0)


@record
class Material:
    """A glTF metallic-roughness material (colours linear, factors 0..1)."""
    name: str = ""
    base_color: tuple[float, float, float, float] = (1.0, 1.0, 1.0, 1.0)
    base_color_texture: TextureRef | None = None
    metallic: float = 0.0
    roughness: float = 1.0
    emissive: tuple[float, float, float] = (0.0, 0.0, 0.0)
    alpha_mode: str = "OPAQUE"        # OPAQUE, MASK, BLEND
    alpha_cutoff: float = 0.5
    double_sided: bool = False
    unlit: bool = False
    extras: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.alpha_mode not in ("OPAQUE", "MASK", "BLEND"):
            raise DocumentError(f"material {self.name!r}: alpha_mode {self.alpha_mode!r}")


@record
class MorphTarget:
    """Per-vertex offsets of one morph target (shape key)."""
    positions: np.ndarray | None = None     # displacements (n, 3)
    normals: np.ndarray | None = None
    name: str = ""

    def __post_init__(self) -> None:
        self.positions = _array(self.positions, np.float32, 3, "positions", "MorphTarget")
        self.normals = _array(self.normals, np.float32, 3, "normals", "MorphTarget")


@record
class Primitive:
    """Triangles sharing one material; vertex attributes as numpy arrays."""
    positions: np.ndarray
    indices: np.ndarray | None = None        # (3k,) uint32; None = non-indexed
    normals: np.ndarray | None = None
    tangents: np.ndarray | None = None       # (n, 4), w = handedness
    uvs: list[np.ndarray] = field(default_factory=list)   # TEXCOORD_0, _1, ...
    colors: np.ndarray | None = None         # (n, 4) float RGBA, linear 0..1
    joints: np.ndarray | None = None         # (n, 4) indices into the skin's joints
    weights: np.ndarray | None = None        # (n, 4), rows sum to 1
    material: int | None = None
    targets: list[MorphTarget] = field(default_factory=list)
    mode: int = 4                            # 4 triangles, 1 lines, 0 points
    extras: dict[str, Any] = field(default_factory=dict)
    #: KHR_materials_variants mappings: (material, indices into ``Scene.variants``) pairs; a
    #: variant no pair names shows ``material``
    variants: list[tuple[int, list[int]]] = field(default_factory=list)
    #: application-specific vertex attributes (glTF names starting with ``_``), float32 with
    #: 1 to 4 components a vertex: they travel with their vertex through Blender (its exporter
    #: writes them back with attribute export on), so a family can carry a vertex's source
    #: index in one
    attributes: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.positions = _array(self.positions, np.float32, 3, "positions", "Primitive")
        n = len(self.positions)
        for name, values in list(self.attributes.items()):
            arr = np.asarray(values, np.float32)
            if not (isinstance(name, str) and name.startswith("_")) or arr.ndim not in (1, 2) \
                    or len(arr) != n or (arr.ndim == 2 and not 1 <= arr.shape[1] <= 4):
                raise DocumentError(f"Primitive.attributes[{name!r}]: a name starting with '_' "
                                    f"and 1 to 4 float components for each of the {n} vertices")
            self.attributes[name] = arr
        self.normals = _array(self.normals, np.float32, 3, "normals", "Primitive")
        self.tangents = _array(self.tangents, np.float32, 4, "tangents", "Primitive")
        self.uvs = [_array(uv, np.float32, 2, f"uvs[{i}]", "Primitive") for i, uv in enumerate(self.uvs)]
        self.colors = _array(self.colors, np.float32, 4, "colors", "Primitive")
        self.joints = _array(self.joints, np.uint16, 4, "joints", "Primitive")
        self.weights = _array(self.weights, np.float32, 4, "weights", "Primitive")
        if self.indices is not None:
            self.indices = _array(np.asarray(self.indices).reshape(-1), np.uint32, None,
                                  "indices", "Primitive")
            if self.mode == 4 and len(self.indices) % 3:
                raise DocumentError("Primitive.indices length must be a multiple of 3")
            if len(self.indices) and int(self.indices.max()) >= n:
                raise DocumentError(f"Primitive.indices refer to vertex {int(self.indices.max())} "
                                    f"of {n}")
        for name in ("normals", "tangents", "colors", "joints", "weights"):
            a = getattr(self, name)
            if a is not None and len(a) != n:
                raise DocumentError(f"Primitive.{name} has {len(a)} rows for {n} vertices")
        for i, uv in enumerate(self.uvs):
            if len(uv) != n:
                raise DocumentError(f"Primitive.uvs[{i}] has {len(uv)} rows for {n} vertices")
        if (self.joints is None) != (self.weights is None):
            raise DocumentError("Primitive.joints and weights go together")
        for t in self.targets:
            for a in (t.positions, t.normals):
                if a is not None and len(a) != n:
                    raise DocumentError("Primitive morph target size differs from the vertices")

    @property
    def triangle_count(self) -> int:
        if self.mode != 4:
            return 0
        return (len(self.indices) if self.indices is not None else len(self.positions)) // 3


@record
class Mesh:
    """Primitives drawn together, and the default weights of their morph targets."""
    name: str = ""
    primitives: list[Primitive] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)    # default morph weights
    extras: dict[str, Any] = field(default_factory=dict)


@record
class Skin:
    """``joints`` are node indices; ``inverse_bind_matrices`` is (len(joints), 4, 4)."""
    joints: list[int]
    inverse_bind_matrices: np.ndarray | None = None
    skeleton: int | None = None
    name: str = ""
    extras: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.inverse_bind_matrices is not None:
            m = np.asarray(self.inverse_bind_matrices, dtype=np.float64)
            if m.shape != (len(self.joints), 4, 4):
                raise DocumentError(f"Skin.inverse_bind_matrices has shape {m.shape} for "
                                    f"{len(self.joints)} joints")
            self.inverse_bind_matrices = m


@record
class Node:
    """A transform (translation, unit quaternion x y z w, scale) with children, mesh, skin."""
    name: str = ""
    translation: np.ndarray = field(default_factory=lambda: np.zeros(3))
    rotation: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 0.0, 1.0]))
    scale: np.ndarray = field(default_factory=lambda: np.ones(3))
    children: list[int] = field(default_factory=list)
    mesh: int | None = None
    skin: int | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.translation = np.asarray(self.translation, dtype=np.float64).reshape(3)
        self.rotation = np.asarray(self.rotation, dtype=np.float64).reshape(4)
        self.scale = np.asarray(self.scale, dtype=np.float64).reshape(3)

    @property
    def matrix(self) -> np.ndarray:
        from .transforms import compose_trs
        return compose_trs(self.translation, self.rotation, self.scale)


_WIDTH = {"translation": 3, "rotation": 4, "scale": 3}


def _key_index(kt: np.ndarray, times) -> tuple[np.ndarray, np.ndarray]:
    """(for each of ``times`` the key at or before it, the times with those within a
    microsecond of a key set on it) for key times ``kt`` (float64, increasing)."""
    t = np.asarray(times, dtype=np.float64)
    k = len(kt)
    # a time within a microsecond of a key (either side) is that key: a key stored as
    # float32 seconds is a hair off the time meant (1.999 s is 1.99899995 s), and between
    # keys a few milliseconds apart interpolating over that hair moves the value visibly
    if k > 1:
        j = np.clip(np.searchsorted(kt, t), 1, k - 1)
        j = np.where(kt[j] - t < t - kt[j - 1], j, j - 1)          # the nearest key
        t = np.where(np.abs(kt[j] - t) <= 1e-6, kt[j], t)
    return np.clip(np.searchsorted(kt, t + 1e-6, side="right") - 1, 0, k - 1), t


@record
class Channel:
    """Keys of one node property. ``values`` is (k, width); for CUBICSPLINE (3k, width);
    for ``weights`` (k, n_targets)."""
    node: int
    path: str
    times: np.ndarray
    values: np.ndarray
    interpolation: str = "LINEAR"

    def __post_init__(self) -> None:
        if self.path not in ("translation", "rotation", "scale", "weights"):
            raise DocumentError(f"Channel.path {self.path!r}")
        if self.interpolation not in ("LINEAR", "STEP", "CUBICSPLINE"):
            raise DocumentError(f"Channel.interpolation {self.interpolation!r}")
        self.times = np.ascontiguousarray(self.times, dtype=np.float32).reshape(-1)
        v = np.ascontiguousarray(self.values, dtype=np.float32)
        if v.ndim == 1:
            v = v.reshape(-1, _WIDTH.get(self.path, 1))
        self.values = v
        k = len(self.times) * (3 if self.interpolation == "CUBICSPLINE" else 1)
        if len(self.times) == 0:
            raise DocumentError("Channel has no keys")
        if len(v) != k:
            raise DocumentError(f"Channel ({self.path}) has {len(v)} values for {len(self.times)} keys")
        if self.path in _WIDTH and v.shape[1] != _WIDTH[self.path]:
            raise DocumentError(f"Channel ({self.path}) values must be {_WIDTH[self.path]} wide")
        t = self.times
        if not (t[1:] > t[:-1]).all():        # (a NaN between two keys fails it too)
            raise DocumentError("Channel times must increase strictly")
        if not (math.isfinite(t[0]) and math.isfinite(t[-1]) and np.isfinite(v).all()):
            # increasing times are finite when both ends are (NaN fails the order test)
            raise DocumentError("Channel times and values must be finite")

    @classmethod
    def tracks(cls, nodes: list[int], path: str, times: np.ndarray, values: np.ndarray,
               starts: np.ndarray) -> list[Channel]:
        """LINEAR channels of one ``path`` for tracks stored one after another (``starts``
        marks each track's first key; track k animates ``nodes[k]``), checked together as
        ``Channel(...)`` checks each one: a reader's hundreds of tracks at numpy's cost of
        one. The channels hold slices of ``times`` and ``values`` (float32)."""
        times = np.ascontiguousarray(times, dtype=np.float32).reshape(-1)
        values = np.ascontiguousarray(values, dtype=np.float32)
        width = _WIDTH.get(path)
        starts = np.asarray(starts, bool)
        # unless all is well (times increase strictly within each track, a NaN fails that
        # too), each channel is made and checked on its own, to name what is wrong
        if width is None or values.shape != (len(times), width) \
                or starts.shape != times.shape or not (len(times) and starts[0]) \
                or not ((times[1:] > times[:-1]) | starts[1:]).all() \
                or not (np.isfinite(times).all() and np.isfinite(values).all()):
            return [cls(n, path, t, v) for n, t, v in _split_tracks(nodes, times, values, starts)]
        out = []
        for n, t, v in _split_tracks(nodes, times, values, starts):
            c = cls.__new__(cls)
            c.node, c.path, c.times, c.values, c.interpolation = n, path, t, v, "LINEAR"
            out.append(c)
        return out

    def key_values(self) -> np.ndarray:
        """The values at the keys (for CUBICSPLINE the middle of each in-tangent/value/out-tangent
        triple)."""
        if self.interpolation == "CUBICSPLINE":
            return self.values.reshape(len(self.times), 3, -1)[:, 1]
        return self.values

    def sample(self, times) -> np.ndarray:
        """Values at ``times`` (seconds), held at the ends: linear (slerp for rotations) between
        keys, the earlier key for STEP, the Hermite curve of glTF for CUBICSPLINE (rotations
        normalised). A time within a microsecond of a key counts as that key (float32 times)."""
        from .transforms import quat_normalize, quat_slerp
        kt = self.times.astype(np.float64)
        v = self.key_values().astype(np.float64)
        k = len(kt)
        i, t = _key_index(kt, times)
        if self.interpolation == "STEP" or k == 1:
            return v[i]
        i = np.minimum(i, k - 2)
        dt = kt[i + 1] - kt[i]
        u = np.clip((t - kt[i]) / np.where(dt > 0, dt, 1.0), 0.0, 1.0)
        if self.interpolation == "CUBICSPLINE":
            triples = self.values.astype(np.float64).reshape(k, 3, -1)
            a_in, b_out = triples[:, 0], triples[:, 2]
            u2, u3 = u * u, u * u * u
            out = ((2 * u3 - 3 * u2 + 1)[:, None] * v[i]
                   + ((u3 - 2 * u2 + u) * dt)[:, None] * b_out[i]
                   + (-2 * u3 + 3 * u2)[:, None] * v[i + 1]
                   + ((u3 - u2) * dt)[:, None] * a_in[i + 1])
            return quat_normalize(out) if self.path == "rotation" else out
        if self.path == "rotation":
            return quat_slerp(v[i], v[i + 1], u)
        return v[i] + (v[i + 1] - v[i]) * u[:, None]

    @staticmethod
    def sample_many(channels: list[Channel], times) -> list[np.ndarray]:
        """``[c.sample(times) for c in channels]``, the LINEAR and STEP channels that share
        a path and key times sampled together (one numpy pass for a skeleton's channels
        instead of one per channel; a value may differ from ``sample``'s in the last bit)."""
        from .transforms import quat_slerp
        out: list[np.ndarray | None] = [None] * len(channels)
        groups: dict[tuple, list[int]] = {}
        for n, c in enumerate(channels):
            if c.interpolation in ("LINEAR", "STEP") and len(c.times) > 1:
                groups.setdefault((c.path, c.interpolation, c.times.tobytes()), []).append(n)
            else:
                out[n] = c.sample(times)
        for (path, interpolation, _), members in groups.items():
            if len(members) == 1:
                out[members[0]] = channels[members[0]].sample(times)
                continue
            kt = channels[members[0]].times.astype(np.float64)
            v = np.stack([channels[n].values for n in members]).astype(np.float64)
            i, t = _key_index(kt, times)
            if interpolation == "STEP":
                got = v[:, i]
            else:
                i = np.minimum(i, len(kt) - 2)
                dt = kt[i + 1] - kt[i]
                u = np.clip((t - kt[i]) / np.where(dt > 0, dt, 1.0), 0.0, 1.0)
                got = quat_slerp(v[:, i], v[:, i + 1], u) if path == "rotation" \
                    else v[:, i] + (v[:, i + 1] - v[:, i]) * u[:, None]
            for n, g in zip(members, got):
                out[n] = g
        return out  # type: ignore[return-value]


def _split_tracks(nodes: list[int], times: np.ndarray, values: np.ndarray, starts: np.ndarray):
    """(node, times, values) per track of :meth:`Channel.tracks` (a track per start)."""
    first = np.flatnonzero(starts).tolist()
    if len(times) and not starts[0]:
        raise DocumentError("track keys before the first track's start")
    if len(first) != len(nodes):
        raise DocumentError(f"{len(nodes)} channel nodes for {len(first)} tracks")
    for n, a, b in zip(nodes, first, [*first[1:], len(times)]):
        yield n, times[a:b], values[a:b]


@record
class Animation:
    """Channels played together."""
    name: str = ""
    channels: list[Channel] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def duration(self) -> float:
        return max((float(c.times[-1]) for c in self.channels), default=0.0)


@record
class Scene:
    """The format-neutral scene: flat lists indexed like glTF's, with the root nodes."""
    name: str = ""
    nodes: list[Node] = field(default_factory=list)
    meshes: list[Mesh] = field(default_factory=list)
    materials: list[Material] = field(default_factory=list)
    textures: list[Texture] = field(default_factory=list)
    skins: list[Skin] = field(default_factory=list)
    animations: list[Animation] = field(default_factory=list)
    roots: list[int] = field(default_factory=list)
    #: further scenes (name, root node indices) for content kept out of the default scene
    extra_scenes: list[tuple[str, list[int]]] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)
    #: names of the material variants (KHR_materials_variants); primitives map them
    variants: list[str] = field(default_factory=list)

    # -- building ---------------------------------------------------------------------
    def add_node(self, node: Node, parent: int | None = None) -> int:
        self.nodes.append(node)
        i = len(self.nodes) - 1
        if parent is None:
            self.roots.append(i)
        else:
            self.nodes[parent].children.append(i)
        return i

    def add_mesh(self, mesh: Mesh) -> int:
        self.meshes.append(mesh)
        return len(self.meshes) - 1

    def add_material(self, material: Material) -> int:
        self.materials.append(material)
        return len(self.materials) - 1

    def add_texture(self, texture: Texture) -> int:
        self.textures.append(texture)
        return len(self.textures) - 1

    def add_skin(self, skin: Skin) -> int:
        self.skins.append(skin)
        return len(self.skins) - 1

    # -- queries ----------------------------------------------------------------------
    def parents(self) -> list[int]:
        """Parent index of every node (-1 for roots and unattached nodes)."""
        parent = [-1] * len(self.nodes)
        for i, n in enumerate(self.nodes):
            for c in n.children:
                parent[c] = i
        return parent

    def local_matrices(self) -> np.ndarray:
        """Every node's local matrix, (n, 4, 4), in one vectorised call."""
        from .transforms import compose_trs
        if not self.nodes:
            return np.zeros((0, 4, 4))
        return compose_trs(np.array([n.translation for n in self.nodes], dtype=np.float64),
                           np.array([n.rotation for n in self.nodes], dtype=np.float64),
                           np.array([n.scale for n in self.nodes], dtype=np.float64))

    def world_matrices(self) -> np.ndarray:
        from .transforms import world_matrices
        if not self.nodes:
            return np.zeros((0, 4, 4))
        return world_matrices(self.local_matrices(), self.parents())

    def counts(self) -> dict[str, int]:
        prims = [p for m in self.meshes for p in m.primitives]
        return {
            "nodes": len(self.nodes),
            "meshes": len(self.meshes),
            "primitives": len(prims),
            "vertices": sum(len(p.positions) for p in prims),
            "triangles": sum(p.triangle_count for p in prims),
            "materials": len(self.materials),
            "textures": len(self.textures),
            "skins": len(self.skins),
            "joints": sum(len(s.joints) for s in self.skins),
            "animations": len(self.animations),
            "channels": sum(len(a.channels) for a in self.animations),
        }

    def validate(self) -> Scene:
        """Check every cross reference, TRS lengths and finite numbers; raises DocumentError.
        Returns self."""
        n = len(self.nodes)
        self._validate_numbers()
        seen_child: set[int] = set()
        for i, node in enumerate(self.nodes):
            for c in node.children:
                if not 0 <= c < n or c == i:
                    raise DocumentError(f"node {i} ({node.name!r}) has child {c} out of range")
                if c in seen_child:
                    raise DocumentError(f"node {c} has two parents")
                seen_child.add(c)
            if node.mesh is not None and not 0 <= node.mesh < len(self.meshes):
                raise DocumentError(f"node {i} refers to mesh {node.mesh}")
            if node.skin is not None:
                if not 0 <= node.skin < len(self.skins):
                    raise DocumentError(f"node {i} refers to skin {node.skin}")
                if node.mesh is None:
                    raise DocumentError(f"node {i} has a skin but no mesh")
        for r in self.roots + [r for _, rs in self.extra_scenes for r in rs]:
            if not 0 <= r < n or r in seen_child:
                raise DocumentError(f"scene root {r} is out of range or has a parent")
        # cycles: with one parent per node, a node is in a cycle exactly when walking down
        # from the parentless nodes never reaches it
        reached = [False] * n
        stack = [i for i in range(n) if i not in seen_child]
        while stack:
            i = stack.pop()
            reached[i] = True
            stack.extend(self.nodes[i].children)
        if not all(reached):
            raise DocumentError(f"node {reached.index(False)} is in a cycle")
        for mi, mesh in enumerate(self.meshes):
            for pi, p in enumerate(mesh.primitives):
                if p.material is not None and not 0 <= p.material < len(self.materials):
                    raise DocumentError(f"mesh {mi} primitive {pi} refers to material {p.material}")
                for m, vs in p.variants:
                    if not 0 <= m < len(self.materials) or \
                            any(not 0 <= v < len(self.variants) for v in vs):
                        raise DocumentError(f"mesh {mi} primitive {pi}: a variant mapping refers "
                                            f"to material {m} or variants {list(vs)} out of range")
        for mat in self.materials:
            ref = mat.base_color_texture
            if ref is not None and not 0 <= ref.texture < len(self.textures):
                raise DocumentError(f"material {mat.name!r} refers to texture {ref.texture}")
        for si, skin in enumerate(self.skins):
            if not skin.joints:
                raise DocumentError(f"skin {si} has no joints")
            for j in skin.joints:
                if not 0 <= j < n:
                    raise DocumentError(f"skin {si} refers to joint node {j}")
            if len(set(skin.joints)) != len(skin.joints):
                raise DocumentError(f"skin {si} lists a joint twice")
        for i, node in enumerate(self.nodes):
            if node.skin is not None and node.mesh is not None:     # (a skin needs a mesh: above)
                nj = len(self.skins[node.skin].joints)
                for p in self.meshes[node.mesh].primitives:
                    if p.joints is not None and len(p.joints) and int(p.joints.max()) >= nj:
                        raise DocumentError(f"mesh of node {i} uses joint {int(p.joints.max())} "
                                            f"of {nj}")
        for ai, anim in enumerate(self.animations):
            for ch in anim.channels:
                if not 0 <= ch.node < n:
                    raise DocumentError(f"animation {ai} targets node {ch.node}")
        return self

    # -- numbers and writer fix-ups ---------------------------------------------------------
    def _validate_numbers(self) -> None:
        trs = (("translation", 3), ("rotation", 4), ("scale", 3))
        if self.nodes:                      # one vectorised check (scenes of 20,000 nodes)
            for key, width in trs:
                try:
                    values = np.array([getattr(n, key) for n in self.nodes], dtype=np.float64)
                except (TypeError, ValueError):
                    values = None           # ragged: the loop below names the node
                if values is None or values.shape != (len(self.nodes), width):
                    for i, node in enumerate(self.nodes):
                        if np.shape(getattr(node, key)) != (width,):
                            raise DocumentError(
                                f"node {i} ({node.name!r}): {key} must have {width} numbers, "
                                f"got shape {np.shape(getattr(node, key))}")
                    values = np.array([getattr(n, key) for n in self.nodes], dtype=np.float64)
                if np.abs(values).max() <= _FLT_MAX:   # (a NaN fails it too)
                    continue
                ok = np.all(np.abs(values) <= _FLT_MAX, axis=1)
                if not np.all(ok):
                    i = int(np.argmin(ok))
                    raise DocumentError(f"node {i} ({self.nodes[i].name!r}): {key} "
                                        f"{values[i].tolist()} is not finite within float32")
        numbers = [_material_numbers(mat) for mat in self.materials]
        if not _finite_numbers([x for nums in numbers for x in nums]):   # then one by one: which
            for mi, mat in enumerate(self.materials):
                if not _finite_numbers(numbers[mi]):
                    raise DocumentError(f"material {mi} ({mat.name!r}): colours, factors and "
                                        "texture transform must be finite numbers")
        for mi, mesh in enumerate(self.meshes):
            if mesh.weights and not finite32(np.array(mesh.weights, dtype=np.float64)):
                raise DocumentError(f"mesh {mi} ({mesh.name!r}): morph weights are not finite")
        where = [(mi, pi, "vertex positions", p.positions)
                 for mi, mesh in enumerate(self.meshes) for pi, p in enumerate(mesh.primitives)]
        where += [(mi, pi, f"morph target {ti} {kind}", a)
                  for mi, mesh in enumerate(self.meshes) for pi, p in enumerate(mesh.primitives)
                  for ti, t in enumerate(p.targets)
                  for kind, a in (("positions", t.positions), ("normals", t.normals)) if a is not None]
        bad = first_not_finite32([a for *_, a in where])
        if bad is not None:
            mi, pi, what, _ = where[bad]
            raise DocumentError(f"mesh {mi} ({self.meshes[mi].name!r}) primitive {pi}: {what} "
                                "are not finite within float32")
        for si, skin in enumerate(self.skins):
            m = skin.inverse_bind_matrices
            if m is not None and not finite32(m):
                raise DocumentError(f"skin {si} ({skin.name!r}): inverse bind matrices are not "
                                    "finite within float32")
        chans = [(ai, ci) for ai, anim in enumerate(self.animations)
                 for ci in range(len(anim.channels))]
        keys = [a for ai, ci in chans for a in (self.animations[ai].channels[ci].values,
                                                self.animations[ai].channels[ci].times)]
        bad = first_not_finite32(keys)
        if bad is not None:
            ai, ci = chans[bad // 2]
            raise DocumentError(f"animation {ai} ({self.animations[ai].name!r}) channel {ci}: "
                                "keys are not finite within float32")

    def for_writing(self, validated: bool = False) -> Scene:
        """This scene validated (unless ``validated``: checked just before) and fixed up for a
        game-format writer (see the module docstring); returns ``self`` when nothing needs
        fixing, else a fixed shallow copy."""
        if not validated:
            self.validate()
        mesh_nodes = sum(n.mesh is not None for n in self.nodes)
        if mesh_nodes > LIMITS["mesh_nodes"]:
            raise DocumentError(f"{mesh_nodes} nodes hold a mesh; game formats are written with "
                                f"at most LIMITS['mesh_nodes'] = {LIMITS['mesh_nodes']} "
                                "(retromesh.scene.LIMITS; raise it for a bigger scene)")
        for si, skin in enumerate(self.skins):
            m = skin.inverse_bind_matrices
            if m is not None and len(m):
                det = np.linalg.det(m[:, :3, :3])
                det4 = np.linalg.det(m)     # the bottom row too (glTF leaves it unchecked)
                bad = np.flatnonzero(~((np.abs(det) > 1e-18) & (np.abs(det4) > 1e-18)))
                if len(bad):
                    j = skin.joints[int(bad[0])]
                    raise DocumentError(f"skin {si} ({skin.name!r}): the inverse bind matrix of "
                                        f"joint {int(bad[0])} (node {j}, "
                                        f"{self.nodes[j].name!r}) is singular")
        out = self
        scales = np.array([n.scale for n in self.nodes], dtype=np.float64).reshape(-1, 3)
        fixed_nodes = np.flatnonzero(np.any(np.abs(scales) < 1e-6, axis=1)).tolist()
        if fixed_nodes:
            out = copy.copy(out)
            out.nodes = list(out.nodes)
            for i in fixed_nodes:
                node = out.nodes[i] = copy.copy(out.nodes[i])
                node.scale = _nonzero_scale(node.scale)
            names = ", ".join(f"{i} ({self.nodes[i].name!r})" for i in fixed_nodes[:5])
            warnings.warn(LossWarning(f"node scale 0 cannot be inverted: nodes {names} written "
                                      "with scale 1e-6 instead"), stacklevel=3)
        fixed_keys = [(ai, ci) for ai, a in enumerate(self.animations)
                      for ci, c in enumerate(a.channels)
                      if c.path == "scale" and np.any(np.abs(c.values) < 1e-6)]
        if fixed_keys:
            out = copy.copy(out) if out is self else out
            out.animations = list(out.animations)
            for ai, ci in fixed_keys:
                a = out.animations[ai] = copy.copy(out.animations[ai])
                a.channels = list(a.channels)
                c = a.channels[ci] = copy.copy(a.channels[ci])
                c.values = _nonzero_scale(c.values).astype(np.float32)
            warnings.warn(LossWarning(f"{len(fixed_keys)} scale animation channels have scale 0 "
                                      "keys; written as 1e-6"), stacklevel=3)
        partial = [(mi, pi) for mi, m in enumerate(self.meshes) for pi, p in enumerate(m.primitives)
                   if p.mode == 4 and p.indices is None and len(p.positions) % 3]
        if partial:
            out = copy.copy(out) if out is self else out
            out.meshes = list(out.meshes)
            for mi, pi in partial:
                mesh = out.meshes[mi] = copy.copy(out.meshes[mi])
                mesh.primitives = list(mesh.primitives)
                mesh.primitives[pi] = whole_triangles(mesh.primitives[pi])
            where = ", ".join(f"mesh {mi} primitive {pi}" for mi, pi in partial[:5])
            warnings.warn(LossWarning(f"{where}: the vertex count of a non-indexed triangle list "
                                      "is not a multiple of 3; the incomplete last triangle is "
                                      "dropped"), stacklevel=3)
        return out


_FLT_MAX = 3.4028234663852886e38


def finite32(a) -> bool:
    a = np.asarray(a)
    if a.dtype == np.float32:
        return bool(np.isfinite(a).all())
    a = np.asarray(a, dtype=np.float64)
    return bool(np.all(np.abs(a) <= _FLT_MAX))   # False for NaN too


def _material_numbers(mat: Material) -> list:
    """A material's colours, factors and texture transform, as validate checks them."""
    ref = mat.base_color_texture
    nums = [*mat.base_color, *mat.emissive, mat.metallic, mat.roughness, mat.alpha_cutoff]
    return nums + [*ref.offset, *ref.scale, ref.rotation] if ref is not None else nums


def _finite_numbers(nums: list) -> bool:
    try:
        return finite32(np.array(nums, dtype=np.float64))
    except (TypeError, ValueError):
        return False


def first_not_finite32(arrays: list) -> int | None:
    """Index of the first array holding a NaN, an infinity or a value beyond float32, or
    None; small arrays are checked together (one numpy call for a scene's many channels)."""
    f32, other, big = [], [], []        # small float32 arrays, other small ones, big ones
    for i, a in enumerate(arrays):
        if type(a) is np.ndarray:
            if a.size >= 4096:
                big.append(i)
            elif a.dtype is _F32:
                f32.append(a.reshape(-1))
            else:
                other.append(i)
        elif np.size(a) >= 4096:
            big.append(i)
        elif getattr(a, "dtype", None) == np.float32:
            f32.append(np.asarray(a).reshape(-1))
        else:
            other.append(i)
    # float32 arrays are finite within float32 when finite: joined with no float64 copy
    if f32 and not np.isfinite(np.concatenate(f32)).all() or other and not np.all(np.abs(
            np.concatenate([np.asarray(arrays[i], dtype=np.float64).reshape(-1)
                            for i in other])) <= _FLT_MAX):
        return next(i for i, a in enumerate(arrays) if np.size(a) < 4096 and not finite32(a))
    return next((i for i in big if not finite32(arrays[i])), None)


_F32 = np.dtype(np.float32)


def _nonzero_scale(s) -> np.ndarray:
    s = np.array(s, dtype=np.float64)
    small = np.abs(s) < 1e-6
    s[small] = np.where(s[small] < 0, -1e-6, 1e-6)
    return s


def whole_triangles(p: Primitive) -> Primitive:
    n = len(p.positions) // 3 * 3
    q = copy.copy(p)
    for name in ("positions", "normals", "tangents", "colors", "joints", "weights"):
        a = getattr(p, name)
        if a is not None:
            setattr(q, name, a[:n])
    q.uvs = [uv[:n] for uv in p.uvs]
    q.targets = [MorphTarget(positions=None if t.positions is None else t.positions[:n],
                             normals=None if t.normals is None else t.normals[:n], name=t.name)
                 for t in p.targets]
    return q


def unheld(scene: Scene, *, uv_sets: int = 1, colors: bool = False, morphs: bool = False,
           modes: tuple[int, ...] = (4,), skins: bool = True, animations: bool = True,
           meshes: bool = True) -> list[str]:
    """What of ``scene`` a format that holds only what the keywords say drops, each named
    (for the writer's LossWarning): UV sets beyond ``uv_sets``, vertex colours, morph targets
    and the animation of their weights, primitives of other ``modes`` (points, lines), skins,
    animations, meshes."""
    prims = [p for m in scene.meshes for p in m.primitives] if meshes else []
    out = []
    extra_uv = sum(max(len(p.uvs) - uv_sets, 0) for p in prims)
    if extra_uv:
        out.append(f"{extra_uv} UV set(s) beyond the first {uv_sets} (TEXCOORD_{uv_sets}...)")
    if not colors and any(p.colors is not None for p in prims):
        out.append("vertex colours (COLOR_0)")
    if not morphs:
        targets = sum(len(p.targets) for p in prims)
        if targets:
            out.append(f"{targets} morph target(s)")
        weights = [a.name for a in scene.animations for c in a.channels if c.path == "weights"]
        if weights and animations:
            out.append(f"the morph weight keys of animation(s) {sorted(set(weights))}")
    other = sum(p.mode not in modes for p in prims)
    if other:
        out.append(f"{other} primitive(s) of points or lines")
    if not skins and scene.skins:
        out.append(f"{len(scene.skins)} skin(s)")
    if not animations and scene.animations:
        out.append(f"{len(scene.animations)} animation(s)")
    if not meshes and scene.meshes:
        out.append(f"{len(scene.meshes)} mesh(es)")
    return out
