// The words and rules behind what a designer met on a first afternoon
// (issues 20 and 36): each would read wrong, or do wrong, if the code were wrong.
import { explain, revealFailed } from "./error-words";
import { describe, expect, it } from "vitest";
import {
  acceptQuestion, checkinWarning, count, decisionOutcome, decisionWords, deviceLine, filesCount, leaseChoices, nextZoom, noticeLasts, person, personFirst,
  plainNames, proposalSummary, versionsWords, sentence, viewOnly, serverAddressProblem, settingsProblem, whose, zoomPercent,
} from "./format";
import { comparedLine } from "./compared";
import type { Code } from "./api";

describe("the Files count", () => {
  it("is every file when nothing narrows the list, and 'N of M' while something does", () => {
    expect(filesCount(5, true, 5, false)).toBe("5");
    expect(filesCount(3, true, 5, true)).toBe("3 of 5");
  });

  it("writes every count alike, with thousands marked, never '0+' before the first page", () => {
    expect(filesCount(3002, true, 3002, false)).toBe("3,002");
    expect(filesCount(2802, true, 3002, true)).toBe("2,802 of 3,002");
    expect(filesCount(1000, false, 3002, true)).toBe("1,000+ of 3,002");
    expect(filesCount(0, false, 3002, true)).toBe("… of 3,002");
    expect(count(2802)).toBe("2,802");
  });
});

describe("you", () => {
  it("is the person using the app, wherever they are named", () => {
    expect(person("user:me", "user:me")).toBe("you");
    expect(personFirst("user:me", "user:me")).toBe("You");
    expect(whose("user:me", "user:me")).toBe("your");
    expect(person("user:bob", "user:me")).toBe("bob");
    expect(whose("user:bob", "user:me")).toBe("bob's");
    expect(whose("agent:bot", "user:me")).toBe("bot (agent)'s");
  });
});

describe("a proposal", () => {
  const mine = { author: "user:me", provenance: { version: 2 }, base_version: 4 };

  it("says what it was made from, and what happened since", () => {
    expect(proposalSummary(mine, { version: 4, author: "user:bob" }, "user:me")).toBe(
      "You made this from version 2; since then versions 3 to 4 were saved, the newest by bob.",
    );
    expect(proposalSummary({ ...mine, provenance: { version: 3 } }, { version: 4, author: "user:bob" }, "user:me")).toBe(
      "You made this from version 3; since then bob saved version 4.",
    );
  });

  it("names each saver since, never the head's author for all (issue 36)", () => {
    const savers = [{ version: 3, author: "user:bob" }, { version: 4, author: "user:bob" }, { version: 5, author: "user:me" }];
    expect(proposalSummary(mine, { version: 5, author: "user:me" }, "user:me", savers)).toBe(
      "You made this from version 2; since then bob saved versions 3 and 4 and you saved version 5.",
    );
    expect(versionsWords([3, 4, 5, 6])).toBe("versions 3 to 6");
    expect(versionsWords([3, 5, 7])).toBe("versions 3, 5 and 7");
    // Savers not all read: only what is known is said.
    expect(proposalSummary(mine, { version: 5, author: "user:me" }, "user:me", savers.slice(1))).toBe(
      "You made this from version 2; since then versions 3 to 5 were saved, the newest by you.",
    );
  });

  it("says in plain words what each decision does", () => {
    const words = decisionWords(mine, { version: 4, author: "user:bob" }, "user:me");
    expect(words.accept).toBe("Accept: your version becomes version 5; bob's version 4 stays in the history.");
    expect(words.reject).toBe("Reject: bob's version 4 stays the head; your version is kept in the history, marked rejected.");
    expect(words.rebuild).toContain("not needed");
    const moved = decisionWords(mine, { version: 6, author: "user:bob" }, "user:me");
    expect(moved.accept).toContain("rebuild it first");
    expect(moved.rebuild).toBe("Rebuild: makes this a proposal against version 6, the head now, so it can be accepted. Nothing else changes.");
  });

  it("asks before superseding someone else's head, and not your own", () => {
    const question = acceptQuestion(mine, { version: 4, author: "user:bob" }, "user:me");
    expect(question?.title).toBe("Replace bob's version 4 as the head?");
    expect(question?.body).toContain("Your version becomes version 5");
    expect(question?.body).toContain("bob's version 4 stays in the history");
    expect(question?.confirm).toBe("Accept as version 5");
    expect(acceptQuestion(mine, { version: 4, author: "user:me" }, "user:me")).toBeNull();
  });
});

describe("a compare", () => {
  it("never calls two different files identical", () => {
    const a = { digest: "a", size: 750 * 1024 };
    const b = { digest: "b", size: 755 * 1024 };
    expect(comparedLine(0, 100, a, b)).toBe("The pixels are identical; the file changed (755 KB, was 750 KB)");
    expect(comparedLine(0, 100, a, { ...b, size: a.size })).toBe("The pixels are identical; the file changed (the same size, 750 KB)");
    expect(comparedLine(0, 100, a, a)).toBe("identical: the same file");
    expect(comparedLine(0, 100)).toBe("identical");
    expect(comparedLine(5, 100, a, b)).toBe("5.0 % of pixels differ");
    // A local copy marked modified, re-encoded with the same pixels (issue 36).
    expect(comparedLine(0, 100, a, { digest: null, size: null })).toBe(
      "The pixels are identical; the file changed (saved again, re-encoded or with other metadata)",
    );
  });
});

describe("the check-out's length", () => {
  it("says how long the default is, then the other choices", () => {
    expect(leaseChoices(8 * 3600)).toEqual([["0", "8 hours (default)"], ["1", "1 hour"], ["4", "4 hours"], ["24", "24 hours"]]);
    expect(leaseChoices(90 * 60)[0]).toEqual(["0", "90 minutes (default)"]);
    expect(leaseChoices(3600).map(([, label]) => label)).not.toContain("1 hour");
  });
});

describe("a reveal that failed", () => {
  it("says so in words, with the path, and nothing of D-Bus", () => {
    const said = explain({ code: "reveal", message: "org.freedesktop.DBus.Error.ServiceUnknown: …", path: "/home/a/Leasedesk/brand/hero.psd" }, 0);
    expect(said).toEqual(revealFailed("/home/a/Leasedesk/brand/hero.psd"));
    expect(said.detail).toContain("/home/a/Leasedesk/brand/hero.psd");
    expect(`${said.title} ${said.detail}`).not.toMatch(/DBus|freedesktop/);
  });
});

describe("Settings", () => {
  it("refuses an address that is empty or not one, before saving", () => {
    expect(serverAddressProblem("")).toMatch(/^Enter your studio's server address/);
    expect(serverAddressProblem(" , ")).toMatch(/^Enter/);
    expect(serverAddressProblem("leasedesk.example")).toContain("is not an address");
    expect(serverAddressProblem("ftp://leasedesk.example")).toContain("starts with https://");
    expect(serverAddressProblem("https://leasedesk.example/v1?x=1")).toContain("more than a server");
    expect(serverAddressProblem("https://leasedesk.example:7443")).toBeNull();
    expect(serverAddressProblem("https://a.example:7443, https://b.example:7443/")).toBeNull();
  });

  it("says its errors for where the user is: never 'open Settings' inside Settings", () => {
    const codes: Code[] = ["no_server", "no_token", "unauthorized", "unavailable", "offline", "certificate_untrusted", "internal"];
    for (const code of codes) {
      const said = settingsProblem({ code, message: "No server is set: open Settings and enter your studio's server address." });
      expect(said, code).not.toMatch(/open settings/i);
      expect(said.length, code).toBeGreaterThan(10);
    }
    expect(settingsProblem({ code: "unavailable", message: "x" })).toContain("No server answers at this address");
  });
});

describe("the window's zoom", () => {
  it("steps through the usual levels and shows as a percentage", () => {
    expect(nextZoom(1, 1)).toBe(1.1);
    expect(nextZoom(1, -1)).toBe(0.9);
    expect(nextZoom(3, 1)).toBe(3);
    expect(nextZoom(0.5, -1)).toBe(0.5);
    expect(nextZoom(1.3, 1)).toBe(1.5);
    expect(zoomPercent(1.25)).toBe("125 %");
    expect(zoomPercent(2)).toBe("200 %");
  });
});

describe("a notice's life", () => {
  it("stays a minute when it offers buttons, so a request can be answered from it", () => {
    expect(noticeLasts("info", true)).toBe(60_000);
    expect(noticeLasts("error", true)).toBe(60_000);
    expect(noticeLasts("info", false)).toBe(7_000);
    expect(noticeLasts("error", false)).toBe(15_000);
  });
});

describe("a file you may only view", () => {
  it("says which folder, in place of Check out", () => {
    expect(viewOnly("brand/approved/logo.psd")).toBe("You can view brand/approved/, not change it");
    expect(viewOnly("logo.psd")).toBe("You can view this file, not change it");
  });
});

describe("your devices", () => {
  it("name this one and say when each was last used", () => {
    const now = Date.parse("2026-12-02T15:00:00Z");
    const laptop = { id: "a1", name: "carol's laptop", created_at: "", last_used_at: null };
    expect(deviceLine(laptop, "b2", now)).toBe("carol's laptop, not used yet");
    const desk = { id: "b2", name: "studio desktop", created_at: "", last_used_at: new Date(now).toISOString() };
    expect(deviceLine(desk, "b2", now)).toMatch(/^studio desktop \(this device\), last used \d\d:\d\d$/);
  });
});

describe("words for a known refusal (issue 36)", () => {
  const now = Date.parse("2026-12-06T10:00:00Z");
  const head = { version: 4, digest: "d", size: 1, author: "user:alice", committed_at: "2026-12-06T09:00:00Z", message: null, change_id: null };

  it("says what an accept refused against a moved head means, not 'Something went wrong'", () => {
    const said = explain({ code: "proposal_stale", message: "the head moved to version 4 by user:alice", head }, now);
    expect(said.title).toBe("The head moved on: alice saved version 4");
    expect(said.detail).toContain("Rebuild it against the head");
    for (const code of ["invalid", "bad_request", "too_many", "invite_invalid", "not_staged", "deadline_exceeded", "upload_incomplete"] as const) {
      expect(explain({ code, message: "x" }, now).title).not.toBe("Something went wrong");
    }
  });

  it("names people as the window does, never user:alice", () => {
    expect(plainNames("held by user:alice until 10:00; asked by agent:build-bot")).toBe("held by alice until 10:00; asked by build-bot (agent)");
    expect(sentence("checkout abc is not user:bob's")).toBe("Checkout abc is not bob's.");
    expect(explain({ code: "internal", message: "lease of user:alice" }, now).detail).toBe("Lease of alice.");
  });

  it("says 'saved', not 'committed'", () => {
    expect(explain({ code: "stale", message: "", head }, now).title).toMatch(/^alice saved version 4 at /);
  });

  it("tells an accept with the version it made", () => {
    expect(decisionOutcome("accept", "hero.psd", 5)).toBe("Proposal for hero.psd accepted: it is version 5, the head");
    expect(decisionOutcome("rebuild", "hero.psd", 5)).toBe("Proposal for hero.psd rebuilt against version 5: it can be accepted now");
  });
});

describe("the check-in dialog's warning (issue 36)", () => {
  const checkout = { id: "c1", version: 3, broken: null };
  const free = { head: { version: 3, author: "user:me" }, lease: { checkout_id: "c1", participant: "user:me" } };

  it("warns when the check-in will be kept as a proposal, saying why", () => {
    expect(checkinWarning(checkout, { ...free, head: { version: 4, author: "user:bob" } }, "user:me")).toBe(
      "bob saved version 4 after you checked out version 3: this check-in will be kept as a proposal for a decision, and nothing is overwritten.",
    );
    expect(checkinWarning({ ...checkout, broken: { by: "user:admin" } }, { ...free, lease: null }, "user:me")).toMatch(/^admin broke your lease: /);
    expect(checkinWarning(checkout, { ...free, lease: { checkout_id: "c9", participant: "user:bob" } }, "user:me")).toMatch(/^bob holds the file now: /);
  });

  it("says nothing before a check-in that will simply be saved", () => {
    expect(checkinWarning(checkout, free, "user:me")).toBeNull();
    expect(checkinWarning(checkout, { ...free, lease: null }, "user:me")).toBeNull();
  });
});
