meta:
  id: lithtech_dtx
  title: LithTech texture (.dtx)
  application: [No One Lives Forever, Aliens versus Predator 2, No One Lives Forever 2, KISS Psycho Circus, Shogo, Blood 2]
  file-extension: dtx
  endian: le
  license: MIT
doc: |
  Version -5 (LithTech 2.x), -3 (LithTech 1.5) and -2 (LithTech 1.0) textures: a header, a
  palette (-2/-3 only), the pixels of every mip level largest first, 4-bit alpha masks (-2/-3
  with flag 2), then the sections. Pixel format codes: 0 and 3 32-bit (the engine reads 0 as
  32-bit), 1 8-bit, 2 16-bit, 4/5/6 DXT1/3/5, 7 8-bit indices into the PALLETE32 section,
  8 24-bit. A -5 file without flag 8 (SECTIONSFIXED) has an unreliable section count: what
  follows its pixels is left in `trailing`. See retromesh src/retromesh/formats/lithtech/dtx.py.
seq:
  - id: res_type
    type: u4
    valid: 0
  - id: version
    type: s4
    valid:
      any-of: [-5, -3, -2]
  - id: width
    type: u2
  - id: height
    type: u2
  - id: mip_count
    type: u2
    valid:
      max: 15
  - id: section_count
    type: u2
  - id: flags
    type: u4
  - id: user_flags
    type: u4
  - id: v2
    type: tail_v2
    if: version == -5
  - id: v15
    type: tail_v15
    if: version == -3
  - id: v1
    type: tail_v1
    if: version == -2
  - id: palette
    type: argb
    repeat: expr
    repeat-expr: 256
    if: version != -5
  - id: levels
    size: '(bpp == 4 ? (((width >> _index) * (height >> _index)) >> 1) : ((bpp == 5 or bpp == 6) ? ((width >> _index) * (height >> _index)) : ((width >> _index) * (height >> _index) * bytes_per_pixel)))'
    repeat: expr
    repeat-expr: mip_count
  - id: alpha_masks
    size: '(height >> _index) * ((width >> _index) / 2)'
    repeat: expr
    repeat-expr: mip_count
    if: version != -5 and (flags & 2) != 0
  - id: sections
    type: section
    repeat: expr
    repeat-expr: section_count
    if: version != -5 or (flags & 8) != 0
  - id: trailing
    size-eos: true
instances:
  bpp:
    value: 'version == -5 ? (v2.bpp == 0 ? 3 : v2.bpp) : 0'
    doc: The pixel format the engine reads (code 0 is 32-bit; -2/-3 are 8-bit palettised).
  bytes_per_pixel:
    value: 'bpp == 2 ? 2 : (bpp == 3 ? 4 : (bpp == 8 ? 3 : 1))'
types:
  tail_v2:
    seq:
      - id: group
        type: u1
      - id: mips_used
        type: u1
      - id: bpp
        type: u1
        valid:
          max: 8
      - id: non_s3tc_mip_offset
        type: u1
      - id: ui_mip_offset
        type: u1
      - id: priority
        type: u1
      - id: detail_scale
        type: f4
        doc: The engine adds 1.
      - id: detail_angle
        type: s2
      - id: command
        size: 128
  tail_v15:
    seq:
      - id: group
        type: u1
      - id: mips_used
        type: u1
      - id: alpha_cutoff
        type: u1
      - id: alpha_average
        type: u1
      - id: detail_scale
        type: f4
      - id: detail_angle
        type: s2
      - id: reserved
        size: 2
      - id: command
        size: 128
      - id: reserved2
        size: 8
  tail_v1:
    seq:
      - id: group
        type: u1
      - id: mips_used
        type: u1
      - id: alpha_cutoff
        type: u1
      - id: alpha_average
        type: u1
      - id: reserved
        size: 16
  argb:
    seq:
      - id: a
        type: u1
      - id: r
        type: u1
      - id: g
        type: u1
      - id: b
        type: u1
  section:
    doc: The engine's SectionHeader (25 bytes of names, padded to 32) and its data.
    seq:
      - id: type
        size: 15
      - id: name
        size: 10
      - id: padding
        size: 3
      - id: length
        type: u4
      - id: data
        size: length
