/**
 * Grand Slam's journal entries in words for the event log and the recall: "Round 3 opened: seats
 * 1, 4", "5H to seat 1 first base: stack to second", "Seat 4 out: take 10". The entry kinds all
 * games share are told by words.js, which asks this module for what only the game knows.
 */
import { cardLabel } from "/static/js/cards.js";

/** @typedef {(effects: any[]) => string[]} Lines the lines for effects the main line leaves */

/**
 * "Round 3 opened from the camera: seats 1, 4, blind puck at seat 5", then any notice.
 * @param {number | null} round
 * @param {any} body the round-open entry's body
 * @param {any[]} effects
 * @param {Lines} lines
 */
export function opened(round, body, effects, lines) {
  const event = body.event ?? {};
  const seats = Array.isArray(event.seats) ? event.seats.map((/** @type {any} */ s) => s.seat) : [];
  const blind = event.blind_seat ? `, blind puck at seat ${event.blind_seat}` : "";
  const who = seats.length ? `: seat${seats.length > 1 ? "s" : ""} ${seats.join(", ")}` : "";
  const via = body.via === "camera" ? " from the camera" : "";
  return [`Round ${round ?? "?"} opened${via}${who}${blind}`, ...lines(effects.filter((e) => e.kind === "grand-slam.blind-off"))];
}

/**
 * "5H to seat 1 first base: stack to second", then what else the card did; null when the card
 * reached no base (a dead card, a card held while play is stopped).
 * @param {string} card
 * @param {any[]} effects
 * @param {Lines} lines
 */
export function card(card, effects, lines) {
  const placed = effects.find((e) => e.kind === "grand-slam.card-placed");
  if (!placed) return null;
  const where = `seat ${placed.seat}${placed.blind ? " (blind)" : ""} ${placed.base} base`;
  const moved = effects.find((e) => e.kind === "grand-slam.stack-moved" && e.seat === placed.seat);
  const slam = effects.find((e) => e.kind === "grand-slam.grand-slam");
  let what = "";
  if (slam) what = `: GRAND SLAM, ${slam.amount} scores`;
  else if (moved) what = `: ${moveWords(moved)}`;
  const rest = effects.filter((e) => e !== placed && e !== moved && e !== slam);
  return [`${cardLabel(card)} to ${where}${what}`, ...lines(rest)];
}

/** Grand Slam has no players' decisions. @returns {null} */
export function decision() {
  return null;
}

/**
 * One of the game's effects in words; null for one that is not the game's.
 * @param {any} e
 * @returns {string | null}
 */
export function effect(e) {
  switch (e.kind) {
    case "grand-slam.stack-moved":
      return `Seat ${e.seat} ${e.from_base} base: ${moveWords(e)}`;
    case "grand-slam.grand-slam":
      return `GRAND SLAM at seat ${e.seat}: ${e.amount} scores`;
    case "grand-slam.seat-settled":
      return settled(e);
    case "grand-slam.blind-off":
      return `Blind hand off: remove the puck from seat ${e.seat}`;
    default:
      return null;
  }
}

/** @param {any} moved a grand-slam.stack-moved effect */
function moveWords(moved) {
  if (moved.to === "out") return `out (${moved.amount} lost)`;
  if (moved.to === "home") return `stack home, ${moved.amount} scores`;
  return `stack to ${moved.to}`;
}

/** @param {any} e a grand-slam.seat-settled effect */
function settled(e) {
  if (e.pay && e.collect) return `Seat ${e.seat}: pay ${e.pay}, take ${e.collect}`;
  if (e.pay) return `Seat ${e.seat}: pay ${e.pay}`;
  if (e.collect) return `Seat ${e.seat} out: take ${e.collect}`;
  return `Seat ${e.seat}: push`;
}
