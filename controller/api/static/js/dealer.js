/**
 * The dealer-assist screen: the table as drawn on the felt, the one instruction to follow, the
 * card just read, the payouts, the last events; opening a round; the choices of a player who must
 * decide; confirm (Enter or Space); faults taking over the screen until a supervisor clears them.
 * Everything shown is drawn from the table's state (GET /api/state, then the WebSocket), never
 * worked out here.
 *
 * The table's game (its screen module, loaded from its package: games/registry.js) draws the table
 * and brings its opening panel, its decisions, its payouts and, where it has one, the overhead camera.
 */
import { errorText, get, post } from "./api.js";
import { cardElement, cardLabel, cardsInWords } from "./cards.js";
import { dealerEntry, loadDealer, wireDealerSignIn } from "./dealer-signin.js";
import { $, act, fitText, make, setColumns, setText } from "./dom.js";
import { DrawingSlot, takeTableSeats } from "./felt.js";
import { gameFor, loadGame, titleOf } from "./games/registry.js";
import { LiveFeed } from "./live.js";
import { keepSignedIn } from "./login.js";
import { logEntry } from "./words.js";

/** @typedef {import("./games/registry.js").Game} Game */
/**
 * @typedef {object} GameParts a game's panels on this screen, wired once
 * @property {any} panel the opening panel
 * @property {any} decisions the deciding player's buttons, or null
 * @property {any} camera the overhead camera's panels, or null
 * @property {any} notes what the live feed told
 */

const LOG_LINES = 10;
const NEED_ROLE = "This screen needs the dealer's (or the supervisor's) token.";

/** What this screen keeps between renders. */
const screen = {
  /** @type {any} the last state drawn */
  current: null,
  /** @type {Game | null} the table's game */
  game: null,
  /** @type {Map<Game, GameParts>} */
  parts: new Map(),
  board: new DrawingSlot(/** @type {SVGSVGElement} */ (/** @type {unknown} */ ($("table")))),
  /** @type {{card: string, words: string} | null} where the last card went, from its journal entry */
  lastCardStory: null,
  feed: new LiveFeed({ onState: render, onEntry, onSignedOut: () => void signIn() }),
};

const signIn = keepSignedIn({
  roles: ["dealer", "supervisor"],
  needText: NEED_ROLE,
  onSignedOut: () => screen.feed.stop(),
  // Ask for the last few entries again so the event log starts filled.
  onSignedIn: async () => {
    // The game's module (and its form and styles) first: nothing of the table is drawn without it.
    const loaded = await loadGame().catch((err) => {
      setText($("prompt"), `The game's screen could not be loaded: ${errorText(err)}`);
      return null;
    });
    if (!loaded) return;
    if (!screen.current) {
      await get("/api/state")
        .then(render)
        .catch((err) => setText($("prompt"), errorText(err)));
    }
    screen.feed.start(Math.max(0, (screen.current?.journal_seq ?? 0) - LOG_LINES));
    void loadDealer();
  },
});

// --- drawing the state -------------------------------------------------------------------------

/**
 * The parts of the table's game, made the first time the game is seen; the last game's put away.
 * @param {Game} game
 * @returns {GameParts}
 */
function partsFor(game) {
  const previous = screen.game;
  let parts = screen.parts.get(game);
  if (!parts) {
    parts = {
      panel: new game.OpeningPanel(),
      decisions: game.Decisions ? new game.Decisions() : null,
      camera: game.Camera ? new game.Camera(refresh) : null,
      notes: new game.Notes(),
    };
    screen.parts.set(game, parts);
  }
  if (previous !== game) {
    const old = previous ? screen.parts.get(previous) : null;
    old?.panel.show(false, screen.current);
    old?.camera?.render({});
    if (previous) document.body.classList.remove(previous.id);
    document.body.classList.add(game.id);
    screen.game = game;
  }
  return parts;
}

/** @param {any} state the GET /api/state document */
function render(state) {
  // A refusal (nothing to confirm, a draw refused) was about the table as it stood: once the
  // table has moved on, it no longer says anything true.
  if (screen.current && state.journal_seq !== screen.current.journal_seq) $("action-error").textContent = "";
  screen.current = state;
  if (takeTableSeats(state)) for (const made of screen.parts.values()) made.panel.build(); // a column per seat
  const game = gameFor(state.game);
  const parts = partsFor(game);
  const simulated = Boolean(state.simulated) || Object.values(state.devices ?? {}).some((d) => d && d.simulated);
  $("simulated-banner").hidden = !simulated;
  document.body.classList.toggle("simulated", simulated);
  $("draw-card").hidden = !state.simulated;
  $("table-id").textContent = state.table ?? "Table";
  setText($("game-name"), state.game_info?.title ?? titleOf(state.game));
  $("round-info").textContent = state.round ? `Round ${state.round} \u00b7 ${state.round_status ?? ""}` : "No round yet";
  $("shoe-info").textContent = !state.shoe ? "" : state.shoe.empty ? "Shoe: empty" : `Shoe: ${state.shoe.remaining} cards left`;

  setText($("prompt"), cardsInWords(state.prompt ?? ""));
  const awaiting = state.awaiting ?? { kind: "nothing", target: {} };
  const betweenRounds = awaiting.kind === "round";
  // No round opens while the last one's payouts wait for the confirm: the form comes back after it.
  const openable = betweenRounds && !state.blocked && state.payment !== "due";
  const settlement = state.round_status === "settled" ? state.settlement ?? null : null;
  const board = screen.board.for(game.Drawing);
  board.render(state.state, game.liveExtras(state, settlement, parts.notes));
  renderPayouts(game.payouts(state.payouts ?? [], settlement, state.round ?? null));
  if (parts.decisions) parts.decisions.render(state);
  else hideDecisions();
  renderLastCard(state.last_card);
  // One primary action at a time: Confirm while it has something to confirm (the payouts, a new
  // shoe, a notice), else the opening form's submit.
  const confirming = Boolean(state.confirm);
  $("confirm").classList.toggle("primary", confirming);
  $("confirm").classList.toggle("attention", confirming && betweenRounds);
  // Mid-round, an empty shoe holds the round up until a new shoe is loaded (between rounds, Confirm).
  $("new-shoe").hidden = betweenRounds || !state.shoe?.empty;
  parts.panel.show(openable, state);
  const submit = parts.panel.form ? $(parts.panel.form).querySelector('button[type="submit"]') : null;
  submit?.classList.toggle("primary", !confirming);
  $("camera-open").classList.toggle("primary", !confirming);
  board.setCompact(openable);
  parts.camera?.render(state);
  renderFaults(state.faults ?? [], Boolean(state.blocked));
  fitBoxes();
}

/** The prompt and the fault box keep their text inside them, however long it is. */
function fitBoxes() {
  fitText($("prompt"));
  const box = /** @type {HTMLElement} */ (document.querySelector("#fault-overlay .fault-box"));
  if (!$("fault-overlay").hidden) fitText(box);
}

/** Fetch the whole state and draw it (when the screen's view may be behind the table's). */
function refresh() {
  get("/api/state")
    .then(render)
    .catch((err) => ($("action-error").textContent = errorText(err)));
}

/** A game whose players never decide: no decision box. */
function hideDecisions() {
  const box = $("decisions");
  box.hidden = true;
  box.dataset.key = "";
  document.body.classList.remove("deciding");
}

/** @param {string | null} card */
function renderLastCard(card) {
  const box = $("last-card");
  if ((box.firstElementChild?.getAttribute("data-card") ?? null) !== card || !box.firstElementChild) {
    box.replaceChildren(card ? cardElement(card, "big") : emptyCard());
  }
  const story = screen.lastCardStory;
  const where = card && story && story.card === card ? story.words : card ? cardLabel(card) : "None yet";
  setText($("last-card-where"), where);
}

function emptyCard() {
  const span = make("span", undefined, "card big empty");
  span.setAttribute("aria-label", "no card yet");
  return span;
}

/**
 * The payouts table as the game lays it out.
 * @param {{columns: string[], rows: HTMLElement[], heading: string, note: string | null}} payouts
 */
function renderPayouts(payouts) {
  const table = /** @type {HTMLTableElement} */ ($("payouts"));
  setColumns(table, payouts.columns);
  table.tBodies[0].replaceChildren(...payouts.rows);
  const note = $("action-spot");
  note.hidden = !payouts.note;
  if (payouts.note) setText(note, payouts.note);
  $("payouts-empty").hidden = payouts.rows.length > 0;
  table.hidden = payouts.rows.length === 0;
  $("payouts-heading").textContent = payouts.heading;
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
    if (show && faults.length === 0) $("fault-list").append(make("p", "Play is stopped.", "fault-message"));
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
  const block = make("section", undefined, "fault");
  block.dataset.faultId = String(fault.id);
  block.append(make("h2", cardsInWords(fault.title)), make("p", cardsInWords(fault.message), "fault-message"));
  if (fault.card) {
    const held = make("div", undefined, "fault-card");
    held.append(cardElement(fault.card, "small"), document.createTextNode(` Card held: ${cardLabel(fault.card)}`));
    block.append(held);
  }
  const status = make(
    "p",
    fault.acknowledged_by ? `Acknowledged by ${fault.acknowledged_by}. Waiting for a supervisor.` : "Not acknowledged yet.",
    "fault-status",
  );
  const ack = /** @type {HTMLButtonElement} */ (make("button", fault.acknowledged_by ? "Acknowledged" : "Acknowledge", "ack-action primary"));
  ack.type = "button";
  ack.disabled = Boolean(fault.acknowledged_by);
  ack.addEventListener("click", () => act(post(`/api/faults/${fault.id}/acknowledge`, {}), status));
  block.append(status, ack);
  return block;
}

// --- the event log -----------------------------------------------------------------------------

/** @param {import("./live.js").Entry} entry */
function onEntry(entry) {
  const game = screen.game ?? gameFor(null);
  partsFor(game).notes.take(entry);
  dealerEntry(entry);
  const lines = logEntry($("event-log"), entry, LOG_LINES, game);
  if (entry.kind === "card" && entry.body?.card) screen.lastCardStory = { card: entry.body.card, words: lines[0] };
  if (screen.current) renderLastCard(screen.current.last_card);
}

// --- the confirm button ------------------------------------------------------------------------

function confirm() {
  act(post("/api/confirm", {}), $("action-error"));
}

/**
 * Enter or Space confirms, also while a button has focus (the one last pressed keeps it: Enter
 * must not press "Draw card" or a player's action again); not while the person types in a field
 * or fills a form, nor while a dialog or the fault overlay is up. A player's action is chosen by
 * pointing at its button, never by a key that also confirms.
 * @param {KeyboardEvent} ev
 */
function onKey(ev) {
  if (ev.key !== "Enter" && ev.key !== " ") return;
  if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
  const target = /** @type {HTMLElement} */ (ev.target);
  if (target.closest("input, select, textarea, dialog, form, .fault-overlay")) return;
  if (!$("fault-overlay").hidden || /** @type {HTMLDialogElement} */ ($("login")).open) return;
  // The key's own default (clicking the focused button) never happens, held down or not.
  ev.preventDefault();
  if (!ev.repeat) confirm();
}

/**
 * Space clicks a focused button on keyup, not keydown: that default is stopped too.
 * @param {KeyboardEvent} ev
 */
function onKeyUp(ev) {
  if (ev.key !== " ") return;
  const target = /** @type {HTMLElement} */ (ev.target);
  if (target.closest("input, select, textarea, dialog, form, .fault-overlay")) return;
  if (target.closest("button, a")) ev.preventDefault();
}

// --- start -------------------------------------------------------------------------------------

function main() {
  $("confirm").addEventListener("click", confirm);
  wireDealerSignIn();
  $("draw-card").addEventListener("click", () => act(post("/api/sim/draw", { count: 1 }), $("action-error")));
  $("new-shoe").addEventListener("click", () => act(post("/api/shoe/reshuffle", {}), $("action-error")));
  document.addEventListener("keydown", onKey);
  document.addEventListener("keyup", onKeyUp);
  window.addEventListener("resize", fitBoxes);
  // Reads need a login too: nothing of the table is drawn behind the login dialog.
  void signIn();
}

main();
