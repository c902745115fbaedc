// Pure formatting and wording: what the window says, tested without a window.
import type { AppError, Artifact, Checkout, Closed, Event, LocalState } from "./api";
import type { CheckoutEnd } from "./generated/CheckoutEnd";

/** "bob" for "user:bob", "build-bot (agent)" for "agent:build-bot". */
export function participantName(participant: string): string {
  const [kind, name] = participant.includes(":") ? participant.split(/:(.*)/s) : ["user", participant];
  return kind === "agent" ? `${name} (agent)` : name;
}

/** The last segment of a repo path. */
export function fileName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

export function folderOf(path: string): string {
  const cut = path.lastIndexOf("/");
  return cut < 0 ? "" : path.slice(0, cut);
}

/** "1 h 05 min", "12 min", "40 s", or "lapsed": what is left of a lease. */
export function timeLeft(expiresAt: string, now: number): string {
  const seconds = Math.floor((Date.parse(expiresAt) - now) / 1000);
  if (seconds <= 0) return "lapsed";
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  const minutes = Math.floor((seconds % 3600) / 60);
  return `${Math.floor(seconds / 3600)} h ${String(minutes).padStart(2, "0")} min`;
}

export type Urgency = "calm" | "soon" | "urgent" | "lapsed";

/** How a countdown is coloured: soon under 30 min, urgent under 5. */
export function urgency(expiresAt: string, now: number): Urgency {
  const left = Date.parse(expiresAt) - now;
  if (left <= 0) return "lapsed";
  if (left <= 5 * 60_000) return "urgent";
  if (left <= 30 * 60_000) return "soon";
  return "calm";
}

/** "17:30" today, "Tue 17:30" within a week, else "3 Dec 17:30". */
export function clock(at: string, now: number): string {
  const date = new Date(at);
  const time = `${String(date.getHours()).padStart(2, "0")}:${String(date.getMinutes()).padStart(2, "0")}`;
  const today = new Date(now);
  if (date.toDateString() === today.toDateString()) return time;
  const days = Math.abs(date.getTime() - now) / 86_400_000;
  if (days < 6) return `${date.toLocaleDateString("en-GB", { weekday: "short" })} ${time}`;
  return `${date.toLocaleDateString("en-GB", { day: "numeric", month: "short" })} ${time}`;
}

export const localStateLabels: Record<LocalState, string> = {
  not_local: "Not on this computer",
  up_to_date: "Up to date",
  modified: "Modified",
  missing: "Missing",
  out_of_date: "Out of date",
  checking: "Checking…",
  unplaceable: "Cannot be placed on this computer: rename it",
};

/** Why a file stored under a name no computer can hold is never fetched, and who fixes it. */
export function unplaceableAdvice(path: string): string {
  return `“${path}” cannot be a file name on every computer (Windows refuses some names and characters), so Leasedesk never puts it on disk. Ask an admin to run: leasedesk rename "${path}" NEW`;
}

/** The button that brings a file's bytes to this computer, if its row needs
 *  one: for a file you hold, your copy to edit (the version you checked out,
 *  writable; the lease is left as it is); else the head, read-only. */
export interface GetAction {
  label: string;
  /** Your copy to edit (`get_copy`), not the head (`update_file`). */
  mine: boolean;
  /** What the panel says beside it, for a file you hold that is not here. */
  why?: string;
}

export function getAction(local: LocalState, holding: boolean): GetAction | null {
  if (holding) {
    if (local === "not_local") {
      return { label: "Download to edit", mine: true, why: "You hold this file, but it is not on this computer: you checked it out elsewhere. Download it here to edit it; your lease stays as it is." };
    }
    if (local === "missing") {
      return { label: "Download to edit", mine: true, why: "Your copy was here and is gone. Download the version you checked out to go on; your lease stays as it is." };
    }
    return null;
  }
  if (local === "not_local") return { label: "Download", mine: false };
  if (local === "out_of_date" || local === "missing") return { label: "Get latest", mine: false };
  return null;
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

/** The mark over a view kept while no server answers: "Offline since 14:02". */
export function offlineMark(since: string, now: number): string {
  return `Offline since ${clock(since, now)}`;
}

/** What the offline mark goes on to say. */
export const offlineDetail =
  "Reconnecting… The server does not answer (or cannot reach its database), so this is the view fetched then. Your checked-out files stay writable and your changes still show. Leasedesk reconnects by itself and sends nothing you have not pressed again.";

/** Which server a remote session uses. */
export function serverLine(server: string): string {
  return `Server: ${server.replace(/^https?:\/\//, "").replace(/\/$/, "")}`;
}

/** A SHA-256 fingerprint as `openssl x509 -fingerprint` and most admins show it: "AB:CD:…". */
export function fingerprint(hex: string): string {
  return (hex.toUpperCase().match(/../g) ?? []).join(":");
}

/** A message from the core as a sentence: capital first, full stop last. */
export function sentence(message: string): string {
  const text = message.trim();
  if (!text) return "";
  const capital = text[0].toUpperCase() + text.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

/** What the window says about an error: what happened, and what to do. */
export interface Explanation {
  title: string;
  detail: string;
  /** A follow-up the window offers as a button. */
  action?: "notify-when-free" | "open-settings" | "retry";
}

export function explain(error: AppError, now: number): Explanation {
  switch (error.code) {
    case "artifact_busy": {
      const lease = error.lease;
      if (!lease) return { title: "Someone else has this file", detail: "Try again in a moment." };
      const who = participantName(lease.participant);
      const note = lease.note ? ` — “${lease.note}”` : "";
      return {
        title: `${who} has it until ${clock(lease.expires_at, now)}`,
        detail: `${timeLeft(lease.expires_at, now)} left${note}. You can be told when it is free.`,
        action: "notify-when-free",
      };
    }
    case "checkout_closed":
      return {
        title: "Your check-out has ended",
        detail: "Its lease lapsed or was broken. Your copy is kept as it is: check it out again, or check in to make a proposal.",
      };
    case "forbidden":
      return { title: "That is not yours to change", detail: error.message };
    case "stale": {
      const head = error.head;
      return head
        ? {
            title: `${participantName(head.author)} committed version ${head.version} at ${clock(head.committed_at, now)} first`,
            detail: "Your change was kept as a proposal against it.",
          }
        : { title: "The file moved on", detail: error.message };
    }
    case "unauthorized":
      return { title: "The server did not accept your token", detail: "Open Settings and paste a new token.", action: "open-settings" };
    case "no_server":
    case "no_token":
    case "no_backend":
      return { title: "Not connected", detail: error.message, action: "open-settings" };
    case "certificate_untrusted":
      return {
        title: "The server's certificate is not trusted",
        detail: "It may be your studio's own. Open Settings to see its fingerprint, check it with your admin, and trust it.",
        action: "open-settings",
      };
    case "certificate_changed":
      return {
        title: "The server's certificate changed",
        detail: "It is not the one you trusted, so nothing was sent to it. Ask your admin whether it was renewed, then look at it again in Settings.",
        action: "open-settings",
      };
    case "offline":
      return {
        title: error.since ? offlineMark(error.since, now) : "Offline",
        detail: sentence(error.message),
      };
    case "unavailable":
      return {
        title: "The server cannot be reached",
        detail: "Nothing was lost. Check your connection or the address in Settings, then try again.",
        action: "retry",
      };
    case "storage_full":
      return { title: "The disk is full", detail: "Nothing was stored. Free some space and try again.", action: "retry" };
    case "digest_mismatch":
      return { title: "The file changed while it was sent", detail: "Nothing was stored. Wait for your application to finish saving, then try again.", action: "retry" };
    case "too_large":
      return { title: "The file is too large for this server", detail: error.message };
    case "cancelled":
      return { title: "Cancelled", detail: error.message };
    case "exists":
      return { title: "There is already a file there", detail: error.message };
    case "not_found":
      return { title: "Not found", detail: error.message };
    default:
      return { title: "Something went wrong", detail: error.message };
  }
}

/** The outcome of a check-in, in words, with the file it concerns. */
export function checkinOutcome(closed: Closed, artifact: Artifact | undefined, now: number): string {
  const result = closed.checkout.result;
  const name = fileName(closed.checkout.path);
  if (!result) return `${name}: nothing was checked in.`;
  switch (result.outcome) {
    case "committed":
      return `${name} committed as version ${result.version}.`;
    case "unchanged":
      return `${name} had not changed: it stays at version ${result.version}.`;
    case "proposal": {
      const head = artifact?.head;
      const because =
        head && head.version === result.proposal.base_version
          ? ` because ${participantName(head.author)} committed version ${head.version} at ${clock(head.committed_at, now)}`
          : "";
      const kept = closed.backup ? ` Your file is kept as “${fileName(closed.backup)}”.` : "";
      return `${name} became a proposal${because}.${kept}`;
    }
  }
}

/** One line of the activity feed. */
export function describeEvent(event: Event, pathOf: (id: string) => string | undefined): string {
  const who = event.participant ? participantName(event.participant) : "Someone";
  const file = (event.artifact_id && pathOf(event.artifact_id)) || "a file";
  const name = fileName(file);
  const data = event.data as Record<string, unknown>;
  switch (event.type) {
    case "checkout.opened":
      return `${who} opened a check-out of ${name}`;
    case "checkout.closed":
      return `${who} closed a check-out of ${name}`;
    case "lease.acquired":
      return `${who} checked out ${name}`;
    case "lease.renewed":
      return `${who} extended ${name}`;
    case "lease.released":
      return `${who} released ${name}`;
    case "lease.expired":
      return `${who}'s lease on ${name} lapsed`;
    case "lease.contended":
      return `${who} asked for ${name} while it was busy`;
    case "lease.broken":
      return `${who} broke the lease on ${name}: “${String(data.reason ?? "")}”`;
    case "version.committed":
      return data.version === 1 ? `${who} added ${name}` : `${who} committed ${name} version ${String(data.version ?? "")}`;
    case "proposal.created":
      return `${who} proposed a change to ${name}`;
    case "proposal.accepted":
      return `${who} accepted a proposal for ${name}`;
    case "proposal.rejected":
      return `${who} rejected a proposal for ${name}`;
    case "artifact.renamed":
      return `${who} renamed ${String(data.from ?? "a file")} to ${String(data.to ?? "")}`;
    default:
      return `${who}: ${event.type} on ${name}`;
  }
}

/** Whether a row matches the filter: every word in the path or the holder. */
export function matches(path: string, holder: string | undefined, filter: string): boolean {
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  const text = `${path} ${holder ?? ""}`.toLowerCase();
  return words.every((word) => text.includes(word));
}

/** The rows a virtual list shows: those in view, plus a few either side. */
export function visibleRange(scrollTop: number, viewport: number, rowHeight: number, count: number, overscan = 6): [number, number] {
  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(count, Math.ceil((scrollTop + viewport) / rowHeight) + overscan);
  return [first, last];
}

/** Your check-out of a file whose lease you no longer hold (it lapsed, or an
 *  admin broke it): your copy is safe, but a check-in becomes a proposal. */
export function leaseLost(mine: Checkout | null, lease: { checkout_id: string | null } | null): boolean {
  if (!mine || mine.state !== "open") return false;
  return mine.broken !== null || lease === null || lease.checkout_id !== mine.id;
}

export function isMine(checkout: Checkout | null): checkout is Checkout {
  return checkout !== null && checkout.state === "open";
}

// ----- compare

/** "3.2 % of pixels differ", "identical"; a share too small to show as 0.1 %
 *  is still said to differ, so a changed pixel is never called identical. */
export function diffShare(changed: number, total: number): string {
  if (changed === 0) return "identical";
  const percent = (changed / total) * 100;
  if (percent < 0.1) return "less than 0.1 % of pixels differ";
  if (percent >= 99.95 && changed < total) return "99.9 % of pixels differ";
  return `${percent.toFixed(1)} % of pixels differ`;
}

export interface Size {
  width: number;
  height: number;
}

export function dimensions(size: Size): string {
  return `${size.width} × ${size.height} px`;
}

/** What the compare view says about the two images' sizes. */
export function sizesLine(a: Size, b: Size): { text: string; differ: boolean } {
  if (a.width === b.width && a.height === b.height) return { text: `Both ${dimensions(a)}`, differ: false };
  return { text: `The sizes differ: ${dimensions(a)} and ${dimensions(b)}`, differ: true };
}

/** Where an image sits: scaled by `scale`, its top-left at (x, y) in the viewport. */
export interface Zoom {
  scale: number;
  x: number;
  y: number;
}

export const MIN_ZOOM = 1 / 32;
export const MAX_ZOOM = 32;

/** The whole image in the box, centred, never enlarged past 100 %. */
export function fit(image: Size, box: Size): Zoom {
  const scale = Math.min(1, box.width / image.width, box.height / image.height);
  return { scale, x: (box.width - image.width * scale) / 2, y: (box.height - image.height * scale) / 2 };
}

/** Zooms by `factor` about the viewport point (px, py), which stays over the
 *  same image pixel; the scale is kept within MIN_ZOOM..MAX_ZOOM. */
export function zoomAt(zoom: Zoom, factor: number, px: number, py: number): Zoom {
  const scale = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, zoom.scale * factor));
  const k = scale / zoom.scale;
  return { scale, x: px - (px - zoom.x) * k, y: py - (py - zoom.y) * k };
}

/** "100 %", "12.5 %". */
export function zoomLabel(zoom: Zoom): string {
  const percent = zoom.scale * 100;
  return `${percent >= 10 ? Math.round(percent) : percent.toFixed(1)} %`;
}

// ----- history

/** How a check-out ended, in the history's words. */
export function checkoutEnding(ended: CheckoutEnd): string {
  switch (ended.outcome) {
    case "open":
      return "still checked out";
    case "checked_in":
      return ended.unchanged ? `checked in unchanged: still version ${ended.version}` : `checked in as version ${ended.version}`;
    case "proposed":
      return "checked in late: became a proposal";
    case "cancelled":
      return "cancelled, nothing checked in";
    case "lapsed":
      return "the lease lapsed";
    case "broken":
      return `lease broken by ${participantName(ended.by)}: “${ended.reason}”`;
  }
}

/** "17:30 – 18:05", or "since 17:30" for one still open. */
export function span(from: string, to: string | null, now: number): string {
  return to ? `${clock(from, now)} – ${clock(to, now)}` : `since ${clock(from, now)}`;
}

export const proposalStateWords: Record<string, string> = {
  open: "open, waiting for a decision",
  accepted: "accepted: it became a version",
  rejected: "rejected",
  superseded: "superseded by a later change",
};
