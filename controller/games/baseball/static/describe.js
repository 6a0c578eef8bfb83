/**
 * Baseball poker's journal entries in words for the event log and the recall: "Hand 4 opened:
 * seats 1 (40), 3 (60)", "3H to seat 4 face up, 3rd street" (wild: the drawing badges it), "Seat 2
 * raises (4 in, pot 16)", "RAINOUT: ...". The entry kinds all games share are told by words.js.
 */
import { cardLabel, parseCard } from "/static/js/cards.js";
import { signed } from "/static/js/dom.js";

/** @typedef {(effects: any[]) => string[]} Lines the lines for effects the main line leaves */

const STREETS = /** @type {Record<number, string>} */ ({ 3: "3rd", 4: "4th", 5: "5th", 6: "6th", 7: "7th" });
const ACTIONS = /** @type {Record<string, string>} */ ({
  "bring-in": "brings it in", complete: "completes", check: "checks", bet: "bets", call: "calls", raise: "raises",
  fold: "folds", pay: "pays for the extra card", decline: "declines the extra card",
});

/** @param {number[]} seats */
const seatList = (seats) => (seats.length === 1 ? `seat ${seats[0]}` : `seats ${seats.join(", ")}`);

/**
 * "Hand 4 opened: seats 1 (40), 3 (60)".
 * @param {number | null} round
 * @param {any} body
 * @param {any[]} _effects
 * @param {Lines} _lines
 */
export function opened(round, body, _effects, _lines) {
  const players = Array.isArray(body.event?.players) ? body.event.players : [];
  const seats = players.map((/** @type {any} */ p) => `${p.seat} (${p.stack})`);
  return [`Hand ${round ?? "?"} opened: seat${seats.length > 1 ? "s" : ""} ${seats.join(", ")}`];
}

/**
 * "3H to seat 4 face up, 3rd street", "QS as the community card"; null when the card went nowhere.
 * @param {string} card
 * @param {any[]} effects
 * @param {Lines} lines
 */
export function card(card, effects, lines) {
  const laid = effects.find((e) => e.kind === "baseball-poker.card-placed");
  if (!laid) return null;
  // A card the dealer may not see comes masked ("face-down card"): said once, not twice.
  const what = parseCard(card) ? cardLabel(card) : "Card";
  return [`${what} ${laidWords(laid)}`, ...lines(effects.filter((e) => e !== laid))];
}

/**
 * "Seat 2 raises (4 in, pot 16)", from the action-taken effect (else the event).
 * @param {any} event
 * @param {any[]} effects
 * @param {Lines} lines
 */
export function decision(event, effects, lines) {
  const acted = effects.find((e) => e.kind === "baseball-poker.action-taken");
  const a = acted ?? { seat: event.seat, action: event.action, amount: 0 };
  return [actionWords(a), ...lines(effects.filter((e) => e !== acted))];
}

/**
 * Where a card went: "to seat 4 face up, 3rd street", "as the community card".
 * @param {any} e a baseball-poker.card-placed effect
 */
function laidWords(e) {
  const street = STREETS[e.street] ? `, ${STREETS[e.street]} street` : "";
  if (e.to === "community") return `as the community card${street}`;
  if (e.to === "burn") return `burned${street}`;
  return `to seat ${e.seat} face ${e.face}${e.extra ? " (the extra card for a 4)" : ""}${street}`;
}

/** @param {any} a a baseball-poker.action-taken effect */
function actionWords(a) {
  const verb = ACTIONS[a.action] ?? a.action;
  const money = a.amount ? ` (${a.amount} in${a.pot != null ? `, pot ${a.pot}` : ""})` : "";
  return `Seat ${a.seat} ${verb}${money}${a.all_in ? ": ALL IN" : ""}${a.forced ? " (cannot pay)" : ""}`;
}

/**
 * One of the game's effects in words; null for those the main line or the prompt already says,
 * or that are not the game's.
 * @param {any} e
 * @returns {string | null}
 */
export function effect(e) {
  switch (e.kind) {
    case "baseball-poker.rainout": {
      const where = e.seat != null ? `at seat ${e.seat}` : "as the community card";
      return `RAINOUT: ${cardLabel(String(e.card))} face up ${where}; re-deal to ${seatList(e.seats ?? [])}, each antes again, the pot stays`;
    }
    case "baseball-poker.opener":
      return `Seat ${e.seat} opens ${STREETS[e.street] ?? e.street} street (${e.why})`;
    case "baseball-poker.no-betting":
      return `No betting on ${STREETS[e.street] ?? e.street} street`;
    case "baseball-poker.action-taken":
      return actionWords(e);
    case "baseball-poker.hand-shown":
      return `Seat ${e.seat}: ${e.category}, ${(e.best ?? []).map(cardLabel).join(" ")}`;
    case "baseball-poker.pot-awarded": {
      const shares = Object.entries(e.shares ?? {});
      if (e.returned) return `Uncalled ${e.amount} back to seat ${shares[0]?.[0] ?? "?"}`;
      const to = shares.length > 1 ? shares.map(([seat, chips]) => `seat ${seat} ${chips}`).join(", ") : seatList(e.winners ?? []);
      return `Pot ${e.amount} to ${to}`;
    }
    case "baseball-poker.player-settled":
      return e.pay ? `Seat ${e.seat}: push ${e.pay} (${signed(e.net)})` : null;
    default:
      return null;
  }
}
