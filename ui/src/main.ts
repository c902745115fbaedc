// The window: files with holder, countdown and local state; your check-outs;
// proposals; activity; settings. Every lease change starts from a click here.
import { open as openDialog } from "@tauri-apps/plugin-dialog";
import { getCurrentWebview } from "@tauri-apps/api/webview";
import { api, isAppError, on, type AppError, type Checkout, type Event, type FileRow, type Overview, type Proposal } from "./api";
import {
  bytes,
  checkinOutcome,
  clock,
  describeEvent,
  explain,
  fileName,
  getAction,
  leaseLost,
  folderOf,
  localStateLabels,
  unplaceableAdvice,
  matches,
  participantName,
  timeLeft,
  urgency,
  visibleRange,
} from "./format";

const ROW_HEIGHT = 48;
const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

interface UiState {
  overview: Overview | null;
  shown: FileRow[];
  filter: string;
  view: "files" | "mine" | "proposals" | "activity";
  selected: string | null; // artifact id
  activity: Event[];
  busy: Set<string>; // artifact ids with an action in flight
  waiting: Set<string>; // "notify me when it's free"
  uploads: Map<string, { upload: string; sent: number; size: number }>; // by checkout id
  problem: Map<string, AppError>; // the last error per artifact, shown in its detail
}

const state: UiState = {
  overview: null,
  shown: [],
  filter: "",
  view: "files",
  selected: null,
  activity: [],
  busy: new Set(),
  waiting: new Set(),
  uploads: new Map(),
  problem: new Map(),
};

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string | null | undefined)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child != null) node.append(child);
  return node;
}

function button(label: string, onClick: () => void, kind = "", attrs: Record<string, string> = {}): HTMLButtonElement {
  const b = el("button", { type: "button", class: `button ${kind}`.trim(), ...attrs }, label);
  b.addEventListener("click", onClick);
  return b;
}

// ----- notices (toasts)

function notice(title: string, body = "", kind: "info" | "error" | "success" = "info", actions: HTMLElement[] = []) {
  const box = el("div", { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status" },
    el("strong", {}, title), body ? el("p", {}, body) : null);
  const close = button("Dismiss", () => box.remove(), "ghost small");
  box.append(actions.length ? el("div", { class: "actions" }, ...actions, close) : close);
  const notices = $("notices");
  notices.append(box);
  // A few at a time: the oldest gives way.
  while (notices.children.length > 3) notices.firstElementChild?.remove();
  setTimeout(() => box.remove(), kind === "error" ? 15_000 : 7_000);
}

function showError(error: unknown, artifact?: string) {
  const appError: AppError = isAppError(error) ? error : { code: "internal", message: String(error) };
  const explained = explain(appError, Date.now());
  if (artifact) state.problem.set(artifact, appError);
  const actions: HTMLElement[] = [];
  if (explained.action === "open-settings") actions.push(button("Open Settings", openSettings, "small"));
  if (explained.action === "notify-when-free" && artifact) {
    actions.push(button("Notify me when it's free", () => void notifyWhenFree(artifact, true), "small"));
  }
  notice(explained.title, explained.detail, "error", actions);
  render();
}

// ----- data

let reloadTimer: number | undefined;
function scheduleReload() {
  clearTimeout(reloadTimer);
  reloadTimer = window.setTimeout(() => void reload(), 120);
}

async function reload() {
  try {
    const overview = await api.overview();
    state.overview = overview;
    document.body.dataset.ready = "true";
    render();
    void hashChanged(overview);
  } catch (error) {
    state.overview = null;
    render();
    if (isAppError(error) && ["no_server", "no_token", "no_backend", "unauthorized"].includes(error.code)) {
      $("me").textContent = "Not connected";
    }
    showError(error);
  }
}

/** Rows whose local copy changed since it was last hashed: hash them one by one. */
async function hashChanged(overview: Overview) {
  for (const row of overview.files.filter((r) => r.local === "checking")) {
    try {
      replaceRow(await api.refreshRow(row.artifact.id));
    } catch {
      /* the next reload tries again */
    }
  }
}

function replaceRow(row: FileRow) {
  const overview = state.overview;
  if (!overview) return;
  const index = overview.files.findIndex((r) => r.artifact.id === row.artifact.id);
  if (index >= 0) overview.files[index] = row;
  else overview.files.push(row);
  render();
}

function rowOf(artifact: string): FileRow | undefined {
  return state.overview?.files.find((r) => r.artifact.id === artifact);
}

// ----- actions (each starts from the user's click)

async function run<T>(artifact: string, action: () => Promise<T>): Promise<T | undefined> {
  state.busy.add(artifact);
  state.problem.delete(artifact);
  render();
  try {
    return await action();
  } catch (error) {
    showError(error, artifact);
    return undefined;
  } finally {
    state.busy.delete(artifact);
    scheduleReload();
  }
}

async function checkOut(row: FileRow) {
  const note = ($("checkout-note") as HTMLInputElement | null)?.value.trim() || null;
  const hours = Number(($("checkout-hours") as HTMLSelectElement | null)?.value ?? "0");
  const done = await run(row.artifact.id, () => api.checkOut(row.artifact.id, note, hours > 0 ? hours * 3600 : null));
  if (done) {
    const until = clock(done.checkout.expires_at, Date.now());
    const kept = done.backup ? ` Your earlier changes are kept as “${fileName(done.backup)}”.` : "";
    notice(`${fileName(row.artifact.path)} is yours until ${until}`, `It is writable now.${kept}`, "success");
  }
}

async function extend(checkout: Checkout) {
  const done = await run(checkout.artifact_id, () => api.extend(checkout.id, null));
  if (done) notice(`${fileName(done.path)} extended`, `Your lease now ends at ${clock(done.expires_at, Date.now())}.`, "success");
}

async function checkIn(checkout: Checkout) {
  const row = rowOf(checkout.artifact_id);
  const upload = `${checkout.id}-${Date.now()}`;
  state.uploads.set(checkout.id, { upload, sent: 0, size: 0 });
  render();
  const done = await run(checkout.artifact_id, () =>
    api.checkIn(checkout.id, upload, ({ sent, total }) => {
      const progress = state.uploads.get(checkout.id);
      if (progress) {
        progress.sent = sent;
        progress.size = total ?? 0;
        updateProgress(checkout.id);
      }
    }),
  );
  state.uploads.delete(checkout.id);
  if (done) {
    const fresh = await api.overview().catch(() => null);
    const artifact = fresh?.files.find((r) => r.artifact.id === checkout.artifact_id)?.artifact ?? row?.artifact;
    const proposal = done.checkout.result?.outcome === "proposal";
    notice(proposal ? "Kept as a proposal" : "Checked in", checkinOutcome(done, artifact, Date.now()), proposal ? "info" : "success",
      proposal ? [button("Show proposals", () => setView("proposals"), "small")] : []);
  }
  render();
}

async function cancelUpload(checkout: Checkout) {
  const progress = state.uploads.get(checkout.id);
  if (progress) await api.cancelUpload(progress.upload);
}

async function cancelCheckout(checkout: Checkout) {
  const done = await run(checkout.artifact_id, () => api.cancelCheckout(checkout.id));
  if (done) {
    const kept = done.backup ? `Your changes are kept as “${fileName(done.backup)}”.` : "Nothing had changed.";
    notice(`${fileName(checkout.path)} is back to version ${done.checkout.version}`, kept, "success");
  }
}

async function updateFile(row: FileRow) {
  const backup = await run(row.artifact.id, () => api.updateFile(row.artifact.id));
  if (backup !== undefined) {
    notice(`${fileName(row.artifact.path)} is up to date`, backup ? `Your changes are kept as “${fileName(backup)}”.` : "", "success");
  }
}

async function getCopy(row: FileRow, checkout: Checkout) {
  const done = await run(row.artifact.id, () => api.getCopy(checkout.id));
  if (done) {
    const kept = done.backup ? ` Your earlier changes are kept as “${fileName(done.backup)}”.` : "";
    notice(`${fileName(row.artifact.path)} is here to edit`, `Version ${done.checkout.version}, writable. Your lease is as it was.${kept}`, "success");
  }
}

async function notifyWhenFree(artifact: string, on: boolean) {
  await api.notifyWhenFree(artifact, on);
  if (on) state.waiting.add(artifact);
  else state.waiting.delete(artifact);
  if (on) notice("You will be told", "A notification comes as soon as the file is free.");
  render();
}

async function addFiles(paths: string[]) {
  if (!paths.length) return;
  const folder = state.selected ? folderOf(rowOf(state.selected)?.artifact.path ?? "") : "";
  try {
    const results = await api.addFiles(paths, folder);
    const added = results.filter((r) => r.artifact);
    if (added.length) notice(added.length === 1 ? `${fileName(added[0].artifact!.path)} added` : `${added.length} files added`, "", "success");
    for (const failed of results.filter((r) => r.error)) showError(failed.error);
  } catch (error) {
    showError(error);
  }
  scheduleReload();
}

async function pickAndAdd() {
  const picked = await openDialog({ multiple: true, directory: false, title: "Add files to the store" });
  if (picked) await addFiles(Array.isArray(picked) ? picked : [picked]);
}

async function decide(proposal: Proposal, decision: "accept" | "rebuild" | "reject") {
  const done = await run(proposal.artifact_id, () => api.decide(proposal.id, decision));
  if (done) {
    const words = { accept: "accepted: it is the head now", rebuild: "rebuilt against the current head", reject: "rejected" };
    notice(`Proposal ${words[decision]}`, "", "success");
  }
}

// ----- rendering

function setView(view: UiState["view"]) {
  state.view = view;
  for (const tab of document.querySelectorAll<HTMLButtonElement>("[role=tab]")) {
    tab.setAttribute("aria-selected", String(tab.dataset.view === view));
  }
  for (const name of ["files", "mine", "proposals", "activity"]) $(`view-${name}`).hidden = name !== view;
  render();
}

function holderCell(row: FileRow, now: number): HTMLElement {
  const lease = row.artifact.lease;
  if (leaseLost(row.mine, lease)) {
    const why = row.mine?.broken ? `broken by ${participantName(row.mine.broken.by)}` : "lapsed";
    return el("span", { class: "holder lost", title: "Your copy is kept; a check-in now becomes a proposal" }, `Your lease ${why}`);
  }
  if (!lease) return el("span", { class: "holder free" }, "Free");
  const mine = row.mine !== null;
  return el("span", { class: mine ? "holder mine" : "holder" }, mine ? "You" : participantName(lease.participant),
    lease.note ? el("span", { class: "note", title: lease.note }, ` — ${lease.note}`) : null,
    el("span", { class: "visually-hidden" }, ` until ${clock(lease.expires_at, now)}`));
}

function countdown(expiresAt: string, now: number): HTMLElement {
  return el("span", { class: `countdown ${urgency(expiresAt, now)}`, "data-expires": expiresAt, title: `until ${clock(expiresAt, now)}` }, timeLeft(expiresAt, now));
}

function fileRow(row: FileRow, index: number, now: number): HTMLElement {
  const selected = row.artifact.id === state.selected;
  const node = el("div", {
    class: `row${selected ? " selected" : ""}${row.mine ? " is-mine" : ""}`,
    role: "row",
    "aria-selected": String(selected),
    "data-id": row.artifact.id,
    "data-path": row.artifact.path,
    "data-index": String(index),
    style: `top:${index * ROW_HEIGHT}px`,
  },
    el("span", { class: "name", role: "gridcell" }, el("strong", {}, fileName(row.artifact.path)), el("span", { class: "folder" }, folderOf(row.artifact.path))),
    el("span", { role: "gridcell", class: "version" }, `v${row.artifact.head.version}`),
    el("span", { role: "gridcell", class: "holder-cell" }, holderCell(row, now)),
    el("span", { role: "gridcell", class: "lease-cell" }, row.artifact.lease ? countdown(row.artifact.lease.expires_at, now) : ""),
    el("span", { role: "gridcell" }, el("span", { class: `local ${row.local}`, "data-local": row.local }, localStateLabels[row.local])),
  );
  node.addEventListener("click", () => select(row.artifact.id));
  return node;
}

const byPath = new Intl.Collator(undefined, { numeric: true });

/** The rows the filter lets through, in path order: worked out when the data
 *  or the filter changes, never on scroll. */
function refreshShown() {
  const files = state.overview?.files ?? [];
  state.shown = files
    .filter((r) => matches(r.artifact.path, r.artifact.lease ? participantName(r.artifact.lease.participant) : undefined, state.filter))
    .sort((a, b) => byPath.compare(a.artifact.path, b.artifact.path));
  const empty = $("files-empty");
  empty.hidden = state.shown.length > 0 || !state.overview;
  empty.textContent = files.length ? "No file matches the filter." : "No files yet. Add files with the button above, or drop them here.";
}

/** The row elements in the page, by the row they show: kept while in view. */
let rendered = new Map<FileRow, HTMLElement>();

/** Only the rows in view exist in the page (smooth with 10,000 files); a row
 *  that stays in view keeps its element. */
function renderRows(now: number) {
  const list = $("file-list");
  let spacer = list.querySelector<HTMLElement>(".spacer");
  if (!spacer) {
    spacer = el("div", { class: "spacer" });
    list.append(spacer);
  }
  spacer.style.height = `${state.shown.length * ROW_HEIGHT}px`;
  const [first, last] = visibleRange(list.scrollTop, list.clientHeight || 600, ROW_HEIGHT, state.shown.length);
  const next = new Map<FileRow, HTMLElement>();
  for (let i = first; i < last; i++) {
    const row = state.shown[i];
    let node = rendered.get(row);
    if (!node || node.dataset.index !== String(i)) node = fileRow(row, i, now);
    const selected = row.artifact.id === state.selected;
    node.classList.toggle("selected", selected);
    node.setAttribute("aria-selected", String(selected));
    next.set(row, node);
  }
  for (const [row, node] of rendered) if (next.get(row) !== node) node.remove();
  for (const node of next.values()) if (node.parentNode !== spacer) spacer.append(node);
  rendered = next;
  list.setAttribute("aria-rowcount", String(state.shown.length));
}

function renderFiles(now: number) {
  refreshShown();
  renderRows(now);
}

function detailPanel(row: FileRow, now: number): HTMLElement {
  const artifact = row.artifact;
  const lease = artifact.lease;
  const busy = state.busy.has(artifact.id);
  const upload = row.mine ? state.uploads.get(row.mine.id) : undefined;
  const parts: (Node | null)[] = [
    el("h2", {}, fileName(artifact.path)),
    el("p", { class: "muted path" }, artifact.path),
    el("dl", {},
      el("dt", {}, "Head"), el("dd", {}, `Version ${artifact.head.version} by ${participantName(artifact.head.author)}, ${clock(artifact.head.committed_at, now)} · ${bytes(artifact.head.size)}`),
      el("dt", {}, "On this computer"), el("dd", {}, el("span", { class: `local ${row.local}` }, localStateLabels[row.local])),
      el("dt", {}, "Holder"), el("dd", {}, lease || leaseLost(row.mine, lease) ? holderCell(row, now) : "Nobody: the file is free"),
      lease ? el("dt", {}, "Until") : null, lease ? el("dd", {}, `${clock(lease.expires_at, now)} (`, countdown(lease.expires_at, now), " left)") : null,
    ),
  ];
  const actions = el("div", { class: "actions" });
  const problem = state.problem.get(artifact.id);
  if (row.local === "unplaceable") {
    // Never written to disk: no check-out, download or reveal until renamed.
    parts.push(el("p", { class: "warning", role: "status", id: "unplaceable" }, unplaceableAdvice(artifact.path)));
  } else if (row.mine) {
    const checkout = row.mine;
    if (upload) {
      parts.push(el("div", { class: "progress", role: "progressbar", "aria-label": "Uploading", "data-upload": checkout.id },
        el("span", { class: "bar" }), el("span", { class: "label" }, "Uploading…")));
      actions.append(button("Cancel upload", () => void cancelUpload(checkout), "danger", { id: "action-cancel-upload", "data-while-busy": "" }));
    } else {
      actions.append(
        button("Check in", () => void checkIn(checkout), "primary", { id: "action-checkin" }),
        button("Extend", () => void extend(checkout), "", { id: "action-extend" }),
        button("Cancel check-out", () => void cancelCheckout(checkout), "ghost", { id: "action-cancel", title: "Releases the file; your changes are kept as a backup" }),
      );
    }
    if (checkout.note) parts.push(el("p", { class: "note-line" }, `Your note: “${checkout.note}”`));
  } else if (lease) {
    const who = participantName(lease.participant);
    parts.push(el("div", { class: "busy", role: "status" },
      el("strong", {}, `${who} has it until ${clock(lease.expires_at, now)}`),
      lease.note ? el("p", {}, `“${lease.note}”`) : null));
    const waiting = state.waiting.has(artifact.id);
    actions.append(
      button(waiting ? "You will be told when it's free" : "Notify me when it's free", () => void notifyWhenFree(artifact.id, !waiting), waiting ? "ghost" : "primary", { id: "action-notify", "aria-pressed": String(waiting) }),
      button("Check out", () => void checkOut(row), "", { id: "action-checkout" }),
    );
  } else {
    parts.push(el("div", { class: "checkout-form" },
      el("label", {}, "Note for others ", el("input", { id: "checkout-note", type: "text", placeholder: "What you are doing (optional)", maxlength: "200" })),
      el("label", {}, "For ", (() => {
        const select = el("select", { id: "checkout-hours" });
        for (const [value, label] of [["0", "the default time"], ["1", "1 hour"], ["4", "4 hours"], ["8", "a working day"]]) {
          select.append(el("option", { value }, label));
        }
        return select;
      })())));
    actions.append(button("Check out", () => void checkOut(row), "primary", { id: "action-checkout" }));
  }
  const get = getAction(row.local, row.mine !== null);
  if (get?.mine && row.mine) {
    const checkout = row.mine;
    if (get.why) parts.push(el("p", { class: "hint", role: "status" }, get.why));
    actions.prepend(button(get.label, () => void getCopy(row, checkout), "primary", { id: "action-get-copy" }));
  } else if (get) {
    actions.append(button(get.label, () => void updateFile(row), "ghost", { id: "action-update" }));
  }
  const localPath = row.local_path;
  if (localPath && row.local !== "not_local" && row.local !== "missing" && row.local !== "unplaceable") {
    actions.append(button("Reveal in folder", () => void api.reveal(localPath).catch(showError), "ghost"));
  }
  if (row.local === "modified" && !row.mine) {
    parts.push(el("p", { class: "warning" }, "You changed this file without checking it out. Check it out to keep your changes safe."));
  }
  if (leaseLost(row.mine, lease)) {
    parts.push(el("p", { class: "warning", role: "status" }, "Your lease has ended: nobody can lose your work, but the file is no longer reserved for you. Check in to keep your changes (as a proposal if someone else committed), or cancel to put the head back and keep a backup."));
  } else if (problem?.code === "checkout_closed") {
    parts.push(el("p", { class: "warning" }, "Your lease ended: the file is read-only for you now. Your copy is kept."));
  }
  if (busy) holdWhileBusy(actions);
  parts.push(actions);
  return el("div", {}, ...parts);
}

function renderDetail(now: number) {
  const panel = $("detail");
  const row = state.selected ? rowOf(state.selected) : undefined;
  panel.hidden = !row || state.view !== "files";
  if (row && state.view === "files") {
    const focused = document.activeElement?.id;
    const typed = ($("checkout-note") as HTMLInputElement | null)?.value;
    // Replaced only when it changed: a click must not land on a panel
    // swapped out from under it by a reload.
    const fresh = detailPanel(row, now);
    if (panel.firstElementChild?.outerHTML === fresh.outerHTML) return;
    panel.replaceChildren(fresh);
    const note = $("checkout-note") as HTMLInputElement | null;
    if (note && typed) note.value = typed;
    if (focused && panel.querySelector(`#${focused}`)) $(focused).focus();
  }
}

/** While an action on a file runs no other may start; buttons marked
 *  `data-while-busy` (cancel the upload, show the file) stay live. */
function holdWhileBusy(actions: HTMLElement) {
  actions.querySelectorAll<HTMLButtonElement>("button:not([data-while-busy])").forEach((b) => (b.disabled = true));
}

function renderMine(now: number) {
  const mine = state.overview?.checkouts ?? [];
  const view = $("view-mine");
  if (!mine.length) {
    view.replaceChildren(el("p", { class: "empty" }, "You hold no files. Pick a file and check it out."));
    return;
  }
  view.replaceChildren(el("ul", { class: "cards" }, ...mine.map((c) => {
    const row = rowOf(c.artifact_id);
    const actions = el("div", { class: "actions" },
      state.uploads.has(c.id)
        ? button("Cancel upload", () => void cancelUpload(c), "danger", { "data-while-busy": "" })
        : button("Check in", () => void checkIn(c), "primary"),
      button("Extend", () => void extend(c)),
      button("Cancel check-out", () => void cancelCheckout(c), "ghost"),
      button("Show", () => { setView("files"); select(c.artifact_id); }, "ghost", { "data-while-busy": "" }));
    if (state.busy.has(c.artifact_id)) holdWhileBusy(actions);
    return el("li", { class: "card" },
      el("h3", {}, fileName(c.path)),
      el("p", { class: "muted" }, c.path),
      el("p", {}, countdown(c.expires_at, now), ` left, until ${clock(c.expires_at, now)}`),
      row ? el("p", {}, el("span", { class: `local ${row.local}` }, localStateLabels[row.local])) : null,
      actions);
  })));
}

async function compareProposal(p: Proposal) {
  const file = await run(p.artifact_id, () => api.compareProposal(p.artifact_id, p.id));
  if (file) {
    notice("Ready to compare", `“${fileName(file)}” is beside the head's file, in your workspace folder.`, "success",
      [button("Show in folder", () => void api.reveal(file).catch((e) => showError(e)), "small")]);
  }
}

function renderProposals(now: number) {
  const proposals = state.overview?.proposals ?? [];
  const view = $("view-proposals");
  if (!proposals.length) {
    view.replaceChildren(el("p", { class: "empty" }, "No open proposals."));
    return;
  }
  view.replaceChildren(el("ul", { class: "cards" }, ...proposals.map((p) => {
    const row = rowOf(p.artifact_id);
    const head = row?.artifact.head;
    const moved = head && head.version !== p.base_version;
    return el("li", { class: "card", "data-proposal": p.id },
      el("h3", {}, row ? fileName(row.artifact.path) : "A file"),
      el("p", {}, `${participantName(p.author)} proposed a change against version ${p.base_version}, ${clock(p.created_at, now)} · ${bytes(p.size)}`),
      moved ? el("p", { class: "warning" }, `The head has moved to version ${head.version}: rebuild before accepting.`) : null,
      el("div", { class: "actions" },
        button("Accept", () => void decide(p, "accept"), "primary"),
        button("Rebuild", () => void decide(p, "rebuild")),
        button("Reject", () => void decide(p, "reject"), "ghost"),
        button("Compare with the head", () => void compareProposal(p), "ghost", { "data-compare": p.id })));
  })));
}

function renderActivity() {
  const paths = new Map((state.overview?.files ?? []).map((r) => [r.artifact.id, r.artifact.path]));
  const now = Date.now();
  $("activity").replaceChildren(...state.activity.slice(0, 300).map((e) =>
    el("li", {}, el("time", { datetime: e.at }, clock(e.at, now)), " ", describeEvent(e, (id) => paths.get(id)))));
}

function render() {
  const now = Date.now();
  const overview = state.overview;
  $("me").textContent = overview ? `Signed in as ${participantName(overview.me)}` : $("me").textContent;
  $("count-files").textContent = overview ? String(overview.files.length) : "";
  $("count-mine").textContent = overview?.checkouts.length ? String(overview.checkouts.length) : "";
  $("count-proposals").textContent = overview?.proposals.length ? String(overview.proposals.length) : "";
  if (state.view === "files") renderFiles(now);
  if (state.view === "mine") renderMine(now);
  if (state.view === "proposals") renderProposals(now);
  if (state.view === "activity") renderActivity();
  renderDetail(now);
}

function updateProgress(checkoutId: string) {
  const progress = state.uploads.get(checkoutId);
  const bar = document.querySelector<HTMLElement>(`[data-upload="${checkoutId}"]`);
  if (!progress || !bar) return;
  const size = progress.size;
  bar.querySelector<HTMLElement>(".label")!.textContent =
    size > 0 ? `Uploading… ${bytes(progress.sent)} of ${bytes(size)}` : `Uploading… ${bytes(progress.sent)} sent`;
  const part = size > 0 ? Math.min(1, progress.sent / size) : 0.5;
  bar.querySelector<HTMLElement>(".bar")!.style.width = `${Math.round(part * 100)}%`;
}

/** Only the countdown texts change each second. */
function tick() {
  const now = Date.now();
  for (const node of document.querySelectorAll<HTMLElement>("[data-expires]")) {
    const expires = node.dataset.expires!;
    node.textContent = timeLeft(expires, now);
    node.className = `countdown ${urgency(expires, now)}`;
  }
}

function select(artifact: string | null) {
  state.selected = artifact;
  render();
}

// ----- keyboard

function moveSelection(by: number) {
  if (!state.shown.length) return;
  const index = state.shown.findIndex((r) => r.artifact.id === state.selected);
  const next = Math.max(0, Math.min(state.shown.length - 1, index < 0 ? 0 : index + by));
  state.selected = state.shown[next].artifact.id;
  const list = $("file-list");
  const top = next * ROW_HEIGHT;
  if (top < list.scrollTop) list.scrollTop = top;
  else if (top + ROW_HEIGHT > list.scrollTop + list.clientHeight) list.scrollTop = top + ROW_HEIGHT - list.clientHeight;
  render();
}

document.addEventListener("keydown", (e) => {
  const typing = e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.target instanceof HTMLTextAreaElement;
  if (e.key === "w" && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    void api.closeWindow();
  } else if (e.key === "/" && !typing) {
    e.preventDefault();
    $("filter").focus();
  } else if (e.key === "Escape" && !($("settings") as HTMLDialogElement).open) {
    if (typing) (e.target as HTMLElement).blur();
    else select(null);
  }
});

$("file-list").addEventListener("keydown", (e) => {
  if (e.key === "ArrowDown") { e.preventDefault(); moveSelection(1); }
  else if (e.key === "ArrowUp") { e.preventDefault(); moveSelection(-1); }
  else if (e.key === "PageDown") { e.preventDefault(); moveSelection(10); }
  else if (e.key === "PageUp") { e.preventDefault(); moveSelection(-10); }
  else if (e.key === "Enter" && state.selected) {
    e.preventDefault();
    $("detail").querySelector<HTMLButtonElement>(".actions button")?.focus();
  }
});

$("file-list").addEventListener("scroll", () => renderRows(Date.now()), { passive: true });

$("filter").addEventListener("input", (e) => {
  state.filter = (e.target as HTMLInputElement).value;
  $("file-list").scrollTop = 0;
  render();
});

for (const tab of document.querySelectorAll<HTMLButtonElement>("[role=tab]")) {
  tab.addEventListener("click", () => setView(tab.dataset.view as UiState["view"]));
}

$("add").addEventListener("click", () => void pickAndAdd());
$("open-settings").addEventListener("click", () => openSettings());

// ----- settings

async function openSettings() {
  const dialog = $("settings") as HTMLDialogElement;
  let view;
  try {
    view = await api.settings();
  } catch (error) {
    return showError(error);
  }
  const s = view.settings;
  const field = (label: string, input: HTMLElement, help = "") =>
    el("label", { class: "field" }, el("span", {}, label), input, help ? el("small", { class: "muted" }, help) : null);
  const backend = el("select", { id: "settings-backend" },
    el("option", { value: "bundled" }, "On this computer (no server)"),
    el("option", { value: "remote" }, "A team server"));
  backend.value = s.backend;
  const url = el("input", { id: "settings-url", type: "url", placeholder: "http://leasedesk.example:7400", value: s.server_url });
  const token = el("input", { id: "settings-token", type: "password", autocomplete: "off", placeholder: view.has_token ? "stored in your keychain" : "paste the token your admin gave you" });
  const workspace = el("input", { id: "settings-workspace", type: "text", value: s.workspace });
  const name = el("input", { id: "settings-name", type: "text", value: s.display_name });
  const remoteOnly = el("div", {}, field("Server address", url), field("Token", token, "Kept in your system keychain, never in a file."));
  const bundledOnly = el("div", {}, field("Your name", name));
  const sync = () => { remoteOnly.hidden = backend.value !== "remote"; bundledOnly.hidden = backend.value !== "bundled"; };
  backend.addEventListener("change", sync);
  sync();
  const status = el("p", { class: "muted", role: "status" });
  if (view.keychain_note) status.textContent = view.keychain_note;
  // This dialog is where a token is fixed: no "open Settings" here.
  const problem = (error: AppError) =>
    error.code === "unauthorized" ? "The server did not accept this token." : explain(error, Date.now()).detail;
  if (view.session_error) status.textContent = problem(view.session_error);
  const save = button("Save", async () => {
    try {
      const saved = await api.saveSettings(
        { backend: backend.value as "bundled" | "remote", server_url: url.value.trim(), workspace: workspace.value.trim(), display_name: name.value.trim() },
        token.value || null,
      );
      if (saved.session_error) {
        status.textContent = problem(saved.session_error);
        return;
      }
      if (saved.keychain_note) notice("Token kept for this run only", saved.keychain_note);
      dialog.close();
      scheduleReload();
      void loadActivity();
    } catch (error) {
      showError(error);
    }
  }, "primary", { id: "settings-save" });
  dialog.replaceChildren(el("form", { method: "dialog", class: "settings-form" },
    el("h2", { id: "settings-title" }, "Settings"),
    field("Where files are leased", backend),
    remoteOnly, bundledOnly,
    field("Workspace folder", workspace, "Your files are mirrored here. Switching stores never deletes them."),
    status,
    el("div", { class: "actions" }, save, button("Close", () => dialog.close(), "ghost"))));
  dialog.showModal();
}

// ----- live updates

async function loadActivity() {
  try {
    state.activity = await api.recentEvents(300);
    render();
  } catch {
    /* shown by reload */
  }
}

void on("store-changed", () => scheduleReload());
void on<FileRow>("row", (row) => replaceRow(row));
void on<Event[]>("activity", (events) => {
  state.activity = [...events.reverse(), ...state.activity].slice(0, 500);
  if (state.view === "activity") renderActivity();
});
void on<{ title: string; body: string; extend?: string }>("notice", (n) => {
  const checkout = n.extend && state.overview?.checkouts.find((c) => c.id === n.extend);
  notice(n.title, n.body, "info", checkout ? [button("Extend", () => void extend(checkout), "small")] : []);
});

void getCurrentWebview().onDragDropEvent((event) => {
  const drop = $("drop");
  if (event.payload.type === "over" || event.payload.type === "enter") drop.hidden = false;
  else if (event.payload.type === "drop") {
    drop.hidden = true;
    void addFiles(event.payload.paths);
  } else drop.hidden = true;
});

setInterval(tick, 1000);
window.addEventListener("resize", () => render());
void reload();
void loadActivity();
