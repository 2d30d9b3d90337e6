"""The line framer: complete frames in order, oversized frames reported once and skipped."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from protocol.framing import LineBuffer, OversizedFrame


def _feed_all(buf: LineBuffer, chunks: list[bytes]) -> list[bytes | OversizedFrame]:
    out: list[bytes | OversizedFrame] = []
    for chunk in chunks:
        out.extend(buf.feed(chunk))
    return out


frames_st = st.lists(
    st.binary(min_size=1, max_size=40).filter(lambda b: b"\n" not in b and b.strip() and not b.endswith(b"\r")), max_size=20
)


@given(frames=frames_st, cuts=st.lists(st.integers(min_value=0, max_value=2000), max_size=10))
def test_frames_survive_any_chunking(frames: list[bytes], cuts: list[int]) -> None:
    data = b"".join(f + b"\n" for f in frames)
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    chunks = [data[a:b] for a, b in zip(points, points[1:], strict=False)]
    assert _feed_all(LineBuffer(max_frame=64), chunks) == frames


def test_oversized_frame_is_reported_once_then_stream_resyncs() -> None:
    buf = LineBuffer(max_frame=10)
    out = _feed_all(buf, [b"x" * 7, b"y" * 20, b"z" * 5 + b"\nok\n"])
    assert len(out) == 2 and isinstance(out[0], OversizedFrame) and out[1] == b"ok"
    assert out[0].size >= 32


def test_frame_exactly_at_the_bound_passes_and_one_over_fails() -> None:
    assert _feed_all(LineBuffer(max_frame=10), [b"a" * 10 + b"\n"]) == [b"a" * 10]
    out = _feed_all(LineBuffer(max_frame=10), [b"a" * 11 + b"\n", b"b\n"])
    assert isinstance(out[0], OversizedFrame) and out[1] == b"b"


def test_crlf_and_blank_lines() -> None:
    assert _feed_all(LineBuffer(), [b"a\r\n\n  \nb\n"]) == [b"a", b"b"]


def test_pending_counts_a_half_frame() -> None:
    buf = LineBuffer()
    assert list(buf.feed(b'{"half":')) == []
    assert buf.pending == 8
