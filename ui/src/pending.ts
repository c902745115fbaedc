// The history's types as the desk's brief gives them, until its Rust types
// (desk::HistoryPage, HistoryEntry) derive TS and are generated like the rest.
import type { Head } from "./generated/Head";
import type { Participant } from "./generated/Participant";
import type { Proposal } from "./generated/Proposal";

export type CheckoutEnd =
  | { how: "open" }
  | { how: "checked_in"; version: number }
  | { how: "proposed"; proposal: string }
  | { how: "cancelled" }
  | { how: "lapsed" }
  | { how: "broken"; by: Participant; reason: string };

export type HistoryEntry =
  | { kind: "version"; head: Head }
  | { kind: "checkout"; who: Participant; from: string; to: string | null; note: string | null; version: number; ended: CheckoutEnd }
  | { kind: "proposal"; proposal: Proposal }
  | { kind: "renamed"; from: string; to: string; at: string; by: Participant | null };

export type HistoryPage = { entries: HistoryEntry[]; next_before: number | null };
