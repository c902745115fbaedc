// Several files at once, in words and rules the views share: what a set of
// chosen files allows (check out all, check in all as one change, cancel
// all), how a change reads, which of your check-outs share a note, and a
// change's proposals kept together. Pure: tested without a window.
import type { Checkout, FileRow, Proposal } from "./api";
import type { Change } from "./generated/Change";
import { fileName, isMine } from "./format";

/** What the chosen files allow together: each list is every chosen file's,
 *  or null when some file does not allow it. */
export interface SeveralAllow {
  checkOut: string[] | null;
  checkIn: Checkout[] | null;
  /** Files someone else holds (why they cannot be checked out now). */
  heldByOthers: FileRow[];
}

export function whatSeveralAllow(rows: FileRow[], now: number): SeveralAllow {
  const live = (row: FileRow) => row.artifact.lease !== null && Date.parse(row.artifact.lease.expires_at) > now;
  // A check-out that cannot be checked in here (made on another device, its copy not got here) keeps the set from a Check in.
  const mine = rows.flatMap((r) => (isMine(r.mine) && !r.elsewhere ? [r.mine] : []));
  const heldByOthers = rows.filter((r) => !isMine(r.mine) && live(r));
  const free = rows.filter((r) => !isMine(r.mine) && !live(r) && r.local !== "unplaceable" && r.artifact.access !== "read");
  return {
    checkOut: free.length === rows.length ? rows.map((r) => r.artifact.id) : null,
    checkIn: mine.length === rows.length ? mine : null,
    heldByOthers,
  };
}

export function severalFiles(n: number): string {
  return n === 1 ? "1 file" : `${n} files`;
}

/** "part of a change of 3 files". */
export function partOfChange(files: number): string {
  return `part of a change of ${severalFiles(files)}`;
}

/** What a change checked in did, for a notice. */
export function changeNotice(change: Change): { title: string; body: string; proposal: boolean } {
  const n = change.files.length;
  if (change.outcome === "proposal") {
    return {
      title: "Kept as proposals",
      body: `Some of the files changed since you checked them out, so none was saved: the change of ${severalFiles(n)} waits in Proposals, to be accepted together.`,
      proposal: true,
    };
  }
  const each = change.files.map((f) => {
    const name = fileName(f.path);
    switch (f.result.outcome) {
      case "committed": return `${name} version ${f.result.version}`;
      case "unchanged": return `${name} unchanged`;
      default: return `${name} a proposal`;
    }
  });
  return { title: `${severalFiles(n)} checked in as one change`, body: `${each.join(", ")}.`, proposal: false };
}

/** Your other open check-outs with the same note as `checkout`: offered to
 *  go in with it (the designer decides). */
export function sharingNote(checkout: Checkout, mine: Checkout[]): Checkout[] {
  const note = checkout.note?.trim();
  if (!note) return [];
  return mine.filter((c) => c.id !== checkout.id && c.state === "open" && c.note?.trim() === note);
}

/** Proposals with a change's kept together (in the order of the first of
 *  each), each other one alone. */
export function groupedByChange(proposals: Proposal[]): Proposal[][] {
  const groups: Proposal[][] = [];
  const ofChange = new Map<string, Proposal[]>();
  for (const p of proposals) {
    const group = p.change_id ? ofChange.get(p.change_id) : undefined;
    if (group) group.push(p);
    else {
      const fresh = [p];
      groups.push(fresh);
      if (p.change_id) ofChange.set(p.change_id, fresh);
    }
  }
  return groups;
}
