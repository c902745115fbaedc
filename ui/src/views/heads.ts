// The list's column heads: a click on Name, Version, Holder, Size or
// Modified sorts a folder's list by it (again: reversed), read in that order
// from the app's mirror a screen at a time. The head sorted by carries
// `aria-sort` and an arrow; a search or "Held by others" (the server's
// answers, by path) keeps its order, and each head's title says so.
import { onRender, render, state } from "../app";
import { $ } from "../h";
import { ariaSort, arrow, headTitle, nextOrder, shownOrder, sortable, type SortKey } from "../sorting";

/** The sortable heads, drawn from the list's order and source. */
function renderHeads() {
  const list = state.list;
  const order = shownOrder(list.sortedBy, list.source);
  const can = sortable(list.source);
  for (const head of document.querySelectorAll<HTMLButtonElement>(".table-head .sort")) {
    const by = head.dataset.sort as SortKey;
    const label = head.firstChild?.textContent?.trim() ?? by;
    const cell = head.parentElement!;
    const sort = ariaSort(order, by);
    // Touched only when changed: the heads are drawn on every render.
    if (cell.getAttribute("aria-sort") !== sort) cell.setAttribute("aria-sort", sort);
    const title = headTitle(order, by, label, list.source);
    if (head.title !== title) head.title = title;
    const shown = arrow(order, by);
    const mark = head.querySelector(".arrow")!;
    if (mark.textContent !== shown) mark.textContent = shown;
    head.setAttribute("aria-disabled", String(!can));
  }
}

/** Sorts the folder's list by `by` (again: reversed), from its top. */
function sortBy(by: SortKey) {
  const list = state.list;
  if (!sortable(list.source)) return;
  list.sort(nextOrder(list.sortedBy, by));
  $("file-list").scrollTop = 0;
  render();
}

export function setUpHeads() {
  for (const head of document.querySelectorAll<HTMLButtonElement>(".table-head .sort")) {
    head.addEventListener("click", () => sortBy(head.dataset.sort as SortKey));
  }
  onRender(renderHeads);
}
