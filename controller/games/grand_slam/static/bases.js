/**
 * Grand Slam's places on the felt, defined once for every screen module of the game: the three
 * bases a wager is placed on, where a stack can stand (the bases, home plate, the dugout for an
 * out), the side bets, and the names the dealer, the wager panel and the camera use for each.
 * (GAMES.md section 1; the engine's own list is in the game's Python.)
 */

/** The bases a wager is placed on, in dealing order. */
export const BASES = /** @type {const} */ (["first", "second", "third"]);

/** Everywhere a seat's stack can stand on the drawing. */
export const POSITIONS = /** @type {const} */ ([...BASES, "home", "out"]);

/** The side bets, placed only with all three bases bet. */
export const SIDE_BETS = /** @type {const} */ (["three_outs", "poker_bonus"]);

/** Every bet of a seat, as the wager panel's rows and the camera's columns list them. */
export const BETS = /** @type {const} */ ([...BASES, ...SIDE_BETS]);

/** @typedef {typeof BETS[number]} Bet */

/** The wager panel's row heads. */
export const BET_LABELS = /** @type {Record<Bet, string>} */ ({
  first: "First", second: "Second", third: "Third", three_outs: "3 Outs", poker_bonus: "Poker bonus",
});

/** The camera panel's column heads (short: five columns in the side bar). */
export const BET_SHORT = /** @type {Record<Bet, string>} */ ({
  first: "1st", second: "2nd", third: "3rd", three_outs: "3 Outs", poker_bonus: "Bonus",
});

/** A bet in the words a refusal names it: "Seat 3 first base". */
export const BET_NAMES = /** @type {Record<Bet, string>} */ ({
  first: "first base", second: "second base", third: "third base", three_outs: "3 Outs insurance", poker_bonus: "poker bonus",
});

/** A layout zone's spot as the dealer says it (the camera's zones: controller's SPOT_WORDS). */
export const SPOT_WORDS = /** @type {Record<string, string>} */ ({
  first: "first base", second: "second base", third: "third base", home: "home plate",
  three_outs: "3 outs insurance", poker_bonus: "poker bonus",
});

/** @param {string} bet */
export const isSideBet = (bet) => /** @type {readonly string[]} */ (SIDE_BETS).includes(bet);
