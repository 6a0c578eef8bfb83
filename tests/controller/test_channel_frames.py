"""The API's side of the channel takes the table's messages as their bytes arrive
(controller/api/remote.py's `_Frames`): however the socket cuts them, each message is taken once,
whole and in order; a frame longer than the channel allows, or one that does not unpickle, ends the
channel (the API then answers 503, as when the daemon goes away) and nothing after it is taken."""

from __future__ import annotations

import asyncio
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
