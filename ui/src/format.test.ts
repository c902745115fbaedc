import { describe, expect, it } from "vitest";
import type { Artifact, Closed, Code, Event, Lease } from "./api";
import type { Request } from "./api";
import { askedNotice, askLabel, charactersLeft, emptyListWords, folderLabel, heldLabel, loadingFiles, replyLine, requestLine, requestsWaiting } from "./format";
import { checkedOutOn } from "./format";
import { activityLines, describeAction } from "./activity-words";
import { explain } from "./error-words";
import { bytes, checkinOutcome, clock, fidelityNote, fullTime, getAction, leaseLost, localStateLabels, fingerprint, offlineDetail, offlineMark, participantName, sentence, serverLine, timeLeft, unplaceableAdvice, urgency, visibleRange } from "./format";

const now = Date.parse("2026-11-29T14:00:00Z");
const inMinutes = (m: number) => new Date(now + m * 60_000).toISOString();

describe("a row's full time", () => {
  it("writes the date and time as toLocaleString does (the year in full)", () => {
    const at = "2026-11-29T14:05:09Z";
    expect(fullTime(at)).toBe(new Date(at).toLocaleString());
  });
});

describe("countdowns", () => {
  it("say what is left the way a person would", () => {
    expect(timeLeft(inMinutes(125), now)).toBe("2 h 05 min");
    expect(timeLeft(inMinutes(12.5), now)).toBe("12 min");
    expect(timeLeft(new Date(now + 40_000).toISOString(), now)).toBe("40 s");
    expect(timeLeft(inMinutes(0), now)).toBe("lapsed");
    expect(timeLeft(inMinutes(-3), now)).toBe("lapsed");
  });

  it("turn amber under 30 minutes and red under 5", () => {
    expect(urgency(inMinutes(31), now)).toBe("calm");
    expect(urgency(inMinutes(30), now)).toBe("soon");
    expect(urgency(inMinutes(5), now)).toBe("urgent");
    expect(urgency(inMinutes(-1), now)).toBe("lapsed");
  });

  it("show a time of day today and a day name later in the week", () => {
    const later = new Date(now);
    later.setHours(17, 30, 0, 0);
    expect(clock(later.toISOString(), now)).toBe("17:30");
    const tomorrow = new Date(later.getTime() + 86_400_000);
    expect(clock(tomorrow.toISOString(), now)).toMatch(/^[A-Z][a-z]{2} 17:30$/);
  });
});

describe("names", () => {
  it("drop the user prefix and mark agents", () => {
    expect(participantName("user:bob")).toBe("bob");
    expect(participantName("agent:build-bot")).toBe("build-bot (agent)");
  });

  it("sizes read in binary units", () => {
    expect(bytes(512)).toBe("512 B");
    expect(bytes(1536)).toBe("1.5 KB");
    expect(bytes(3 * 1024 ** 3)).toBe("3.0 GB");
  });
});

const lease: Lease = {
  holder: "checkout:1:user:bob",
  participant: "user:bob",
  kind: "checkout",
  checkout_id: "1",
  note: "print crop",
  acquired_at: inMinutes(-10),
  expires_at: inMinutes(90),
};

describe("errors", () => {
  it("a busy file names the holder, the time, the note, and offers to notify", () => {
    const said = explain({ code: "artifact_busy", message: "busy", lease }, now);
    expect(said.title).toBe(`bob has it until ${clock(lease.expires_at, now)}`);
    expect(said.detail).toContain("“print crop”");
    expect(said.detail).toContain("1 h 30 min left");
    expect(said.action).toBe("notify-when-free");
  });

  it("a lost lease says the copy is kept and what to do", () => {
    const said = explain({ code: "checkout_closed", message: "closed" }, now);
    expect(said.title).toBe("Your check-out has ended");
    expect(said.detail).toMatch(/kept/);
  });

  it("a refused token sends the user to Settings", () => {
    expect(explain({ code: "unauthorized", message: "no" }, now).action).toBe("open-settings");
    expect(explain({ code: "no_token", message: "No token for this server" }, now).action).toBe("open-settings");
  });

  it("an unknown code still shows the message, never a raw object", () => {
    // Not a code this window knows (the type says so): its words are the message's.
    const said = explain({ code: "something_new" as Code, message: "The reason." }, now);
    expect(said.detail).toBe("The reason.");
  });
});

describe("check-in outcomes", () => {
  const artifact: Artifact = {
    id: "a",
    path: "brand/hero.psd",
    head: { version: 7, digest: "d", size: 1, author: "user:bob", committed_at: new Date(now).toISOString(), message: null, change_id: null },
    lease: null,
    access: "write",
  };
  const closed = (result: Closed["checkout"]["result"], backup: string | null = null): Closed => ({
    backup,
    checkout: {
      id: "c", artifact_id: "a", path: "brand/hero.psd", version: 6, digest: "d", actor: "user:alice", holder: "h",
      note: null, created_at: inMinutes(-60), expires_at: inMinutes(0), state: "closed", result, broken: null, change_id: null,
    },
  });

  it("a commit names its version", () => {
    expect(checkinOutcome(closed({ outcome: "committed", version: 3, digest: "d" }), artifact, now)).toBe("hero.psd saved as version 3.");
  });

  it("a proposal says who committed first and where the file went", () => {
    const proposal = {
      id: "p", artifact_id: "a", base_version: 7, test_digest: "d", provenance: { version: 7, digest: "d" }, digest: "e", size: 1, author: "user:alice",
      checkout_id: "c", state: "open" as const, created_at: new Date(now).toISOString(), message: null, change_id: null,
    };
    const said = checkinOutcome(closed({ outcome: "proposal", proposal }, "/ws/brand/hero (my changes 2026-11-29 1405).psd"), artifact, now);
    expect(said).toBe(
      `hero.psd became a proposal because bob saved version 7 at ${clock(artifact.head.committed_at, now)}. Your file is kept as “hero (my changes 2026-11-29 1405).psd”.`,
    );
  });
});

describe("the activity feed", () => {
  const at = new Date(now).toISOString();
  let seq = 100;
  const event = (type: string, data: Record<string, unknown> = {}, participant = "user:bob", when = at, artifact = "a"): Event => ({
    seq: seq--, id: `e${seq}`, type, artifact_id: artifact, participant, holder: null, at: when, data,
  });
  const pathOf = () => "brand/hero.psd";
  const later = new Date(now + 60_000).toISOString();

  it("tells one line per thing a person did, the steps of one action folded in", () => {
    // Newest first, as the feed holds them: a check-in (renew, save, release,
    // close, all at one instant), then the check-out before it.
    const events = [
      event("checkout.closed", { result: { outcome: "committed", version: 4, digest: "d" } }, "user:bob", later),
      event("lease.released", {}, "user:bob", later),
      event("version.committed", { version: 4, message: "new sky" }, "user:bob", later),
      event("lease.renewed", {}, "user:bob", later),
      event("checkout.opened", { note: "sky" }, "user:bob"),
      event("lease.acquired", {}, "user:bob"),
    ];
    expect(activityLines(events, "user:alice", pathOf).map((l) => l.text)).toEqual([
      "bob checked in hero.psd as version 4: “new sky”",
      "bob checked out hero.psd: “sky”",
    ]);
  });

  it("says you for the person using the app, and never an extend nobody clicked", () => {
    const accept = [
      event("lease.released", {}, "user:me", at, "b"),
      event("proposal.accepted", { version: 5 }, "user:me", at, "b"),
      event("version.committed", { version: 5 }, "user:me", at, "b"),
      event("lease.acquired", {}, "user:me", at, "b"),
    ];
    const lines = activityLines(accept, "user:me", () => "web/banner.png").map((l) => l.text);
    expect(lines).toEqual(["You accepted your proposal for banner.png: it is version 5 now"]);
    expect(lines.join()).not.toMatch(/checked out|extended|\bme\b/);
    expect(describeAction([event("lease.renewed", {}, "user:me")], "user:me", pathOf)).toBe("You extended the lease on hero.psd");
  });

  it("describes each kind of action in words", () => {
    const one = (e: Event, me = "user:alice") => describeAction([e], me, pathOf);
    expect(one(event("version.committed", { version: 1 }))).toBe("bob added hero.psd");
    expect(one(event("version.committed", { version: 4 }))).toBe("bob saved hero.psd as version 4");
    expect(one(event("lease.broken", { reason: "Alice is on leave", holder_participant: "user:alice" }))).toBe(
      "bob broke your lease on hero.psd: “Alice is on leave”",
    );
    expect(one(event("lease.expired", {}, "user:alice"))).toBe("Your lease on hero.psd lapsed");
    expect(one(event("lease.expired", {}, "user:carol"))).toBe("carol's lease on hero.psd lapsed");
    expect(one(event("lease.contended", { holder_participant: "user:alice" }))).toBe("bob asked for hero.psd while you had it");
    expect(describeAction([event("checkout.closed", { result: null }), event("lease.released")], "user:alice", pathOf)).toBe(
      "bob cancelled the check-out of hero.psd",
    );
    expect(describeAction([event("checkout.closed", { result: { outcome: "proposal", proposal_id: "p" } }), event("proposal.created")], "user:alice", pathOf)).toBe(
      "bob checked in hero.psd late: it became a proposal",
    );
    const files = [{ artifact_id: "a" }, { artifact_id: "b" }, { artifact_id: "c" }];
    expect(one({ ...event("change.committed", { change_id: "c1", files }, "user:alice"), artifact_id: null })).toBe(
      "You checked in hero.psd and 2 more",
    );
    expect(one(event("change.proposed", { change_id: "c2", files: files.slice(1) }))).toBe(
      "bob checked in hero.psd and 1 more late: they became proposals, to be decided together",
    );
  });

  // What a store wrote for bob's check-out of three files and their
  // check-in as one change (`leasedesk checkout` and `checkin A=… B=… C=…`),
  // oldest first as in the ledger; the feed holds them newest first.
  const ledger = (rows: [string, string | null, Record<string, unknown>, string?][], participant = "user:bob", when = at): Event[] =>
    rows.map(([type, artifact, data, holder], i) => ({
      seq: 10 + i, id: `r${i}`, type, artifact_id: artifact, participant, holder: holder ?? null, at: when, data,
    }));
  const props: Record<string, string> = { p0: "props/props-000.png", p1: "props/props-001.png", p2: "props/props-002.png" };
  const propsOf = (id: string) => props[id];
  const committed = (version: number) => ({ outcome: "committed", version, digest: "blake3:d" });
  const checkOutThree = ledger(["p0", "p1", "p2"].flatMap((id): [string, string, Record<string, unknown>, string][] => [
    ["lease.acquired", id, { kind: "checkout", expires_at: later, checkout_id: `c-${id}` }, `checkout:c-${id}:user:bob`],
    ["checkout.opened", id, { checkout_id: `c-${id}`, note: null }, `checkout:c-${id}:user:bob`],
  ]), "user:bob", at);
  const checkInThree = ledger([
    ...["p0", "p1", "p2"].map((id): [string, string, Record<string, unknown>, string] => ["lease.renewed", id, { expires_at: later }, `checkout:c-${id}:user:bob`]),
    ...["p0", "p1", "p2"].flatMap((id): [string, string, Record<string, unknown>, string?][] => [
      ["version.committed", id, { base_version: 2, change_id: "ch", digest: "blake3:d", message: null, size: 3, version: 3 }],
      ["lease.released", id, {}, `checkout:c-${id}:user:bob`],
      ["checkout.closed", id, { checkout_id: `c-${id}`, result: committed(3) }, `checkout:c-${id}:user:bob`],
    ]),
    ["change.committed", null, { change_id: "ch", files: ["p0", "p1", "p2"].map((id) => ({ artifact_id: id, checkout_id: `c-${id}`, result: committed(3) })) }],
  ], "user:bob", later);
  const newestFirst = (...runs: Event[][]) => runs.flat().sort((a, b) => b.seq - a.seq);
  checkInThree.forEach((e, i) => (e.seq = 20 + i));

  it("tells a change of three files as one line naming the first file, its steps and renewals folded in", () => {
    const lines = activityLines(newestFirst(checkOutThree, checkInThree), "user:alice", propsOf).map((l) => l.text);
    expect(lines).toEqual(["bob checked in props-000.png and 2 more", "bob checked out props-000.png and 2 more"]);
    expect(lines.join("\n")).not.toMatch(/extended|a file/);
    // bob's own feed says "You", and the line carries the newest step's number.
    const mine = activityLines(newestFirst(checkInThree), "user:bob", propsOf);
    expect(mine).toEqual([{ seq: 32, at: later, text: "You checked in props-000.png and 2 more" }]);
  });

  it("names one file's change with its version, and a late change as proposals", () => {
    const one = ledger([
      ["lease.renewed", "p1", { expires_at: later }],
      ["version.committed", "p1", { version: 4, message: "sky", change_id: "c1" }],
      ["lease.released", "p1", {}],
      ["checkout.closed", "p1", { result: committed(4) }],
      ["change.committed", null, { change_id: "c1", files: [{ artifact_id: "p1", result: committed(4) }] }],
    ]);
    expect(activityLines(newestFirst(one), null, propsOf).map((l) => l.text)).toEqual(["bob checked in props-001.png as version 4: “sky”"]);
    const proposal = { outcome: "proposal", proposal: { id: "x" } };
    const late = ledger([
      ["checkout.closed", "p2", { result: proposal }],
      ["proposal.created", "p2", { base_version: 3 }],
      ["checkout.closed", "p0", { result: proposal }],
      ["proposal.created", "p0", { base_version: 3 }],
      ["change.proposed", null, { change_id: "c2", files: [{ artifact_id: "p2" }, { artifact_id: "p0" }] }],
    ]);
    expect(activityLines(newestFirst(late), null, propsOf).map((l) => l.text)).toEqual([
      "bob checked in props-002.png and 1 more late: they became proposals, to be decided together",
    ]);
  });

  it("says a file and never a path it was not given (a file you may not read, or not known)", () => {
    const lines = activityLines(newestFirst(checkOutThree, checkInThree), "user:alice", (id) => (id === "p0" ? undefined : props[id]));
    expect(lines.map((l) => l.text)).toEqual(["bob checked in props-001.png and 2 more", "bob checked out props-001.png and 2 more"]);
    const unknown = activityLines(newestFirst(checkInThree), "user:alice", () => undefined).map((l) => l.text);
    expect(unknown).toEqual(["bob checked in 3 files"]);
    expect(describeAction([event("lease.released", {}, "user:bob", at, "gone")], null, () => undefined)).toBe("bob released a file");
  });

  it("tells a lapse found by someone else's check-out apart from it", () => {
    const taken = ledger([
      ["lease.expired", "p0", { checkout_id: "old" }],
      ["lease.acquired", "p0", {}],
      ["checkout.opened", "p0", { note: null }],
    ]);
    taken[0].participant = "user:carol";
    expect(activityLines(newestFirst(taken), "user:alice", propsOf).map((l) => l.text)).toEqual([
      "bob checked out props-000.png",
      "carol's lease on props-000.png lapsed",
    ]);
  });

  it("puts permissions and any other kind of event in words, never its type", () => {
    const permissions = { ...event("permissions.changed", {}, "user:alice"), artifact_id: null };
    expect(describeAction([permissions], "user:bob", pathOf)).toBe("alice changed the folder permissions");
    expect(describeAction([{ ...permissions, participant: null }], "user:bob", pathOf)).toBe("An admin changed the folder permissions");
    const future = event("artifact.archived_forever", {}, "user:alice");
    expect(describeAction([future], "user:bob", pathOf)).toBe("alice: artifact archived forever (hero.psd)");
    const events = [permissions, future, ...newestFirst(checkOutThree, checkInThree)];
    const feed = activityLines(events, "user:bob", pathOf).map((l) => l.text).join("\n");
    for (const type of new Set(events.map((e) => e.type))) expect(feed).not.toContain(type);
  });

  it("keeps two actions apart when their times differ, even on one file", () => {
    const events = [event("lease.released", {}, "agent:bot", later), event("lease.acquired", {}, "agent:bot", at)];
    expect(activityLines(events, null, pathOf).map((l) => l.text)).toEqual(["bot (agent) released hero.psd", "bot (agent) started editing hero.psd"]);
  });
});

describe("the file list", () => {
  it("names a folder by its last part, and counts what is held", () => {
    expect(folderLabel("")).toBe("All files");
    expect(folderLabel("brand/2026/")).toBe("2026");
    expect(heldLabel(1200)).toBe("1,200 held");
  });

  it("says why a list is empty by what it shows", () => {
    expect(emptyListWords({ kind: "search", text: "kiwi" }, 5)).toContain("kiwi");
    expect(emptyListWords({ kind: "held" }, 5)).toBe("Nobody else holds a file now.");
    expect(emptyListWords({ kind: "folder", folder: "" }, 0)).toContain("No files yet");
    expect(emptyListWords({ kind: "folder", folder: "brand/" }, 5)).toBe("No files in this folder.");
  });

  it("renders only the rows in view, however many files there are", () => {
    const [first, last] = visibleRange(48 * 5000, 480, 48, 10_000);
    expect(last - first).toBeLessThanOrEqual(10 + 12 + 1);
    expect(first).toBe(5000 - 6);
    expect(visibleRange(0, 480, 48, 3)).toEqual([0, 3]);
  });
});

describe("a lost lease", () => {
  const mine = {
    id: "c", artifact_id: "a", path: "hero.psd", version: 1, digest: "d", actor: "user:alice", holder: "h",
    note: null, created_at: inMinutes(-60), expires_at: inMinutes(-1), state: "open" as const, result: null, broken: null, change_id: null,
  };

  it("is your open check-out without the file's live lease", () => {
    expect(leaseLost(mine, { checkout_id: "c" })).toBe(false);
    expect(leaseLost(mine, null)).toBe(true);
    expect(leaseLost(mine, { checkout_id: "someone else's" })).toBe(true);
    expect(leaseLost({ ...mine, broken: { by: "user:admin", reason: "r", at: inMinutes(-2) } }, { checkout_id: "c" })).toBe(true);
  });

  it("is never claimed for a file you do not hold", () => {
    expect(leaseLost(null, null)).toBe(false);
    expect(leaseLost({ ...mine, state: "closed" }, null)).toBe(false);
  });
});

describe("a file whose name no computer can hold", () => {
  it("is labelled so, and the advice names the admin's rename", () => {
    expect(localStateLabels.unplaceable).toBe("Cannot be placed on this computer: rename it");
    const advice = unplaceableAdvice("C:x");
    expect(advice).toContain("never puts it on disk");
    expect(advice).toContain('leasedesk rename "C:x" NEW');
  });

  it("has its rename told in the activity", () => {
    const renamed = { seq: 9, id: "e", type: "artifact.renamed", artifact_id: "a", participant: "user:admin", holder: null, at: "2026-11-29T14:00:00Z", data: { from: "C:x", to: "fixed/x.psd" } } as Event;
    expect(describeAction([renamed], null, () => "fixed/x.psd")).toBe("admin renamed C:x to fixed/x.psd");
  });
});

describe("a file's copy on this computer", () => {
  it("is not on this computer when you hold it but never had it here, and offers your copy to edit", () => {
    expect(localStateLabels.not_local).toBe("Not on this computer");
    const held = getAction("not_local", true);
    expect(held).toMatchObject({ label: "Download to edit", mine: true });
    expect(held?.why).toContain("not on this computer");
    expect(held?.why).toContain("your lease stays as it is");
  });

  it("is missing only when it was here and is gone, and can be got again", () => {
    expect(localStateLabels.missing).toBe("Missing");
    expect(getAction("missing", true)).toMatchObject({ label: "Download to edit", mine: true });
    expect(getAction("missing", true)?.why).toContain("was here and is gone");
  });

  it("offers the head, read-only, for a file you do not hold", () => {
    expect(getAction("not_local", false)).toEqual({ label: "Download", mine: false });
    expect(getAction("out_of_date", false)).toEqual({ label: "Get latest", mine: false });
  });

  it("offers nothing for a copy that is here", () => {
    for (const local of ["up_to_date", "modified", "checking"] as const) {
      expect(getAction(local, true)).toBeNull();
      expect(getAction(local, false)).toBeNull();
    }
    expect(getAction("out_of_date", true)).toBeNull();
  });
});

describe("a check-out of yours made on another device", () => {
  const laptop = { id: "0123456789abcdef", name: "alice-desktop" };

  it("says which device holds the work", () => {
    expect(checkedOutOn({ device: laptop })).toBe("Checked out on alice-desktop");
    // Made on the bundled store, or before devices were kept: nothing to name.
    expect(checkedOutOn({ device: null })).toBeNull();
    expect(checkedOutOn({})).toBeNull();
  });

  it("offers the copy to edit here, with what to do, whatever the copy here is", () => {
    for (const local of ["up_to_date", "out_of_date", "modified", "not_local", "missing"] as const) {
      const get = getAction(local, true, true, "alice-desktop");
      expect(get).toMatchObject({ label: "Download to edit", mine: true });
      expect(get?.why).toContain("on alice-desktop: check it in there");
      expect(get?.why).toContain("your lease stays as it is");
      expect(get?.why).toContain("cancel the check-out");
    }
  });

  it("with no device recorded, says the copy is elsewhere or gone", () => {
    expect(getAction("not_local", true, true)?.why).toContain("you checked it out elsewhere");
    expect(getAction("missing", true, true)?.why).toContain("was here and is gone");
    expect(getAction("up_to_date", true, true)).toMatchObject({ label: "Download to edit", mine: true });
  });

  it("offers nothing more once the copy is here to edit", () => {
    expect(getAction("up_to_date", true, false, "alice-desktop")).toBeNull();
    expect(getAction("modified", true, false, "alice-desktop")).toBeNull();
  });
});

describe("offline", () => {
  const fetched = new Date(now);
  fetched.setHours(14, 2, 0, 0);

  it("marks the view kept with when it was fetched", () => {
    expect(offlineMark(fetched.toISOString(), now)).toBe("Offline since 14:02");
    expect(offlineDetail).toContain("stay writable");
    expect(offlineDetail).toContain("reconnects by itself");
    expect(offlineDetail).toMatch(/^Reconnecting…/);
  });

  it("says why a click was refused, in the core's words as a sentence", () => {
    const message = "the server cannot be reached, so your check-in was not sent: your file stays checked out and writable here, and nothing goes up until you press Check in again once the server is back";
    const said = explain({ code: "offline", message, since: fetched.toISOString() }, now);
    expect(said.title).toBe("Offline since 14:02");
    expect(said.detail).toBe(`The server cannot be reached, so your check-in was not sent: your file stays checked out and writable here, and nothing goes up until you press Check in again once the server is back.`);
    expect(said.action).toBeUndefined();
    expect(explain({ code: "unavailable", message }, now).title).toBe("The server cannot be reached");
  });

  it("turns a message into a sentence once", () => {
    expect(sentence("nothing was stored")).toBe("Nothing was stored.");
    expect(sentence("Done.")).toBe("Done.");
    expect(sentence("  ")).toBe("");
  });

  it("names the server in use without its scheme", () => {
    expect(serverLine("https://leasedesk.example:7443/")).toBe("Server: leasedesk.example:7443");
    expect(serverLine("http://127.0.0.1:7400")).toBe("Server: 127.0.0.1:7400");
  });
});

describe("a server's certificate", () => {
  it("shows its fingerprint as openssl does", () => {
    expect(fingerprint("ab01" + "cd".repeat(30))).toBe("AB:01:" + Array(30).fill("CD").join(":"));
  });

  it("sends a refused certificate to Settings, and says a changed one changed", () => {
    const untrusted = explain({ code: "certificate_untrusted", message: "invalid peer certificate: UnknownIssuer" }, now);
    expect(untrusted.title).toBe("The server's certificate is not trusted");
    expect(untrusted.action).toBe("open-settings");
    const changed = explain({ code: "certificate_changed", message: "the server's certificate changed: expected fingerprint aa, got bb" }, now);
    expect(changed.title).toBe("The server's certificate changed");
    expect(changed.detail).toContain("not the one you trusted");
    expect(changed.action).toBe("open-settings");
  });
});

describe("asking the holder", () => {
  const request: Request = {
    id: "r1", artifact_id: "a1", path: "brand/hero.psd", from: "user:bob", to: "user:alice", checkout_id: "c1",
    message: "need it for the logo fix", state: "open", reply: null,
    created_at: inMinutes(-5), replied_at: null, ended_at: null,
  };
  const clockOf = (m: number) => clock(inMinutes(m), now);

  it("names the holder on the button", () => {
    expect(askLabel("user:alice")).toBe("Ask alice to release…");
    expect(askLabel("agent:resizer")).toBe("Ask resizer (agent) to release…");
  });

  it("says who asked, when, and what", () => {
    expect(requestLine(request, "user:alice", now)).toBe(`bob asked at ${clockOf(-5)}: “need it for the logo fix”`);
    expect(requestLine({ ...request, message: null }, "user:alice", now)).toBe(`bob asked at ${clockOf(-5)}`);
    expect(requestLine(request, "user:bob", now)).toBe(`You asked at ${clockOf(-5)}: “need it for the logo fix”`);
  });

  it("gives the answer only once there is one", () => {
    expect(replyLine(request, "user:bob", now)).toBeNull();
    const replied = { ...request, state: "replied" as const, reply: "20 more minutes", replied_at: inMinutes(-1) };
    expect(replyLine(replied, "user:bob", now)).toBe(`alice answered at ${clockOf(-1)}: “20 more minutes”`);
    expect(replyLine(replied, "user:alice", now)).toBe(`You answered at ${clockOf(-1)}: “20 more minutes”`);
  });

  it("tells the asker that nothing is released without the holder", () => {
    const said = askedNotice(request);
    expect(said.title).toBe("alice is asked to release hero.psd");
    expect(said.detail).toContain("Nothing is released until they choose to");
  });

  it("counts characters as a person does, and requests as the tray does", () => {
    expect(charactersLeft("héllo 👋", 1000)).toBe("7 of 1000 characters");
    expect(requestsWaiting(1)).toBe("1 request waiting");
    expect(requestsWaiting(2)).toBe("2 requests waiting");
  });

  it("tells the activity feed who asked, answered and withdrew", () => {
    const event = (type: string, participant: string): Event => ({
      seq: 1, id: "e", type, artifact_id: "a1", participant, holder: null, at: inMinutes(0), data: { request_id: "r1" },
    });
    const pathOf = () => "brand/hero.psd";
    expect(describeAction([event("request.opened", "user:bob")], "user:alice", pathOf)).toBe("bob asked for hero.psd");
    expect(describeAction([event("request.replied", "user:alice")], "user:alice", pathOf)).toBe("You answered a request for hero.psd");
    expect(describeAction([event("request.withdrawn", "user:bob")], "user:alice", pathOf)).toBe("bob withdrew a request for hero.psd");
    expect(describeAction([event("request.ended", "user:alice")], "user:alice", pathOf)).toBe("A request for hero.psd ended");
  });

  it("explains a request to a file nobody holds any more", () => {
    const said = explain({ code: "not_held", message: "nobody holds brand/hero.psd: check it out" }, now);
    expect(said.title).toBe("Nobody holds it under a check-out now");
    expect(said.detail).toBe("Nobody holds brand/hero.psd: check it out. Your request was not sent.");
  });
});

describe("loadingFiles", () => {
  it("says how many files and how far, in whole percents", () => {
    expect(loadingFiles(340_000, 1_000_000)).toBe("Loading 1,000,000 files… 34 %");
    expect(loadingFiles(0, 0)).toBe("Loading 0 files… 0 %");
    expect(loadingFiles(12, 12)).toBe("Loading 12 files… 100 %");
  });
});

describe("a preview's fidelity", () => {
  it("names a thumbnail's application and size, and an approximate preview", () => {
    expect(fidelityNote('saved; by="Illustrator"; size=256')).toEqual({ fidelity: "saved", words: "preview saved by Illustrator, 256 px" });
    expect(fidelityNote('saved; by="Adobe Illustrator(R) 16.0"; size=2448').words).toBe("preview saved by Adobe Illustrator(R) 16.0, 2448 px");
    expect(fidelityNote("approximate")).toEqual({ fidelity: "approximate", words: "approximate preview" });
    expect(fidelityNote("exact")).toEqual({ fidelity: "exact", words: null });
    expect(fidelityNote(null)).toEqual({ fidelity: "exact", words: null });
    expect(fidelityNote('saved; by="x"; size=')).toEqual({ fidelity: "exact", words: null });
  });
});
