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
from ...registry import register
from . import ani, cms, material, msh, quatcodec, scene as _scene, skl
from .ani import AniEvent, AniFile, AniTrack
from .cms import CmsFile
from .manifest import ANI, CMS, LSMAT, MSH, SKL
from .material import MaterialScript
from .msh import ControlPoint, MshFile
from .skl import SklBone, SklFile

__all__ = ["MshFile", "ControlPoint", "SklFile", "SklBone", "AniFile", "AniTrack", "AniEvent",
           "CmsFile", "MaterialScript", "msh", "skl", "ani", "cms", "material", "quatcodec"]

register(MSH, doc_types=(MshFile,), sniff=msh.sniff, read=msh.read, write=msh.write,
         to_scene=_scene.msh_to_scene, from_scene=_scene.msh_from_scene, info=msh.info,
         check=msh.check)
register(SKL, doc_types=(SklFile,), sniff=skl.sniff, read=skl.read, write=skl.write,
         to_scene=_scene.skl_to_scene, from_scene=_scene.skl_from_scene, info=skl.info,
         check=skl.check)
register(ANI, doc_types=(AniFile,), sniff=ani.sniff, read=ani.read, write=ani.write,
         to_scene=_scene.ani_to_scene, from_scene=_scene.ani_from_scene, info=ani.info,
         check=ani.check)
register(CMS, doc_types=(CmsFile,), sniff=cms.sniff, read=cms.read, write=cms.write,
         to_scene=_scene.cms_to_scene, from_scene=_scene.cms_from_scene, info=cms.info,
         check=cms.check)
register(LSMAT, doc_types=(MaterialScript,), read=material.read, write=material.write,
         info=material.info)


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
