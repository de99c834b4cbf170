meta:
  id: lugaru_skeleton
  title: Lugaru skeleton (Data/Skeleton/*)
  application: Lugaru (Wolfire Games, 2005; open-sourced as osslugaru)
  file-extension: []
  endian: be
  license: MIT
doc: |
  A Lugaru skeleton: joints, then muscles that join two joints and own vertices of the body
  model, then the joints of the chest and hip triangles. The files have no extension; the
  game keeps them in Data/Skeleton/ (BasicFigure, BasicFigureLow, BasicFigureWolf, RabbitBelt).
  Booleans are one byte each. Described by retromesh
  (src/retromesh/formats/lugaru/skeleton.py), checked on the 4 shipped skeletons.
doc-ref: https://github.com/osslugaru/lugaru/blob/master/Source/Animation/Skeleton.cpp
seq:
  - id: joint_count
    type: s4
    valid:
      min: 0
  - id: joints
    type: joint
    repeat: expr
    repeat-expr: joint_count
  - id: muscle_count
    type: s4
    valid:
      min: 0
  - id: muscles
    type: muscle
    repeat: expr
    repeat-expr: muscle_count
  - id: forward_joints
    type: s4
    repeat: expr
    repeat-expr: 3
    doc: Three joints whose triangle gives the upper body's forward direction.
  - id: low_forward_joints
    type: s4
    repeat: expr
    repeat-expr: 3
    doc: Three joints whose triangle gives the lower body's forward direction.
  - id: trailing
    size-eos: true
    doc: Empty in every shipped skeleton.
types:
  joint:
    seq:
      - id: position
        type: f4
        repeat: expr
        repeat-expr: 3
      - id: length
        type: f4
      - id: mass
        type: f4
      - id: hasparent
        type: u1
      - id: locked
        type: u1
      - id: modelnum
        type: s4
      - id: visible
        type: u1
      - id: sametwist
        type: u1
      - id: label
        type: s4
        doc: Body part (0 head, 1 neck, 2 leftshoulder ... 19 rightfoot).
      - id: hasgun
        type: s4
      - id: lower
        type: u1
      - id: parent
        type: s4
        doc: Parent joint index, used when hasparent is set.
  muscle:
    seq:
      - id: length
        type: f4
      - id: targetlength
        type: f4
      - id: minlength
        type: f4
      - id: maxlength
        type: f4
      - id: strength
        type: f4
      - id: type
        type: s4
        doc: 0 boneconnect, 1 constraint, 2 muscle.
      - id: vertex_count
        type: s4
        valid:
          min: 0
      - id: vertices
        type: s4
        repeat: expr
        repeat-expr: vertex_count
        doc: Body model vertices this muscle owns (the last muscle listing a vertex wins).
      - id: visible
        type: u1
      - id: parent1
        type: s4
      - id: parent2
        type: s4
