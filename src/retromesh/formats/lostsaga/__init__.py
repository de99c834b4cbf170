"""Lost Saga (io3DEngine): ``.msh`` meshes, ``.skl`` skeletons, ``.ani`` animations, ``.cms``
collision meshes, and the text material scripts ``<mesh>.txt`` (format ``lsmat``, read with
``format="lsmat"``: no extension is claimed for it).

Each module's docstring has its layout and the deviations from the spec text; :mod:`.scene` has
the conversions to and from :class:`retromesh.Scene`; :mod:`.samples` builds small documents
(a skinned, animated mesh) with our own writers.
"""
from __future__ import annotations

from ...checking import companion_rule
from ...findings import Finding, warning
from ...registry import Format, register
from . import ani, cms, material, msh, quatcodec, scene as _scene, skl
from .ani import AniEvent, AniFile, AniTrack
from .cms import CmsFile
from .material import MaterialScript
from .msh import ControlPoint, MshFile
from .skl import SklBone, SklFile

__all__ = ["MshFile", "ControlPoint", "SklFile", "SklBone", "AniFile", "AniTrack", "AniEvent",
           "CmsFile", "MaterialScript", "msh", "skl", "ani", "cms", "material", "quatcodec"]

register(Format(
    name="msh", family="Lost Saga", description="Lost Saga mesh (io3DEngine .msh)",
    extensions=("msh", "cms"), doc_types=(MshFile,), sniff=msh.sniff, magic_certain=True,
    read=msh.read, write=msh.write, to_scene=_scene.msh_to_scene,
    from_scene=_scene.msh_from_scene, endian="<",
    scene_options=("skeleton", "animations", "material"),
    companions=("skl", "ani", "txt"), info=msh.info, check=msh.check))

register(Format(
    name="skl", family="Lost Saga", description="Lost Saga skeleton (io3DEngine .skl)",
    extensions=("skl",), doc_types=(SklFile,), sniff=skl.sniff, magic_certain=True,
    read=skl.read, write=skl.write, to_scene=_scene.skl_to_scene,
    from_scene=_scene.skl_from_scene, endian="<",
    scene_options=("animations", "mesh"), companions=("msh", "ani"),
    info=skl.info, check=skl.check))

register(Format(
    name="ani", family="Lost Saga", description="Lost Saga animation (io3DEngine .ani)",
    extensions=("ani",), doc_types=(AniFile,), sniff=ani.sniff, magic_certain=True,
    read=ani.read, write=ani.write, to_scene=_scene.ani_to_scene,
    from_scene=_scene.ani_from_scene, endian="<",
    scene_options=("skeleton", "mesh", "animations"), companions=("skl", "msh"),
    info=ani.info, check=ani.check))

register(Format(
    name="cms", family="Lost Saga", description="Lost Saga collision mesh (io3DEngine .cms)",
    extensions=("cms",), doc_types=(CmsFile,), sniff=cms.sniff, magic_certain=True,
    read=cms.read, write=cms.write, to_scene=_scene.cms_to_scene,
    from_scene=_scene.cms_from_scene, endian="<", info=cms.info, check=cms.check))

register(Format(
    name="lsmat", family="Lost Saga",
    description="Lost Saga material script <mesh>.txt (no extension claimed: format='lsmat')",
    extensions=(), doc_types=(MaterialScript,), read=material.read, write=material.write,
    info=material.info))


@companion_rule("ani", "skl")
def _ani_with_skl(doc: AniFile, skeleton: SklFile) -> list[Finding]:
    """The engine finds a track's bone by name: a track for a bone the skeleton lacks moves
    nothing."""
    known = set(skeleton.names())
    lost = sorted({t.bone for t in doc.tracks} - known)
    if not lost:
        return []
    names = ", ".join(repr(skl.text(b)) for b in lost[:6])
    return [warning("ani.bone", f"{len(lost)} tracks name bones the skeleton lacks ({names}); "
                    "they animate nothing")]
