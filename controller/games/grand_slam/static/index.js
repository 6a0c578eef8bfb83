/**
 * Grand Slam on the screens: seats, bases and the wager grid; the overhead camera (a table with a
 * `[camera]` section); the payouts seat by seat. The exports every game has (games/README.md).
 */
import { cardLabel } from "/static/js/cards.js";
import { make, payoutRow, signed } from "/static/js/dom.js";
import { DealerCamera } from "./camera.js";
import * as describe from "./describe.js";
import { GrandSlamDrawing } from "./drawing.js";
import { OpeningPanel } from "./opening.js";

export const id = "grand-slam";
export const title = "Grand Slam";
export { DealerCamera as Camera, describe, GrandSlamDrawing as Drawing, OpeningPanel };
/** Grand Slam has no players' decisions: the cards decide. */
export const Decisions = null;

/** The live feed tells Grand Slam's screens nothing the state does not. */
export class Notes {
  /** @param {import("/static/js/live.js").Entry} _entry */
  take(_entry) {}
}

/**
 * The drawing's extras for the table now.
 * @param {any} state GET /api/state
 * @param {any} _settlement
 * @param {Notes} _notes
 * @param {{reveal?: boolean}} [how] reveal: the blind hand's cards face up (the supervisor)
 */
export function liveExtras(state, _settlement, _notes, how = {}) {
  const awaiting = state.awaiting ?? { kind: "nothing" };
  return {
    target: awaiting.kind === "card" ? awaiting.target : null,
    payouts: state.payouts ?? [],
    revealBlind: Boolean(how.reveal),
  };
}

/**
 * The dealer's payouts, seat by seat.
 * @param {Array<{seat: number, pay: number, collect: number, net: number}>} payouts
 * @param {any} _settlement
 * @param {number | null} round
 */
export function payouts(payouts, _settlement, round) {
  const rows = payouts.map((p) => payoutRow(p, `Seat ${p.seat}`));
  return { columns: ["Seat", "Pay", "Take", "Net"], rows, heading: payouts.length && round ? `Payouts, round ${round}` : "Payouts", note: null };
}

/**
 * The supervisor's settlement: seat by seat the cards and each wager's result.
 * @param {any} settlement per REPLAY.md, or null while open or void
 */
export function settlementTable(settlement) {
  const columns = ["Seat", "Cards", "First", "Second", "Third", "3 Outs", "Poker bonus", "Net"];
  if (!settlement) return { columns, rows: [] };
  const rows = (settlement.seats ?? []).map((/** @type {any} */ s) => {
    const row = make("tr");
    row.dataset.seat = String(s.seat);
    const wager = (/** @type {string} */ name) => {
      const w = s.wagers?.[name];
      if (!w) return "";
      return w.result === "home" ? `${w.amount} home, paid ${w.paid ?? w.amount}` : `${w.amount} ${w.result}`;
    };
    const side = (/** @type {string} */ name) => {
      const b = s.side_bets?.[name];
      if (!b) return "";
      return b.result === "won" ? `${b.amount} won, paid ${b.paid}` : `${b.amount} ${b.result}`;
    };
    const cards = (s.cards ?? []).map(cardLabel).join(" ") + (s.grand_slam ? "  GRAND SLAM" : "");
    row.append(
      make("td", `Seat ${s.seat}`), make("td", cards), make("td", wager("first")), make("td", wager("second")),
      make("td", wager("third")), make("td", side("three_outs")), make("td", side("poker_bonus")),
      make("td", signed(s.net ?? 0), "num"),
    );
    return row;
  });
  if (settlement.blind) {
    const row = make("tr");
    row.dataset.seat = String(settlement.blind.seat);
    row.append(make("td", `Seat ${settlement.blind.seat} (blind)`), make("td", (settlement.blind.cards ?? []).map(cardLabel).join(" ")));
    rows.push(row);
  }
  return { columns, rows };
}

/** The seats' net in a settlement. @param {any} settlement */
export const playersNet = (settlement) =>
  (settlement?.seats ?? []).reduce((sum, /** @type {any} */ s) => sum + (s.net ?? 0), 0);

/** How the recall names the opening step and each step after it (every step is a card). */
export const replayWords = { opened: "Wagers placed, round opened", unit: "card" };

/**
 * A recalled round's step: the base owed the next card, the blind hand face up, and on the last
 * step each seat's result.
 * @param {any[]} steps GET /api/rounds/{n}/replay `.steps`
 * @param {number} index
 * @param {any} settlement the round's settlement
 * @returns {{extras: any, prompt: string | null}}
 */
export function replayStep(steps, index, settlement) {
  const effects = /** @type {any[]} */ (steps[index].effects ?? []);
  const last = index === steps.length - 1;
  const next = effects.find((e) => e.kind === "grand-slam.next-card");
  const payouts = last && settlement ? (settlement.seats ?? []).map((/** @type {any} */ s) => ({ seat: s.seat, net: s.net })) : [];
  return { extras: { target: next ?? null, payouts, revealBlind: true }, prompt: null };
}
