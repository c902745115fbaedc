// The folder tree beside the list: each folder with how many files are
// under it and how many of those are held, read from the app's mirror (one
// row a folder, however many files). A folder's children are read when it
// is opened; choosing one shows its files. Read again after each reload.
import { api, type FolderList } from "../api";
import { afterReload, showError, state } from "../app";
import { folderLabel, heldLabel } from "../format";
import { $, h } from "../h";
import { showFolder } from "./files";

/** Each opened folder's children as last read, by folder ("" the top). */
const children = new Map<string, FolderList>();
const opened = new Set<string>([""]);

async function read(folder: string) {
  children.set(folder, await api.folders(folder));
}

function item(path: string, files: number, held: number): HTMLElement {
  const open = opened.has(path);
  const list = children.get(path);
  const hasChildren = path === "" || !list || list.folders.length > 0;
  const chosen = !state.heldByOthers && state.folder === path;
  const node = h("li", { role: "treeitem", "data-folder": path, "aria-selected": String(chosen) },
    h("button", { type: "button", class: "folder-name", "data-folder": path, title: path || "Every file" },
      hasChildren ? h("span", { class: `twisty${open ? " open" : ""}`, "aria-hidden": "true" }) : h("span", { class: "twisty none", "aria-hidden": "true" }),
      h("span", { class: "label" }, folderLabel(path)),
      h("span", { class: "count" }, files.toLocaleString("en-US")),
      held ? h("span", { class: "held", title: heldLabel(held) }, heldLabel(held)) : null));
  if (hasChildren) node.setAttribute("aria-expanded", String(open));
  if (open && list) {
    node.append(h("ul", { role: "group" }, ...list.folders.map((f) => item(f.path, Number(f.files), Number(f.held)))));
  }
  return node;
}

/** Draws the tree from what was read. */
export function drawTree() {
  const top = children.get("");
  const total = state.overview?.total ?? 0;
  const held = top ? top.folders.reduce((n, f) => n + Number(f.held), 0) : 0;
  const tree = $("folder-tree");
  const scroll = tree.scrollTop;
  tree.replaceChildren(item("", total, held));
  tree.scrollTop = scroll;
}

/** Reads every opened folder again (after a reload) and draws the tree. */
async function refreshTree() {
  try {
    await Promise.all([...opened].map(read));
  } catch (error) {
    showError(error);
  }
  for (const folder of [...opened]) if (folder && !children.has(folder)) opened.delete(folder);
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
  afterReload(refreshTree);
  // Held by others lists the whole studio: no folder shows chosen meanwhile.
  $("held-by-others").addEventListener("click", drawTree);
  $("folder-tree").addEventListener("click", (e) => {
    const name = (e.target as HTMLElement).closest<HTMLElement>("button[data-folder]");
    if (name) void clicked(name.dataset.folder!);
  });
}
