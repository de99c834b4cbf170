"""bigbytes.join: the same bytes as b"".join, whichever path builds them."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from retromesh import bigbytes


@settings(max_examples=30, deadline=None)
@given(st.lists(st.binary(max_size=64), max_size=6), st.integers(0, 3))
def test_join_equals_bytes_join(chunks, big_at):
    parts: list = [bytearray(c) for c in chunks]
    parts.insert(min(big_at, len(parts)), np.arange(3 << 20, dtype="<u4").view([("v", "<u4")]))
    want = b"".join(bytes(np.asarray(p).reshape(-1).view(np.uint8)) if isinstance(p, np.ndarray)
                    else bytes(p) for p in parts)
    got = bigbytes.join(parts)
    assert type(got) is bytes and got == want and hash(got) == hash(want)


@pytest.mark.parametrize("api", [False, None])
def test_small_or_unavailable_is_plain_join(monkeypatch, api):
    monkeypatch.setattr(bigbytes, "_api", api)
    data = [b"ab", memoryview(b"cd"), np.zeros(bigbytes.MIN_BYTES, np.uint8)]
    assert bigbytes.join(data) == b"abcd" + bytes(bigbytes.MIN_BYTES)
    assert bigbytes.join([b"x", b"y"]) == b"xy"
