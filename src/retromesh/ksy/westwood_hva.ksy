meta:
  id: westwood_hva
  title: Westwood hierarchical voxel animation (.hva)
  application: [Command & Conquer Tiberian Sun, Red Alert 2]
  file-extension: hva
  endian: le
  license: MIT
doc: |
  One 3x4 row-major [R | t] matrix per section per frame, frame-major. Sections are matched to
  the .vxl's limbs by name in most files, but names can repeat, be empty or differ completely
  (then by order); see retromesh src/retromesh/formats/westwood/hva.py (37 real files checked).
seq:
  - id: name
    size: 16
    doc: Often a path fragment of the tool that wrote it; bytes after the NUL are garbage, kept raw.
  - id: frames
    type: u4
  - id: sections
    type: u4
  - id: section_names
    size: 16
    repeat: expr
    repeat-expr: sections
  - id: frame_list
    type: frame
    repeat: expr
    repeat-expr: frames
  - id: trailing
    size-eos: true
    doc: None in real files.
types:
  frame:
    seq:
      - id: matrices
        type: matrix3x4
        repeat: expr
        repeat-expr: _root.sections
  matrix3x4:
    doc: Row-major rows of [R | t]; rotations are orthonormal except in rare files (a uniform scale).
    seq:
      - id: m
        type: f4
        repeat: expr
        repeat-expr: 12
