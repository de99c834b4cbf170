meta:
  id: blitz3d_b3d
  title: Blitz3D .b3d model
  application: [Blitz3D, Irrlicht, Minetest/Luanti, assimp]
  file-extension: b3d
  endian: le
  license: MIT
doc: |
  A tree of chunks: each is a 4-character tag, an int32 length and that many bytes; a chunk's
  fixed data comes first, then child chunks until its end. BB3D holds TEXS, BRUS and the root
  NODE; a NODE holds MESH or BONE, KEYS, child NODEs and ANIM.
  Facts beyond the spec text (retromesh src/retromesh/formats/b3d, checked on 25 real files):
  quaternions are stored w, x, y, z; BONE vertex ids refer to the most recent MESH before the
  BONE chunk in file order (Irrlicht's rule); several TRIS per MESH and several KEYS per NODE are
  normal; key frames usually start at 1; a few bytes too short to form a chunk at the end of a
  parent are ignored by the engines (kept here as `tail`); ANIM fps 0 means the engine default.
doc-ref: https://github.com/blitz-research/blitz3d (b3dfile.cpp, loader_b3d.cpp)
seq:
  - id: root
    type: chunk
  - id: trailing
    size-eos: true
    doc: Bytes after the BB3D chunk (none in real files).
types:
  chunk:
    seq:
      - id: tag
        type: str
        size: 4
        encoding: ASCII
      - id: length
        type: s4
        valid:
          min: 0
      - id: body
        size: length
        type:
          switch-on: tag
          cases:
            '"BB3D"': bb3d
            '"TEXS"': texs
            '"BRUS"': brus
            '"NODE"': node
            '"MESH"': mesh
            '"VRTS"': vrts
            '"TRIS"': tris
            '"BONE"': bone
            '"KEYS"': keys
            '"ANIM"': anim
  children:
    doc: Child chunks until the end of the parent; fewer than 8 bytes left form the tail.
    seq:
      - id: items
        type: child
        repeat: eos
  child:
    seq:
      - id: chunk
        type: chunk
        if: _io.size - _io.pos >= 8
      - id: tail
        size-eos: true
        if: _io.size - _io.pos < 8
  bb3d:
    seq:
      - id: version
        type: s4
        doc: 1 in every file; Blitz3D refuses newer versions, Irrlicht ignores the field.
      - id: children
        type: children
  texs:
    seq:
      - id: textures
        type: texture
        repeat: eos
  texture:
    seq:
      - id: file
        type: strz
        encoding: UTF-8
      - id: flags
        type: s4
        doc: Blitz3D texture flags (1 colour, 2 alpha, 4 masked, 8 mipmapped, 16 clamp u, 32 clamp v, 64 sphere map...).
      - id: blend
        type: s4
        doc: Blend mode with the layer below (2 multiply is the default).
      - id: position
        type: f4
        repeat: expr
        repeat-expr: 2
      - id: scale
        type: f4
        repeat: expr
        repeat-expr: 2
      - id: rotation
        type: f4
  brus:
    seq:
      - id: n_texs
        type: s4
        valid:
          min: 0
          max: 8
      - id: brushes
        type: brush(n_texs)
        repeat: eos
  brush:
    params:
      - id: n_texs
        type: s4
    seq:
      - id: name
        type: strz
        encoding: UTF-8
      - id: rgba
        type: f4
        repeat: expr
        repeat-expr: 4
        doc: Colour; values above 1 occur and are kept.
      - id: shininess
        type: f4
      - id: blend
        type: s4
      - id: fx
        type: s4
        doc: 1 full-bright, 2 vertex colours, 4 flat shaded, 8 no fog, 16 two-sided, 32 vertex alpha.
      - id: texture_id
        type: s4
        repeat: expr
        repeat-expr: n_texs
        doc: Index into TEXS per texture layer, -1 for none; layer 2 of a lightmapped brush is the lightmap.
  node:
    seq:
      - id: name
        type: strz
        encoding: UTF-8
      - id: position
        type: f4
        repeat: expr
        repeat-expr: 3
      - id: scale
        type: f4
        repeat: expr
        repeat-expr: 3
      - id: rotation
        type: f4
        repeat: expr
        repeat-expr: 4
        doc: Quaternion w, x, y, z (Blitz3D's left-handed axes).
      - id: children
        type: children
  mesh:
    seq:
      - id: brush_id
        type: s4
        doc: -1 for none.
      - id: children
        type: children
  vrts:
    seq:
      - id: flags
        type: s4
        doc: 1 normals present, 2 colours present.
      - id: tex_coord_sets
        type: s4
        valid:
          min: 0
          max: 8
      - id: tex_coord_set_size
        type: s4
        valid:
          min: 0
          max: 4
      - id: vertices
        type: vertex
        repeat: eos
  vertex:
    seq:
      - id: position
        type: f4
        repeat: expr
        repeat-expr: 3
      - id: normal
        type: f4
        repeat: expr
        repeat-expr: 3
        if: _parent.flags & 1 != 0
      - id: color
        type: f4
        repeat: expr
        repeat-expr: 4
        if: _parent.flags & 2 != 0
      - id: tex_coords
        type: f4
        repeat: expr
        repeat-expr: _parent.tex_coord_sets * _parent.tex_coord_set_size
  tris:
    seq:
      - id: brush_id
        type: s4
      - id: triangles
        type: triangle
        repeat: eos
  triangle:
    seq:
      - id: vertex_id
        type: s4
        repeat: expr
        repeat-expr: 3
  bone:
    seq:
      - id: weights
        type: weight
        repeat: eos
        doc: A BONE of 8 bytes or less (one entry) is ignored by Irrlicht; all-zero weights are normalised by Blitz3D.
  weight:
    seq:
      - id: vertex_id
        type: s4
      - id: weight
        type: f4
  keys:
    seq:
      - id: flags
        type: s4
        doc: 1 position, 2 scale, 4 rotation.
      - id: keys
        type: key
        repeat: eos
  key:
    seq:
      - id: frame
        type: s4
      - id: position
        type: f4
        repeat: expr
        repeat-expr: 3
        if: _parent.flags & 1 != 0
      - id: scale
        type: f4
        repeat: expr
        repeat-expr: 3
        if: _parent.flags & 2 != 0
      - id: rotation
        type: f4
        repeat: expr
        repeat-expr: 4
        if: _parent.flags & 4 != 0
  anim:
    seq:
      - id: flags
        type: s4
      - id: frames
        type: s4
      - id: fps
        type: f4
        doc: 0 in many Blitz3D samples; Irrlicht then plays at its default speed.
