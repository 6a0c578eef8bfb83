/**
 * The two SVG helpers every table drawing uses (js/games/<game>/drawing.js).
 */

const NS = "http://www.w3.org/2000/svg";

/**
 * An SVG element with its attributes, appended to `parent` when given.
 * @param {string} tag
 * @param {Record<string, string | number>} [attrs]
 * @param {Element} [parent]
 * @returns {SVGElement}
 */
export function el(tag, attrs = {}, parent) {
  const node = /** @type {SVGElement} */ (document.createElementNS(NS, tag));
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (parent) parent.append(node);
  return node;
}

/**
 * A `text` element holding `text`.
 * @param {string} text
 * @param {Record<string, string | number>} attrs
 * @param {Element} parent
 */
export function label(text, attrs, parent) {
  const t = el("text", attrs, parent);
  t.textContent = text;
  return t;
}
