/**
 * The dealer's sign-in at the start of a down (dealer screen): the dealer types their own id, one
 * on the list the supervisor keeps; the table journals it and every round opened from then on
 * records them as its dealer. The screen's session (the dealer token) is unchanged by it.
 *
 * GET /api/dealers says the list and who is signed in; POST /api/dealers/sign-in and sign-out.
 * While the supervisor keeps a list and nobody is signed in, the sign-in box opens by itself.
 */
import { get, post } from "./api.js";
import { $, attempt, field } from "./dom.js";

/** @type {{dealers: {id: string, name: string}[], on: {id: string, name: string, since: string} | null} | null} */
let roster = null;
let askedOnce = false;

const dialog = () => /** @type {HTMLDialogElement} */ ($("dealer-dialog"));

function show() {
  const on = roster?.on ?? null;
  $("dealer-on").textContent = on ? `Dealer ${on.id}${on.name ? ` \u00b7 ${on.name}` : ""}` : "No dealer signed in";
  $("dealer-on").dataset.dealer = on?.id ?? "";
  $("dealer-on").hidden = !roster?.dealers.length && !on; // a table without a list: nothing to say
  $("dealer-sign-in").textContent = on ? "Change" : "Sign in";
  $("dealer-sign-in").hidden = !roster?.dealers.length;
  $("dealer-sign-out").hidden = !on;
  if (roster?.dealers.length && !on && !askedOnce && !dialog().open) {
    askedOnce = true; // once a load: Cancel lets the screen be used without it
    open();
  }
}

function open() {
  $("dealer-error").textContent = "";
  field("dealer-code").value = "";
  if (!dialog().open) dialog().showModal();
  field("dealer-code").focus();
}

/** Read the list and who is signed in again (at login, and when the feed says they changed). */
export async function loadDealer() {
  try {
    roster = await get("/api/dealers");
    show();
  } catch {
    // Not a dealer's business to see why: the screen goes on without the sign-in.
  }
}

/** @param {any} entry a journal entry from the live feed */
export function dealerEntry(entry) {
  if (["dealer-in", "dealer-out", "dealer-list"].includes(entry.kind)) void loadDealer();
}

/** Wire the sign-in box once. */
export function wireDealerSignIn() {
  $("dealer-sign-in").addEventListener("click", open);
  $("dealer-cancel").addEventListener("click", () => dialog().close());
  $("dealer-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const code = field("dealer-code").value.trim();
    const refused = await attempt(post("/api/dealers/sign-in", { dealer: code }).then((doc) => (roster = doc)), $("dealer-error"));
    if (refused) return;
    dialog().close();
    show();
  });
  $("dealer-sign-out").addEventListener("click", async () => {
    const refused = await attempt(post("/api/dealers/sign-out", {}).then((doc) => (roster = doc)), $("dealer-error"));
    if (refused) return;
    dialog().close();
    show();
  });
}
