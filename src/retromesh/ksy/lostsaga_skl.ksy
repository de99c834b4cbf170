meta:
  id: lostsaga_skl
  title: Lost Saga skeleton (.skl)
  application: Lost Saga (io3DEngine ioSkeletonManager::LoadFile)
  file-extension: skl
  endian: le
  license: MIT
doc: |
  Bones with their rest pose, inverse bind and bind world matrix, parent and child names.
  Facts beyond the spec text (retromesh src/retromesh/formats/lostsaga/skl.py): the
  "ObjectTM inverse" pair is the inverse bind matrix; the 16-float ObjectTM is the bind world
  matrix (D3DX rows); a file may end right after the last bone (no linked-skeleton string).
seq:
  - id: magic
    contents: ["SKL", 0]
  - id: version
    type: s4
    doc: 1000; not checked by the engine.
  - id: bone_count
    type: s4
    valid:
      min: 0
  - id: bones
    type: bone
    repeat: expr
    repeat-expr: bone_count
  - id: linked_skeleton
    type: lstr
    if: not _io.eof
    doc: Empty for none; absent in files that end after the last bone.
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
  bone:
    seq:
      - id: name
        type: lstr
      - id: local_position
        type: f4
        repeat: expr
        repeat-expr: 3
        doc: Rest position relative to the parent (D3D left-handed).
      - id: local_rotation
        type: f4
        repeat: expr
        repeat-expr: 4
        doc: Rest rotation x, y, z, w.
      - id: inverse_position
        type: f4
        repeat: expr
        repeat-expr: 3
        doc: Inverse bind translation ("ObjectTM inverse").
      - id: inverse_rotation
        type: f4
        repeat: expr
        repeat-expr: 4
      - id: object_tm
        type: f4
        repeat: expr
        repeat-expr: 16
        doc: Bind world matrix, D3DX row-vector form; only used for linked-skeleton offsets.
      - id: parent
        type: lstr
        doc: Empty for the root.
      - id: child_count
        type: s4
        valid:
          min: 0
      - id: children
        type: lstr
        repeat: expr
        repeat-expr: child_count
