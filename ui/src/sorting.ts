// The orders of a folder's list: which column it is sorted by, what a click
// on a column's head does, and what the head says. A folder's files are
// read in order from the app's mirror (an index per column), so any order
// costs a screen; a search and "Held by others" are the server's answers,
// by path, and keep that order.
import type { ListOrder } from "./generated/ListOrder";
import type { SortKey } from "./generated/SortKey";
import type { Source } from "./listing";

export type { ListOrder, SortKey };

/** The list's order until a head is clicked: by name (the path). */
export const BY_NAME: ListOrder = { by: "path", descending: false };

/** The order after a click on `by`'s head: by it, from the smallest (or
 *  the first name, the oldest, the first holder, free files first); a
 *  second click reverses it. */
export function nextOrder(current: ListOrder, by: SortKey): ListOrder {
  return current.by === by ? { by, descending: !current.descending } : { by, descending: false };
}

/** Whether `source`'s list can be sorted: a folder's; a search or "Held by
 *  others" comes from the server by path. */
export function sortable(source: Source): boolean {
  return source.kind === "folder";
}

/** The order `source`'s list is shown in. */
export function shownOrder(order: ListOrder, source: Source): ListOrder {
  return sortable(source) ? order : BY_NAME;
}

/** What `aria-sort` says on `by`'s head. */
export function ariaSort(order: ListOrder, by: SortKey): "ascending" | "descending" | "none" {
  if (order.by !== by) return "none";
  return order.descending ? "descending" : "ascending";
}

/** The arrow beside `by`'s head: up ascending, down descending, none when
 *  the list is not sorted by it. */
export function arrow(order: ListOrder, by: SortKey): string {
  if (order.by !== by) return "";
  return order.descending ? "▼" : "▲";
}

const directions: Record<SortKey, [string, string]> = {
  path: ["A to Z", "Z to A"],
  size: ["smallest first", "largest first"],
  modified: ["oldest first", "newest first"],
  version: ["lowest first", "highest first"],
  holder: ["free files first, then by holder", "by holder, free files last"],
};

/** The head's title: how the list is sorted and what a click does, or why
 *  it cannot be sorted now. */
export function headTitle(order: ListOrder, by: SortKey, label: string, source: Source): string {
  if (!sortable(source)) {
    const what = source.kind === "search" ? "Search results" : "Files held by others";
    return `${what} are listed by path; choose a folder to sort by ${label.toLowerCase()}`;
  }
  const [up, down] = directions[by];
  if (order.by !== by) return `Sort by ${label.toLowerCase()}, ${up}`;
  return order.descending
    ? `Sorted by ${label.toLowerCase()}, ${down}: click for ${up}`
    : `Sorted by ${label.toLowerCase()}, ${up}: click for ${down}`;
}
