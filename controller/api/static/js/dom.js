/**
 * The small DOM helpers every screen module uses: find by id, make an element, a table cell,
 * change text only when it changed, a signed amount, a table's column heads, and running an API
 * call with its refusal shown where the person looks.
 */
import { errorText } from "./api.js";

/** @param {string} id */
export const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/** @param {string} id */
export const field = (id) => /** @type {HTMLInputElement} */ (document.getElementById(id));

/**
 * @param {string} tag
 * @param {string} [text]
 * @param {string} [className]
 */
export function make(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

/**
 * @param {string} text
 * @param {string} className
 */
export function cell(text, className) {
  return /** @type {HTMLTableCellElement} */ (make("td", text, className));
}

/**
 * A cell spanning `span` columns (a note under a table).
 * @param {string} text
 * @param {number} span
 * @param {string} [className]
 */
export function wideCell(text, span, className) {
  const td = /** @type {HTMLTableCellElement} */ (make("td", text, className));
  td.colSpan = span;
  return td;
}

/**
 * Change text only when it changed, so screen readers announce only real changes.
 * @param {HTMLElement} node
 * @param {string} text
 */
export function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

/** "+25", "−20", "0". @param {number} n */
export const signed = (n) => (n > 0 ? `+${n}` : n < 0 ? `\u2212${-n}` : "0");

/** The class of a net amount's cell: "net win", "net loss", "net ". @param {number} n */
export const netClass = (n) => `net ${n > 0 ? "win" : n < 0 ? "loss" : ""}`;

/**
 * A payout's cells for the dealer: what to pay, what to take (a dash: nothing) and the net.
 * @param {{pay?: number, collect?: number, net?: number}} p a payout row of GET /api/state
 */
export function payoutCells(p) {
  const net = p.net ?? 0;
  return [cell(p.pay ? String(p.pay) : "\u2013", "pay"), cell(p.collect ? String(p.collect) : "\u2013", "collect"), cell(signed(net), netClass(net))];
}

/**
 * A payout's row for the dealer, `tr[data-seat]` where it names a seat: whom it pays (`who`), then
 * `payoutCells`.
 * @param {{seat?: number, pay?: number, collect?: number, net?: number}} p
 * @param {string} who
 */
export function payoutRow(p, who) {
  const row = make("tr");
  if (p.seat != null) row.dataset.seat = String(p.seat);
  row.append(cell(who, "seat"), ...payoutCells(p));
  return row;
}

/**
 * Give `table` these column heads (kept when they are already these).
 * @param {HTMLTableElement} table
 * @param {string[]} names
 * @param {string} [lastClass] the class of the last head (a right-aligned number)
 */
export function setColumns(table, names, lastClass) {
  const head = table.tHead;
  const key = names.join("|");
  if (!head || head.dataset.columns === key) return;
  head.dataset.columns = key;
  const row = make("tr");
  names.forEach((name, i) => {
    const th = /** @type {HTMLTableCellElement} */ (make("th", name, i === names.length - 1 ? lastClass : undefined));
    th.scope = "col";
    row.append(th);
  });
  head.replaceChildren(row);
}

/**
 * Run an API call; show its refusal in `where` (the server's words), clear it on success.
 * @param {Promise<unknown>} call
 * @param {HTMLElement} where
 */
export async function act(call, where) {
  return (await attempt(call, where)) === null;
}

/**
 * Like `act`, but gives back the refusal (null on success), so a form can mark the seat and
 * the field the API names (`ApiError.seat`, `.field`) without reading them out of the words.
 * @param {Promise<unknown>} call
 * @param {HTMLElement} where
 * @returns {Promise<any>}
 */
export async function attempt(call, where) {
  where.textContent = "";
  try {
    await call;
    return null;
  } catch (err) {
    where.textContent = errorText(err);
    where.classList.add("error");
    return err ?? new Error("refused");
  }
}

const FIT_STEPS = 6;

/**
 * Make the text of `node` fit its box: the smallest number of steps down from its own type size
 * (classes fit-1 .. fit-6 of screens.css) at which nothing is cut off or scrolled. Call it after
 * the text changed and when the window is resized.
 * @param {HTMLElement} node
 */
export function fitText(node) {
  for (let k = 1; k <= FIT_STEPS; k += 1) node.classList.remove(`fit-${k}`);
  for (let k = 1; k <= FIT_STEPS && node.scrollHeight > node.clientHeight; k += 1) {
    if (k > 1) node.classList.remove(`fit-${k - 1}`);
    node.classList.add(`fit-${k}`);
  }
}

/**
 * A numeric text input for a chip amount.
 * @param {Record<string, string>} data its data-* attributes
 * @param {string} aria what it is, read aloud
 */
export function chipInput(data, aria) {
  const input = document.createElement("input");
  input.type = "text";
  input.inputMode = "numeric";
  input.autocomplete = "off";
  input.pattern = "[0-9]*";
  Object.assign(input.dataset, data);
  input.setAttribute("aria-label", aria);
  return input;
}
