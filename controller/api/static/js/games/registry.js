/**
 * The games the screens know, keyed by the name the API sends (`game` in GET /api/state and
 * /api/health, `settlement.game` in a round). The rest of the screens ask the game's module
 * (the exports games/README.md lists); nothing outside games/ asks which game it is.
 */
import * as baseballPoker from "./baseball-poker/index.js";
import * as grandSlam from "./grand-slam/index.js";
import * as jokers22 from "./jokers-22/index.js";

/** @typedef {typeof grandSlam | typeof jokers22 | typeof baseballPoker} Game */

/** @type {Game[]} */
const GAMES = [grandSlam, jokers22, baseballPoker];
const BY_ID = new Map(GAMES.map((game) => [game.id, game]));

/** Every game's id, e.g. for the body classes the style sheet keys on. */
export const GAME_IDS = GAMES.map((game) => game.id);

/**
 * The game's name as the screens print it ("Jokers 22"); the API's own name for a game the
 * screens do not know.
 * @param {string | null | undefined} name
 */
export function titleOf(name) {
  return BY_ID.get(name ?? "")?.title ?? name ?? "";
}

/**
 * The screens' module for the game named `name`; a table that does not say (an older daemon, a
 * state not fetched yet) is drawn as the first game, Grand Slam.
 * @param {string | null | undefined} name
 * @returns {Game}
 */
export function gameFor(name) {
  return BY_ID.get(name ?? "") ?? GAMES[0];
}
