/**
 * Baseball poker's player to act on the dealer screen (#decisions): who acts and the amount to
 * call, the street, pot and stack, and a big button for exactly each action the engine allows,
 * saying the chips it puts in; the table refuses anything else, naming the seat.
 */
import { choiceButton, decisionDue, postDecision } from "/static/js/decisions.js";
import { $, setText } from "/static/js/dom.js";

/** The actions as the buttons say them (the chips each puts in are added). */
const ACTION_WORDS = /** @type {Record<string, string>} */ ({
  "bring-in": "Bring in", complete: "Complete", check: "Check", bet: "Bet", call: "Call", raise: "Raise", fold: "Fold",
  pay: "Pay", decline: "Decline",
});
/** The streets as the dealer says them. */
const STREET_WORDS = /** @type {Record<number, string>} */ ({ 3: "3rd street", 4: "4th street", 5: "5th street", 6: "6th street", 7: "7th street" });

export class Decisions {
  /**
   * Show the player to act and their buttons, or hide the box.
   * @param {any} state the GET /api/state document
   */
  render(state) {
    const due = decisionDue(state, { key: [state.round] });
    $("decision-facts").hidden = $("decisions").hidden;
    if (!due) return;
    const { who, allowed } = due;
    const toCall = who.to_call ?? 0;
    let what = toCall > 0 ? `${toCall} to call` : "nothing to call";
    if (who.for) what = `${who.for}, ${who.price} to pay`;
    else if (allowed.includes("bring-in")) what = "opens: bring it in or complete";
    setText($("decision-who"), `Seat ${who.seat} to act \u00b7 ${what}`);
    const facts = [STREET_WORDS[who.street] ?? "", who.pot != null ? `pot ${who.pot}` : "", who.stack != null ? `stack ${who.stack}` : ""];
    setText($("decision-facts"), facts.filter(Boolean).join(" \u00b7 "));
    /** @type {Record<string, number>} */
    const amounts = who.amounts ?? (who.price != null ? { pay: who.price, decline: 0 } : {});
    $("decision-buttons").replaceChildren(
      ...allowed.map((action) => {
        const chips = amounts[action] ?? 0;
        const button = choiceButton(action, null, () => postDecision({ seat: who.seat, action }));
        button.dataset.amount = String(chips);
        const verb = document.createElement("span");
        verb.className = "verb";
        verb.textContent = ACTION_WORDS[action] ?? action;
        button.append(verb);
        if (chips > 0) {
          const put = document.createElement("span");
          put.className = "chips";
          put.textContent = ` puts in ${chips}`;
          button.append(put);
        }
        button.setAttribute("aria-label", chips > 0 ? `${verb.textContent}: puts in ${chips} chips` : verb.textContent ?? action);
        return button;
      }),
    );
  }
}
