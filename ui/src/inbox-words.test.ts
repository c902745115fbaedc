import { describe, expect, it } from "vitest";
import type { InboxItem } from "./api";
import { callsForYou, inboxLine, inboxNotices, markOnOpen, readUpTo, unreadBadge, unreadInInbox, withNews } from "./inbox-words";

function item(seq: number, kind: InboxItem["kind"] = "mention", read = false, from = "user:bob"): InboxItem {
  return {
    seq,
    kind,
    artifact_id: `a${seq}`,
    path: "brand/hero.psd",
    thread_id: `t${seq}`,
    review_id: null,
    from,
    at: "2026-12-06T16:00:00Z",
    read,
  };
}

describe("the inbox's words", () => {
  it("say who did what to which file", () => {
    expect(inboxLine(item(1, "mention"))).toBe("bob mentioned you in hero.psd");
    expect(inboxLine(item(1, "review_requested", false, "user:sam"))).toBe("sam asked you to review hero.psd");
    expect(inboxLine(item(1, "thread_on_yours"))).toBe("bob commented on your hero.psd");
    expect(inboxLine(item(1, "comment_in_yours"))).toBe("bob replied in a thread on hero.psd");
    expect(inboxLine(item(1, "decision_on_yours", false, "agent:lint"))).toBe("lint (agent) reviewed your hero.psd");
  });

  it("count unread items on the tab and as the tray does", () => {
    expect(unreadBadge(0)).toBe("");
    expect(unreadBadge(3)).toBe("3");
    expect(unreadBadge(99)).toBe("99");
    expect(unreadBadge(100)).toBe("99+");
    expect(unreadInInbox(0)).toBe("");
    expect(unreadInInbox(1)).toBe("1 unread in your inbox");
    expect(unreadInInbox(1200)).toBe("1,200 unread in your inbox");
  });

  it("interrupt only for mentions and requests to review, one notice for a flood", () => {
    expect(callsForYou(item(1, "mention"))).toBe(true);
    expect(callsForYou(item(1, "review_requested"))).toBe(true);
    expect(callsForYou(item(1, "thread_on_yours"))).toBe(false);
    const some = inboxNotices([item(1, "thread_on_yours"), item(2, "review_requested", false, "user:sam")]);
    expect(some).toEqual([{ title: "sam asked you to review hero.psd", detail: "brand/hero.psd: open it to review.", item: item(2, "review_requested", false, "user:sam") }]);
    const flood = inboxNotices([1, 2, 3, 4, 5].map((n) => item(n)));
    expect(flood).toHaveLength(1);
    expect(flood[0].title).toBe("5 new in your inbox");
    expect(flood[0].item).toBeNull();
    expect(inboxNotices([1, 2, 3].map((n) => item(n)))).toHaveLength(3);
  });
});

describe("the inbox's items", () => {
  it("take news newest first, each once", () => {
    const shown = [item(5), item(3)];
    const merged = withNews(shown, [item(6), item(5, "mention", true), item(7)]);
    expect(merged.map((i) => i.seq)).toEqual([7, 6, 5, 3]);
    expect(merged.find((i) => i.seq === 5)?.read).toBe(true);
  });

  it("are read up to a mark, never past it", () => {
    const read = readUpTo([item(9), item(5), item(2)], 5);
    expect(read.map((i) => i.read)).toEqual([false, true, true]);
  });

  it("are marked read on opening only when nothing older is unread", () => {
    const shown = [item(9), item(7), item(5)];
    // 9, 7 and 5 unread, and nothing else: opening 5 (the oldest) marks it.
    expect(markOnOpen(shown, 3, shown[2])).toBe(5);
    // Opening 9 would mark 7 and 5 too: left be.
    expect(markOnOpen(shown, 3, shown[0])).toBeNull();
    // An unread item not loaded (older than 5): left be.
    expect(markOnOpen(shown, 4, shown[2])).toBeNull();
    // Already read: nothing to mark.
    expect(markOnOpen([item(4, "mention", true)], 0, item(4, "mention", true))).toBeNull();
    // Only newer ones unread besides it: marking up to it is exact.
    const mixed = [item(9), item(7, "mention", true), item(5)];
    expect(markOnOpen(mixed, 2, mixed[2])).toBe(5);
  });
});
