import { describe, expect, it } from "vitest";
import type { Review } from "./generated/Review";
import type { ReviewList } from "./generated/ReviewList";
import type { Thread } from "./generated/Thread";
import { fromWords, myDecision, names, resolvedWords, reviewWords, shownThreads, stepThread } from "./review";

function thread(number: number, on: { version?: number; proposal?: string }, state: "open" | "resolved" = "open"): Thread {
  return {
    id: `t${number}`, artifact_id: "a", number, version: on.version ?? null, proposal_id: on.proposal ?? null,
    pin: null, image: null, state, author: "user:bob", created_at: "2026-12-06T10:00:00Z",
    resolved_by: state === "resolved" ? "user:sam" : null, resolved_at: null, comments: [],
  };
}

function review(reviewer: string, decision: Review["decision"], at: string): Review {
  return { id: `${reviewer}-${at}`, artifact_id: "a", version: 3, proposal_id: null, reviewer, decision, message: null, created_at: at };
}

describe("the threads a picture shows", () => {
  const threads = [
    thread(1, { version: 1 }, "resolved"),
    thread(2, { version: 2 }),
    thread(3, { version: 3 }, "resolved"),
    thread(4, { version: 3 }),
    thread(5, { proposal: "p" }),
    thread(6, { version: 4 }),
    thread(7, { version: 1 }),
  ];

  it("shows a version's own and earlier versions', open first, never later ones", () => {
    const shown = shownThreads(threads, { version: 3 });
    expect(shown.map((s) => [s.thread.number, s.from])).toEqual([[4, null], [2, 2], [7, 1], [3, null], [1, 1]]);
  });

  it("shows a proposal its own and those of versions up to its base", () => {
    const shown = shownThreads(threads, { proposal: "p", base: 2 });
    expect(shown.map((s) => [s.thread.number, s.from])).toEqual([[5, null], [2, 2], [7, 1], [1, 1]]);
  });

  it("shows an accepted proposal's threads on the version it became", () => {
    const accepted = { ...thread(8, { proposal: "q" }), version: 5 };
    expect(shownThreads([accepted], { version: 5 })).toEqual([{ thread: accepted, from: null }]);
    expect(shownThreads([accepted], { proposal: "q", base: 4 })).toEqual([{ thread: accepted, from: null }]);
  });

  it("labels an earlier version's thread", () => {
    expect(fromWords(3)).toBe("from version 3");
    expect(fromWords(null)).toBe("");
  });
});

describe("the review state in words", () => {
  const list = (state: ReviewList["state"], reviews: Review[], waiting_for: string[] = []): ReviewList => ({ state, reviews, waiting_for });

  it("names who approved, by their newest decision", () => {
    const reviews = [review("user:bob", "approved", "2026-12-06T10:00:00Z"), review("user:sam", "changes_requested", "2026-12-06T10:01:00Z"), review("user:sam", "approved", "2026-12-06T10:02:00Z")];
    expect(reviewWords(list("approved", reviews), "user:alice")).toBe("Approved by bob and sam");
    expect(reviewWords(list("approved", reviews), "user:bob")).toBe("Approved by you and sam");
  });

  it("names who asked for changes", () => {
    const reviews = [review("user:bob", "approved", "2026-12-06T10:00:00Z"), review("user:sam", "changes_requested", "2026-12-06T10:01:00Z")];
    expect(reviewWords(list("changes_requested", reviews), "user:alice")).toBe("Changes requested by sam");
  });

  it("says who is waited for, and when nobody reviewed", () => {
    expect(reviewWords(list("pending", [], ["user:bob"]), "user:alice")).toBe("Waiting for bob's review");
    expect(reviewWords(list("pending", [], ["user:alice"]), "user:alice")).toBe("Waiting for your review");
    expect(reviewWords(list("pending", [], ["user:bob", "user:sam", "user:dan"]), null)).toBe("Waiting for review by bob, sam and dan");
    expect(reviewWords(list("none", []), null)).toBe("Not reviewed yet");
  });

  it("knows your own newest decision", () => {
    const reviews = [review("user:alice", "approved", "2026-12-06T10:00:00Z"), review("user:alice", "changes_requested", "2026-12-06T11:00:00Z")];
    expect(myDecision(list("changes_requested", reviews), "user:alice")).toBe("changes_requested");
    expect(myDecision(list("changes_requested", reviews), "user:bob")).toBeNull();
  });

  it("joins names as a sentence does", () => {
    expect(names([], null)).toBe("");
    expect(names(["user:bob"], null)).toBe("bob");
    expect(names(["agent:bot", "user:bob"], "user:bob")).toBe("bot (agent) and you");
  });

  it("says who resolved a thread", () => {
    expect(resolvedWords(thread(1, { version: 1 }, "resolved"), "user:sam")).toBe("Resolved by you");
    expect(resolvedWords(thread(1, { version: 1 }), null)).toBe("");
  });
});

describe("stepping through threads", () => {
  it("goes round at the ends, starting at the first or the last", () => {
    expect(stepThread(null, 3, 1)).toBe(0);
    expect(stepThread(null, 3, -1)).toBe(2);
    expect(stepThread(0, 3, 1)).toBe(1);
    expect(stepThread(2, 3, 1)).toBe(0);
    expect(stepThread(0, 3, -1)).toBe(2);
    expect(stepThread(7, 3, 1)).toBe(0);
    expect(stepThread(null, 0, 1)).toBeNull();
  });
});
