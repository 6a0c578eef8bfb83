/**
 * Baseball poker on the screens: seats with their cards, wild cards marked, the pot and side pots;
 * the player to act with a button per action the engine allows; the opening panel with each
 * player's stack; at the showdown the hands and the pots pushed. The exports every game has
 * (games/README.md).
 */
import { cardLabel } from "/static/js/cards.js";
import { cell, make, payoutRow, signed, wideCell } from "/static/js/dom.js";
import { Decisions } from "./decisions.js";
import * as describe from "./describe.js";
import { BaseballDrawing, potName } from "./drawing.js";
import { OpeningPanel } from "./opening.js";

export const id = "baseball-poker";
export const title = "Baseball poker";
export { BaseballDrawing as Drawing, Decisions, describe, OpeningPanel };
/** Baseball poker has no camera. */
export const Camera = null;

/** What the live feed tells that the state does not: the last rainout's card and seats. */
export class Notes {
  constructor() {
    /** @type {{round: number | null, card: string, seat: number | null, seats: number[]} | null} */
    this.rainout = null;
  }

  /** @param {import("/static/js/live.js").Entry} entry */
  take(entry) {
    const rain = (entry.effects ?? []).find((e) => e.kind === "baseball-poker.rainout");
    if (rain) this.rainout = { round: entry.round, card: rain.card, seat: rain.seat, seats: rain.seats ?? [] };
  }
}

/**
 * The drawing's extras for the table now.
 * @param {any} state GET /api/state
 * @param {any} settlement the settled hand's settlement, or null
 * @param {Notes} notes
 * @param {{reveal?: boolean}} [how] reveal: the down cards face up (the supervisor and
 *   surveillance, whom the API sends them; the dealer's state never holds them)
 */
export function liveExtras(state, settlement, notes, how = {}) {
  return {
    settlement,
    revealDown: Boolean(how.reveal),
    rainout: notes.rainout && notes.rainout.round === state.round ? notes.rainout : null,
    fresh: /^Rainout/.test(state.notice ?? ""),
  };
}

/**
 * The dealer's payouts: each pot with whom it goes to (the pots to push), then per seat the chips
 * pushed to it, what it put in and its net.
 * @param {Array<{seat: number, pay: number, collect: number, net: number}>} payouts
 * @param {any} settlement the hand's settlement, once settled
 * @param {number | null} round
 */
export function payouts(payouts, settlement, round) {
  const pots = /** @type {any[]} */ (payouts.length ? settlement?.pots ?? [] : []);
  const named = pots.filter((p) => !p.returned);
  const potRows = pots.map((pot, i) => {
    const row = make("tr", undefined, "pot-row");
    row.dataset.pot = String(i);
    const shares = /** @type {Array<{seat: number, chips: number}>} */ (pot.shares ?? []);
    const to = shares.length > 1 ? shares.map((s) => `seat ${s.seat} ${s.chips}`).join(", ") : `seat ${pot.winners?.[0] ?? "?"}`;
    const name = pot.returned ? "Uncalled bet" : potName(named.indexOf(pot), named.length);
    row.append(cell(name, "pot"), cell(String(pot.amount), "amount"), wideCell(`\u2192 ${to}`, 2, "winners"));
    return row;
  });
  const seatRows = payouts.map((p) => payoutRow(p, `Seat ${p.seat}`));
  return {
    columns: ["Seat", "Push", "Put in", "Net"],
    rows: [...potRows, ...seatRows],
    heading: payouts.length && round ? `Pots to push, hand ${round}` : "Pots to push",
    note: null,
  };
}

/**
 * The supervisor's settlement: seat by seat the cards, the hand shown and its best five, the
 * chips put in and won; then each pot with the seats that could win it and who did.
 * @param {any} settlement per REPLAY.md, or null while open
 */
export function settlementTable(settlement) {
  const columns = ["Seat", "Cards", "Hand", "Best five", "Put in", "Won", "Net"];
  if (!settlement) return { columns, rows: [] };
  const players = (settlement.players ?? []).map((/** @type {any} */ p) => {
    const row = make("tr");
    row.dataset.seat = String(p.seat);
    const hand = p.folded ? "folded" : p.hand ? p.hand.category : "not shown";
    row.append(make("td", `Seat ${p.seat}`), make("td", (p.cards ?? []).map(cardLabel).join(" ")), make("td", hand, "hand"),
      make("td", (p.hand?.best ?? []).map(cardLabel).join(" "), "best"), make("td", String(p.put ?? 0)),
      make("td", String(p.won ?? 0)), make("td", signed(p.net ?? 0), "num"));
    return row;
  });
  const pots = /** @type {any[]} */ (settlement.pots ?? []);
  const named = pots.filter((p) => !p.returned);
  const potRows = pots.map((pot, i) => {
    const row = make("tr", undefined, "pot-row");
    row.dataset.pot = String(i);
    const name = pot.returned ? "Uncalled bet" : potName(named.indexOf(pot), named.length);
    const eligible = /** @type {number[]} */ (pot.eligible ?? []);
    const among = eligible.length === 1 ? `seat ${eligible[0]}` : `seats ${eligible.join(", ")}`;
    const shares = (pot.shares ?? []).map((/** @type {any} */ s) => `seat ${s.seat} takes ${s.chips}`).join(", ");
    row.append(wideCell(`${name} ${pot.amount} (${among}): ${shares || "nobody takes it"}`, columns.length));
    return row;
  });
  const notes = [];
  if (settlement.rainouts) notes.push(`Rainouts: ${settlement.rainouts} (re-dealt, the pot stayed)`);
  if ((settlement.community ?? []).length) notes.push(`Community card: ${settlement.community.map(cardLabel).join(" ")}`);
  if (settlement.void) notes.push(`Void by ${settlement.void.by}: ${settlement.void.reason}`);
  const noteRows = notes.map((text) => {
    const row = make("tr", undefined, "note-row");
    row.append(wideCell(text, columns.length));
    return row;
  });
  return { columns, rows: [...players, ...potRows, ...noteRows] };
}

/** The players' net in a settlement. @param {any} settlement */
export const playersNet = (settlement) =>
  (settlement?.players ?? []).reduce((sum, /** @type {any} */ p) => sum + (p.net ?? 0), 0);

/** How the recall names the opening step and each step after it (cards and actions). */
export const replayWords = { opened: "Antes in, hand opened", unit: "step" };

/**
 * A recalled hand's step: the engine state says who acts and where the next card goes; the last
 * rainout so far names its card and seat; the last step shows the showdown.
 * @param {any[]} steps GET /api/rounds/{n}/replay `.steps`
 * @param {number} index
 * @param {any} settlement the hand's settlement
 * @returns {{extras: any, prompt: string | null}}
 */
export function replayStep(steps, index, settlement) {
  const rainouts = steps
    .slice(0, index + 1)
    .flatMap((/** @type {any} */ s) => s.effects ?? [])
    .filter((/** @type {any} */ e) => e.kind === "baseball-poker.rainout");
  const rain = rainouts[rainouts.length - 1];
  const extras = {
    settlement: index === steps.length - 1 ? settlement : null,
    rainout: rain ? { card: rain.card, seat: rain.seat, seats: rain.seats ?? [] } : null,
    fresh: (steps[index].effects ?? []).some((/** @type {any} */ e) => e.kind === "baseball-poker.rainout"),
    // The recall is the supervisor's and surveillance's: the down cards as they lay, face up.
    revealDown: true,
  };
  return { extras, prompt: null };
}
