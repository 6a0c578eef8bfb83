/**
 * The table's game on the screens, loaded from the game's own package: GET /api/game names the
 * screen module, styles and opening form its package ships (served at /games/<name>/static/),
 * and this loads them, once a page. A game whose package ships no screen module gets the generic
 * screen (generic/: its seats, the cards read, the API's prompt and words, and forms built from
 * the game's own bodies), never another game's drawing. Nothing here or outside a game's package
 * names a game; the rest of the screens ask the game's module (the exports games/README.md lists).
 */
import { get } from "../api.js";
import * as generic from "./generic/index.js";

/** @typedef {typeof generic} Game */

/** @type {Map<string, Game>} the games loaded, by the name the API sends */
const LOADED = new Map();
/** @type {Promise<Game> | null} the table's game, loading or loaded */
let loading = null;
/** @type {Game | null} */
let table = null;

/**
 * Load the table's game (GET /api/game): its styles and its opening form (where the page has a
 * `#game-forms` slot) before its module, so the module finds its form. A module that fails to
 * load leaves the generic screen and says why in the console; a failed GET is tried again at the
 * next call.
 * @returns {Promise<Game>}
 */
export function loadGame() {
  loading ??= load().catch((err) => {
    loading = null;
    throw err;
  });
  return loading;
}

/** @returns {Promise<Game>} */
async function load() {
  const info = await get("/api/game");
  const files = info.screen ?? {};
  /** @type {Game} */
  let game = generic;
  if (files.module) {
    try {
      await Promise.all([files.styles ? styles(files.styles) : null, files.form ? form(files.form) : null]);
      game = await import(files.module);
    } catch (err) {
      console.error(`the screen module of ${info.name} could not be loaded (${String(err)}): the generic screen stands in`);
      game = generic;
    }
  }
  LOADED.set(String(info.name), game);
  table = game;
  return game;
}

/**
 * The game's style sheet, after the screens' own.
 * @param {string} href
 */
function styles(href) {
  return new Promise((resolve, reject) => {
    const link = document.createElement("link");
    link.rel = "stylesheet";
    link.href = href;
    link.dataset.game = "";
    link.addEventListener("load", resolve);
    link.addEventListener("error", () => reject(new Error(`${href} could not be loaded`)));
    document.head.append(link);
  });
}

/**
 * The game's opening form, into the page's `#game-forms` (the dealer screen's; others have none).
 * @param {string} href
 */
async function form(href) {
  const slot = document.getElementById("game-forms");
  if (!slot) return;
  const answer = await fetch(href, { credentials: "same-origin" });
  if (!answer.ok) throw new Error(`${href}: ${answer.status}`);
  slot.innerHTML = await answer.text();
}

/**
 * The game's name as the screens print it (its module's title); the API's own name for a game not loaded.
 * @param {string | null | undefined} name
 */
export function titleOf(name) {
  const game = LOADED.get(name ?? "");
  return (game && game !== generic ? game.title : null) ?? name ?? "";
}

/**
 * The screens' module for the game named `name`: the table's game once loaded (`loadGame`), the
 * generic screen for any other. `null` (a state or round that names no game) is the table's own.
 * @param {string | null | undefined} name
 * @returns {Game}
 */
export function gameFor(name) {
  if (name === null || name === undefined) return table ?? generic;
  return LOADED.get(name) ?? generic;
}

/**
 * Whether the module of game `name` is loaded (the dealer screen draws nothing of a game before).
 * @param {string | null | undefined} name
 */
export const isLoaded = (name) => LOADED.has(name ?? "") || ((name === null || name === undefined) && table !== null);
