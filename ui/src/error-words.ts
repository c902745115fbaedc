// What the window says about an error: what happened, and what to do,
// branching on the generated codes. Pure, as format.ts is.
import type { AppError } from "./api";
import { clock, heldUntil, holderNote, offlineMark, participantName, sentence, timeLeft } from "./format";

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
      const note = holderNote(lease) ? ` — “${lease.note}”` : "";
      return {
        // Named as anyone else is, never "you": the card says why you cannot have it.
        title: heldUntil(lease, null, now),
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
      return { title: "That is not yours to change", detail: sentence(error.message) };
    case "proposal_stale": {
      const head = error.head;
      return {
        title: head ? `The head moved on: ${participantName(head.author)} saved version ${head.version}` : "The head moved on",
        detail: "The proposal was made against an older version, so it was not accepted. Rebuild it against the head, then accept it.",
      };
    }
    case "stale": {
      const head = error.head;
      return head
        ? {
            title: `${participantName(head.author)} saved version ${head.version} at ${clock(head.committed_at, now)} first`,
            detail: "Your change was kept as a proposal against it.",
          }
        : { title: "The file moved on", detail: sentence(error.message) };
    }
    case "unauthorized":
      return { title: "The server did not accept your token", detail: "Open Settings and paste a new token.", action: "open-settings" };
    case "no_server":
    case "no_token":
    case "no_backend":
      return { title: "Not connected", detail: sentence(error.message), action: "open-settings" };
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
      return { title: "The file is too large for this server", detail: sentence(error.message) };
    case "cancelled":
      return { title: "Cancelled", detail: sentence(error.message) };
    case "exists":
      return { title: "There is already a file there", detail: sentence(error.message) };
    case "not_found":
      return { title: "Not found", detail: sentence(error.message) };
    case "not_staged":
      return { title: "Nothing to check in", detail: sentence(error.message) };
    case "invalid":
    case "bad_request":
      return { title: "That was refused", detail: sentence(error.message) };
    case "too_many":
      return { title: "Too many tries", detail: "Wait a minute, then try again.", action: "retry" };
    case "invite_invalid":
      return { title: "This invite does not work", detail: "It was used, it lapsed, or it was revoked. Ask your admin for a new link." };
    case "deadline_exceeded":
      return { title: "The server took too long", detail: "Nothing was lost. Try again.", action: "retry" };
    case "no_preview":
      return { title: "No preview", detail: sentence(error.message) };
    case "upload_incomplete":
    case "wrong_offset":
    case "chunk_mismatch":
      return { title: "The upload was interrupted", detail: "Nothing was stored. Try again: what reached the server is not sent twice.", action: "retry" };
    case "reveal":
      return revealFailed(error.path ?? "");
    case "not_held":
      return { title: "Nobody holds it under a check-out now", detail: `${sentence(error.message)} Your request was not sent.` };
    default:
      return { title: "Something went wrong", detail: sentence(error.message) };
  }
}

/** Why "Reveal in folder" did nothing, with where the file is. */
export function revealFailed(path: string): Explanation {
  return {
    title: "The folder could not be shown",
    detail: `No file manager answered. The file is at ${path}. Copy the path to open it from your application.`,
  };
}
