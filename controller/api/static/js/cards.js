/**
 * Card notation (GAMES.md: rank 2-9 T J Q K A, suit C D H S, joker JK) turned into what a
 * screen draws: the rank as printed on the card, the suit symbol and its colour.
 */

/** @typedef {{text: string, rank: string, suit: string, symbol: string, colour: "red" | "black", name: string}} CardFace */

const SUITS = /** @type {const} */ ({
  C: { symbol: "\u2663", colour: "black", name: "clubs" },
  D: { symbol: "\u2666", colour: "red", name: "diamonds" },
  H: { symbol: "\u2665", colour: "red", name: "hearts" },
  S: { symbol: "\u2660", colour: "black", name: "spades" },
});

/** Printed rank and its spoken name, by notation rank. */
const RANKS = /** @type {Record<string, [string, string]>} */ ({
  2: ["2", "two"], 3: ["3", "three"], 4: ["4", "four"], 5: ["5", "five"], 6: ["6", "six"],
  7: ["7", "seven"], 8: ["8", "eight"], 9: ["9", "nine"], T: ["10", "ten"], J: ["J", "jack"],
  Q: ["Q", "queen"], K: ["K", "king"], A: ["A", "ace"],
});

/**
 * The face of a card written in table notation, or null when the text is not a card.
 * Accepts lower case and `10` for ten, as the API does on input.
 * @param {string | null | undefined} text
 * @returns {CardFace | null}
 */
export function parseCard(text) {
  if (typeof text !== "string") return null;
  const t = text.trim().toUpperCase().replace(/^10/, "T");
  if (t === "JK") {
    return { text: "JK", rank: "JK", suit: "", symbol: "\u2605", colour: "red", name: "joker" };
  }
  if (t.length !== 2) return null;
  const rank = RANKS[t[0]];
  const suit = SUITS[/** @type {keyof typeof SUITS} */ (t[1])];
  if (!rank || !suit) return null;
  return {
    text: t,
    rank: rank[0],
    suit: t[1],
    symbol: suit.symbol,
    colour: suit.colour,
    name: `${rank[1]} of ${suit.name}`,
  };
}

/**
 * A card's short printed form, e.g. "5♥" (or the raw text when it is not a card).
 * @param {string} text
 */
export function cardLabel(text) {
  const face = parseCard(text);
  return face ? `${face.rank}${face.suit ? face.symbol : ""}` : String(text);
}

/** A card in table notation inside a sentence: "5D", "TS", "10H", "JK" (upper case, a word of its own). */
const CARD_IN_WORDS = /\b(?:10|[2-9TJQKA])[CDHS]\b|\bJK\b/g;

/**
 * A sentence from the table (a prompt, a fault, a notice) with each card written as the screens
 * write cards everywhere: "Dead card 5D (...)" becomes "Dead card 5♦ (...)".
 * @param {string} text
 */
export function cardsInWords(text) {
  return String(text).replace(CARD_IN_WORDS, (card) => cardLabel(card));
}

/**
 * An HTML card face (a <span class="card red|black">) for `text`; a back when `text` is null.
 * @param {string | null} text
 * @param {"big" | "small"} [size]
 * @returns {HTMLElement}
 */
export function cardElement(text, size = "small") {
  const el = document.createElement("span");
  const face = parseCard(text);
  el.className = `card ${size}`;
  if (!face) {
    el.classList.add("back");
    el.setAttribute("aria-label", text ? `unreadable card ${text}` : "face-down card");
    return el;
  }
  el.classList.add(face.colour);
  el.dataset.card = face.text;
  el.setAttribute("role", "img");
  el.setAttribute("aria-label", face.name);
  const rank = document.createElement("span");
  rank.className = "rank";
  rank.textContent = face.rank;
  const suit = document.createElement("span");
  suit.className = "suit";
  suit.textContent = face.symbol;
  el.append(rank, suit);
  return el;
}
