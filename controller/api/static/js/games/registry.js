/**
 * The games the screens know, keyed by the name the API sends (`game` in GET /api/state and
 * /api/health, `settlement.game` in a round). The rest of the screens ask the game's module
 * (the exports games/README.md lists); nothing outside games/ asks which game it is.
 */
import * as baseballPoker from "./baseball-poker/index.js";
import * as generic from "./generic/index.js";
import * as grandSlam from "./grand-slam/index.js";
import * as jokers22 from "./jokers-22/index.js";

/** @typedef {typeof grandSlam | typeof jokers22 | typeof baseballPoker | typeof generic} Game */

/** @type {Game[]} */
const GAMES = [grandSlam, jokers22, baseballPoker];
const BY_ID = new Map(GAMES.map((game) => [game.id, game]));

/** Every game's id, e.g. for the body classes the style sheet keys on (and the generic screen's). */
export const GAME_IDS = [...GAMES.map((game) => game.id), generic.id];

/**
 * The game's name as the screens print it ("Jokers 22"); the API's own name for a game the
 * screens do not know.
 * @param {string | null | undefined} name
 */
export function titleOf(name) {
  return BY_ID.get(name ?? "")?.title ?? name ?? "";
}

/**
 * The screens' module for the game named `name`. A game the screens have no module for gets the
 * generic screen (generic/: its seats, the cards read, the API's prompt and words, and a plain
 * notice that this screen cannot draw it), never another game's drawing. A table that does not
 * name its game at all (a daemon from before there were games to name: they all dealt Grand
 * Slam) is drawn as Grand Slam.
 * @param {string | null | undefined} name
 * @returns {Game}
 */
export function gameFor(name) {
  if (name === null || name === undefined) return GAMES[0];
  return BY_ID.get(name) ?? generic;
}
