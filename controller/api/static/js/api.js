/**
 * The one way the screens talk to the table's HTTP API: JSON in and out, the session cookie
 * (HttpOnly, so this code never sees it), the `X-Tablectl: 1` header the server's CSRF guard
 * requires, and the server's error text passed through to the person unchanged.
 * A token is never stored: it lives in the login form until `login()` posts it.
 */

/** An API refusal: `status` (0 when the table does not answer) and the server's plain words. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} message
   * @param {number | null} [retryAfter] seconds, on 429
   * @param {{kind?: string, field?: string, seat?: number}} [where] what the refusal names
   */
  constructor(status, message, retryAfter = null, where = {}) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.retryAfter = retryAfter;
    /** the error's kind ("conflict", "invalid", ...), the body's field and the seat (or spot) it names */
    this.kind = where.kind ?? null;
    this.field = where.field ?? null;
    this.seat = typeof where.seat === "number" ? where.seat : null;
  }
}

/** @type {Array<() => void>} */
const authLostListeners = [];

/**
 * Call `listener` whenever the API answers 401 (the session has expired or was never made).
 * @param {() => void} listener
 */
export function onAuthLost(listener) {
  authLostListeners.push(listener);
}

/**
 * Call the API and return its JSON. Throws ApiError with the server's own error text.
 * @param {"GET" | "POST"} method
 * @param {string} path e.g. "/api/state"
 * @param {object} [body] sent as JSON (POSTs always send a body, `{}` by default)
 * @returns {Promise<any>}
 */
export async function api(method, path, body) {
  /** @type {Record<string, string>} */
  const headers = { Accept: "application/json", "X-Tablectl": "1" };
  /** @type {RequestInit} */
  const init = { method, headers, credentials: "same-origin", cache: "no-store" };
  if (method !== "GET") {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body ?? {});
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    throw new ApiError(0, "The table controller does not answer. Check the network cable, then try again.");
  }
  const text = await response.text();
  /** @type {any} */
  let doc = null;
  try {
    doc = text ? JSON.parse(text) : null;
  } catch {
    doc = null;
  }
  if (!response.ok) {
    const message = doc && typeof doc.error === "string" ? doc.error : `The table answered ${response.status} ${response.statusText}`;
    const retry = Number(response.headers.get("Retry-After"));
    if (response.status === 401 && path !== "/api/login") authLostListeners.forEach((l) => l());
    const where = doc && typeof doc === "object" ? doc : {};
    throw new ApiError(response.status, message, Number.isFinite(retry) && retry > 0 ? retry : null, where);
  }
  return doc;
}

/** @param {string} path */
export const get = (path) => api("GET", path);

/**
 * @param {string} path
 * @param {object} [body]
 */
export const post = (path, body) => api("POST", path, body);

/** @typedef {"dealer" | "supervisor" | "surveillance"} Role */

const ROLES = ["dealer", "supervisor", "surveillance"];

/**
 * The role of the current session, or null when not logged in.
 * @returns {Promise<Role | null>}
 */
export async function whoami() {
  return (await session()).role;
}

/**
 * The current session: its role, or null with the table's words for why this screen's session
 * is gone (expired, signed out, the table's tokens changed; "" when it never had one).
 * @returns {Promise<{role: Role | null, why: string}>}
 */
export async function session() {
  try {
    const doc = await api("GET", "/api/whoami");
    const role = doc && ROLES.includes(doc.role) ? doc.role : null;
    return { role, why: role === null && typeof doc?.why === "string" ? doc.why : "" };
  } catch (err) {
    if (err instanceof ApiError && (err.status === 401 || err.status === 403)) return { role: null, why: "" };
    throw err;
  }
}

/**
 * Post the token; the server answers with the role and sets the HttpOnly session cookie.
 * @param {string} token
 * @returns {Promise<Role>}
 */
export async function login(token) {
  const doc = await api("POST", "/api/login", { token });
  return doc.role;
}

export async function logout() {
  await api("POST", "/api/logout");
}

/**
 * Plain words for an error caught around an API call.
 * @param {unknown} err
 */
export function errorText(err) {
  if (err instanceof ApiError) {
    if (err.status === 429 && err.retryAfter) return `${err.message} (try again in ${err.retryAfter} s)`;
    return err.message;
  }
  return err instanceof Error ? err.message : String(err);
}
