/**
 * The supervisor's Pace and ratings panel: rounds an hour over the shift (GET /api/pace: the
 * dealer's time only, shuffles, faults and breaks counted apart) drawn as bars on one labelled
 * axis, the pace's figures, and the seat rating sessions (GET /api/ratings) with their exact
 * theoretical win. The server computes every figure; this only shows them.
 *
 * Below them: the rating slip (the supervisor opens a place's session for a player id, typed or
 * scanned, or closes it), each dealer's and each down's figures (GET /api/dealers/figures) and
 * the dealer list the supervisor keeps (GET and POST /api/dealers), all journaled by the table.
 */

import { errorText, get, post } from "./api.js";
import { $, attempt, field, make, signed } from "./dom.js";
import { el, label } from "./svg.js";

const HEIGHT = 220;

/** @param {number | null | undefined} n */
const perHour = (n) => (n === null || n === undefined ? "-" : n.toFixed(1));

/** @param {number} secs */
function duration(secs) {
  const s = Math.round(secs);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h ? `${h} h ${String(m).padStart(2, "0")} min` : `${m} min ${String(s % 60).padStart(2, "0")} s`;
}

/** A round number of rounds an hour above `value`, for the axis's top. @param {number} value */
function axisTop(value) {
  for (const step of [10, 20, 30, 40, 60, 80, 100, 120, 150, 200, 300, 500, 1000]) if (value <= step) return step;
  return Math.ceil(value / 100) * 100;
}

/**
 * @param {SVGSVGElement} svg
 * @param {{from: string, to: string, rounds: number, rounds_per_hour: number | null}[]} points
 */
function drawChart(svg, points) {
  const width = Math.max(Math.round(svg.getBoundingClientRect().width) || 1200, 400);
  svg.setAttribute("viewBox", `0 0 ${width} ${HEIGHT}`);
  svg.replaceChildren();
  const left = 64;
  const top = 12;
  const bottom = 28;
  const innerW = width - left - 8;
  const innerH = HEIGHT - top - bottom;
  const peak = axisTop(Math.max(1, ...points.map((p) => p.rounds_per_hour ?? 0)));
  el("line", { x1: left, y1: top, x2: left, y2: top + innerH, class: "axis" }, svg);
  const axis = label("rounds an hour", { x: 16, y: top + innerH / 2, "text-anchor": "middle", transform: `rotate(-90 16 ${top + innerH / 2})`, id: "pace-axis-label" }, svg);
  axis.setAttribute("class", "axis-label");
  for (let i = 0; i <= 4; i += 1) {
    const y = top + innerH - (innerH * i) / 4;
    el("line", { x1: left - 5, y1: y, x2: left, y2: y, class: "axis" }, svg);
    label(String(Math.round((peak * i) / 4)), { x: left - 8, y: y + 5, class: "tick" }, svg);
  }
  const slot = innerW / Math.max(points.length, 1);
  const every = Math.max(1, Math.ceil(points.length / 12));
  points.forEach((p, i) => {
    const value = p.rounds_per_hour ?? 0;
    const h = (innerH * value) / peak;
    const bar = el("rect", { x: left + i * slot + 2, y: top + innerH - h, width: Math.max(slot - 4, 1), height: h, class: "bar" }, svg);
    bar.dataset.roundsPerHour = String(p.rounds_per_hour ?? "");
    const title = el("title", {}, bar);
    title.textContent = `${p.from.slice(11, 16)} to ${p.to.slice(11, 16)} UTC: ${perHour(p.rounds_per_hour)} rounds an hour (${p.rounds} rounds)`;
    if (i % every === 0) label(p.from.slice(11, 16), { x: left + i * slot + slot / 2, y: HEIGHT - 8, class: "hour" }, svg);
  });
}

/**
 * @param {HTMLElement} list
 * @param {string} key
 * @param {string} name
 * @param {string} value
 */
function pair(list, key, name, value) {
  const dt = make("dt", name);
  const dd = make("dd", value);
  dd.dataset.key = key;
  list.append(dt, dd);
}

/** @param {any} pace */
function renderPace(pace) {
  const list = $("pace-summary");
  list.replaceChildren();
  pair(list, "rounds", "Rounds", String(pace.rounds));
  pair(list, "rounds_per_hour", "Rounds an hour", perHour(pace.rounds_per_hour));
  pair(list, "dealing", "Dealing", duration(pace.dealer_s));
  pair(list, "shuffles", "Shuffles", `${pace.shuffles.count} (${duration(pace.shuffles.seconds)})`);
  pair(list, "faults", "Faults", `${pace.faults.count} (${duration(pace.faults.seconds)})`);
  pair(list, "voids", "Voids", String(pace.voids));
  const phases = Object.entries(pace.phases).map(([k, v]) => `${k} ${Math.round(100 * /** @type {number} */ (v) / (pace.dealer_s || 1))}%`);
  pair(list, "phases", "Phases", phases.join(", "));
  pair(list, "breaks", "Breaks", duration(pace.idle_s));
  drawChart(/** @type {SVGSVGElement} */ (/** @type {unknown} */ ($("pace-chart"))), pace.chart);
}

/** @param {any[]} sessions */
function renderRatings(sessions) {
  const body = /** @type {HTMLTableElement} */ ($("ratings")).tBodies[0];
  body.replaceChildren();
  for (const s of sessions) {
    const row = make("tr");
    row.dataset.place = String(s.place);
    const average = Object.entries(s.average_wager).map(([bet, v]) => `${bet.replace(/_/g, " ")} ${v}`).join(", ");
    const cells = [
      [String(s.place), ""],
      [s.player ?? "", ""],
      [s.status, ""],
      [String(s.rounds), "num"],
      [duration(s.time_s), "num"],
      [average, ""],
      [`${s.side_bet_mix_percent}%`, "num"],
      [signed(s.player_net), "num"],
      [s.theoretical_win.toFixed(2), "num"],
    ];
    for (const [text, cls] of cells) row.append(make("td", text, cls || undefined));
    body.append(row);
  }
  if (!sessions.length) {
    const row = make("tr");
    const td = make("td", "No rating sessions in this window.");
    td.setAttribute("colspan", "9");
    row.append(td);
    body.append(row);
  }
}

/**
 * @param {HTMLTableElement} tableEl
 * @param {any[]} rows
 * @param {(row: any) => [string, string, string][]} cells key, text, class of each cell
 * @param {string} none
 */
function fill(tableEl, rows, cells, none) {
  const body = tableEl.tBodies[0];
  body.replaceChildren();
  for (const r of rows) {
    const row = make("tr");
    row.dataset.dealer = r.dealer;
    for (const [key, text, cls] of cells(r)) {
      const td = make("td", text, cls || undefined);
      td.dataset.key = key;
      row.append(td);
    }
    body.append(row);
  }
  if (!rows.length) {
    const row = make("tr");
    const td = make("td", none);
    td.setAttribute("colspan", String(tableEl.tHead?.rows[0].cells.length ?? 1));
    row.append(td);
    body.append(row);
  }
}

/** @param {any} d a dealer's or a down's figures */
const faultCount = (d) => String(Object.values(d.faults).reduce((a, b) => Number(a) + Number(b), 0));

/** @param {string} at */
const hhmm = (at) => (at ? at.slice(11, 16) : "now");

/**
 * @param {any} figures GET /api/dealers/figures
 * @param {any} roster GET /api/dealers
 */
function renderDealers(figures, roster) {
  const names = Object.fromEntries(roster.dealers.map((/** @type {any} */ d) => [d.id, d.name]));
  const dealers = Object.entries(figures.dealers).map(([dealer, d]) => ({ dealer, ...(/** @type {any} */ (d)) }));
  fill(/** @type {HTMLTableElement} */ ($("dealer-figures")), dealers, (d) => [
    ["dealer", d.dealer, ""],
    ["name", names[d.dealer] ?? "", ""],
    ["rounds", String(d.rounds), "num"],
    ["rounds_per_hour", perHour(d.rounds_per_hour), "num"],
    ["voids", String(d.voids), "num"],
    ["dead_cards", String(d.dead_cards), "num"],
    ["payout_corrections", String(d.payout_corrections), "num"],
    ["faults", faultCount(d), "num"],
    ["faults_cleared", String(d.faults_cleared), "num"],
    ["handle", String(d.money?.handle_total ?? 0), "num"],
    ["theoretical_win", (d.money?.theoretical_win ?? 0).toFixed(2), "num"],
  ], "No rounds dealt in this window.");
  fill(/** @type {HTMLTableElement} */ ($("downs")), figures.downs, (w) => [
    ["dealer", w.name ? `${w.dealer} (${w.name})` : w.dealer, ""],
    ["from", hhmm(w.from), ""],
    ["to", hhmm(w.to), ""],
    ["rounds", String(w.rounds), "num"],
    ["rounds_per_hour", perHour(w.rounds_per_hour), "num"],
    ["voids", String(w.voids), "num"],
    ["dead_cards", String(w.dead_cards), "num"],
    ["payout_corrections", String(w.payout_corrections), "num"],
    ["faults", faultCount(w), "num"],
    ["faults_cleared", String(w.faults_cleared), "num"],
  ], "No dealer signed in during this window.");
  const on = roster.on;
  $("dealer-on-duty").textContent = on ? `On now: ${on.id}${on.name ? ` (${on.name})` : ""} since ${hhmm(on.since)} UTC` : "Nobody signed in";
  const list = /** @type {HTMLTextAreaElement} */ ($("dealer-list"));
  if (document.activeElement !== list) list.value = roster.dealers.map((/** @type {any} */ d) => `${d.id} ${d.name}`.trim()).join("\n");
}

/** Loads started: only the latest one's answers are drawn (an older one may finish after it). */
let loads = 0;

/** Load the panel for the window chosen. */
export async function loadAnalytics() {
  const mine = ++loads;
  const window = /** @type {HTMLSelectElement} */ ($("pace-window")).value || "8h";
  /** @type {HTMLAnchorElement} */ ($("ratings-csv")).href = `/api/ratings?format=csv&window=${encodeURIComponent(window)}`;
  const readOnly = document.body.classList.contains("read-only");
  for (const id of ["slip-controls", "dealer-list-controls"]) /** @type {HTMLFieldSetElement} */ ($(id)).disabled = readOnly;
  try {
    const [pace, ratings, figures, roster] = await Promise.all([
      get(`/api/pace?window=${window}`),
      get(`/api/ratings?window=${window}`),
      get(`/api/dealers/figures?window=${window}`),
      get("/api/dealers"),
    ]);
    if (mine !== loads) return; // a newer load is on its way: what this one read is older
    renderPace(pace);
    renderRatings(ratings.sessions);
    renderDealers(figures, roster);
    $("pace-error").textContent = "";
  } catch (err) {
    if (mine === loads) $("pace-error").textContent = errorText(err);
  }
}

/**
 * The rating slip: open (the form's submit: a scanner's Enter) or close a place's session.
 * @param {"open" | "close"} action
 */
async function slip(action) {
  const place = Number(field("slip-place").value);
  const player = field("slip-player").value.trim();
  /** @type {Record<string, unknown>} */
  const body = { action, place };
  if (player) body.player = player;
  $("slip-done").textContent = "";
  const refused = await attempt(post("/api/ratings/sessions", body), $("slip-error"));
  if (refused) return;
  $("slip-done").textContent = action === "open" ? `Place ${place}: session opened for ${player}` : `Place ${place}: session closed`;
  field("slip-player").value = "";
  void loadAnalytics();
}

/** The dealer list as typed: a line a dealer, the id then the name. */
async function saveList() {
  const lines = /** @type {HTMLTextAreaElement} */ ($("dealer-list")).value.split("\n").map((l) => l.trim()).filter(Boolean);
  const dealers = lines.map((line) => {
    const [id, ...name] = line.split(/\s+/);
    return { id, name: name.join(" ") };
  });
  $("dealer-list-done").textContent = "";
  const refused = await attempt(post("/api/dealers", { dealers, reason: "edited on the supervisor screen" }), $("dealer-list-error"));
  if (refused) return;
  $("dealer-list-done").textContent = `Dealer list saved: ${dealers.length} dealers`;
  /** @type {HTMLTextAreaElement} */ ($("dealer-list")).blur();
  void loadAnalytics();
}

/** Wire the slip and the list's forms once. */
export function wireAnalytics() {
  $("slip-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    void slip("open");
  });
  $("slip-close").addEventListener("click", () => void slip("close"));
  $("dealer-list-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    void saveList();
  });
}
