// The one module that calls the app's commands. Types mirror the Rust types
// they come from (leasedesk::model, leasedesk::desk, the shell's commands).
import { Channel, invoke } from "@tauri-apps/api/core";
import { getCurrentWindow } from "@tauri-apps/api/window";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";

export type Participant = string; // "user:alice", "agent:bot"
export type Timestamp = string; // RFC 3339

export interface Head {
  version: number;
  digest: string;
  size: number;
  author: Participant;
  committed_at: Timestamp;
}

export interface Lease {
  holder: string;
  participant: Participant;
  kind: "checkout" | "edit";
  checkout_id: string | null;
  note: string | null;
  acquired_at: Timestamp;
  expires_at: Timestamp;
}

export interface Artifact {
  id: string;
  path: string;
  head: Head;
  lease: Lease | null;
}

export interface Proposal {
  id: string;
  artifact_id: string;
  base_version: number;
  test_digest: string;
  digest: string;
  size: number;
  author: Participant;
  checkout_id: string | null;
  state: "open" | "accepted" | "rejected" | "superseded";
  created_at: Timestamp;
}

export type CheckinResult =
  | { outcome: "committed"; version: number; digest: string }
  | { outcome: "unchanged"; version: number; digest: string }
  | { outcome: "proposal"; proposal: Proposal };

export interface Checkout {
  id: string;
  artifact_id: string;
  path: string;
  version: number;
  digest: string;
  actor: Participant;
  holder: string;
  note: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  state: "open" | "closed";
  result: CheckinResult | null;
  broken: { by: Participant; reason: string; at: Timestamp } | null;
}

export type LocalState = "not_local" | "up_to_date" | "modified" | "missing" | "out_of_date" | "checking" | "unplaceable";

export interface FileRow {
  artifact: Artifact;
  local: LocalState;
  mine: Checkout | null;
  /** null when the file's path cannot be placed on this computer. */
  local_path: string | null;
}

export interface Overview {
  me: Participant;
  now: Timestamp;
  files: FileRow[];
  checkouts: Checkout[];
  proposals: Proposal[];
}

export interface Event {
  seq: number;
  id: string;
  type: string;
  artifact_id: string | null;
  participant: Participant | null;
  holder: string | null;
  at: Timestamp;
  data: Record<string, unknown>;
}

export interface CheckedOut {
  checkout: Checkout;
  backup: string | null;
}

export interface Closed {
  checkout: Checkout;
  backup: string | null;
}

export interface Settings {
  backend: "bundled" | "remote";
  server_url: string;
  workspace: string;
  display_name: string;
}

export interface SettingsView {
  settings: Settings;
  has_token: boolean;
  keychain_note: string | null;
  session_error: AppError | null;
}

/** An error as the shell sends it: the API's code, a message, and details. */
export interface AppError {
  code: string;
  message: string;
  lease?: Lease | null;
  head?: Head;
  path?: string;
}

export function isAppError(value: unknown): value is AppError {
  return typeof value === "object" && value !== null && "code" in value && "message" in value;
}

/** A transfer's progress: bytes moved, of `total` when the app knows it. */
export interface Moved {
  sent: number;
  total: number | null;
}

function progressChannel(onProgress?: (moved: Moved) => void): Channel<Moved> {
  const channel = new Channel<Moved>();
  channel.onmessage = (moved) => onProgress?.(moved);
  return channel;
}

export const api = {
  overview: () => invoke<Overview>("overview"),
  refreshRow: (artifact: string) => invoke<FileRow>("refresh_row", { artifact }),
  checkOut: (artifact: string, note: string | null, ttlSeconds: number | null, onProgress?: (m: Moved) => void) =>
    invoke<CheckedOut>("check_out", { artifact, note, ttlSeconds, onProgress: progressChannel(onProgress) }),
  extend: (checkout: string, ttlSeconds: number | null) => invoke<Checkout>("extend", { checkout, ttlSeconds }),
  checkIn: (checkout: string, upload: string, onProgress?: (m: Moved) => void) =>
    invoke<Closed>("check_in", { checkout, upload, onProgress: progressChannel(onProgress) }),
  /** Closes the window to the tray (the app goes on running there). */
  closeWindow: () => getCurrentWindow().close(),
  cancelUpload: (upload: string) => invoke<void>("cancel_upload", { upload }),
  cancelCheckout: (checkout: string) => invoke<Closed>("cancel_checkout", { checkout }),
  updateFile: (artifact: string) => invoke<string | null>("update_file", { artifact }),
  /** Brings the version you checked out here, writable, for a check-out made elsewhere; the lease is not touched. */
  getCopy: (checkout: string, onProgress?: (m: Moved) => void) =>
    invoke<CheckedOut>("get_copy", { checkout, onProgress: progressChannel(onProgress) }),
  addFiles: (paths: string[], folder: string) =>
    invoke<{ source: string; artifact: Artifact | null; error: AppError | null }[]>("add_files", { paths, folder }),
  /** Saves (or finds) the proposal's file beside the head's and shows it in the file manager. */
  compareProposal: (artifact: string, proposal: string) => invoke<string>("compare_proposal", { artifact, proposal }),
  decide: (proposal: string, decision: "accept" | "rebuild" | "reject") =>
    invoke<Proposal>("decide", { proposal, decision }),
  recentEvents: (limit: number) => invoke<Event[]>("recent_events", { limit }),
  notifyWhenFree: (artifact: string, on: boolean) => invoke<void>("notify_when_free", { artifact, on }),
  reveal: (path: string) => invoke<void>("reveal", { path }),
  settings: () => invoke<SettingsView>("settings"),
  saveSettings: (settings: Settings, token: string | null) => invoke<SettingsView>("save_settings", { settings, token }),
};

export function on<T>(event: string, handler: (payload: T) => void): Promise<UnlistenFn> {
  return listen<T>(event, (e) => handler(e.payload));
}
