"""Which repeated frames are the protocol's business, and which a fault (hardware/shoe-protocol.md).

A frame the shoe sends again after the table has it (same SESSION, SEQ and content) is normal: its
ACK crossed the repeat on the wire, or was lost, or the table was slow to journal it and the shoe's
timer fired meanwhile. The host acknowledges it again and never uses it twice; none of that is a
fault, however late the repeat is read. What is a fault is a shoe that keeps resending the same
frame at its own pace after being acknowledged: it does not hear the table (the line from the
table to the shoe is broken), and no card after that frame can come.

So repeats are counted per frame, and only those that come spaced out as the shoe's retransmission
timer spaces them (at least `SPACED_S` after the previous one; the protocol's timer is 0.25 s, a
bench shoe's may be shorter): a burst of repeats that piled up in the port's buffer while the
table was busy comes in one read, back to back, and counts once.
"""

from __future__ import annotations

#: Repeats closer together than this came out of the port's buffer in one read, not one by one
#: from the shoe's timer.
SPACED_S = 0.02
#: Spaced repeats of one frame after its ACK that say the shoe does not hear the table (2 s of the
#: protocol's resending).
DEAF_AFTER = 8


class RepeatWatch:
    """Counts the repeats of the last delivered frame; says once when they mean the shoe is deaf."""

    def __init__(self, *, spaced_s: float = SPACED_S, deaf_after: int = DEAF_AFTER) -> None:
        self.spaced_s = spaced_s
        self.deaf_after = deaf_after
        self._seq: int | None = None
        self._spaced = 0
        self._last = float("-inf")
        self.total = 0  # every repeat seen (for the log and the metrics)

    def delivered(self, seq: int) -> None:
        """A new frame was delivered: its repeats are counted afresh."""
        self._seq, self._spaced, self._last = seq, 0, float("-inf")

    def repeated(self, seq: int, now: float) -> int | None:
        """A repeat of frame `seq` read at `now` (monotonic seconds): the number of spaced
        repeats when they reach DEAF_AFTER (once per frame), else None."""
        self.total += 1
        if seq != self._seq:
            self.delivered(seq)
        if now - self._last >= self.spaced_s:
            self._spaced += 1
        self._last = now
        return self._spaced if self._spaced == self.deaf_after else None
