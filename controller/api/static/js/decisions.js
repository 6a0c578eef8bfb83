/**
 * The dealer screen's decision box (#decisions), as every game's `Decisions` uses it: shown while
 * the engine waits for a player's decision and no fault stops play, drawn again only when who
 * decides or the choices change (the last refusal cleared then), a button per choice, and a
 * decision posted with the buttons held until the table answers. The words and what a decision's
 * body holds are the game's (its screen module's `Decisions`, or the generic screen's form).
 */
import { post } from "./api.js";
import { $, act } from "./dom.js";

/**
 * Show or hide the decision box for the state. What to draw when the decision is new since the
 * box was last drawn: who decides (the state's `awaiting.who`) and the choices the rules allow;
 * null when there is nothing to draw (hidden, or the same decision still due).
 * @param {any} state GET /api/state
 * @param {{ready?: boolean, key?: any[]}} [how] ready: false keeps the box hidden (the screen
 *   cannot take the decision yet); key: what else tells one decision from the next (the round)
 * @returns {{who: any, allowed: string[]} | null}
 */
export function decisionDue(state, how = {}) {
  const awaiting = state.awaiting ?? { kind: "nothing" };
  const box = $("decisions");
  const show = awaiting.kind === "decision" && !state.blocked && (how.ready ?? true);
  box.hidden = !show;
  document.body.classList.toggle("deciding", show);
  if (!show) {
    box.dataset.key = "";
    return null;
  }
  const who = awaiting.who ?? {};
  const allowed = /** @type {string[]} */ (awaiting.allowed ?? []);
  const key = JSON.stringify([...(how.key ?? []), who, allowed]);
  if (box.dataset.key === key) return null;
  box.dataset.key = key;
  $("decision-error").textContent = "";
  return { who, allowed };
}

/**
 * A choice's big button (`button.decision.decision-<action>`, `data-action`), saying `text` when
 * given (a game may fill it itself), calling `choose` when pressed.
 * @param {string} action
 * @param {string | null} text
 * @param {() => unknown} choose
 */
export function choiceButton(action, text, choose) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = `decision decision-${action}`;
  button.dataset.action = action;
  if (text !== null) button.textContent = text;
  button.addEventListener("click", () => void choose());
  return button;
}

/**
 * Post a decision (POST /api/decisions): `hold` (by default every button of the box) is disabled
 * until the table answers, and again usable after a refusal, which the box says in the table's
 * own words, so the dealer may choose again; on success the next state redraws the box.
 * @param {Record<string, unknown>} body the game's decision body
 * @param {HTMLButtonElement[]} [hold]
 * @returns {Promise<boolean>} whether the table took it
 */
export async function postDecision(body, hold) {
  const buttons = hold ?? [.../** @type {NodeListOf<HTMLButtonElement>} */ (document.querySelectorAll("#decision-buttons button"))];
  buttons.forEach((b) => (b.disabled = true));
  const ok = await act(post("/api/decisions", body), $("decision-error"));
  if (!ok) buttons.forEach((b) => (b.disabled = false));
  return ok;
}
