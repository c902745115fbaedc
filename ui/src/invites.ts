// Invites as the window words them, without a window: whether what was
// pasted in Join needs the server's address beside it (a code alone does;
// a link names its server), and an invite waiting to be used, as the
// Studio view lists it.
import type { OpenInvite } from "./generated/OpenInvite";
import { clock, participantName } from "./format";

/** Whether `text` is a code alone (not a `leasedesk://` link), which Join
 *  can read only with the server it is for. */
export function needsServer(text: string): boolean {
  const typed = text.trim();
  return typed !== "" && !typed.toLowerCase().startsWith("leasedesk:");
}

/** The role an invite gives: "designer", "admin" or "agent". */
export function roleWords(invite: { participant: string; admin: boolean }): string {
  if (invite.participant.startsWith("agent:")) return "agent";
  return invite.admin ? "admin" : "designer";
}

/** "dana, designer, invited by you, works until Tue 17:30". */
export function openInviteLine(invite: OpenInvite, me: string | null, now: number): string {
  const by = invite.made_by === null
    ? "invited by the server's owner"
    : `invited by ${invite.made_by === me ? "you" : participantName(invite.made_by)}`;
  return `${participantName(invite.participant)}, ${roleWords(invite)}, ${by}, works until ${clock(invite.expires_at, now)}`;
}
