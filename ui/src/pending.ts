// The history's types as the desk writes them (desk::history), until they
// derive TS and are generated like the rest.
import type { Head } from "./generated/Head";
import type { Participant } from "./generated/Participant";
import type { Proposal } from "./generated/Proposal";

export type CheckoutEnd =
  | { outcome: "open" }
  | { outcome: "checked_in"; version: number; unchanged: boolean }
  | { outcome: "proposed"; proposal: string }
  | { outcome: "cancelled" }
  | { outcome: "lapsed" }
  | { outcome: "broken"; by: Participant; reason: string };

export type CheckoutEntry = {
  seq: number;
  id: string;
  who: Participant;
  version: number;
  note: string | null;
  from: string;
  to: string | null;
  ended: CheckoutEnd;
  lease_lost: CheckoutEnd | null;
};

export type HistoryEntry =
  | ({ kind: "version"; seq: number } & Head)
  | ({ kind: "checkout" } & CheckoutEntry)
  | ({ kind: "proposal"; seq: number } & Proposal)
  | { kind: "renamed"; seq: number; at: string; by: Participant | null; from: string; to: string };

export type HistoryPage = { entries: HistoryEntry[]; next_before: number | null };
