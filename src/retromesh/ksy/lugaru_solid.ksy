meta:
  id: lugaru_solid
  title: Lugaru .solid model
  application: Lugaru (Wolfire Games, 2005; open-sourced as osslugaru)
  file-extension: solid
  endian: be
  license: MIT
doc: |
  A Lugaru mesh: big-endian counts, vertex positions and triangles with per-corner texture
  coordinates. No normals are stored: Lugaru computes area-weighted vertex normals.
  Objects are stored counter-clockwise outward; characters and weapons clockwise outward.
  Described by retromesh (src/retromesh/formats/lugaru/solid.py), checked on all 37 shipped models.
doc-ref: https://github.com/osslugaru/lugaru/blob/master/Source/Graphic/Models.cpp
seq:
  - id: vertex_count
    type: s2
    valid:
      min: 0
    doc: Number of vertices (signed, so at most 32767).
  - id: triangle_count
    type: s2
    valid:
      min: 0
  - id: vertices
    type: vec3
    repeat: expr
    repeat-expr: vertex_count
  - id: triangles
    type: triangle
    repeat: expr
    repeat-expr: triangle_count
  - id: trailing
    size-eos: true
    doc: Empty in every shipped model; kept so a file can be written back byte for byte.
types:
  vec3:
    seq:
      - id: x
        type: f4
      - id: y
        type: f4
      - id: z
        type: f4
  triangle:
    doc: |
      Three vertex indices interleaved with three shorts the spec calls unused; in all 16,140
      shipped triangles they are (i1, i2, 0), an edge-list leftover of the exporter.
    seq:
      - id: i0
        type: s2
      - id: u0
        type: s2
        doc: Equals i1 in every shipped model.
      - id: i1
        type: s2
      - id: u1
        type: s2
        doc: Equals i2 in every shipped model.
      - id: i2
        type: s2
      - id: u2
        type: s2
        doc: Zero in every shipped model.
      - id: gx
        type: f4
        repeat: expr
        repeat-expr: 3
        doc: Per-corner texture u (corner k is gx[k], gy[k]).
      - id: gy
        type: f4
        repeat: expr
        repeat-expr: 3
        doc: Per-corner texture v, bottom-up (OpenGL); objects show v = 1 - gy.
