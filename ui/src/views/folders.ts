// The folder tree beside the list: each folder with how many files are
// under it and how many of those are held, read from the app's mirror (one
// row a folder, however many files). A folder's children are read when it
// is opened; choosing one shows its files. Read again after each reload.
import { api, type FolderCount, type FolderList, type ListChanges } from "../api";
import { afterListChanges, afterReload, hooks, showError, state } from "../app";
import { count, folderLabel, heldLabel } from "../format";
import { $, h } from "../h";
import { showFolder } from "./files";

/** Each opened folder's children as last read, by folder ("" the top). */
const children = new Map<string, FolderList>();
const opened = new Set<string>([""]);
/** Every file's count and held count, the tree's first line. */
let top: FolderCount | undefined;
/** A folder's children drawn at first: a thousand folders' elements cost a
 *  launch a few hundred milliseconds, and nobody reads them all at once. */
const FIRST_CHILDREN = 200;
/** Folders whose every child is drawn ("… more folders" pressed). */
const everyChild = new Set<string>();

async function read(folder: string) {
  children.set(folder, await api.folders(folder));
}

function item(path: string, files: number, held: number): HTMLElement {
  const open = opened.has(path);
  const list = children.get(path);
  const hasChildren = path === "" || !list || list.folders.length > 0;
  // A search is of every folder: no folder shows chosen meanwhile.
  const chosen = !state.heldByOthers && state.folder === path && state.list.source.kind === "folder";
  const node = h("li", { role: "treeitem", "data-folder": path, "aria-selected": String(chosen) },
    h("button", { type: "button", class: "folder-name", "data-folder": path, title: path || "Every file" },
      hasChildren ? h("span", { class: `twisty${open ? " open" : ""}`, "aria-hidden": "true" }) : h("span", { class: "twisty none", "aria-hidden": "true" }),
      h("span", { class: "label" }, folderLabel(path)),
      h("span", { class: "count" }, count(files)),
      held ? h("span", { class: "held", title: heldLabel(held) }, heldLabel(held)) : null));
  if (hasChildren) node.setAttribute("aria-expanded", String(open));
  if (open && list) {
    const whole = everyChild.has(path) ? list.folders : list.folders.slice(0, FIRST_CHILDREN);
    const group = h("ul", { role: "group" }, ...whole.map((f) => item(f.path, Number(f.files), Number(f.held))));
    const rest = list.folders.length - whole.length;
    if (rest > 0) {
      group.append(h("li", { role: "none" },
        h("button", { type: "button", class: "folder-more", "data-more": path }, `${count(rest)} more folders…`)));
    }
    node.append(group);
  }
  return node;
}

/** What the tree's shape was drawn from: which folders, opened or chosen. */
let drawnShape = "";

/** Each folder shown with its files and held files, the top's first. */
function shown(): [string, number, number][] {
  const all: [string, number, number][] = [["", Number(top?.files ?? state.overview?.changes.total ?? 0), Number(top?.held ?? 0)]];
  for (const folder of opened) {
    const folders = children.get(folder)?.folders ?? [];
    const drawn = everyChild.has(folder) ? folders : folders.slice(0, FIRST_CHILDREN);
    for (const f of drawn) all.push([f.path, Number(f.files), Number(f.held)]);
  }
  return all;
}

/** Draws the tree from what was read: anew when its shape changed, else
 *  only the counts that did (a lease taken changes one folder's held count,
 *  not a thousand folders' elements). */
export function drawTree() {
  const tree = $("folder-tree");
  const shape = JSON.stringify([[...opened].sort(), [...everyChild].sort(), state.folder, state.heldByOthers, state.list.source.kind, shown().map(([path]) => path),
    [...opened].map((f) => children.get(f)?.folders.length ?? 0)]);
  if (shape !== drawnShape || !tree.firstElementChild) {
    drawnShape = shape;
    const scroll = tree.scrollTop;
    const [, files, held] = shown()[0];
    tree.replaceChildren(item("", files, held));
    tree.scrollTop = scroll;
    return;
  }
  const names = new Map<string, HTMLElement>();
  for (const name of tree.querySelectorAll<HTMLElement>("button[data-folder]")) names.set(name.dataset.folder!, name);
  for (const [path, files, held] of shown()) {
    const name = names.get(path);
    if (!name) continue;
    const shownCount = name.querySelector(".count")!;
    const text = count(files);
    if (shownCount.textContent !== text) shownCount.textContent = text;
    const heldNow = held ? heldLabel(held) : "";
    const badge = name.querySelector(".held");
    if ((badge?.textContent ?? "") === heldNow) continue;
    badge?.remove();
    if (held) name.append(h("span", { class: "held", title: heldNow }, heldNow));
  }
}

/** Reads every opened folder again (after a reload) and draws the tree. */
async function refreshTree() {
  try {
    await Promise.all([...[...opened].map(read), api.folderCounts([""]).then(([count]) => void (top = count))]);
  } catch (error) {
    showError(error);
  }
  for (const folder of [...opened]) if (folder && !children.has(folder)) opened.delete(folder);
  drawTree();
}

/** After others' work: the counts of the folders it named that the tree
 *  shows, as the shell sent them, put in place (a lease taken changes its
 *  folders' held counts, not the tree). */
async function patchTree(changes: ListChanges) {
  const drawn = new Set(shown().map(([path]) => path));
  const counts = new Map(changes.folders.filter((c) => drawn.has(c.path)).map((c) => [c.path, c]));
  if (!counts.size) return;
  for (const list of children.values()) {
    list.folders = list.folders.map((f) => counts.get(f.path) ?? f);
  }
  top = counts.get("") ?? top;
  drawTree();
}

/** A click on a folder chooses it (its files show) and opens or closes it. */
async function clicked(folder: string) {
  const was = state.folder;
  state.folder = folder;
  state.heldByOthers = false;
  if (folder !== "" && (was === folder || !opened.has(folder))) {
    if (opened.has(folder)) opened.delete(folder);
    else {
      opened.add(folder);
      try {
        await read(folder);
      } catch (error) {
        showError(error);
      }
    }
  }
  drawTree();
  showFolder();
}

export function setUpFolders() {
  hooks.sourceShown = drawTree;
  afterReload(refreshTree);
  afterListChanges(patchTree);
  // Held by others lists the whole studio: no folder shows chosen meanwhile.
  $("held-by-others").addEventListener("click", drawTree);
  $("folder-tree").addEventListener("click", (e) => {
    const target = e.target as HTMLElement;
    const more = target.closest<HTMLElement>("button[data-more]");
    if (more) {
      everyChild.add(more.dataset.more!);
      drawTree();
      return;
    }
    const name = target.closest<HTMLElement>("button[data-folder]");
    if (name) void clicked(name.dataset.folder!);
  });
}
