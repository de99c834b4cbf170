meta:
  id: lostsaga_ani
  title: Lost Saga animation (.ani)
  application: Lost Saga (io3DEngine ioAnimationManager::LoadFileInternal)
  file-extension: ani
  endian: le
  license: MIT
doc: |
  Events, total time and one track of keys per bone. Times are integer milliseconds (event
  times float milliseconds). Key values replace the bone's local pose (absolute, not deltas).
  Versions 4000 (plain quaternions), 4001 (COMP4: a packed 32-bit quaternion) and 4002 (COMP8:
  two 32-bit words); other versions are refused by the engine.
  Facts beyond the spec text (retromesh src/retromesh/formats/lostsaga/ani.py): an event's
  second string is its sub-info (not a name); the packed rotation is an unsigned DWORD; real
  exports hold non-unit quaternions at in-between keys and keys 1 ms past total_time.
seq:
  - id: magic
    contents: ["ANI", 0]
  - id: version
    type: s4
    enum: key_format
    valid:
      any-of: [key_format::default, key_format::comp4, key_format::comp8]
  - id: event_count
    type: s4
    valid:
      min: 0
  - id: events
    type: event
    repeat: expr
    repeat-expr: event_count
  - id: total_time
    type: s4
    doc: Length in milliseconds.
  - id: track_count
    type: s4
    valid:
      min: 0
  - id: tracks
    type: track
    repeat: expr
    repeat-expr: track_count
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
  event:
    seq:
      - id: type
        type: lstr
      - id: info
        type: lstr
      - id: time
        type: f4
        doc: Milliseconds.
  track:
    seq:
      - id: bone
        type: lstr
      - id: weight
        type: f4
        doc: Blend weight, usually 1.
      - id: key_count
        type: s4
        valid:
          min: 0
      - id: keys
        type:
          switch-on: _root.version
          cases:
            key_format::default: key_default
            key_format::comp4: key_comp4
            key_format::comp8: key_comp8
        repeat: expr
        repeat-expr: key_count
  key_default:
    seq:
      - id: rotation
        type: f4
        repeat: expr
        repeat-expr: 4
        doc: x, y, z, w.
      - id: translation
        type: f4
        repeat: expr
        repeat-expr: 3
      - id: time
        type: s4
  key_comp4:
    seq:
      - id: packed
        type: u4
        doc: Quaternion packed in 32 bits (see retromesh formats/lostsaga/quatcodec.py).
      - id: translation
        type: f4
        repeat: expr
        repeat-expr: 3
      - id: time
        type: s4
  key_comp8:
    seq:
      - id: high
        type: u4
      - id: low
        type: u4
      - id: translation
        type: f4
        repeat: expr
        repeat-expr: 3
      - id: time
        type: s4
enums:
  key_format:
    4000: default
    4001: comp4
    4002: comp8
