// What of others' work is on screen beyond the list's rows: the tabs' cards
// and the open detail follow the same events the list does.
import type { ListChanges, Overview } from "./api";

/** What of a change in the list is on screen beyond the list's rows: whether
 *  a file of the overview (your check-outs, proposals, requests, whose tabs
 *  and cards show it) changed, and the chosen file, whose detail shows it.
 *  After files moved, the chosen one is read again whatever it is. */
export function touchedOnScreen(
  changes: Pick<ListChanges, "changed" | "moved">,
  on: { overview: Pick<Overview, "involved" | "proposals"> | null; selected: string | null },
): { involved: boolean; chosen: string[] } {
  const changed = new Set(changes.changed);
  const involved = (on.overview?.involved ?? []).some((r) => changed.has(r.artifact.id))
    || (on.overview?.proposals ?? []).some((p) => changed.has(p.artifact_id));
  const chosen = on.selected && (changes.moved || changed.has(on.selected)) ? [on.selected] : [];
  return { involved, chosen };
}

/** Two of the shell's changes to the list as one, the later's counts kept:
 *  what a burst of them touched, put on screen once. */
export function mergeChanges(earlier: ListChanges | undefined, later: ListChanges): ListChanges {
  if (!earlier) return later;
  const folders = new Map(earlier.folders.map((f) => [f.path, f]));
  for (const f of later.folders) folders.set(f.path, f);
  return {
    changed: [...new Set([...earlier.changed, ...later.changed])],
    moved: earlier.moved || later.moved,
    folders: [...folders.values()],
    total: later.total,
  };
}
