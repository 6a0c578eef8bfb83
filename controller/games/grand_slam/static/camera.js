/**
 * The overhead camera on a Grand Slam table's dealer screen (a table with a `[camera]` section),
 * drawn from `state.camera` alone: nothing here appears at a table without one.
 *
 * - A badge in the top bar with the camera's state, and a banner under it whenever the camera is
 *   not in place (moved, offline, ...), saying why and that nothing is being watched.
 * - Between rounds, "Camera sees": each seat's bases and side bets and the blind puck as the
 *   camera reads them, with a big "Open this round" button that opens exactly that proposal
 *   (POST /api/rounds/from-camera with the view's `scene_seq`: if the felt changed since, the
 *   table refuses with 409 and the screen shows its words and fetches the state again), or
 *   "Not ready" with the table's reason.
 * - On the table drawing, each base the camera cannot read (a hand over it, an unsure stack) is
 *   greyed: `data-camera="blocked|unsure"` on `#table g[data-seat][data-base]`.
 * - After settlement, before the dealer confirms: each payout circle as owed and as seen
 *   (paid / short / over / cannot read). After the confirm: what the camera's check found, in
 *   the table's words, until the next round opens.
 *
 * The table decides every one of these; this module only shows them.
 */
import { ApiError, errorText, post } from "/static/js/api.js";
import { $, make, setText } from "/static/js/dom.js";
import { CAMERA_WORDS } from "/static/js/words.js";
import { BET_SHORT, BETS, POSITIONS, SPOT_WORDS } from "./bases.js";

/** Bases the table drawing has, so a zone the camera cannot read can be greyed there. */
const DRAWN = new Set(POSITIONS.filter((p) => p !== "out"));

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
 * How a payout circle stands, in words: "paid", "short 20", "over 10", "cannot read (why)"
 * (the camera's reason: "square the stack", "unsure: the frames disagree: 25 in 2 frames, 30 in 1 frame").
 * @param {{owed: number, seen: number | null, state: string, why?: string}} row
 */
function payoutState(row) {
  if (row.state === "short" && row.seen !== null) return `short ${row.owed - row.seen}`;
  if (row.state === "over" && row.seen !== null) return `over ${row.seen - row.owed}`;
  if (row.state === "unread") return row.why ? `cannot read (${row.why})` : "cannot read";
  return row.state;
}

export class DealerCamera {
  /**
   * @param {() => void} refresh fetch the whole state again and draw it (after a 409)
   */
  constructor(refresh) {
    this.refresh = refresh;
    /** @type {any} the proposal on screen, which the button opens */
    this.proposal = null;
    this.opening = false;
    $("camera-open").addEventListener("click", () => void this.open());
    // The proposal's columns: the three bases, then the side bets (as on the wager panel).
    const head = make("tr");
    head.append(make("td"));
    for (const bet of BETS) {
      const th = /** @type {HTMLTableCellElement} */ (make("th", BET_SHORT[bet]));
      th.scope = "col";
      head.append(th);
    }
    /** @type {HTMLTableElement} */ ($("camera-seats")).tHead?.replaceChildren(head);
  }

  /**
   * Show the camera's part of `state` (GET /api/state), or hide every part when there is none.
   * @param {any} state
   */
  render(state) {
    const camera = state.camera ?? null;
    document.body.classList.toggle("has-camera", Boolean(camera));
    this.renderStatus(camera);
    this.renderProposal(camera, state);
    this.markZones(camera);
    this.renderPayoutCheck(camera, state);
    this.renderLastCheck(camera, state);
  }

  /** @param {any} camera */
  renderStatus(camera) {
    const badge = $("camera-badge");
    const banner = $("camera-banner");
    badge.hidden = !camera;
    if (!camera) {
      banner.hidden = true;
      return;
    }
    const status = String(camera.status);
    const words = CAMERA_WORDS[status] ?? `Camera ${status}`;
    badge.dataset.status = status;
    setText(badge, words);
    badge.title = camera.why ?? "";
    banner.hidden = status === "ok";
    banner.dataset.status = status;
    if (status !== "ok") {
      const until = status === "bumped" ? " until a supervisor recalibrates it" : "";
      const why = camera.why ? `: ${camera.why}` : "";
      setText(banner, `${words}${why}. Wagers and payouts are not watched${until}: open rounds with the wager panel.`);
    }
  }

  /**
   * "Camera sees": shown between rounds while the table may open one and the camera proposes.
   * @param {any} camera
   * @param {any} state
   */
  renderProposal(camera, state) {
    const panel = $("camera-panel");
    const proposal = camera?.proposal ?? null;
    // While the last round's payouts are on the felt the camera is checking them, not proposing.
    const show = Boolean(proposal) && !state.blocked && !camera.payouts && camera.status === "ok";
    panel.hidden = !show;
    document.body.classList.toggle("camera-proposing", show);
    if (!show) {
      this.proposal = null;
      if (!this.opening) $("camera-error").textContent = "";
      return;
    }
    this.proposal = proposal;
    const seats = /** @type {any[]} */ (proposal.seats ?? []);
    panel.dataset.sceneSeq = String(proposal.scene_seq ?? "");
    panel.dataset.ready = String(Boolean(proposal.ready));
    const table = /** @type {HTMLTableElement} */ ($("camera-seats"));
    table.hidden = seats.length === 0;
    /** @type {Record<string, any>} */
    const zones = camera.zones ?? {};
    const key = JSON.stringify([seats, zones]);
    if (table.dataset.key !== key) {
      table.dataset.key = key;
      table.tBodies[0].replaceChildren(
        ...seats.map((seat) => {
          const row = make("tr");
          row.dataset.seat = String(seat.seat);
          const th = make("th", `Seat ${seat.seat}`);
          /** @type {HTMLTableCellElement} */ (th).scope = "row";
          row.append(th);
          const bets = { ...(seat.wagers ?? {}), ...(seat.side_bets ?? {}) };
          for (const bet of BETS) {
            // A spot the camera cannot read is no part of the proposal: marked "?", not empty.
            const zone = zones[`seat${seat.seat}.${bet}`];
            const unread = zone && zone.state !== "ok";
            const td = make("td", bets[bet] ? String(bets[bet]) : unread ? "?" : "", bets[bet] ? "bet" : unread ? "unread" : "none");
            td.dataset.bet = bet;
            if (unread) td.title = `${zoneWords(`seat${seat.seat}.${bet}`)}: ${zone.why || zone.state}`;
            row.append(td);
          }
          return row;
        }),
      );
    }
    const blind = proposal.blind_seat;
    $("camera-blind").hidden = seats.length === 0;
    setText($("camera-blind"), blind ? `Blind puck at seat ${blind}` : "No blind puck");
    const open = /** @type {HTMLButtonElement} */ ($("camera-open"));
    open.hidden = !proposal.ready;
    open.disabled = this.opening;
    const notReady = $("camera-not-ready");
    notReady.hidden = Boolean(proposal.ready);
    if (!proposal.ready) {
      const why = proposal.why_not ?? "the camera cannot read the felt";
      setText(notReady, seats.length === 0 && /^no wagers/.test(why) ? "No wagers on the felt yet." : `Not ready: ${why}`);
      notReady.title = why; // the box shows four lines; the whole reason is here and read aloud
    }
  }

  /** Open the round as the camera proposes it, for the view the dealer is looking at. */
  async open() {
    const proposal = this.proposal;
    if (!proposal || this.opening) return;
    const error = $("camera-error");
    error.textContent = "";
    this.opening = true;
    /** @type {HTMLButtonElement} */ ($("camera-open")).disabled = true;
    try {
      await post("/api/rounds/from-camera", { scene_seq: proposal.scene_seq });
    } catch (err) {
      error.textContent = errorText(err);
      // 409: the felt changed since the dealer looked (or play stopped): show what is there now.
      if (err instanceof ApiError && err.status === 409) this.refresh();
    } finally {
      this.opening = false;
      /** @type {HTMLButtonElement} */ ($("camera-open")).disabled = false;
    }
  }

  /**
   * Grey each drawn base the camera cannot read; a base it reads (or a camera not in place,
   * whose zones are stale and which the banner already names) is left as the engine draws it.
   * @param {any} camera
   */
  markZones(camera) {
    /** @type {Map<string, {state: string, why: string}>} */
    const marks = new Map();
    if (camera && camera.status === "ok") {
      for (const [name, zone] of Object.entries(camera.zones ?? {})) {
        const m = /^seat(\d+)\.([a-z_]+)$/.exec(name);
        const z = /** @type {any} */ (zone);
        if (m && DRAWN.has(m[2]) && z.state !== "ok") marks.set(`${m[1]}:${m[2]}`, { state: z.state, why: z.why ?? "" });
      }
    }
    document.querySelectorAll("#table g[data-seat][data-base]").forEach((node) => {
      const base = /** @type {SVGElement} */ (node);
      const mark = marks.get(`${base.dataset.seat}:${base.dataset.base}`);
      if (mark) {
        base.dataset.camera = mark.state;
        base.setAttribute("aria-label", `${zoneWords(`seat${base.dataset.seat}.${base.dataset.base}`)}: the camera cannot read it (${mark.why || mark.state})`);
      } else if (base.dataset.camera) {
        delete base.dataset.camera;
        base.removeAttribute("aria-label");
      }
    });
  }

  /**
   * After settlement, before the confirm: each payout circle owed or holding chips.
   * @param {any} camera
   * @param {any} state
   */
  renderPayoutCheck(camera, state) {
    const table = /** @type {HTMLTableElement} */ ($("payout-check"));
    const rows = /** @type {any[]} */ (camera?.payouts ?? []);
    table.hidden = rows.length === 0;
    const key = JSON.stringify([camera?.status, rows]);
    if (table.dataset.key === key) return;
    table.dataset.key = key;
    const stale = camera && camera.status !== "ok";
    setText(
      /** @type {HTMLElement} */ (table.caption),
      stale ? `Camera (${(CAMERA_WORDS[camera.status] ?? camera.status).toLowerCase()}): payouts as last seen` : `Camera: payouts on the felt, round ${state.round ?? ""}`,
    );
    table.tBodies[0].replaceChildren(
      ...rows.map((r) => {
        const row = make("tr", undefined, `check-${r.state}`);
        row.dataset.zone = r.zone;
        row.dataset.state = r.state;
        row.append(
          make("td", zoneWords(r.zone).replace(/ payout$/, ""), "where"),
          make("td", String(r.owed), "owed"),
          make("td", r.seen === null || r.seen === undefined ? "?" : String(r.seen), "seen"),
          make("td", payoutState(r), "state"),
        );
        return row;
      }),
    );
  }

  /**
   * After the dealer confirms: what the camera's check of the payouts found, in the table's own
   * words, until the next round opens.
   * @param {any} camera
   * @param {any} state
   */
  renderLastCheck(camera, state) {
    const box = $("camera-check");
    const check = camera?.last_check ?? null;
    const show = Boolean(check) && check.round === state.round && !camera.payouts;
    box.hidden = !show;
    if (!show) return;
    const key = JSON.stringify(check);
    if (box.dataset.key === key) return;
    box.dataset.key = key;
    const problems = /** @type {any[]} */ (check.problems ?? []);
    const unchecked = /** @type {string[]} */ (check.unchecked ?? []);
    const clean = check.checked && problems.length === 0 && unchecked.length === 0;
    box.dataset.result = !check.checked ? "unchecked" : problems.length ? "problems" : clean ? "clean" : "partial";
    const open = /** @type {any[]} */ (check.open ?? []);
    const title = !check.checked
      ? `Round ${check.round}: payouts not checked`
      : problems.length
        ? `Round ${check.round}: the camera found ${problems.length === 1 ? "a problem" : `${problems.length} problems`}`
        : open.length
          ? `Round ${check.round}: waiting for the camera on ${open.length === 1 ? "1 payout" : `${open.length} payouts`}`
          : `Round ${check.round}: payouts checked`;
    const items = [
      ...problems.map((p) => {
        const li = make("li", p.words, "problem");
        li.dataset.kind = p.kind;
        li.dataset.zone = p.zone ?? "";
        return li;
      }),
      ...unchecked.map((words) => make("li", words, "unchecked")),
    ];
    if (!check.checked) items.push(make("li", check.why ?? "the camera could not see the table", "unchecked"));
    if (clean) items.push(make("li", "Every payout right; no losing wager left on the felt.", "clean"));
    $("camera-check-title").textContent = title;
    $("camera-check-list").replaceChildren(...items);
  }
}
