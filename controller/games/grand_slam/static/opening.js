/**
 * Grand Slam's round opening panel on the dealer screen (#wager-panel): a row per bet, a column
 * per seat (seat 7 on the left, as on the felt), the blind puck; "Same as last" fills in the last
 * round's wagers. The table checks every rule; the panel only says what is missing.
 */
import { $, chipInput, make } from "/static/js/dom.js";
import { SEATS_LEFT_TO_RIGHT } from "/static/js/felt.js";
import { OpeningForm, seatHeader } from "/static/js/opening.js";
import { BET_LABELS, BET_NAMES, BETS, isSideBet } from "./bases.js";

/** @typedef {import("./bases.js").Bet} Bet */

/** @returns {NodeListOf<HTMLInputElement>} */
const wagerInputs = () => document.querySelectorAll("#wager-rows input[data-bet]");
const blindSelect = () => /** @type {HTMLSelectElement} */ ($("blind-seat"));

export class OpeningPanel extends OpeningForm {
  constructor() {
    super("wager-panel", "clear-wagers", "repeat-wagers", "wager-error", "open-round");
  }

  /** Build the wager grid: a row per bet, a column per seat of the table. */
  build() {
    for (const option of /** @type {NodeListOf<HTMLOptionElement>} */ (document.querySelectorAll("#blind-seat option"))) {
      option.hidden = option.disabled = Number(option.value) > SEATS_LEFT_TO_RIGHT.length; // a seat the table has not
    }
    $("wager-seats").replaceChildren(seatHeader());
    const rows = BETS.map((bet) => {
      const row = make("tr");
      const name = /** @type {HTMLTableCellElement} */ (make("th", BET_LABELS[bet]));
      name.scope = "row";
      row.append(name);
      for (const seat of SEATS_LEFT_TO_RIGHT) {
        const td = make("td");
        td.append(chipInput({ seat: String(seat), bet }, `Seat ${seat} ${BET_NAMES[bet]}`));
        row.append(td);
      }
      return row;
    });
    $("wager-rows").replaceChildren(...rows);
  }

  /**
   * The POST /api/rounds body from the form, or an error naming the seat and the field.
   * @returns {{body: any} | {error: string, place: number | null}}
   */
  read() {
    /** @type {Map<number, {seat: number, wagers: Record<string, number>, side_bets: Record<string, number>}>} */
    const seats = new Map();
    for (const input of wagerInputs()) {
      const seat = Number(input.dataset.seat);
      const bet = /** @type {Bet} */ (input.dataset.bet);
      const text = input.value.trim();
      if (!text) continue;
      if (!/^\d+$/.test(text)) return { error: `Seat ${seat} ${BET_NAMES[bet]}: a whole number of chips`, place: seat };
      const amount = Number(text);
      if (amount === 0) continue;
      const entry = seats.get(seat) ?? { seat, wagers: {}, side_bets: {} };
      if (isSideBet(bet)) entry.side_bets[bet] = amount;
      else entry.wagers[bet] = amount;
      seats.set(seat, entry);
    }
    if (seats.size === 0) return { error: "No wagers: type at least one seat's first-base wager", place: 0 };
    const blind = blindSelect().value;
    return { body: { seats: [...seats.values()].sort((a, b) => a.seat - b.seat), blind_seat: blind ? Number(blind) : null } };
  }

  /**
   * @param {any} refusal
   * @param {any} body
   */
  refusedPlace(refusal, body) {
    return refusal.seat ?? seatAt(body.seats, refusal.field);
  }

  /** @param {number | null} seat */
  markRefused(seat) {
    markRefused(seat);
  }

  clear() {
    wagerInputs().forEach((input) => (input.value = ""));
    blindSelect().value = "";
    $("wager-error").textContent = "";
    markRefused(0);
  }

  /** Fill the form with the last round's wagers (this screen's, else the table's last round). */
  repeat() {
    const seats = this.lastOpened?.seats ?? (this.state?.state?.seats ?? []).map((/** @type {any} */ s) => s.bet);
    this.clear();
    for (const bet of seats) {
      for (const [name, amount] of Object.entries({ ...bet.wagers, ...(bet.side_bets ?? {}) })) {
        const input = /** @type {HTMLInputElement | null} */ (document.querySelector(`#wager-rows input[data-seat="${bet.seat}"][data-bet="${name}"]`));
        if (input) input.value = String(amount);
      }
    }
    const blind = this.lastOpened ? this.lastOpened.blind_seat : this.state?.state?.blind_seat;
    blindSelect().value = blind ? String(blind) : "";
  }
}

/** @param {number} seat the seat whose column to mark as refused (0: none) */
function markRefused(seat) {
  document.querySelectorAll("#wager-panel [data-seat]").forEach((node) => {
    node.classList.toggle("refused", Number(/** @type {HTMLElement} */ (node).dataset.seat) === seat);
  });
}

/**
 * The seat of the body's place a refusal names ("seats[1].wagers.third" -> that entry's seat).
 * @param {Array<{seat: number}>} seats
 * @param {string | null} fieldName
 */
function seatAt(seats, fieldName) {
  const index = /^seats\[(\d+)\]/.exec(fieldName ?? "");
  return index ? seats[Number(index[1])]?.seat ?? null : null;
}
