/**
 * What every game's opening panel on the dealer screen shares: its form (hidden while a round is
 * open), the "Clear" and "Same as last" buttons, the body it last opened, and the header row of a
 * column per seat of the table, and opening the round: the body read, the panel's or the table's
 * refusal shown in its words with its place marked. A game's panel extends it with build(), read(),
 * refusedPlace(), clear(), repeat() and markRefused().
 */
import { post } from "./api.js";
import { $, attempt, make } from "./dom.js";
import { SEATS_LEFT_TO_RIGHT } from "./felt.js";

export class OpeningForm {
  /**
   * @param {string} form the panel's form id
   * @param {string} clear its "Clear" button's id
   * @param {string} repeat its "Same as last" button's id
   * @param {string} error where a refusal is said
   * @param {string} button its "Open round" button's id
   */
  constructor(form, clear, repeat, error, button) {
    this.form = form;
    this.error = error;
    this.button = button;
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

  /**
   * Open a round with the body the panel reads: a refusal (the panel's own, or the table's) is said
   * in its words and its place marked; the button is off while the table answers; once the round
   * is open, its body is kept for "Same as last" and the panel cleared.
   * @param {SubmitEvent} ev
   */
  async open(ev) {
    ev.preventDefault();
    const error = $(this.error);
    const read = this.read();
    this.markRefused(null);
    if ("error" in read) {
      error.textContent = read.error;
      this.markRefused(read.place);
      return;
    }
    const button = /** @type {HTMLButtonElement} */ ($(this.button));
    button.disabled = true;
    const refusal = await attempt(post("/api/rounds", read.body), error);
    button.disabled = false;
    if (refusal === null) {
      this.lastOpened = read.body;
      this.clear();
    } else {
      this.markRefused(this.refusedPlace(refusal, read.body));
    }
  }

  /**
   * The round's opening body, or why not and the place (seat or spot) to mark.
   * @returns {{body: any} | {error: string, place: number | null}}
   */
  read() {
    return { error: "this game's panel reads no opening body", place: null };
  }

  /**
   * The place a table's refusal names: its seat, else the one its `field` points into the body.
   * @param {any} refusal
   * @param {any} body
   * @returns {number | null}
   */
  refusedPlace(refusal, body) {
    void body;
    return refusal.seat ?? null;
  }

  /**
   * Mark the place a refusal names, and only it (null: none).
   * @param {number | null} place
   */
  markRefused(place) {
    void place;
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
