meta:
  id: lugaru_animation
  title: Lugaru animation (Data/Animations/*)
  application: Lugaru (Wolfire Games, 2005; open-sourced as osslugaru)
  file-extension: []
  endian: be
  license: MIT
doc: |
  A Lugaru animation: for each frame the position, twist and on-ground flag of every joint
  and the frame's speed; then a second twist per joint and frame, a label per frame and
  (in 38 of the 87 shipped files only) an unused weapon target per frame. The files have no
  extension; the game keeps them in Data/Animations/. Described by retromesh
  (src/retromesh/formats/lugaru/animation.py), checked on the 87 shipped animations.
doc-ref: https://github.com/osslugaru/lugaru/blob/master/Source/Animation/Animation.cpp
seq:
  - id: frame_count
    type: s4
    valid:
      min: 0
  - id: joint_count
    type: s4
    valid:
      min: 0
  - id: frames
    type: frame
    repeat: expr
    repeat-expr: frame_count
  - id: twist2
    type: f4
    repeat: expr
    repeat-expr: frame_count * joint_count
    doc: Frame-major, joint-minor.
  - id: label
    type: s4
    repeat: expr
    repeat-expr: frame_count
    doc: Frame event (the engine reads it with funpackf "Bf" into an int, using the bits as stored).
  - id: weapon
    type: weapon_block
    if: _io.size - _io.pos >= 4 + 12 * frame_count
    doc: Unused by the engine; absent from 49 of the 87 shipped files.
  - id: trailing
    size-eos: true
types:
  weapon_block:
    seq:
      - id: weapon_target_count
        type: s4
      - id: weapon_targets
        type: vec3
        repeat: expr
        repeat-expr: _root.frame_count
  vec3:
    seq:
      - id: x
        type: f4
      - id: y
        type: f4
      - id: z
        type: f4
  frame:
    seq:
      - id: positions
        type: vec3
        repeat: expr
        repeat-expr: _root.joint_count
      - id: twist
        type: f4
        repeat: expr
        repeat-expr: _root.joint_count
      - id: onground
        type: u1
        repeat: expr
        repeat-expr: _root.joint_count
      - id: speed
        type: f4
