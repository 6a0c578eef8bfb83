/**
 * Journal entries in plain words for the event log ("Fault 3 cleared by sam: confirm", "New shoe
 * loaded", "Camera moved: markers 14 mm off"), and the camera's own state in words. What only a
 * game knows ("5H to seat 1 first base: stack to second", "Spot 1: ann splits (50 more)", "Seat 2
 * raises (4 in, pot 16)") its module's `describe` says (games/README.md). Written from the
 * entry's kind, body and engine effects as the API sends them.
 */
import { cardLabel, cardsInWords } from "./cards.js";

/** @typedef {import("./live.js").Entry} Entry */
/** @typedef {import("./games/registry.js").Game} Game */

const BUTTONS = /** @type {Record<string, string>} */ ({ confirm: "Confirm pressed" });

/** The camera's own state (`state.camera.status`) in words: "Camera moved". */
export const CAMERA_WORDS = /** @type {Record<string, string>} */ ({
  ok: "Camera watching",
  bumped: "Camera moved",
  unverified: "Camera cannot check its position",
  offline: "Camera offline",
  uncalibrated: "Camera not calibrated",
});

/**
 * A `scene` entry: only a change of the camera's own state is news for the log; the chips it
 * sees come and go all round long and are shown in the camera panel instead.
 * @param {any} body
 * @returns {string[]}
 */
function sceneLines(body) {
  if (typeof body.camera !== "string") return [];
  const words = CAMERA_WORDS[body.camera] ?? `Camera ${body.camera}`;
  const why = body.why ? `: ${body.why}` : "";
  return [body.camera === "ok" ? `Camera watching the table${why}` : `${words}${why}`];
}

/**
 * The lines describing `entry`, most important first (none for a camera view the log need not
 * tell).
 * @param {Entry} entry
 * @param {Game} game the table's game
 * @returns {string[]}
 */
export function describeEntry(entry, game) {
  return entryLines(entry, game).map(cardsInWords);
}

/**
 * @param {Entry} entry
 * @param {Game} game
 * @returns {string[]}
 */
function entryLines(entry, game) {
  const body = entry.body ?? {};
  const effects = Array.isArray(entry.effects) ? entry.effects : [];
  /** @param {any[]} told */
  const lines = (told) => effectLines(told, game);
  switch (entry.kind) {
    case "round-open":
      return game.describe.opened(entry.round, body, effects, lines);
    case "card": {
      const card = String(body.card ?? "?");
      // Entries replayed after a (re)connect may come without their effects: say only the card.
      if (!Array.isArray(entry.effects)) return [`${cardLabel(card)} read`];
      return game.describe.card(card, effects, lines) ?? unplacedCard(card, effects, game);
    }
    case "decision":
      return game.describe.decision(body.event ?? {}, effects, lines) ?? [`Decision ${JSON.stringify(body.event ?? {})}`];
    case "fault":
      return [`STOP: ${body.message ?? body.code ?? "fault"}`];
    case "fault-acknowledged":
      return [`Fault ${body.fault} acknowledged by ${body.by}`];
    case "fault-cleared": {
      const card = body.card ? ` with ${cardLabel(body.card)}` : "";
      return [`Fault ${body.fault} cleared by ${body.by}: ${body.action}${card} (${body.reason})`, ...lines(effects)];
    }
    case "void":
      return [`Round ${entry.round ?? ""} void by ${body.by}: ${body.reason}`.replace("Round  ", "Round "), ...lines(effects)];
    case "pay-override":
      return [`Round ${entry.round ?? ""} left unpaid: ${body.by} lets the next round open (${body.reason})`.replace("Round  ", "Round ")];
    case "button":
      return [`${BUTTONS[body.button] ?? `Button ${body.button}`} (${body.by ?? "dealer"})`];
    case "shoe-event":
      return [`Shoe: ${String(body.event ?? "event").replace(/-/g, " ")}: shuffle after this round`];
    case "shoe-reshuffled":
      return [`New shoe loaded (${body.by ?? "dealer"})`];
    case "scene":
      return sceneLines(body);
    case "login":
      if (body.ok === false) return [`Login refused (wrong token${body.client ? ` from ${body.client}` : ""})`];
      return [`${capital(String(body.role ?? body.who ?? body.by ?? "someone"))} logged in`];
    case "dealer-in":
      return [`Dealer ${body.dealer} signed in`];
    case "dealer-out":
      return [`Dealer ${body.dealer} signed out`];
    case "dealer-list":
      return [`Dealer list: ${(body.dealers ?? []).length} dealers (${body.by})`];
    case "rating-open":
      return [`Rating: place ${body.place} opened for player ${body.player} (${body.by})`];
    case "rating-close":
      return [`Rating: place ${body.place} closed${body.player ? ` for player ${body.player}` : ""} (${body.by})`];
    default:
      return [`${entry.kind}`];
  }
}

/**
 * A card that reached no place of the game: a dead card, or one held while play is stopped.
 * @param {string} card
 * @param {any[]} effects
 * @param {Game} game
 */
function unplacedCard(card, effects, game) {
  const dead = effects.find((e) => e.kind === "card-dead");
  if (dead) return [`Dead card ${cardLabel(card)}: ${dead.reason}`];
  return effects.length ? [`${cardLabel(card)} read`, ...effectLines(effects, game)] : [`${cardLabel(card)} read (held: play is stopped)`];
}

/**
 * Lines for effects not already told by the main line: the game's own, then those every game has.
 * @param {any[]} effects
 * @param {Game} game
 */
function effectLines(effects, game) {
  /** @type {string[]} */
  const lines = [];
  for (const e of effects) {
    const line = game.describe.effect(e) ?? commonEffect(e);
    if (line) lines.push(line);
  }
  return lines;
}

/**
 * @param {any} e
 * @returns {string | null}
 */
function commonEffect(e) {
  if (e.kind === "card-dead") return `Dead card ${cardLabel(e.card)}: ${e.reason}`;
  if (e.kind === "round-voided") return "Every wager goes back to its seat";
  return null;
}

/** @param {string} s */
function capital(s) {
  return s ? s[0].toUpperCase() + s.slice(1) : s;
}

/**
 * A short local time "14:05:09" for an ISO timestamp.
 * @param {string | null | undefined} iso
 */
export function clock(iso) {
  const d = iso ? new Date(iso) : null;
  return d && !Number.isNaN(d.getTime()) ? d.toLocaleTimeString([], { hour12: false }) : "";
}

/**
 * Put `entry` at the top of the event log `list` (newest first, at most `max` lines).
 * @param {HTMLElement} list an <ol>
 * @param {Entry} entry
 * @param {number} max
 * @param {Game} game the table's game
 * @returns {string[]} the lines written
 */
export function logEntry(list, entry, max, game) {
  const lines = describeEntry(entry, game);
  for (const line of [...lines].reverse()) {
    const item = document.createElement("li");
    item.dataset.seq = String(entry.seq);
    item.dataset.kind = entry.kind;
    const time = document.createElement("time");
    time.textContent = clock(entry.at);
    item.append(time, document.createTextNode(` ${line}`));
    list.prepend(item);
  }
  while (list.children.length > max) list.lastElementChild?.remove();
  return lines;
}
