/**
 * Journal entries in plain words for the event log ("5H to seat 1 first base: stack to second",
 * "Seat 4 out"; Jokers 22: "8D to spot 1: 16", "Spot 1: ann splits (50 more)"; Baseball poker:
 * "3H to seat 4 face up: wild", "Seat 2 raises (4 in, pot 16)", "RAINOUT: ..."; the overhead
 * camera: "Camera moved: markers 14 mm off"). Written from the entry's kind, body and engine
 * effects as the API sends them. Also the camera's zone names as the dealer says them.
 */
import { cardLabel } from "./cards.js";

/** @typedef {import("./live.js").Entry} Entry */

const BUTTONS = /** @type {Record<string, string>} */ ({ confirm: "Confirm pressed" });

/** The spots of a Grand Slam seat as the layout names them (controller/camera_link.py SPOT_WORDS). */
const SPOT_WORDS = /** @type {Record<string, string>} */ ({
  first: "first base", second: "second base", third: "third base", home: "home plate",
  three_outs: "3 outs insurance", poker_bonus: "poker bonus",
});

/** The camera's own state (`state.camera.status`) in words: "Camera moved". */
export const CAMERA_WORDS = /** @type {Record<string, string>} */ ({
  ok: "Camera watching",
  bumped: "Camera moved",
  unverified: "Camera cannot check its position",
  offline: "Camera offline",
  uncalibrated: "Camera not calibrated",
});

/**
 * A layout zone as the dealer says it: "seat6.home.payout" -> "Seat 6 home plate payout".
 * @param {string} name
 */
export function zoneWords(name) {
  const m = /^seat(\d+)\.([a-z_]+)(\.payout)?$/.exec(name);
  if (!m) return name;
  if (m[2] === "puck") return `Seat ${m[1]} puck spot`;
  return `Seat ${m[1]} ${SPOT_WORDS[m[2]] ?? m[2].replace(/_/g, " ")}${m[3] ? " payout" : ""}`;
}

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
 * @returns {string[]}
 */
export function describeEntry(entry) {
  const body = entry.body ?? {};
  const effects = Array.isArray(entry.effects) ? entry.effects : [];
  switch (entry.kind) {
    case "round-open":
      return [roundOpened(entry.round, body), ...notices(effects)];
    case "card":
      // Entries replayed after a (re)connect may come without their effects: say only the card.
      if (!Array.isArray(entry.effects)) return [`${cardLabel(String(body.card ?? "?"))} read`];
      return cardLines(String(body.card ?? "?"), effects);
    case "decision":
      return decisionLines(body.event ?? {}, effects);
    case "fault":
      return [`STOP: ${body.message ?? body.code ?? "fault"}`];
    case "fault-acknowledged":
      return [`Fault ${body.fault} acknowledged by ${body.by}`];
    case "fault-cleared": {
      const card = body.card ? ` with ${cardLabel(body.card)}` : "";
      return [`Fault ${body.fault} cleared by ${body.by}: ${body.action}${card} (${body.reason})`, ...effectLines(effects)];
    }
    case "void":
      return [`Round ${entry.round ?? ""} void by ${body.by}: ${body.reason}`.replace("Round  ", "Round "), ...effectLines(effects)];
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
    default:
      return [`${entry.kind}`];
  }
}

/**
 * @param {number | null} round
 * @param {any} body
 */
function roundOpened(round, body) {
  const event = body.event ?? {};
  if (Array.isArray(event.players)) {
    const seats = event.players.map((/** @type {any} */ p) => `${p.seat} (${p.stack})`);
    return `Hand ${round ?? "?"} opened: seat${seats.length > 1 ? "s" : ""} ${seats.join(", ")}`;
  }
  if (Array.isArray(event.spots)) {
    const spots = event.spots.map((/** @type {any} */ s) => s.spot);
    const stake = event.banker?.stake != null ? `; banker's stake ${event.banker.stake}` : "";
    return `Round ${round ?? "?"} opened: spot${spots.length > 1 ? "s" : ""} ${spots.join(", ")}${stake}`;
  }
  const seats = Array.isArray(event.seats) ? event.seats.map((/** @type {any} */ s) => s.seat) : [];
  const blind = event.blind_seat ? `, blind puck at seat ${event.blind_seat}` : "";
  const who = seats.length ? `: seat${seats.length > 1 ? "s" : ""} ${seats.join(", ")}` : "";
  const via = body.via === "camera" ? " from the camera" : "";
  return `Round ${round ?? "?"} opened${via}${who}${blind}`;
}

/**
 * "5H to seat 1 first base: stack to second", then what else the card did.
 * @param {string} card
 * @param {any[]} effects
 */
function cardLines(card, effects) {
  const laid = effects.find((e) => e.kind === "baseball-poker.card-placed");
  if (laid) return [`${cardLabel(card)} ${laidWords(laid)}`, ...effectLines(effects.filter((e) => e !== laid))];
  const dealt = effects.find((e) => e.kind === "jokers-22.card-placed");
  if (dealt) {
    const total = dealt.total ? `: ${dealt.total}` : "";
    return [`${cardLabel(card)} to ${handWords(dealt)}${total}`, ...effectLines(effects.filter((e) => e !== dealt))];
  }
  const placed = effects.find((e) => e.kind === "grand-slam.card-placed");
  if (!placed) {
    const dead = effects.find((e) => e.kind === "card-dead");
    if (dead) return [`Dead card ${cardLabel(card)}: ${dead.reason}`];
    return effects.length ? [`${cardLabel(card)} read`, ...effectLines(effects)] : [`${cardLabel(card)} read (held: play is stopped)`];
  }
  const where = `seat ${placed.seat}${placed.blind ? " (blind)" : ""} ${placed.base} base`;
  const moved = effects.find((e) => e.kind === "grand-slam.stack-moved" && e.seat === placed.seat);
  const slam = effects.find((e) => e.kind === "grand-slam.grand-slam");
  let what = "";
  if (slam) what = `: GRAND SLAM, ${slam.amount} scores`;
  else if (moved) what = `: ${moveWords(moved)}`;
  const rest = effects.filter((e) => e !== placed && e !== moved && e !== slam);
  return [`${cardLabel(card)} to ${where}${what}`, ...effectLines(rest)];
}

/**
 * Jokers 22: where a card went or whose hand it is: "spot 1", "spot 1 hand 2", "the banker".
 * Hand 1 is named only once a split has made a second hand (the effect cannot say; hand 2 can).
 * @param {{spot: number | null, hand?: number}} e
 */
function handWords(e) {
  if (e.spot == null) return "the banker";
  return e.hand && e.hand > 1 ? `spot ${e.spot} hand ${e.hand}` : `spot ${e.spot}`;
}

const VERBS = /** @type {Record<string, string>} */ ({
  hit: "hits", stand: "stands", double: "doubles", split: "splits", surrender: "surrenders", match: "matches", decline: "declines",
});

/**
 * Jokers 22: "Spot 1: ann splits (50 more)", from the decision-taken effect (else the event).
 * @param {any} event the decision as journaled: {spot, action, player}
 * @param {any[]} effects
 */
function decisionLines(event, effects) {
  const acted = effects.find((e) => e.kind === "baseball-poker.action-taken");
  if (acted || String(event.kind ?? "").startsWith("baseball-poker.")) {
    const a = acted ?? { seat: event.seat, action: event.action, amount: 0 };
    return [actionWords(a), ...effectLines(effects.filter((e) => e !== acted))];
  }
  const taken = effects.find((e) => e.kind === "jokers-22.decision-taken");
  const d = taken ?? { spot: event.spot, hand: 1, player: event.player, action: event.action, amount: 0 };
  const rest = effects.filter((e) => e !== taken);
  return [decisionWords(d), ...effectLines(rest)];
}

/** @param {any} d a jokers-22.decision-taken effect */
function decisionWords(d) {
  const verb = VERBS[d.action] ?? d.action;
  let money = "";
  if (d.amount && d.action === "surrender") money = ` (${d.amount} back)`;
  else if (d.amount) money = ` (${d.amount} more)`;
  // A decision replayed without its effects names no player for the spot's own choices.
  return d.player ? `${capital(handWords(d))}: ${d.player} ${verb}${money}` : `${capital(handWords(d))} ${verb}${money}`;
}

/** @param {number} n */
const signed = (n) => (n > 0 ? `+${n}` : n < 0 ? `\u2212${-n}` : "0");

/**
 * Jokers 22 effects in words; null for those the main line already says or nobody needs.
 * @param {any} e
 * @returns {string | null}
 */
function jokers22Line(e) {
  switch (e.kind) {
    case "jokers-22.forced":
      return e.action === "hit" ? `${capital(handWords(e))} must hit ${e.total}` : `${capital(handWords(e))} stands on ${e.total}`;
    case "jokers-22.decision-due":
      return `${capital(handWords(e))}: ${e.player} to decide on ${e.total} (${(e.allowed ?? []).join(", ")})`;
    case "jokers-22.decision-taken":
      return decisionWords(e);
    case "jokers-22.action-spot":
      return `ACTION spot ${e.spot} (banker's second card ${cardLabel(String(e.card))})`;
    case "jokers-22.covered":
      // Only partial coverage is news: a fully covered wager is the usual case.
      return e.covered < e.amount ? `${capital(handWords(e))} ${e.player}: ${e.covered} of ${e.amount} covered, ${e.amount - e.covered} goes back` : null;
    case "jokers-22.player-settled":
      if (e.pay && e.collect) return `${e.player} at spot ${e.spot}: pay ${e.pay}, take ${e.collect}`;
      if (e.pay) return `${e.player} at spot ${e.spot}: pay ${e.pay}`;
      if (e.collect) return `${e.player} at spot ${e.spot}: take ${e.collect}`;
      return `${e.player} at spot ${e.spot}: push`;
    case "jokers-22.banker-settled":
      return `Banker: ${signed(e.net)}`;
    case "jokers-22.time-collected":
      return `Time: ${e.player} at spot ${e.spot} pays ${e.amount}`;
    default:
      return null;
  }
}

const STREETS = /** @type {Record<number, string>} */ ({ 3: "3rd", 4: "4th", 5: "5th", 6: "6th", 7: "7th" });
const ACTIONS = /** @type {Record<string, string>} */ ({
  "bring-in": "brings it in", complete: "completes", check: "checks", bet: "bets", call: "calls", raise: "raises",
  fold: "folds", pay: "pays for the extra card", decline: "declines the extra card",
});

/**
 * Baseball poker: where a card went: "to seat 4 face up, 3rd street: wild", "as the community card".
 * @param {any} e a baseball-poker.card-placed effect
 */
function laidWords(e) {
  const street = STREETS[e.street] ? `, ${STREETS[e.street]} street` : "";
  if (e.to === "community") return `as the community card${street}`;
  if (e.to === "burn") return `burned${street}`;
  return `to seat ${e.seat} face ${e.face}${e.extra ? " (the extra card for a 4)" : ""}${street}`;
}

/**
 * Baseball poker: "Seat 2 raises (4 in, pot 16)", "Seat 1 folds".
 * @param {any} a a baseball-poker.action-taken effect
 */
function actionWords(a) {
  const verb = ACTIONS[a.action] ?? a.action;
  const money = a.amount ? ` (${a.amount} in${a.pot != null ? `, pot ${a.pot}` : ""})` : "";
  return `Seat ${a.seat} ${verb}${money}${a.all_in ? ": ALL IN" : ""}${a.forced ? " (cannot pay)" : ""}`;
}

/** @param {number[]} seats */
const seatList = (seats) => (seats.length === 1 ? `seat ${seats[0]}` : `seats ${seats.join(", ")}`);

/**
 * Baseball poker effects in words; null for those the main line or the prompt already says.
 * @param {any} e
 * @returns {string | null}
 */
function baseballLine(e) {
  switch (e.kind) {
    case "baseball-poker.rainout": {
      const where = e.seat != null ? `at seat ${e.seat}` : "as the community card";
      return `RAINOUT: ${cardLabel(String(e.card))} face up ${where}; re-deal to ${seatList(e.seats ?? [])}, each antes again, the pot stays`;
    }
    case "baseball-poker.opener":
      return `Seat ${e.seat} opens ${STREETS[e.street] ?? e.street} street (${e.why})`;
    case "baseball-poker.no-betting":
      return `No betting on ${STREETS[e.street] ?? e.street} street`;
    case "baseball-poker.action-taken":
      return actionWords(e);
    case "baseball-poker.hand-shown":
      return `Seat ${e.seat}: ${e.category}, ${(e.best ?? []).map(cardLabel).join(" ")}`;
    case "baseball-poker.pot-awarded": {
      const shares = Object.entries(e.shares ?? {});
      if (e.returned) return `Uncalled ${e.amount} back to seat ${shares[0]?.[0] ?? "?"}`;
      const to = shares.length > 1 ? shares.map(([seat, chips]) => `seat ${seat} ${chips}`).join(", ") : seatList(e.winners ?? []);
      return `Pot ${e.amount} to ${to}`;
    }
    case "baseball-poker.player-settled":
      return e.pay ? `Seat ${e.seat}: push ${e.pay} (${signed(e.net)})` : null;
    default:
      return null;
  }
}

/** @param {any} moved a grand-slam.stack-moved effect */
function moveWords(moved) {
  if (moved.to === "out") return `out (${moved.amount} lost)`;
  if (moved.to === "home") return `stack home, ${moved.amount} scores`;
  return `stack to ${moved.to}`;
}

/**
 * Lines for effects not already told by the main line.
 * @param {any[]} effects
 */
function effectLines(effects) {
  /** @type {string[]} */
  const lines = [];
  for (const e of effects) {
    if (e.kind === "grand-slam.stack-moved") lines.push(`Seat ${e.seat} ${e.from_base} base: ${moveWords(e)}`);
    else if (e.kind === "grand-slam.grand-slam") lines.push(`GRAND SLAM at seat ${e.seat}: ${e.amount} scores`);
    else if (e.kind === "grand-slam.seat-settled") lines.push(settled(e));
    else if (e.kind === "card-dead") lines.push(`Dead card ${cardLabel(e.card)}: ${e.reason}`);
    else if (e.kind === "round-voided") lines.push("Every wager goes back to its seat");
    else if (e.kind === "grand-slam.blind-off") lines.push(`Blind hand off: remove the puck from seat ${e.seat}`);
    else if (String(e.kind).startsWith("jokers-22.")) {
      const line = jokers22Line(e);
      if (line) lines.push(line);
    } else if (String(e.kind).startsWith("baseball-poker.")) {
      const line = baseballLine(e);
      if (line) lines.push(line);
    }
  }
  return lines;
}

/** @param {any[]} effects */
function notices(effects) {
  return effectLines(effects.filter((e) => e.kind === "grand-slam.blind-off"));
}

/** @param {any} e a grand-slam.seat-settled effect */
function settled(e) {
  if (e.pay && e.collect) return `Seat ${e.seat}: pay ${e.pay}, take ${e.collect}`;
  if (e.pay) return `Seat ${e.seat}: pay ${e.pay}`;
  if (e.collect) return `Seat ${e.seat} out: take ${e.collect}`;
  return `Seat ${e.seat}: push`;
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
 * @returns {string[]} the lines written
 */
export function logEntry(list, entry, max) {
  const lines = describeEntry(entry);
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
