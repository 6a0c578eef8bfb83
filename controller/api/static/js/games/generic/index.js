/**
 * A game whose package ships no screen module: an honest, plain screen rather than another
 * game's drawing. It shows what the API itself says: the game's name and seats (`game_info`), the
 * prompt, the cards read this round in order, the payouts and the journal's words, and says
 * plainly that it cannot draw the game; it opens the game's rounds and takes its players'
 * decisions with forms built from the JSON schemas of the game's own bodies (GET /api/game). The
 * exports every game has (games/README.md).
 */
import { errorText, get, post } from "../../api.js";
import { parseCard } from "../../cards.js";
import { decisionDue, postDecision } from "../../decisions.js";
import { $, attempt, make, payoutRow, setText, wideCell } from "../../dom.js";
import { arcCentre, drawFelt, prepare } from "../../felt.js";
import { SchemaForm } from "../../schema-form.js";
import { el, label } from "../../svg.js";

export const id = "generic";
export const title = "";
export const Camera = null;

/** The game's title as the API says it. @param {any} state */
const titleIn = (state) => String(state?.game_info?.title ?? state?.game ?? "this game");

/** What the feed tells: the cards read in each round, in order. */
export class Notes {
  constructor() {
    /** @type {{round: number | null, cards: string[]}} */
    this.read = { round: null, cards: [] };
  }

  /** @param {import("../../live.js").Entry} entry */
  take(entry) {
    if (entry.kind === "round-open") this.read = { round: entry.round, cards: [] };
    if (entry.kind !== "card" || !entry.body?.card) return;
    if (this.read.round !== entry.round) this.read = { round: entry.round, cards: [] };
    this.read.cards.push(String(entry.body.card));
  }
}

/**
 * @param {any} state GET /api/state
 * @param {any} _settlement
 * @param {Notes} notes
 */
export function liveExtras(state, _settlement, notes) {
  return {
    title: titleIn(state),
    seats: Number(state.game_info?.seats ?? 7),
    cards: notes.read.round === state.round ? notes.read.cards : [],
    prompt: String(state.prompt ?? ""),
  };
}

/** The felt, the seats by number, a plain notice, and the cards read this round in a row. */
export class Drawing {
  /** @param {SVGSVGElement} svg */
  constructor(svg) {
    this.svg = svg;
    prepare(svg, ["table-drawing", "generic-drawing"]);
    const felt = drawFelt(svg);
    this.name = label("", { x: 500, y: 120, class: "felt-title" }, felt);
    this.notice = label("", { x: 500, y: 160, class: "generic-notice" }, svg);
    this.seatLayer = el("g", { class: "generic-seats" }, svg);
    this.cards = el("g", { class: "read-cards", "data-cards": "" }, svg);
    this.seatCount = 0;
  }

  /**
   * @param {any} _engine the game's own state: not read (its shape is the game's)
   * @param {{title?: string, seats?: number, cards?: string[]}} [extras]
   */
  render(_engine, extras = {}) {
    const name = extras.title ?? "this game";
    this.svg.setAttribute("aria-label", `The table: this screen has no drawing for ${name}`);
    this.name.textContent = name.toUpperCase();
    this.notice.textContent = `This screen has no drawing for ${name}: follow the prompt; the cards read are below.`;
    const seats = Math.max(1, Math.min(extras.seats ?? 7, 12));
    if (seats !== this.seatCount) {
      this.seatCount = seats;
      this.seatLayer.replaceChildren();
      for (let seat = 1; seat <= seats; seat += 1) {
        // Seat 1 at the right end, as on every table; `arcCentre` spaces 7 seats.
        const [x, y] = arcCentre(1 + ((seat - 1) * 6) / Math.max(seats - 1, 1), -250);
        label(`SEAT ${seat}`, { x, y, class: "generic-seat", "data-seat": seat }, this.seatLayer);
      }
    }
    const cards = extras.cards ?? [];
    this.cards.setAttribute("data-cards", cards.join(" "));
    this.cards.replaceChildren();
    const width = 46;
    const left = 500 - (Math.min(cards.length, 16) * width) / 2;
    cards.slice(-16).forEach((text, i) => {
      const face = parseCard(text);
      const g = el("g", { class: `read-card mini-card ${face ? face.colour : "back"}`, "data-card": text, transform: `translate(${left + i * width} 200)` }, this.cards);
      el("rect", { width: 40, height: 56, rx: 4 }, g);
      label(face ? face.rank : "?", { x: 20, y: 24, class: "corner-rank" }, g);
      label(face ? face.symbol : "", { x: 20, y: 46, class: "corner-suit" }, g);
      g.setAttribute("aria-label", face ? face.name : `unreadable card ${text}`);
    });
  }

  /** @param {boolean} _compact */
  setCompact(_compact) {}

  restart() {}
}

/** What GET /api/game says of the table's game (its bodies' schemas), asked once. */
let info = /** @type {Promise<any> | null} */ (null);
const gameInfo = () => (info ??= get("/api/game").catch((err) => ((info = null), Promise.reject(err))));

/**
 * The opening form, built from the JSON schema of the game's own opening body (GET /api/game
 * `opening`): the body it sends is what POST /api/rounds takes, and the table's refusal is shown
 * in its words.
 */
export class OpeningPanel {
  constructor() {
    this.form = "generic-open";
    const form = /** @type {HTMLFormElement} */ (make("form", undefined, "wager-panel generic-open"));
    form.id = this.form;
    form.noValidate = true;
    form.hidden = true;
    const head = make("div", undefined, "wager-head");
    this.heading = make("h2", "Next round");
    const submit = /** @type {HTMLButtonElement} */ (make("button", "Open round", "primary"));
    submit.type = "submit";
    submit.id = "generic-open-round";
    head.append(this.heading, submit);
    this.fields = make("div", "Loading the game's opening form\u2026", "generic-fields");
    this.error = make("p", undefined, "error");
    this.error.id = "generic-error";
    this.error.setAttribute("role", "alert");
    form.append(head, this.fields, this.error);
    $("game-forms").append(form);
    /** @type {SchemaForm | null} */
    this.schema = null;
    form.addEventListener("submit", (ev) => void this.open(ev));
    gameInfo()
      .then((game) => {
        this.schema = new SchemaForm(game.opening ?? {});
        this.fields.replaceChildren(this.schema.node);
      })
      .catch((err) => setText(this.fields, `The game's opening form could not be loaded: ${errorText(err)}`));
  }

  /**
   * @param {boolean} openable
   * @param {any} state
   */
  show(openable, state) {
    $(this.form).hidden = !openable;
    setText(this.heading, `Next ${titleIn(state)} round`);
  }

  build() {}

  /** @param {SubmitEvent} ev */
  async open(ev) {
    ev.preventDefault();
    if (!this.schema) return;
    const button = /** @type {HTMLButtonElement} */ ($("generic-open-round"));
    button.disabled = true;
    await attempt(post("/api/rounds", this.schema.read()), this.error);
    button.disabled = false;
  }
}

/**
 * The player who must decide: the table's prompt, and a form built from the JSON schema of the
 * game's decision body (GET /api/game `decision`), its fields filled from who decides
 * (`awaiting.who`) where they share a name; the choices the rules allow listed beside it.
 */
export class Decisions {
  constructor() {
    /** @type {SchemaForm | null} */
    this.schema = null;
    /** @type {any} */
    this.decision = null;
    /** Settles once the decision body's schema is known (or could not be had). */
    this.ready = gameInfo()
      .then((game) => (this.decision = game.decision))
      .catch(() => undefined);
  }

  /** @param {any} state GET /api/state */
  render(state) {
    const due = decisionDue(state, { ready: this.decision !== null });
    if (!due) return;
    const { who, allowed } = due;
    setText($("decision-who"), String(state.prompt ?? "A player decides"));
    const facts = $("decision-facts");
    facts.hidden = allowed.length === 0;
    setText(facts, allowed.length ? `The rules allow: ${allowed.join(", ")}` : "");
    const schema = new SchemaForm(this.decision);
    schema.node.querySelectorAll("[data-key]").forEach((node) => {
      const name = /** @type {HTMLElement} */ (node).dataset.key ?? "";
      if (node instanceof HTMLInputElement && who[name] !== undefined && who[name] !== null) node.value = String(who[name]);
    });
    const form = /** @type {HTMLFormElement} */ (make("form", undefined, "generic-decision"));
    form.noValidate = true;
    const submit = /** @type {HTMLButtonElement} */ (make("button", "Decide", "decision primary"));
    submit.type = "submit";
    form.append(schema.node, submit);
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      void postDecision(schema.read(), [submit]);
    });
    $("decision-buttons").replaceChildren(form);
  }
}

/**
 * The payouts as the API lists them: the seat (or whatever it names) and the chips.
 * @param {any[]} payouts
 * @param {any} _settlement
 * @param {number | null} round
 */
export function payouts(payouts, _settlement, round) {
  const rows = payouts.map((p) =>
    payoutRow(p, p.seat != null ? `Seat ${p.seat}` : p.spot != null ? `Spot ${p.spot}` : String(p.player ?? "")));
  return { columns: ["Who", "Pay", "Take", "Net"], rows, heading: payouts.length && round ? `Payouts, round ${round}` : "Payouts", note: null };
}

/**
 * The settlement as the API sends it, in one cell (this screen does not know its layout).
 * @param {any} settlement
 */
export function settlementTable(settlement) {
  const columns = ["Settlement (as the table wrote it)"];
  if (!settlement) return { columns, rows: [] };
  const row = make("tr");
  row.append(wideCell(JSON.stringify(settlement), 1, "raw"));
  return { columns, rows: [row] };
}

/** The net of every seat or player the settlement lists. @param {any} settlement */
export const playersNet = (settlement) =>
  [...(settlement?.seats ?? []), ...(settlement?.players ?? [])].reduce((sum, /** @type {any} */ p) => sum + (p.net ?? 0), 0);

export const replayWords = { opened: "Round opened", unit: "step" };

/**
 * @param {any[]} steps
 * @param {number} index
 * @returns {{extras: any, prompt: string | null}}
 */
export function replayStep(steps, index) {
  const cards = steps.slice(0, index + 1).map((s) => s.card).filter(Boolean);
  return { extras: { cards }, prompt: null };
}

/** The journal's words: every card as read (what it did is the game's, unknown here). */
export const describe = {
  /**
   * @param {number | null} round
   * @param {any} _body
   * @param {any[]} effects
   * @param {(effects: any[]) => string[]} lines
   */
  opened: (round, _body, effects, lines) => [`Round ${round ?? "?"} opened`, ...lines(effects)],
  /** @returns {null} the card is told as read by words.js */
  card: () => null,
  /** @returns {null} */
  decision: () => null,
  /** @param {any} _e @returns {string | null} */
  effect: (_e) => null,
};

