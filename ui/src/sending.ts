// An upload as the window shows it, and what its bar says: what travels of
// the file (over a link, only what the server lacks), how much went, the
// time left, and "reconnecting…" while a broken link is waited out.

import type { Moved } from "./api";
import { bytes, sendingLeft } from "./format";

/** An upload as the window shows it: bytes sent of the `total` to send,
 *  the whole file's `size` (more than `total` when the server has the
 *  rest), whether a broken link is being waited out, and where the current
 *  stretch of sending began (for the time left). */
export type Sending = {
  upload: string;
  sent: number;
  total: number;
  size: number;
  reconnecting: boolean;
  since: number;
  sinceSent: number;
  /** Cancel was pressed: a check-in that ends saved anyway says it came too late. */
  cancelAsked: boolean;
};

export function sending(upload: string, now = Date.now()): Sending {
  return { upload, sent: 0, total: 0, size: 0, reconnecting: false, since: now, sinceSent: 0, cancelAsked: false };
}

/** Every byte is sent: the server is saving the file, and Cancel can no
 *  longer stop it (the upload is used for the check-in). */
export function saving(progress: Sending | undefined): boolean {
  return progress !== undefined && progress.total > 0 && progress.sent >= progress.total && !progress.reconnecting;
}

/** What the Cancel button beside a bar says, and whether it still can. */
export function cancelButton(progress: Sending | undefined): { label: string; disabled: boolean } {
  if (saving(progress)) return { label: "Saving on the server…", disabled: true };
  if (progress?.cancelAsked) return { label: "Cancelling…", disabled: true };
  return { label: "Cancel upload", disabled: false };
}

/** Takes in what the shell told of an upload. After a drop the rate is
 *  measured afresh, from where it went on. */
export function moved(progress: Sending, told: Moved, now = Date.now()) {
  if (told.reconnecting || progress.reconnecting || told.sent < progress.sent) {
    progress.since = now;
    progress.sinceSent = told.sent;
  }
  progress.sent = told.sent;
  progress.total = told.total ?? 0;
  progress.size = told.size ?? told.total ?? 0;
  progress.reconnecting = told.reconnecting;
}

/** What an upload's bar says and how full it is: what travels of the
 *  file, how much went, and the time left once a rate is known. */
export function progressOf(progress: Sending | undefined, now = Date.now()): { label: string; width: string } {
  if (!progress || (progress.sent === 0 && progress.total === 0)) return { label: "Uploading…", width: "0%" };
  const { sent, total, size } = progress;
  const part = total > 0 ? Math.min(1, sent / total) : 0.5;
  const width = `${Math.round(part * 100)}%`;
  if (progress.reconnecting) {
    return { label: `Reconnecting… ${bytes(sent)} of ${bytes(total)} sent; it goes on from there`, width };
  }
  if (saving(progress)) return { label: `Saving on the server… all ${bytes(total)} sent`, width };
  const elapsed = (now - progress.since) / 1000;
  const rate = elapsed >= 2 ? (sent - progress.sinceSent) / elapsed : 0;
  const left = rate > 0 && total > sent ? `, ${sendingLeft((total - sent) / rate)}` : "";
  if (size > total) {
    return {
      label: `Sending ${bytes(total)} of ${bytes(size)} (the rest is already on the server): ${bytes(sent)} sent${left}`,
      width,
    };
  }
  const label = total > 0 ? `Uploading… ${bytes(sent)} of ${bytes(total)}${left}` : `Uploading… ${bytes(sent)} sent`;
  return { label, width };
}

