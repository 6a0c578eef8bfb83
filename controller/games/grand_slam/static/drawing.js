/**
 * The Grand Slam table drawn into an <svg> from an engine state, as the felt is printed: the
 * dealer's rail at the top, seats 1 to 7 in an arc below it, seat 1 at the right end (the
 * dealer's left, the players' right). Each seat has a little baseball diamond: home plate
 * nearest the player, first base on the player's right, second towards the dealer, third on
 * the left. Wagers are chips standing on the base where their stack stands; out wagers slide to
 * the dugout beside home plate and fade. The same drawing serves the dealer screen (live) and
 * the supervisor's recall (replay step by step): chips are kept between renders and glide to
 * their new base, so a card's effect is seen as it happens.
 *
 * Test hooks: each base is `g[data-seat][data-base]` (first|second|third|home|out) with
 * `data-wagers` = the wagers standing there, bottom first, space-separated ("" when none), and
 * the class `next` on the base that receives the next card. Seats are `g.seat[data-seat]`.
 */
import { parseCard } from "/static/js/cards.js";
import { SEATS, arcCentre, crop, drawFelt, prepare } from "/static/js/felt.js";
import { el, label } from "/static/js/svg.js";
import { POSITIONS } from "./bases.js";

/** Diamond half-size (centre to base) and chip geometry, in viewBox units. */
const D = 48;
const CHIP_R = 17;
const CHIP_RISE = 6;
/** Where each position sits relative to the seat's diamond centre. */
const SPOT = /** @type {Record<string, [number, number]>} */ ({
  first: [D, 0], second: [0, -D], third: [-D, 0], home: [0, D], out: [-D - 10, D + 14],
});

const VIEW_ALL = "0 0 1000 560";
// From just above a GRAND SLAM over the seats at the arc's ends to the net under seat 4.
const VIEW_SEATS = "0 132 1000 418";

/**
 * The centre of a seat's diamond on the arc: seat 1 at the right end.
 * @param {number} seat
 * @returns {[number, number]}
 */
function seatCentre(seat) {
  return arcCentre(seat, -330);
}

/**
 * @typedef {object} DrawExtras
 * @property {{seat?: number, base?: string, blind?: boolean} | null} [target] the base owed the next card
 * @property {Array<{seat: number, net: number}>} [payouts] the settled round's result per seat
 * @property {boolean} [revealBlind] show the blind hand's cards face up (recall), not backs
 */

export class GrandSlamDrawing {
  /** @param {SVGSVGElement} svg an empty <svg>; the drawing owns it */
  constructor(svg) {
    this.svg = svg;
    prepare(svg, ["table-drawing"]);
    svg.setAttribute("aria-label", `The Grand Slam table: seats 1 to ${SEATS.length}, seat 1 on the right`);
    /** @type {Map<string, SVGElement>} chips by "seat:wager" */
    this.chips = new Map();
    /** the bets the chips were laid for: a new round starts with fresh chips, not sliding ones */
    this.betsKey = "";
    /** @type {number | undefined} */
    this.restackTimer = undefined;
    this.drawFelt();
    /** @type {Map<number, {group: SVGElement, bases: Record<string, SVGElement>, amounts: Record<string, SVGElement>, cards: SVGElement, badge: SVGElement, slam: SVGElement, puck: SVGElement}>} */
    this.seats = new Map();
    const seatLayer = el("g", { class: "seats" }, svg);
    this.chipLayer = el("g", { class: "chips" }, svg);
    this.amountLayer = el("g", { class: "amounts" }, svg);
    for (const seat of SEATS) this.seats.set(seat, this.drawSeat(seat, seatLayer));
  }

  drawFelt() {
    // A half-moon table: the dealer's straight edge at the top, the padded rail round the seats.
    const felt = drawFelt(this.svg);
    el("path", { class: "print-line", d: "M 60 110 A 560 560 0 0 0 940 110" }, felt);
    label("DEALER", { x: 500, y: 56, class: "dealer-mark" }, felt);
    label("GRAND SLAM", { x: 500, y: 118, class: "felt-title" }, felt);
    label("HOME PLATE PAYS 1 TO 1  \u00b7  A 4 ON FIRST BASE IS A GRAND SLAM", { x: 500, y: 150, class: "felt-rule" }, felt);
    label("3 OUT INSURANCE PAYS 15 TO 1", { x: 500, y: 172, class: "felt-rule" }, felt);
    label("ROUND VOID: EVERY WAGER GOES BACK", { x: 500, y: 205, class: "void-mark" }, this.svg);
  }

  /** The next render lays fresh chips (a recalled round starts at its opening), not sliding ones. */
  restart() {
    this.betsKey = "";
  }

  /**
   * Crop the drawing to the seats (when it shares the screen with the wager panel), or show all.
   * @param {boolean} compact
   */
  setCompact(compact) {
    crop(this.svg, compact, VIEW_ALL, VIEW_SEATS);
  }

  /**
   * @param {number} seat
   * @param {Element} layer
   */
  drawSeat(seat, layer) {
    const [x, y] = seatCentre(seat);
    const group = el("g", { class: "seat idle", "data-seat": seat, transform: `translate(${x.toFixed(1)} ${y.toFixed(1)})` }, layer);
    el("path", { class: "baseline", d: `M 0 ${D} L ${D} 0 L 0 ${-D} L ${-D} 0 Z` }, group);
    /** @type {Record<string, SVGElement>} */
    const bases = {};
    for (const pos of POSITIONS) {
      const [bx, by] = SPOT[pos];
      const g = el("g", { class: `base base-${pos}`, "data-seat": seat, "data-base": pos, "data-wagers": "" }, group);
      el("circle", { class: "halo", cx: bx, cy: by, r: CHIP_R + 10 }, g);
      if (pos === "home") {
        el("path", { class: "bag", d: `M ${bx - 14} ${by - 12} h 28 v 12 l -14 13 l -14 -13 Z` }, g);
      } else if (pos === "out") {
        el("circle", { class: "dugout", cx: bx, cy: by, r: CHIP_R + 3 }, g);
        label("OUT", { x: bx, y: by - CHIP_R - 8, class: "out-caption" }, g);
      } else {
        el("rect", { class: "bag", x: bx - 13, y: by - 13, width: 26, height: 26, rx: 3, transform: `rotate(45 ${bx} ${by})` }, g);
      }
      bases[pos] = g;
    }
    const puck = el("g", { class: "puck" }, group);
    el("circle", { cx: 0, cy: 0, r: 22 }, puck);
    label("BLIND", { x: 0, y: 5, class: "puck-text" }, puck);
    const slam = label("GRAND SLAM", { x: 0, y: -D - 26, class: "slam" }, group);
    label(`SEAT ${seat}`, { x: 0, y: D + 40, class: "seat-name" }, group);
    const cards = el("g", { class: "seat-cards", transform: `translate(0 ${D + 54})` }, group);
    const badge = label("", { x: 0, y: D + 124, class: "badge" }, group);
    /** @type {Record<string, SVGElement>} */
    const amounts = {};
    for (const pos of POSITIONS) {
      const [bx, by] = SPOT[pos];
      amounts[pos] = label("", { x: x + bx, y: y + by, class: `amount amount-${pos}` }, this.amountLayer);
    }
    return { group, bases, amounts, cards, badge, slam, puck };
  }

  /**
   * Draw `engine` (the engine state as in GET /api/state `.state`).
   * @param {any} engine
   * @param {DrawExtras} [extras]
   */
  render(engine, extras = {}) {
    const seats = new Map((engine?.seats ?? []).map((/** @type {any} */ s) => [s.bet.seat, s]));
    const blind = engine?.blind ?? null;
    const blindSeat = blind?.seat ?? null;
    const key = JSON.stringify((engine?.seats ?? []).map((/** @type {any} */ s) => s.bet));
    if (key !== this.betsKey) {
      this.chips.forEach((chip) => chip.remove());
      this.chips.clear();
      this.betsKey = key;
    }
    this.svg.classList.toggle("void", engine?.phase === "void");
    const target = extras.target && extras.target.seat ? extras.target : null;
    const nets = new Map((extras.payouts ?? []).map((p) => [p.seat, p.net]));
    /** @type {Set<string>} */
    const seen = new Set();
    for (const [seat, view] of this.seats) {
      const state = seats.get(seat);
      const isBlind = seat === blindSeat;
      view.group.classList.toggle("idle", !state && !isBlind);
      view.group.classList.toggle("in-round", Boolean(state));
      view.group.classList.toggle("blind", isBlind);
      view.group.classList.toggle("target", target?.seat === seat);
      view.group.classList.toggle("grand-slam", Boolean(state?.grand_slam));
      for (const pos of POSITIONS) {
        const standing = /** @type {string[]} */ (state?.stacks?.[pos] ?? []);
        const base = view.bases[pos];
        base.dataset.wagers = standing.join(" ");
        base.classList.toggle("occupied", standing.length > 0);
        base.classList.toggle("next", target?.seat === seat && target?.base === pos);
        const amount = standing.reduce((sum, w) => sum + (state.bet.wagers[w] ?? 0), 0);
        const [bx, by] = SPOT[pos];
        const text = view.amounts[pos];
        text.textContent = standing.length ? String(amount) : "";
        const lift = pos === "out" ? 0 : (standing.length - 1) * CHIP_RISE;
        const [x, y] = seatCentre(seat);
        text.setAttribute("x", (x + bx).toFixed(1));
        text.setAttribute("y", (y + by - lift + 5).toFixed(1));
        standing.forEach((wager, i) => {
          seen.add(`${seat}:${wager}`);
          this.placeChip(seat, wager, pos, pos === "out" ? 0 : i);
        });
      }
      this.drawCards(view.cards, isBlind ? blind.cards : state?.cards ?? [], isBlind && !extras.revealBlind);
      const net = nets.get(seat);
      view.badge.textContent = net === undefined ? "" : net > 0 ? `+${net}` : net < 0 ? `\u2212${-net}` : "0";
      view.badge.classList.toggle("win", (net ?? 0) > 0);
      view.badge.classList.toggle("loss", (net ?? 0) < 0);
    }
    for (const [id, chip] of this.chips) {
      if (!seen.has(id)) {
        chip.remove();
        this.chips.delete(id);
      }
    }
    // Restack once the chips have glided: moving a node in the DOM would cut its glide short.
    clearTimeout(this.restackTimer);
    this.restackTimer = window.setTimeout(() => this.restack(), 600);
  }

  /** Draw each stack's chips bottom first, so the top chip (with the amount) is on top. */
  restack() {
    const chips = [...this.chipLayer.children];
    const level = (/** @type {Element} */ c) => Number(/** @type {SVGElement} */ (c).dataset.level);
    const sorted = [...chips].sort((a, b) => level(a) - level(b));
    if (sorted.some((c, i) => c !== chips[i])) this.chipLayer.append(...sorted);
  }

  /**
   * Put the chip of `seat`'s `wager` at `pos`, `level` chips up its stack; an existing chip glides.
   * @param {number} seat
   * @param {string} wager
   * @param {string} pos
   * @param {number} level
   */
  placeChip(seat, wager, pos, level) {
    const id = `${seat}:${wager}`;
    let chip = this.chips.get(id);
    if (!chip) {
      chip = el("g", { class: `chip chip-${wager}`, "data-seat": seat, "data-wager": wager });
      el("circle", { class: "chip-body", r: CHIP_R }, chip);
      el("circle", { class: "chip-ring", r: CHIP_R - 4 }, chip);
      this.chips.set(id, chip);
      this.chipLayer.append(chip);
    }
    const [x, y] = seatCentre(seat);
    const [bx, by] = SPOT[pos];
    chip.style.transform = `translate(${(x + bx).toFixed(1)}px, ${(y + by - level * CHIP_RISE).toFixed(1)}px)`;
    chip.classList.toggle("out", pos === "out");
    chip.classList.toggle("home", pos === "home");
    chip.dataset.level = String(level);
  }

  /**
   * @param {SVGElement} row
   * @param {string[]} cards
   * @param {boolean} faceDown
   */
  drawCards(row, cards, faceDown) {
    const key = `${faceDown}:${cards.join(",")}`;
    if (row.dataset.cards === key) return;
    row.dataset.cards = key;
    row.replaceChildren();
    const w = 32;
    const gap = 4;
    const left = -((cards.length * (w + gap) - gap) / 2);
    cards.forEach((text, i) => {
      const face = faceDown ? null : parseCard(text);
      const g = el("g", { class: `mini-card ${face ? face.colour : "back"}`, transform: `translate(${left + i * (w + gap)} 0)` }, row);
      el("rect", { width: w, height: 44, rx: 4 }, g);
      if (face) {
        label(face.rank, { x: w / 2, y: 19, class: "mini-rank" }, g);
        label(face.symbol, { x: w / 2, y: 39, class: "mini-suit" }, g);
        g.setAttribute("aria-label", face.name);
      }
    });
  }
}
