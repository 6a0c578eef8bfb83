/**
 * What every game's opening panel on the dealer screen shares: its form (hidden while a round is
 * open), the "Clear" and "Same as last" buttons, the body it last opened, and the header row of a
 * column per seat of the table. A game's panel extends it with build(), open(), clear(), repeat().
 */
import { $, make } from "./dom.js";
import { SEATS_LEFT_TO_RIGHT } from "./felt.js";

export class OpeningForm {
  /**
   * @param {string} form the panel's form id
   * @param {string} clear its "Clear" button's id
   * @param {string} repeat its "Same as last" button's id
   */
  constructor(form, clear, repeat) {
    this.form = form;
    /** @type {any} the body of the last round this screen opened, for "Same as last" */
    this.lastOpened = null;
    /** @type {any} the table's state last shown */
    this.state = null;
    this.build();
    $(form).addEventListener("submit", (ev) => void this.open(/** @type {SubmitEvent} */ (ev)));
    $(clear).addEventListener("click", () => this.clear());
    $(repeat).addEventListener("click", () => this.repeat());
  }

  /**
   * @param {boolean} openable a round may be opened now
   * @param {any} state
   */
  show(openable, state) {
    this.state = state;
    $(this.form).hidden = !openable;
  }

  /** Draw the panel (again when the table's seats change). */
  build() {}

  /** @param {SubmitEvent} ev */
  async open(ev) {
    ev.preventDefault();
  }

  clear() {}

  repeat() {}
}

/**
 * The header row: an empty corner, then a column per seat of the table, left to right.
 * @param {"Seat" | "Spot"} word what the game calls a place at the table
 */
export function seatHeader(word = "Seat") {
  const head = make("tr");
  head.append(make("td"));
  for (const seat of SEATS_LEFT_TO_RIGHT) {
    const th = /** @type {HTMLTableCellElement} */ (make("th", `${word} ${seat}`));
    th.scope = "col";
    th.dataset[word.toLowerCase()] = String(seat);
    head.append(th);
  }
  return head;
}
