// PLACEHOLDER until see-desk's Restored derives TS.
export type Restored = { backup: string, };
