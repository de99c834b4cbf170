meta:
  id: overgrowth_sav
  title: Overgrowth save file (.sav)
  application: Overgrowth (Wolfire Games, Source/Game/savefile.cpp)
  file-extension: sav
  endian: le
  license: MIT
doc: |
  Per level: names, an MD5, and string, string-array and int32 values that scripts stored.
  Version 3 is the engine's; versions 1 and 2 (the wiki template's layout, which the engine now
  refuses) have one name per level and string pairs only (retromesh
  src/retromesh/formats/overgrowth/sav.py; Overgrowth savefile.cpp). Strings are not always UTF-8.
seq:
  - id: marker
    contents: Overgrowth Save
  - id: version
    type: u2
    valid:
      min: 1
      max: 3
  - id: level_count
    type: u2
  - id: levels
    type:
      switch-on: version
      cases:
        3: level
        _: legacy_level
    repeat: expr
    repeat-expr: level_count
  - id: trailing
    size-eos: true
types:
  str16:
    seq:
      - id: len
        type: u2
      - id: value
        size: len
  pair:
    seq:
      - id: key
        type: str16
      - id: value
        type: str16
  legacy_level:
    seq:
      - id: name
        type: str16
      - id: md5
        size: 16
      - id: pair_count
        type: u2
      - id: pairs
        type: pair
        repeat: expr
        repeat-expr: pair_count
  level:
    seq:
      - id: campaign_id
        type: str16
      - id: save_category
        type: str16
      - id: save_name
        type: str16
      - id: md5
        size: 16
      - id: pair_count
        type: u2
      - id: pairs
        type: pair
        repeat: expr
        repeat-expr: pair_count
      - id: array_count
        type: u2
      - id: arrays
        type: string_array
        repeat: expr
        repeat-expr: array_count
      - id: int_count
        type: u2
      - id: ints
        type: int_value
        repeat: expr
        repeat-expr: int_count
  string_array:
    seq:
      - id: key
        type: str16
      - id: value_count
        type: u2
      - id: values
        type: str16
        repeat: expr
        repeat-expr: value_count
  int_value:
    seq:
      - id: key
        type: str16
      - id: value
        type: s4
