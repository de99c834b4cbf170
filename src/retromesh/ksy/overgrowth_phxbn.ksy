meta:
  id: overgrowth_phxbn
  title: Overgrowth skeleton (.phxbn)
  application: Overgrowth (Wolfire Games, Phoenix engine, SkeletonAsset)
  file-extension: phxbn
  endian: le
  license: MIT
doc: |
  Versions 5..11. Points, bones between two points, masses, centres of mass, bone matrices,
  and for rigging stage 1 or 2 the control joints (per-vertex weights and bone ids, the
  animation hierarchy and ragdoll joints), then simple IK bones from version 10.
  Corrections to the spec text (retromesh src/retromesh/formats/overgrowth/phxbn.py; Overgrowth
  skeletonasset.cpp): bone_mats take 64 bytes per bone, not 144; version 5 files have no version field (a first
  int32 below 6 is the rigging stage); joint types other than hinge and amotor carry only the two
  bone ids. Below version 11 the control joints' vertex count is not stored (the engine takes it
  from the .obj): that part is described here as opaque bytes (`control_and_ik_unsized`);
  retromesh infers the count from the bytes.
seq:
  - id: first
    type: s4
    valid:
      max: 11
    doc: The version (6..11), or for version 5 files the rigging stage.
  - id: stage_field
    type: s4
    if: first >= 6
  - id: point_count
    type: s4
    valid:
      min: 0
  - id: points
    type: vec3
    repeat: expr
    repeat-expr: point_count
  - id: point_parents
    type: s4
    repeat: expr
    repeat-expr: point_count
    if: version >= 8
  - id: bone_count
    type: s4
    valid:
      min: 0
  - id: bone_ends
    type: bone_end
    repeat: expr
    repeat-expr: bone_count
  - id: bone_parents
    type: s4
    repeat: expr
    repeat-expr: bone_count
    if: version >= 8
  - id: bone_masses
    type: f4
    repeat: expr
    repeat-expr: bone_count
    if: version >= 6
  - id: bone_com
    type: vec3
    repeat: expr
    repeat-expr: bone_count
    if: version >= 7
    doc: Centres of mass (the bone midpoints when absent).
  - id: bone_mats
    type: mat4
    repeat: expr
    repeat-expr: bone_count
    if: version >= 9
    doc: 64 bytes each; ignored by the engine.
  - id: control
    type: control_joints
    if: version >= 11 and (rigging_stage == 1 or rigging_stage == 2)
  - id: simple_ik_count
    type: s4
    valid:
      min: 0
    if: version >= 11
  - id: simple_ik_bones
    type: simple_ik
    repeat: expr
    repeat-expr: simple_ik_count
    if: version >= 11
  - id: control_and_ik_unsized
    size-eos: true
    if: version < 11
    doc: Below version 11, control joints (when rigging_stage is 1 or 2) and simple IK bones (version 10) whose vertex count only the .obj knows.
  - id: trailing
    size-eos: true
    if: version >= 11
instances:
  version:
    value: 'first >= 6 ? first : 5'
  rigging_stage:
    value: 'first >= 6 ? stage_field : first'
    doc: -1 nothing, 0 create_bones, 1 control_joints, 2 animate (read like 1), 3 pose_weights.
types:
  vec3:
    seq:
      - id: x
        type: f4
      - id: y
        type: f4
      - id: z
        type: f4
  mat4:
    seq:
      - id: m
        type: f4
        repeat: expr
        repeat-expr: 16
  bone_end:
    seq:
      - id: points
        type: s4
        repeat: expr
        repeat-expr: 2
  control_joints:
    seq:
      - id: num_vertices
        type: s4
        valid:
          min: 0
        doc: 3 x the .obj's triangles.
      - id: weights
        type: f4
        repeat: expr
        repeat-expr: num_vertices * 4
      - id: bone_ids
        type: f4
        repeat: expr
        repeat-expr: num_vertices * 4
        doc: Integers stored as floats.
      - id: hier_parents
        type: s4
        repeat: expr
        repeat-expr: _root.bone_count
        doc: The hierarchy used for animation.
      - id: joint_count
        type: s4
        valid:
          min: 0
      - id: joints
        type: joint
        repeat: expr
        repeat-expr: joint_count
  joint:
    seq:
      - id: type
        type: s4
        enum: joint_type
      - id: stop_angles
        type: f4
        repeat: expr
        repeat-expr: 'type == joint_type::amotor ? 6 : 2'
        if: type == joint_type::hinge or type == joint_type::amotor
      - id: bone_ids
        type: s4
        repeat: expr
        repeat-expr: 2
      - id: axis
        type: vec3
        if: type == joint_type::hinge
  simple_ik:
    seq:
      - id: bone_id
        type: s4
      - id: chain_length
        type: s4
      - id: name_length
        type: s4
        valid:
          min: 0
      - id: name
        size: name_length
enums:
  joint_type:
    0: hinge
    1: amotor
    2: fixed
