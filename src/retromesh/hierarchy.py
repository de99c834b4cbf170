"""Linear walks over a node forest given as parent indices (``-1`` for a root).

Writers use these instead of recursion (a 5,000-deep chain passes Python's recursion limit)
and instead of walking up the tree from every node (quadratic on a deep chain, minutes on a
glTF of 20,000 nodes): each function visits every node once. The parents come from a
validated :class:`~retromesh.scene.Scene` (``Scene.parents()``: one parent per node, no
cycles); a node in a cycle would never be reached from a root and is left out of
:func:`top_down` (and has no ancestor in :func:`nearest_in`).
"""
from __future__ import annotations

from collections.abc import Collection, Sequence

__all__ = ["children_of", "top_down", "nearest_in", "depth_of"]


def children_of(parents: Sequence[int]) -> list[list[int]]:
    """Children of every node, in index order."""
    kids: list[list[int]] = [[] for _ in parents]
    for i, p in enumerate(parents):
        if p >= 0:
            kids[p].append(i)
    return kids


def top_down(parents: Sequence[int]) -> list[int]:
    """Every node reachable from a root, each after its parent (breadth first)."""
    kids = children_of(parents)
    order = [i for i, p in enumerate(parents) if p < 0]
    k = 0
    while k < len(order):
        order.extend(kids[order[k]])
        k += 1
    return order


def nearest_in(parents: Sequence[int], members: Collection[int], *,
               include_self: bool = True) -> list[int]:
    """For every node: itself when it is one of ``members`` (and ``include_self``), else its
    nearest ancestor that is, else -1."""
    n = len(parents)
    inc = [-1] * n
    for x in top_down(parents):
        p = parents[x]
        inc[x] = x if x in members else (inc[p] if p >= 0 else -1)
    if include_self:
        return inc
    return [inc[p] if p >= 0 else -1 for p in parents]


def depth_of(parents: Sequence[int]) -> list[int]:
    """Depth of every node (0 for a root)."""
    depth = [0] * len(parents)
    for x in top_down(parents):
        p = parents[x]
        if p >= 0:
            depth[x] = depth[p] + 1
    return depth
