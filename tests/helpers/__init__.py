"""Modules the tests share (imported as ``helpers.<name>``; ``tests/`` is on ``sys.path``):

* :mod:`.gltfcheck` -- the Khronos glTF-Validator on written files;
* :mod:`.malformed` -- damaged copies of a file (truncations, huge counts, byte flips) that may
  only raise ``FormatError``;
* :mod:`.roundtrip` -- the native and glTF round trips, deep equality of documents;
* :mod:`.b3dbuild` -- B3D chunk builders; :mod:`.make_examples_import` -- the example builders;
* :mod:`.blender_run`, :mod:`.blendersim` -- Blender in its own venv, and what its glTF
  importer/exporter does, imitated;
* :mod:`.irrlicht` -- Irrlicht's view of a B3D; :mod:`.ksycheck` -- the Kaitai descriptions;
* :mod:`.native_counts` -- the counts a round trip must keep.
"""
