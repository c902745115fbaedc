// Review as the window says it, without the window: which of a file's
// threads a picture shows (its own, and earlier versions' marked "from
// version 3", open ones first), the review state in words ("Approved by
// bob"), and the step from one thread to the next. Tested in review.test.ts.
import type { Review } from "./generated/Review";
import type { ReviewList } from "./generated/ReviewList";
import type { Thread } from "./generated/Thread";
import { person, whose } from "./format";

/** What a picture shows: a version of the file, or a proposal (made
 *  against `base`, the version it was checked out from or rebuilt on). */
export type ReviewOf = { version: number } | { proposal: string; base: number };

/** A thread as a picture shows it: `from` names the earlier version it was
 *  opened on, when it is not this picture's own. */
export interface ShownThread {
  thread: Thread;
  from: number | null;
}

/** Whether `thread` is on the very picture `of`. A proposal's thread, once
 *  the proposal is accepted, is on the version it became too. */
export function isOn(thread: Thread, of: ReviewOf): boolean {
  return "version" in of ? thread.version === of.version : thread.proposal_id === of.proposal;
}

/** The threads `of` shows: its own, then those of earlier versions (up to
 *  a proposal's base), open ones first, each part by number. */
export function shownThreads(threads: Thread[], of: ReviewOf): ShownThread[] {
  const upTo = "version" in of ? of.version - 1 : of.base;
  const shown: ShownThread[] = [];
  for (const thread of threads) {
    if (isOn(thread, of)) shown.push({ thread, from: null });
    else if (thread.version !== null && thread.version <= upTo) shown.push({ thread, from: thread.version });
  }
  const rank = (s: ShownThread) => (s.thread.state === "open" ? 0 : 2) + (s.from === null ? 0 : 1);
  return shown.sort((a, b) => rank(a) - rank(b) || a.thread.number - b.thread.number);
}

/** "from version 3", for a thread of an earlier version. */
export function fromWords(from: number | null): string {
  return from === null ? "" : `from version ${from}`;
}

/** Each reviewer's newest decision, in the order they first decided. */
export function newestDecisions(reviews: Review[]): Review[] {
  const newest = new Map<string, Review>();
  for (const review of reviews) {
    const had = newest.get(review.reviewer);
    if (!had || had.created_at <= review.created_at) newest.set(review.reviewer, review);
  }
  return [...newest.values()];
}

/** "bob", "bob and sam", "bob, sam and you". */
export function names(people: string[], me: string | null | undefined): string {
  const said = people.map((p) => person(p, me));
  if (said.length <= 1) return said.join("");
  return `${said.slice(0, -1).join(", ")} and ${said[said.length - 1]}`;
}

/** The review state in words: "Approved by bob", "Changes requested by
 *  sam" (whoever's newest decision made it so), "Waiting for bob's review",
 *  or "Not reviewed yet". */
export function reviewWords(list: ReviewList, me: string | null | undefined): string {
  const newest = newestDecisions(list.reviews);
  const by = (decision: Review["decision"]) => names(newest.filter((r) => r.decision === decision).map((r) => r.reviewer), me);
  switch (list.state) {
    case "changes_requested":
      return `Changes requested by ${by("changes_requested")}`;
    case "approved":
      return `Approved by ${by("approved")}`;
    case "pending":
      return list.waiting_for.length === 1
        ? `Waiting for ${whose(list.waiting_for[0], me)} review`
        : `Waiting for review by ${names(list.waiting_for, me)}`;
    case "none":
      return "Not reviewed yet";
  }
}

/** Your own newest decision on it, if any: the button it pressed shows so. */
export function myDecision(list: ReviewList, me: string | null | undefined): Review["decision"] | null {
  return newestDecisions(list.reviews).find((r) => r.reviewer === me)?.decision ?? null;
}

/** The thread `by` steps from `current` among `count` (J and K), going
 *  round at the ends; the first (or last) when none is current. */
export function stepThread(current: number | null, count: number, by: 1 | -1): number | null {
  if (count === 0) return null;
  if (current === null || current < 0 || current >= count) return by === 1 ? 0 : count - 1;
  return (current + by + count) % count;
}

/** "Resolved by bob" for a resolved thread, else "". */
export function resolvedWords(thread: Thread, me: string | null | undefined): string {
  if (thread.state !== "resolved") return "";
  return thread.resolved_by ? `Resolved by ${person(thread.resolved_by, me)}` : "Resolved";
}
