/**
 * Jokers 22 on the screens: spots, hands and the banker; the deciding player's choices; the
 * opening panel with the banker's stake and players per spot; the ACTION spot, the coverage and
 * the payouts per player from the round's settlement. The exports every game has (games/README.md).
 */
import { cardLabel } from "/static/js/cards.js";
import { cell, make, netClass, payoutCells, signed } from "/static/js/dom.js";
import * as describe from "./describe.js";
import { Decisions } from "./decisions.js";
import { Jokers22Drawing } from "./drawing.js";
import { OpeningPanel } from "./opening.js";

export const id = "jokers-22";
export const title = "Jokers 22";
export { Decisions, describe, Jokers22Drawing as Drawing, OpeningPanel };
/** Jokers 22 has no camera. */
export const Camera = null;

/** What the live feed tells that the state does not: the ACTION spot, named before settlement. */
export class Notes {
  constructor() {
    /** @type {{round: number | null, spot: number} | null} */
    this.action = null;
  }

  /** @param {import("/static/js/live.js").Entry} entry */
  take(entry) {
    const action = (entry.effects ?? []).find((e) => e.kind === "jokers-22.action-spot");
    if (action) this.action = { round: entry.round, spot: action.spot };
  }
}

/**
 * The drawing's extras for the table now.
 * @param {any} state GET /api/state
 * @param {any} settlement the settled round's settlement, or null
 * @param {Notes} notes
 */
export function liveExtras(state, settlement, notes) {
  const awaiting = state.awaiting ?? { kind: "nothing" };
  const named = notes.action && notes.action.round === state.round ? notes.action.spot : null;
  return {
    target: awaiting.kind === "card" ? awaiting.target : null,
    decision: awaiting.kind === "decision" ? awaiting.who : null,
    payouts: state.payouts ?? [],
    settlement,
    actionSpot: settlement?.action_spot ?? named,
  };
}

/**
 * How much of `player`'s money on `spot` the banker covered: "50", or "30 of 40" when only part.
 * @param {any} settlement
 * @param {number} spot
 * @param {string} player
 */
function coveredText(settlement, spot, player) {
  const hands = settlement?.spots?.find((/** @type {any} */ s) => s.spot === spot)?.hands ?? [];
  const wagers = hands.flatMap((/** @type {any} */ h) => h.wagers ?? []).filter((/** @type {any} */ w) => w.player === player);
  if (!wagers.length) return "\u2026";
  const covered = wagers.reduce((sum, /** @type {any} */ w) => sum + (w.covered ?? 0), 0);
  const amount = wagers.reduce((sum, /** @type {any} */ w) => sum + (w.amount ?? 0), 0);
  return covered === amount ? String(covered) : `${covered} of ${amount}`;
}

/**
 * The dealer's payouts: pay and take per player per spot, how much of each player's money the
 * banker covered, the banker's net, and the ACTION spot under the table.
 * @param {Array<{spot: number, player: string, pay: number, collect: number, net: number}>} payouts
 * @param {any} settlement
 * @param {number | null} round
 */
export function payouts(payouts, settlement, round) {
  const rows = payouts.map((p) => {
    const row = make("tr");
    row.dataset.spot = String(p.spot);
    row.dataset.player = p.player;
    row.append(cell(String(p.spot), "spot"), cell(p.player, "player"), cell(coveredText(settlement, p.spot, p.player), "covered"),
      ...payoutCells(p));
    return row;
  });
  const banker = settlement?.banker;
  if (payouts.length && banker && typeof banker.net === "number") {
    const row = make("tr", undefined, "banker-row");
    row.dataset.banker = banker.player ?? "house";
    row.append(cell("Banker", "spot"), cell(banker.player ?? "", "player"), cell(`stake ${banker.stake}`, "covered"),
      cell("", "pay"), cell("", "collect"), cell(signed(banker.net), netClass(banker.net)));
    rows.push(row);
  }
  const note = payouts.length && settlement?.action_spot
    ? `ACTION spot ${settlement.action_spot} \u00b7 coverage by ${settlement.coverage ?? "rotation"} from there` : null;
  return {
    columns: ["Spot", "Player", "Covered", "Pay", "Take", "Net"],
    rows,
    heading: payouts.length && round ? `Payouts, round ${round}` : "Payouts",
    note,
  };
}

/** @param {any} h a settled hand (or the banker) */
const totalWords = (h) => (h.natural ? "natural" : h.soft ? `soft ${h.total}` : String(h.total ?? ""));

/**
 * The supervisor's settlement: hand by hand, each wager's result and how much of it the banker
 * covered; the banker; the ACTION spot.
 * @param {any} settlement per REPLAY.md, or null while open
 */
export function settlementTable(settlement) {
  const columns = ["Spot", "Hand", "Cards", "Total", "Wagers (result, covered)", "Net"];
  if (!settlement) return { columns, rows: [] };
  const rows = (settlement.spots ?? []).flatMap((/** @type {any} */ spot) =>
    (spot.hands ?? []).map((/** @type {any} */ h) => {
      const row = make("tr");
      row.dataset.spot = String(spot.spot);
      row.dataset.hand = String(h.hand);
      const wagers = (h.wagers ?? [])
        .map((/** @type {any} */ w) => `${w.player} ${w.amount} ${w.result}, ${w.covered} covered, ${signed(w.net)}`)
        .join("; ");
      const net = (h.wagers ?? []).reduce((sum, /** @type {any} */ w) => sum + (w.net ?? 0), 0);
      row.append(make("td", `Spot ${spot.spot}`), make("td", String(h.hand)), make("td", (h.cards ?? []).map(cardLabel).join(" ")),
        make("td", totalWords(h)), make("td", wagers), make("td", signed(net), "num"));
      return row;
    }),
  );
  const banker = settlement.banker ?? {};
  const row = make("tr");
  row.dataset.banker = banker.player ?? "house";
  row.append(make("td", "Banker"), make("td", ""), make("td", (banker.cards ?? []).map(cardLabel).join(" ")), make("td", totalWords(banker)),
    make("td", `${banker.player ?? "house"}, stake ${banker.stake}; ACTION spot ${settlement.action_spot} (coverage by ${settlement.coverage ?? "rotation"})`),
    make("td", signed(banker.net ?? 0), "num"));
  return { columns, rows: [...rows, row] };
}

/** The players' net in a settlement (the banker's side is the rest). @param {any} settlement */
export const playersNet = (settlement) =>
  (settlement?.players ?? []).reduce((sum, /** @type {any} */ p) => sum + (p.net ?? 0), 0);

/** How the recall names the opening step and each step after it (cards and decisions). */
export const replayWords = { opened: "Wagers placed, round opened", unit: "step" };

/**
 * A recalled round's step: the hand (or the banker) owed the next card, the player who must
 * decide, the ACTION spot once named, and on the last step the settlement.
 * @param {any[]} steps GET /api/rounds/{n}/replay `.steps`
 * @param {number} index
 * @param {any} settlement the round's settlement
 * @returns {{extras: any, prompt: string | null}} the drawing's extras; the step's instruction
 *   when the replay's own prompt does not say it
 */
export function replayStep(steps, index, settlement) {
  const step = steps[index];
  const effects = /** @type {any[]} */ (step.effects ?? []);
  const last = index === steps.length - 1;
  const next = effects.find((e) => e.kind === "jokers-22.next-card");
  const due = effects.find((e) => e.kind === "jokers-22.decision-due");
  const named = steps
    .slice(0, index + 1)
    .flatMap((/** @type {any} */ s) => s.effects ?? [])
    .find((/** @type {any} */ e) => e.kind === "jokers-22.action-spot");
  const settled = last ? settlement : null;
  const extras = {
    target: next ? (next.spot == null ? { banker: true } : { spot: next.spot, hand: next.hand }) : null,
    decision: due ? { spot: due.spot, hand: due.hand, player: due.player } : null,
    payouts: settled ? (settled.players ?? []) : [],
    settlement: settled,
    actionSpot: named ? named.spot : null,
  };
  if (!due) return { extras, prompt: null };
  const hand = due.hand > 1 ? `, hand ${due.hand}` : "";
  return { extras, prompt: `Spot ${due.spot}${hand}, ${due.player} on ${due.total}: ${(due.allowed ?? []).join(" or ")}?` };
}
