meta:
  id: lostsaga_msh
  title: Lost Saga mesh (.msh)
  application: Lost Saga (io3DEngine ioMeshManager::LoadFileInternal)
  file-extension: msh
  endian: le
  license: MIT
doc: |
  One vertex mask says which per-vertex arrays follow, in a fixed order: positions, normals,
  tangents, binormals, colours, UV0, UV1, then the weights block (bone names + 4 weights and 4
  bone ids per vertex), billboard centres, faces, and control points in version 2002.
  Corrections to the spec text (retromesh src/retromesh/formats/lostsaga/msh.py): there is ONE
  32-bit vertex mask; the arrays come in the order above, not the spec's listing order; face
  indices are uint16 triples (not floats) and index_start counts indices; colours are D3DCOLOR
  0xAARRGGBB; the INDICES bit has no data of its own; bone ids are floats holding integers.
seq:
  - id: magic
    contents: ["MSH", 0]
  - id: version
    type: s4
    doc: 2000, 2001 (vertex colour mesh, same layout) or 2002 (adds control points).
  - id: mesh_type
    type: s4
    enum: mesh_type
  - id: vertex_mask
    type: u4
    doc: IOFVF bits; 0x1 position, 0x2 billboard centre, 0x8 weights, 0x10 indices (no data), 0x20 normal, 0x40 colour, 0x100 UV0, 0x200 UV1, 0x1000 tangent, 0x2000 binormal.
  - id: bbox_min
    type: f4
    repeat: expr
    repeat-expr: 3
  - id: bbox_max
    type: f4
    repeat: expr
    repeat-expr: 3
  - id: radius
    type: f4
    doc: Half the box diagonal in real files.
  - id: submesh_count
    type: s4
    valid:
      min: 0
  - id: submeshes
    type: submesh
    repeat: expr
    repeat-expr: submesh_count
  - id: vertex_count
    type: s4
    valid:
      min: 0
  - id: positions
    type: vec3
    repeat: expr
    repeat-expr: vertex_count
    if: vertex_mask & 0x0001 != 0
  - id: normals
    type: vec3
    repeat: expr
    repeat-expr: vertex_count
    if: vertex_mask & 0x0020 != 0
  - id: tangents
    type: vec3
    repeat: expr
    repeat-expr: vertex_count
    if: vertex_mask & 0x1000 != 0
  - id: binormals
    type: vec3
    repeat: expr
    repeat-expr: vertex_count
    if: vertex_mask & 0x2000 != 0
  - id: colors
    type: u4
    repeat: expr
    repeat-expr: vertex_count
    if: vertex_mask & 0x0040 != 0
    doc: D3DCOLOR 0xAARRGGBB (bytes B, G, R, A).
  - id: uv0
    type: vec2
    repeat: expr
    repeat-expr: vertex_count
    if: vertex_mask & 0x0100 != 0
    doc: TEXCOORD0; the lightmap UV in lightmap meshes (type 2).
  - id: uv1
    type: vec2
    repeat: expr
    repeat-expr: vertex_count
    if: vertex_mask & 0x0200 != 0
  - id: bone_name_count
    type: s4
    valid:
      min: 0
    if: vertex_mask & 0x0008 != 0
  - id: bone_names
    type: lstr
    repeat: expr
    repeat-expr: bone_name_count
    if: vertex_mask & 0x0008 != 0
    doc: Empty names are skipped by the engine when it builds its list (ids count without them).
  - id: weights
    type: vertex_weights
    repeat: expr
    repeat-expr: vertex_count
    if: vertex_mask & 0x0008 != 0
  - id: billboard_centers
    type: vec3
    repeat: expr
    repeat-expr: vertex_count
    if: vertex_mask & 0x0002 != 0
  - id: face_count
    type: s4
    valid:
      min: 0
  - id: faces
    type: face
    repeat: expr
    repeat-expr: face_count
  - id: control_point_count
    type: s4
    if: version == 2002
  - id: control_points
    type: control_point
    repeat: expr
    repeat-expr: control_point_count
    if: version == 2002
  - id: trailing
    size-eos: true
types:
  lstr:
    seq:
      - id: len
        type: s4
        valid:
          min: 0
      - id: value
        size: len
  vec2:
    seq:
      - id: u
        type: f4
      - id: v
        type: f4
  vec3:
    seq:
      - id: x
        type: f4
      - id: y
        type: f4
      - id: z
        type: f4
  submesh:
    seq:
      - id: min_index
        type: s4
        doc: The submesh's first vertex.
      - id: vertex_count
        type: s4
      - id: index_start
        type: s4
        doc: Counts indices (3 per face).
      - id: face_count
        type: s4
  vertex_weights:
    seq:
      - id: weight
        type: f4
        repeat: expr
        repeat-expr: 4
        doc: The engine stops at the first weight <= 0.
      - id: bone
        type: f4
        repeat: expr
        repeat-expr: 4
        doc: Bone ids stored as floats holding integers (< 256).
  face:
    seq:
      - id: indices
        type: u2
        repeat: expr
        repeat-expr: 3
        doc: Absolute into the shared vertex array.
  control_point:
    seq:
      - id: type
        type: lstr
      - id: bone
        type: lstr
      - id: extra
        type: lstr
      - id: point
        type: f4
        repeat: expr
        repeat-expr: 3
enums:
  mesh_type:
    0: static
    1: animation
    2: lightmap
