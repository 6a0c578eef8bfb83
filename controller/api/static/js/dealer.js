/**
 * The dealer-assist screen: the table as drawn on the felt, the one instruction to follow, the
 * card just read, the payouts, the last events; opening a round; confirm (Enter or Space);
 * faults taking over the screen until a supervisor clears them. Everything shown is drawn from
 * the table's state (GET /api/state, then the WebSocket), never worked out here.
 *
 * The table's game decides the drawing and the panels: Grand Slam (seats, bases, the wager grid)
 * or Jokers 22 (spots, hands and the banker; the deciding player's choices as buttons, exactly
 * those the engine allows; the opening panel with the banker's stake and players per spot; the
 * ACTION spot, the coverage and the payouts per player from the round's settlement) or Baseball
 * poker (seats with their cards, wild cards marked, the pot and side pots; the player to act with
 * the amount to call and a button per action the engine allows, with the chips it puts in; the
 * opening panel with each player's stack; at the showdown the hands and the pots pushed).
 * A Grand Slam table with an overhead camera adds what the camera sees (js/camera-panel.js).
 */
import { errorText, get, logout, onAuthLost, post } from "./api.js";
import { BaseballDrawing, potName } from "./baseball-svg.js";
import { DealerCamera } from "./camera-panel.js";
import { cardElement, cardLabel } from "./cards.js";
import { Jokers22Drawing } from "./jokers22-svg.js";
import { LINK_TEXT, LiveFeed } from "./live.js";
import { requireLogin } from "./login.js";
import { TableDrawing } from "./table-svg.js";
import { logEntry } from "./words.js";

const SEATS = [1, 2, 3, 4, 5, 6, 7];
const BETS = /** @type {const} */ (["first", "second", "third", "three_outs", "poker_bonus"]);
const BET_LABELS = { first: "First", second: "Second", third: "Third", three_outs: "3 Outs", poker_bonus: "Poker bonus" };
const BET_NAMES = { first: "first base", second: "second base", third: "third base", three_outs: "3 Outs insurance", poker_bonus: "poker bonus" };
const LOG_LINES = 10;
const NEED_ROLE = "This screen needs the dealer's (or the supervisor's) token.";
const GAME_NAMES = /** @type {Record<string, string>} */ ({ "grand-slam": "Grand Slam", "jokers-22": "Jokers 22", "baseball-poker": "Baseball poker" });
/** Jokers 22: the choices as the buttons say them. */
const DECISION_WORDS = /** @type {Record<string, string>} */ ({
  hit: "Hit", stand: "Stand", double: "Double", split: "Split", surrender: "Surrender", match: "Match", decline: "Decline",
});
/** Baseball poker: the actions as the buttons say them (the chips each puts in are added). */
const ACTION_WORDS = /** @type {Record<string, string>} */ ({
  "bring-in": "Bring in", complete: "Complete", check: "Check", bet: "Bet", call: "Call", raise: "Raise", fold: "Fold",
  pay: "Pay", decline: "Decline",
});
/** Baseball poker: the streets as the dealer says them. */
const STREET_WORDS = /** @type {Record<number, string>} */ ({ 3: "3rd street", 4: "4th street", 5: "5th street", 6: "6th street", 7: "7th street" });
/** Jokers 22: the choices a named player makes for their own wager (the others are the spot's). */
const OWN_CHOICES = new Set(["match", "decline", "surrender"]);
/** Jokers 22: player rows the opening panel starts with (more on demand, up to the API's 7). */
const J22_SLOTS = 1;
const J22_MAX_SLOTS = 7;

/** @param {string} id */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
/** @param {string} id */
const field = (id) => /** @type {HTMLInputElement} */ (document.getElementById(id));

/** @type {TableDrawing | Jokers22Drawing | BaseballDrawing | null} the drawing for the table's game */
let drawing = null;
/** @type {any} the last state drawn */
let current = null;
/** @type {LiveFeed | null} */
let feed = null;
/** @type {{card: string, words: string} | null} where the last card went, from its journal entry */
let lastCardStory = null;
/** @type {any} the body of the last round this screen opened, for "Same as last round" */
let lastOpened = null;
/** @type {any} Jokers 22: the body of the last round this screen opened */
let lastOpenedJ22 = null;
/** @type {{round: number, settlement: any} | null} Jokers 22: the last settled round's settlement */
let settled = null;
/** @type {number | null} the round whose settlement is being fetched */
let fetchingRound = null;
/** @type {{round: number | null, spot: number} | null} the ACTION spot named live, before settlement */
let liveAction = null;
/** @type {any} Baseball poker: the body of the last hand this screen opened */
let lastOpenedBB = null;
/** @type {{round: number | null, card: string, seat: number | null, seats: number[]} | null} Baseball poker: the last rainout seen live */
let liveRainout = null;
/** @type {DealerCamera | null} the overhead camera's panels (made in main, once the page is there) */
let camera = null;

// --- drawing the state -------------------------------------------------------------------------

/** @param {any} state the GET /api/state document */
function render(state) {
  current = state;
  const simulated = Boolean(state.simulated) || Object.values(state.devices ?? {}).some((d) => d && d.simulated);
  $("simulated-banner").hidden = !simulated;
  document.body.classList.toggle("simulated", simulated);
  $("draw-card").hidden = !state.simulated;
  $("table-id").textContent = state.table ?? "Table";
  setText($("game-name"), GAME_NAMES[state.game] ?? state.game ?? "");
  $("round-info").textContent = state.round ? `Round ${state.round} \u00b7 ${state.round_status ?? ""}` : "No round yet";
  $("shoe-info").textContent = state.shoe ? `Shoe: ${state.shoe.remaining} cards left` : "";

  setText($("prompt"), state.prompt ?? "");
  const awaiting = state.awaiting ?? { kind: "nothing", target: {} };
  const betweenRounds = awaiting.kind === "round";
  const openable = betweenRounds && !state.blocked;
  const j22 = state.game === "jokers-22";
  const bb = state.game === "baseball-poker";
  document.body.classList.toggle("jokers-22", j22);
  document.body.classList.toggle("baseball-poker", bb);
  const board = drawingFor(state.game);
  if (board instanceof BaseballDrawing) {
    const settlement = state.round_status === "settled" ? state.settlement : null;
    board.render(state.state, {
      settlement,
      rainout: liveRainout && liveRainout.round === state.round ? liveRainout : null,
      fresh: /^Rainout/.test(state.notice ?? ""),
    });
    renderBBPayouts(state.payouts ?? [], settlement);
  } else if (board instanceof Jokers22Drawing) {
    const settlement = settlementOf(state);
    const action = settlement?.action_spot ?? (liveAction && liveAction.round === state.round ? liveAction.spot : null);
    board.render(state.state, {
      target: awaiting.kind === "card" ? awaiting.target : null,
      decision: awaiting.kind === "decision" ? awaiting.who : null,
      payouts: state.payouts ?? [],
      settlement,
      actionSpot: action,
    });
    renderJ22Payouts(state.payouts ?? [], settlement);
  } else {
    board.render(state.state, {
      target: awaiting.kind === "card" ? awaiting.target : null,
      payouts: state.payouts ?? [],
    });
    renderPayouts(state.payouts ?? []);
  }
  if (bb) renderActions(awaiting, Boolean(state.blocked));
  else renderDecisions(j22 ? awaiting : null, Boolean(state.blocked));
  renderLastCard(state.last_card);
  $("confirm").classList.toggle("attention", betweenRounds && /^(Pay|Take|.*shuffle)/i.test(state.prompt ?? ""));
  $("wager-panel").hidden = j22 || bb || !openable;
  $("j22-open").hidden = !j22 || !openable;
  $("bb-open").hidden = !bb || !openable;
  board.setCompact(openable);
  camera?.render(state);
  renderFaults(state.faults ?? [], Boolean(state.blocked));
}

/** Fetch the whole state and draw it (when the screen's view may be behind the table's). */
function refresh() {
  get("/api/state")
    .then(render)
    .catch((err) => ($("action-error").textContent = errorText(err)));
}

/**
 * The drawing for `game` on #table, made the first time the game is seen.
 * @param {string} game
 */
function drawingFor(game) {
  const kind = game === "jokers-22" ? Jokers22Drawing : game === "baseball-poker" ? BaseballDrawing : TableDrawing;
  if (drawing instanceof kind) return drawing;
  const svg = /** @type {SVGSVGElement} */ (/** @type {unknown} */ ($("table")));
  svg.replaceChildren();
  svg.classList.remove("table-drawing", "j22-drawing", "bb-drawing", "compact", "void");
  drawing = new kind(svg);
  return drawing;
}

/**
 * Jokers 22: the settlement of the settled round on the table (GET /api/rounds/{n}: the ACTION
 * spot, the coverage and the settled totals), fetched once; null until it has come.
 * @param {any} state
 */
function settlementOf(state) {
  if (state.round_status !== "settled" || !state.round) return null;
  if (settled && settled.round === state.round) return settled.settlement;
  if (fetchingRound !== state.round) {
    const round = state.round;
    fetchingRound = round;
    get(`/api/rounds/${round}`)
      .then((doc) => {
        settled = { round, settlement: doc.settlement ?? null };
        if (current && current.round === round) render(current);
      })
      .catch((err) => ($("action-error").textContent = errorText(err)))
      .finally(() => (fetchingRound = null));
  }
  return null;
}

/**
 * Change text only when it changed, so screen readers announce only real changes.
 * @param {HTMLElement} node
 * @param {string} text
 */
function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

/** @param {string | null} card */
function renderLastCard(card) {
  const box = $("last-card");
  if ((box.firstElementChild?.getAttribute("data-card") ?? null) !== card || !box.firstElementChild) {
    box.replaceChildren(card ? cardElement(card, "big") : emptyCard());
  }
  const where = card && lastCardStory && lastCardStory.card === card ? lastCardStory.words : card ? cardLabel(card) : "None yet";
  setText($("last-card-where"), where);
}

function emptyCard() {
  const span = document.createElement("span");
  span.className = "card big empty";
  span.setAttribute("aria-label", "no card yet");
  return span;
}

/** @param {number} n */
const signed = (n) => (n > 0 ? `+${n}` : n < 0 ? `\u2212${-n}` : "0");

/**
 * The payouts table's column heads, for the game on the table.
 * @param {string[]} names
 */
function payoutColumns(names) {
  const head = /** @type {HTMLTableElement} */ ($("payouts")).tHead;
  const key = names.join("|");
  if (!head || head.dataset.columns === key) return;
  head.dataset.columns = key;
  const row = document.createElement("tr");
  for (const name of names) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = name;
    row.append(th);
  }
  head.replaceChildren(row);
}

/** @param {Array<{seat: number, pay: number, collect: number, net: number}>} payouts */
function renderPayouts(payouts) {
  payoutColumns(["Seat", "Pay", "Take", "Net"]);
  $("action-spot").hidden = true;
  const body = /** @type {HTMLTableElement} */ ($("payouts")).tBodies[0];
  body.replaceChildren(
    ...payouts.map((p) => {
      const row = document.createElement("tr");
      row.dataset.seat = String(p.seat);
      row.append(cell(`Seat ${p.seat}`, "seat"), cell(p.pay ? String(p.pay) : "\u2013", "pay"),
        cell(p.collect ? String(p.collect) : "\u2013", "collect"),
        cell(signed(p.net), `net ${p.net > 0 ? "win" : p.net < 0 ? "loss" : ""}`));
      return row;
    }),
  );
  $("payouts-empty").hidden = payouts.length > 0;
  $("payouts").hidden = payouts.length === 0;
  $("payouts-heading").textContent = payouts.length && current?.round ? `Payouts, round ${current.round}` : "Payouts";
}

/**
 * Jokers 22: pay and take per player per spot, how much of each player's money the banker
 * covered, the banker's net and the ACTION spot (the last three from the settlement).
 * @param {Array<{spot: number, player: string, pay: number, collect: number, net: number}>} payouts
 * @param {any} settlement
 */
function renderJ22Payouts(payouts, settlement) {
  payoutColumns(["Spot", "Player", "Covered", "Pay", "Take", "Net"]);
  const body = /** @type {HTMLTableElement} */ ($("payouts")).tBodies[0];
  const rows = payouts.map((p) => {
    const row = document.createElement("tr");
    row.dataset.spot = String(p.spot);
    row.dataset.player = p.player;
    row.append(cell(String(p.spot), "spot"), cell(p.player, "player"), cell(coveredText(settlement, p.spot, p.player), "covered"),
      cell(p.pay ? String(p.pay) : "\u2013", "pay"), cell(p.collect ? String(p.collect) : "\u2013", "collect"),
      cell(signed(p.net), `net ${p.net > 0 ? "win" : p.net < 0 ? "loss" : ""}`));
    return row;
  });
  const banker = settlement?.banker;
  if (payouts.length && banker && typeof banker.net === "number") {
    const row = document.createElement("tr");
    row.dataset.banker = banker.player ?? "house";
    row.className = "banker-row";
    row.append(cell("Banker", "spot"), cell(banker.player ?? "", "player"), cell(`stake ${banker.stake}`, "covered"),
      cell("", "pay"), cell("", "collect"), cell(signed(banker.net), `net ${banker.net > 0 ? "win" : banker.net < 0 ? "loss" : ""}`));
    rows.push(row);
  }
  body.replaceChildren(...rows);
  const action = $("action-spot");
  action.hidden = !(payouts.length && settlement && settlement.action_spot);
  if (!action.hidden) {
    setText(action, `ACTION spot ${settlement.action_spot} \u00b7 coverage by ${settlement.coverage ?? "rotation"} from there`);
  }
  $("payouts-empty").hidden = payouts.length > 0;
  $("payouts").hidden = payouts.length === 0;
  $("payouts-heading").textContent = payouts.length && current?.round ? `Payouts, round ${current.round}` : "Payouts";
}

/**
 * How much of `player`'s money on `spot` the banker covered: "50", or "30 of 40" when only part.
 * @param {any} settlement
 * @param {number} spot
 * @param {string} player
 */
function coveredText(settlement, spot, player) {
  const hands = settlement?.spots?.find((/** @type {any} */ s) => s.spot === spot)?.hands ?? [];
  const wagers = hands.flatMap((/** @type {any} */ h) => h.wagers ?? []).filter((/** @type {any} */ w) => w.player === player);
  if (!wagers.length) return "\u2026";
  const covered = wagers.reduce((sum, /** @type {any} */ w) => sum + (w.covered ?? 0), 0);
  const amount = wagers.reduce((sum, /** @type {any} */ w) => sum + (w.amount ?? 0), 0);
  return covered === amount ? String(covered) : `${covered} of ${amount}`;
}

// --- Jokers 22: the deciding player's choices --------------------------------------------------

/**
 * Big buttons for exactly the choices the engine allows the player who must decide now.
 * @param {any} awaiting the state's `awaiting` (null when the game has no decisions)
 * @param {boolean} blocked
 */
function renderDecisions(awaiting, blocked) {
  const box = $("decisions");
  const show = Boolean(awaiting) && awaiting.kind === "decision" && !blocked;
  box.hidden = !show;
  document.body.classList.toggle("deciding", show);
  if (!show) {
    box.dataset.key = "";
    return;
  }
  const who = awaiting.who ?? {};
  const allowed = /** @type {string[]} */ (awaiting.allowed ?? []);
  const key = JSON.stringify([who, allowed]);
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  $("decision-error").textContent = "";
  const hand = who.hand && (who.hand > 1 || current?.state?.spots?.find((/** @type {any} */ s) => s.spot === who.spot)?.hands?.length > 1)
    ? `, hand ${who.hand}` : "";
  setText($("decision-who"), `Spot ${who.spot}${hand}: ${who.player ?? "the player"} on ${who.total ?? "?"}`);
  $("decision-buttons").replaceChildren(
    ...allowed.map((action) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = `decision decision-${action}`;
      button.dataset.action = action;
      button.textContent = DECISION_WORDS[action] ?? action;
      button.addEventListener("click", () => decide(who, action));
      return button;
    }),
  );
}

/**
 * Post the player's choice; the engine refuses anything it does not allow, in its own words.
 * @param {any} who the state's `awaiting.who`
 * @param {string} action
 */
async function decide(who, action) {
  /** @type {Record<string, string | number>} */
  const body = { spot: who.spot, action };
  if (OWN_CHOICES.has(action) && who.player) body.player = who.player;
  const buttons = /** @type {NodeListOf<HTMLButtonElement>} */ (document.querySelectorAll("#decision-buttons button"));
  buttons.forEach((b) => (b.disabled = true));
  const ok = await act(post("/api/decisions", body), $("decision-error"));
  // On success the next state replaces the buttons; on a refusal the dealer may choose again.
  if (!ok) buttons.forEach((b) => (b.disabled = false));
}

/**
 * @param {string} text
 * @param {string} className
 */
function cell(text, className) {
  const td = document.createElement("td");
  td.textContent = text;
  td.className = className;
  return td;
}

// --- Baseball poker: the pots pushed, the player to act ------------------------------------------

/**
 * Baseball poker: each pot with whom it goes to (the pots to push), then per seat the chips
 * pushed to it, what it put in and its net.
 * @param {Array<{seat: number, pay: number, collect: number, net: number}>} payouts
 * @param {any} settlement the hand's settlement, once settled
 */
function renderBBPayouts(payouts, settlement) {
  payoutColumns(["Seat", "Push", "Put in", "Net"]);
  $("action-spot").hidden = true;
  const pots = /** @type {any[]} */ (payouts.length ? settlement?.pots ?? [] : []);
  const named = pots.filter((p) => !p.returned);
  const potRows = pots.map((pot, i) => {
    const row = document.createElement("tr");
    row.className = "pot-row";
    row.dataset.pot = String(i);
    const shares = /** @type {Array<{seat: number, chips: number}>} */ (pot.shares ?? []);
    const to = shares.length > 1 ? shares.map((s) => `seat ${s.seat} ${s.chips}`).join(", ") : `seat ${pot.winners?.[0] ?? "?"}`;
    const name = pot.returned ? "Uncalled bet" : potName(named.indexOf(pot), named.length);
    const winners = cell(`→ ${to}`, "winners");
    winners.colSpan = 2;
    row.append(cell(name, "pot"), cell(String(pot.amount), "amount"), winners);
    return row;
  });
  const seatRows = payouts.map((p) => {
    const row = document.createElement("tr");
    row.dataset.seat = String(p.seat);
    row.append(cell(`Seat ${p.seat}`, "seat"), cell(p.pay ? String(p.pay) : "\u2013", "pay"),
      cell(p.collect ? String(p.collect) : "\u2013", "collect"),
      cell(signed(p.net), `net ${p.net > 0 ? "win" : p.net < 0 ? "loss" : ""}`));
    return row;
  });
  /** @type {HTMLTableElement} */ ($("payouts")).tBodies[0].replaceChildren(...potRows, ...seatRows);
  $("payouts-empty").hidden = payouts.length > 0;
  $("payouts").hidden = payouts.length === 0;
  $("payouts-heading").textContent = payouts.length && current?.round ? `Pots to push, hand ${current.round}` : "Pots to push";
}

/**
 * Baseball poker: who acts, the amount to call, and a big button for exactly each action the
 * engine allows, saying the chips it puts in.
 * @param {any} awaiting the state's `awaiting`
 * @param {boolean} blocked
 */
function renderActions(awaiting, blocked) {
  const box = $("decisions");
  const show = awaiting.kind === "decision" && !blocked;
  box.hidden = !show;
  document.body.classList.toggle("deciding", show);
  $("decision-facts").hidden = !show;
  if (!show) {
    box.dataset.key = "";
    return;
  }
  const who = awaiting.who ?? {};
  const allowed = /** @type {string[]} */ (awaiting.allowed ?? []);
  const key = JSON.stringify([current?.round, who, allowed]);
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  $("decision-error").textContent = "";
  const toCall = who.to_call ?? 0;
  let what = toCall > 0 ? `${toCall} to call` : "nothing to call";
  if (who.for) what = `${who.for}, ${who.price} to pay`;
  else if (allowed.includes("bring-in")) what = "opens: bring it in or complete";
  setText($("decision-who"), `Seat ${who.seat} to act \u00b7 ${what}`);
  const facts = [STREET_WORDS[who.street] ?? "", who.pot != null ? `pot ${who.pot}` : "", who.stack != null ? `stack ${who.stack}` : ""];
  setText($("decision-facts"), facts.filter(Boolean).join(" \u00b7 "));
  /** @type {Record<string, number>} */
  const amounts = who.amounts ?? (who.price != null ? { pay: who.price, decline: 0 } : {});
  $("decision-buttons").replaceChildren(
    ...allowed.map((action) => {
      const chips = amounts[action] ?? 0;
      const button = document.createElement("button");
      button.type = "button";
      button.className = `decision decision-${action}`;
      button.dataset.action = action;
      button.dataset.amount = String(chips);
      const verb = document.createElement("span");
      verb.className = "verb";
      verb.textContent = ACTION_WORDS[action] ?? action;
      button.append(verb);
      if (chips > 0) {
        const put = document.createElement("span");
        put.className = "chips";
        put.textContent = ` puts in ${chips}`;
        button.append(put);
      }
      button.setAttribute("aria-label", chips > 0 ? `${verb.textContent}: puts in ${chips} chips` : verb.textContent ?? action);
      button.addEventListener("click", () => actFor(who.seat, action));
      return button;
    }),
  );
}

/**
 * Post a player's action; the engine refuses anything not allowed, naming the seat and what was.
 * @param {number} seat
 * @param {string} action
 */
async function actFor(seat, action) {
  const buttons = /** @type {NodeListOf<HTMLButtonElement>} */ (document.querySelectorAll("#decision-buttons button"));
  buttons.forEach((b) => (b.disabled = true));
  const ok = await act(post("/api/decisions", { seat, action }), $("decision-error"));
  if (!ok) buttons.forEach((b) => (b.disabled = false));
}

// --- faults take over the screen ---------------------------------------------------------------

/**
 * @param {any[]} faults
 * @param {boolean} blocked
 */
function renderFaults(faults, blocked) {
  const overlay = $("fault-overlay");
  const show = faults.length > 0 || blocked;
  const key = JSON.stringify(faults.map((f) => [f.id, f.acknowledged_by]));
  if (overlay.dataset.key !== key) {
    overlay.dataset.key = key;
    $("fault-list").replaceChildren(...faults.map(faultBlock));
    if (show && faults.length === 0) $("fault-list").append(paragraph("Play is stopped.", "fault-message"));
  }
  const wasHidden = overlay.hidden;
  overlay.hidden = !show;
  $("dealer-main").inert = show;
  if (show && wasHidden) {
    const first = /** @type {HTMLElement | null} */ (overlay.querySelector(".ack-action:not([disabled])"));
    (first ?? /** @type {HTMLElement} */ (overlay.querySelector(".fault-box"))).focus();
  }
}

/** @param {any} fault */
function faultBlock(fault) {
  const block = document.createElement("section");
  block.className = "fault";
  block.dataset.faultId = String(fault.id);
  const title = document.createElement("h2");
  title.textContent = fault.title;
  block.append(title, paragraph(fault.message, "fault-message"));
  if (fault.card) {
    const held = document.createElement("div");
    held.className = "fault-card";
    held.append(cardElement(fault.card, "small"), document.createTextNode(` Card held: ${cardLabel(fault.card)}`));
    block.append(held);
  }
  const status = paragraph(
    fault.acknowledged_by ? `Acknowledged by ${fault.acknowledged_by}. Waiting for a supervisor.` : "Not acknowledged yet.",
    "fault-status",
  );
  const ack = document.createElement("button");
  ack.type = "button";
  ack.className = "ack-action primary";
  ack.textContent = fault.acknowledged_by ? "Acknowledged" : "Acknowledge";
  ack.disabled = Boolean(fault.acknowledged_by);
  ack.addEventListener("click", () => act(post(`/api/faults/${fault.id}/acknowledge`, {}), status));
  block.append(status, ack);
  return block;
}

/**
 * @param {string} text
 * @param {string} className
 */
function paragraph(text, className) {
  const p = document.createElement("p");
  p.className = className;
  p.textContent = text;
  return p;
}

// --- the event log -----------------------------------------------------------------------------

/** @param {import("./live.js").Entry} entry */
function onEntry(entry) {
  const action = (entry.effects ?? []).find((e) => e.kind === "jokers-22.action-spot");
  if (action) liveAction = { round: entry.round, spot: action.spot };
  const rain = (entry.effects ?? []).find((e) => e.kind === "baseball-poker.rainout");
  if (rain) liveRainout = { round: entry.round, card: rain.card, seat: rain.seat, seats: rain.seats ?? [] };
  const lines = logEntry($("event-log"), entry, LOG_LINES);
  if (entry.kind === "card" && entry.body?.card) lastCardStory = { card: entry.body.card, words: lines[0] };
  if (current) renderLastCard(current.last_card);
}

// --- actions -----------------------------------------------------------------------------------

/**
 * Run an API call; show its refusal in `where` (the server's words), clear it on success.
 * @param {Promise<unknown>} call
 * @param {HTMLElement} [where]
 */
async function act(call, where = $("action-error")) {
  where.textContent = "";
  try {
    await call;
    return true;
  } catch (err) {
    where.textContent = errorText(err);
    where.classList.add("error");
    return false;
  }
}

function confirm() {
  act(post("/api/confirm", {}));
}

/** Build the wager grid once: a row per bet, a column per seat, seat 7 on the left as on the felt. */
function buildWagerRows() {
  const order = [...SEATS].reverse();
  const head = document.createElement("tr");
  head.append(document.createElement("td"));
  for (const seat of order) {
    const th = document.createElement("th");
    th.scope = "col";
    th.dataset.seat = String(seat);
    th.textContent = `Seat ${seat}`;
    head.append(th);
  }
  $("wager-seats").replaceChildren(head);
  const rows = BETS.map((bet) => {
    const row = document.createElement("tr");
    const name = document.createElement("th");
    name.scope = "row";
    name.textContent = BET_LABELS[bet];
    row.append(name);
    for (const seat of order) {
      const td = document.createElement("td");
      const input = document.createElement("input");
      input.type = "text";
      input.inputMode = "numeric";
      input.autocomplete = "off";
      input.pattern = "[0-9]*";
      input.dataset.seat = String(seat);
      input.dataset.bet = bet;
      input.setAttribute("aria-label", `Seat ${seat} ${BET_NAMES[bet]}`);
      td.append(input);
      row.append(td);
    }
    return row;
  });
  $("wager-rows").replaceChildren(...rows);
}

/** @returns {NodeListOf<HTMLInputElement>} */
const wagerInputs = () => document.querySelectorAll("#wager-rows input[data-bet]");

/**
 * The POST /api/rounds body from the form, or an error naming the seat and the field.
 * @returns {{body: any} | {error: string, seat: number}}
 */
function readWagers() {
  /** @type {Map<number, {seat: number, wagers: Record<string, number>, side_bets: Record<string, number>}>} */
  const seats = new Map();
  for (const input of wagerInputs()) {
    const seat = Number(input.dataset.seat);
    const bet = /** @type {typeof BETS[number]} */ (input.dataset.bet);
    const text = input.value.trim();
    if (!text) continue;
    if (!/^\d+$/.test(text)) return { error: `Seat ${seat} ${BET_NAMES[bet]}: a whole number of chips`, seat };
    const amount = Number(text);
    if (amount === 0) continue;
    const entry = seats.get(seat) ?? { seat, wagers: {}, side_bets: {} };
    if (bet === "three_outs" || bet === "poker_bonus") entry.side_bets[bet] = amount;
    else entry.wagers[bet] = amount;
    seats.set(seat, entry);
  }
  if (seats.size === 0) return { error: "No wagers: type at least one seat's first-base wager", seat: 0 };
  const blind = /** @type {HTMLSelectElement} */ ($("blind-seat")).value;
  return { body: { seats: [...seats.values()].sort((a, b) => a.seat - b.seat), blind_seat: blind ? Number(blind) : null } };
}

/** @param {SubmitEvent} ev */
async function openRound(ev) {
  ev.preventDefault();
  const error = $("wager-error");
  const read = readWagers();
  markRefusedSeat(0);
  if ("error" in read) {
    error.textContent = read.error;
    markRefusedSeat(read.seat);
    return;
  }
  const button = /** @type {HTMLButtonElement} */ ($("open-round"));
  button.disabled = true;
  const ok = await act(post("/api/rounds", read.body), error);
  button.disabled = false;
  if (ok) {
    lastOpened = read.body;
    clearWagers();
  } else {
    const seat = /seat (\d)/i.exec(error.textContent ?? "");
    markRefusedSeat(seat ? Number(seat[1]) : 0);
  }
}

/** @param {number} seat the seat whose column to mark as refused (0: none) */
function markRefusedSeat(seat) {
  document.querySelectorAll("#wager-panel [data-seat]").forEach((node) => {
    node.classList.toggle("refused", Number(/** @type {HTMLElement} */ (node).dataset.seat) === seat);
  });
}

function clearWagers() {
  wagerInputs().forEach((input) => (input.value = ""));
  /** @type {HTMLSelectElement} */ ($("blind-seat")).value = "";
  $("wager-error").textContent = "";
  markRefusedSeat(0);
}

/** Fill the form with the last round's wagers (this screen's, else the table's last round). */
function repeatWagers() {
  const seats = lastOpened?.seats ?? (current?.state?.seats ?? []).map((/** @type {any} */ s) => s.bet);
  clearWagers();
  for (const bet of seats) {
    for (const [name, amount] of Object.entries({ ...bet.wagers, ...(bet.side_bets ?? {}) })) {
      const input = /** @type {HTMLInputElement | null} */ (document.querySelector(`#wager-rows input[data-seat="${bet.seat}"][data-bet="${name}"]`));
      if (input) input.value = String(amount);
    }
  }
  const blind = lastOpened ? lastOpened.blind_seat : current?.state?.blind_seat;
  /** @type {HTMLSelectElement} */ ($("blind-seat")).value = blind ? String(blind) : "";
}

// --- Jokers 22: opening a round ------------------------------------------------------------------

/** Player rows in the opening panel now. */
let j22Slots = 0;

/** The spot columns (7 to 1, as on the felt), then `J22_SLOTS` player rows. */
function buildJ22Panel() {
  const head = document.createElement("tr");
  head.append(document.createElement("td"));
  for (const spot of [...SEATS].reverse()) {
    const th = document.createElement("th");
    th.scope = "col";
    th.dataset.spot = String(spot);
    th.textContent = `Spot ${spot}`;
    head.append(th);
  }
  $("j22-spots").replaceChildren(head);
  $("j22-rows").replaceChildren();
  j22Slots = 0;
  while (j22Slots < J22_SLOTS) addJ22Slot();
}

/** One more player on every spot: a name row and a wager row. */
function addJ22Slot() {
  if (j22Slots >= J22_MAX_SLOTS) return;
  const slot = j22Slots++;
  for (const [name, what] of /** @type {const} */ ([["player", "Player"], ["amount", "Wager"]])) {
    const row = document.createElement("tr");
    row.dataset.slot = String(slot);
    const th = document.createElement("th");
    th.scope = "row";
    th.dataset.what = what;
    row.append(th);
    for (const spot of [...SEATS].reverse()) {
      const td = document.createElement("td");
      const input = document.createElement("input");
      input.type = "text";
      input.autocomplete = "off";
      input.spellcheck = false;
      if (name === "amount") {
        input.inputMode = "numeric";
        input.pattern = "[0-9]*";
      } else {
        input.maxLength = 80;
      }
      input.dataset.spot = String(spot);
      input.dataset.slot = String(slot);
      input.dataset.field = name;
      input.setAttribute("aria-label", `Spot ${spot}, player ${slot + 1}: ${name === "player" ? "name" : "wager"}`);
      td.append(input);
      row.append(td);
    }
    $("j22-rows").append(row);
  }
  // With one player per spot the rows say "Player" and "Wager"; with more, which player.
  document.querySelectorAll("#j22-rows th[data-what]").forEach((th) => {
    const row = /** @type {HTMLElement} */ (th.parentElement);
    const what = /** @type {HTMLElement} */ (th).dataset.what ?? "";
    th.textContent = j22Slots > 1 ? `${what} ${Number(row.dataset.slot) + 1}` : what;
  });
  /** @type {HTMLButtonElement} */ ($("j22-add-slot")).disabled = j22Slots >= J22_MAX_SLOTS;
}

/**
 * @param {number} spot
 * @param {number} slot
 * @param {"player" | "amount"} name
 */
const j22Input = (spot, slot, name) =>
  /** @type {HTMLInputElement | null} */ (document.querySelector(`#j22-rows input[data-spot="${spot}"][data-slot="${slot}"][data-field="${name}"]`));

/**
 * The POST /api/rounds body from the panel, or what is missing, naming the spot (0: the stake).
 * @returns {{body: any} | {error: string, spot: number}}
 */
function readJ22() {
  const stakeText = field("j22-stake").value.trim();
  if (!/^\d+$/.test(stakeText) || Number(stakeText) < 1) {
    return { error: "Banker's stake: a whole number of chips, 1 or more", spot: 0 };
  }
  /** @type {Array<{spot: number, wagers: Array<{player: string, amount: number}>}>} */
  const spots = [];
  for (const spot of SEATS) {
    /** @type {Array<{player: string, amount: number}>} */
    const wagers = [];
    for (let slot = 0; slot < j22Slots; slot += 1) {
      const player = j22Input(spot, slot, "player")?.value.trim() ?? "";
      const amount = j22Input(spot, slot, "amount")?.value.trim() ?? "";
      if (!player && !amount) continue;
      if (!player) return { error: `Spot ${spot}, player ${slot + 1}: type the player's name for the wager of ${amount}`, spot };
      if (!/^\d+$/.test(amount) || Number(amount) < 1) {
        return { error: `Spot ${spot}, ${player}: the wager is a whole number of chips, 1 or more`, spot };
      }
      wagers.push({ player, amount: Number(amount) });
    }
    if (wagers.length) spots.push({ spot, wagers });
  }
  if (!spots.length) return { error: "No wagers: type a player's name and wager on at least one spot", spot: -1 };
  const bankerName = field("j22-banker").value.trim();
  /** @type {{stake: number, player?: string}} */
  const banker = { stake: Number(stakeText) };
  if (bankerName) banker.player = bankerName;
  return { body: { banker, spots } };
}

/** @param {SubmitEvent} ev */
async function openJ22Round(ev) {
  ev.preventDefault();
  const error = $("j22-error");
  const read = readJ22();
  markJ22Refused(null);
  if ("error" in read) {
    error.textContent = read.error;
    markJ22Refused(read.spot);
    return;
  }
  const button = /** @type {HTMLButtonElement} */ ($("j22-open-round"));
  button.disabled = true;
  const ok = await act(post("/api/rounds", read.body), error);
  button.disabled = false;
  if (ok) {
    lastOpenedJ22 = read.body;
    clearJ22();
    return;
  }
  // The API names the refused spot ("spot 2") or the body's place ("spots[1]", "banker.stake").
  const text = error.textContent ?? "";
  const named = /\bspot (\d)/i.exec(text);
  const index = /spots\[(\d+)\]/.exec(text);
  if (named) markJ22Refused(Number(named[1]));
  else if (index) markJ22Refused(read.body.spots[Number(index[1])]?.spot ?? null);
  else if (/banker/i.test(text)) markJ22Refused(0);
}

/** @param {number | null} spot the refused spot's column, 0 for the stake, null for none */
function markJ22Refused(spot) {
  document.querySelectorAll("#j22-open [data-spot]").forEach((node) => {
    node.classList.toggle("refused", spot !== null && Number(/** @type {HTMLElement} */ (node).dataset.spot) === spot);
  });
  field("j22-stake").classList.toggle("refused", spot === 0);
}

function clearJ22() {
  document.querySelectorAll("#j22-rows input").forEach((input) => (/** @type {HTMLInputElement} */ (input).value = ""));
  field("j22-stake").value = "";
  field("j22-banker").value = "";
  $("j22-error").textContent = "";
  markJ22Refused(null);
}

/** Fill the panel with the last round's stake and wagers (this screen's, else the table's). */
function repeatJ22() {
  const last = lastOpenedJ22 ?? (current?.state?.spots?.length ? { banker: current.state.banker, spots: current.state.spots } : null);
  clearJ22();
  if (!last) return;
  field("j22-stake").value = String(last.banker?.stake ?? "");
  field("j22-banker").value = last.banker?.player ?? "";
  for (const spot of last.spots ?? []) {
    (spot.wagers ?? []).forEach((/** @type {{player: string, amount: number}} */ w, slot) => {
      while (slot >= j22Slots && j22Slots < J22_MAX_SLOTS) addJ22Slot();
      const name = j22Input(spot.spot, slot, "player");
      const amount = j22Input(spot.spot, slot, "amount");
      if (name && amount) {
        name.value = w.player;
        amount.value = String(w.amount);
      }
    });
  }
}

// --- Baseball poker: opening a hand ---------------------------------------------------------------

/** The seat columns (7 to 1, as on the felt) and one row of stacks. */
function buildBBPanel() {
  const order = [...SEATS].reverse();
  const head = document.createElement("tr");
  head.append(document.createElement("td"));
  const row = document.createElement("tr");
  const name = document.createElement("th");
  name.scope = "row";
  name.textContent = "Stack";
  row.append(name);
  for (const seat of order) {
    const th = document.createElement("th");
    th.scope = "col";
    th.dataset.seat = String(seat);
    th.textContent = `Seat ${seat}`;
    head.append(th);
    const td = document.createElement("td");
    const input = document.createElement("input");
    input.type = "text";
    input.inputMode = "numeric";
    input.autocomplete = "off";
    input.pattern = "[0-9]*";
    input.dataset.seat = String(seat);
    input.dataset.field = "stack";
    input.setAttribute("aria-label", `Seat ${seat}: the player's stack (empty: nobody plays)`);
    td.append(input);
    row.append(td);
  }
  $("bb-seats").replaceChildren(head);
  $("bb-rows").replaceChildren(row);
}

/** @returns {NodeListOf<HTMLInputElement>} */
const stackInputs = () => document.querySelectorAll("#bb-rows input[data-field=stack]");

/**
 * The POST /api/rounds body from the panel, or what is wrong, naming the seat (0: none).
 * @returns {{body: any} | {error: string, seat: number}}
 */
function readBB() {
  /** @type {Array<{seat: number, stack: number}>} */
  const players = [];
  for (const input of stackInputs()) {
    const seat = Number(input.dataset.seat);
    const text = input.value.trim();
    if (!text) continue;
    if (!/^\d+$/.test(text) || Number(text) < 1) return { error: `Seat ${seat}: the stack is a whole number of chips, 1 or more`, seat };
    players.push({ seat, stack: Number(text) });
  }
  if (players.length < 2) return { error: "A hand needs two players or more: type each player's stack under their seat", seat: 0 };
  return { body: { players: players.sort((a, b) => a.seat - b.seat) } };
}

/** @param {SubmitEvent} ev */
async function openBBHand(ev) {
  ev.preventDefault();
  const error = $("bb-error");
  const read = readBB();
  markBBRefused(0);
  if ("error" in read) {
    error.textContent = read.error;
    markBBRefused(read.seat);
    return;
  }
  const button = /** @type {HTMLButtonElement} */ ($("bb-open-round"));
  button.disabled = true;
  const ok = await act(post("/api/rounds", read.body), error);
  button.disabled = false;
  if (ok) {
    lastOpenedBB = read.body;
    clearBB();
    return;
  }
  // The API names the refused seat ("seat 2") or the body's place ("players[1]").
  const text = error.textContent ?? "";
  const named = /\bseat (\d)/i.exec(text);
  const index = /players\[(\d+)\]/.exec(text);
  if (named) markBBRefused(Number(named[1]));
  else if (index) markBBRefused(read.body.players[Number(index[1])]?.seat ?? 0);
}

/** @param {number} seat the refused seat's column (0: none) */
function markBBRefused(seat) {
  document.querySelectorAll("#bb-open [data-seat]").forEach((node) => {
    node.classList.toggle("refused", Number(/** @type {HTMLElement} */ (node).dataset.seat) === seat);
  });
}

function clearBB() {
  stackInputs().forEach((input) => (input.value = ""));
  $("bb-error").textContent = "";
  markBBRefused(0);
}

/**
 * Fill the panel with the last hand's players and the stacks they finished it with (the chips in
 * front of them now): from the settled hand on the table, else as this screen last opened it.
 */
function repeatBB() {
  const settled = current?.settlement?.game === "baseball-poker" ? current.settlement : null;
  /** @type {Array<{seat: number, stack: number}>} */
  const players = settled
    ? (settled.players ?? []).map((/** @type {any} */ p) => ({ seat: p.seat, stack: p.stack + p.net }))
    : lastOpenedBB?.players ?? current?.state?.players ?? [];
  clearBB();
  for (const p of players) {
    const input = /** @type {HTMLInputElement | null} */ (document.querySelector(`#bb-rows input[data-seat="${p.seat}"]`));
    if (input && p.stack > 0) input.value = String(p.stack);
  }
}

/**
 * Enter or Space confirms, unless the person is typing in a field, on a button, or a dialog is up.
 * @param {KeyboardEvent} ev
 */
function onKey(ev) {
  if (ev.key !== "Enter" && ev.key !== " ") return;
  if (ev.repeat || ev.altKey || ev.ctrlKey || ev.metaKey) return;
  const target = /** @type {HTMLElement} */ (ev.target);
  if (target.closest("input, select, textarea, button, a, dialog, form")) return;
  if (!$("fault-overlay").hidden || /** @type {HTMLDialogElement} */ ($("login")).open) return;
  ev.preventDefault();
  confirm();
}

// --- start -------------------------------------------------------------------------------------

/** @type {Promise<void> | null} */
let signingIn = null;

/** Log in (once, however many things noticed the session is gone), then go live. */
function signIn() {
  signingIn ??= goLive().finally(() => (signingIn = null));
  return signingIn;
}

async function goLive() {
  feed?.stop();
  await requireLogin(["dealer", "supervisor"], NEED_ROLE);
  if (!current) {
    await get("/api/state")
      .then(render)
      .catch((err) => setText($("prompt"), errorText(err)));
  }
  const seq = current?.journal_seq ?? 0;
  // One feed for the page's life: after a new login it resumes from the last entry it showed.
  feed ??= new LiveFeed(
    {
      onState: render,
      onEntry,
      onStatus: (status) => {
        const link = $("connection");
        link.dataset.status = status;
        link.textContent = LINK_TEXT[status];
      },
      onSignedOut: () => void signIn(),
    },
    // Ask for the last few entries again so the event log starts filled.
    Math.max(0, seq - LOG_LINES),
  );
  feed.start();
}

function main() {
  camera = new DealerCamera(refresh);
  buildWagerRows();
  buildJ22Panel();
  buildBBPanel();
  $("bb-open").addEventListener("submit", openBBHand);
  $("bb-clear").addEventListener("click", clearBB);
  $("bb-repeat").addEventListener("click", repeatBB);
  $("j22-open").addEventListener("submit", openJ22Round);
  $("j22-add-slot").addEventListener("click", addJ22Slot);
  $("j22-clear").addEventListener("click", clearJ22);
  $("j22-repeat").addEventListener("click", repeatJ22);
  $("confirm").addEventListener("click", confirm);
  $("draw-card").addEventListener("click", () => act(post("/api/sim/draw", { count: 1 })));
  $("wager-panel").addEventListener("submit", openRound);
  $("clear-wagers").addEventListener("click", clearWagers);
  $("repeat-wagers").addEventListener("click", repeatWagers);
  $("logout").addEventListener("click", async () => {
    feed?.stop();
    await logout().catch(() => undefined);
    void signIn();
  });
  document.addEventListener("keydown", onKey);
  onAuthLost(() => void signIn());
  // Reads need a login too: nothing of the table is drawn behind the login dialog.
  void signIn();
}

main();
