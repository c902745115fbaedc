// PLACEHOLDER until see-desk's HistoryPage derives TS.
import type { HistoryEntry } from "./HistoryEntry";
export type HistoryPage = { entries: Array<HistoryEntry>, next_before: number | null, };
