// A Git lock in the window's words (issue "One lock view with Git"): a
// check-out taken with `git lfs lock` reads "Locked from Git by sam until Fri
// 17:00" wherever the holder of a busy file is named, and its holder can be
// asked as any other; a path held with no file yet takes its place in Held
// by others among the files.
import { explain } from "./error-words";
import { describe, expect, it } from "vitest";
import type { FileRow, Lease } from "./api";
import type { PathHold } from "./generated/PathHold";
import {
  askable, askLabel, GIT_LOCK_NOTE, gitLockWords, heldUntil, holderName, holderNote, isGitLock, noFileYet,
} from "./format";
import { byPath, Listing, merged, type Fetcher } from "./listing";

// Local times, as the window shows them: Monday 30 November 2026, 09:00,
// and a lock until Friday 4 December, 17:00 (a week's Git lock, near its end).
const now = new Date(2026, 10, 30, 9, 0).getTime();
const friday = new Date(2026, 11, 4, 17, 0).toISOString();

const gitLock: Lease = {
  holder: "checkout:7:user:sam",
  participant: "user:sam",
  kind: "checkout",
  checkout_id: "7",
  note: "Locked from Git",
  acquired_at: new Date(2026, 10, 27, 17, 0).toISOString(),
  expires_at: friday,
};
const retouching: Lease = { ...gitLock, holder: "checkout:8:user:bob", participant: "user:bob", checkout_id: "8", note: "retouching" };

describe("a Git lock", () => {
  it("is a check-out whose note is exactly Git's", () => {
    expect(GIT_LOCK_NOTE).toBe("Locked from Git");
    expect(isGitLock(gitLock)).toBe(true);
    expect(isGitLock(retouching)).toBe(false);
    expect(isGitLock({ ...gitLock, note: null })).toBe(false);
    expect(isGitLock({ ...gitLock, note: "locked from git" })).toBe(false);
    expect(isGitLock({ ...gitLock, note: "Locked from Git: hero pass" })).toBe(false);
    expect(isGitLock({ ...gitLock, kind: "edit" })).toBe(false);
  });

  it("says who locked it from Git and until when, by day and local time", () => {
    expect(gitLockWords(gitLock, "user:me", now)).toBe("Locked from Git by sam until Fri 17:00");
    expect(gitLockWords(gitLock, "user:sam", now)).toBe("Locked from Git by you until Fri 17:00");
    expect(gitLockWords({ ...gitLock, participant: "agent:bot" }, "user:me", now)).toBe("Locked from Git by bot (agent) until Fri 17:00");
  });

  it("reads so in the file list, Held by others and the detail, and any other check-out as before", () => {
    expect(holderName(gitLock, "user:me", now)).toBe("Locked from Git by sam until Fri 17:00");
    expect(heldUntil(gitLock, "user:me", now)).toBe("Locked from Git by sam until Fri 17:00");
    expect(holderNote(gitLock)).toBeNull();
    expect(holderName(retouching, "user:me", now)).toBe("bob");
    expect(heldUntil(retouching, "user:me", now)).toBe("bob has it until Fri 17:00");
    expect(heldUntil(retouching, "user:bob", now)).toBe("You have it until Fri 17:00");
    expect(holderNote(retouching)).toBe("retouching");
  });

  it("names its holder on the busy card, without the note twice, and offers to tell when free", () => {
    const said = explain({ code: "artifact_busy", message: "busy", lease: gitLock }, now);
    expect(said.title).toBe("Locked from Git by sam until Fri 17:00");
    expect(said.detail).toMatch(/^\d+ h \d\d min left\. You can be told when it is free\.$/);
    expect(said.detail).not.toContain(GIT_LOCK_NOTE);
    expect(said.action).toBe("notify-when-free");
    const other = explain({ code: "artifact_busy", message: "busy", lease: retouching }, now);
    expect(other.title).toBe("bob has it until Fri 17:00");
    expect(other.detail).toContain("“retouching”");
  });

  it("can be asked for, as any holder's check-out", () => {
    expect(askable(gitLock, "user:me")).toBe(true);
    expect(askLabel(gitLock.participant)).toBe("Ask sam to release…");
    expect(askable(gitLock, "user:sam")).toBe(false);
    expect(askable({ ...gitLock, kind: "edit" }, "user:me")).toBe(false);
  });
});

describe("a path held with no file yet", () => {
  const hold = (path: string): PathHold => ({ path, lease: gitLock });
  const row = (path: string) => ({ artifact: { id: `id:${path}`, path, lease: retouching } }) as unknown as FileRow;

  it("says it has no version and no file", () => {
    expect(noFileYet.version).toBe("No version yet");
    expect(noFileYet.local).toBe("Not in the studio yet");
  });

  it("takes its place by path among the files, in the server's order", () => {
    const run = merged([row("art/a.psd"), row("art/c.psd")], [hold("art/b.psd"), hold("art/d.psd")]);
    expect(run.map((e) => ("row" in e ? `file ${e.row.artifact.path}` : `hold ${e.hold.path}`))).toEqual([
      "file art/a.psd", "hold art/b.psd", "file art/c.psd", "hold art/d.psd",
    ]);
    // By code point, as the server sorts (UTF-8's bytes), not by UTF-16 unit.
    expect(byPath("art/\u{1F600}.psd", "art/\uFF21.psd")).toBeGreaterThan(0);
    expect("art/\u{1F600}.psd" < "art/\uFF21.psd").toBe(true);
    expect(byPath("art/a", "art/a.psd")).toBeLessThan(0);
  });

  it("is a row of Held by others, counted, but no file to choose", async () => {
    const pages: Fetcher = {
      folder: async () => ({ total: 0, offset: 0, rows: [] }),
      found: async (_source, after) => after === null
        ? { rows: [row("art/a.psd")], holds: [hold("art/b.psd")], next: "art/b.psd" }
        : { rows: [row("art/c.psd")], holds: [], next: null },
    };
    const list = new Listing(pages, () => {});
    list.show({ kind: "held" });
    await list.refresh(0, 20);
    expect(list.length).toBe(3);
    expect(list.rows.get(0)?.artifact.path).toBe("art/a.psd");
    expect(list.holds.get(1)?.path).toBe("art/b.psd");
    expect(list.rows.has(1)).toBe(false);
    expect(list.rows.get(2)?.artifact.path).toBe("art/c.psd");
    expect(list.order()).toEqual(["id:art/a.psd", "id:art/c.psd"]);
    list.show({ kind: "folder", folder: "" });
    expect(list.holds.size).toBe(0);
  });
});
