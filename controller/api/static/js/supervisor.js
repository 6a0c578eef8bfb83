/**
 * The supervisor screen: open faults (acknowledge; clear them by one of the fault's own actions,
 * always with a reason), voiding the round being dealt, the table now, game recall (each of the
 * last rounds replayed card by card on the table drawing, its settlement and its round file),
 * the audit trail, meters, devices and the configuration. The server is the authority on every
 * rule; the checks here only save a round trip and say what is missing. A Jokers 22 table is
 * drawn with its own drawing (spots, hands, the banker), live and in recall, where a step is a
 * card or a player's decision; so is a Baseball poker table (seats with their cards, the pots,
 * the player to act, the showdown), its settlement shown hand by hand and pot by pot. A table
 * with an overhead camera shows it in Devices, live, with a Recalibrate button (also on a "Camera
 * moved" fault, which cannot be dismissed before the camera is recalibrated).
 */
import { errorText, get, logout, onAuthLost, post } from "./api.js";
import { cardLabel, parseCard } from "./cards.js";
import { LINK_TEXT, LiveFeed } from "./live.js";
import { requireLogin } from "./login.js";
import { BaseballDrawing, potName } from "./baseball-svg.js";
import { Jokers22Drawing } from "./jokers22-svg.js";
import { TableDrawing } from "./table-svg.js";
import { CAMERA_WORDS, clock, describeEntry, logEntry } from "./words.js";

const NEED_ROLE = "This screen needs the supervisor's token (the dealer's token opens the dealer screen).";
const ACTION_WORDS = /** @type {Record<string, string>} */ ({
  confirm: "Confirm the card",
  replace: "Replace the card",
  dismiss: "Dismiss",
  void: "Void the round",
});
const RECALL_ROUNDS = 20;
const REPLAY_STEP_MS = 1200;
const DEVICE_ORDER = ["shoe", "lamps", "display", "buttons", "camera"];

/** @param {string} id */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
/** @param {string} id */
const input = (id) => /** @type {HTMLInputElement} */ (document.getElementById(id));

/** @param {string} id */
const svgById = (id) => /** @type {SVGSVGElement} */ (/** @type {unknown} */ ($(id)));

/**
 * Keeps the drawing on one <svg> right for the game it shows: made again when the game changes.
 */
class DrawingSlot {
  /** @param {string} id */
  constructor(id) {
    this.svg = svgById(id);
    /** @type {TableDrawing | Jokers22Drawing | BaseballDrawing} */
    this.drawing = new TableDrawing(this.svg);
  }

  /** @param {string | undefined} game */
  for(game) {
    const kind = game === "jokers-22" ? Jokers22Drawing : game === "baseball-poker" ? BaseballDrawing : TableDrawing;
    if (!(this.drawing instanceof kind)) {
      this.svg.replaceChildren();
      this.svg.classList.remove("table-drawing", "j22-drawing", "bb-drawing", "compact", "void");
      this.drawing = new kind(this.svg);
    }
    return this.drawing;
  }
}
const liveDrawing = new DrawingSlot("live-table");
const replayDrawing = new DrawingSlot("replay-table");

/** @type {any} */
let current = null;
/** @type {any} the camera device's status, from the state or GET /api/devices, whichever is newer */
let cameraDevice = null;
/** @type {LiveFeed | null} */
let feed = null;

// --- small DOM helpers ----------------------------------------------------------------------

/**
 * @param {string} tag
 * @param {string} [text]
 * @param {string} [className]
 */
function make(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

/**
 * A <dt>/<dd> pair for a key-value list.
 * @param {HTMLElement} list
 * @param {string} key
 * @param {string} value
 * @param {string} attr the data attribute naming the row ("meter", "key")
 */
function pair(list, key, value, attr) {
  const dt = make("dt", key);
  const dd = make("dd", value);
  dt.dataset[attr] = key;
  dd.dataset[attr] = key;
  list.append(dt, dd);
}

/** @param {number} n */
const signed = (n) => (n > 0 ? `+${n}` : n < 0 ? `\u2212${-n}` : "0");

/**
 * Run an API call, reporting in #action-error / #action-done.
 * @param {() => Promise<unknown>} call
 * @param {string} done what to say when it worked
 */
async function act(call, done) {
  $("action-error").textContent = "";
  $("action-done").textContent = "";
  try {
    await call();
    $("action-done").textContent = done;
    return true;
  } catch (err) {
    $("action-error").textContent = errorText(err);
    return false;
  }
}

/**
 * The reason typed in #reason, or null (with the field marked and focused) when it is empty.
 * @returns {string | null}
 */
function reasonOrAsk() {
  const field = input("reason");
  const reason = field.value.trim();
  field.setAttribute("aria-invalid", reason ? "false" : "true");
  if (!reason) {
    $("action-done").textContent = "";
    $("action-error").textContent = "Write the reason first: every clearing and every void goes in the audit trail with its reason.";
    field.focus();
    return null;
  }
  return reason;
}

/** The optional name, in the body only when given. */
function who() {
  const name = input("supervisor-name").value.trim();
  return name ? { name } : {};
}

// --- the table now and its faults -----------------------------------------------------------

/** @param {any} state */
function render(state) {
  current = state;
  const simulated = Boolean(state.simulated) || Object.values(state.devices ?? {}).some((d) => d && d.simulated);
  $("simulated-banner").hidden = !simulated;
  $("table-id").textContent = state.table ?? "Table";
  $("round-info").textContent = state.round ? `Round ${state.round} \u00b7 ${state.round_status ?? ""}` : "No round yet";
  if ($("prompt").textContent !== state.prompt) $("prompt").textContent = state.prompt ?? "";
  const awaiting = state.awaiting ?? { kind: "nothing", target: {} };
  const board = liveDrawing.for(state.game);
  if (board instanceof BaseballDrawing) {
    board.render(state.state, { settlement: state.round_status === "settled" ? state.settlement : null, fresh: /^Rainout/.test(state.notice ?? "") });
  } else if (board instanceof Jokers22Drawing) {
    board.render(state.state, {
      target: awaiting.kind === "card" ? awaiting.target : null,
      decision: awaiting.kind === "decision" ? awaiting.who : null,
      payouts: state.payouts ?? [],
    });
  } else {
    board.render(state.state, {
      target: awaiting.kind === "card" ? awaiting.target : null,
      payouts: state.payouts ?? [],
      revealBlind: true,
    });
  }
  renderFaults(state.faults ?? []);
  if (state.devices?.camera) cameraDevice = state.devices.camera;
  renderCamera();
  const dealing = state.round != null && awaiting.kind !== "round";
  const voidButton = /** @type {HTMLButtonElement} */ ($("void-round"));
  voidButton.disabled = !dealing;
  if (!dealing) disarmVoid();
}

/** @param {any[]} faults */
function renderFaults(faults) {
  const list = $("faults");
  const key = JSON.stringify(faults.map((f) => [f.id, f.acknowledged_by]));
  if (list.dataset.key === key) return;
  list.dataset.key = key;
  if (!faults.length) {
    list.replaceChildren(make("p", "No open faults: play can go on.", "none"));
    return;
  }
  list.replaceChildren(...faults.map(faultItem));
}

/** @param {any} fault */
function faultItem(fault) {
  const item = make("article", undefined, "fault-item");
  item.dataset.faultId = String(fault.id);
  item.append(make("h3", `${fault.title} (fault ${fault.id})`), make("p", fault.message));
  const facts = [
    fault.round != null ? `Round ${fault.round}` : "Between rounds",
    fault.card ? `card held: ${cardLabel(fault.card)}` : "",
    `at ${clock(fault.at)}`,
    fault.acknowledged_by ? `acknowledged by ${fault.acknowledged_by}` : "not acknowledged",
  ].filter(Boolean);
  item.append(make("p", facts.join(" \u00b7 "), "muted"));
  const actions = make("div", undefined, "fault-actions");
  if (fault.code === "camera-bumped") {
    // The table refuses to dismiss this fault until the camera has been recalibrated.
    const recal = /** @type {HTMLButtonElement} */ (make("button", "Recalibrate the camera", "recalibrate-action"));
    recal.type = "button";
    recal.addEventListener("click", () => act(recalibrate, RECALIBRATING));
    actions.append(recal);
  }
  if (!fault.acknowledged_by) {
    const ack = /** @type {HTMLButtonElement} */ (make("button", "Acknowledge", "ack-action"));
    ack.type = "button";
    ack.addEventListener("click", () => act(() => post(`/api/faults/${fault.id}/acknowledge`, who()), `Fault ${fault.id} acknowledged.`));
    actions.append(ack);
  }
  for (const action of fault.actions ?? []) {
    const button = /** @type {HTMLButtonElement} */ (make("button", ACTION_WORDS[action] ?? action, "clear-action"));
    button.type = "button";
    button.dataset.action = action;
    button.dataset.faultId = String(fault.id);
    if (action === "void") button.classList.add("danger");
    button.addEventListener("click", () => clearFault(fault, action));
    actions.append(button);
  }
  item.append(actions);
  return item;
}

/**
 * @param {any} fault
 * @param {string} action
 */
async function clearFault(fault, action) {
  const reason = reasonOrAsk();
  if (!reason) return;
  /** @type {Record<string, string>} */
  const body = { action, reason, ...who() };
  if (action === "replace") {
    const field = input("replace-card");
    const card = parseCard(field.value);
    field.setAttribute("aria-invalid", card && card.text !== "JK" ? "false" : "true");
    if (!card || card.text === "JK") {
      $("action-error").textContent = "Replace needs the card you see, such as AS, TD or 9H, in the card field.";
      field.focus();
      return;
    }
    body.card = card.text;
  }
  const ok = await act(() => post(`/api/faults/${fault.id}/clear`, body), `Fault ${fault.id} cleared: ${ACTION_WORDS[action] ?? action}.`);
  if (ok) {
    input("reason").value = "";
    input("replace-card").value = "";
  }
}

/** @type {number | undefined} */
let voidArmed;

function disarmVoid() {
  clearTimeout(voidArmed);
  voidArmed = undefined;
  $("void-round").textContent = "Void the current round";
}

/** First press arms the button for 6 s; the second press voids. */
async function voidRound() {
  const reason = reasonOrAsk();
  if (!reason) return;
  if (voidArmed === undefined) {
    $("void-round").textContent = `Press again to void round ${current?.round ?? ""}: every wager goes back`;
    voidArmed = window.setTimeout(disarmVoid, 6000);
    return;
  }
  disarmVoid();
  const round = current?.round;
  const ok = await act(() => post("/api/rounds/current/void", { reason, ...who() }), `Round ${round} is void; every wager goes back.`);
  if (ok) input("reason").value = "";
}

// --- game recall ----------------------------------------------------------------------------

/** @type {{round: number, steps: any[], settlement: any, status: string, game: string} | null} */
let replay = null;
let stepIndex = 0;
/** @type {number | undefined} */
let playing;

async function loadRecall() {
  try {
    const doc = await get(`/api/rounds?last=${RECALL_ROUNDS}`);
    const rounds = [...(doc.rounds ?? [])].sort((a, b) => b.round - a.round);
    $("recall").replaceChildren(
      ...rounds.map((r) => {
        // Grand Slam settles seats, Jokers 22 players (the banker's side is the rest).
        const players = r.settlement?.seats ?? r.settlement?.players ?? [];
        const net = players.reduce((sum, /** @type {any} */ s) => sum + (s.net ?? 0), 0);
        const button = /** @type {HTMLButtonElement} */ (make("button", `#${r.round}`, r.status));
        button.type = "button";
        button.dataset.round = String(r.round);
        button.dataset.status = r.status;
        button.title = `Round ${r.round}: ${r.status}, ${r.cards?.length ?? 0} cards${r.settlement ? `, players net ${signed(net)}` : ""}`;
        button.setAttribute("aria-label", button.title);
        button.setAttribute("aria-pressed", String(replay?.round === r.round));
        button.addEventListener("click", () => showRound(r));
        return button;
      }),
    );
    if (!rounds.length) $("recall").replaceChildren(make("p", "No rounds yet.", "muted"));
    $("recall-error").textContent = "";
  } catch (err) {
    $("recall-error").textContent = errorText(err);
  }
}

/** @param {any} record a round as GET /api/rounds lists it */
async function showRound(record) {
  stopPlaying();
  try {
    const doc = await get(`/api/rounds/${record.round}/replay`);
    const game = record.settlement?.game ?? current?.game ?? "grand-slam";
    replay = { round: record.round, steps: doc.steps ?? [], settlement: record.settlement, status: record.status, game };
  } catch (err) {
    $("recall-error").textContent = errorText(err);
    return;
  }
  $("recall-error").textContent = "";
  document.querySelectorAll("#recall [data-round]").forEach((b) => {
    b.setAttribute("aria-pressed", String(Number(/** @type {HTMLElement} */ (b).dataset.round) === record.round));
  });
  $("replay").hidden = false;
  const link = /** @type {HTMLAnchorElement} */ ($("download-round"));
  link.hidden = record.status !== "settled";
  link.href = `/api/rounds/${record.round}/file`;
  link.download = `round-${record.round}.json`;
  renderSettlement(record.settlement);
  // A fresh round starts at its opening, so the chips are laid rather than slid from the last one.
  const board = replayDrawing.for(replay.game);
  if (board instanceof TableDrawing) board.betsKey = "";
  showStep(0);
}

/** @param {number} index */
function showStep(index) {
  if (!replay || !replay.steps.length) return;
  stepIndex = Math.max(0, Math.min(index, replay.steps.length - 1));
  const step = replay.steps[stepIndex];
  const effects = step.effects ?? [];
  const last = stepIndex === replay.steps.length - 1;
  const board = replayDrawing.for(replay.game);
  let prompt = step.prompt ?? "";
  if (board instanceof BaseballDrawing) {
    showBaseballStep(board, step, last);
  } else if (board instanceof Jokers22Drawing) {
    prompt = showJokers22Step(board, step, last) ?? prompt;
  } else {
    const next = effects.find((/** @type {any} */ e) => e.kind === "grand-slam.next-card");
    const payouts = last && replay.settlement ? (replay.settlement.seats ?? []).map((/** @type {any} */ s) => ({ seat: s.seat, net: s.net })) : [];
    board.render(step.state, { target: next ?? null, payouts, revealBlind: true });
  }
  const total = replay.steps.length - 1;
  /** @param {string} kind @param {any} body */
  const words = (kind, body) => describeEntry({ type: "entry", seq: stepIndex, kind, round: replay?.round ?? null, at: "", body, effects, live: false }).join(". ");
  let what = replay.game === "baseball-poker" ? "Antes in, hand opened" : "Wagers placed, round opened";
  if (step.card) what = words("card", { card: step.card });
  else if (stepIndex > 0) what = words("decision", {});
  // Jokers 22 and Baseball poker steps are cards and players' decisions; Grand Slam's are all cards.
  const unit = replay.game === "grand-slam" ? "card" : "step";
  $("replay-step").textContent = `Round ${replay.round}, ${unit} ${stepIndex} of ${total}: ${what}`;
  $("replay-prompt").textContent = prompt;
  /** @type {HTMLButtonElement} */ ($("replay-prev")).disabled = stepIndex === 0;
  /** @type {HTMLButtonElement} */ ($("replay-next")).disabled = last;
  if (last) stopPlaying();
}

/**
 * Draw a Jokers 22 replay step: the hand (or the banker) owed the next card, the player who must
 * decide, the ACTION spot once named, and on the last step the settlement.
 * @param {Jokers22Drawing} board
 * @param {any} step
 * @param {boolean} last
 * @returns {string | null} the step's instruction when the replay's own prompt does not say it
 */
function showJokers22Step(board, step, last) {
  if (!replay) return null;
  const effects = /** @type {any[]} */ (step.effects ?? []);
  const next = effects.find((e) => e.kind === "jokers-22.next-card");
  const due = effects.find((e) => e.kind === "jokers-22.decision-due");
  const named = replay.steps
    .slice(0, stepIndex + 1)
    .flatMap((/** @type {any} */ s) => s.effects ?? [])
    .find((/** @type {any} */ e) => e.kind === "jokers-22.action-spot");
  const settlement = last ? replay.settlement : null;
  board.render(step.state, {
    target: next ? (next.spot == null ? { banker: true } : { spot: next.spot, hand: next.hand }) : null,
    decision: due ? { spot: due.spot, hand: due.hand, player: due.player } : null,
    payouts: settlement ? (settlement.players ?? []) : [],
    settlement,
    actionSpot: named ? named.spot : null,
  });
  if (!due) return null;
  const hand = due.hand > 1 ? `, hand ${due.hand}` : "";
  return `Spot ${due.spot}${hand}, ${due.player} on ${due.total}: ${(due.allowed ?? []).join(" or ")}?`;
}

/**
 * Draw a Baseball poker replay step: the engine state says who acts and where the next card
 * goes; the last rainout so far names its card and seat; the last step shows the showdown.
 * @param {BaseballDrawing} board
 * @param {any} step
 * @param {boolean} last
 */
function showBaseballStep(board, step, last) {
  if (!replay) return;
  const rainouts = replay.steps
    .slice(0, stepIndex + 1)
    .flatMap((/** @type {any} */ s) => s.effects ?? [])
    .filter((/** @type {any} */ e) => e.kind === "baseball-poker.rainout");
  const rain = rainouts[rainouts.length - 1];
  board.render(step.state, {
    settlement: last ? replay.settlement : null,
    rainout: rain ? { card: rain.card, seat: rain.seat, seats: rain.seats ?? [] } : null,
    fresh: (step.effects ?? []).some((/** @type {any} */ e) => e.kind === "baseball-poker.rainout"),
  });
}

function togglePlay() {
  if (playing !== undefined) {
    stopPlaying();
    return;
  }
  if (!replay) return;
  if (stepIndex >= replay.steps.length - 1) showStep(0);
  $("replay-play").textContent = "Pause";
  playing = window.setInterval(() => showStep(stepIndex + 1), REPLAY_STEP_MS);
}

function stopPlaying() {
  clearInterval(playing);
  playing = undefined;
  $("replay-play").textContent = "Play";
}

/**
 * The settlement table's column heads for the game (the last one, the net, right-aligned).
 * @param {string[]} names
 */
function settlementColumns(names) {
  const head = /** @type {HTMLTableElement} */ ($("settlement")).tHead;
  const key = names.join("|");
  if (!head || head.dataset.columns === key) return;
  head.dataset.columns = key;
  const row = make("tr");
  names.forEach((name, i) => row.append(make("th", name, i === names.length - 1 ? "num" : undefined)));
  head.replaceChildren(row);
}

/** @param {any} settlement per REPLAY.md (null while a round is open or when void) */
function renderSettlement(settlement) {
  const body = /** @type {HTMLTableElement} */ ($("settlement")).tBodies[0];
  if (settlement?.game === "jokers-22") {
    renderJokers22Settlement(settlement, body);
    return;
  }
  if (settlement?.game === "baseball-poker") {
    renderBaseballSettlement(settlement, body);
    return;
  }
  settlementColumns(["Seat", "Cards", "First", "Second", "Third", "3 Outs", "Poker bonus", "Net"]);
  if (!settlement) {
    const row = make("tr");
    const cell = make("td", "No settlement: the round is open or was void (every wager went back).");
    /** @type {HTMLTableCellElement} */ (cell).colSpan = 8;
    row.append(cell);
    body.replaceChildren(row);
    return;
  }
  body.replaceChildren(
    ...(settlement.seats ?? []).map((/** @type {any} */ s) => {
      const row = make("tr");
      row.dataset.seat = String(s.seat);
      const wager = (/** @type {string} */ name) => {
        const w = s.wagers?.[name];
        if (!w) return "";
        return w.result === "home" ? `${w.amount} home, paid ${w.paid ?? w.amount}` : `${w.amount} ${w.result}`;
      };
      const side = (/** @type {string} */ name) => {
        const b = s.side_bets?.[name];
        if (!b) return "";
        return b.result === "won" ? `${b.amount} won, paid ${b.paid}` : `${b.amount} ${b.result}`;
      };
      const cards = (s.cards ?? []).map(cardLabel).join(" ") + (s.grand_slam ? "  GRAND SLAM" : "");
      row.append(
        make("td", `Seat ${s.seat}`), make("td", cards), make("td", wager("first")), make("td", wager("second")),
        make("td", wager("third")), make("td", side("three_outs")), make("td", side("poker_bonus")),
        make("td", signed(s.net ?? 0), "num"),
      );
      return row;
    }),
  );
  if (settlement.blind) {
    const row = make("tr");
    row.dataset.seat = String(settlement.blind.seat);
    row.append(make("td", `Seat ${settlement.blind.seat} (blind)`), make("td", (settlement.blind.cards ?? []).map(cardLabel).join(" ")));
    body.append(row);
  }
}

/**
 * Jokers 22: hand by hand, each wager's result and how much of it the banker covered; the
 * banker; the ACTION spot.
 * @param {any} settlement
 * @param {HTMLTableSectionElement} body
 */
function renderJokers22Settlement(settlement, body) {
  settlementColumns(["Spot", "Hand", "Cards", "Total", "Wagers (result, covered)", "Net"]);
  /** @param {any} h */
  const total = (h) => (h.natural ? "natural" : h.soft ? `soft ${h.total}` : String(h.total ?? ""));
  const rows = (settlement.spots ?? []).flatMap((/** @type {any} */ spot) =>
    (spot.hands ?? []).map((/** @type {any} */ h) => {
      const row = make("tr");
      row.dataset.spot = String(spot.spot);
      row.dataset.hand = String(h.hand);
      const wagers = (h.wagers ?? [])
        .map((/** @type {any} */ w) => `${w.player} ${w.amount} ${w.result}, ${w.covered} covered, ${signed(w.net)}`)
        .join("; ");
      const net = (h.wagers ?? []).reduce((sum, /** @type {any} */ w) => sum + (w.net ?? 0), 0);
      row.append(make("td", `Spot ${spot.spot}`), make("td", String(h.hand)), make("td", (h.cards ?? []).map(cardLabel).join(" ")),
        make("td", total(h)), make("td", wagers), make("td", signed(net), "num"));
      return row;
    }),
  );
  const banker = settlement.banker ?? {};
  const row = make("tr");
  row.dataset.banker = banker.player ?? "house";
  row.append(make("td", "Banker"), make("td", ""), make("td", (banker.cards ?? []).map(cardLabel).join(" ")), make("td", total(banker)),
    make("td", `${banker.player ?? "house"}, stake ${banker.stake}; ACTION spot ${settlement.action_spot} (coverage by ${settlement.coverage ?? "rotation"})`),
    make("td", signed(banker.net ?? 0), "num"));
  body.replaceChildren(...rows, row);
}

/**
 * Baseball poker: seat by seat the cards, the hand shown and its best five, the chips put in and
 * won; then each pot with the seats that could win it and who did.
 * @param {any} settlement
 * @param {HTMLTableSectionElement} body
 */
function renderBaseballSettlement(settlement, body) {
  settlementColumns(["Seat", "Cards", "Hand", "Best five", "Put in", "Won", "Net"]);
  const players = (settlement.players ?? []).map((/** @type {any} */ p) => {
    const row = make("tr");
    row.dataset.seat = String(p.seat);
    const hand = p.folded ? "folded" : p.hand ? p.hand.category : "not shown";
    row.append(make("td", `Seat ${p.seat}`), make("td", (p.cards ?? []).map(cardLabel).join(" ")), make("td", hand, "hand"),
      make("td", (p.hand?.best ?? []).map(cardLabel).join(" "), "best"), make("td", String(p.put ?? 0)),
      make("td", String(p.won ?? 0)), make("td", signed(p.net ?? 0), "num"));
    return row;
  });
  const pots = /** @type {any[]} */ (settlement.pots ?? []);
  const named = pots.filter((p) => !p.returned);
  const potRows = pots.map((pot, i) => {
    const row = make("tr", undefined, "pot-row");
    row.dataset.pot = String(i);
    const name = pot.returned ? "Uncalled bet" : potName(named.indexOf(pot), named.length);
    const eligible = /** @type {number[]} */ (pot.eligible ?? []);
    const among = eligible.length === 1 ? `seat ${eligible[0]}` : `seats ${eligible.join(", ")}`;
    const shares = (pot.shares ?? []).map((/** @type {any} */ s) => `seat ${s.seat} takes ${s.chips}`).join(", ");
    const cell = make("td", `${name} ${pot.amount} (${among}): ${shares || "nobody takes it"}`);
    /** @type {HTMLTableCellElement} */ (cell).colSpan = 7;
    row.append(cell);
    return row;
  });
  const notes = [];
  if (settlement.rainouts) notes.push(`Rainouts: ${settlement.rainouts} (re-dealt, the pot stayed)`);
  if ((settlement.community ?? []).length) notes.push(`Community card: ${settlement.community.map(cardLabel).join(" ")}`);
  if (settlement.void) notes.push(`Void by ${settlement.void.by}: ${settlement.void.reason}`);
  const noteRows = notes.map((text) => {
    const row = make("tr", undefined, "note-row");
    const cell = make("td", text);
    /** @type {HTMLTableCellElement} */ (cell).colSpan = 7;
    row.append(cell);
    return row;
  });
  body.replaceChildren(...players, ...potRows, ...noteRows);
}

// --- audit, meters, devices, configuration --------------------------------------------------

async function loadAudit() {
  try {
    const doc = await get("/api/audit?last=100");
    const rows = [...(doc.audit ?? [])].reverse().map((/** @type {any} */ a) => {
      const row = make("tr");
      row.dataset.seq = String(a.seq);
      row.append(make("td", `${clock(a.at)}`, "when"), make("td", a.who ?? "", "who"), make("td", a.what ?? "", "what"),
        make("td", a.why ?? "", "why"), make("td", a.round != null ? String(a.round) : "", "round"));
      const when = /** @type {HTMLElement} */ (row.firstElementChild);
      when.title = a.at ?? "";
      return row;
    });
    /** @type {HTMLTableElement} */ ($("audit")).tBodies[0].replaceChildren(...rows);
    $("audit-error").textContent = "";
  } catch (err) {
    $("audit-error").textContent = errorText(err);
  }
}

async function loadMeters() {
  try {
    const m = await get("/api/meters");
    const list = $("meters");
    list.replaceChildren();
    pair(list, "Rounds", String(m.rounds ?? 0), "meter");
    pair(list, "Voids", String(m.voids ?? 0), "meter");
    pair(list, "Wagered", String(m.total_wagered ?? 0), "meter");
    pair(list, "Paid", String(m.total_paid ?? 0), "meter");
    for (const [name, n] of Object.entries(m.wagered ?? {})) pair(list, `Wagered on ${name.replace(/_/g, " ")}`, String(n), "meter");
    for (const [name, n] of Object.entries(m.paid ?? {})) pair(list, `Paid on ${name.replace(/_/g, " ")}`, String(n), "meter");
    pair(list, "Dead cards", String(m.dead_cards ?? 0), "meter");
    const faults = Object.entries(m.faults ?? {});
    pair(list, "Faults", faults.length ? faults.map(([code, n]) => `${code} ${n}`).join(", ") : "none", "meter");
    $("meters-error").textContent = "";
  } catch (err) {
    $("meters-error").textContent = errorText(err);
  }
}

/** @param {any} status one device's status */
function deviceState(status) {
  if (!status || status.installed === false) return ["not installed", "off"];
  const text = status.state ?? status.status ?? (status.ok === false ? "failed" : "ok");
  const bad = status.ok === false || /fail|error|disconnect|silent/i.test(String(text));
  if (status.simulated) return [`${text} (simulated)`, bad ? "bad" : "sim"];
  return [String(text), bad ? "bad" : "ok"];
}

// --- the overhead camera ------------------------------------------------------------------------

const RECALIBRATING = "The camera calibrates from its next frame: watch its state under Devices.";

/** Ask the camera to measure its position again from its next frame (supervisor only). */
const recalibrate = () => post("/api/camera/recalibrate", {});

/**
 * The camera's own block in Devices: the table's view of it (what the table trusts), why, and
 * the reading thread's numbers; hidden at a table without a camera.
 */
function renderCamera() {
  const block = $("camera-device");
  const view = current?.camera ?? null;
  const device = cameraDevice && cameraDevice.installed !== false ? cameraDevice : null;
  block.hidden = !view && !device;
  if (block.hidden) return;
  const status = String(view?.status ?? device?.view ?? (device?.ok === false ? "offline" : "starting"));
  const state = $("camera-state");
  const words = CAMERA_WORDS[status] ?? `Camera ${status}`;
  const text = device?.simulated ? `${words} (simulated)` : words;
  if (state.textContent !== text) state.textContent = text;
  state.dataset.status = status;
  state.className = `state ${status === "ok" ? (device?.simulated ? "sim" : "ok") : "bad"}`;
  const why = view?.why || device?.error || "";
  if ($("camera-why").textContent !== why) $("camera-why").textContent = why;
  const facts = $("camera-facts");
  facts.replaceChildren();
  if (device) {
    if (typeof device.read_ms === "number") pair(facts, "read time", `${device.read_ms} ms a frame`, "key");
    if (device.reads != null) pair(facts, "frames read", String(device.reads), "key");
    if (device.frames_skipped != null) pair(facts, "frames skipped", String(device.frames_skipped), "key");
    if (device.layout) pair(facts, "layout", String(device.layout), "key");
    if (device.message) pair(facts, "message", String(device.message), "key");
  }
}

async function pressRecalibrate() {
  $("camera-error").textContent = "";
  $("camera-done").textContent = "";
  try {
    await recalibrate();
    $("camera-done").textContent = RECALIBRATING;
  } catch (err) {
    $("camera-error").textContent = errorText(err);
  }
}

async function loadDevices() {
  try {
    const doc = await get("/api/devices");
    // A camera that is there has its own block (with Recalibrate) rather than a card here.
    const camera = doc.camera && doc.camera.installed !== false;
    if (camera) cameraDevice = doc.camera;
    renderCamera();
    const shown = Object.keys(doc).filter((n) => !(camera && n === "camera"));
    const names = [...DEVICE_ORDER.filter((n) => shown.includes(n)), ...shown.filter((n) => !DEVICE_ORDER.includes(n))];
    $("devices").replaceChildren(
      ...names.map((name) => {
        const status = doc[name];
        const card = make("article", undefined, "device");
        card.dataset.device = name;
        const [text, tone] = deviceState(status);
        const title = make("h3", name[0].toUpperCase() + name.slice(1));
        title.append(make("span", text, `state ${tone}`));
        const list = make("dl", undefined, "kv");
        for (const [key, value] of Object.entries(status ?? {})) {
          if (key === "state" || key === "installed") continue;
          pair(list, key.replace(/_/g, " "), typeof value === "object" && value !== null ? JSON.stringify(value) : String(value), "key");
        }
        card.append(title, list);
        return card;
      }),
    );
    $("devices-error").textContent = "";
  } catch (err) {
    $("devices-error").textContent = errorText(err);
  }
}

async function loadConfig() {
  try {
    const doc = await get("/api/config");
    const list = $("config");
    list.replaceChildren();
    /**
     * @param {string} prefix
     * @param {any} value
     */
    const walk = (prefix, value) => {
      if (value && typeof value === "object" && !Array.isArray(value)) {
        for (const [k, v] of Object.entries(value)) walk(prefix ? `${prefix}.${k}` : k, v);
      } else {
        pair(list, prefix, Array.isArray(value) ? value.join(", ") : String(value), "key");
      }
    };
    walk("", doc);
    $("config-error").textContent = "";
  } catch (err) {
    $("config-error").textContent = errorText(err);
  }
}

/** Refresh `load` at most once a second however many entries ask for it. */
function debounced(/** @type {() => Promise<void>} */ load) {
  /** @type {number | undefined} */
  let timer;
  return () => {
    clearTimeout(timer);
    timer = window.setTimeout(load, 800);
  };
}
const refreshAudit = debounced(loadAudit);
const refreshMeters = debounced(loadMeters);
const refreshRecall = debounced(loadRecall);
const refreshDevices = debounced(loadDevices);

/** @param {import("./live.js").Entry} entry */
function onEntry(entry) {
  logEntry($("event-log"), entry, 10);
  if (!entry.live) return;
  refreshAudit();
  refreshDevices();
  const settled = (entry.effects ?? []).some((e) => /^(grand-slam|jokers-22|baseball-poker)\.round-settled$/.test(e.kind) || e.kind === "round-voided");
  if (entry.kind === "round-open" || settled) {
    refreshRecall();
    refreshMeters();
  }
}

// --- start ----------------------------------------------------------------------------------

/** @type {Promise<void> | null} */
let signingIn = null;

function signIn() {
  signingIn ??= goLive().finally(() => (signingIn = null));
  return signingIn;
}

async function goLive() {
  feed?.stop();
  await requireLogin(["supervisor"], NEED_ROLE);
  const state = await get("/api/state").catch(() => null);
  if (state) render(state);
  void Promise.all([loadRecall(), loadAudit(), loadMeters(), loadDevices(), loadConfig()]);
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
    Math.max(0, (state?.journal_seq ?? 0) - 10),
  );
  feed.start();
}

function main() {
  $("void-round").addEventListener("click", voidRound);
  $("replay-prev").addEventListener("click", () => {
    stopPlaying();
    showStep(stepIndex - 1);
  });
  $("replay-next").addEventListener("click", () => {
    stopPlaying();
    showStep(stepIndex + 1);
  });
  $("replay-play").addEventListener("click", togglePlay);
  $("recall-refresh").addEventListener("click", loadRecall);
  $("audit-refresh").addEventListener("click", loadAudit);
  $("devices-refresh").addEventListener("click", loadDevices);
  $("recalibrate").addEventListener("click", pressRecalibrate);
  $("logout").addEventListener("click", async () => {
    feed?.stop();
    await logout().catch(() => undefined);
    void signIn();
  });
  onAuthLost(() => void signIn());
  void signIn();
}

main();
