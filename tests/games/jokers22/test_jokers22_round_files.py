"""Jokers 22 round files as REPLAY.md writes them: a surrender is listed only when it is taken and a
forced action never, so a hand whose only choices are stand and surrender (20, 21 or a natural on
its first two cards) stands when the next decision is not its surrender. The table's own exports
follow that rule, and older exports that list those stands still replay to the same settlement.

The property test writes its rounds from REPLAY.md and GAMES.md section 2 alone (a small dealer of
its own below), not from the engine's export: every such round must replay."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.engine.base import CardDealt, RuleError
from controller.games.jokers22.rules import GAME, Decision
from controller.games.replay import settle_round_file


def round_file(cards: list[str], decisions: list[dict[str, Any]], spots: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "game": "jokers-22",
        "banker": {"stake": 500},
        "spots": spots or [{"spot": 1, "wagers": [{"player": "ann", "amount": 50}]}, {"spot": 2, "wagers": [{"player": "bob", "amount": 20}]}],
        "cards": cards,
        "decisions": decisions,
    }


# Spot 1: AH 9H = soft 20, no double with an ace: stand or surrender; banker 9C; spot 2: 5S 9D = 14.
TWENTY = ["AH", "5S", "9C", "9H", "9D", "7H", "8S"]


def test_a_hand_at_20_that_nobody_surrenders_is_not_listed_and_stands() -> None:
    new = settle_round_file(round_file(TWENTY, [{"spot": 2, "action": "stand"}]))
    old = settle_round_file(round_file(TWENTY, [{"spot": 1, "action": "stand"}, {"spot": 2, "action": "stand"}]))
    assert new == old
    assert new["spots"][0]["hands"][0]["cards"] == ["AH", "9H"]
    assert new["spots"][0]["hands"][0]["wagers"][0]["result"] == "win"  # 20 against the banker's 9 7 = 16 + 8 = 24
    assert new["banker"]["cards"] == ["9C", "7H", "8S"]


def test_the_last_spot_at_21_with_no_decision_left_stands_and_the_banker_plays() -> None:
    cards = ["5S", "AH", "9C", "9D", "KH", "7H"]  # spot 1: 14, spot 2: A K = 21; banker 9 7 = 16, draws
    new = settle_round_file(round_file([*cards, "2C"], [{"spot": 1, "action": "stand"}]))
    old = settle_round_file(round_file([*cards, "2C"], [{"spot": 1, "action": "stand"}, {"spot": 2, "action": "stand"}]))
    assert new == old
    assert new["spots"][1]["hands"][0]["wagers"][0]["result"] == "win"


def test_a_natural_may_surrender_and_one_that_does_not_is_never_asked() -> None:
    spots = [{"spot": 3, "wagers": [{"player": "ann", "amount": 40}]}]
    cards = ["AH", "9C", "AD", "8D"]  # A A: a natural; banker 9 8 = 17 stands
    assert settle_round_file(round_file(cards, [], spots))["players"] == [{"player": "ann", "spot": 3, "net": 40}]
    surrendered = settle_round_file(round_file(cards, [{"spot": 3, "action": "surrender", "player": "ann"}], spots))
    assert surrendered["players"] == [{"player": "ann", "spot": 3, "net": -20}]


def test_a_surrender_listed_at_20_is_taken() -> None:
    out = settle_round_file(round_file(TWENTY, [{"spot": 1, "action": "surrender", "player": "ann"}, {"spot": 2, "action": "stand"}]))
    assert out["spots"][0]["hands"][0]["wagers"][0]["result"] == "surrender"
    assert out["players"][0]["net"] == -25


def test_a_surrender_by_someone_not_on_the_hand_is_still_refused() -> None:
    with pytest.raises(RuleError, match="spot 1: bob has no wager on this hand"):
        settle_round_file(round_file(TWENTY, [{"spot": 1, "action": "surrender", "player": "bob"}]))


def test_a_decision_the_hand_may_not_take_is_refused_not_read_as_a_stand() -> None:
    with pytest.raises(RuleError, match="spot 1: the player must stand on soft 20; allowed: stand, surrender"):
        settle_round_file(round_file(TWENTY, [{"spot": 1, "action": "hit"}]))


def test_a_surrender_after_the_spot_stood_is_refused() -> None:
    # Spot 2's decision came first, so spot 1 stood: its surrender is too late.
    spots = [{"spot": n, "wagers": [{"player": p, "amount": 10}]} for n, p in ((1, "ann"), (2, "bob"), (3, "cy"))]
    cards = ["AH", "5S", "6S", "9C", "9H", "9D", "8D", "7H", "8S"]
    late = [{"spot": 2, "action": "stand"}, {"spot": 1, "action": "surrender", "player": "ann"}]
    with pytest.raises(RuleError, match="decisions\\[1\\]: spot 1: out of turn: spot 3, hand 1 \\(cy\\) decides now"):
        settle_round_file(round_file(cards, late, spots))


def test_the_tables_export_lists_no_forced_stand_and_replays_to_what_the_table_paid() -> None:
    """At the table the dealer is asked "stand or surrender?" for the 20 and answers stand; the
    exported round file leaves that stand out, as REPLAY.md writes it."""
    doc = round_file(TWENTY, [])
    round_in = GAME.parse_round_file(doc)
    state, _ = GAME.apply(GAME.initial(), round_in.open)
    cards = iter(round_in.cards)
    answers = iter([Decision(1, "stand"), Decision(2, "stand")])
    while (awaiting := GAME.awaiting(state)).kind in ("card", "decision"):
        if awaiting.kind == "decision":
            assert awaiting.allowed == (("stand", "surrender") if awaiting.who["spot"] == 1 else ("hit", "stand", "double", "surrender"))
        state, _ = GAME.apply(state, CardDealt(next(cards)) if awaiting.kind == "card" else next(answers))
    exported = GAME.round_file(state)
    assert exported["decisions"] == [{"spot": 2, "action": "stand"}]
    assert settle_round_file(exported) == GAME.settlement(state)
    # An older export, with the stand listed, settles the same.
    assert settle_round_file({**exported, "decisions": [{"spot": 1, "action": "stand"}, *exported["decisions"]]}) == GAME.settlement(state)


# --- rounds written from REPLAY.md, by a dealer of the test's own --------------------------------

NAMES = ["ann", "bob", "cy", "dee"]


def _total(cards: list[str]) -> tuple[int, bool, bool]:
    """(total, natural, stands by rule) from GAMES.md section 2 alone."""
    if len(cards) == 2 and all(c == "JK" or c[0] == "A" for c in cards):
        return (21 if cards.count("JK") else 12), True, True
    if "JK" in cards:
        return 21, False, len(cards) >= 2
    hard = sum(1 if c[0] == "A" else min(10, "23456789TJQK".index(c[0]) + 2) for c in cards)
    value = hard + 10 if any(c[0] == "A" for c in cards) and hard + 10 <= 21 else hard
    return value, False, value >= 20


def write_round(rng: random.Random) -> dict[str, Any]:
    """A round file as REPLAY.md describes it, dealt and played by the rules of GAMES.md."""
    spots = sorted(rng.sample(range(1, 8), rng.randint(1, 5)))
    bets = {s: [(p, rng.choice([5, 10, 20, 50])) for p in rng.sample(NAMES, rng.randint(1, 3))] for s in spots}
    shoe = [f"{r}{s}" for r in "23456789TJQKA" for s in "CDHS" for _ in range(6)] + ["JK"] * 6
    rng.shuffle(shoe)
    dealt: list[str] = []

    def card() -> str:
        dealt.append(shoe.pop())
        return dealt[-1]

    decisions: list[dict[str, Any]] = []
    first = {s: [card()] for s in spots}
    banker = [card()]
    for s in spots:
        first[s].append(card())
    for s in spots:
        order = [p for p, _ in bets[s]]
        stakes = dict(bets[s])
        live = list(order)
        if banker[0] != "JK":  # surrender: in wager order, listed only when taken
            for p in order:
                if rng.random() < 0.2:
                    decisions.append({"spot": s, "action": "surrender", "player": p})
                    live.remove(p)
        if not live:
            continue
        hands = [(first[s], live)]
        split_done = False
        i = 0
        while i < len(hands):
            cards, players = hands[i]
            from_split = split_done
            if len(cards) < 2:
                cards.append(card())
            decider = max(players, key=lambda p: (stakes[p], -order.index(p)))
            while True:
                total, natural, must_stand = _total(cards)
                two = len(cards) == 2
                can_double = two and not from_split and not any(c == "JK" or c[0] == "A" for c in cards)
                can_split = (
                    two and not split_done and cards[0] != "JK" and cards[1] != "JK"
                    and cards[0][0] == cards[1][0] and cards[0][0] != "A"
                )
                plays = ["stand"] if must_stand else ["hit"] if total <= 11 else ["hit", "stand"]
                extra = [a for a, ok in (("double", can_double), ("split", can_split)) if ok]
                if len(plays) == 1 and not extra:  # forced: never listed
                    if plays == ["stand"]:
                        break
                    cards.append(card())
                    continue
                action = rng.choice(plays + extra)
                decisions.append({"spot": s, "action": action})
                if action == "stand":
                    break
                if action == "hit":
                    cards.append(card())
                    continue
                others = [p for p in players if p != decider]
                answers = {p: rng.choice(["match", "decline"]) for p in others}
                decisions.extend({"spot": s, "action": a, "player": p} for p, a in answers.items())
                if action == "double":
                    cards.append(card())
                    break
                split_done = True
                hands[i] = ([cards[0]], players)
                hands.append(([cards[1]], [decider, *(p for p in others if answers[p] == "match")]))
                cards, from_split = hands[i][0], True
                cards.append(card())
            i += 1
    banker.append(card())
    while True:
        total, natural, _ = _total(banker)
        soft = any(c[0] == "A" for c in banker) and "JK" not in banker and sum(
            1 if c[0] == "A" else min(10, "23456789TJQK".index(c[0]) + 2) for c in banker
        ) + 10 == total
        if natural or "JK" in banker or total > 17 or (total == 17 and not soft):
            break
        banker.append(card())
    return {
        "game": "jokers-22",
        "banker": {"stake": rng.choice([30, 100, 500])},
        "spots": [{"spot": s, "wagers": [{"player": p, "amount": a} for p, a in bets[s]]} for s in spots],
        "cards": dealt + shoe[: rng.randint(0, 3)],  # cards beyond those the round needs stay undealt
        "decisions": decisions,
    }


@settings(max_examples=400, deadline=None)
@given(st.randoms(use_true_random=False))
def test_every_round_written_from_replay_md_replays(rng: random.Random) -> None:
    doc = write_round(rng)
    try:
        out = settle_round_file(doc)
    except RuleError as exc:
        raise AssertionError(f"refused: {exc}\n{doc}") from None
    assert sum(p["net"] for p in out["players"]) + out["banker"]["net"] == 0
    # The engine dealt exactly the cards this round's own dealer dealt.
    used = sum(len(h["cards"]) for s in out["spots"] for h in s["hands"]) + len(out["banker"]["cards"])
    assert out["cards_used"] == used


def test_the_replay_of_a_listed_round_takes_every_listed_decision() -> None:
    """A round written by the test's dealer is replayed by hand: every listed decision is applied
    (none is skipped by reading it as a stand), and the cards run out exactly at the end."""
    for seed in range(40):
        doc = write_round(random.Random(seed))
        round_in = GAME.parse_round_file(doc)
        state, _ = GAME.apply(GAME.initial(), round_in.open)
        cards, decisions = list(round_in.cards), list(round_in.decisions)
        while (awaiting := GAME.awaiting(state)).kind in ("card", "decision"):
            if awaiting.kind == "card":
                state, _ = GAME.apply(state, CardDealt(cards.pop(0)))
            elif decisions:
                state, _ = GAME.apply(state, decisions.pop(0))
            else:
                assert awaiting.allowed == ("stand", "surrender"), (seed, awaiting)
                state, _ = GAME.apply(state, Decision(int(awaiting.who["spot"]), "stand"))
        assert not decisions, seed
        assert [str(c) for c in state.dealt] == doc["cards"][: len(state.dealt)], seed


# --- a split with surrender after a split allowed: the first hand's stand at 20 -----------------
# Spot 1: TH TD, ann 20 (decides) and bob 10 (matches the split); banker 5C. Hand 1: TH TS = 20,
# stand or surrender; hand 2: TD 6S = 16, hits 2C = 18; banker 5C 9C = 14, hits 4D = 18.
SPLIT_SPOTS = [{"spot": 1, "wagers": [{"player": "ann", "amount": 20}, {"player": "bob", "amount": 10}]}]
SPLIT_CARDS = ["TH", "5C", "TD", "TS", "6S", "2C", "9C", "4D"]


def dealt_at_the_table(decisions: list[Decision]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The split round played at the table with these answers, in order: (its round file as the
    table exports it, the settlement the table paid)."""
    doc = {**round_file(SPLIT_CARDS, [], SPLIT_SPOTS), "rules": {"surrender_after_split": True}}
    round_in = GAME.parse_round_file(doc)
    state, _ = GAME.apply(GAME.initial(), round_in.open)
    cards, answers = iter(round_in.cards), iter(decisions)
    while (awaiting := GAME.awaiting(state)).kind in ("card", "decision"):
        state, _ = GAME.apply(state, CardDealt(next(cards)) if awaiting.kind == "card" else next(answers))
    assert next(answers, None) is None
    return GAME.round_file(state), GAME.settlement(state)


def test_a_split_hand_that_stands_at_20_replays_with_the_next_hands_card_dealt_first() -> None:
    """The second hand's card comes between the first hand's stand and the second hand's hit: a
    round file that leaves that stand out replays (it was refused: "no decision is due: the next
    card goes to spot 1, hand 2"), and the table's own export replays to what it paid."""
    exported, paid = dealt_at_the_table(
        [Decision(1, "split"), Decision(1, "match", "bob"), Decision(1, "stand"), Decision(1, "hit"), Decision(1, "stand")]
    )
    assert settle_round_file(json.loads(json.dumps(exported))) == paid
    # Hand 1's stand is listed (hand 2 follows it); a file that leaves it out settles the same.
    assert exported["decisions"][2:] == [{"spot": 1, "action": a} for a in ("stand", "hit", "stand")]
    unlisted = [*exported["decisions"][:2], *exported["decisions"][3:]]
    assert settle_round_file({**exported, "decisions": unlisted}) == paid


def test_a_surrender_on_the_second_hand_of_a_split_is_not_read_as_the_first_hands() -> None:
    """bob surrenders hand 2 in one round and hand 1 in the other (ann stands on hand 1's 20 in
    both): the two exports differ, and each replays to what the table paid, not the other's."""
    on_hand_2 = dealt_at_the_table(
        [Decision(1, "split"), Decision(1, "match", "bob"), Decision(1, "stand"),
         Decision(1, "surrender", "bob"), Decision(1, "hit"), Decision(1, "stand")]
    )  # fmt: skip
    on_hand_1 = dealt_at_the_table(
        [Decision(1, "split"), Decision(1, "match", "bob"), Decision(1, "surrender", "bob"), Decision(1, "stand"),
         Decision(1, "hit"), Decision(1, "stand")]
    )  # fmt: skip
    assert on_hand_2[1] != on_hand_1[1]
    assert [p["net"] for p in on_hand_2[1]["players"] if p["player"] == "bob"] == [5]  # 20 beats 18; half of 10 back
    assert [p["net"] for p in on_hand_1[1]["players"] if p["player"] == "bob"] == [-5]  # half of 10 back; 18 pushes
    for exported, paid in (on_hand_2, on_hand_1):
        assert settle_round_file(json.loads(json.dumps(exported))) == paid
