// The inbox in words, and the little arithmetic of its read marks (split
// from format.ts, the wording of the rest of the window). The desktop's
// notifications say the same in Rust (`leasedesk_desk::inbox_title`).
import type { InboxItem } from "./api";
import { count, fileName, participantName } from "./format";

/** One item: who did what to which file. "bob mentioned you in hero.psd". */
export function inboxLine(item: Pick<InboxItem, "kind" | "from" | "path">): string {
  const from = participantName(item.from);
  const file = fileName(item.path);
  switch (item.kind) {
    case "mention":
      return `${from} mentioned you in ${file}`;
    case "review_requested":
      return `${from} asked you to review ${file}`;
    case "thread_on_yours":
      return `${from} commented on your ${file}`;
    case "comment_in_yours":
      return `${from} replied in a thread on ${file}`;
    case "decision_on_yours":
      return `${from} reviewed your ${file}`;
  }
}

/** Whether an item calls for you now (a notice in the window, a desktop
 *  notification): a mention or a request to review. */
export function callsForYou(item: Pick<InboxItem, "kind">): boolean {
  return item.kind === "mention" || item.kind === "review_requested";
}

/** The Inbox tab's badge: empty when nothing is unread, "99+" past 99. */
export function unreadBadge(unread: number): string {
  if (unread <= 0) return "";
  return unread > 99 ? "99+" : count(unread);
}

/** "3 unread in your inbox", as the tray says it; "" when none is. */
export function unreadInInbox(unread: number): string {
  return unread > 0 ? `${count(unread)} unread in your inbox` : "";
}

/** What the inbox says with nothing in it. */
export const INBOX_EMPTY = "Nothing here yet: mentions, requests to review, and comments and decisions on your work come here.";

/** New items (in any order) among those shown: newest first, each once,
 *  the newer word on an item winning (its read mark). */
export function withNews(shown: InboxItem[], news: InboxItem[]): InboxItem[] {
  const bySeq = new Map(shown.map((i) => [i.seq, i]));
  for (const item of news) bySeq.set(item.seq, item);
  return [...bySeq.values()].sort((a, b) => b.seq - a.seq);
}

/** Items as they are once everything up to `upTo` is read. */
export function readUpTo(items: InboxItem[], upTo: number): InboxItem[] {
  return items.map((i) => (i.seq <= upTo && !i.read ? { ...i, read: true } : i));
}

/** The read mark opening `opened` may set: the server marks every item up
 *  to a seq, so an opened item is marked read only when no older one is
 *  unread, wherever it is (`unread` counts them all, loaded or not). Null:
 *  leave the marks as they are. */
export function markOnOpen(shown: InboxItem[], unread: number, opened: InboxItem): number | null {
  if (opened.read) return null;
  const newerUnread = shown.filter((i) => i.seq > opened.seq && !i.read).length;
  return unread === newerUnread + 1 ? opened.seq : null;
}

/** The window's notice for new items that call for you: one per item, or
 *  one for them all past three (as the desktop's). */
export function inboxNotices(news: InboxItem[]): { title: string; detail: string; item: InboxItem | null }[] {
  const calling = news.filter(callsForYou);
  if (calling.length > 3) {
    return [{ title: `${count(calling.length)} new in your inbox`, detail: "Mentions and requests to review: see them in the Inbox.", item: null }];
  }
  return calling.map((item) => ({
    title: inboxLine(item),
    detail: item.kind === "review_requested" ? `${item.path}: open it to review.` : `${item.path}: open it to answer.`,
    item,
  }));
}
