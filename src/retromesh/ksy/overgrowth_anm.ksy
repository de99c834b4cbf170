meta:
  id: overgrowth_anm
  title: Overgrowth animation (.anm)
  application: Overgrowth (Wolfire Games, Phoenix engine, Animation::ReadFromFile)
  file-extension: anm
  endian: le
  license: MIT
doc: |
  Versions 0..11. Keyframes of model-space bone matrices (column-major, OpenGL axes) with
  physics weights, weapon matrices, mobility, events, IK bones and shape/status keys, each
  present from the version noted.
  Corrections to the spec text (retromesh src/retromesh/formats/overgrowth/anm.py; Overgrowth animation.cpp):
  center_offset is a vec3, not one float; `start` exists for versions 1..10 only;
  `centered`, `looping` and `use_mobility` are one byte each (non-zero is true); the IK bones'
  two vec3 are filler the engine reads and drops.
doc-ref: https://github.com/WolfireGames/overgrowth/blob/main/Source/Animation/animation.cpp
seq:
  - id: version
    type: s4
    valid:
      min: 0
      max: 11
  - id: centered
    type: u1
    if: version >= 10
  - id: looping
    type: u1
    if: version >= 1
    doc: Absent before version 1 (then the animation loops).
  - id: start
    type: s4
    if: version >= 1 and version <= 10
    doc: Milliseconds subtracted from the length and the key times.
  - id: length
    type: s4
    doc: Milliseconds.
  - id: keyframe_count
    type: s4
    valid:
      min: 1
    doc: The engine calls 0 or less corrupt.
  - id: keyframes
    type: keyframe
    repeat: expr
    repeat-expr: keyframe_count
  - id: trailing
    size-eos: true
instances:
  is_centered:
    value: 'version >= 10 ? centered != 0 : false'
types:
  label:
    seq:
      - id: len
        type: s4
        valid:
          min: 0
      - id: value
        size: len
  mat4:
    seq:
      - id: m
        type: f4
        repeat: expr
        repeat-expr: 16
  keyframe:
    seq:
      - id: time
        type: s4
        doc: Milliseconds.
      - id: num_weights
        type: s4
        valid:
          min: 0
        if: _root.version >= 4
      - id: weights
        type: f4
        repeat: expr
        repeat-expr: num_weights
        if: _root.version >= 4
        doc: Per-bone physics weights.
      - id: num_bone_mats
        type: s4
        valid:
          min: 0
      - id: bone_mats
        type: mat4
        repeat: expr
        repeat-expr: num_bone_mats
        doc: Column-major model-space bone frames.
      - id: num_weapon_mats
        type: s4
        valid:
          min: 0
        if: _root.version >= 7
      - id: weapon_mats
        type: weapon_mat
        repeat: expr
        repeat-expr: num_weapon_mats
        if: _root.version >= 7
      - id: use_mobility
        type: u1
        if: _root.version >= 9
      - id: mobility
        type: mat4
        if: _root.version >= 9 and use_mobility != 0
        doc: Stored in Blender's Z-up basis; the engine permutes its columns on read.
      - id: num_events
        type: s4
        valid:
          min: 0
        if: _root.version >= 2
      - id: events
        type: event
        repeat: expr
        repeat-expr: num_events
        if: _root.version >= 2
      - id: num_ik_bones
        type: s4
        valid:
          min: 0
        if: _root.version >= 3
      - id: ik_bones
        type: ik_bone
        repeat: expr
        repeat-expr: num_ik_bones
        if: _root.version >= 3
      - id: num_shape_keys
        type: s4
        valid:
          min: 0
        if: _root.version >= 5
      - id: shape_keys
        type: label_weight
        repeat: expr
        repeat-expr: num_shape_keys
        if: _root.version >= 5
      - id: num_status_keys
        type: s4
        valid:
          min: 0
        if: _root.version >= 6
      - id: status_keys
        type: label_weight
        repeat: expr
        repeat-expr: num_status_keys
        if: _root.version >= 6
      - id: rotation
        type: f4
        if: _root.is_centered
      - id: center_offset
        type: f4
        repeat: expr
        repeat-expr: 3
        if: _root.is_centered
  weapon_mat:
    seq:
      - id: matrix
        type: mat4
      - id: relative_id
        type: s4
        if: _root.version >= 8
      - id: relative_weight
        type: f4
        if: _root.version >= 8
  event:
    seq:
      - id: which_bone
        type: s4
      - id: name
        type: label
  ik_bone:
    seq:
      - id: filler
        type: f4
        repeat: expr
        repeat-expr: 6
        doc: Once the IK start and end; read and dropped by the engine.
      - id: path_length
        type: s4
        valid:
          min: 0
      - id: path
        type: s4
        repeat: expr
        repeat-expr: path_length
      - id: label
        type: label
  label_weight:
    seq:
      - id: weight
        type: f4
      - id: label
        type: label
