/**
 * Jokers 22's deciding player on the dealer screen (#decisions): who decides on what total, and a
 * big button for exactly each choice the engine allows; the table refuses anything else in its
 * own words.
 */
import { choiceButton, decisionDue, postDecision } from "/static/js/decisions.js";
import { $, setText } from "/static/js/dom.js";

/** The choices as the buttons say them. */
const DECISION_WORDS = /** @type {Record<string, string>} */ ({
  hit: "Hit", stand: "Stand", double: "Double", split: "Split", surrender: "Surrender", match: "Match", decline: "Decline",
});
/** The choices a named player makes for their own wager (the others are the spot's). */
const OWN_CHOICES = new Set(["match", "decline", "surrender"]);

export class Decisions {
  /**
   * Show the buttons for the player who must decide now, or hide the box.
   * @param {any} state the GET /api/state document
   */
  render(state) {
    const due = decisionDue(state);
    if (!due) return;
    const { who, allowed } = due;
    const split = state.state?.spots?.find((/** @type {any} */ s) => s.spot === who.spot)?.hands?.length > 1;
    const hand = who.hand && (who.hand > 1 || split) ? `, hand ${who.hand}` : "";
    setText($("decision-who"), `Spot ${who.spot}${hand}: ${who.player ?? "the player"} on ${who.total ?? "?"}`);
    $("decision-buttons").replaceChildren(
      ...allowed.map((action) => choiceButton(action, DECISION_WORDS[action] ?? action, () => postDecision(body(who, action)))),
    );
  }
}

/**
 * The player's choice as the table takes it: the spot's, or a named player's own.
 * @param {any} who the state's `awaiting.who`
 * @param {string} action
 */
function body(who, action) {
  /** @type {Record<string, string | number>} */
  const chosen = { spot: who.spot, action };
  if (OWN_CHOICES.has(action) && who.player) chosen.player = who.player;
  return chosen;
}
