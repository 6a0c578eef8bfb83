/**
 * The supervisor screen: open faults (acknowledge; clear them by one of the fault's own actions,
 * always with a reason), voiding the round being dealt, the table now, game recall (each of the
 * last rounds replayed card by card on the table drawing, its settlement and its round file),
 * the audit trail, meters, devices and the configuration. The server is the authority on every
 * rule; the checks here only save a round trip and say what is missing. The table's game (its
 * module in games/, picked by the name the API sends) draws the table, live and in recall, and
 * lays out a round's settlement. A table with an overhead camera shows it in Devices, live, with
 * a Recalibrate button (also on a "Camera moved" fault, which cannot be dismissed before the
 * camera is recalibrated).
 */
import { loadAnalytics, wireAnalytics } from "./analytics.js";
import { errorText, get, post } from "./api.js";
import { cardLabel, cardsInWords, parseCard } from "./cards.js";
import { $, make, setColumns, setText, signed, wideCell } from "./dom.js";
import { DrawingSlot, takeTableSeats } from "./felt.js";
import { gameFor, loadGame } from "./games/registry.js";
import { LiveFeed } from "./live.js";
import { keepSignedIn } from "./login.js";
import { CAMERA_WORDS, clock, describeEntry, logEntry } from "./words.js";

/** @typedef {import("./games/registry.js").Game} Game */

const NEED_ROLE =
  "This screen needs the supervisor's token, or surveillance's to watch (the dealer's token opens the dealer screen).";
/** Why a surveillance session sees the actions but cannot press them. */
/** How a settled round stands with its payouts (GET /api/rounds `payment`), in words. */
const PAYMENT_WORDS = /** @type {Record<string, string>} */ ({
  paid: "paid",
  due: "payouts due",
  "nothing-owed": "nothing owed",
  unpaid: "NOT PAID",
});

const READ_ONLY = "Surveillance watches: only a supervisor acknowledges, clears, voids or recalibrates.";
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
const input = (id) => /** @type {HTMLInputElement} */ (document.getElementById(id));

/** @param {string} id */
const svgById = (id) => /** @type {SVGSVGElement} */ (/** @type {unknown} */ ($(id)));

/**
 * @typedef {object} Replay a recalled round on screen
 * @property {number} round
 * @property {any[]} steps
 * @property {any} settlement
 * @property {string} status
 * @property {Game} game
 */

/** What this screen keeps between renders. */
const screen = {
  /** @type {any} the last state drawn */
  current: null,
  /** @type {Game} the table's game */
  game: gameFor(null),
  /** @type {any} what the live feed told the game's drawing */
  notes: null,
  /** @type {any} the camera device's status, from the state or GET /api/devices, whichever is newer */
  cameraDevice: null,
  /** @type {number | undefined} the void button's disarming timer while it is armed */
  voidArmed: undefined,
  live: new DrawingSlot(svgById("live-table")),
  replayBoard: new DrawingSlot(svgById("replay-table")),
  /** @type {Replay | null} */
  replay: null,
  stepIndex: 0,
  /** @type {number | undefined} the replay's timer while it plays */
  playing: undefined,
  feed: new LiveFeed({ onState: render, onEntry, onSignedOut: () => void signIn() }),
  /** surveillance: everything shown, nothing changed (the API refuses its writes anyway) */
  readOnly: false,
};

const signIn = keepSignedIn({
  roles: ["supervisor", "surveillance"],
  needText: NEED_ROLE,
  onSignedOut: () => screen.feed.stop(),
  onSignedIn: goLive,
});

// --- small DOM helpers ----------------------------------------------------------------------

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

/**
 * The game of the table now; its notes start afresh when the game changes.
 * @param {string | undefined} name
 */
function tableGame(name) {
  const game = gameFor(name);
  if (game !== screen.game || !screen.notes) {
    screen.game = game;
    screen.notes = new game.Notes();
  }
  return game;
}

/** @param {any} state */
function render(state) {
  screen.current = state;
  takeTableSeats(state); // the drawings are made again for another count
  const game = tableGame(state.game);
  const simulated = Boolean(state.simulated) || Object.values(state.devices ?? {}).some((d) => d && d.simulated);
  $("simulated-banner").hidden = !simulated;
  $("table-id").textContent = state.table ?? "Table";
  $("round-info").textContent = state.round ? `Round ${state.round} \u00b7 ${state.round_status ?? ""}` : "No round yet";
  setText($("prompt"), cardsInWords(state.prompt ?? ""));
  const awaiting = state.awaiting ?? { kind: "nothing", target: {} };
  const settlement = state.round_status === "settled" ? state.settlement ?? null : null;
  screen.live.for(game.Drawing).render(state.state, game.liveExtras(state, settlement, screen.notes, { reveal: true }));
  renderFaults(state.faults ?? []);
  if (state.devices?.camera) screen.cameraDevice = state.devices.camera;
  // The feed sends the state with every entry and whenever a device changes: Devices follows it.
  renderDevices({ camera: { installed: false, message: "no overhead camera in the configuration" }, ...(state.devices ?? {}) });
  renderCamera();
  const dealing = state.round != null && awaiting.kind !== "round";
  const voidButton = /** @type {HTMLButtonElement} */ ($("void-round"));
  voidButton.disabled = !dealing || screen.readOnly;
  voidButton.title = screen.readOnly ? READ_ONLY : "";
  if (!dealing) disarmVoid();
  const override = /** @type {HTMLButtonElement} */ ($("override-payouts"));
  override.disabled = state.payment !== "due" || screen.readOnly;
  override.title = screen.readOnly ? READ_ONLY : override.disabled ? "Only while the last round's payouts wait for the dealer's confirm" : "";
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
  item.append(make("h3", `${cardsInWords(fault.title)} (fault ${fault.id})`), make("p", cardsInWords(fault.message)));
  const facts = [
    fault.round != null ? `Round ${fault.round}` : "Between rounds",
    fault.card ? `card held: ${cardLabel(fault.card)}` : "",
    `at ${clock(fault.at)}`,
    fault.acknowledged_by ? `acknowledged by ${fault.acknowledged_by}` : "not acknowledged",
  ].filter(Boolean);
  item.append(make("p", facts.join(" \u00b7 "), "muted"));
  const actions = make("div", undefined, "fault-actions");
  if (screen.readOnly) {
    // What a supervisor could do, shown but not pressable, with the reason.
    const can = [...(fault.acknowledged_by ? [] : ["Acknowledge"]), ...(fault.actions ?? []).map((a) => ACTION_WORDS[a] ?? a)];
    for (const words of can) {
      const button = /** @type {HTMLButtonElement} */ (make("button", words, "read-only-action"));
      button.type = "button";
      button.disabled = true;
      button.title = READ_ONLY;
      actions.append(button);
    }
    actions.append(make("p", READ_ONLY, "muted read-only-why"));
    item.append(actions);
    return item;
  }
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

function disarmVoid() {
  clearTimeout(screen.voidArmed);
  screen.voidArmed = undefined;
  $("void-round").textContent = "Void the current round";
}

/** The dealer may open the next round with round N's payouts not confirmed (journaled with the reason). */
async function overridePayouts() {
  const reason = reasonOrAsk();
  if (!reason) return;
  const round = screen.current?.round ?? "";
  const ok = await act(
    () => post("/api/rounds/current/override-payouts", { reason, ...who() }),
    `Round ${round} stays NOT PAID; the dealer may open the next round.`,
  );
  if (ok) input("reason").value = "";
}

/** First press arms the button for 6 s; the second press voids. */
async function voidRound() {
  const reason = reasonOrAsk();
  if (!reason) return;
  if (screen.voidArmed === undefined) {
    $("void-round").textContent = `Press again to void round ${screen.current?.round ?? ""}: every wager goes back`;
    screen.voidArmed = window.setTimeout(disarmVoid, 6000);
    return;
  }
  disarmVoid();
  const round = screen.current?.round;
  const ok = await act(() => post("/api/rounds/current/void", { reason, ...who() }), `Round ${round} is void; every wager goes back.`);
  if (ok) input("reason").value = "";
}

// --- game recall ----------------------------------------------------------------------------

async function loadRecall() {
  try {
    const doc = await get(`/api/rounds?last=${RECALL_ROUNDS}`);
    const rounds = [...(doc.rounds ?? [])].sort((a, b) => b.round - a.round);
    $("recall").replaceChildren(
      ...rounds.map((r) => {
        const net = gameFor(r.settlement?.game ?? screen.current?.game).playersNet(r.settlement);
        const unpaid = r.payment === "unpaid" || r.payment === "due";
        const button = /** @type {HTMLButtonElement} */ (make("button", unpaid ? `#${r.round} not paid` : `#${r.round}`, r.status));
        button.type = "button";
        button.dataset.round = String(r.round);
        button.dataset.status = r.status;
        if (r.payment) button.dataset.payment = r.payment;
        const how = r.payment ? `${r.status}, ${PAYMENT_WORDS[r.payment] ?? r.payment}` : r.status;
        button.title = `Round ${r.round}: ${how}, ${r.cards?.length ?? 0} cards${r.settlement ? `, players net ${signed(net)}` : ""}`;
        button.setAttribute("aria-label", button.title);
        button.setAttribute("aria-pressed", String(screen.replay?.round === r.round));
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
    const game = gameFor(record.settlement?.game ?? screen.current?.game);
    screen.replay = { round: record.round, steps: doc.steps ?? [], settlement: record.settlement, status: record.status, game };
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
  setText($("replay-payment"), paymentLine(record));
  renderSettlement(screen.replay.game, record.settlement);
  // A fresh round starts at its opening, so the chips are laid rather than slid from the last one.
  screen.replayBoard.for(screen.replay.game.Drawing).restart();
  showStep(0);
}

/**
 * How a recalled round stands: "Round 3: void", "Round 4: settled and paid", "Round 5: settled,
 * NOT PAID: sam let the next round open without the dealer's confirm (dispute at seat 2)".
 * @param {any} record a round as GET /api/rounds lists it
 */
function paymentLine(record) {
  if (!record.payment) return `Round ${record.round}: ${record.status}`;
  const o = record.override;
  if (record.payment === "paid") return `Round ${record.round}: settled and paid (the dealer confirmed the payouts)`;
  if (record.payment === "nothing-owed") return `Round ${record.round}: settled, nothing owed to any seat`;
  if (record.payment === "due") return `Round ${record.round}: settled, payouts due: the dealer has not confirmed them yet`;
  const why = o ? `: ${o.by} let the next round open without the dealer's confirm (${o.reason})` : ": the payouts were never confirmed";
  return `Round ${record.round}: settled, NOT PAID${why}`;
}

/** @param {number} index */
function showStep(index) {
  const replay = screen.replay;
  if (!replay || !replay.steps.length) return;
  const stepIndex = Math.max(0, Math.min(index, replay.steps.length - 1));
  screen.stepIndex = stepIndex;
  const step = replay.steps[stepIndex];
  const effects = step.effects ?? [];
  const last = stepIndex === replay.steps.length - 1;
  const game = replay.game;
  const shown = game.replayStep(replay.steps, stepIndex, replay.settlement);
  screen.replayBoard.for(game.Drawing).render(step.state, shown.extras);
  const total = replay.steps.length - 1;
  /** @param {string} kind @param {any} body */
  const words = (kind, body) =>
    describeEntry({ type: "entry", seq: stepIndex, kind, round: replay.round, at: "", body, effects, live: false }, game);
  let lines = [game.replayWords.opened];
  if (step.card) lines = words("card", { card: step.card });
  else if (stepIndex > 0) lines = words("decision", {});
  // The step itself on the first line; what followed from it (a showdown's hands, the pots), one a line.
  const [what, ...more] = lines;
  const list = make("ul", undefined, "replay-more");
  list.append(...more.map((line) => make("li", line)));
  $("replay-step").replaceChildren(`Round ${replay.round}, ${game.replayWords.unit} ${stepIndex} of ${total}: ${what}`, ...(more.length ? [list] : []));
  $("replay-prompt").textContent = cardsInWords(shown.prompt ?? step.prompt ?? "");
  /** @type {HTMLButtonElement} */ ($("replay-prev")).disabled = stepIndex === 0;
  /** @type {HTMLButtonElement} */ ($("replay-next")).disabled = last;
  if (last) stopPlaying();
}

function togglePlay() {
  if (screen.playing !== undefined) {
    stopPlaying();
    return;
  }
  if (!screen.replay) return;
  if (screen.stepIndex >= screen.replay.steps.length - 1) showStep(0);
  $("replay-play").textContent = "Pause";
  screen.playing = window.setInterval(() => showStep(screen.stepIndex + 1), REPLAY_STEP_MS);
}

function stopPlaying() {
  clearInterval(screen.playing);
  screen.playing = undefined;
  $("replay-play").textContent = "Play";
}

/**
 * The shown round's settlement as its game lays it out (a row saying so when there is none).
 * @param {Game} game
 * @param {any} settlement per REPLAY.md (null while a round is open or when void)
 */
function renderSettlement(game, settlement) {
  const table = /** @type {HTMLTableElement} */ ($("settlement"));
  const { columns, rows } = game.settlementTable(settlement);
  setColumns(table, columns, "num");
  if (!settlement) {
    const row = make("tr");
    row.append(wideCell("No settlement: the round is open or was void (every wager went back).", columns.length));
    rows.push(row);
  }
  table.tBodies[0].replaceChildren(...rows);
}

// --- audit, meters, devices, configuration --------------------------------------------------

async function loadAudit() {
  try {
    const doc = await get("/api/audit?last=100");
    const rows = [...(doc.audit ?? [])].reverse().map((/** @type {any} */ a) => {
      const row = make("tr");
      row.dataset.seq = String(a.seq);
      row.append(make("td", `${clock(a.at)}`, "when"), make("td", a.who ?? "", "who"), make("td", cardsInWords(a.what ?? ""), "what"),
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
    pair(list, "Rounds settled", String(m.rounds_settled ?? m.rounds ?? 0), "meter");
    pair(list, "Rounds paid", String(m.rounds_paid ?? 0), "meter");
    pair(list, "Rounds left unpaid", String(m.rounds_unpaid ?? 0), "meter");
    pair(list, "Payouts due", m.rounds_payouts_due ? "yes: the dealer has not confirmed them" : "none", "meter");
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
  const view = screen.current?.camera ?? null;
  const device = screen.cameraDevice && screen.cameraDevice.installed !== false ? screen.cameraDevice : null;
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
    const health = device.health;
    if (health) {
      // vision/health.py: what an installer fixes (a soft lens, a shaking mount, a compressed stream)
      if (typeof health.blur_px === "number") pair(facts, "lens blur", `${health.blur_px.toFixed(1)} px at the markers`, "key");
      if (typeof health.shake_px === "number") pair(facts, "shake", `${health.shake_px.toFixed(1)} px frame to frame`, "key");
      pair(facts, "stream", typeof health.jpeg_quality === "number" ? `JPEG, quality about ${health.jpeg_quality}` : health.compressed ? "JPEG" : "raw frames", "key");
      for (const fault of health.faults ?? []) pair(facts, fault.level === "fault" ? "camera fault" : "camera warning", String(fault.words), "key");
    }
    if (device.message) pair(facts, "message", String(device.message), "key");
  }
  renderPayoutCheck(view?.last_check ?? null);
}

/**
 * The camera's check of the last confirmed payouts (the game's camera meaning, controller/games/<game>/camera.py): what
 * it found wrong, what it still waits on and why (a payout the camera is not sure of is neither
 * passed nor failed: the check stays open on it), what it could not check, what it verified.
 * @param {any} check
 */
function renderPayoutCheck(check) {
  const box = $("camera-payouts");
  box.hidden = !check;
  if (!check) return;
  const key = JSON.stringify(check);
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  const problems = /** @type {any[]} */ (check.problems ?? []);
  const open = /** @type {any[]} */ (check.open ?? []);
  const closed = /** @type {string[]} */ (check.closed ?? []);
  const verified = /** @type {string[]} */ (check.verified ?? []);
  const result = !check.checked
    ? "unchecked"
    : problems.length
      ? "problems"
      : open.length
        ? "open"
        : closed.length
          ? "partial"
          : "clean";
  box.dataset.result = result;
  const titles = {
    unchecked: `Round ${check.round} payouts: not checked`,
    problems: `Round ${check.round} payouts: the camera found ${problems.length === 1 ? "a problem" : `${problems.length} problems`}`,
    open: `Round ${check.round} payouts: waiting for the camera on ${open.length === 1 ? "1 payout" : `${open.length} payouts`}`,
    partial: `Round ${check.round} payouts: checked in part`,
    clean: `Round ${check.round} payouts: checked`,
  };
  $("camera-payouts-title").textContent = titles[result];
  const items = [
    ...problems.map((p) => make("li", p.words, "problem")),
    ...open.map((item) => {
      const li = make("li", `${item.where}: ${item.owed} owed, waiting for the camera (${item.why})`, "open");
      li.dataset.zone = item.zone;
      return li;
    }),
    ...closed.map((words) => make("li", words, "unchecked")),
    ...verified.map((words) => make("li", `${words} verified`, "verified")),
  ];
  if (!check.checked) items.push(make("li", check.why ?? "the camera could not see the table", "unchecked"));
  $("camera-payouts-list").replaceChildren(...items);
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
    renderDevices(await get("/api/devices"));
    $("devices-error").textContent = "";
  } catch (err) {
    $("devices-error").textContent = errorText(err);
  }
}

/**
 * The devices as GET /api/devices (or the state's `devices`, with every state the feed sends)
 * gives them: a card each, in a fixed order.
 * @param {Record<string, any>} doc
 */
function renderDevices(doc) {
  const shownNow = JSON.stringify(doc);
  if ($("devices").dataset.key === shownNow) return;
  $("devices").dataset.key = shownNow;
  // A camera that is there has its own block (with Recalibrate) rather than a card here.
  const camera = doc.camera && doc.camera.installed !== false;
  if (camera) screen.cameraDevice = doc.camera;
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
const refreshAnalytics = debounced(loadAnalytics);

/** @param {import("./live.js").Entry} entry */
function onEntry(entry) {
  const game = tableGame(screen.current?.game);
  screen.notes.take(entry);
  logEntry($("event-log"), entry, 10, game);
  if (!entry.live) return;
  refreshAudit();
  const settled = (entry.effects ?? []).some((e) => /\.round-settled$/.test(e.kind) || e.kind === "round-voided");
  // A confirm or a supervisor's override changes how the last round stands with its payouts.
  const people = /^(dealer|rating)-/.test(entry.kind); // a sign-in, the dealer list, a rating slip
  if (entry.kind === "round-open" || entry.kind === "button" || entry.kind === "pay-override" || settled || people) {
    refreshRecall();
    refreshMeters();
    refreshAnalytics();
  }
}

// --- start ----------------------------------------------------------------------------------

/**
 * Surveillance sees the whole screen; each control that changes the table is disabled and says why.
 * @param {boolean} readOnly
 */
function setReadOnly(readOnly) {
  screen.readOnly = readOnly;
  document.body.classList.toggle("read-only", readOnly);
  const note = $("read-only");
  note.hidden = !readOnly;
  note.textContent = readOnly ? "Read only: surveillance" : "";
  note.title = readOnly ? READ_ONLY : "";
  for (const id of ["reason", "replace-card", "supervisor-name", "recalibrate"]) {
    const control = /** @type {HTMLInputElement | HTMLButtonElement} */ ($(id));
    if (control.dataset.title === undefined) control.dataset.title = control.title;
    control.disabled = readOnly;
    control.title = readOnly ? READ_ONLY : control.dataset.title ?? "";
  }
  $("faults").dataset.key = ""; // the faults' buttons are drawn again for this role
  if (screen.current) render(screen.current);
}

/** @param {import("./api.js").Role} role */
async function goLive(role) {
  setReadOnly(role === "surveillance");
  // The table's game's screen module (its drawing, its words) before anything of the table is drawn;
  // without it the generic screen draws, and the supervisor keeps every action.
  await loadGame().catch((err) => setText($("prompt"), `The game's screen could not be loaded: ${errorText(err)}`));
  const state = await get("/api/state").catch(() => null);
  if (state) render(state);
  void Promise.all([loadRecall(), loadAudit(), loadMeters(), loadDevices(), loadConfig(), loadAnalytics()]);
  screen.feed.start(Math.max(0, (state?.journal_seq ?? 0) - 10));
}

function main() {
  $("void-round").addEventListener("click", voidRound);
  $("override-payouts").addEventListener("click", overridePayouts);
  $("replay-prev").addEventListener("click", () => {
    stopPlaying();
    showStep(screen.stepIndex - 1);
  });
  $("replay-next").addEventListener("click", () => {
    stopPlaying();
    showStep(screen.stepIndex + 1);
  });
  $("replay-play").addEventListener("click", togglePlay);
  $("recall-refresh").addEventListener("click", loadRecall);
  $("audit-refresh").addEventListener("click", loadAudit);
  $("devices-refresh").addEventListener("click", loadDevices);
  $("pace-refresh").addEventListener("click", loadAnalytics);
  $("pace-window").addEventListener("change", loadAnalytics);
  wireAnalytics();
  $("recalibrate").addEventListener("click", pressRecalibrate);
  void signIn();
}

main();
