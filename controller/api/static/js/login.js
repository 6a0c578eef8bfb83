/**
 * The sign-in both screens share: ask the server who we are; if nobody (or a dealer on the
 * supervisor screen), show the login form until a good token is posted; sign in again whenever
 * the session is lost, and after the Log out button. The token is read from the password field,
 * posted, and the field is emptied at once: it is never kept anywhere else.
 *
 * Markup (in each page): #login (a <dialog>) holding #login-form, #token, #login-error; #logout.
 */
import { errorText, login, logout, onAuthLost, session } from "./api.js";

/** @typedef {import("./api.js").Role} Role */

// The form never submits itself (it is method="dialog", and this stops even that): a token typed
// before a handler is listening must not end up in a URL or a history entry.
document.getElementById("login-form")?.addEventListener("submit", (ev) => ev.preventDefault());

/**
 * @param {HTMLElement} el
 * @returns {HTMLDialogElement}
 */
const asDialog = (el) => /** @type {HTMLDialogElement} */ (el);

/**
 * @typedef {object} SignInHow
 * @property {Role[]} roles roles this screen accepts
 * @property {string} needText what to say when the token's role is not enough
 * @property {() => void} onSignedOut stop what needs a session (the live feed)
 * @property {(role: Role) => unknown} onSignedIn go live: called after every login, with the role
 */

/**
 * Keep this screen signed in: log in now, again whenever the API answers 401 or the live feed is
 * refused, and after the Log out button. However many things notice the session is gone at
 * once, the person logs in once.
 * @param {SignInHow} how
 * @returns {() => Promise<void>} sign in (the one login under way, if there is one)
 */
export function keepSignedIn(how) {
  /** @type {Promise<void> | null} */
  let signingIn = null;
  /** @param {string} [why] what the login box says first (the table's words when it has some) */
  const signIn = (why = "") => {
    signingIn ??= (async () => {
      how.onSignedOut();
      const role = await requireLogin(how.roles, how.needText, why);
      await how.onSignedIn(role);
    })().finally(() => (signingIn = null));
    return signingIn;
  };
  must("logout").addEventListener("click", async () => {
    how.onSignedOut();
    await logout().catch(() => undefined);
    void signIn("You signed out of this screen.");
  });
  onAuthLost(() => void signIn());
  return signIn;
}

/**
 * Resolve with the session's role once a person with one of `roles` is logged in. A screen whose
 * session is gone says why (the table's words: expired, signed out, its tokens changed).
 * @param {Role[]} roles roles this screen accepts
 * @param {string} needText what to say when the token's role is not enough
 * @param {string} [why] what to say when the table gives no reason
 * @returns {Promise<Role>}
 */
export async function requireLogin(roles, needText, why = "") {
  const current = await session().catch(() => ({ role: null, why: "" }));
  if (current.role && roles.includes(current.role)) return current.role;
  return askForToken(roles, needText, current.role ? needText : current.why || why);
}

/**
 * Show the login form and resolve with the role once a good token is posted.
 * @param {Role[]} roles
 * @param {string} needText
 * @param {string} [firstMessage]
 * @returns {Promise<Role>}
 */
export function askForToken(roles, needText, firstMessage = "") {
  const dialog = asDialog(must("login"));
  const form = /** @type {HTMLFormElement} */ (must("login-form"));
  const input = /** @type {HTMLInputElement} */ (must("token"));
  const error = must("login-error");
  error.textContent = firstMessage;
  if (!dialog.open) dialog.showModal();
  input.focus();
  return new Promise((resolve) => {
    /** @param {SubmitEvent} ev */
    const submit = async (ev) => {
      ev.preventDefault();
      const token = input.value.trim();
      input.value = "";
      if (!token) {
        error.textContent = "Type the token first.";
        input.focus();
        return;
      }
      error.textContent = "Checking\u2026";
      try {
        const role = await login(token);
        if (!roles.includes(role)) {
          await logout().catch(() => undefined);
          error.textContent = needText;
          input.focus();
          return;
        }
        error.textContent = "";
        form.removeEventListener("submit", submit);
        dialog.close();
        resolve(role);
      } catch (err) {
        error.textContent = errorText(err);
        input.focus();
      }
    };
    form.addEventListener("submit", submit);
    // The gate cannot be escaped: without a session there is nothing this screen may do.
    dialog.addEventListener("cancel", (ev) => ev.preventDefault());
  });
}

/**
 * @param {string} id
 * @returns {HTMLElement}
 */
function must(id) {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the page has no #${id}`);
  return el;
}
