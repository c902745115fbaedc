// The file list's selection of several files, as a file manager's: a click
// chooses one file, Ctrl (⌘) toggles one, Shift takes the range from the
// anchor, and the keyboard does the same (Space toggles, Shift+arrows
// extend). Pure functions over the ids in the list's order, so they are
// tested without a window.

export interface Selection {
  /** The chosen files' ids. */
  chosen: Set<string>;
  /** Where a Shift range starts: the last file clicked without Shift. */
  anchor: string | null;
  /** The file the keyboard is on: the last one clicked or moved to. */
  focus: string | null;
}

export const noSelection = (): Selection => ({ chosen: new Set(), anchor: null, focus: null });

export interface Modifiers {
  /** Ctrl, or ⌘ on a Mac. */
  toggle: boolean;
  /** Shift. */
  range: boolean;
}

/** The ids from `a` to `b` in list order, both included (nothing if either is not shown). */
function between(order: string[], a: string, b: string): string[] {
  const [i, j] = [order.indexOf(a), order.indexOf(b)];
  if (i < 0 || j < 0) return [];
  return order.slice(Math.min(i, j), Math.max(i, j) + 1);
}

/** A click on `id` with `mods` held. */
export function clicked(selection: Selection, order: string[], id: string, mods: Modifiers): Selection {
  if (mods.range && selection.anchor && order.includes(selection.anchor)) {
    const range = between(order, selection.anchor, id);
    const chosen = mods.toggle ? new Set([...selection.chosen, ...range]) : new Set(range);
    return { chosen, anchor: selection.anchor, focus: id };
  }
  if (mods.toggle) return toggled(selection, id);
  return { chosen: new Set([id]), anchor: id, focus: id };
}

/** `id` added to the selection, or taken out of it (a checkbox, Space). */
export function toggled(selection: Selection, id: string): Selection {
  const chosen = new Set(selection.chosen);
  if (chosen.has(id)) chosen.delete(id);
  else chosen.add(id);
  return { chosen, anchor: id, focus: id };
}

/** The keyboard moved the focus by `by` rows: alone it chooses that file;
 *  with Shift the range from the anchor grows or shrinks to it. */
export function moved(selection: Selection, order: string[], by: number, extend: boolean): Selection {
  if (!order.length) return selection;
  const at = selection.focus ? order.indexOf(selection.focus) : -1;
  const next = order[Math.max(0, Math.min(order.length - 1, at < 0 ? 0 : at + by))];
  if (!extend) return { chosen: new Set([next]), anchor: next, focus: next };
  const anchor = selection.anchor && order.includes(selection.anchor) ? selection.anchor : next;
  return { chosen: new Set(between(order, anchor, next)), anchor, focus: next };
}

/** Every file shown (Ctrl+A). */
export function everything(order: string[]): Selection {
  return { chosen: new Set(order), anchor: order[0] ?? null, focus: order[order.length - 1] ?? null };
}

/** Only what is still shown (after a filter or a reload): nothing hidden is acted on. */
export function pruned(selection: Selection, order: string[]): Selection {
  const shown = new Set(order);
  const chosen = new Set([...selection.chosen].filter((id) => shown.has(id)));
  if (chosen.size === selection.chosen.size) return selection;
  return { chosen, anchor: selection.anchor, focus: selection.focus };
}

/** The chosen ids in list order. */
export function inOrder(selection: Selection, order: string[]): string[] {
  return order.filter((id) => selection.chosen.has(id));
}

/** The file whose detail shows for a choice: the focused one if it is still
 *  chosen (a row taken out with Ctrl-click keeps no tint), else the first
 *  chosen in list order, else none. */
export function shownOf(selection: Selection, order: string[]): string | null {
  if (selection.focus && selection.chosen.has(selection.focus)) return selection.focus;
  return inOrder(selection, order)[0] ?? null;
}
