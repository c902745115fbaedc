// Asking the holder, in the window: ask (which also turns "notify me when
// it's free" on), the holder's notice with Check in, Release and Reply, the
// reply's dialog, and what a click on the desktop's notification or the
// tray asks of the window. A request never releases anything: Release is
// the holder's own Cancel, on their click.
import { api, on, type Checkout, type Intent, type Request } from "./api";
import { notice, reload, render, replaceRow, run, select, setView, showError, state } from "./app";
import { cancelCheckout, checkIn } from "./actions";
import { askedNotice, charactersLeft, fileName, participantName } from "./format";
import { $, button, h } from "./h";
import { openFromOutside, showInbox } from "./views/inbox";

/** The longest message of a request or a reply (API.md). */
export const MAX_MESSAGE = 1000;

/** The requests to you on one check-out of yours, still waiting or answered. */
export function requestsOn(checkout: string): Request[] {
  return (state.overview?.requests ?? []).filter((r) => r.checkout_id === checkout && r.to === state.overview?.me);
}

/** Your own request on a file, if one stands. */
export function myRequestFor(artifact: string): Request | undefined {
  return (state.overview?.requests ?? []).find((r) => r.artifact_id === artifact && r.from === state.overview?.me);
}

/** Whether you will be told when the file is free: you asked for it, or asked to be told. */
export function waitingFor(artifact: string): boolean {
  return state.waiting.has(artifact) || myRequestFor(artifact) !== undefined;
}

/** A message field with its count of characters, at most MAX_MESSAGE. */
export function messageField(id: string, placeholder: string): { field: HTMLTextAreaElement; box: HTMLElement } {
  const field = h("textarea", { id, rows: "2", maxlength: String(MAX_MESSAGE), placeholder });
  const count = h("span", { class: "message-count muted", "aria-live": "polite" }, charactersLeft("", MAX_MESSAGE));
  field.addEventListener("input", () => (count.textContent = charactersLeft(field.value, MAX_MESSAGE)));
  return { field, box: h("div", { class: "message-field" }, field, count) };
}

/** Sends the request: the holder is told, and you will be told when the file is free. */
export async function askHolder(artifact: string, message: string) {
  const asked = await run(artifact, () => api.askHolder(artifact, message.trim() || null));
  if (asked) {
    state.waiting.add(artifact);
    const said = askedNotice(asked);
    notice(said.title, said.detail, "success");
  }
}

export async function withdraw(request: Request) {
  const done = await run(request.artifact_id, () => api.withdrawRequest(request.id));
  if (done) notice("Request withdrawn", `${participantName(request.to)} no longer sees it.`, "success");
}

/** Asks for a short answer in the window's own dialog, then sends it. */
export function replyTo(request: Request) {
  const dialog = replyDialog();
  const { field, box } = messageField("reply-message", "“20 more minutes”");
  const send = button("Send", () => {
    const message = field.value.trim();
    if (!message) return field.focus();
    dialog.close();
    void sendReply(request, message);
  }, "primary", { id: "reply-send" });
  dialog.replaceChildren(h("form", { method: "dialog", class: "reply-form" },
    h("h2", { id: "reply-title" }, `Answer ${participantName(request.from)} about ${fileName(request.path)}`),
    request.message ? h("p", { class: "muted" }, `“${request.message}”`) : null,
    h("label", { class: "field" }, h("span", {}, "Your answer"), box),
    h("div", { class: "actions" }, send, button("Back", () => dialog.close(), "ghost", { id: "reply-back" }))));
  field.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      send.click();
    }
  });
  dialog.showModal();
  field.focus();
}

function replyDialog(): HTMLDialogElement {
  const found = document.getElementById("reply") as HTMLDialogElement | null;
  if (found) return found;
  const dialog = h("dialog", { id: "reply", class: "settings", "aria-labelledby": "reply-title" });
  $("app").append(dialog);
  return dialog;
}

async function sendReply(request: Request, message: string) {
  const done = await run(request.artifact_id, () => api.replyRequest(request.id, message));
  if (done) notice(`Answer sent to ${participantName(request.from)}`, `“${message}”`, "success");
}

/** Your check-out a request is about, from the list (fetched again if it is not there yet). */
async function checkoutOf(request: Request): Promise<Checkout | undefined> {
  const find = () => state.overview?.checkouts.find((c) => c.id === request.checkout_id);
  if (!find()) await reload();
  const checkout = find();
  if (!checkout) notice(`${fileName(request.path)} is no longer yours`, "Its check-out has ended: there is nothing to release.", "info");
  return checkout;
}

/** Release: the holder's Cancel, their changes kept beside the file. */
export async function release(request: Request) {
  const checkout = await checkoutOf(request);
  if (checkout) await cancelCheckout(checkout);
}

export async function checkInFor(request: Request) {
  const checkout = await checkoutOf(request);
  if (checkout) await checkIn(checkout);
}

/** The three answers to a request, as buttons. */
export function requestButtons(request: Request, ids = false): HTMLButtonElement[] {
  const id = (name: string): Record<string, string> => (ids ? { "data-request-action": name, "data-request": request.id } : {});
  return [
    button("Check in", () => void checkInFor(request), "small primary", id("checkin")),
    button("Release", () => void release(request), "small", { ...id("release"), title: "Cancels your check-out; your changes are kept beside the file" }),
    button("Reply", () => replyTo(request), "small", id("reply")),
  ];
}

/** What a click outside the window asked of it. */
async function follow(intent: Intent | null) {
  if (!intent) return;
  if (intent.kind === "show_requests") setView("mine");
  else if (intent.kind === "show_inbox") showInbox();
  else if (intent.kind === "show_thread") await openFromOutside(intent.seq, intent.artifact, intent.thread);
  else if (intent.kind === "show_file") {
    setView("files");
    select(intent.artifact);
    replaceRow(await api.refreshRow(intent.artifact), false);
  } else if (intent.kind === "check_in") {
    await reload();
    const checkout = state.overview?.checkouts.find((c) => c.id === intent.checkout);
    if (checkout) await checkIn(checkout);
  } else {
    setView("mine");
    await reload();
    const request = state.overview?.requests.find((r) => r.id === intent.request);
    if (request) replyTo(request);
  }
}

async function takeIntent() {
  try {
    await follow(await api.takeIntent());
  } catch (error) {
    showError(error);
  }
}

export function setUpRequests() {
  void on("asked", (asked) => {
    notice(asked.title, asked.body, "info", requestButtons(asked.request, true));
    render();
  });
  void on("intent", () => void takeIntent());
  void takeIntent();
}
