// PLACEHOLDER until see-desk's HistoryEntry derives TS.
import type { Head } from "./Head";
import type { Proposal } from "./Proposal";
import type { Participant } from "./Participant";
export type CheckoutEnd = { "how": "open" } | { "how": "checked_in", version: number } | { "how": "proposed", proposal: string } | { "how": "cancelled" } | { "how": "lapsed" } | { "how": "broken", by: Participant, reason: string };
export type HistoryEntry = { "kind": "version", head: Head } | { "kind": "checkout", who: Participant, from: string, to: string | null, note: string | null, version: number, ended: CheckoutEnd } | { "kind": "proposal", proposal: Proposal } | { "kind": "renamed", from: string, to: string, at: string, by: Participant | null };
