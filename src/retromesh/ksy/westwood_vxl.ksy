meta:
  id: westwood_vxl
  title: Westwood voxel model (.vxl)
  application: [Command & Conquer Tiberian Sun, Red Alert 2]
  file-extension: vxl
  endian: le
  license: MIT
doc: |
  Header with palette, one header per limb (section), the body block with each limb's span
  tables and run-length span data, then one tailer per limb.
  Corrections to the spec text (retromesh src/retromesh/formats/westwood/vxl.py, 39 real files):
  the tailer is scale, a 3x4 matrix and bounds min/max (not a 4x4 matrix and scale[3]); its last
  byte is the normal table (2 Tiberian Sun, 4 Red Alert 2); the header's "short 0x1f10" is the
  player-colour remap range 16..31; tailer offsets are relative to the start of the body block.
  Ace of Spades maps share the extension but have no magic (not described here).
doc-ref: https://github.com/OpenRA/OpenRA/blob/bleed/OpenRA.Mods.Cnc/FileFormats/VxlReader.cs
seq:
  - id: magic
    contents: ["Voxel Animation", 0]
  - id: palette_count
    type: u4
  - id: limb_count
    type: u4
  - id: tailer_count
    type: u4
    valid: limb_count
  - id: body_size
    type: u4
  - id: remap_start
    type: u1
    doc: First palette index recoloured with the player's colour (16).
  - id: remap_end
    type: u1
    doc: Last remapped palette index (31).
  - id: palette
    type: rgb
    repeat: expr
    repeat-expr: 256
    doc: 6-bit or 8-bit colours; all zero in some files (the game's unit palette is meant).
  - id: limb_headers
    type: limb_header
    repeat: expr
    repeat-expr: limb_count
  - id: body
    size: body_size
  - id: tailers
    type: tailer
    repeat: expr
    repeat-expr: limb_count
  - id: trailing
    size-eos: true
types:
  rgb:
    seq:
      - id: r
        type: u1
      - id: g
        type: u1
      - id: b
        type: u1
  limb_header:
    seq:
      - id: name
        size: 16
        doc: NUL-terminated; bytes after the NUL are kept raw. Names can repeat.
      - id: index
        type: u4
      - id: unknown1
        type: u4
        doc: 1 in real files.
      - id: unknown2
        type: u4
        doc: 0 or 2 in real files.
  tailer:
    seq:
      - id: span_start_off
        type: u4
        doc: Offset of the limb's span start table, from the start of the body block.
      - id: span_end_off
        type: u4
      - id: span_data_off
        type: u4
      - id: scale
        type: f4
        doc: Usually 1/12; 0.0533, 0.0733, 0.0555 and 0.8333 occur.
      - id: transform
        type: f4
        repeat: expr
        repeat-expr: 12
        doc: 3x4 row-major [R | t].
      - id: bounds_min
        type: f4
        repeat: expr
        repeat-expr: 3
      - id: bounds_max
        type: f4
        repeat: expr
        repeat-expr: 3
        doc: The limb's extent in model units, not a voxel count.
      - id: xsize
        type: u1
      - id: ysize
        type: u1
      - id: zsize
        type: u1
      - id: normal_type
        type: u1
        enum: normal_table
    instances:
      limb_body:
        io: _root._io
        pos: 0
        type: limb_body(span_start_off, span_end_off, span_data_off, xsize.as<u4> * ysize.as<u4>)
        doc: This limb's span tables and runs, parsed from the body block.
  limb_body:
    params:
      - id: start_off
        type: u4
      - id: end_off
        type: u4
      - id: data_off
        type: u4
      - id: n_columns
        type: u4
    seq:
      - id: columns
        type: column_ref(_index)
        repeat: expr
        repeat-expr: n_columns
        doc: Column i holds the voxels (x, y, 0..zsize-1) with i = x + y * xsize.
    instances:
      body_start:
        value: 802 + 28 * _root.limb_count
      span_start:
        io: _root._io
        pos: body_start + start_off
        type: s4
        repeat: expr
        repeat-expr: n_columns
        doc: Offset of each column's first byte in the span data; -1 for an empty column.
      span_end:
        io: _root._io
        pos: body_start + end_off
        type: s4
        repeat: expr
        repeat-expr: n_columns
        doc: Offset of each column's last byte; -1 for an empty column.
  column_ref:
    params:
      - id: i
        type: u4
    instances:
      start:
        value: _parent.span_start[i]
      end:
        value: _parent.span_end[i]
      column:
        io: _root._io
        pos: _parent.body_start + _parent.data_off + start
        size: end - start + 1
        type: column
        if: start != -1
  column:
    doc: One column's runs; a run with count 0 is a trailing skip.
    seq:
      - id: runs
        type: run
        repeat: eos
  run:
    seq:
      - id: skip
        type: u1
      - id: count
        type: u1
      - id: voxels
        type: voxel
        repeat: expr
        repeat-expr: count
      - id: count_again
        type: u1
  voxel:
    seq:
      - id: colour
        type: u1
        doc: Palette index; colour 0 is a voxel too (presence comes from the spans).
      - id: normal
        type: u1
        doc: Index into the normal table; indices beyond the table occur and are kept.
enums:
  normal_table:
    2: tiberian_sun
    4: red_alert_2
