import { describe, expect, it } from "vitest";
import type { Checkout, FileRow, Proposal } from "./api";
import type { Change } from "./generated/Change";
import { changeNotice, groupedByChange, partOfChange, sharingNote, whatSeveralAllow } from "./changes";

const now = Date.parse("2026-12-02T10:00:00Z");
const later = "2026-12-02T18:00:00Z";
const earlier = "2026-12-02T09:00:00Z";

function checkout(id: string, note: string | null = null): Checkout {
  return {
    id, artifact_id: `a-${id}`, path: `layout/${id}.psd`, version: 1, digest: "blake3:00", actor: "user:alice",
    holder: `checkout:${id}:user:alice`, note, created_at: earlier, expires_at: later, state: "open", result: null,
    broken: null, change_id: null,
  };
}

function row(id: string, holder: "free" | "mine" | "bob" | "lapsed", access: "read" | "write" = "write"): FileRow {
  const mine = holder === "mine" ? checkout(id) : null;
  const lease = holder === "free" ? null : {
    holder: "x", participant: holder === "bob" ? "user:bob" : "user:alice", kind: "checkout" as const, checkout_id: mine?.id ?? null,
    note: null, acquired_at: earlier, expires_at: holder === "lapsed" ? earlier : later,
  };
  return {
    artifact: { id: `a-${id}`, path: `layout/${id}.psd`, head: { version: 1, digest: "blake3:00", size: 1, author: "user:alice", committed_at: earlier, message: null, change_id: null }, lease, access },
    local: "up_to_date", mine, local_path: null, elsewhere: false,
  };
}

describe("several chosen files", () => {
  it("are checked out together only when every one is free (a lapsed lease is free)", () => {
    expect(whatSeveralAllow([row("a", "free"), row("b", "lapsed")], now).checkOut).toEqual(["a-a", "a-b"]);
    const held = whatSeveralAllow([row("a", "free"), row("b", "bob")], now);
    expect(held.checkOut).toBeNull();
    expect(held.heldByOthers.map((r) => r.artifact.id)).toEqual(["a-b"]);
    expect(whatSeveralAllow([row("a", "free"), row("b", "mine")], now).checkOut).toBeNull();
    expect(whatSeveralAllow([row("a", "free"), row("b", "free", "read")], now).checkOut).toBeNull();
  });

  it("are checked in together only when every one is your open check-out", () => {
    expect(whatSeveralAllow([row("a", "mine"), row("b", "mine")], now).checkIn?.map((c) => c.id)).toEqual(["a", "b"]);
    expect(whatSeveralAllow([row("a", "mine"), row("b", "free")], now).checkIn).toBeNull();
    // One made on another device, its copy not got here, cannot be checked in from here.
    expect(whatSeveralAllow([row("a", "mine"), { ...row("b", "mine"), elsewhere: true }], now).checkIn).toBeNull();
  });
});

describe("a change", () => {
  const files = (outcome: "committed" | "unchanged") => ({ artifact_id: "a-a", path: "layout/a.psd", checkout_id: "a", result: { outcome, version: 2, digest: "blake3:00" } });
  const change = (outcome: Change["outcome"]): Change => ({
    id: "c", message: "logo", author: "user:alice", created_at: earlier, outcome,
    files: [files("committed"), { ...files("unchanged"), path: "layout/b.psd" }],
  });

  it("says what each file became, or that it waits as proposals to accept together", () => {
    expect(changeNotice(change("committed"))).toEqual({
      title: "2 files checked in as one change", body: "a.psd version 2, b.psd unchanged.", proposal: false,
    });
    const kept = changeNotice(change("proposal"));
    expect(kept.proposal).toBe(true);
    expect(kept.body).toContain("to be accepted together");
    expect(partOfChange(3)).toBe("part of a change of 3 files");
  });

  it("offers your other check-outs with the same note, and only those", () => {
    const mine = [checkout("a", "logo fix"), checkout("b", " logo fix "), checkout("c", "other"), checkout("d")];
    expect(sharingNote(mine[0], mine).map((c) => c.id)).toEqual(["b"]);
    expect(sharingNote(mine[3], mine)).toEqual([]);
  });

  it("keeps a change's proposals together, in the order of the first", () => {
    const p = (id: string, change: string | null) => ({ id, change_id: change }) as Proposal;
    const groups = groupedByChange([p("1", "x"), p("2", null), p("3", "x"), p("4", "y")]);
    expect(groups.map((g) => g.map((q) => q.id))).toEqual([["1", "3"], ["2"], ["4"]]);
  });
});
