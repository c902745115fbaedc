// The file list: a virtual list (only the rows in view exist in the page, so
// 10,000 files scroll smoothly), each row with a thumbnail that loads only
// once the row is in view, from the `preview` protocol (cached on disk by
// digest in the app, and by address in the browser), a few at a time.
import { previewUrl, type FileRow } from "../api";
import type { PathHold } from "../generated/PathHold";
import { hooks, onRender, render, select, showError, state } from "../app";
import { clicked, everything, moved, noSelection, pruned, shownOf, toggled, type Selection } from "../selection";
import { $, h } from "../h";
import { sameSource, type Source } from "../listing";
import { aborted, turns, type Turn } from "../turns";
import { setUpHeads } from "./heads";
import { bytes, clock, emptyListWords, fileName, filesCount, folderOf, fullTime, gitLockWords, holderName, holderNote, isGitLock, leaseLost, localStateLabels, noFileYet, participantName, timeLeft, urgency, visibleRange } from "../format";

export const ROW_HEIGHT = 48;
/** Thumbnails are drawn at 36 px; asked for at twice that for sharp HiDPI. */
export const THUMB_SIZE = 72;

export function holderCell(row: FileRow, now: number): HTMLElement {
  const lease = row.artifact.lease;
  if (leaseLost(row.mine, lease)) {
    const why = row.mine?.broken ? `broken by ${participantName(row.mine.broken.by)}` : "lapsed";
    return h("span", { class: "holder lost", title: "Your copy is kept; a check-in now becomes a proposal" }, `Your lease ${why}`);
  }
  if (!lease) return h("span", { class: "holder free" }, "Free");
  const mine = row.mine !== null;
  if (isGitLock(lease)) {
    // "Locked from Git by sam until Fri 17:00": who, and that it came through Git.
    const words = gitLockWords(lease, mine ? lease.participant : null, now);
    return h("span", { class: mine ? "holder mine git" : "holder git", title: words }, words);
  }
  return h("span", { class: mine ? "holder mine" : "holder" }, mine ? "You" : participantName(lease.participant),
    lease.note ? h("span", { class: "note", title: lease.note }, ` — ${lease.note}`) : null,
    h("span", { class: "visually-hidden" }, ` until ${clock(lease.expires_at, now)}`));
}

/** Who holds a path with no file yet, as a file's holder is said. */
function holdHolder(hold: PathHold, now: number): HTMLElement {
  const words = holderName(hold.lease, null, now);
  const note = holderNote(hold.lease);
  return h("span", { class: isGitLock(hold.lease) ? "holder git" : "holder", title: words }, words,
    note ? h("span", { class: "note", title: note }, ` — ${note}`) : null,
    isGitLock(hold.lease) ? null : h("span", { class: "visually-hidden" }, ` until ${clock(hold.lease.expires_at, now)}`));
}

export function countdown(expiresAt: string, now: number): HTMLElement {
  return h("span", { class: `countdown ${urgency(expiresAt, now)}`, "data-expires": expiresAt, title: `until ${clock(expiresAt, now)}` }, timeLeft(expiresAt, now));
}

/** Thumbnails loaded and decoded at a time, at most: the web process's main
 *  thread then handles a few answers a frame, not every row scrolled past. */
export const DECODES_AT_ONCE = 4;
const decodes = turns(DECODES_AT_ONCE);
/** The turn of each image that asked for one and is not shown yet. */
const asked = new WeakMap<HTMLImageElement, Turn>();

/** An image that asks for its address only once it scrolls into view, and
 *  says "no preview" (the file's kind) when there is none. With no
 *  observer it asks at once. Either way it waits for its turn among the
 *  decodes (`DECODES_AT_ONCE`) and shows once decoded: `decode()` of an
 *  `<img decoding="async">`, which WebKit decodes on its image decoding
 *  thread. (Measured in WebKitGTK 2.50 against `createImageBitmap` of the
 *  fetched bytes, here or in a worker, drawn into a canvas: those took
 *  twice as long for the same frames; see docs/BENCHMARKS.md.) */
export function lazyImage(src: string, label: string, kind: string, observer: IntersectionObserver | null): HTMLElement {
  const img = h("img", { alt: label, "data-src": src, decoding: "async", draggable: "false" });
  // No preview: the file's kind is said in its place ("file" when it has none).
  const box = h("span", { class: "thumb", "data-kind": kind || "file" }, img);
  if (observer) observer.observe(img);
  else askTurn(img);
  return box;
}

/** Queues `img`'s load and decode (once). An image that has left the page
 *  by its turn is skipped. */
function askTurn(img: HTMLImageElement) {
  if (asked.has(img) || img.src) return;
  asked.set(img, decodes.add((signal) => decodeInto(img, signal)));
}

/** Gives `img`'s turn up: a waiting one never runs; a running one, when
 *  `evenRunning`, stops its load (its row has left the page). */
function giveUpTurn(img: HTMLImageElement, evenRunning: boolean) {
  const turn = asked.get(img);
  if (!turn || (turn.state === "running" && !evenRunning)) return;
  const wasRunning = turn.state === "running";
  turn.cancel();
  asked.delete(img);
  if (wasRunning) img.removeAttribute("src");
}

async function decodeInto(img: HTMLImageElement, signal: AbortSignal) {
  const box = img.parentElement!;
  if (!img.isConnected) {
    asked.delete(img);
    return;
  }
  img.src = img.dataset.src!;
  try {
    await Promise.race([img.decode(), aborted(signal)]);
    box.classList.add("loaded");
  } catch {
    // Given up (the row left the page), or no picture: a 404 `no_preview`.
    if (!signal.aborted) {
      box.classList.add("none");
      box.title = "No preview";
    }
  }
  if (signal.aborted) return;
  asked.delete(img);
  thumbs?.unobserve(img);
}

/** How long a row stays in view before it asks for its thumbnail: rows
 *  that fly past in a fast scroll (a 13-row page at 240 px a frame is in
 *  view for 3 frames) never load one, and the frames go to scrolling. */
export const SETTLE_MS = 100;
const settling = new WeakMap<HTMLImageElement, number>();

let thumbs: IntersectionObserver | null = null;
/** Rows that stay in view ask for their thumbnail; rows scrolled past before
 *  their turn give it up (and ask again if they come back). */
function thumbObserver(): IntersectionObserver {
  thumbs ??= new IntersectionObserver((entries) => {
    for (const entry of entries) {
      const img = entry.target as HTMLImageElement;
      clearTimeout(settling.get(img));
      settling.delete(img);
      if (entry.isIntersecting) settling.set(img, window.setTimeout(() => askTurn(img), SETTLE_MS));
      else giveUpTurn(img, false);
    }
  }, { root: $("file-list") });
  return thumbs;
}

/** A row that leaves the page stops watching its thumbnail and stops its load. */
function forgetThumbnail(node: HTMLElement) {
  const img = node.querySelector("img");
  if (!img) return;
  thumbs?.unobserve(img);
  clearTimeout(settling.get(img));
  giveUpTurn(img, true);
}

export function extensionOf(path: string): string {
  const name = fileName(path);
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
}

function fileRow(row: FileRow, index: number, now: number): HTMLElement {
  const selected = row.artifact.id === state.selected;
  const artifact = row.artifact;
  const choose = h("input", { type: "checkbox", tabindex: "-1", "aria-label": `Choose ${fileName(artifact.path)}`, "data-choose": artifact.id });
  const node = h("div", {
    class: `row${selected ? " selected" : ""}${row.mine ? " is-mine" : ""}`,
    role: "row",
    "aria-selected": String(selected),
    "data-id": artifact.id,
    "data-path": artifact.path,
    "data-index": String(index),
    "data-version": String(artifact.head.version),
    style: `top:${index * ROW_HEIGHT}px`,
  },
    h("span", { role: "gridcell", class: "choose" }, choose),
    h("span", { role: "gridcell", class: "thumb-cell" },
      lazyImage(previewUrl({ artifact: artifact.id, version: artifact.head.version }, THUMB_SIZE), "", extensionOf(artifact.path), thumbObserver())),
    h("span", { class: "name", role: "gridcell" },
      h("strong", {}, fileName(artifact.path), artifact.access === "read" ? h("span", { class: "view-only", title: "You can view this file, not change it" }, " · view only") : null),
      h("span", { class: "folder" }, folderOf(artifact.path))),
    h("span", { role: "gridcell", class: "version" }, `v${artifact.head.version}`),
    h("span", { role: "gridcell", class: "holder-cell" }, holderCell(row, now)),
    h("span", { role: "gridcell", class: "lease-cell" }, artifact.lease ? countdown(artifact.lease.expires_at, now) : ""),
    h("span", { role: "gridcell", class: "size-cell" }, bytes(artifact.head.size)),
    h("span", { role: "gridcell", class: "modified-cell", title: fullTime(artifact.head.committed_at) }, clock(artifact.head.committed_at, now)),
    h("span", { role: "gridcell" }, h("span", { class: `local ${row.local}`, "data-local": row.local }, localStateLabels[row.local])),
  );
  return node;
}

/** A path someone else holds with no file yet, in Held by others: its name,
 *  who holds it and until when, and no version. Not chosen by a click: there
 *  is no file to show, nor a check-out to ask its holder for (a request is
 *  made on a file's check-out, and the holder works in Git). */
function holdRow(hold: PathHold, index: number, now: number): HTMLElement {
  const path = hold.path;
  return h("div", { class: "row hold", role: "row", "data-hold": path, "data-path": path, "data-index": String(index), style: `top:${index * ROW_HEIGHT}px` },
    h("span", { role: "gridcell", class: "choose" }),
    h("span", { role: "gridcell", class: "thumb-cell" }, h("span", { class: "thumb none", "data-kind": extensionOf(path) || "file" })),
    h("span", { class: "name", role: "gridcell" }, h("strong", {}, fileName(path)), h("span", { class: "folder" }, folderOf(path))),
    h("span", { role: "gridcell", class: "version", title: noFileYet.version }, "—", h("span", { class: "visually-hidden" }, noFileYet.version)),
    h("span", { role: "gridcell", class: "holder-cell" }, holdHolder(hold, now)),
    h("span", { role: "gridcell", class: "lease-cell" }, countdown(hold.lease.expires_at, now)),
    h("span", { role: "gridcell", class: "size-cell" }, ""),
    h("span", { role: "gridcell", class: "modified-cell" }, ""),
    h("span", { role: "gridcell" }, h("span", { class: "local no-file" }, noFileYet.local)),
  );
}

/** The count on the tab, the empty list's words and the "choose all" box:
 *  worked out when the data or the source changes, never on scroll. */
function refreshShown() {
  const list = state.list;
  const total = state.overview?.changes.total ?? 0;
  const source = list.source;
  const narrowed = source.kind !== "folder" || source.folder !== "";
  const all = $<HTMLInputElement>("choose-all");
  all.checked = list.rows.size > 1 && state.several.chosen.size === list.rows.size;
  // Files: a path held with no file yet is a row of Held by others, not a file.
  $("count-files").textContent = state.overview ? filesCount(list.length - list.holds.size, list.complete, total, narrowed) : "";
  const empty = $("files-empty");
  empty.hidden = list.length > 0 || !list.complete || !state.overview;
  empty.textContent = emptyListWords(source, total);
  $("files-cut").hidden = !list.cutShort;
}

/** The row elements in the page, by artifact id: kept while in view and unchanged. */
let rendered = new Map<string, { node: HTMLElement; drawn: string }>();

/** What a row element was drawn from: drawn again only when this changes,
 *  so a reload neither reloads its thumbnail nor replaces it under a click. */
function drawnFrom(row: FileRow, index: number): string {
  return `${index}|${JSON.stringify(row)}`;
}

/** Only the rows in view exist in the page; a row that stays in view keeps
 *  its element (and its loaded thumbnail). Rows not read yet are asked for
 *  (and show as empty rows meanwhile). */
export function renderRows(now: number) {
  const list = $("file-list");
  let spacer = list.querySelector<HTMLElement>(".spacer");
  if (!spacer) {
    spacer = h("div", { class: "spacer" });
    list.append(spacer);
  }
  const length = state.list.length;
  spacer.style.height = `${length * ROW_HEIGHT}px`;
  const [first, last] = visibleRange(list.scrollTop, list.clientHeight || 600, ROW_HEIGHT, length);
  state.list.need(first, Math.max(last, first + 1)).catch((error) => showError(error));
  const next = new Map<string, { node: HTMLElement; drawn: string }>();
  for (let i = first; i < last; i++) {
    const row = state.list.rows.get(i);
    const hold = row ? undefined : state.list.holds.get(i);
    if (hold) {
      const key = `hold:${hold.path}`;
      const drawn = `${i}|${JSON.stringify(hold)}`;
      const kept = rendered.get(key);
      next.set(key, { node: kept && kept.drawn === drawn ? kept.node : holdRow(hold, i, now), drawn });
    }
    if (!row) continue;
    const drawn = drawnFrom(row, i);
    const kept = rendered.get(row.artifact.id);
    const node = kept && kept.drawn === drawn ? kept.node : fileRow(row, i, now);
    const selected = row.artifact.id === state.selected;
    const chosen = state.several.chosen.has(row.artifact.id);
    node.classList.toggle("selected", selected);
    node.classList.toggle("chosen", chosen && state.several.chosen.size > 1);
    node.setAttribute("aria-selected", String(chosen || selected));
    const box = node.querySelector<HTMLInputElement>("[data-choose]");
    if (box) box.checked = chosen && state.several.chosen.size > 1;
    next.set(row.artifact.id, { node, drawn });
  }
  for (const [id, { node }] of rendered) {
    if (next.get(id)?.node !== node) {
      forgetThumbnail(node);
      node.remove();
    }
  }
  for (const { node } of next.values()) if (node.parentNode !== spacer) spacer.append(node);
  rendered = next;
  list.setAttribute("aria-rowcount", String(length));
}

/** The list's places on screen now, whatever its length was (it may have grown). */
export function onScreen(): [number, number] {
  const list = $("file-list");
  return visibleRange(list.scrollTop, list.clientHeight || 600, ROW_HEIGHT, Number.MAX_SAFE_INTEGER);
}

/** The place of the chosen file in the list, if loaded. */
function placeOf(artifact: string | null): number {
  return artifact ? state.list.find(artifact)?.[0] ?? -1 : -1;
}

export function moveSelection(by: number) {
  if (!state.list.length) return;
  const index = placeOf(state.selected);
  let next = Math.max(0, Math.min(state.list.length - 1, index < 0 ? 0 : index + by));
  // A path held with no file is passed over: there is nothing to choose.
  const step = by < 0 ? -1 : 1;
  while (state.list.holds.has(next) && next + step >= 0 && next + step < state.list.length) next += step;
  scrollIntoView(next);
  const row = state.list.rows.get(next);
  if (row) select(row.artifact.id);
}

/** Enter on a chosen file: the focus goes to its first action. */
function openSelected() {
  state.detailOpen = true;
  // The first file's (a path held with no file may come before it).
  const first = state.list.order()[0];
  if (!state.selected && first) select(first);
  else render();
  $("detail").querySelector<HTMLButtonElement>(".actions button:not([disabled])")?.focus();
}

/** The loaded files' ids, in list order. */
function order(): string[] {
  return state.list.order();
}

/** Chooses several files (or one): the detail acts on all of them. */
function choose(selection: Selection) {
  state.several = selection;
  state.selected = shownOf(selection, order());
  const at = placeOf(selection.focus);
  if (at >= 0) scrollIntoView(at);
  render();
}

function scrollIntoView(index: number) {
  const list = $("file-list");
  const top = index * ROW_HEIGHT;
  if (top < list.scrollTop) list.scrollTop = top;
  else if (top + ROW_HEIGHT > list.scrollTop + list.clientHeight) list.scrollTop = top + ROW_HEIGHT - list.clientHeight;
}

/** The keys of a list: in the list itself and in the filter box above it.
 *  Shift with an arrow extends the choice, Space (in the list) toggles the
 *  file, Ctrl+A (in the list) chooses every file shown. */
function listKeys(e: KeyboardEvent) {
  const moves: Record<string, number> = { ArrowDown: 1, ArrowUp: -1, PageDown: 10, PageUp: -10 };
  const inList = e.target === $("file-list");
  if (e.key in moves && e.shiftKey) {
    e.preventDefault();
    const from = state.several.focus ? state.several : { ...state.several, focus: state.selected, anchor: state.selected };
    choose(moved(from, order(), moves[e.key], true));
  } else if (e.key in moves) {
    e.preventDefault();
    moveSelection(moves[e.key]);
  } else if (inList && e.key === " " && state.selected) {
    e.preventDefault();
    choose(toggled(state.several, state.several.focus ?? state.selected));
  } else if (inList && e.key.toLowerCase() === "a" && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    choose(everything(order()));
  } else if (e.key === "Enter") {
    e.preventDefault();
    openSelected();
  }
}

/** How long typing pauses before the server is asked. */
export const SEARCH_PAUSE_MS = 250;
let searchTimer: number | undefined;

/** The search box: its text, after a pause in the typing, is asked of the
 *  server across the studio; emptied, the folder chosen shows again. */
function setFilter(text: string) {
  state.filter = text;
  clearTimeout(searchTimer);
  const typed = text.trim();
  $("search-hint").hidden = typed.length !== 1;
  if (typed.length === 1) return;
  searchTimer = window.setTimeout(() => showSource(typed ? { kind: "search", text: typed } : folderSource()), typed ? SEARCH_PAUSE_MS : 0);
}

/** The folder chosen in the tree, as what the list shows. */
function folderSource(): Source {
  return state.heldByOthers ? { kind: "held" } : { kind: "folder", folder: state.folder };
}

/** Shows `source` in the list from its top. A search is of every folder:
 *  meanwhile neither the tree's folder nor Held by others shows chosen. */
export function showSource(source: Source) {
  if (sameSource(source, state.list.source)) return;
  state.list.show(source);
  // Nothing another list hides stays chosen: an action on the choice acts on what is seen.
  state.several = pruned(state.several, []);
  $("file-list").scrollTop = 0;
  $("held-by-others").setAttribute("aria-pressed", String(source.kind === "held"));
  $("search-hint").hidden = true;
  hooks.sourceShown();
  render();
}

/** The tree's choice, or "Held by others": a search typed gives way to it. */
export function showFolder() {
  if (state.filter) clearSearch();
  showSource(folderSource());
}

/** Empties the search box: the folder chosen (or Held by others) shows again. */
export function clearSearch() {
  $<HTMLInputElement>("filter").value = "";
  setFilter("");
}

export function setUpFiles() {
  setUpHeads();
  hooks.onScreen = onScreen;
  onRender((now) => {
    // The count shows on every tab; the rows only on this one.
    refreshShown();
    if (state.view !== "files") return;
    renderRows(now);
  });
  const list = $("file-list");
  list.addEventListener("scroll", () => renderRows(Date.now()), { passive: true });
  // The list grows when the notices' strip below it empties: rows for the room.
  new ResizeObserver(() => {
    if (state.view === "files") renderRows(Date.now());
  }).observe(list);
  list.addEventListener("keydown", listKeys);
  // A file is chosen as the button goes down (as in a file manager): a row
  // drawn again before the button comes up cannot swallow the choice.
  list.addEventListener("pointerdown", (e) => {
    const row = (e.target as HTMLElement).closest<HTMLElement>(".row");
    // A path held with no file has nothing to choose.
    if (!row || e.button !== 0 || row.dataset.id === undefined) return;
    state.detailOpen = true;
    const id = row.dataset.id!;
    const box = (e.target as HTMLElement).closest("[data-choose]") !== null;
    const mods = { toggle: box || e.ctrlKey || e.metaKey, range: e.shiftKey };
    if (!mods.toggle && !mods.range) select(id);
    else {
      // The checkbox draws its tick from the choice, not from its own click.
      if (box) e.preventDefault();
      choose(clicked(state.several, order(), id, mods));
    }
  });
  list.addEventListener("click", (e) => {
    if ((e.target as HTMLElement).closest("[data-choose]")) e.preventDefault();
  });
  const all = $<HTMLInputElement>("choose-all");
  all.addEventListener("change", () => choose(all.checked ? everything(order()) : noSelection()));
  $("held-by-others").addEventListener("click", () => {
    // Pressed during a search, it shows the held files (it was not shown pressed).
    state.heldByOthers = state.list.source.kind === "search" || !state.heldByOthers;
    showFolder();
  });
  const filter = $<HTMLInputElement>("filter");
  filter.addEventListener("input", () => setFilter(filter.value));
  filter.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      // The first Escape empties the box (and shows every file); the next leaves it.
      e.preventDefault();
      e.stopPropagation();
      if (filter.value) {
        filter.value = "";
        setFilter("");
      } else filter.blur();
    } else listKeys(e);
  });
}
