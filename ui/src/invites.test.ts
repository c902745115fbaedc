import { describe, expect, it } from "vitest";
import { needsServer, openInviteLine, roleWords } from "./invites";
import type { OpenInvite } from "./generated/OpenInvite";

describe("joining with a code", () => {
  it("asks for the server beside a code alone, never beside a link", () => {
    expect(needsServer("7KQ2-ABCD-EFGH-JKMN")).toBe(true);
    expect(needsServer(" 7kq2 abcd efgh jkmn ")).toBe(true);
    expect(needsServer("leasedesk://join?server=https%3A%2F%2Fa&code=7KQ2-ABCD-EFGH-JKMN")).toBe(false);
    expect(needsServer("  LEASEDESK://join?server=x&code=y")).toBe(false);
    expect(needsServer("")).toBe(false);
  });
});

describe("an invite waiting to be used", () => {
  const now = new Date(2026, 11, 7, 9, 0).getTime();
  const invite = (over: Partial<OpenInvite>): OpenInvite => ({
    id: "5f0c6a3e-0000-4000-8000-000000000001",
    participant: "user:dana",
    admin: false,
    made_by: "user:admin",
    created_at: new Date(2026, 11, 7, 8, 0).toISOString(),
    expires_at: new Date(2026, 11, 8, 17, 30).toISOString(),
    ...over,
  });

  it("says whom it is for, the role, who made it and until when, by name", () => {
    expect(openInviteLine(invite({}), "user:boss", now)).toBe("dana, designer, invited by admin, works until Tue 17:30");
    expect(openInviteLine(invite({ made_by: "user:boss", admin: true }), "user:boss", now)).toBe("dana, admin, invited by you, works until Tue 17:30");
    expect(openInviteLine(invite({ participant: "agent:resizer", made_by: null }), null, now)).toBe("resizer (agent), agent, invited by the server's owner, works until Tue 17:30");
  });

  it("names the role it gives", () => {
    expect(roleWords({ participant: "user:a", admin: false })).toBe("designer");
    expect(roleWords({ participant: "user:a", admin: true })).toBe("admin");
    expect(roleWords({ participant: "agent:a", admin: false })).toBe("agent");
  });
});
