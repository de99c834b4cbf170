meta:
  id: overgrowth_fzx
  title: Overgrowth ragdoll bounding volumes (.fzx)
  application: Overgrowth (Wolfire Games, fzx_file.cpp)
  file-extension: fzx
  endian: le
  license: MIT
doc: |
  Labelled boxes, capsules and spheres for the ragdoll, each with a rotation, location and
  scale, then a footer repeating the file size. Rotation and location are in Blender's Z-up
  space as the exporter wrote them: the engine builds quaternion(x=r[1], y=r[3], z=-r[2], w=r[0])
  and places the volume at (x, z, -y) minus the model's old centre (retromesh
  src/retromesh/formats/overgrowth/fzx.py; Overgrowth fzx_file.cpp). Labels are tokens such as
  l r m capsule box sphere plus a body part; M adds a mirrored copy.
seq:
  - id: header
    contents: [0xd3, "FZX", 0x0d, 0x0a, 0x20, 0x0a]
  - id: version
    type: s4
    valid: 1
  - id: object_count
    type: s4
    valid:
      min: 0
  - id: objects
    type: volume
    repeat: expr
    repeat-expr: object_count
  - id: file_size
    type: s4
    valid: _io.size - 7
    doc: The file size minus this 7-byte footer.
  - id: footer
    contents: FZX
types:
  volume:
    seq:
      - id: label_length
        type: s4
        valid:
          min: 0
          max: 255
      - id: label
        type: str
        size: label_length
        encoding: ASCII
        doc: No NUL; e.g. "m capsule torso", "l box hand".
      - id: rotation
        type: f4
        repeat: expr
        repeat-expr: 4
        doc: w, x, y, z in Blender's Z-up space.
      - id: location
        type: f4
        repeat: expr
        repeat-expr: 3
      - id: scale
        type: f4
        repeat: expr
        repeat-expr: 3
        doc: Box half-extents (sx, sz, sy); capsule radius scale[0], half-length scale[2]; sphere radius the mean.
