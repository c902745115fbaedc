// A file's detail beside the list: its head, holder and local state, what
// you can do with it, a large preview (of your local copy when you changed
// it, saying so) and its history.
import { revealFailed } from "../error-words";
import { api, previewUrl, type FileRow, type Lease } from "../api";
import { notice, onRender, render, rowOf, state } from "../app";
import { cancelCheckout, cancelUpload, checkIn, checkOut, extend, getCopy, notifyWhenFree, updateFile } from "../actions";
import { cancelButton, progressOf } from "../sending";
import { askable, askLabel, bytes, checkedOutOn, clock, fileName, fidelityNote, getAction, gitLockWords, heldUntil, holderNote, isGitLock, leaseChoices, leaseLost, localStateLabels, person, replyLine, requestLine, unplaceableAdvice, viewOnly } from "../format";
import { askHolder, messageField, myRequestFor, withdraw } from "../requests";
import { $, button, h } from "../h";
import { inOrder } from "../selection";
import { openCompare } from "./compare";
import { countdown, extensionOf, holderCell, lazyImage, moveSelection } from "./files";
import { historySection } from "./history";
import { detailReview } from "./review";
import { severalPanel } from "./several";

const PREVIEW_SIZE = 640;
const COMPARE_SIZE = 4096;

function detailPanel(row: FileRow, now: number): HTMLElement {
  const artifact = row.artifact;
  const lease = artifact.lease;
  const busy = state.busy.has(artifact.id);
  const upload = row.mine ? state.uploads.get(row.mine.id) : undefined;
  const me = state.overview?.me;
  const localPath = row.local_path;
  const lost = leaseLost(row.mine, lease);
  const onDisk = localPath && row.local !== "not_local" && row.local !== "missing" && row.local !== "unplaceable";
  const parts: (Node | null)[] = [
    // Shown on narrow windows, where the detail takes the list's place.
    button("← All files", closeDetail, "ghost small back", { id: "detail-back", "data-while-busy": "" }),
    h("h2", { id: "detail-name" }, fileName(artifact.path)),
    h("p", { class: "muted path" }, artifact.path),
    h("dl", {},
      h("dt", {}, "Head"), h("dd", { id: "detail-head" }, `Version ${artifact.head.version} by ${person(artifact.head.author, me)}, ${clock(artifact.head.committed_at, now)} · ${bytes(artifact.head.size)}`),
      h("dt", {}, "On this computer"), h("dd", { id: "detail-local" }, h("span", { class: `local ${row.local}` }, localStateLabels[row.local]),
        // The copy's own size, when it is here (a modified copy's may not be the head's).
        row.local_size != null ? h("span", { class: "local-size" }, ` · ${bytes(row.local_size)}`) : null),
      onDisk ? h("dt", {}, "Where") : null,
      onDisk ? h("dd", { class: "local-path" }, h("code", { id: "detail-local-path" }, localPath),
        button("Copy path", () => void copyPath(localPath), "ghost small", { id: "action-copy-path", "data-while-busy": "" })) : null,
      h("dt", {}, "Holder"), h("dd", { id: "detail-holder" }, lease || lost ? holderCell(row, now) : "Nobody: the file is free"),
      // After your lease ended, whoever holds the file now, by name.
      lease && lost ? h("dt", {}, "Held now by") : null,
      lease && lost ? h("dd", { id: "detail-held-now" }, heldNow(lease, me, now)) : null,
      lease && !lost ? h("dt", {}, "Until") : null,
      lease && !lost ? h("dd", {}, `${clock(lease.expires_at, now)} (`, countdown(lease.expires_at, now), " left)") : null,
    ),
  ];
  const actions = h("div", { class: "actions" });
  const problem = state.problem.get(artifact.id);
  if (row.local === "unplaceable") {
    // Never written to disk: no check-out, download or reveal until renamed.
    parts.push(h("p", { class: "warning", role: "status", id: "unplaceable" }, unplaceableAdvice(artifact.path)));
  } else if (row.mine) {
    const checkout = row.mine;
    if (upload) {
      // Drawn as far as it has gone: a redraw mid-upload never sends the bar back to nothing.
      const { label, width } = progressOf(upload);
      parts.push(h("div", { class: "progress", role: "progressbar", "aria-label": "Uploading", "data-upload": checkout.id },
        h("span", { class: "bar", style: `width: ${width};` }), h("span", { class: "label" }, label)));
      const cancel = cancelButton(upload);
      const stop = button(cancel.label, () => void cancelUpload(checkout), "danger", { id: "action-cancel-upload", "data-while-busy": "", "data-cancel-upload": checkout.id });
      stop.disabled = cancel.disabled;
      actions.append(stop);
    } else {
      actions.append(
        // Made on another device, its copy not got here (or no copy here):
        // a Check in here could only fail. Download to edit (below) can.
        ...(row.elsewhere ? [] : [button("Check in", () => void checkIn(checkout), "primary", { id: "action-checkin" })]),
        // An ended lease cannot be extended: checking out again takes a new one.
        ...(lost ? [] : [button("Extend", () => void extend(checkout), "", { id: "action-extend" })]),
        button("Cancel check-out", () => void cancelCheckout(checkout), "ghost", { id: "action-cancel", title: "Releases the file; your changes are kept as a backup" }),
      );
    }
    const on = row.elsewhere ? checkedOutOn(checkout) : null;
    if (on) parts.push(h("p", { class: "elsewhere", role: "status", id: "detail-elsewhere" }, h("strong", {}, on)));
    if (checkout.note) parts.push(h("p", { class: "note-line" }, `Your note: “${checkout.note}”`));
  } else if (lease) {
    // "bob has it until 17:00", or "Locked from Git by sam until Fri 17:00".
    const note = holderNote(lease);
    parts.push(h("div", { class: "busy", role: "status" },
      h("strong", {}, heldUntil(lease, me, now)),
      note ? h("p", {}, `“${note}”`) : null));
    // No Check out while someone holds it: what can be done instead.
    const asked = myRequestFor(artifact.id);
    const waiting = state.waiting.has(artifact.id) || asked !== undefined;
    actions.append(
      button(waiting ? "You will be told when it's free" : "Notify me when it's free", () => void notifyWhenFree(artifact.id, !waiting), waiting ? "ghost" : "primary", { id: "action-notify", "aria-pressed": String(waiting) }),
    );
    // While your request stands it is what you are told by; it ends with their check-out.
    if (asked) actions.querySelector<HTMLButtonElement>("#action-notify")!.disabled = true;
    if (askable(lease, me)) parts.push(askSection(artifact.id, lease.participant, now));
  } else if (artifact.access === "read") {
    parts.push(h("p", { class: "hint", role: "status", id: "view-only" }, viewOnly(artifact.path)));
  } else {
    parts.push(h("div", { class: "checkout-form" },
      h("label", {}, "Note for others ", h("input", { id: "checkout-note", type: "text", placeholder: "What you are doing (optional)", maxlength: "200" })),
      h("label", {}, "For ", (() => {
        const select = h("select", { id: "checkout-hours" });
        for (const [value, label] of leaseChoices(state.overview?.default_checkout_seconds ?? 8 * 3600)) {
          select.append(h("option", { value }, label));
        }
        return select;
      })())));
    actions.append(button("Check out", () => void checkOut(row), "primary", { id: "action-checkout" }));
  }
  const get = getAction(row.local, row.mine !== null, row.elsewhere, row.mine?.device?.name ?? null);
  if (get?.mine && row.mine) {
    const checkout = row.mine;
    if (get.why) parts.push(h("p", { class: "hint", role: "status" }, get.why));
    actions.prepend(button(get.label, () => void getCopy(row, checkout), "primary", { id: "action-get-copy" }));
  } else if (get) {
    actions.append(button(get.label, () => void updateFile(row), "ghost", { id: "action-update" }));
  }
  if (onDisk) {
    actions.append(button("Reveal in folder", () => void reveal(localPath), "ghost", { id: "action-reveal", "data-while-busy": "" }));
  }
  if (row.local === "modified") {
    actions.append(button("Compare with the head", () => compareLocal(row), "ghost", { id: "action-compare-local" }));
  }
  if (row.local === "modified" && !row.mine) {
    parts.push(h("p", { class: "warning" }, "You changed this file without checking it out. Check it out to keep your changes safe."));
  }
  if (lost) {
    parts.push(h("p", { class: "warning", role: "status" }, "Your lease has ended: nobody can lose your work, but the file is no longer reserved for you. Check in to keep your changes (as a proposal if someone else saved a version meanwhile), or cancel to put the head back and keep a backup."));
  } else if (problem?.code === "checkout_closed") {
    parts.push(h("p", { class: "warning" }, "Your lease ended: the file is read-only for you now. Your copy is kept."));
  }
  if (busy) holdWhileBusy(actions);
  parts.push(actions);
  return h("div", { class: "detail-main" }, ...parts);
}

/** Who holds the file since your lease ended: "bob, until 17:00", or a Git
 *  lock's "Locked from Git by sam until Fri 17:00". */
function heldNow(lease: Lease, me: string | null | undefined, now: number): string {
  return isGitLock(lease) ? gitLockWords(lease, me, now) : `${person(lease.participant, me)}, until ${clock(lease.expires_at, now)}`;
}

/** Whose request the open form is for (the file's id), if one is open. */
let askingFor: string | null = null;

/** Asking the holder: the form (message, Send), or your request as it stands with the holder's answer. */
function askSection(artifact: string, holder: string, now: number): HTMLElement {
  const me = state.overview?.me;
  const asked = myRequestFor(artifact);
  if (asked) {
    const reply = replyLine(asked, me, now);
    return h("div", { class: "asked", id: "asked", role: "status" },
      h("p", { id: "asked-line" }, requestLine(asked, me, now)),
      reply ? h("p", { class: "reply", id: "asked-reply" }, reply) : h("p", { class: "muted" }, `No answer from ${person(holder, me)} yet.`),
      h("div", { class: "actions" }, button("Withdraw the request", () => void withdraw(asked), "ghost small", { id: "action-withdraw" })));
  }
  if (askingFor !== artifact) {
    return h("div", { class: "ask" }, button(askLabel(holder), () => { askingFor = artifact; render(); }, "", { id: "action-ask" }));
  }
  const { box } = messageField("ask-message", "What you need it for (optional)");
  const send = () => {
    const message = ($("ask-message") as HTMLTextAreaElement | null)?.value ?? "";
    askingFor = null;
    void askHolder(artifact, message);
  };
  return h("div", { class: "ask open" },
    h("label", { class: "field" }, h("span", {}, askLabel(holder).replace("…", "")), box),
    h("div", { class: "actions" },
      button("Send request", send, "primary", { id: "ask-send" }),
      button("Back", () => { askingFor = null; render(); }, "ghost", { id: "ask-back" })));
}

/** Back to the list, on a narrow window: the file stays chosen, its row in sight. */
function closeDetail() {
  state.detailOpen = false;
  render();
  $("file-list").focus();
  moveSelection(0);
}

/** Puts a path on the clipboard, saying so (or saying where it is, when the
 *  clipboard refuses). */
export async function copyPath(path: string) {
  try {
    await navigator.clipboard.writeText(path);
    notice("Path copied", path, "success");
  } catch {
    // Some systems give a web view no clipboard: the path is shown to copy by hand.
    notice("The path could not be copied", `Select it and copy it: ${path}`, "error");
  }
}

/** Shows the file in the file manager; when none answers, says so in words, with the path. */
export async function reveal(path: string) {
  try {
    await api.reveal(path);
  } catch {
    const said = revealFailed(path);
    notice(said.title, said.detail, "error", [button("Copy path", () => void copyPath(path), "small")]);
  }
}

/** When this window opened: the stamp of a copy not seen changed since. */
const OPENED = Date.now();

function localStamp(row: FileRow): number {
  return state.seen.get(row.artifact.id) ?? OPENED;
}

function compareLocal(row: FileRow) {
  const artifact = row.artifact;
  openCompare(`${fileName(artifact.path)}: your copy and the head`,
    { label: `Version ${artifact.head.version} (head)`, src: previewUrl({ artifact: artifact.id, version: artifact.head.version }, COMPARE_SIZE), file: { digest: artifact.head.digest, size: artifact.head.size },
      review: { artifact: artifact.id, of: { version: artifact.head.version } } },
    // Modified: other bytes than the head's, whatever its pixels show.
    { label: "Your copy (modified)", src: previewUrl({ local: artifact.id, stamp: localStamp(row) }, COMPARE_SIZE), file: { digest: null, size: null } });
}

/** The large preview: of the local copy when it is modified (what a check-in
 *  would send), else of the head. Rebuilt only when what it shows changes. */
function previewFigure(row: FileRow): HTMLElement {
  const artifact = row.artifact;
  const local = row.local === "modified";
  const src = local
    ? previewUrl({ local: artifact.id, stamp: localStamp(row) }, PREVIEW_SIZE)
    : previewUrl({ artifact: artifact.id, version: artifact.head.version }, PREVIEW_SIZE);
  const caption = local ? "Your copy on this computer: modified, not checked in" : `Version ${artifact.head.version}`;
  const image = lazyImage(src, caption, extensionOf(artifact.path), null);
  image.classList.add("large");
  const figure = h("figure", { class: `preview${local ? " local" : ""}`, "data-src": src, id: "detail-preview" }, image, h("figcaption", {}, caption));
  void sayIfApproximate(figure, src);
  return figure;
}

/** A preview that is not the document drawn says so under it: a Photoshop
 *  document composited without what Leasedesk does not render (adjustments,
 *  effects), or the thumbnail an application saved ("preview saved by
 *  Illustrator, 256 px"). */
async function sayIfApproximate(figure: HTMLElement, src: string) {
  try {
    const answer = await fetch(src);
    const note = fidelityNote(answer.headers.get("Leasedesk-Preview"));
    if (note.words) {
      figure.append(h("p", { class: "approximate", id: "preview-approximate" }, note.words));
    }
    figure.dataset.fidelity = note.fidelity;
  } catch {
    // No preview: the picture says so itself.
  }
}

/** While an action on a file runs no other may start; buttons marked
 *  `data-while-busy` (cancel the upload, show the file) stay live. */
export function holdWhileBusy(actions: HTMLElement) {
  actions.querySelectorAll<HTMLButtonElement>("button:not([data-while-busy])").forEach((b) => (b.disabled = true));
}

function renderDetail(now: number) {
  const panel = $("detail");
  const row = state.selected ? rowOf(state.selected) : undefined;
  panel.hidden = !row || state.view !== "files";
  document.body.dataset.detail = !panel.hidden && state.detailOpen ? "open" : "closed";
  if (!row || state.view !== "files") return;
  const chosen = chosenRows();
  if (chosen.length > 1) return renderSeveral(panel, chosen, now);
  const focused = document.activeElement?.id;
  const typed = ($("checkout-note") as HTMLInputElement | null)?.value;
  const asking = ($("ask-message") as HTMLTextAreaElement | null)?.value;
  // Each part is replaced only when it changed: a click must not land on a
  // panel swapped out from under it by a reload, nor an image load again.
  // Back from several files to one: the one's panel is drawn anew.
  panel.querySelector(".detail-main.several")?.remove();
  const fresh = detailPanel(row, now);
  const main = panel.querySelector(".detail-main");
  const another = panel.dataset.id !== row.artifact.id;
  if (main?.outerHTML !== fresh.outerHTML || another) {
    if (main) main.replaceWith(fresh);
    else panel.prepend(fresh);
    const note = $("checkout-note") as HTMLInputElement | null;
    if (note && typed) note.value = typed;
    const message = $("ask-message") as HTMLTextAreaElement | null;
    if (message && asking) {
      message.value = asking;
      message.dispatchEvent(new Event("input"));
    }
    if (focused && panel.querySelector(`#${focused}`)) $(focused).focus();
  }
  const figure = previewFigure(row);
  const old = panel.querySelector<HTMLElement>("#detail-preview");
  if (old?.dataset.src !== figure.dataset.src) {
    if (old) old.replaceWith(figure);
    else fresh.after(figure);
  }
  // Review under the picture, its pins over it.
  const shownFigure = panel.querySelector<HTMLElement>("#detail-preview")!;
  const review = detailReview(row.artifact.id, row.artifact.head.version, shownFigure);
  if (review.previousElementSibling !== shownFigure) {
    panel.querySelector("#detail-review")?.remove();
    shownFigure.after(review);
  }
  const history = historySection(row);
  if (history.parentNode !== panel) {
    panel.querySelector("#history")?.remove();
    panel.append(history);
  }
  // Another file's detail starts at its top, its name in sight.
  if (another) panel.scrollTop = 0;
  panel.dataset.id = row.artifact.id;
}

/** The chosen files that are shown, in list order. */
function chosenRows(): FileRow[] {
  if (state.several.chosen.size < 2) return [];
  return inOrder(state.several, state.list.order()).flatMap((id) => rowOf(id) ?? []);
}

/** Several files chosen: what they allow together, in the detail's place. */
function renderSeveral(panel: HTMLElement, rows: FileRow[], now: number) {
  const focused = document.activeElement?.id;
  const typed = ($("several-note") as HTMLInputElement | null)?.value;
  const fresh = severalPanel(rows, now);
  const main = panel.querySelector(".detail-main");
  if (main?.outerHTML === fresh.outerHTML) return;
  panel.replaceChildren(fresh);
  panel.dataset.id = "";
  const note = $("several-note") as HTMLInputElement | null;
  if (note && typed) note.value = typed;
  if (focused && panel.querySelector(`#${focused}`)) $(focused).focus();
}

export function setUpDetail() {
  onRender(renderDetail);
}
