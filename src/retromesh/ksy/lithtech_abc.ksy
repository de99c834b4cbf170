meta:
  id: lithtech_abc
  title: LithTech model (.abc), versions 6 and 9-13
  application: [LithTech 1.0/1.5 (Shogo, Blood 2), LithTech 2.x Talon (No One Lives Forever)]
  file-extension: abc
  endian: le
  license: MIT
doc: |
  A chain of sections, each `uint16 len; char name[len]; int32 next_offset` (absolute, -1 for the
  last) followed by its body, which runs to the next section. Version 6 (LithTech 1.x) has
  sections of its own (Header with a token string, Geometry, Nodes, Animation, AnimDims,
  TransformInfo); versions 9-13 have Header, Pieces, Nodes, ChildModels, Animation, Sockets and
  AnimBindings. Bytes a section's parser does not use are its `gap`.
  Corrections to the spec text (retromesh src/retromesh/formats/lithtech/abc.py and abc_v6.py;
  haekb's io_scene_abc reader): vertices start with uint16 WeightCount, uint16 SubLODVertexIndex (not a
  uint32 count); weight sets live at the end of the Nodes section; v9 pieces have no LODWeight;
  v9-v11 animations have no interpolation time (the engine uses 200 ms); v13 adds a header
  uint32, a marker before each node's keys and two floats after each key; v13 child-model
  transforms exist with and without two extra floats (see child_models_v13); a Nodes section may
  end after the nodes (no weight-set count). Version 6: the node count is not stored (nodes are
  depth-first until every announced child is read); NumVerts vertices follow (not NormalVerts);
  AnimDims holds one vec3 per animation.
doc-ref: https://github.com/haekb/io_scene_abc
seq:
  - id: sections
    type: 'section(_index, _index == 0 ? -1 : (sections[_index - 1].name == "Nodes" ? _index - 1 : sections[_index - 1].nodes_index), _index == 0 ? -1 : (sections[_index - 1].name == "Header" ? _index - 1 : sections[_index - 1].header_index))'
    repeat: until
    repeat-until: _.next_offset == -1
  - id: trailing
    size-eos: true
instances:
  header_version:
    pos: 12
    type: u4
    doc: The first section is the Header; its first uint32 is the version in 9-13 (a v6 header starts with a string instead).
  is_v6:
    value: header_version > 13 or header_version < 9
types:
  string:
    seq:
      - id: len
        type: u2
      - id: value
        size: len
  vec3:
    seq:
      - id: x
        type: f4
      - id: y
        type: f4
      - id: z
        type: f4
  quat:
    doc: x, y, z, w.
    seq:
      - id: x
        type: f4
      - id: y
        type: f4
      - id: z
        type: f4
      - id: w
        type: f4
  transform:
    params:
      - id: extra
        type: bool
    seq:
      - id: location
        type: vec3
      - id: rotation
        type: quat
      - id: extra_floats
        type: f4
        repeat: expr
        repeat-expr: 2
        if: extra
        doc: Version 13 only; meaning unknown.
  section:
    params:
      - id: idx
        type: s4
      - id: nodes_index_before
        type: s4
      - id: header_index_before
        type: s4
    seq:
      - id: name_len
        type: u2
      - id: name
        type: str
        size: name_len
        encoding: ASCII
      - id: next_offset
        type: s4
        doc: Absolute offset of the next section header; -1 for the last section.
      - id: body
        size: 'next_offset == -1 ? _io.size - _io.pos : next_offset - _io.pos'
        type:
          switch-on: '(_root.is_v6 ? "6:" : "9:") + name'
          cases:
            '"9:Header"': header
            '"9:Pieces"': pieces
            '"9:Nodes"': nodes
            '"9:ChildModels"': child_models
            '"9:Animation"': animations
            '"9:Sockets"': sockets
            '"9:AnimBindings"': anim_bindings
            '"6:Header"': v6_header
            '"6:Geometry"': v6_geometry
            '"6:Nodes"': v6_nodes
            '"6:Animation"': v6_animations
            '"6:AnimDims"': v6_anim_dims
            '"6:TransformInfo"': v6_transform_info
        doc: Unknown sections (e.g. TriStrips) are kept as raw bytes.
    instances:
      nodes_index:
        value: 'name == "Nodes" ? idx : nodes_index_before'
      header_index:
        value: 'name == "Header" ? idx : header_index_before'
  # -- versions 9-13 --------------------------------------------------------------------------
  header:
    seq:
      - id: version
        type: u4
        valid:
          min: 9
          max: 13
      - id: keyframe_count
        type: u4
      - id: animation_count
        type: u4
      - id: node_count
        type: u4
      - id: piece_count
        type: u4
      - id: child_model_count
        type: u4
      - id: face_count
        type: u4
      - id: vertex_count
        type: u4
      - id: weight_count
        type: u4
      - id: lod_count
        type: u4
      - id: socket_count
        type: u4
      - id: weight_set_count
        type: u4
      - id: unknown_v13
        type: u4
        if: version >= 13
      - id: string_count
        type: u4
      - id: string_length_total
        type: u4
      - id: command_string
        type: string
      - id: internal_radius
        type: f4
      - id: lod_distance_count
        type: u4
      - id: padding
        size: 60
      - id: lod_distances
        type: f4
        repeat: expr
        repeat-expr: lod_distance_count
      - id: gap
        size-eos: true
  pieces:
    seq:
      - id: weight_count
        type: u4
      - id: piece_count
        type: u4
      - id: pieces
        type: piece
        repeat: expr
        repeat-expr: piece_count
      - id: gap
        size-eos: true
    instances:
      h:
        value: _root.sections[_parent.header_index_before].body.as<header>
  piece:
    seq:
      - id: material_index
        type: u2
      - id: specular_power
        type: f4
      - id: specular_scale
        type: f4
      - id: lod_weight
        type: f4
        if: _parent.h.version > 9
      - id: unknown
        type: u2
      - id: name
        type: string
      - id: lods
        type: lod
        repeat: expr
        repeat-expr: _parent.h.lod_count
  lod:
    seq:
      - id: face_count
        type: u4
      - id: faces
        type: face
        repeat: expr
        repeat-expr: face_count
      - id: vertex_count
        type: u4
      - id: vertices
        type: vertex
        repeat: expr
        repeat-expr: vertex_count
  face:
    seq:
      - id: corners
        type: corner
        repeat: expr
        repeat-expr: 3
  corner:
    seq:
      - id: u
        type: f4
      - id: v
        type: f4
      - id: vertex
        type: u2
  vertex:
    seq:
      - id: weight_count
        type: u2
      - id: sublod_vertex_index
        type: u2
      - id: weights
        type: weight
        repeat: expr
        repeat-expr: weight_count
      - id: location
        type: vec3
      - id: normal
        type: vec3
  weight:
    seq:
      - id: node
        type: u4
      - id: location
        type: vec3
        doc: The vertex in this node's space.
      - id: bias
        type: f4
  nodes:
    seq:
      - id: nodes
        type: node
        repeat: expr
        repeat-expr: h.node_count
        doc: Depth-first.
      - id: weight_set_count
        type: u4
        if: not _io.eof
      - id: weight_sets
        type: weight_set
        repeat: expr
        repeat-expr: weight_set_count
        if: not _io.eof or weight_set_count == 0
      - id: gap
        size-eos: true
    instances:
      h:
        value: _root.sections[_parent.header_index_before].body.as<header>
  node:
    seq:
      - id: name
        type: string
      - id: index
        type: u2
      - id: flags
        type: u1
      - id: matrix
        type: f4
        repeat: expr
        repeat-expr: 16
        doc: Row-major, translation in m[3], m[7], m[11].
      - id: child_count
        type: u4
  weight_set:
    seq:
      - id: name
        type: string
      - id: count
        type: u4
      - id: weights
        type: f4
        repeat: expr
        repeat-expr: count
  child_models:
    seq:
      - id: count
        type: u2
      - id: child_models
        type: child_model(false)
        repeat: expr
        repeat-expr: count
        if: h.version < 13
      - id: child_models_v13
        size-eos: true
        if: h.version >= 13
        doc: Version 13 transforms exist with and without two extra floats; see layout_plain and layout_extra (the one that fills the section is right).
      - id: gap
        size-eos: true
    instances:
      h:
        value: _root.sections[_parent.header_index_before].body.as<header>
      layout_plain:
        pos: 2
        type: child_model(false)
        repeat: expr
        repeat-expr: count
        if: h.version >= 13
      layout_extra:
        pos: 2
        type: child_model(true)
        repeat: expr
        repeat-expr: count
        if: h.version >= 13
  child_model:
    params:
      - id: extra
        type: bool
    seq:
      - id: name
        type: string
      - id: build_number
        type: u4
      - id: transforms
        type: transform(extra)
        repeat: expr
        repeat-expr: _root.sections[_parent._parent.header_index_before].body.as<header>.node_count
  animations:
    seq:
      - id: count
        type: u4
      - id: animations
        type: animation
        repeat: expr
        repeat-expr: count
      - id: gap
        size-eos: true
    instances:
      h:
        value: _root.sections[_parent.header_index_before].body.as<header>
  animation:
    seq:
      - id: extents
        type: vec3
      - id: name
        type: string
      - id: unknown
        type: s4
      - id: interpolation_ms
        type: u4
        if: _parent.h.version >= 12
      - id: key_count
        type: u4
      - id: keys
        type: key
        repeat: expr
        repeat-expr: key_count
      - id: tracks
        type: track
        repeat: expr
        repeat-expr: _parent.h.node_count
        doc: One per node, each with key_count transforms.
  key:
    seq:
      - id: time_ms
        type: u4
      - id: string
        type: string
  track:
    seq:
      - id: marker
        type: s4
        if: _parent._parent.h.version >= 13
        doc: Usually -1.
      - id: transforms
        type: transform(_parent._parent.h.version >= 13)
        repeat: expr
        repeat-expr: _parent.key_count
  sockets:
    seq:
      - id: count
        type: u4
      - id: sockets
        type: socket
        repeat: expr
        repeat-expr: count
      - id: gap
        size-eos: true
  socket:
    seq:
      - id: node
        type: u4
      - id: name
        type: string
      - id: rotation
        type: quat
      - id: location
        type: vec3
  anim_bindings:
    seq:
      - id: count
        type: u4
      - id: bindings
        type: anim_binding
        repeat: expr
        repeat-expr: count
      - id: gap
        size-eos: true
  anim_binding:
    seq:
      - id: name
        type: string
      - id: extents
        type: vec3
      - id: origin
        type: vec3
  # -- version 6 ------------------------------------------------------------------------------
  v6_header:
    seq:
      - id: token
        type: string
        doc: '"MonolithExport Model File v6".'
      - id: command_string
        type: string
      - id: gap
        size-eos: true
  v6_geometry:
    seq:
      - id: bounds_min
        type: vec3
      - id: bounds_max
        type: vec3
      - id: lod_count
        type: u4
      - id: vertex_start
        type: u2
        repeat: expr
        repeat-expr: lod_count + 1
      - id: triangle_count
        type: u4
      - id: triangles
        type: v6_triangle
        repeat: expr
        repeat-expr: triangle_count
      - id: vertex_count
        type: u4
      - id: normal_vertex_count
        type: u4
      - id: vertices
        type: v6_vertex
        repeat: expr
        repeat-expr: vertex_count
        doc: All NumVerts vertices (LOD vertices included), not only NormalVerts.
      - id: gap
        size-eos: true
  v6_triangle:
    seq:
      - id: uv
        type: f4
        repeat: expr
        repeat-expr: 6
      - id: vertex
        type: u2
        repeat: expr
        repeat-expr: 3
      - id: face_normal
        type: s1
        repeat: expr
        repeat-expr: 3
  v6_vertex:
    seq:
      - id: location
        type: vec3
        doc: In its node's space.
      - id: normal
        type: s1
        repeat: expr
        repeat-expr: 3
      - id: node
        type: u1
        doc: Index into the depth-first node list.
      - id: replacements
        type: u2
        repeat: expr
        repeat-expr: 2
  v6_nodes:
    seq:
      - id: nodes
        type: 'v6_node(_index == 0 ? 1 : nodes[_index - 1].left_after)'
        repeat: until
        repeat-until: _.left_after == 0
        doc: Depth-first until every announced child has been read.
      - id: gap
        size-eos: true
  v6_node:
    params:
      - id: left_before
        type: u4
    seq:
      - id: bounds_min
        type: vec3
      - id: bounds_max
        type: vec3
      - id: name
        type: string
      - id: transformation_index
        type: u2
      - id: flags
        type: u1
        doc: 1 null, 2 has triangles, 4 deformation, 8 and up environment map/scroll.
      - id: md_vert_count
        type: u4
      - id: md_verts
        type: u2
        repeat: expr
        repeat-expr: md_vert_count
      - id: child_count
        type: u4
    instances:
      left_after:
        value: left_before + child_count - 1
  v6_animations:
    seq:
      - id: count
        type: u4
      - id: animations
        type: v6_animation
        repeat: expr
        repeat-expr: count
      - id: gap
        size-eos: true
    instances:
      node_list:
        value: _root.sections[_parent.nodes_index_before].body.as<v6_nodes>.nodes
  v6_animation:
    seq:
      - id: name
        type: string
      - id: length
        type: u4
      - id: bounds_min
        type: vec3
      - id: bounds_max
        type: vec3
      - id: key_count
        type: u4
      - id: keys
        type: v6_key
        repeat: expr
        repeat-expr: key_count
      - id: tracks
        type: v6_track(_parent.node_list[_index].md_vert_count)
        repeat: expr
        repeat-expr: _parent.node_list.size
  v6_key:
    seq:
      - id: time
        type: u4
      - id: bounds_min
        type: vec3
      - id: bounds_max
        type: vec3
      - id: string
        type: string
  v6_track:
    params:
      - id: md_vert_count
        type: u4
    seq:
      - id: transforms
        type: transform(false)
        repeat: expr
        repeat-expr: _parent.key_count
      - id: deform
        size: _parent.key_count * md_vert_count * 3
        doc: uint8 position[keys][md verts][3]; a vertex is byte * scale + transform in its node's space.
      - id: scale
        type: vec3
      - id: transform
        type: vec3
  v6_anim_dims:
    seq:
      - id: dims
        type: vec3
        repeat: expr
        repeat-expr: _io.size / 12
        doc: One per animation.
      - id: gap
        size-eos: true
  v6_transform_info:
    seq:
      - id: flip_mat
        type: s4
      - id: fix_anim_keyframes
        type: s4
      - id: gap
        size-eos: true
