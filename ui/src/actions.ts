// What a click does to a file: each starts from the user's click, runs
// through `run` (busy meanwhile, errors shown) and says what happened.
import { api, type Checkout, type FileRow, type Proposal, type Decision } from "./api";
import { notice, render, replaceRow, rowOf, run, scheduleReload, select, setView, showError, state } from "./app";
import { changeNotice, severalFiles, sharingNote } from "./changes";
import { checkinOutcome, checkinWarning, clock, decisionOutcome, fileName } from "./format";
import { cancelButton, moved, progressOf, saving, sending } from "./sending";
import { $, button, h } from "./h";

export async function checkOut(row: FileRow) {
  const note = ($("checkout-note") as HTMLInputElement | null)?.value.trim() || null;
  const hours = Number(($("checkout-hours") as HTMLSelectElement | null)?.value ?? "0");
  const done = await run(row.artifact.id, () => api.checkOut(row.artifact.id, note, hours > 0 ? hours * 3600 : null));
  if (done) {
    const until = clock(done.checkout.expires_at, Date.now());
    const kept = done.backup ? ` Your earlier changes are kept as “${fileName(done.backup)}”.` : "";
    notice(`${fileName(row.artifact.path)} is yours until ${until}`, `It is writable now.${kept}`, "success");
  }
}

/** Checks out a file that was just told free (from its notice), for the
 *  default time, and shows it. */
export async function checkOutFree(artifact: string) {
  setView("files");
  select(artifact);
  const done = await run(artifact, () => api.checkOut(artifact, null, null));
  if (done) {
    notice(`${fileName(done.checkout.path)} is yours until ${clock(done.checkout.expires_at, Date.now())}`, "It is writable now.", "success");
  }
}

export async function extend(checkout: Checkout) {
  const done = await run(checkout.artifact_id, () => api.extend(checkout.id, null));
  if (done) notice(`${fileName(done.path)} extended`, `Your lease now ends at ${clock(done.expires_at, Date.now())}.`, "success");
}

/** Extends check-out `id`, whether or not the window has read it yet. */
export async function extendById(id: string) {
  const checkout = state.overview?.checkouts.find((c) => c.id === id);
  if (checkout) return extend(checkout);
  try {
    const done = await api.extend(id, null);
    notice(`${fileName(done.path)} extended`, `Your lease now ends at ${clock(done.expires_at, Date.now())}.`, "success");
  } catch (error) {
    showError(error);
  } finally {
    scheduleReload();
  }
}

/** The check-in dialog: a description (`draft` to start with), what else
 *  the form holds (`parts`), and a confirm button that `send`s the
 *  description (null when blank). Answers the confirm button. */
function describeDialog(title: string, draft: string, confirmLabel: string, parts: Node[], send: (message: string | null) => void): HTMLButtonElement {
  const dialog = $("checkin") as HTMLDialogElement;
  const message = h("textarea", { id: "checkin-message", rows: "3", maxlength: "4000", placeholder: "What changed, for the history" });
  message.value = draft;
  const confirm = button(confirmLabel, () => {
    dialog.close();
    send(message.value.trim() || null);
  }, "primary", { id: "checkin-confirm" });
  dialog.replaceChildren(h("form", { method: "dialog", class: "checkin-form" },
    h("h2", { id: "checkin-title" }, title),
    ...parts,
    h("label", { class: "field" }, h("span", {}, "Description"), message),
    h("div", { class: "actions" }, confirm, button("Back", () => dialog.close(), "ghost", { id: "checkin-back" }))));
  message.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      confirm.click();
    }
  });
  dialog.showModal();
  message.focus();
  message.select();
  return confirm;
}

/** Asks what changed (prefilled with the check-out's draft: "Restored
 *  version N", else its note), then checks in with that description. Your
 *  other check-outs with the same note are offered, unticked: the designer
 *  decides whether they go in with it, as one change. */
export async function checkIn(checkout: Checkout) {
  const draft = await api.checkinDraft(checkout.id).catch(() => checkout.note ?? "");
  const others = sharingNote(checkout, state.overview?.checkouts ?? []);
  const boxes = others.map((c) => h("input", { type: "checkbox", "data-with": c.id, id: `with-${c.id}` }));
  const offer = others.length ? [h("fieldset", { class: "with-others", id: "checkin-with-others" },
    h("legend", {}, `Also check in, as one change (same note “${checkout.note}”):`),
    ...others.map((c, i) => h("label", {}, boxes[i], ` ${fileName(c.path)}`)))] : [];
  const artifact = rowOf(checkout.artifact_id)?.artifact;
  const warning = artifact ? checkinWarning(checkout, artifact, state.overview?.me) : null;
  const warned = warning ? [h("p", { class: "warning", role: "status", id: "checkin-proposal" }, warning)] : [];
  const confirm = describeDialog(`Check in ${fileName(checkout.path)}`, draft, warning ? "Check in as a proposal" : "Check in", [...warned, ...offer], (message) => {
    const along = others.filter((_, i) => boxes[i].checked);
    if (along.length) void uploadChange([checkout, ...along], message);
    else void upload(checkout, message);
  });
  for (const box of boxes) {
    box.addEventListener("change", () => {
      const ticked = boxes.filter((b) => b.checked).length;
      confirm.textContent = ticked ? `Check in ${severalFiles(ticked + 1)}` : "Check in";
    });
  }
}

async function upload(checkout: Checkout, message: string | null) {
  const row = rowOf(checkout.artifact_id);
  const upload = `${checkout.id}-${Date.now()}`;
  state.uploads.set(checkout.id, sending(upload));
  render();
  const done = await run(checkout.artifact_id, () =>
    api.checkIn(checkout.id, upload, message, (told) => {
      const progress = state.uploads.get(checkout.id);
      if (progress) {
        moved(progress, told);
        updateProgress(checkout.id);
      }
    }),
  );
  const tooLate = state.uploads.get(checkout.id)?.cancelAsked ?? false;
  state.uploads.delete(checkout.id);
  if (done) {
    const fresh = await api.refreshRow(checkout.artifact_id).catch(() => null);
    const artifact = fresh?.artifact ?? row?.artifact;
    const proposal = done.checkout.result?.outcome === "proposal";
    if (done.checkout.result?.outcome === "proposal" && done.backup) rememberBackup(done.checkout.result.proposal.id, done.backup);
    const title = `${proposal ? "Kept as a proposal" : "Checked in"}${tooLate ? ": too late to cancel" : ""}`;
    notice(title, checkinOutcome(done, artifact, Date.now()), proposal ? "info" : "success",
      proposal ? [button("Show proposals", () => setView("proposals"), "small")] : []);
  }
  render();
}

export function updateProgress(key: string) {
  const progress = state.uploads.get(key);
  for (const bar of document.querySelectorAll<HTMLElement>(`[data-upload="${key}"]`)) {
    const { label, width } = progressOf(progress);
    bar.querySelector<HTMLElement>(".label")!.textContent = label;
    bar.querySelector<HTMLElement>(".bar")!.style.width = width;
  }
  drawCancel(key);
}

/** The Cancel buttons of upload `key` as they stand: disabled once the
 *  server is saving the file (nothing can stop it then) or once pressed. */
export function drawCancel(key: string) {
  const { label, disabled } = cancelButton(state.uploads.get(key));
  for (const cancel of document.querySelectorAll<HTMLButtonElement>(`[data-cancel-upload="${key}"]`)) {
    cancel.textContent = label;
    cancel.disabled = disabled;
  }
}

/** Stops upload `key` (a check-out's id, or CHANGE_UPLOAD) unless every byte is sent. */
export async function cancelUploadOf(key: string) {
  const progress = state.uploads.get(key);
  if (!progress || saving(progress)) return;
  progress.cancelAsked = true;
  drawCancel(key);
  await api.cancelUpload(progress.upload);
}

export async function cancelUpload(checkout: Checkout) {
  await cancelUploadOf(checkout.id);
}

export async function cancelCheckout(checkout: Checkout) {
  const done = await run(checkout.artifact_id, () => api.cancelCheckout(checkout.id));
  if (done) {
    const kept = done.backup ? `Your changes are kept as “${fileName(done.backup)}”.` : "Nothing had changed.";
    notice(`${fileName(checkout.path)} is back to version ${done.checkout.version}`, kept, "success");
  }
}

export async function updateFile(row: FileRow) {
  const backup = await run(row.artifact.id, () => api.updateFile(row.artifact.id));
  if (backup !== undefined) {
    notice(`${fileName(row.artifact.path)} is up to date`, backup ? `Your changes are kept as “${fileName(backup)}”.` : "", "success");
  }
}

export async function getCopy(row: FileRow, checkout: Checkout) {
  const done = await run(row.artifact.id, () => api.getCopy(checkout.id));
  if (done) {
    const kept = done.backup ? ` Your earlier changes are kept as “${fileName(done.backup)}”.` : "";
    notice(`${fileName(row.artifact.path)} is here to edit`, `Version ${done.checkout.version}, writable. Your lease is as it was.${kept}`, "success");
  }
}

export async function notifyWhenFree(artifact: string, on: boolean) {
  await api.notifyWhenFree(artifact, on);
  if (on) state.waiting.add(artifact);
  else state.waiting.delete(artifact);
  if (on) notice("You will be told", "A notification comes as soon as the file is free.");
  render();
}

export async function decide(proposal: Proposal, decision: Decision) {
  const done = await run(proposal.artifact_id, () => api.decide(proposal.id, decision));
  // A rebuild makes a new proposal of the same bytes: the backup goes with it.
  if (done && decision === "rebuild") moveBackup(proposal.id, done.id);
  if (done && decision === "accept") backupNoLongerNeeded(proposal.id);
  if (done) {
    // The head as it is after the decision: an accept made a new version.
    const fresh = await api.refreshRow(proposal.artifact_id).catch(() => null);
    if (fresh) replaceRow(fresh, false);
    const row = fresh ?? rowOf(proposal.artifact_id);
    notice(decisionOutcome(decision, row ? fileName(row.artifact.path) : "", row?.artifact.head.version), "", "success");
  }
}

// ----- several files at once

/** The key of a change's upload in `state.uploads`: one bar for the set. */
export const CHANGE_UPLOAD = "change";

/** Runs `action` with every file of `ids` busy meanwhile; errors shown. */
async function onAll<T>(ids: string[], action: () => Promise<T>): Promise<T | undefined> {
  for (const id of ids) state.busy.add(id);
  render();
  try {
    return await action();
  } catch (error) {
    showError(error);
    return undefined;
  } finally {
    for (const id of ids) state.busy.delete(id);
    scheduleReload();
  }
}

export async function checkOutSeveral(ids: string[]) {
  const note = $<HTMLInputElement>("several-note")?.value.trim() || null;
  const hours = Number($<HTMLSelectElement>("several-hours")?.value ?? "0");
  const done = await onAll(ids, () => api.checkOutFiles(ids, note, hours > 0 ? hours * 3600 : null));
  if (done) notice(`${severalFiles(done.length)} are yours`, "They are writable now, each until its lease ends.", "success");
}

export async function cancelSeveral(mine: Checkout[]) {
  const ids = mine.map((c) => c.artifact_id);
  const done = await onAll(ids, async () => {
    for (const c of mine) await api.cancelCheckout(c.id);
    return true;
  });
  if (done) notice(`${mine.length} check-outs cancelled`, "Your changes, if any, are kept as backups beside the files.", "success");
}

/** Asks for one description of the whole change, then checks the files in. */
export function checkInSeveral(mine: Checkout[]) {
  const draft = mine.find((c) => c.note)?.note ?? "";
  const files = h("ul", { class: "several-files" }, ...mine.map((c) => h("li", {}, fileName(c.path))));
  describeDialog(`Check in ${severalFiles(mine.length)} as one change`, draft, `Check in ${severalFiles(mine.length)}`, [files],
    (message) => void uploadChange(mine, message));
}

export async function uploadChange(mine: Checkout[], message: string | null) {
  const upload = `change-${Date.now()}`;
  state.uploads.set(CHANGE_UPLOAD, sending(upload));
  render();
  const done = await onAll(mine.map((c) => c.artifact_id), () =>
    api.checkInFiles(mine.map((c) => c.id), upload, message, (told) => {
      const progress = state.uploads.get(CHANGE_UPLOAD);
      if (progress) {
        moved(progress, told);
        updateProgress(CHANGE_UPLOAD);
      }
    }),
  );
  const tooLate = state.uploads.get(CHANGE_UPLOAD)?.cancelAsked ?? false;
  state.uploads.delete(CHANGE_UPLOAD);
  if (done) {
    const said = changeNotice(done.change);
    notice(`${said.title}${tooLate ? ": too late to cancel" : ""}`, said.body, said.proposal ? "info" : "success",
      said.proposal ? [button("Show proposals", () => setView("proposals"), "small")] : []);
  }
  render();
}

// ----- a proposal's backup, once the proposal is accepted

const BACKUPS_KEY = "leasedesk.proposal-backups";

function backups(): Record<string, string> {
  try {
    return JSON.parse(localStorage.getItem(BACKUPS_KEY) ?? "{}") as Record<string, string>;
  } catch {
    return {};
  }
}

/** The "(my changes …)" copy a late check-in left beside the file, by its proposal. */
function rememberBackup(proposal: string, backup: string) {
  localStorage.setItem(BACKUPS_KEY, JSON.stringify({ ...backups(), [proposal]: backup }));
}

function moveBackup(from: string, to: string) {
  const all = backups();
  if (!all[from]) return;
  all[to] = all[from];
  delete all[from];
  localStorage.setItem(BACKUPS_KEY, JSON.stringify(all));
}

/** A proposal of yours accepted (by anyone): its backup holds nothing the
 *  head lacks now, so the window says it can go, and where it is. */
export function backupNoLongerNeeded(proposal: string) {
  const all = backups();
  const backup = all[proposal];
  if (!backup) return;
  delete all[proposal];
  localStorage.setItem(BACKUPS_KEY, JSON.stringify(all));
  notice(`Your proposal was accepted: “${fileName(backup)}” can go`, "It holds the same changes as the head now. Delete it when you like.", "info",
    [button("Show in folder", () => void api.reveal(backup).catch((e) => showError(e)), "small", { "data-tidy": proposal })]);
}
