/**
 * Jokers 22's round opening panel on the dealer screen (#j22-open): the banker's stake and name,
 * then a player's name and wager per spot (spot 7 on the left, as on the felt), more players per
 * spot on demand; "Same as last" fills in the last round. The table checks every rule.
 */
import { $, field, make } from "/static/js/dom.js";
import { SEATS as SPOTS, SEATS_LEFT_TO_RIGHT } from "/static/js/felt.js";
import { OpeningForm, seatHeader } from "/static/js/opening.js";

/** Player rows the panel starts with (more on demand, up to the API's 7). */
const FIRST_SLOTS = 1;
const MAX_SLOTS = 7;

/**
 * @param {number} spot
 * @param {number} slot
 * @param {"player" | "amount"} name
 */
const slotInput = (spot, slot, name) =>
  /** @type {HTMLInputElement | null} */ (document.querySelector(`#j22-rows input[data-spot="${spot}"][data-slot="${slot}"][data-field="${name}"]`));

export class OpeningPanel extends OpeningForm {
  constructor() {
    super("j22-open", "j22-clear", "j22-repeat", "j22-error", "j22-open-round");
    $("j22-add-slot").addEventListener("click", () => this.addSlot());
  }

  /** The spot columns, then the first player rows. */
  build() {
    $("j22-spots").replaceChildren(seatHeader("Spot"));
    $("j22-rows").replaceChildren();
    this.slots = 0;
    while (this.slots < FIRST_SLOTS) this.addSlot();
  }

  /** One more player on every spot: a name row and a wager row. */
  addSlot() {
    if (this.slots >= MAX_SLOTS) return;
    const slot = this.slots++;
    for (const [name, what] of /** @type {const} */ ([["player", "Player"], ["amount", "Wager"]])) {
      const row = make("tr");
      row.dataset.slot = String(slot);
      const th = /** @type {HTMLTableCellElement} */ (make("th"));
      th.scope = "row";
      th.dataset.what = what;
      row.append(th);
      for (const spot of SEATS_LEFT_TO_RIGHT) {
        const td = make("td");
        const input = document.createElement("input");
        input.type = "text";
        input.autocomplete = "off";
        input.spellcheck = false;
        if (name === "amount") {
          input.inputMode = "numeric";
          input.pattern = "[0-9]*";
        } else {
          input.maxLength = 80;
        }
        input.dataset.spot = String(spot);
        input.dataset.slot = String(slot);
        input.dataset.field = name;
        input.setAttribute("aria-label", `Spot ${spot}, player ${slot + 1}: ${name === "player" ? "name" : "wager"}`);
        td.append(input);
        row.append(td);
      }
      $("j22-rows").append(row);
    }
    // With one player per spot the rows say "Player" and "Wager"; with more, which player.
    document.querySelectorAll("#j22-rows th[data-what]").forEach((th) => {
      const row = /** @type {HTMLElement} */ (th.parentElement);
      const what = /** @type {HTMLElement} */ (th).dataset.what ?? "";
      th.textContent = this.slots > 1 ? `${what} ${Number(row.dataset.slot) + 1}` : what;
    });
    /** @type {HTMLButtonElement} */ ($("j22-add-slot")).disabled = this.slots >= MAX_SLOTS;
  }

  /**
   * The POST /api/rounds body from the panel, or what is missing, naming the spot (0: the stake).
   * @returns {{body: any} | {error: string, place: number | null}}
   */
  read() {
    const stakeText = field("j22-stake").value.trim();
    if (!/^\d+$/.test(stakeText) || Number(stakeText) < 1) {
      return { error: "Banker's stake: a whole number of chips, 1 or more", place: 0 };
    }
    /** @type {Array<{spot: number, wagers: Array<{player: string, amount: number}>}>} */
    const spots = [];
    for (const spot of SPOTS) {
      /** @type {Array<{player: string, amount: number}>} */
      const wagers = [];
      for (let slot = 0; slot < this.slots; slot += 1) {
        const player = slotInput(spot, slot, "player")?.value.trim() ?? "";
        const amount = slotInput(spot, slot, "amount")?.value.trim() ?? "";
        if (!player && !amount) continue;
        if (!player) return { error: `Spot ${spot}, player ${slot + 1}: type the player's name for the wager of ${amount}`, place: spot };
        if (!/^\d+$/.test(amount) || Number(amount) < 1) {
          return { error: `Spot ${spot}, ${player}: the wager is a whole number of chips, 1 or more`, place: spot };
        }
        wagers.push({ player, amount: Number(amount) });
      }
      if (wagers.length) spots.push({ spot, wagers });
    }
    if (!spots.length) return { error: "No wagers: type a player's name and wager on at least one spot", place: -1 };
    const bankerName = field("j22-banker").value.trim();
    /** @type {{stake: number, player?: string}} */
    const banker = { stake: Number(stakeText) };
    if (bankerName) banker.player = bankerName;
    return { body: { banker, spots } };
  }

  /**
   * The API names the refused spot (`seat` of the refusal) or the body's place (`field`:
   * "spots[1].wagers[0]", "banker.stake").
   * @param {any} refusal
   * @param {any} body
   */
  refusedPlace(refusal, body) {
    const index = /^spots\[(\d+)\]/.exec(refusal.field ?? "");
    if (refusal.seat !== null && refusal.seat !== undefined) return refusal.seat;
    if (index) return body.spots[Number(index[1])]?.spot ?? null;
    return /^banker/.test(refusal.field ?? "") ? 0 : null;
  }

  /** @param {number | null} spot */
  markRefused(spot) {
    markRefused(spot);
  }

  clear() {
    document.querySelectorAll("#j22-rows input").forEach((input) => (/** @type {HTMLInputElement} */ (input).value = ""));
    field("j22-stake").value = "";
    field("j22-banker").value = "";
    $("j22-error").textContent = "";
    markRefused(null);
  }

  /** Fill the panel with the last round's stake and wagers (this screen's, else the table's). */
  repeat() {
    const state = this.state?.state;
    const last = this.lastOpened ?? (state?.spots?.length ? { banker: state.banker, spots: state.spots } : null);
    this.clear();
    if (!last) return;
    field("j22-stake").value = String(last.banker?.stake ?? "");
    field("j22-banker").value = last.banker?.player ?? "";
    for (const spot of last.spots ?? []) {
      (spot.wagers ?? []).forEach((/** @type {{player: string, amount: number}} */ w, /** @type {number} */ slot) => {
        while (slot >= this.slots && this.slots < MAX_SLOTS) this.addSlot();
        const name = slotInput(spot.spot, slot, "player");
        const amount = slotInput(spot.spot, slot, "amount");
        if (name && amount) {
          name.value = w.player;
          amount.value = String(w.amount);
        }
      });
    }
  }
}

/** @param {number | null} spot the refused spot's column, 0 for the stake, null for none */
function markRefused(spot) {
  document.querySelectorAll("#j22-open [data-spot]").forEach((node) => {
    node.classList.toggle("refused", spot !== null && Number(/** @type {HTMLElement} */ (node).dataset.spot) === spot);
  });
  field("j22-stake").classList.toggle("refused", spot === 0);
}
