meta:
  id: lostsaga_cms
  title: Lost Saga collision mesh (.cms)
  application: Lost Saga (io3DEngine ioOpcodeManagerImpl)
  file-extension: cms
  endian: le
  license: MIT
doc: |
  Positions and triangle faces for collision. Faces are uint16 (D3D WORD) triples, not floats
  as the spec text says. The engine also accepts a whole .msh under a collision name (starts
  with MSH, see lostsaga_msh); files tagged CMS with version 5700 are hit-box files of another
  layout and are refused.
seq:
  - id: magic
    contents: ["CMS", 0]
  - id: version
    type: s4
    valid: 5000
  - id: vertex_count
    type: s4
    valid:
      min: 0
  - id: positions
    type: vec3
    repeat: expr
    repeat-expr: vertex_count
  - id: face_count
    type: s4
    valid:
      min: 0
  - id: faces
    type: face
    repeat: expr
    repeat-expr: face_count
  - id: trailing
    size-eos: true
types:
  vec3:
    seq:
      - id: x
        type: f4
      - id: y
        type: f4
      - id: z
        type: f4
  face:
    seq:
      - id: indices
        type: u2
        repeat: expr
        repeat-expr: 3
