/**
 * Live updates from the table over the WebSocket /api/ws, with resume.
 *
 * The feed remembers the last journal seq it has seen and, on every (re)connect, sends
 * `{"after": lastSeq}`: the server answers with every entry after it, then the whole state, then
 * live entries, each with what it changed of the state (`changes`: [[path, value], ...], applied
 * here to the state the feed has, `patched`), or the whole state after it. So a dropped
 * connection loses nothing and repeats nothing. Reconnects back off (0.5 s doubling to 10 s). Only when the socket cannot connect at
 * all does the feed fall back to polling GET /api/state, and it stops polling as soon as the
 * socket is back. The link's state shows in the page's #connection indicator.
 */
import { get } from "./api.js";

/** @typedef {"connecting" | "live" | "reconnecting" | "polling" | "signed-out"} LinkStatus */

/**
 * @typedef {object} Entry a journal entry as the server sends it
 * @property {"entry"} type
 * @property {number} seq
 * @property {string} kind
 * @property {number | null} round
 * @property {string} at
 * @property {any} body
 * @property {any[]} effects
 * @property {boolean} live
 * @property {any} [state] the whole state after it
 * @property {Changes} [changes] or what it changed of the state
 */

/** @typedef {[(string | number)[], any][]} Changes what changed: each path from the top, and its value */

/**
 * @typedef {object} FeedHandlers
 * @property {(state: any) => void} onState the whole table (GET /api/state shape)
 * @property {(entry: Entry) => void} onEntry each journal entry, once, in order
 * @property {() => void} onSignedOut the server refused the session (close code 4401)
 */

const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 10_000;
const POLL_MS = 3_000;
/** Failed connects in a row before the state is polled meanwhile. */
const POLL_AFTER_FAILURES = 3;

/** One feed for the page's life: after a new login it resumes from the last entry it showed. */
export class LiveFeed {
  /** @param {FeedHandlers} handlers */
  constructor(handlers) {
    this.handlers = handlers;
    this.lastSeq = 0;
    /** @type {any} the state as the socket's messages left it (null: none yet on this socket) */
    this.state = null;
    /** whether `lastSeq` is the feed's own (set by the first start) */
    this.resumes = false;
    this.failures = 0;
    /** @type {WebSocket | null} */
    this.socket = null;
    /** @type {number | undefined} */
    this.retryTimer = undefined;
    /** @type {number | undefined} */
    this.pollTimer = undefined;
    this.stopped = true;
  }

  /**
   * Connect: the first time from `after` (the last seq the screen already shows, so entries after
   * it are delivered), later from the last entry the feed delivered.
   * @param {number} [after]
   */
  start(after = 0) {
    if (!this.resumes) this.lastSeq = after;
    this.resumes = true;
    this.stopped = false;
    this.connect();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.stopPolling();
    if (this.socket) this.socket.close(1000, "screen closed");
    this.socket = null;
  }

  connect() {
    if (this.stopped) return;
    showLink(this.failures ? "reconnecting" : "connecting");
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const socket = new WebSocket(`${scheme}//${location.host}/api/ws`);
    this.socket = socket;
    this.state = null; // the server sends the whole state before any changes to it
    socket.addEventListener("open", () => socket.send(JSON.stringify({ after: this.lastSeq })));
    socket.addEventListener("message", (ev) => this.receive(ev.data));
    socket.addEventListener("close", (ev) => this.closed(socket, ev.code));
  }

  /** @param {unknown} data */
  receive(data) {
    let msg;
    try {
      msg = JSON.parse(String(data));
    } catch {
      return; // not ours to show; the next state message puts the screen right
    }
    if (msg.type === "entry") {
      if (typeof msg.seq !== "number" || msg.seq <= this.lastSeq) return;
      this.lastSeq = msg.seq;
      this.handlers.onEntry(msg);
      if (msg.live && this.take(msg)) this.handlers.onState(this.state);
    } else if (msg.type === "state") {
      if (typeof msg.seq === "number") this.lastSeq = Math.max(this.lastSeq, msg.seq);
      // The socket works: forget the failures and stop any fallback polling.
      this.failures = 0;
      this.stopPolling();
      showLink("live");
      if (this.take(msg)) this.handlers.onState(this.state);
    }
  }

  /**
   * The state a message carries, whole or as changes to the one the feed has: whether it has one.
   * @param {{state?: any, changes?: Changes}} msg
   */
  take(msg) {
    if (msg.state) {
      this.state = msg.state;
      return true;
    }
    if (!msg.changes || !this.state) return false; // changes to nothing: the next whole state puts it right
    try {
      this.state = patched(this.state, msg.changes);
    } catch {
      // Changes that do not fit the state the feed has: start again from the whole state.
      this.state = null;
      this.socket?.close(4000, "reconnect for the whole state");
      return false;
    }
    return true;
  }

  /**
   * @param {WebSocket} socket
   * @param {number} code
   */
  closed(socket, code) {
    if (socket !== this.socket || this.stopped) return;
    this.socket = null;
    if (code === 4401) {
      this.stopPolling();
      showLink("signed-out");
      this.handlers.onSignedOut();
      return;
    }
    this.failures += 1;
    if (this.failures >= POLL_AFTER_FAILURES) this.startPolling();
    const delay = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** (this.failures - 1));
    showLink(this.pollTimer ? "polling" : "reconnecting");
    this.retryTimer = window.setTimeout(() => this.connect(), delay * (0.8 + Math.random() * 0.4));
  }

  startPolling() {
    if (this.pollTimer) return;
    const poll = async () => {
      try {
        // The polled state is drawn but lastSeq stays put: the socket, once back, delivers the
        // entries missed meanwhile so the event log has no gap.
        const state = await get("/api/state");
        if (this.pollTimer) this.handlers.onState(state);
      } catch {
        // Still unreachable: the link indicator already says so.
      }
    };
    poll();
    this.pollTimer = window.setInterval(poll, POLL_MS);
  }

  stopPolling() {
    clearInterval(this.pollTimer);
    this.pollTimer = undefined;
  }
}

/**
 * `state` with `changes` applied: a new document that shares what did not change (the screens keep
 * the state they drew last and compare with it; neither is changed). The server's
 * controller/api/delta.py makes the changes: a path names only keys and indexes already there.
 * @param {any} state
 * @param {Changes} changes
 * @returns {any}
 */
export function patched(state, changes) {
  for (const [path, value] of changes) state = path.length ? setIn(state, path, 0, value) : value;
  return state;
}

/**
 * @param {any} node
 * @param {(string | number)[]} path
 * @param {number} at
 * @param {any} value
 * @returns {any}
 */
function setIn(node, path, at, value) {
  const key = path[at];
  const has = Array.isArray(node)
    ? typeof key === "number" && key >= 0 && key < node.length
    : node !== null && typeof node === "object" && Object.prototype.hasOwnProperty.call(node, key);
  if (!has) throw new Error(`no ${key} at ${path.slice(0, at).join(".")}`);
  const copy = Array.isArray(node) ? node.slice() : { ...node };
  copy[key] = at === path.length - 1 ? value : setIn(node[key], path, at + 1, value);
  return copy;
}

/**
 * Show the link's state in the page's #connection indicator (text and data-status).
 * @param {LinkStatus} status
 */
function showLink(status) {
  const link = document.getElementById("connection");
  if (!link) return;
  link.dataset.status = status;
  link.textContent = LINK_TEXT[status];
}

/** Words for the link indicator. */
export const LINK_TEXT = /** @type {Record<LinkStatus, string>} */ ({
  connecting: "Connecting\u2026",
  live: "Live",
  reconnecting: "Reconnecting\u2026",
  polling: "No live link: checking every 3 s",
  "signed-out": "Signed out",
});
