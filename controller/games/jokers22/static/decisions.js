/**
 * Jokers 22's deciding player on the dealer screen (#decisions): who decides on what total, and a
 * big button for exactly each choice the engine allows; the table refuses anything else in its
 * own words.
 */
import { post } from "/static/js/api.js";
import { $, act, setText } from "/static/js/dom.js";

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
    const awaiting = state.awaiting ?? { kind: "nothing" };
    const box = $("decisions");
    const show = awaiting.kind === "decision" && !state.blocked;
    box.hidden = !show;
    document.body.classList.toggle("deciding", show);
    if (!show) {
      box.dataset.key = "";
      return;
    }
    const who = awaiting.who ?? {};
    const allowed = /** @type {string[]} */ (awaiting.allowed ?? []);
    const key = JSON.stringify([who, allowed]);
    if (box.dataset.key === key) return;
    box.dataset.key = key;
    $("decision-error").textContent = "";
    const split = state.state?.spots?.find((/** @type {any} */ s) => s.spot === who.spot)?.hands?.length > 1;
    const hand = who.hand && (who.hand > 1 || split) ? `, hand ${who.hand}` : "";
    setText($("decision-who"), `Spot ${who.spot}${hand}: ${who.player ?? "the player"} on ${who.total ?? "?"}`);
    $("decision-buttons").replaceChildren(
      ...allowed.map((action) => {
        const button = document.createElement("button");
        button.type = "button";
        button.className = `decision decision-${action}`;
        button.dataset.action = action;
        button.textContent = DECISION_WORDS[action] ?? action;
        button.addEventListener("click", () => void decide(who, action));
        return button;
      }),
    );
  }
}

/**
 * Post the player's choice; on a refusal the dealer may choose again.
 * @param {any} who the state's `awaiting.who`
 * @param {string} action
 */
async function decide(who, action) {
  /** @type {Record<string, string | number>} */
  const body = { spot: who.spot, action };
  if (OWN_CHOICES.has(action) && who.player) body.player = who.player;
  const buttons = /** @type {NodeListOf<HTMLButtonElement>} */ (document.querySelectorAll("#decision-buttons button"));
  buttons.forEach((b) => (b.disabled = true));
  const ok = await act(post("/api/decisions", body), $("decision-error"));
  // On success the next state replaces the buttons.
  if (!ok) buttons.forEach((b) => (b.disabled = false));
}
