/**
 * Baseball poker's hand opening panel on the dealer screen (#bb-open): each player's stack under
 * their seat (seat 7 on the left, as on the felt; empty: nobody plays); "Same as last" fills in
 * the last hand's players with the stacks they finished it with. The table checks every rule.
 */
import { $, chipInput, make } from "/static/js/dom.js";
import { SEATS_LEFT_TO_RIGHT } from "/static/js/felt.js";
import { OpeningForm, seatHeader } from "/static/js/opening.js";

/** @returns {NodeListOf<HTMLInputElement>} */
const stackInputs = () => document.querySelectorAll("#bb-rows input[data-field=stack]");

export class OpeningPanel extends OpeningForm {
  constructor() {
    super("bb-open", "bb-clear", "bb-repeat", "bb-error", "bb-open-round");
  }

  /** The seat columns and one row of stacks. */
  build() {
    const row = make("tr");
    const name = /** @type {HTMLTableCellElement} */ (make("th", "Stack"));
    name.scope = "row";
    row.append(name);
    for (const seat of SEATS_LEFT_TO_RIGHT) {
      const td = make("td");
      td.append(chipInput({ seat: String(seat), field: "stack" }, `Seat ${seat}: the player's stack (empty: nobody plays)`));
      row.append(td);
    }
    $("bb-seats").replaceChildren(seatHeader());
    $("bb-rows").replaceChildren(row);
  }

  /**
   * The POST /api/rounds body from the panel, or what is wrong, naming the seat (0: none).
   * @returns {{body: any} | {error: string, place: number | null}}
   */
  read() {
    /** @type {Array<{seat: number, stack: number}>} */
    const players = [];
    for (const input of stackInputs()) {
      const seat = Number(input.dataset.seat);
      const text = input.value.trim();
      if (!text) continue;
      if (!/^\d+$/.test(text) || Number(text) < 1) return { error: `Seat ${seat}: the stack is a whole number of chips, 1 or more`, place: seat };
      players.push({ seat, stack: Number(text) });
    }
    if (players.length < 2) return { error: "A hand needs two players or more: type each player's stack under their seat", place: 0 };
    return { body: { players: players.sort((a, b) => a.seat - b.seat) } };
  }

  /**
   * The API names the refused seat (`seat` of the refusal) or the body's place (`field`: "players[1]").
   * @param {any} refusal
   * @param {any} body
   */
  refusedPlace(refusal, body) {
    const index = /^players\[(\d+)\]/.exec(refusal.field ?? "");
    return refusal.seat ?? (index ? body.players[Number(index[1])]?.seat ?? null : null);
  }

  /** @param {number | null} seat */
  markRefused(seat) {
    markRefused(seat);
  }

  clear() {
    stackInputs().forEach((input) => (input.value = ""));
    $("bb-error").textContent = "";
    markRefused(0);
  }

  /**
   * Fill the panel with the last hand's players and the stacks they finished it with (the chips
   * in front of them now): from the settled hand on the table, else as this screen last opened it.
   */
  repeat() {
    const state = this.state;
    const settled = state?.settlement ?? null;
    /** @type {Array<{seat: number, stack: number}>} */
    const players = settled
      ? (settled.players ?? []).map((/** @type {any} */ p) => ({ seat: p.seat, stack: p.stack + p.net }))
      : this.lastOpened?.players ?? state?.state?.players ?? [];
    this.clear();
    for (const p of players) {
      const input = /** @type {HTMLInputElement | null} */ (document.querySelector(`#bb-rows input[data-seat="${p.seat}"]`));
      if (input && p.stack > 0) input.value = String(p.stack);
    }
  }
}

/** @param {number} seat the refused seat's column (0: none) */
function markRefused(seat) {
  document.querySelectorAll("#bb-open [data-seat]").forEach((node) => {
    node.classList.toggle("refused", Number(/** @type {HTMLElement} */ (node).dataset.seat) === seat);
  });
}
