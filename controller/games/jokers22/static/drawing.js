/**
 * The Jokers 22 table drawn into an <svg> from an engine state, as the felt is laid out: the
 * dealer's rail at the top with the banker's place in front of it (the banker's stake, cards and
 * total), seven spots in an arc below, spot 1 at the right end (the banker's left, where the
 * rotation starts). Each spot has its betting oval holding a chip per player per hand, the
 * hands' cards above it (a split spot shows its two hands side by side), and under it the spot's
 * wagers by player with each player's result once settled. The hand owed the next card glows;
 * the hand whose player must decide is outlined; the ACTION spot carries the ACTION puck. The
 * same drawing serves the dealer screen (live) and the supervisor's recall (replay step by step).
 *
 * Totals are counted from the cards as GAMES.md section 2 counts them (an ace 11 where that keeps
 * the hand at 21 or less, a joker with any other card a hard 21, JK+JK / A+A / JK+A a natural);
 * once settled, the settlement's own totals are shown instead.
 *
 * Test hooks: `g.spot[data-spot]` (classes in-round / idle / target / deciding / action);
 * `g.hand[data-spot][data-hand]` (class `next` when owed the next card, `deciding`, `doubled`,
 * `from-split`) with `data-cards` ("8H 8D") and `text.hand-total`; `g.chip[data-spot][data-hand]
 * [data-player]` (classes doubled / surrendered / deciding and, settled, win / lose / push and
 * part / uncovered for coverage) with `data-amount`; `text.wager-line[data-spot][data-player]`
 * with `tspan.net`; `g.banker` (class `next`) with `data-cards`, `text.hand-total`,
 * `text.banker-net`; the ACTION spot's name reads "ACTION SPOT n" on a gold plaque.
 */
import { parseCard } from "/static/js/cards.js";
import { signed } from "/static/js/dom.js";
import { SEATS as SPOTS, arcCentre, crop, drawFelt, prepare } from "/static/js/felt.js";
import { el, label } from "/static/js/svg.js";

const VIEW_ALL = "0 0 1000 560";
/** With the opening panel on screen: the spots and the banker, the felt's print cropped off. */
const VIEW_COMPACT = "0 0 1000 540";

const CARD_W = 34;
const CARD_H = 48;
const CHIP_R = 13;
/** Half the distance between a split spot's two hands (and their chips). */
const SPLIT_DX = 36;
/** The most the banker's cards may span. */
const BANKER_WIDTH = 150;
/** Where the hands' cards sit above the oval (bottom edge, relative to the spot centre). */
const CARDS_BOTTOM = -40;
/** Players' chips by their order on the spot: the original bettor first. */
const PLAYER_COLOURS = 4;

/**
 * The centre of a spot's betting oval on the arc: spot 1 at the right end.
 * @param {number} spot
 * @returns {[number, number]}
 */
function spotCentre(spot) {
  return arcCentre(spot, -300);
}

/** @typedef {{value: number, soft: boolean, natural: boolean, joker: boolean}} HandTotal */

/**
 * A hand's total as GAMES.md section 2 counts it.
 * @param {string[]} cards
 * @returns {HandTotal}
 */
export function handTotal(cards) {
  const faces = cards.map(parseCard).filter((f) => f !== null);
  const isJoker = (/** @type {any} */ f) => f.rank === "JK";
  const isAce = (/** @type {any} */ f) => f.rank === "A";
  if (faces.length === 2 && faces.every((f) => isJoker(f) || isAce(f))) {
    const aces = faces.filter(isAce).length;
    return { value: aces < 2 ? 21 : 12, soft: aces === 2, natural: true, joker: aces < 2 };
  }
  if (faces.some(isJoker)) return { value: faces.length >= 2 ? 21 : 0, soft: false, natural: false, joker: true };
  const hard = faces.reduce((sum, f) => sum + (isAce(f) ? 1 : Math.min(Number(f.rank) || 10, 10)), 0);
  if (faces.some(isAce) && hard + 10 <= 21) return { value: hard + 10, soft: true, natural: false, joker: false };
  return { value: hard, soft: false, natural: false, joker: false };
}

/**
 * A total in the words the table uses: "16", "soft 17", "natural"; "" for no cards.
 * @param {string[]} cards
 * @param {{total: number, soft?: boolean, natural?: boolean} | null} [settled] the settlement's count
 */
export function totalText(cards, settled = null) {
  if (!cards.length) return "";
  if (settled && typeof settled.total === "number") {
    if (settled.natural) return "natural";
    return settled.soft ? `soft ${settled.total}` : String(settled.total);
  }
  const t = handTotal(cards);
  if (t.natural) return "natural";
  if (t.joker && cards.length === 1) return "joker";
  return t.soft ? `soft ${t.value}` : String(t.value);
}

/**
 * @typedef {object} Jokers22Extras
 * @property {{spot?: number, hand?: number, banker?: boolean} | null} [target] who is owed the next card
 * @property {{spot?: number, hand?: number, player?: string} | null} [decision] who must decide now
 * @property {Array<{spot?: number, seat?: number, player?: string, net: number}>} [payouts] per player per spot
 * @property {any} [settlement] the round's settlement (GET /api/rounds/{n}), once settled
 * @property {number | null} [actionSpot] the ACTION spot, once the banker's second card named it
 */

export class Jokers22Drawing {
  /** @param {SVGSVGElement} svg an empty <svg>; the drawing owns it */
  constructor(svg) {
    this.svg = svg;
    prepare(svg, ["table-drawing", "j22-drawing"]);
    svg.setAttribute("aria-label", `The Jokers 22 table: the banker at the top, spots 1 to ${SPOTS.length}, spot 1 on the right`);
    this.drawFelt();
    this.banker = this.drawBanker();
    /** @type {Map<number, {group: SVGElement, hands: SVGElement, lines: SVGElement, name: SVGElement}>} */
    this.spots = new Map();
    const layer = el("g", { class: "spots" }, svg);
    for (const spot of SPOTS) this.spots.set(spot, this.drawSpot(spot, layer));
  }

  drawFelt() {
    const felt = drawFelt(this.svg);
    label("JOKERS 22", { x: 500, y: 196, class: "felt-title" }, felt);
    label("JOKER + JOKER PAYS 2 TO 1  \u00b7  NO BUST: CLOSEST TO 22", { x: 500, y: 222, class: "felt-rule" }, felt);
    label("BANKER STANDS ON HARD 17", { x: 500, y: 242, class: "felt-rule" }, felt);
    label("ROUND VOID: EVERY WAGER GOES BACK", { x: 500, y: 290, class: "void-mark" }, this.svg);
  }

  drawBanker() {
    const group = el("g", { class: "banker", transform: "translate(500 0)", "data-cards": "" }, this.svg);
    el("rect", { class: "banker-place", x: -170, y: 34, width: 340, height: 118, rx: 14 }, group);
    const title = label("BANKER", { x: 0, y: 56, class: "banker-title" }, group);
    const halo = el("rect", { class: "slot", x: -22, y: 64, width: CARD_W + 14, height: CARD_H + 14, rx: 6 }, group);
    const cards = el("g", { class: "hand-cards", transform: "translate(0 71)" }, group);
    const total = label("", { x: 0, y: 142, class: "hand-total" }, group);
    const net = label("", { x: 140, y: 98, class: "banker-net" }, group);
    return { group, title, halo, cards, total, net };
  }

  /**
   * @param {number} spot
   * @param {Element} layer
   */
  drawSpot(spot, layer) {
    const [x, y] = spotCentre(spot);
    const group = el("g", { class: "spot idle", "data-spot": spot, transform: `translate(${x.toFixed(1)} ${y.toFixed(1)})` }, layer);
    el("ellipse", { class: "oval", cx: 0, cy: 0, rx: 60, ry: 30 }, group);
    // The ACTION marker is a gold plaque under the oval, where the spot's name is printed.
    const puck = el("g", { class: "action-puck" }, group);
    el("rect", { x: -74, y: 35, width: 148, height: 22, rx: 11 }, puck);
    const name = label(`SPOT ${spot}`, { x: 0, y: 50, class: "seat-name" }, group);
    const hands = el("g", { class: "hands" }, group);
    const lines = el("g", { class: "wager-lines" }, group);
    return { group, hands, lines, name };
  }

  /** A new round is drawn from scratch anyway. */
  restart() {}

  /**
   * Crop the drawing (when it shares the screen with the opening panel), or show all.
   * @param {boolean} compact
   */
  setCompact(compact) {
    crop(this.svg, compact, VIEW_ALL, VIEW_COMPACT);
  }

  /**
   * Draw `engine` (the Jokers 22 engine state as in GET /api/state `.state`).
   * @param {any} engine
   * @param {Jokers22Extras} [extras]
   */
  render(engine, extras = {}) {
    const spots = new Map((engine?.spots ?? []).map((/** @type {any} */ s) => [s.spot, s]));
    const settlement = extras.settlement && extras.settlement.game === "jokers-22" ? extras.settlement : null;
    const settledSpots = new Map((settlement?.spots ?? []).map((/** @type {any} */ s) => [s.spot, s]));
    const target = extras.target ?? null;
    const decision = extras.decision ?? null;
    this.svg.classList.toggle("void", engine?.phase === "void");
    this.renderBanker(engine, target, settlement);
    for (const [number, view] of this.spots) {
      const spot = spots.get(number);
      const g = view.group;
      g.classList.toggle("idle", !spot);
      g.classList.toggle("in-round", Boolean(spot));
      g.classList.toggle("target", Boolean(spot) && target?.spot === number);
      g.classList.toggle("deciding", Boolean(spot) && decision?.spot === number);
      const action = Boolean(spot) && extras.actionSpot === number;
      g.classList.toggle("action", action);
      view.name.textContent = action ? `ACTION SPOT ${number}` : `SPOT ${number}`;
      const key = JSON.stringify([spot, settledSpots.get(number), target, decision, extras.payouts]);
      if (view.group.dataset.key === key) continue;
      view.group.dataset.key = key;
      this.drawHands(view.hands, spot, settledSpots.get(number), target, decision);
      this.drawLines(view.lines, spot, extras.payouts ?? []);
    }
  }

  /**
   * @param {any} engine
   * @param {any} target
   * @param {any} settlement
   */
  renderBanker(engine, target, settlement) {
    const b = this.banker;
    const cards = /** @type {string[]} */ (engine?.banker_cards ?? []);
    const inRound = (engine?.spots ?? []).length > 0;
    const who = engine?.banker?.player ? ` \u00b7 ${engine.banker.player}` : "";
    b.title.textContent = inRound ? `BANKER${who} \u00b7 STAKE ${engine.banker.stake}` : "BANKER";
    b.group.dataset.cards = cards.join(" ");
    b.group.classList.toggle("next", Boolean(target?.banker));
    b.group.classList.toggle("idle", !inRound);
    this.drawCards(b.cards, cards, BANKER_WIDTH);
    // The glowing slot marks where the banker's next card goes.
    b.halo.setAttribute("x", (this.nextSlot(cards.length, BANKER_WIDTH) - 7).toFixed(1));
    b.total.textContent = totalText(cards, settlement?.banker ?? null);
    const net = settlement?.banker?.net;
    b.net.textContent = typeof net === "number" ? signed(net) : "";
    b.net.classList.toggle("win", (net ?? 0) > 0);
    b.net.classList.toggle("loss", (net ?? 0) < 0);
  }

  /**
   * The spot's hands: cards, total and a chip per stake. A split spot's hands sit side by side.
   * @param {SVGElement} layer
   * @param {any} spot the spot's engine state, or undefined when it has no wagers
   * @param {any} settled the spot in the settlement, once settled
   * @param {any} target
   * @param {any} decision
   */
  drawHands(layer, spot, settled, target, decision) {
    layer.replaceChildren();
    if (!spot) return;
    const hands = /** @type {any[]} */ (spot.hands ?? []);
    const order = (/** @type {any[]} */ (spot.wagers ?? [])).map((w) => w.player);
    hands.forEach((hand, i) => {
      const number = i + 1;
      const dx = hands.length > 1 ? (i === 0 ? SPLIT_DX : -SPLIT_DX) : 0;
      const width = hands.length > 1 ? 2 * SPLIT_DX - 6 : 120;
      const cards = /** @type {string[]} */ (hand.cards ?? []);
      const settledHand = settled?.hands?.find((/** @type {any} */ h) => h.hand === number) ?? null;
      const isNext = target?.spot === spot.spot && (target?.hand ?? 1) === number;
      const isDeciding = decision?.spot === spot.spot && (decision?.hand ?? 1) === number;
      const g = el("g", {
        class: "hand",
        "data-spot": spot.spot,
        "data-hand": number,
        "data-cards": cards.join(" "),
        transform: `translate(${dx} 0)`,
      }, layer);
      g.classList.toggle("next", isNext);
      g.classList.toggle("deciding", isDeciding);
      g.classList.toggle("doubled", Boolean(hand.doubled));
      g.classList.toggle("from-split", Boolean(hand.from_split));
      const row = el("g", { class: "hand-cards", transform: `translate(0 ${CARDS_BOTTOM - CARD_H})` }, g);
      this.drawCards(row, cards, width);
      if (isNext) {
        el("rect", {
          class: "slot",
          x: (this.nextSlot(cards.length, width) - 5).toFixed(1),
          y: CARDS_BOTTOM - CARD_H - 5,
          width: CARD_W + 10,
          height: CARD_H + 10,
          rx: 6,
        }, g);
      }
      if (isDeciding) {
        const w = Math.max(width, CARD_W) + 10;
        el("rect", { class: "decide-frame", x: -w / 2, y: CARDS_BOTTOM - CARD_H - 26, width: w, height: CARD_H + 78, rx: 10 }, g);
      }
      label(totalText(cards, settledHand), { x: 0, y: CARDS_BOTTOM - CARD_H - 8, class: "hand-total" }, g);
      this.drawChips(g, spot.spot, number, hand, order, settledHand, decision);
    });
  }

  /**
   * One chip per stake on the hand, side by side in the oval.
   * @param {SVGElement} g the hand's group
   * @param {number} spot
   * @param {number} hand
   * @param {any} state the hand's engine state
   * @param {string[]} order the spot's players in wager order
   * @param {any} settledHand the hand in the settlement, once settled
   * @param {any} decision
   */
  drawChips(g, spot, hand, state, order, settledHand, decision) {
    const stakes = /** @type {any[]} */ (state.stakes ?? []);
    const step = Math.min(2 * CHIP_R + 2, stakes.length > 1 ? 52 / (stakes.length - 1) : 0);
    stakes.forEach((stake, i) => {
      const x = (i - (stakes.length - 1) / 2) * step;
      const chip = el("g", {
        class: `chip p${Math.max(0, order.indexOf(stake.player)) % PLAYER_COLOURS}`,
        "data-spot": spot,
        "data-hand": hand,
        "data-player": stake.player,
        "data-amount": stake.amount,
        transform: `translate(${x.toFixed(1)} 0)`,
      }, g);
      el("circle", { class: "chip-body", r: CHIP_R }, chip);
      label(String(stake.amount), { x: 0, y: 4, class: "chip-amount" }, chip);
      chip.classList.toggle("doubled", Boolean(stake.doubled));
      chip.classList.toggle("surrendered", Boolean(stake.surrendered));
      chip.classList.toggle("deciding", decision?.spot === spot && (decision?.hand ?? 1) === hand && decision?.player === stake.player);
      if (stake.doubled) label("\u00d72", { x: 0, y: -CHIP_R - 3, class: "chip-mark" }, chip);
      if (stake.surrendered) label("\u00bd", { x: 0, y: -CHIP_R - 3, class: "chip-mark" }, chip);
      const result = settledHand?.wagers?.find((/** @type {any} */ w) => w.player === stake.player);
      let title = `${stake.player}: ${stake.amount}${stake.doubled ? " (doubled)" : ""}${stake.surrendered ? " (surrendered)" : ""}`;
      if (result) {
        chip.classList.add(result.net > 0 ? "win" : result.net < 0 ? "lose" : "push");
        chip.classList.toggle("uncovered", result.covered === 0);
        chip.classList.toggle("part", result.covered > 0 && result.covered < result.amount);
        title += `, ${result.result}, ${result.covered} covered, ${signed(result.net)}`;
      }
      el("title", {}, chip).textContent = title;
    });
  }

  /**
   * Under the oval: each player on the spot with the original wager and, settled, the net.
   * @param {SVGElement} layer
   * @param {any} spot
   * @param {Array<{spot?: number, seat?: number, player?: string, net: number}>} payouts
   */
  drawLines(layer, spot, payouts) {
    layer.replaceChildren();
    if (!spot) return;
    (/** @type {any[]} */ (spot.wagers ?? [])).forEach((wager, i) => {
      const line = label("", { x: 0, y: 70 + i * 18, class: "wager-line", "data-spot": spot.spot, "data-player": wager.player }, layer);
      const swatch = el("tspan", { class: `swatch p${i % PLAYER_COLOURS}` }, line);
      swatch.textContent = "\u25cf ";
      el("tspan", { class: "who" }, line).textContent = `${wager.player} ${wager.amount}`;
      const paid = payouts.find((p) => (p.spot ?? p.seat) === spot.spot && p.player === wager.player);
      if (paid) {
        const net = el("tspan", { class: `net ${paid.net > 0 ? "win" : paid.net < 0 ? "loss" : ""}`, dx: 6 }, line);
        net.textContent = signed(paid.net);
      }
    });
  }

  /**
   * The distance between cards of a hand of `n` cards that must fit in `width`.
   * @param {number} n
   * @param {number} width
   */
  step(n, width) {
    if (n <= 1) return CARD_W + 4;
    return Math.min(CARD_W + 4, (width - CARD_W) / (n - 1));
  }

  /**
   * The x of the left edge of the first of `n` cards laid centred in `width`.
   * @param {number} n
   * @param {number} width
   */
  left(n, width) {
    return n ? -((n - 1) * this.step(n, width) + CARD_W) / 2 : 0;
  }

  /**
   * Where the next card of a hand of `n` cards will lie (its left edge), once the row re-centres.
   * @param {number} n
   * @param {number} width
   */
  nextSlot(n, width) {
    return this.left(n + 1, width) + n * this.step(n + 1, width);
  }

  /**
   * Cards overlapping as they lie on the felt, each showing its corner index.
   * @param {SVGElement} row
   * @param {string[]} cards
   * @param {number} width the most the row may span
   */
  drawCards(row, cards, width) {
    const step = this.step(cards.length, width);
    const left = this.left(cards.length, width);
    row.replaceChildren();
    cards.forEach((text, i) => {
      const face = parseCard(text);
      const g = el("g", { class: `mini-card ${face ? face.colour : "back"}`, transform: `translate(${(left + i * step).toFixed(1)} 0)` }, row);
      el("rect", { width: CARD_W, height: CARD_H, rx: 4 }, g);
      if (face) {
        const rank = label(face.rank, { x: 3, y: 19, class: "corner-rank" }, g);
        // "10" squeezed to one index's width: a split hand's cards leave only a strip showing.
        if (face.rank.length > 1) {
          rank.setAttribute("textLength", "17");
          rank.setAttribute("lengthAdjust", "spacingAndGlyphs");
        }
        label(face.symbol, { x: 3, y: 38, class: "corner-suit" }, g);
        g.setAttribute("aria-label", face.name);
      }
    });
  }
}
