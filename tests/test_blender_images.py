"""What the Blender extension does to images and textures on the way back (issue 32), without
Blender: an unedited texture Blender saved again comes back as the file read; a texture index
that Blender shifted does not make a file the model never had."""
from __future__ import annotations

import io
import warnings

import numpy as np
from PIL import Image

import retromesh
from helpers.b3dbuild import quad_mesh
from retromesh.blender.bridge import images_as_read
from retromesh.formats.b3d import B3dFile, Brus, BrushEntry, NodeChunk, Texs, TextureEntry


def _png(pixels: np.ndarray, **save) -> bytes:
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, "PNG", **save)
    return out.getvalue()


def test_an_unedited_image_saved_again_comes_back_as_read(tmp_path):
    pixels = np.zeros((4, 4, 4), np.uint8)
    pixels[..., 0], pixels[..., 3] = 200, 255
    src = tmp_path / "mod" / "textures"
    src.mkdir(parents=True)
    (src / "skin.png").write_bytes(_png(pixels, compress_level=9))
    (src / "other.png").write_bytes(_png(pixels, compress_level=9))
    out = tmp_path / "out"
    out.mkdir()
    (out / "skin.png").write_bytes(_png(pixels, compress_level=0))      # Blender's own encoding
    edited = pixels.copy()
    edited[0, 0, 1] = 1
    (out / "other.png").write_bytes(_png(edited, compress_level=0))
    (out / "new.png").write_bytes(_png(pixels, compress_level=0))       # no file of that name
    put = images_as_read([out / "skin.png", out / "other.png", out / "new.png"],
                         tmp_path / "mod" / "models")
    assert put == [out / "skin.png"]
    assert (out / "skin.png").read_bytes() == (src / "skin.png").read_bytes()
    assert (out / "other.png").read_bytes() != (src / "other.png").read_bytes()


def test_a_shifted_texture_index_writes_no_file_the_model_never_had(tmp_path):
    """Blender leaves out a texture whose image was never found; the brush record's index then
    names the next texture, which must not be written under the missing file's name."""
    doc = B3dFile(1, [Texs([TextureEntry(b"missing_map.png", 1, 2)]),
                      Brus(1, [BrushEntry(b"skin", (1, 1, 1, 1), 0.0, 1, 0, [0])]),
                      NodeChunk(b"body", children=[quad_mesh()])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scene = retromesh.load(retromesh.to_bytes(doc), format="b3d")
    tex = scene.textures[0]
    tex.name, tex.uri, tex.image, tex.mime_type = "mod_skin", None, _png(
        np.full((2, 2, 4), 255, np.uint8)), "image/png"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        written = retromesh.save(scene, tmp_path / "back.b3d")
    assert [p.name for p in written] == ["back.b3d"]
    tex.name = "missing_map"                   # the texture it was: its image is written
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        written = retromesh.save(scene, tmp_path / "again.b3d")
    assert sorted(p.name for p in written) == ["again.b3d", "missing_map.png"]
