/**
 * The Baseball poker table drawn into an <svg> from an engine state, as the dealer sees it from
 * behind the rail: the pot (and the side pots once a player is all in), the street and any
 * community card in the middle; the table's seats (7, or 8) in an arc below, seat 1 at the right
 * end (the dealer's left, where each dealing pass starts). Each seat shows its cards in the order dealt:
 * up cards face up, down cards as backs marked with a small down arrow (the dealer does not see
 * them either), turned over only at a showdown. Wild cards (the table's wild ranks: 3s and 9s by
 * default) carry a gold W badge on the corner; the extra card a face-up 4 earns is tagged EXTRA.
 * Under the cards: the stack, the chips in the pot, and FOLDED, ALL IN or, for the player to act,
 * TO ACT with the amount to call. At the showdown each hand shown lays out its best five (a wild
 * card written as the card it stands for, still badged) and its category, the winners framed,
 * each pot with whom it goes to. A rainout leaves a red banner in the middle for the rest of the
 * hand. The same drawing serves the dealer screen (live) and the supervisor's recall (replay
 * step by step).
 *
 * The seats' layout follows the table's seat count (felt.js `SEATS`): up to 7 seats on the felt's
 * arc, each within a frame 124 units wide; 8 seats spaced evenly across the felt (the arc's
 * angles would crowd its ends) in narrower frames (cards 32 wide, the best five closer, the
 * words squeezed to the frame when longer): no seat's drawing reaches into its neighbour's.
 *
 * Who acts and where the next card goes are read from the engine state (`betting.pending`,
 * `ask`, `target`); the live pots follow the engine's own rule for side pots (each level of
 * chips put in up to an all-in is a pot for the players still in who put that much).
 *
 * Test hooks: `g.bb-seat[data-seat]` (classes idle / in-hand / folded / all-in / acting / target /
 * winner / shown) with `data-stack`, `data-put`; inside it `g.bb-card[data-face="up|down"]
 * [data-street]` (classes wild / extra / hidden / revealed; `data-card` only on a card the dealer
 * can see), `text.seat-stack`, `text.seat-status` ("TO ACT · CALL 3", "FOLDED", "ALL IN"),
 * `g.best[data-cards]` (its `g.bb-card.wild` the stand-ins), `text.hand-category`, `text.seat-net`;
 * in the middle `text.street`, `text.pot-total[data-amount]`, `text.pot-line[data-pot][data-amount]
 * [data-eligible]` (settled: `data-winners`), `g.community[data-cards]`, `g.rainout` (class shown).
 */
import { parseCard } from "/static/js/cards.js";
import { signed } from "/static/js/dom.js";
import { SEATS, arcCentre, crop, drawFelt, prepare } from "/static/js/felt.js";
import { el, label } from "/static/js/svg.js";

const VIEW_ALL = "0 0 1000 560";
/** With the opening panel on screen: the felt's print cropped off the bottom. */
const VIEW_COMPACT = "0 0 1000 545";

const CARD_W = 38;
const CARD_H = 52;
/** The best five at the showdown, smaller, under the seat's name (fanned: each shows its index). */
const BEST_W = 26;
const BEST_H = 40;
/** More than 4 cards lie in two rows (the first half, then the rest), one above the other with
 * room between for the EXTRA tag: each card shows a strip as wide as at 4 cards to a row, so 8
 * cards (7 and an extra one) read as easily as 4. */
const ROW_DROP = CARD_H + 15;
/** Cards per row before the cards lie in two rows. */
const ONE_ROW = 4;
/** Where a seat's cards sit (top edge) relative to the seat's centre. */
const CARDS_TOP = -150;
/**
 * @typedef {object} SeatLayout how wide a seat is drawn, for the table's seat count
 * @property {number} half half the width every seat keeps to (its frame): seats never reach into one another
 * @property {number} rowWidth the most a seat's cards may span
 * @property {number} cardW a seat's card width
 * @property {number} bestW the width of a card of the best five
 * @property {number} bestGap the gap between two cards of the best five (less than 0: fanned, each index in sight)
 */

/** @type {SeatLayout} up to 7 seats, on the arc: at 7 the ends' centres are 129 units apart */
const WIDE = { half: 62, rowWidth: 122, cardW: CARD_W, bestW: BEST_W, bestGap: -3 };
/** @type {SeatLayout} 8 seats, spread evenly: centres EVEN_STEP apart, 6 units between frames */
const NARROW = { half: 58, rowWidth: 112, cardW: 32, bestW: 24, bestGap: -3 };
/** The distance between two seats' centres at 8 seats (the felt is 980 units wide). */
const EVEN_STEP = 122;
/** The arc the seats sit on: its centre's height and its radius (as felt.js `arcCentre`). */
const ARC_TOP = -316;
const ARC_RADIUS = 700;

/** The rainout banner's width, between seats 2 and 6. */
const RAIN_WIDTH = 450;

const STREETS = /** @type {Record<number, string>} */ ({ 3: "3RD", 4: "4TH", 5: "5TH", 6: "6TH", 7: "7TH" });

/**
 * The centre of a seat on the arc: seat 1 at the right end.
 * @param {number} seat
 * @returns {[number, number]}
 */
function seatCentre(seat) {
  if (SEATS.length <= 7) return arcCentre(seat, ARC_TOP);
  // Seat 1 at the right end, the last at the left, evenly apart, on the same arc.
  const dx = ((SEATS.length - 1) / 2 - (seat - 1)) * EVEN_STEP;
  return [500 + dx, ARC_TOP + Math.sqrt(ARC_RADIUS * ARC_RADIUS - dx * dx)];
}

/** The layout of a seat for the table's seat count. */
function seatLayout() {
  return SEATS.length <= 7 ? WIDE : NARROW;
}

/** Roughly how wide a line of `size` px bold text is, when the browser cannot say (not laid out). */
const GUESS_EM = 0.62;

/**
 * Keep a seat's line of words within `max` units: squeezed to that width when longer.
 * @param {SVGElement} text
 * @param {number} max
 * @param {number} size its font size (px), for the guess when it is not laid out yet
 */
function fitText(text, max, size) {
  const svgText = /** @type {SVGTextElement} */ (/** @type {unknown} */ (text));
  const measured = svgText.getComputedTextLength?.() ?? 0;
  const width = measured > 0 ? measured : (text.textContent ?? "").length * size * GUESS_EM;
  if (width > max) {
    text.setAttribute("textLength", String(max));
    text.setAttribute("lengthAdjust", "spacingAndGlyphs");
  }
}

/**
 * The rank of a card as card notation writes it ("3", "T", "A"), or "" when not a card.
 * @param {string} text
 */
function rankOf(text) {
  const face = parseCard(text);
  return face ? face.text[0] : "";
}

/**
 * Whether `card` is wild at this table.
 * @param {string} card
 * @param {string[]} wild the wild ranks in card notation, e.g. ["3", "9"]
 */
export function isWild(card, wild) {
  return wild.includes(rankOf(card));
}

/**
 * Which of a hand's best five are wild cards: a card the player does not hold (a wild card
 * written as the card it stands for), a second copy of one they hold once, or a wild-rank card
 * the player holds (a wild card may stand for itself).
 * @param {string[]} best the best five as the engine writes them
 * @param {string[]} held the player's own cards and the community cards
 * @param {string[]} wild
 * @param {string[]} [unpaid] wild-rank cards the player did not pay for: they play as themselves
 * @returns {boolean[]}
 */
export function wildInBest(best, held, wild, unpaid = []) {
  const playsAsItself = [...unpaid];
  const naturals = held.filter((c) => !isWild(c, wild) || unpaid.includes(c));
  return best.map((card) => {
    const k = playsAsItself.indexOf(card);
    if (k >= 0) {
      playsAsItself.splice(k, 1);
      naturals.splice(naturals.indexOf(card), 1);
      return false;
    }
    if (isWild(card, wild)) return true;
    const i = naturals.indexOf(card);
    if (i < 0) return true;
    naturals.splice(i, 1);
    return false;
  });
}

/** @typedef {{amount: number, eligible: number[]}} LivePot */

/**
 * The main pot and side pots from what each seat has put in, as the engine builds them: each
 * level of chips up to an all-in is a pot for the players still in who put that much; chips only
 * folded players reached ride with the pot below; payments for extra cards go to the main pot.
 * @param {Array<{seat: number, put: number, dead?: number, folded: boolean}>} seats
 * @returns {LivePot[]}
 */
export function livePots(seats) {
  /** @type {LivePot[]} */
  const pots = [];
  const levels = [...new Set(seats.map((s) => s.put).filter((p) => p > 0))].sort((a, b) => a - b);
  let carry = 0;
  let previous = 0;
  for (const level of levels) {
    const amount = carry + seats.reduce((sum, s) => sum + Math.min(s.put, level) - Math.min(s.put, previous), 0);
    const eligible = seats.filter((s) => !s.folded && s.put >= level).map((s) => s.seat).sort((a, b) => a - b);
    previous = level;
    if (!eligible.length) {
      if (pots.length) pots[pots.length - 1].amount += amount;
      else carry = amount;
      continue;
    }
    carry = 0;
    const last = pots[pots.length - 1];
    if (last && last.eligible.join() === eligible.join()) last.amount += amount;
    else pots.push({ amount, eligible });
  }
  const dead = seats.reduce((sum, s) => sum + (s.dead ?? 0), 0);
  if (dead || carry) {
    if (pots.length) pots[0].amount += dead + carry;
    else pots.push({ amount: dead + carry, eligible: seats.filter((s) => !s.folded).map((s) => s.seat) });
  }
  return pots;
}

/** @param {number[]} seats */
const seatWords = (seats) => (seats.length === 1 ? `seat ${seats[0]}` : `seats ${seats.join(", ")}`);

/**
 * "Pot", or "Main pot" and "Side pot 1", "Side pot 2" when there are several.
 * @param {number} index
 * @param {number} count
 */
export function potName(index, count) {
  if (count === 1) return "Pot";
  return index === 0 ? "Main pot" : count === 2 ? "Side pot" : `Side pot ${index}`;
}

/**
 * @typedef {object} BaseballTarget where the next card goes
 * @property {number} [seat]
 * @property {"up" | "down"} [face]
 * @property {boolean} [community]
 * @property {boolean} [burn]
 * @property {boolean} [extra]
 */

/**
 * @typedef {object} BaseballDecision the player who must act now
 * @property {number} seat
 * @property {number} [to_call]
 * @property {string} [for] set when the question is paying for an extra card
 */

/**
 * @typedef {object} BaseballExtras
 * @property {any} [settlement] the hand's settlement (REPLAY.md), once settled
 * @property {{card: string, seat: number | null, seats: number[]} | null} [rainout] the last rainout, when known
 * @property {boolean} [fresh] the rainout just happened (the dealer has not dealt since)
 * @property {boolean} [revealDown] draw the down cards face up (the supervisor and surveillance)
 */

/**
 * Where the next card goes, from the engine state.
 * @param {any} engine
 * @returns {BaseballTarget | null}
 */
export function nextCard(engine) {
  const t = engine?.target;
  if (!t || engine.phase !== "dealing") return null;
  if (t.to === "seat") return { seat: t.seat, face: t.face, extra: Boolean(t.extra) };
  return t.to === "community" ? { community: true, face: "up" } : { burn: true, face: "down" };
}

/**
 * The player who must act now, from the engine state: a betting decision (with the amount to
 * call) or paying for an extra card.
 * @param {any} engine
 * @returns {BaseballDecision | null}
 */
export function whoActs(engine) {
  if (!engine || engine.phase !== "dealing" || engine.target) return null;
  if (engine.ask) return { seat: engine.ask.seat, to_call: engine.ask.price, for: `extra card for ${engine.ask.card}` };
  const b = engine.betting;
  const seat = b?.pending?.[0];
  if (seat == null) return null;
  const s = (engine.seats ?? []).find((/** @type {any} */ x) => x.seat === seat);
  return { seat, to_call: Math.max((b.high ?? 0) - (s?.street_put ?? 0), 0) };
}

/**
 * @typedef {object} SeatView what a seat's drawing depends on besides the seat's own state
 * @property {string[]} wild the wild ranks
 * @property {boolean} reveal turn the down cards over (a showdown, the seat still in)
 * @property {BaseballDecision | null} acting set when this seat must act
 * @property {BaseballTarget | null} target set when this seat is owed the next card
 * @property {any} played the seat in the settlement, once settled
 * @property {string[]} community the community cards (they play in every hand)
 */

export class BaseballDrawing {
  /** @param {SVGSVGElement} svg an empty <svg>; the drawing owns it */
  constructor(svg) {
    this.svg = svg;
    this.layout = seatLayout();
    prepare(svg, ["table-drawing", "bb-drawing"]);
    svg.classList.toggle("narrow-seats", this.layout === NARROW);
    svg.setAttribute("aria-label", `The Baseball poker table: the pot in the middle, seats 1 to ${SEATS.length}, seat 1 on the right`);
    this.drawFelt();
    this.middle = this.drawMiddle();
    /** @type {Map<number, {group: SVGElement, body: SVGElement, key: string}>} */
    this.seats = new Map();
    const layer = el("g", { class: "bb-seats" }, svg);
    for (const seat of SEATS) this.seats.set(seat, this.drawSeat(seat, layer));
  }

  drawFelt() {
    const felt = drawFelt(this.svg);
    label("BASEBALL POKER", { x: 500, y: 196, class: "felt-title" }, felt);
    this.ruleLine = label("", { x: 500, y: 222, class: "felt-rule" }, felt);
    label("HAND VOID: EVERY CHIP GOES BACK", { x: 500, y: 290, class: "void-mark" }, this.svg);
  }

  drawMiddle() {
    const g = el("g", { class: "middle" }, this.svg);
    const street = label("", { x: 500, y: 60, class: "street" }, g);
    const pot = label("", { x: 500, y: 96, class: "pot-total", "data-amount": 0 }, g);
    const lines = el("g", { class: "pot-lines" }, g);
    const community = el("g", { class: "community", "data-cards": "", transform: "translate(690 46)" }, g);
    const rainout = el("g", { class: "rainout" }, g);
    // Where the felt's title is printed (the drawing hides the title while the banner shows).
    // Between seats 2 and 6, whose cards reach up beside it.
    el("rect", { x: 500 - RAIN_WIDTH / 2, y: 176, width: RAIN_WIDTH, height: 30, rx: 8 }, rainout);
    const rainText = label("", { x: 500, y: 197, class: "rainout-text" }, rainout);
    this.rainWidth = RAIN_WIDTH - 16;
    return { street, pot, lines, community, rainout, rainText };
  }

  /**
   * @param {number} seat
   * @param {Element} layer
   */
  drawSeat(seat, layer) {
    const [x, y] = seatCentre(seat);
    const group = el("g", { class: "bb-seat idle", "data-seat": seat, transform: `translate(${x.toFixed(1)} ${y.toFixed(1)})` }, layer);
    const half = this.layout.half;
    el("rect", { class: "seat-frame", x: -half, y: CARDS_TOP - 8, width: 2 * half, height: 128 - CARDS_TOP + 8, rx: 12 }, group);
    label(`SEAT ${seat}`, { x: 0, y: 0, class: "seat-name" }, group);
    const body = el("g", { class: "seat-body" }, group);
    return { group, body, key: "" };
  }

  /** A new hand is drawn from scratch anyway. */
  restart() {}

  /**
   * Crop the drawing (when it shares the screen with the opening panel), or show all.
   * @param {boolean} compact
   */
  setCompact(compact) {
    crop(this.svg, compact, VIEW_ALL, VIEW_COMPACT);
  }

  /**
   * Draw `engine` (the Baseball poker engine state as in GET /api/state `.state`).
   * @param {any} engine
   * @param {BaseballExtras} [extras]
   */
  render(engine, extras = {}) {
    const rules = engine?.rules ?? {};
    const wild = /** @type {string[]} */ (rules.wild ?? []);
    const settlement = extras.settlement?.game === "baseball-poker" && engine?.phase === "settled" ? extras.settlement : null;
    const target = nextCard(engine);
    const acting = whoActs(engine);
    this.svg.classList.toggle("void", engine?.phase === "void");
    this.svg.classList.toggle("dealing", engine?.phase === "dealing" || engine?.phase === "settled");
    const wilds = wild.length ? `${wild.map((r) => (r === "T" ? "10" : r)).join("S AND ")}S WILD` : "NO WILD CARDS";
    this.ruleLine.textContent = `${wilds}  \u00b7  A 4 UP EARNS A CARD DOWN  \u00b7  Q\u2660 UP: RAINOUT`;
    this.renderMiddle(engine, settlement, target, extras);
    const seats = new Map((engine?.seats ?? []).map((/** @type {any} */ s) => [s.seat, s]));
    const players = new Map((settlement?.players ?? []).map((/** @type {any} */ p) => [p.seat, p]));
    const winners = new Set((settlement?.pots ?? []).flatMap((/** @type {any} */ p) => (p.returned ? [] : p.winners ?? [])));
    const community = /** @type {string[]} */ (engine?.community ?? []);
    for (const [number, view] of this.seats) {
      const seat = seats.get(number);
      const played = players.get(number) ?? null;
      const g = view.group;
      const inHand = Boolean(seat) && engine?.phase !== "idle";
      g.classList.toggle("idle", !inHand);
      g.classList.toggle("in-hand", inHand);
      g.classList.toggle("folded", inHand && Boolean(seat.folded));
      g.classList.toggle("all-in", inHand && !seat.folded && seat.stack === 0 && engine.phase === "dealing");
      g.classList.toggle("acting", inHand && acting?.seat === number);
      g.classList.toggle("target", inHand && target?.seat === number);
      g.classList.toggle("winner", inHand && winners.has(number) && Boolean(settlement?.showdown));
      g.classList.toggle("shown", inHand && Boolean(played?.hand));
      g.dataset.stack = inHand ? String(seat.stack) : "";
      g.dataset.put = inHand ? String((seat.put ?? 0) + (seat.dead ?? 0)) : "";
      const how = {
        wild,
        reveal: inHand && ((Boolean(settlement?.showdown) && !seat.folded) || Boolean(extras.revealDown)),
        acting: acting?.seat === number ? acting : null,
        target: target?.seat === number ? target : null,
        played,
        community,
      };
      // Redrawn only when something it shows changed: a live hand sends a state per entry.
      const key = JSON.stringify([inHand && seat, how]);
      if (view.key === key) continue;
      view.key = key;
      view.body.replaceChildren();
      if (inHand) this.drawSeatBody(view.body, seat, how);
    }
  }

  /**
   * The middle of the table: the street, the pot and side pots (each with its winners once
   * settled), the community card and the rainout banner.
   * @param {any} engine
   * @param {any} settlement
   * @param {BaseballTarget | null} target
   * @param {BaseballExtras} extras
   */
  renderMiddle(engine, settlement, target, extras) {
    const m = this.middle;
    const phase = engine?.phase ?? "idle";
    const seats = /** @type {any[]} */ (engine?.seats ?? []);
    let street = "";
    if (phase === "dealing") street = `${STREETS[engine.street] ?? engine.street} STREET`;
    else if (phase === "settled") street = settlement && !settlement.showdown ? "HAND OVER: ALL BUT ONE FOLDED" : "SHOWDOWN";
    else if (phase === "void") street = "HAND VOID";
    m.street.textContent = street;
    const total = seats.reduce((sum, s) => sum + (s.put ?? 0) + (s.dead ?? 0), 0);
    m.pot.textContent = phase === "idle" ? "" : `POT ${total}`;
    m.pot.setAttribute("data-amount", String(phase === "idle" ? 0 : total));
    m.lines.replaceChildren();
    if (phase === "dealing" || phase === "settled") {
      /** @type {Array<{amount: number, eligible: number[], winners?: number[], returned?: boolean}>} */
      const pots = settlement ? settlement.pots ?? [] : livePots(seats);
      // One live pot is the total already said; several pots, or who takes each, are news.
      if (pots.length > 1 || settlement) {
        const shown = pots.filter((p) => !p.returned);
        pots.forEach((pot, i) => {
          const index = shown.indexOf(pot);
          let text;
          if (pot.returned) text = `Uncalled ${pot.amount} back to ${seatWords(pot.winners ?? pot.eligible)}`;
          else if (pot.winners) text = `${potName(index, shown.length)} ${pot.amount} \u2192 ${seatWords(pot.winners)}`;
          else text = `${potName(index, shown.length)} ${pot.amount} \u00b7 ${seatWords(pot.eligible)}`;
          const line = label(text, {
            x: 500, y: 122 + i * 20, class: "pot-line", "data-pot": i, "data-amount": pot.amount, "data-eligible": pot.eligible.join(" "),
          }, m.lines);
          if (pot.winners) line.setAttribute("data-winners", pot.winners.join(" "));
          line.classList.toggle("returned", Boolean(pot.returned));
        });
      }
    }
    const community = /** @type {string[]} */ (engine?.community ?? []);
    m.community.setAttribute("data-cards", community.join(" "));
    m.community.replaceChildren();
    if (community.length || target?.community) {
      label("COMMUNITY", { x: 0, y: -6, class: "community-caption" }, m.community);
      community.forEach((card, i) => this.drawCard(m.community, card, { x: i * (CARD_W + 4), wild: isWild(card, engine?.rules?.wild ?? []) }));
      if (target?.community) this.drawSlot(m.community, community.length * (CARD_W + 4), "up");
    }
    const rained = (engine?.rainouts ?? 0) > 0 && phase !== "idle";
    m.rainout.classList.toggle("shown", rained);
    this.svg.classList.toggle("rained", rained);
    m.rainout.classList.toggle("fresh", rained && Boolean(extras.fresh));
    if (rained) {
      const r = extras.rainout;
      const times = engine.rainouts > 1 ? ` \u00d7${engine.rainouts}` : "";
      const card = r ? (parseCard(r.card)?.rank ?? "") + (parseCard(r.card)?.symbol ?? "") : "Q\u2660";
      const where = r ? (r.seat != null ? ` at seat ${r.seat}` : " as the community card") : "";
      const to = r && r.seats?.length ? `: re-dealt to ${seatWords(r.seats)}` : ": re-dealt";
      m.rainText.textContent = `RAINOUT${times} \u2014 ${card} face up${where}${to}`;
      m.rainText.removeAttribute("textLength");
      // Squeezed into the banner rather than spilling out of it (a long list of seats).
      const svgText = /** @type {SVGTextElement} */ (/** @type {unknown} */ (m.rainText));
      if (svgText.getComputedTextLength?.() > this.rainWidth) {
        m.rainText.setAttribute("textLength", String(this.rainWidth));
        m.rainText.setAttribute("lengthAdjust", "spacingAndGlyphs");
      }
    }
  }

  /**
   * A seat in the hand: its cards, stack and chips in, what it must do, and its hand once shown.
   * @param {SVGElement} body
   * @param {any} seat the seat's engine state
   * @param {SeatView} how
   */
  drawSeatBody(body, seat, how) {
    const cards = /** @type {Array<{card: string, face: "up" | "down", street: number, extra?: boolean}>} */ (seat.cards ?? []);
    const { half, rowWidth, cardW, bestW, bestGap } = this.layout;
    const words = 2 * half - 4; // the widest a line of words may be
    const slots = cards.length + (how.target ? 1 : 0);
    // Up to 4 in one row (on the lower line); more in two rows of half each, in the order dealt.
    const perRow = slots > ONE_ROW ? Math.ceil(slots / 2) : Math.max(slots, 1);
    const step = perRow > 1 ? Math.min(cardW + 3, (rowWidth - cardW) / (perRow - 1)) : 0;
    const left = -((perRow - 1) * step + cardW) / 2;
    /** @param {number} i */
    const place = (i) => {
      const twoRows = slots > ONE_ROW;
      const r = twoRows ? Math.floor(i / perRow) : 1;
      return { x: left + (i % perRow) * step, y: r * ROW_DROP };
    };
    const row = el("g", { class: "seat-cards", transform: `translate(0 ${CARDS_TOP})` }, body);
    cards.forEach((held, i) => {
      const visible = held.face === "up" || how.reveal;
      // A wild-rank card left unpaid (the pay-for-wild-cards option) plays as itself: no badge.
      const wild = visible && !held.natural && isWild(held.card, how.wild);
      const at = place(i);
      const g = this.drawCard(row, visible ? held.card : null, { x: at.x, y: at.y, wild, w: cardW });
      g.classList.add("bb-card");
      g.setAttribute("data-face", held.face);
      g.setAttribute("data-street", String(held.street));
      if (held.face === "down") {
        g.classList.add(visible ? "revealed" : "hidden");
        // In the strip a card on top leaves showing: this one was dealt face down.
        label("\u25bc", { x: 3, y: CARD_H - 4, class: "down-mark" }, g);
      }
      if (held.extra) {
        // Under the card, in the gap between the rows (no two extra cards lie side by side: each
        // follows a 4), centred on the strip the next card leaves in sight.
        // At either end of a row it is moved in, to stay within the seat's cards.
        g.classList.add("extra");
        const tag = label("EXTRA", { x: Math.min(step || cardW, cardW) / 2, y: CARD_H + 12, class: "extra-tag" }, g);
        const svgTag = /** @type {SVGTextElement} */ (/** @type {unknown} */ (tag));
        const tagHalf = (svgTag.getComputedTextLength?.() || 5 * 13 * GUESS_EM) / 2 + 4; // with its outline
        const span = (perRow - 1) * step + cardW;
        const centre = Math.max(left + tagHalf, Math.min(left + span - tagHalf, at.x + Number(tag.getAttribute("x"))));
        tag.setAttribute("x", (centre - at.x).toFixed(1));
      }
    });
    if (how.target) {
      const at = place(cards.length);
      this.drawSlot(row, at.x, how.target.face ?? "up", at.y, cardW);
    }
    const stack = label(`stack ${seat.stack} \u00b7 in ${(seat.put ?? 0) + (seat.dead ?? 0)}`, { x: 0, y: 19, class: "seat-stack" }, body);
    fitText(stack, words, 14);
    let status = "";
    if (seat.folded) status = "FOLDED";
    else if (how.acting) {
      const call = how.acting.to_call ?? 0;
      if (how.acting.for) status = `TO ACT \u00b7 ${how.acting.for.toUpperCase()}`;
      else status = call > 0 ? `TO ACT \u00b7 CALL ${call}` : "TO ACT \u00b7 OPENS";
    } else if (seat.stack === 0 && !how.played) status = "ALL IN";
    if (status) {
      // A long question ("TO ACT · EXTRA CARD FOR 4♦") in two lines, under the stack.
      const split = status.indexOf(" \u00b7 ");
      const lines = status.length > 18 && split > 0 ? [status.slice(0, split), status.slice(split + 3)] : [status];
      lines.forEach((line, i) => fitText(label(line, { x: 0, y: 39 + i * 16, class: "seat-status" }, body), words, 13));
    }
    const hand = how.played?.hand;
    if (hand) {
      const best = /** @type {string[]} */ (hand.best ?? []);
      const unpaid = cards.filter((c) => c.natural).map((c) => c.card);
      const wildFlags = wildInBest(best, [...cards.map((c) => c.card), ...how.community], how.wild, unpaid);
      const g = el("g", { class: "best", "data-cards": best.join(" "), transform: `translate(${-(5 * (bestW + bestGap) - bestGap) / 2} 48)` }, body);
      best.forEach((card, i) => {
        const c = this.drawCard(g, card, { x: i * (bestW + bestGap), wild: wildFlags[i], small: true, w: bestW });
        c.classList.add("bb-card");
      });
      fitText(label(hand.category, { x: 0, y: 48 + BEST_H + 16, class: "hand-category" }, body), words, 15);
    }
    if (how.played) {
      const p = how.played;
      const won = p.won ? `wins ${p.won} \u00b7 ` : "";
      const net = label(`${won}${signed(p.net ?? 0)}`, { x: 0, y: hand ? 48 + BEST_H + 34 : 58, class: "seat-net" }, body);
      fitText(net, words, 15);
      net.classList.toggle("win", (p.net ?? 0) > 0);
      net.classList.toggle("loss", (p.net ?? 0) < 0);
    }
  }

  /**
   * A card as it lies: its face with the corner index, or its back; wild cards tagged.
   * @param {SVGElement} parent
   * @param {string | null} text the card, or null for a back
   * @param {{x: number, y?: number, wild: boolean, small?: boolean, w?: number}} how `w`: the card's width, when not the usual
   */
  drawCard(parent, text, how) {
    const face = parseCard(text);
    const w = how.w ?? (how.small ? BEST_W : CARD_W);
    const h = how.small ? BEST_H : CARD_H;
    const at = `translate(${how.x.toFixed(1)} ${(how.y ?? 0).toFixed(1)})`;
    const g = el("g", { class: `mini-card ${face ? face.colour : "back"}`, transform: at }, parent);
    el("rect", { width: w, height: h, rx: how.small ? 3 : 4 }, g);
    if (face) {
      g.setAttribute("data-card", face.text);
      const rank = label(face.rank, { x: 3, y: how.small ? 18 : 20, class: "corner-rank" }, g);
      // "10" squeezed to one index's width: the card laid on top leaves only a strip showing.
      if (face.rank.length > 1) {
        rank.setAttribute("textLength", how.small ? "16" : "17");
        rank.setAttribute("lengthAdjust", "spacingAndGlyphs");
      }
      label(face.symbol, { x: 3, y: how.small ? 35 : 38, class: "corner-suit" }, g);
      g.setAttribute("aria-label", how.wild ? `${face.name}, wild` : face.name);
    } else {
      g.setAttribute("aria-label", "face-down card");
    }
    if (how.wild) {
      // A gold badge over the corner index: the part of a card still seen when cards overlap.
      g.classList.add("wild");
      const tag = el("g", { class: "wild-tag", transform: `translate(${how.small ? 7 : 9} -3)` }, g);
      el("circle", { r: how.small ? 6.5 : 8 }, tag);
      label("W", { x: 0, y: how.small ? 3 : 3.5, class: "wild-letter" }, tag);
    }
    return g;
  }

  /**
   * The glowing place where the next card goes, saying up or down.
   * @param {SVGElement} parent
   * @param {number} x
   * @param {string} face
   * @param {number} [y]
   * @param {number} [w] the card's width
   */
  drawSlot(parent, x, face, y = 0, w = CARD_W) {
    const g = el("g", { class: "slot", transform: `translate(${x.toFixed(1)} ${y.toFixed(1)})` }, parent);
    el("rect", { x: -3, y: -3, width: w + 6, height: CARD_H + 6, rx: 6 }, g);
    label(face, { x: w / 2, y: CARD_H / 2 + 5, class: "slot-face" }, g);
  }
}
