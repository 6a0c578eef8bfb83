/**
 * What every table drawing shares: the table's seats in an arc (1 to 7, or 8 at a stud table),
 * seat 1 at the right end (the dealer's left), and the half-moon felt with the dealer's rail and
 * chip tray at the top.
 */
import { el } from "./svg.js";

/** @param {number} count */
const upTo = (count) => Array.from({ length: count }, (_, i) => i + 1);

/**
 * The seats (spots) of this table, in the order the dealer deals: as many as the table says
 * (GET /api/state `game_info.seats`: its config's `table.seats`), 7 until it has said.
 */
export let SEATS = upTo(7);

/** The seats as the felt shows them from the dealer's side: the last on the left, 1 on the right. */
export let SEATS_LEFT_TO_RIGHT = [...SEATS].reverse();

/**
 * Take the table's seat count from a GET /api/state document; true when it changed (what was
 * drawn or built for the old count is made again).
 * @param {any} state
 */
export function takeTableSeats(state) {
  const count = state?.game_info?.seats;
  if (!Number.isInteger(count) || count < 1 || count === SEATS.length) return false;
  SEATS = upTo(count);
  SEATS_LEFT_TO_RIGHT = [...SEATS].reverse();
  return true;
}

/**
 * The centre of a seat on the arc: seat 1 at the right end; `top` moves the arc up or down.
 * @param {number} seat
 * @param {number} top
 * @returns {[number, number]}
 */
export function arcCentre(seat, top) {
  const maxAngle = (37 * Math.PI) / 180;
  const angle = maxAngle - ((seat - 1) * 2 * maxAngle) / Math.max(SEATS.length - 1, 1);
  return [500 + 700 * Math.sin(angle), top + 700 * Math.cos(angle)];
}

/**
 * The felt itself (bed, rail, tray) into `svg`; the group the game prints its words into.
 * @param {SVGSVGElement} svg
 */
export function drawFelt(svg) {
  const felt = el("g", { class: "felt", "aria-hidden": "true" }, svg);
  el("path", { class: "table-bed", d: "M 10 20 L 990 20 L 990 364 A 850 850 0 0 1 10 364 Z" }, felt);
  el("path", { class: "rail", d: "M 10 364 A 850 850 0 0 0 990 364" }, felt);
  el("rect", { class: "tray", x: 380, y: 6, width: 240, height: 26, rx: 5 }, felt);
  return felt;
}

/**
 * Make `svg` a table drawing: the whole felt in view, scaled to fit, with these classes.
 * @param {SVGSVGElement} svg
 * @param {string[]} classes
 */
export function prepare(svg, classes) {
  svg.setAttribute("viewBox", "0 0 1000 560");
  svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
  svg.classList.add(...classes);
}

/**
 * Crop a table drawing to `cropped` while it shares the screen with the opening panel
 * (`compact`: `svg.compact`), or show `all` of it.
 * @param {SVGSVGElement} svg
 * @param {boolean} compact
 * @param {string} all the whole drawing's viewBox
 * @param {string} cropped the viewBox beside the opening panel
 */
export function crop(svg, compact, all, cropped) {
  svg.setAttribute("viewBox", compact ? cropped : all);
  svg.classList.toggle("compact", compact);
}

/**
 * The drawing on one <svg>, for the game it shows: made again (on a clean <svg>) when the game
 * changes, so a screen never asks which game it draws.
 */
export class DrawingSlot {
  /** @param {SVGSVGElement} svg */
  constructor(svg) {
    this.svg = svg;
    this.classes = svg.getAttribute("class") ?? "";
    this.label = svg.getAttribute("aria-label") ?? "";
    /** @type {any} */
    this.drawing = null;
    this.seats = 0; // the seat count the drawing was made for
  }

  /**
   * The drawing made by `Drawing`, made now if the <svg> holds another game's.
   * @template T
   * @param {new (svg: SVGSVGElement) => T} Drawing
   * @returns {T}
   */
  for(Drawing) {
    if (!(this.drawing instanceof Drawing) || this.seats !== SEATS.length) {
      this.seats = SEATS.length;
      this.svg.replaceChildren();
      this.svg.setAttribute("class", this.classes);
      this.svg.setAttribute("aria-label", this.label);
      this.drawing = new Drawing(this.svg);
    }
    return this.drawing;
  }
}
