// What every view shares: the window's state, notices and errors, the one way
// an action runs (busy while it runs, its error shown, the list reloaded), and
// a render that each view hooks into. Every lease change starts from a click.
import { api, isAppError, type AppError, type Code, type FileRow, type ListChanges, type Overview, type Event } from "./api";
import { explain } from "./error-words";
import { noticeLasts } from "./format";
import { $, button, h } from "./h";
import { Listing, type Fetcher } from "./listing";
import type { Sending } from "./sending";
import { noSelection, type Selection } from "./selection";
import { mergeChanges, touchedOnScreen } from "./following";

export type View = "files" | "mine" | "proposals" | "activity" | "studio" | "inbox";

export interface UiState {
  overview: Overview | null;
  /** The list of files: what is on screen and around it (see listing.ts). */
  list: Listing;
  /** The folder chosen in the tree (`""`: every file). */
  folder: string;
  /** "Held by others" pressed: the list shows the files others hold. */
  heldByOthers: boolean;
  filter: string;
  view: View;
  selected: string | null; // artifact id
  /** The files chosen together (Ctrl/Shift-click, the checkboxes, the
   *  keyboard); with two or more, the detail acts on all of them. */
  several: Selection;
  /** On a narrow window the chosen file's detail takes the list's place:
   *  opened by a click or Enter, closed by "All files". */
  detailOpen: boolean;
  activity: Event[];
  busy: Set<string>; // artifact ids with an action in flight
  waiting: Set<string>; // "notify me when it's free"
  uploads: Map<string, Sending>; // by checkout id
  problem: Map<string, AppError>; // the last error per artifact, shown in its detail
  /** When each row was last seen to change (a local preview's cache stamp). */
  seen: Map<string, number>;
  /** The review thread a click asked to see (an inbox item's, a desktop
   *  notification's), by id: the chosen file's detail scrolls to it once
   *  it has drawn it, and sets this back to null. */
  askedThread: string | null;
}

const fetchRows: Fetcher = {
  folder: (folder, offset, limit, order) => api.folderRows(folder, offset, limit, order),
  found: (source, after, limit) =>
    source.kind === "search" ? api.searchFiles(source.text, after, limit) : api.heldByOthers(after, limit),
};

export const state: UiState = {
  overview: null,
  list: new Listing(fetchRows, () => {
    render();
    void hashChanged(state.list.rows.values());
  }, (artifact) => artifact === state.selected || state.several.chosen.has(artifact)),
  folder: "",
  heldByOthers: false,
  filter: "",
  view: "files",
  selected: null,
  several: noSelection(),
  detailOpen: false,
  activity: [],
  busy: new Set(),
  waiting: new Set(),
  uploads: new Map(),
  problem: new Map(),
  seen: new Map(),
  askedThread: null,
};

const renderers: ((now: number) => void)[] = [];

/** Adds a view's part of every render. */
export function onRender(part: (now: number) => void) {
  renderers.push(part);
}

export function render() {
  const now = Date.now();
  for (const part of renderers) part(now);
}

// ----- notices (toasts)

/** A compact toast in the notices' own row at the bottom (it never lies over
 *  the views): the newest shows on one line, older ones behind "N more"
 *  but those that offer actions. An action taken from a notice answers it,
 *  so it goes. */
export function notice(title: string, body = "", kind: "info" | "error" | "success" = "info", actions: HTMLElement[] = []) {
  // One that offers actions (Extend, Reply, Check out) is never folded away.
  const box = h("div", { class: `notice ${kind}${actions.length ? " acting" : ""}`, role: kind === "error" ? "alert" : "status" },
    h("p", { class: "notice-text" }, h("strong", {}, title), body ? ` ${body}` : null));
  for (const action of actions) action.addEventListener("click", () => box.remove());
  const close = button("Dismiss", () => box.remove(), "ghost small");
  box.append(h("div", { class: "actions" }, ...actions, close));
  const notices = $("notices");
  notices.append(box);
  // A few at a time: the oldest gives way.
  const shown = () => notices.querySelectorAll(".notice");
  while (shown().length > 3) shown()[0].remove();
  setTimeout(() => box.remove(), noticeLasts(kind, actions.length > 0));
}

/** Keeps the notices' row's count and its "N more" button true as notices
 *  come and go (by a click, a timeout or the oldest giving way). */
function followNotices() {
  const notices = $("notices");
  const more = button("", () => notices.classList.toggle("all"), "ghost small more", { id: "notices-more" });
  notices.prepend(more);
  const count = () => {
    const all = [...notices.querySelectorAll(".notice")];
    // A short window folds them all but the newest (style.css).
    const short = matchMedia("(max-height: 480px)").matches;
    const folded = all.filter((n, i) => i < all.length - 1 && (short || !n.classList.contains("acting"))).length;
    notices.dataset.count = String(all.length);
    // Touched only when it changes: each touch is a mutation this observes.
    if (folded === 0 && notices.classList.contains("all")) notices.classList.remove("all");
    more.hidden = folded === 0;
    more.textContent = notices.classList.contains("all") ? "Show the newest only" : `${folded} more`;
  };
  new MutationObserver(count).observe(notices, { childList: true, attributes: true, attributeFilter: ["class"] });
  matchMedia("(max-height: 480px)").addEventListener("change", count);
  count();
}
if (typeof document !== "undefined" && document.getElementById("notices")) followNotices();

/** Set by the settings view: the button an error about the connection offers. */
export const hooks = {
  openSettings: () => {},
  /** The list's places on screen (set by the files view). */
  onScreen: (): [number, number] => [0, 20],
  notifyWhenFree: async (_artifact: string, _on: boolean) => {},
  /** The list began to show another source (set by the folder tree). */
  sourceShown: () => {},
};

/** The codes that mean no store is open or the server refuses this app:
 *  the window says "Not connected". */
const NOT_CONNECTED: readonly Code[] = ["no_server", "no_token", "no_backend", "unauthorized", "certificate_untrusted", "certificate_changed"];

export function showError(error: unknown, artifact?: string) {
  const appError: AppError = isAppError(error) ? error : { code: "internal", message: String(error) };
  const explained = explain(appError, Date.now());
  if (artifact) state.problem.set(artifact, appError);
  const actions: HTMLElement[] = [];
  if (explained.action === "open-settings") actions.push(button("Open Settings", () => hooks.openSettings(), "small"));
  if (explained.action === "notify-when-free" && artifact) {
    actions.push(button("Notify me when it's free", () => void hooks.notifyWhenFree(artifact, true), "small"));
  }
  notice(explained.title, explained.detail, "error", actions);
  render();
}

/** Asks before something that cannot simply be taken back; answers whether
 *  the user confirmed. In the window's own dialog, so it looks like the app. */
export function ask(question: { title: string; body: string; confirm: string }): Promise<boolean> {
  const dialog = $("confirm") as HTMLDialogElement;
  return new Promise((resolve) => {
    const answer = (yes: boolean) => {
      dialog.close();
      resolve(yes);
    };
    const confirm = button(question.confirm, () => answer(true), "primary", { id: "confirm-yes" });
    dialog.replaceChildren(h("form", { method: "dialog", class: "confirm-form" },
      h("h2", { id: "confirm-title" }, question.title),
      h("p", {}, question.body),
      h("div", { class: "actions" }, confirm, button("Back", () => answer(false), "ghost", { id: "confirm-no" }))));
    dialog.addEventListener("cancel", () => resolve(false), { once: true });
    dialog.showModal();
    confirm.focus();
  });
}

// ----- data

let reloadTimer: number | undefined;
export function scheduleReload() {
  clearTimeout(reloadTimer);
  reloadTimer = window.setTimeout(() => void reload(), 120);
}

/** Parts of the window that read again after each reload (the folder tree). */
const onReload: (() => Promise<void>)[] = [];
export function afterReload(part: () => Promise<void>) {
  onReload.push(part);
}

/** Parts that read again what a change in the list touched, and no more. */
const onListChanges: ((changes: ListChanges) => Promise<void>)[] = [];
export function afterListChanges(part: (changes: ListChanges) => Promise<void>) {
  onListChanges.push(part);
}

/** Others' changes to the list, gathered until put on screen. */
let listTimer: number | undefined;
let changesToShow: ListChanges | undefined;

/** Reads the picture again (the shell first brings the mirror up to date by
 *  the events since), then the rows on screen and the folder tree: work in
 *  proportion to the screen, not the studio. */
export async function reload() {
  // What others' work changed is read anew here: changes sent before
  // would put older counts back.
  clearTimeout(listTimer);
  changesToShow = undefined;
  try {
    await readOverview();
    document.body.dataset.ready = "true";
    render();
    const [first, last] = hooks.onScreen();
    const before = [...state.list.rows.values()];
    await Promise.all([
      state.list.refresh(first, last).then(() => noteChanged(before, state.list.rows.values())),
      ...onReload.map((part) => part()),
    ]);
    // The chosen file's detail shows a row neither the list nor the overview
    // holds (it left "held by others", or was scrolled far off): read it too.
    const chosen = state.selected;
    if (chosen && !state.overview?.involved.some((r) => r.artifact.id === chosen) && !state.list.find(chosen)) {
      await api.refreshRow(chosen).then((row) => rowReadAgain(row), (e) => gone(e) && forgetChosen(chosen));
    }
  } catch (error) {
    state.overview = null;
    // Ready too: the window shows why there is no list.
    document.body.dataset.ready = "true";
    render();
    if (isAppError(error) && NOT_CONNECTED.includes(error.code)) {
      $("me").textContent = "Not connected";
    }
    showError(error);
  }
}

/** Reads the overview (your check-outs, proposals, requests and the rows
 *  they name) again. */
async function readOverview() {
  const overview = await api.overview();
  noteChanged(state.overview?.involved ?? [], overview.involved);
  state.overview = overview;
  void hashChanged(overview.involved);
}

/** After others' work: what the shell says changed in the list, gathered
 *  for a moment and put on screen once (one refresh for a burst). */
export function scheduleListRefresh(changes: ListChanges) {
  changesToShow = mergeChanges(changesToShow, changes);
  clearTimeout(listTimer);
  listTimer = window.setTimeout(() => {
    const gathered = changesToShow;
    changesToShow = undefined;
    if (gathered) void refreshList(gathered);
  }, 120);
}

/** Puts a change of the list on screen (the shell brought its mirror up to
 *  date and sent it, the folders' counts with it) and reads again only what
 *  it touched there: the rows shown if one of them changed or files came,
 *  went or moved, "held by others" if any lease did; the overview if a file
 *  of your check-outs, proposals or requests changed (their tabs' cards),
 *  and the chosen file's row (its detail). Nothing at all otherwise. */
async function refreshList(changes: ListChanges) {
  try {
    const totalBefore = state.overview?.changes.total;
    if (state.overview) state.overview.changes.total = changes.total;
    const list = state.list;
    const { involved, chosen } = touchedOnScreen(changes, state);
    const touched = changes.moved || changes.changed.length > 0;
    // Sorted by size, time, version or holder, a file changed off the screen may now be on it.
    const shown = changes.moved || list.reorderedBy(changes.changed) || changes.changed.some((id) => list.find(id) !== undefined);
    const [first, last] = hooks.onScreen();
    const before = [...list.rows.values()];
    const readRows = shown || (touched && list.source.kind === "held");
    await Promise.all([
      readRows ? list.refresh(first, last).then(() => noteChanged(before, list.rows.values())) : Promise.resolve(),
      involved ? readOverview() : Promise.resolve(),
      ...chosen.map((id) => api.refreshRow(id).then((row) => rowReadAgain(row), (e) => gone(e) && forgetChosen(id))),
      ...(changes.moved ? onReload.map((part) => part()) : onListChanges.map((part) => part(changes))),
    ]);
    // A change off the screen (most of a big studio's) draws nothing but
    // the tree's counts, which its part drew: the window is left be.
    if (readRows || involved || changes.moved || totalBefore !== changes.total) render();
  } catch {
    /* the next reload reads it all */
  }
}

function gone(error: unknown): boolean {
  return isAppError(error) && (error.code === "not_found" || error.code === "forbidden");
}

/** The chosen file can no longer be read (it went, or you may not see it
 *  now): its detail closes rather than show what it was. */
function forgetChosen(artifact: string) {
  if (state.selected !== artifact) return;
  chosenRow = undefined;
  select(null);
}

/** Marks the rows whose copy or head changed as seen changed now (a local
 *  preview's cache stamp). A row not shown before has no stamp yet: none is
 *  kept for every row scrolled past. */
function noteChanged(before: Iterable<FileRow>, after: Iterable<FileRow>) {
  const old = new Map([...before].map((r) => [r.artifact.id, r]));
  for (const row of after) {
    const was = old.get(row.artifact.id);
    if (was && (was.local !== row.local || was.artifact.head.digest !== row.artifact.head.digest)) {
      state.seen.set(row.artifact.id, Date.now());
    }
  }
}

/** Rows shown whose local copy changed since it was last hashed: hashed one
 *  by one (each at most once at a time). */
const hashing = new Set<string>();
async function hashChanged(rows: Iterable<FileRow>) {
  for (const row of [...rows].filter((r) => r.local === "checking" && !hashing.has(r.artifact.id))) {
    hashing.add(row.artifact.id);
    try {
      replaceRow(await api.refreshRow(row.artifact.id));
    } catch {
      /* the next reload tries again */
    } finally {
      hashing.delete(row.artifact.id);
    }
  }
}

/** A row read again after others' work: in its place, its copy marked seen
 *  changed only if it did. */
function rowReadAgain(row: FileRow) {
  const was = rowOf(row.artifact.id);
  noteChanged(was ? [was] : [], [row]);
  replaceRow(row, false);
}

/** A row read again: put in its place in the list and among the involved;
 *  `changed` (a copy hashed anew) marks its copy seen changed now. */
export function replaceRow(row: FileRow, changed = true) {
  const overview = state.overview;
  if (!overview) return;
  if (changed) state.seen.set(row.artifact.id, Date.now());
  const index = overview.involved.findIndex((r) => r.artifact.id === row.artifact.id);
  if (index >= 0) overview.involved[index] = row;
  else if (row.mine) overview.involved.push(row);
  state.list.replace(row);
  if (state.selected === row.artifact.id) chosenRow = row;
  render();
}

/** The chosen file's row as last read, for when it is not among those loaded. */
let chosenRow: FileRow | undefined;

/** A file's row: among those the other tabs show, or those loaded in the list. */
export function rowOf(artifact: string): FileRow | undefined {
  const row = state.overview?.involved.find((r) => r.artifact.id === artifact) ?? state.list.find(artifact)?.[1];
  if (row && artifact === state.selected) chosenRow = row;
  return row ?? (artifact === state.selected ? chosenRow : undefined);
}

/** Runs one action on a file: busy meanwhile, its error shown, the list reloaded after. */
export async function run<T>(artifact: string, action: () => Promise<T>): Promise<T | undefined> {
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

export function setView(view: View) {
  state.view = view;
  for (const tab of document.querySelectorAll<HTMLButtonElement>("[role=tab]")) {
    tab.setAttribute("aria-selected", String(tab.dataset.view === view));
  }
  for (const name of ["files", "mine", "proposals", "activity", "studio", "inbox"]) $(`view-${name}`).hidden = name !== view;
  render();
}

/** Chooses one file (or none): its detail shows. */
export function select(artifact: string | null) {
  state.selected = artifact;
  state.several = artifact ? { chosen: new Set([artifact]), anchor: artifact, focus: artifact } : noSelection();
  render();
}
