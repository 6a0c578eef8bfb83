"""Which repeats of a delivered frame are normal and which say the shoe does not hear the table."""

from __future__ import annotations

from drivers.shoe.repeats import DEAF_AFTER, RepeatWatch


def test_a_burst_read_back_to_back_after_a_stall_is_one_repeat_and_never_a_fault() -> None:
    watch = RepeatWatch()
    watch.delivered(7)
    # 40 resends piled up in the port's buffer while the table was slow: one read, microseconds apart.
    assert all(watch.repeated(7, 100.0 + i * 1e-6) is None for i in range(40))
    assert watch.total == 40


def test_repeats_at_the_shoes_own_pace_after_the_ack_say_it_is_deaf_once() -> None:
    watch = RepeatWatch()
    watch.delivered(7)
    said = [watch.repeated(7, 100.0 + 0.25 * i) for i in range(3 * DEAF_AFTER)]
    assert said.count(DEAF_AFTER) == 1 and said.index(DEAF_AFTER) == DEAF_AFTER - 1


def test_a_new_frame_starts_the_count_again() -> None:
    watch = RepeatWatch()
    watch.delivered(7)
    for i in range(DEAF_AFTER - 1):
        assert watch.repeated(7, 100.0 + 0.25 * i) is None
    watch.delivered(8)  # the shoe heard the ACK after all and moved on
    assert all(watch.repeated(8, 200.0 + 0.25 * i) is None for i in range(DEAF_AFTER - 1))
