/**
 * Jokers 22's journal entries in words for the event log and the recall: "Round 2 opened: spots
 * 1, 3; banker's stake 500", "8D to spot 1: 16", "Spot 1: ann splits (50 more)", "ACTION spot 3".
 * The entry kinds all games share are told by words.js, which asks this module for the rest.
 */
import { cardLabel } from "/static/js/cards.js";
import { signed } from "/static/js/dom.js";

/** @typedef {(effects: any[]) => string[]} Lines the lines for effects the main line leaves */

const VERBS = /** @type {Record<string, string>} */ ({
  hit: "hits", stand: "stands", double: "doubles", split: "splits", surrender: "surrenders", match: "matches", decline: "declines",
});

/** @param {string} s */
const capital = (s) => (s ? s[0].toUpperCase() + s.slice(1) : s);

/**
 * "Round 2 opened: spots 1, 3; banker's stake 500".
 * @param {number | null} round
 * @param {any} body
 * @param {any[]} effects
 * @param {Lines} lines
 */
export function opened(round, body, effects, lines) {
  const event = body.event ?? {};
  const spots = Array.isArray(event.spots) ? event.spots.map((/** @type {any} */ s) => s.spot) : [];
  const stake = event.banker?.stake != null ? `; banker's stake ${event.banker.stake}` : "";
  return [`Round ${round ?? "?"} opened: spot${spots.length > 1 ? "s" : ""} ${spots.join(", ")}${stake}`, ...lines([])];
}

/**
 * "8D to spot 1: 16", then what else the card did; null when the card reached no hand.
 * @param {string} card
 * @param {any[]} effects
 * @param {Lines} lines
 */
export function card(card, effects, lines) {
  const dealt = effects.find((e) => e.kind === "jokers-22.card-placed");
  if (!dealt) return null;
  // A face-down card's total is masked with it (the same words): not said twice.
  const total = dealt.total && dealt.total !== dealt.card ? `: ${dealt.total}` : "";
  return [`${cardLabel(card)} to ${handWords(dealt)}${total}`, ...lines(effects.filter((e) => e !== dealt))];
}

/**
 * "Spot 1: ann splits (50 more)", from the decision-taken effect (else the event).
 * @param {any} event the decision as journaled: {spot, action, player}
 * @param {any[]} effects
 * @param {Lines} lines
 */
export function decision(event, effects, lines) {
  const taken = effects.find((e) => e.kind === "jokers-22.decision-taken");
  const d = taken ?? { spot: event.spot, hand: 1, player: event.player, action: event.action, amount: 0 };
  return [decisionWords(d), ...lines(effects.filter((e) => e !== taken))];
}

/**
 * Where a card went or whose hand it is: "spot 1", "spot 1 hand 2", "the banker". Hand 1 is
 * named only once a split has made a second hand (the effect cannot say; hand 2 can).
 * @param {{spot: number | null, hand?: number}} e
 */
function handWords(e) {
  if (e.spot == null) return "the banker";
  return e.hand && e.hand > 1 ? `spot ${e.spot} hand ${e.hand}` : `spot ${e.spot}`;
}

/** @param {any} d a jokers-22.decision-taken effect */
function decisionWords(d) {
  const verb = VERBS[d.action] ?? d.action;
  let money = "";
  if (d.amount && d.action === "surrender") money = ` (${d.amount} back)`;
  else if (d.amount) money = ` (${d.amount} more)`;
  // A decision replayed without its effects names no player for the spot's own choices.
  return d.player ? `${capital(handWords(d))}: ${d.player} ${verb}${money}` : `${capital(handWords(d))} ${verb}${money}`;
}

/**
 * One of the game's effects in words; null for those the main line already says, nobody needs,
 * or that are not the game's.
 * @param {any} e
 * @returns {string | null}
 */
export function effect(e) {
  switch (e.kind) {
    case "jokers-22.forced":
      return e.action === "hit" ? `${capital(handWords(e))} must hit ${e.total}` : `${capital(handWords(e))} stands on ${e.total}`;
    case "jokers-22.decision-due":
      return `${capital(handWords(e))}: ${e.player} to decide on ${e.total} (${(e.allowed ?? []).join(", ")})`;
    case "jokers-22.decision-taken":
      return decisionWords(e);
    case "jokers-22.action-spot":
      return `ACTION spot ${e.spot} (banker's second card ${cardLabel(String(e.card))})`;
    case "jokers-22.covered":
      // Only partial coverage is news: a fully covered wager is the usual case.
      return e.covered < e.amount ? `${capital(handWords(e))} ${e.player}: ${e.covered} of ${e.amount} covered, ${e.amount - e.covered} goes back` : null;
    case "jokers-22.player-settled":
      if (e.pay && e.collect) return `${e.player} at spot ${e.spot}: pay ${e.pay}, take ${e.collect}`;
      if (e.pay) return `${e.player} at spot ${e.spot}: pay ${e.pay}`;
      if (e.collect) return `${e.player} at spot ${e.spot}: take ${e.collect}`;
      return `${e.player} at spot ${e.spot}: push`;
    case "jokers-22.banker-settled":
      return `Banker: ${signed(e.net)}`;
    case "jokers-22.time-collected":
      return `Time: ${e.player} at spot ${e.spot} pays ${e.amount}`;
    default:
      return null;
  }
}
