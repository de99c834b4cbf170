meta:
  id: lithtech_ltc
  title: LithTech compressed text model (.ltc)
  application: [LithTech 2.2, LithTech Talon, LithTech Jupiter (ModelEdit)]
  file-extension: ltc
  bit-endian: le
  license: MIT
doc: |
  An LTA text model compressed with the LZSS of the engine's libs/ltamgr: a bit stream whose
  bits fill each byte from its lowest bit up, every value written highest bit first (so each
  value here is read bit-reversed and turned back in an instance). A version of 32 zero bits,
  then tokens: a 1 bit and a literal byte of text, or a 0 bit, the 12-bit window position
  where a copy starts and its length minus 2 (4 bits; copies are 2..17 bytes). The window holds
  4096 bytes and the text starts at position 1. A copy from position 0 ends the stream; the
  engine never writes the last partial byte, so files made by LithTech's tools end inside that
  marker: a token that does not fit in the bits left is the end too. See retromesh
  src/retromesh/formats/lithtech/ltc.py.
seq:
  - id: version
    type: b32
    valid: 0
  - id: tokens
    type: 'token(_index == 0 ? 32 : tokens[_index - 1].end_bit)'
    repeat: until
    repeat-until: _.is_end
types:
  token:
    params:
      - id: start_bit
        type: u8
        doc: where the token starts, in bits from the start of the file
    seq:
      - id: is_literal
        type: b1
        if: bits_left >= 1
      - id: literal_raw
        type: b8
        if: bits_left >= 9 and is_literal
      - id: position_raw
        type: b12
        if: bits_left >= 17 and not is_literal
      - id: length_raw
        type: b4
        if: bits_left >= 17 and not is_literal
      - id: cut_bits
        type: b1
        repeat: expr
        repeat-expr: bits_left - 1
        if: is_cut
        doc: the bits of a token the end of the file cuts short (zeros of the end marker)
    instances:
      is_cut:
        value: 'bits_left >= 1 and (is_literal ? bits_left < 9 : bits_left < 17)'
      bits_left:
        value: _root._io.size * 8 - start_bit
      is_end:
        value: 'bits_left < 1 or (is_literal ? bits_left < 9 : (bits_left < 17 or position == 0))'
        doc: the end marker (a copy from position 0), or a token cut short by the end of file
      end_bit:
        value: 'start_bit + (is_literal ? 9 : 17)'
      literal:
        value: >-
          (literal_raw & 1) << 7 | (literal_raw & 2) << 5 | (literal_raw & 4) << 3 |
          (literal_raw & 8) << 1 | (literal_raw & 16) >> 1 | (literal_raw & 32) >> 3 |
          (literal_raw & 64) >> 5 | (literal_raw & 128) >> 7
        if: is_literal and bits_left >= 9
        doc: one byte of text
      position:
        value: >-
          (position_raw & 1) << 11 | (position_raw & 2) << 9 | (position_raw & 4) << 7 |
          (position_raw & 8) << 5 | (position_raw & 16) << 3 | (position_raw & 32) << 1 |
          (position_raw & 64) >> 1 | (position_raw & 128) >> 3 | (position_raw & 256) >> 5 |
          (position_raw & 512) >> 7 | (position_raw & 1024) >> 9 | (position_raw & 2048) >> 11
        if: not is_literal and bits_left >= 17
        doc: the window position the copy starts at (0 ends the stream)
      length:
        value: >-
          ((length_raw & 1) << 3 | (length_raw & 2) << 1 | (length_raw & 4) >> 1 |
          (length_raw & 8) >> 3) + 2
        if: not is_literal and bits_left >= 17
        doc: bytes copied (2..17)
