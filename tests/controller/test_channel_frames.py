"""The API's side of the channel takes the table's messages as their bytes arrive
(controller/api/remote.py's `_Frames`): however the socket cuts them, each message is taken once,
whole and in order; a frame longer than the channel allows, or one that does not unpickle, ends the
channel (the API then answers 503, as when the daemon goes away) and nothing after it is taken."""

from __future__ import annotations

import asyncio
import enum
import random
from typing import Any

from controller.api import channel
from controller.api.channel import HEADER, frame
from controller.api.remote import _Frames


def _taken(chunks: list[bytes]) -> tuple[list[Any], bool]:
    async def scenario() -> tuple[list[Any], bool]:
        taken: list[Any] = []
        frames = _Frames(taken.append, asyncio.get_running_loop().create_future())
        for chunk in chunks:
            frames.data_received(chunk)
        return taken, frames.ended.done()

    return asyncio.run(scenario())


def test_messages_are_taken_whole_and_in_order_however_the_bytes_are_cut() -> None:
    messages = [("feed", n, {"seq": n, "text": "x" * (n * 37 % 300)}, None) for n in range(40)]
    messages += [("changed", 41), ("reply", 7, True, {"ok": [1, 2, 3]}), ("feed-lost",)]
    data = b"".join(frame(m) for m in messages)
    rng = random.Random(35)
    for _ in range(20):
        cuts = sorted(rng.sample(range(1, len(data)), rng.randint(1, 60)))
        chunks = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
        taken, ended = _taken(chunks)
        assert taken == messages and not ended
    # One byte at a time, and all at once.
    assert _taken([data[i : i + 1] for i in range(len(data))]) == (messages, False)
    assert _taken([data]) == (messages, False)


def test_a_frame_too_long_or_not_a_pickle_ends_the_channel() -> None:
    good = frame(("changed", 1))
    too_long = HEADER.pack(channel.MAX_FRAME + 1) + b"\x00" * 8
    assert _taken([good + too_long + good]) == ([("changed", 1)], True)
    garbage = HEADER.pack(3) + b"\xff\xfe\xfd"
    assert _taken([good, garbage, good]) == ([("changed", 1)], True)


class Kind(enum.StrEnum):
    CARD = "card"


def test_plain_frames_and_pickled_ones_arrive_the_same_values_in_order_however_cut() -> None:
    """A live-feed message of plain values (channel.py's `plain_frame`, marshal's format) arrives as
    the same values, of the same types (tuples stay tuples, a frozenset a frozenset), in order with
    the pickled messages around it, through the API's side and through `read_frame`; a message
    that holds anything else (an enum, a dataclass, a dict's subclass) is pickled, and arrives
    as itself all the same."""
    from collections import OrderedDict

    from controller.api.channel import PLAIN, plain_frame, read_frame
    from controller.api.gate import Told

    feed = [
        (
            "feed",
            n,
            ({"type": "entry", "seq": n, "changes": [[["state", "seats", n % 7], {"cards": ["AS", "10H"]}]],
              "live": True, "ratio": n / 7, "none": None, "yes": n % 2 == 0},
             frozenset({f"{n}:first"} if n % 3 else set())),
            (n, None if n % 5 else "disk-full", frozenset({"AS"}), {"rounds": n, "wagered": {"first": n * 5}}),
        )
        for n in range(30)
    ]  # fmt: skip
    odd = [("reply", 1, True, Kind.CARD), ("reply", 2, True, Told(3, None, frozenset(), {})), ("x", OrderedDict(a=1))]
    messages: list[Any] = [*feed, ("changed", 31), *odd]
    frames = [plain_frame(m) for m in feed] + [frame(("changed", 31))] + [plain_frame(m) for m in odd]
    assert all(HEADER.unpack_from(f)[0] & PLAIN for f in frames[:30])
    assert not any(HEADER.unpack_from(f)[0] & PLAIN for f in frames[30:])  # pickled, as `frame` does
    data = b"".join(frames)
    rng = random.Random(20261204)
    for _ in range(20):
        cuts = sorted(rng.sample(range(1, len(data)), rng.randint(1, 60)))
        chunks = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
        taken, ended = _taken(chunks)
        assert taken == messages and not ended
        assert [type(x) for m in taken[:30] for x in (m[2], m[2][1], m[3], m[3][2])] == [tuple, frozenset] * 60
        assert type(taken[-3][3]) is Kind and type(taken[-2][3]) is Told and type(taken[-1][1]) is OrderedDict

    async def read_all() -> list[Any]:
        reader = asyncio.StreamReader()
        reader.feed_data(data)
        reader.feed_eof()
        out = []
        while (message := await read_frame(reader)) is not None:
            out.append(message)
        return out

    assert asyncio.run(read_all()) == messages
