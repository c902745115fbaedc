// The file list: a virtual list (only the rows in view exist in the page, so
// 10,000 files scroll smoothly), each row with a thumbnail that loads only
// once the row is in view, from the `preview` protocol (cached on disk by
// digest in the app, and by address in the browser), a few at a time.
import { previewUrl, type FileRow } from "../api";
import { onRender, render, select, state } from "../app";
import { clicked, everything, inOrder, moved, noSelection, pruned, toggled, type Selection } from "../selection";
import { $, h } from "../h";
import { aborted, turns, type Turn } from "../turns";
import { clock, fileName, filesCount, folderOf, leaseLost, localStateLabels, matches, participantName, timeLeft, urgency, visibleRange } from "../format";

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
  return h("span", { class: mine ? "holder mine" : "holder" }, mine ? "You" : participantName(lease.participant),
    lease.note ? h("span", { class: "note", title: lease.note }, ` — ${lease.note}`) : null,
    h("span", { class: "visually-hidden" }, ` until ${clock(lease.expires_at, now)}`));
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
  const box = h("span", { class: "thumb", "data-kind": kind }, img);
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
    if (!signal.aborted) box.classList.add("none");
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
    h("span", { class: "name", role: "gridcell" }, h("strong", {}, fileName(artifact.path)), h("span", { class: "folder" }, folderOf(artifact.path))),
    h("span", { role: "gridcell", class: "version" }, `v${artifact.head.version}`),
    h("span", { role: "gridcell", class: "holder-cell" }, holderCell(row, now)),
    h("span", { role: "gridcell", class: "lease-cell" }, artifact.lease ? countdown(artifact.lease.expires_at, now) : ""),
    h("span", { role: "gridcell" }, h("span", { class: `local ${row.local}`, "data-local": row.local }, localStateLabels[row.local])),
  );
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
  // Nothing a filter hides stays chosen: an action on the choice acts on what is seen.
  state.several = pruned(state.several, order());
  const all = $<HTMLInputElement>("choose-all");
  all.checked = state.shown.length > 1 && state.several.chosen.size === state.shown.length;
  $("count-files").textContent = state.overview ? filesCount(state.shown.length, files.length, state.filter) : "";
  const empty = $("files-empty");
  empty.hidden = state.shown.length > 0 || !state.overview;
  empty.textContent = files.length ? "No file matches the filter." : "No files yet. Add files with the button above, or drop them here.";
}

/** The row elements in the page, by artifact id: kept while in view and unchanged. */
let rendered = new Map<string, { node: HTMLElement; drawn: string }>();

/** What a row element was drawn from: drawn again only when this changes,
 *  so a reload neither reloads its thumbnail nor replaces it under a click. */
function drawnFrom(row: FileRow, index: number): string {
  return `${index}|${JSON.stringify(row)}`;
}

/** Only the rows in view exist in the page; a row that stays in view keeps
 *  its element (and its loaded thumbnail). */
export function renderRows(now: number) {
  const list = $("file-list");
  let spacer = list.querySelector<HTMLElement>(".spacer");
  if (!spacer) {
    spacer = h("div", { class: "spacer" });
    list.append(spacer);
  }
  spacer.style.height = `${state.shown.length * ROW_HEIGHT}px`;
  const [first, last] = visibleRange(list.scrollTop, list.clientHeight || 600, ROW_HEIGHT, state.shown.length);
  const next = new Map<string, { node: HTMLElement; drawn: string }>();
  for (let i = first; i < last; i++) {
    const row = state.shown[i];
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
  list.setAttribute("aria-rowcount", String(state.shown.length));
}

export function moveSelection(by: number) {
  if (!state.shown.length) return;
  const index = state.shown.findIndex((r) => r.artifact.id === state.selected);
  const next = Math.max(0, Math.min(state.shown.length - 1, index < 0 ? 0 : index + by));
  const list = $("file-list");
  const top = next * ROW_HEIGHT;
  if (top < list.scrollTop) list.scrollTop = top;
  else if (top + ROW_HEIGHT > list.scrollTop + list.clientHeight) list.scrollTop = top + ROW_HEIGHT - list.clientHeight;
  select(state.shown[next].artifact.id);
}

/** Enter on a chosen file: the focus goes to its first action. */
function openSelected() {
  state.detailOpen = true;
  if (!state.selected && state.shown.length) select(state.shown[0].artifact.id);
  else render();
  $("detail").querySelector<HTMLButtonElement>(".actions button:not([disabled])")?.focus();
}

/** The shown files' ids, in list order. */
function order(): string[] {
  return state.shown.map((r) => r.artifact.id);
}

/** Chooses several files (or one): the detail acts on all of them. */
function choose(selection: Selection) {
  state.several = selection;
  state.selected = selection.focus ?? inOrder(selection, order())[0] ?? null;
  const at = state.shown.findIndex((r) => r.artifact.id === selection.focus);
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

function setFilter(text: string) {
  state.filter = text;
  $("file-list").scrollTop = 0;
  render();
}

export function setUpFiles() {
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
    if (!row || e.button !== 0) return;
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
