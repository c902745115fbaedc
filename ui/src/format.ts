// Pure formatting and wording: what the window says, tested without a window.
import type { AppError, Artifact, Checkout, Closed, Lease, LocalState, Request } from "./api";
import type { CheckoutEnd } from "./generated/CheckoutEnd";
import type { GitLockNote } from "./generated/GitLockNote";
import type { Source } from "./listing";

import type { Explanation } from "./error-words";

/** "bob" for "user:bob", "build-bot (agent)" for "agent:build-bot". */
export function participantName(participant: string): string {
  const [kind, name] = participant.includes(":") ? participant.split(/:(.*)/s) : ["user", participant];
  return kind === "agent" ? `${name} (agent)` : name;
}

/** "you" for the person using the app, else their name ("bob", "build-bot (agent)"). */
export function person(participant: string, me: string | null | undefined): string {
  return participant === me ? "you" : participantName(participant);
}

/** As `person`, at the start of a sentence: "You", "bob". */
export function personFirst(participant: string, me: string | null | undefined): string {
  return participant === me ? "You" : participantName(participant);
}

/** "your" or "bob's". */
export function whose(participant: string, me: string | null | undefined): string {
  return participant === me ? "your" : `${participantName(participant)}'s`;
}

/** As `whose`, at the start of a sentence: "Your", "bob's" (names keep their case). */
export function whoseFirst(participant: string, me: string | null | undefined): string {
  return participant === me ? "Your" : whose(participant, me);
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
  if (days < 6) return `${weekday.format(date)} ${time}`;
  return `${dayAndMonth.format(date)} ${time}`;
}

// Made once, as `counts` below: a list's rows write many dates.
const weekday = new Intl.DateTimeFormat("en-GB", { weekday: "short" });
const dayAndMonth = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short" });
// The options `toLocaleString()` takes by default: the year in full.
const dateAndTime = new Intl.DateTimeFormat(undefined, {
  year: "numeric",
  month: "numeric",
  day: "numeric",
  hour: "numeric",
  minute: "numeric",
  second: "numeric",
});

/** The whole date and time, the computer's way: a tooltip's. */
export function fullTime(at: string): string {
  return dateAndTime.format(new Date(at));
}

// ----- who holds a file

/** The note of a check-out taken through Git LFS (`git lfs lock`), as the
 *  server gives it: its type comes from Rust, so a note changed there fails
 *  this build rather than the words. */
export const GIT_LOCK_NOTE: GitLockNote = "Locked from Git";

/** Whether a lease is a Git lock: a check-out whose note is exactly Git's. */
export function isGitLock(lease: Pick<Lease, "kind" | "note">): boolean {
  return lease.kind === "checkout" && lease.note === GIT_LOCK_NOTE;
}

type Held = Pick<Lease, "kind" | "note" | "participant" | "expires_at">;

/** A Git lock in words: "Locked from Git by sam until Fri 17:00" ("by you"). */
export function gitLockWords(lease: Pick<Lease, "participant" | "expires_at">, me: string | null | undefined, now: number): string {
  return `Locked from Git by ${person(lease.participant, me)} until ${clock(lease.expires_at, now)}`;
}

/** Who holds a busy file and until when, as its detail and the busy card
 *  say it: "Locked from Git by sam until Fri 17:00" for a Git lock, else
 *  "bob has it until 17:00" ("You have it until 17:00"). */
export function heldUntil(lease: Held, me: string | null | undefined, now: number): string {
  if (isGitLock(lease)) return gitLockWords(lease, me, now);
  const mine = lease.participant === me;
  return `${personFirst(lease.participant, me)} ${mine ? "have" : "has"} it until ${clock(lease.expires_at, now)}`;
}

/** The holder as a list names them beside a file: "bob", or a Git lock's
 *  "Locked from Git by sam until Fri 17:00". */
export function holderName(lease: Held, me: string | null | undefined, now: number): string {
  return isGitLock(lease) ? gitLockWords(lease, me, now) : person(lease.participant, me);
}

/** The holder's note as it shows beside their name: none for a Git lock,
 *  whose words say it already. */
export function holderNote(lease: Pick<Lease, "kind" | "note">): string | null {
  return isGitLock(lease) ? null : lease.note;
}

/** Whether the detail offers "Ask…" for a busy file: a check-out someone
 *  else holds, a Git lock among them (a request is made on the check-out,
 *  and its holder sees it in the app). Not an agent's edit of seconds. */
export function askable(lease: Pick<Lease, "kind" | "participant">, me: string | null | undefined): boolean {
  return lease.kind === "checkout" && lease.participant !== me;
}

/** A path someone holds with no file there yet (locked from Git before the
 *  file was added), in Held by others: what its row says in the version's
 *  place and in the copy's. */
export const noFileYet = { version: "No version yet", local: "Not in the studio yet" };

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

/** `elsewhere`: your check-out cannot be checked in here (`FileRow.elsewhere`:
 *  made on another device and its copy not got here, or its copy not here);
 *  `device`: the name of the device it was made on, when it says. */
export function getAction(local: LocalState, holding: boolean, elsewhere = false, device: string | null = null): GetAction | null {
  if (holding) {
    if (elsewhere && device) {
      return { label: "Download to edit", mine: true, why: `Your work on this file is on ${device}: check it in there. To go on here instead, download the version you checked out (your lease stays as it is), or cancel the check-out.` };
    }
    if (local === "not_local") {
      return { label: "Download to edit", mine: true, why: "You hold this file, but it is not on this computer: you checked it out elsewhere. Download it here to edit it; your lease stays as it is." };
    }
    if (local === "missing") {
      return { label: "Download to edit", mine: true, why: "Your copy was here and is gone. Download the version you checked out to go on; your lease stays as it is." };
    }
    if (elsewhere) {
      return { label: "Download to edit", mine: true, why: "You checked this file out on another computer. Download the version you checked out to edit it here; your lease stays as it is." };
    }
    return null;
  }
  if (local === "not_local") return { label: "Download", mine: false };
  if (local === "out_of_date" || local === "missing") return { label: "Get latest", mine: false };
  return null;
}

/** Which device holds the work of a check-out of yours that cannot be
 *  checked in here: "Checked out on alice-desktop"; null when the check-out
 *  does not say (made on the bundled store, or before devices were kept). */
export function checkedOutOn(checkout: Pick<Checkout, "device">): string | null {
  return checkout.device ? `Checked out on ${checkout.device.name}` : null;
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

/** How long a transfer has left, in words: "about 3 min left". */
export function sendingLeft(seconds: number): string {
  if (seconds < 10) return "a few seconds left";
  if (seconds < 60) return `about ${Math.round(seconds / 5) * 5} s left`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `about ${minutes} min left`;
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return rest ? `about ${hours} h ${rest} min left` : `about ${hours} h left`;
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

/** A message with people named as the window names them: "alice" for
 *  "user:alice", "build-bot (agent)" for "agent:build-bot". */
export function plainNames(message: string): string {
  return message.replace(/\b(user|agent):([\w.@-]+)/g, (_, kind: string, name: string) => participantName(`${kind}:${name}`));
}

/** A message from the core as a sentence: capital first, full stop last,
 *  people by name. */
export function sentence(message: string): string {
  const text = plainNames(message).trim();
  if (!text) return "";
  const capital = text[0].toUpperCase() + text.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

/** What the check-in dialog warns of before a check-in that will be kept as
 *  a proposal (someone saved a version since, your lease was broken, or
 *  someone else holds the file now); null when it will simply be saved. */
export function checkinWarning(
  checkout: { id: string; version: number; broken: { by: string } | null },
  artifact: { head: { version: number; author: string }; lease: { checkout_id: string | null; participant: string } | null },
  me: string | null | undefined,
): string | null {
  const kept = "this check-in will be kept as a proposal for a decision, and nothing is overwritten.";
  const head = artifact.head;
  if (head.version !== checkout.version) {
    return `${personFirst(head.author, me)} saved version ${head.version} after you checked out version ${checkout.version}: ${kept}`;
  }
  if (checkout.broken) return `${participantName(checkout.broken.by)} broke your lease: ${kept}`;
  const lease = artifact.lease;
  if (lease && lease.checkout_id !== checkout.id) return `${personFirst(lease.participant, me)} ${lease.participant === me ? "hold" : "holds"} the file now: ${kept}`;
  return null;
}

/** The outcome of a check-in, in words, with the file it concerns. */
export function checkinOutcome(closed: Closed, artifact: Artifact | undefined, now: number): string {
  const result = closed.checkout.result;
  const name = fileName(closed.checkout.path);
  if (!result) return `${name}: nothing was checked in.`;
  switch (result.outcome) {
    case "committed":
      return `${name} saved as version ${result.version}.`;
    case "unchanged":
      return `${name} had not changed: it stays at version ${result.version}.`;
    case "proposal": {
      const head = artifact?.head;
      const because =
        head && head.version === result.proposal.base_version
          ? ` because ${participantName(head.author)} saved version ${head.version} at ${clock(head.committed_at, now)}`
          : "";
      const kept = closed.backup ? ` Your file is kept as “${fileName(closed.backup)}”.` : "";
      return `${name} became a proposal${because}.${kept}`;
    }
  }
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

// ----- what a designer meets first

/** One formatter for every count: JavaScriptCore makes a new one, ICU's
 *  locale read again, for each `toLocaleString`, a cost a tree of a
 *  thousand folders pays on every change. */
const counts = new Intl.NumberFormat("en-US");

/** A count as the window writes every count: "3,002". */
export function count(n: number): string {
  return counts.format(n);
}

/** The Files tab's count: "3,002", or "200 of 3,002" while the list is
 *  narrowed (a folder, a search, Held by others); "1,000+ of 3,002" while
 *  its end is not read yet, and "… of 3,002" before its first page. */
export function filesCount(shown: number, complete: boolean, total: number, narrowed: boolean): string {
  if (!narrowed) return count(total);
  if (complete) return `${count(shown)} of ${count(total)}`;
  return shown === 0 ? `… of ${count(total)}` : `${count(shown)}+ of ${count(total)}`;
}

/** What an empty list says, by what it shows. */
export function emptyListWords(source: Source, total: number): string {
  if (source.kind === "search") return `No file's path contains “${source.text}”.`;
  if (source.kind === "held") return "Nobody else holds a file now.";
  if (total === 0) return "No files yet. Add files with the button above, or drop them here.";
  return "No files in this folder.";
}

/** A folder's name in the tree: its last part ("2026" for brand/2026/), "All files" for the top. */
export function folderLabel(folder: string): string {
  if (!folder) return "All files";
  const parts = folder.split("/").filter(Boolean);
  return parts[parts.length - 1] ?? folder;
}

/** "3 held". */
export function heldLabel(held: number): string {
  return `${count(held)} held`;
}

/** While the list of files is read the first time: "Loading 1,000,000 files… 34 %". */
export function loadingFiles(loaded: number, total: number): string {
  const percent = total > 0 ? Math.min(100, Math.floor((loaded / total) * 100)) : 0;
  return `Loading ${count(total)} files… ${percent} %`;
}

/** "8 hours", "1 hour", "90 minutes", "2 days". */
export function duration(seconds: number): string {
  const minutes = Math.round(seconds / 60);
  if (minutes < 60 || minutes % 60 !== 0) return minutes === 1 ? "1 minute" : `${minutes} minutes`;
  const hours = minutes / 60;
  if (hours % 24 === 0 && hours >= 48) return `${hours / 24} days`;
  return hours === 1 ? "1 hour" : `${hours} hours`;
}

/** The check-out's "For" choices, as [hours ("0": the store's default), label]:
 *  the default first, saying how long it is, then the others. */
export function leaseChoices(defaultSeconds: number): [string, string][] {
  const others = [1, 4, 8, 24].filter((hours) => hours * 3600 !== defaultSeconds);
  return [["0", `${duration(defaultSeconds)} (default)`], ...others.map((hours): [string, string] => [String(hours), duration(hours * 3600)])];
}

/** What a proposal is, on its card: whose, made from which version, and what
 *  happened to the file since. `head` is the file's head now; `savers`, the
 *  versions saved since it was made with who saved each, when read (else
 *  only the head's author is named, as the newest). */
export function proposalSummary(
  p: { author: string; provenance: { version: number }; base_version: number },
  head: { version: number; author: string } | undefined,
  me: string | null | undefined,
  savers?: { version: number; author: string }[],
): string {
  const made = `${personFirst(p.author, me)} made this from version ${p.provenance.version}`;
  if (!head) return `${made}.`;
  if (head.version === p.provenance.version) return `${made}, which is still the head.`;
  const since = (savers ?? []).filter((s) => s.version > p.provenance.version && s.version <= head.version);
  if (since.length === head.version - p.provenance.version) return `${made}; since then ${whoSaved(since, me)}.`;
  if (head.version === p.provenance.version + 1) return `${made}; since then ${person(head.author, me)} saved version ${head.version}.`;
  return `${made}; since then versions ${p.provenance.version + 1} to ${head.version} were saved, the newest by ${person(head.author, me)}.`;
}

/** "bob saved versions 3 and 4, and you saved version 5": each saver named,
 *  in the order they first saved. */
export function whoSaved(savers: { version: number; author: string }[], me: string | null | undefined): string {
  const byAuthor = new Map<string, number[]>();
  for (const s of [...savers].sort((a, b) => a.version - b.version)) {
    byAuthor.set(s.author, [...(byAuthor.get(s.author) ?? []), s.version]);
  }
  const each = [...byAuthor].map(([author, versions]) => `${person(author, me)} saved ${versionsWords(versions)}`);
  return each.length > 1 ? `${each.slice(0, -1).join(", ")} and ${each[each.length - 1]}` : each[0] ?? "";
}

/** "version 3", "versions 3 and 4", "versions 3 to 6", "versions 3, 5 and 7". */
export function versionsWords(versions: number[]): string {
  if (versions.length === 1) return `version ${versions[0]}`;
  const last = versions[versions.length - 1];
  const runOn = versions.every((v, i) => v === versions[0] + i);
  if (runOn && versions.length > 2) return `versions ${versions[0]} to ${last}`;
  return `versions ${versions.slice(0, -1).join(", ")} and ${last}`;
}

/** What each decision on a proposal does, in plain words. `head` is the file's head now. */
export function decisionWords(
  p: { author: string; base_version: number },
  head: { version: number; author: string },
  me: string | null | undefined,
): { accept: string; reject: string; rebuild: string } {
  const theirs = whose(p.author, me);
  const headOf = `${whose(head.author, me)} version ${head.version}`;
  const accept = head.version === p.base_version
    ? `Accept: ${theirs} version becomes version ${head.version + 1}; ${headOf} stays in the history.`
    : `Accept: not yet. The head moved to version ${head.version} after this proposal was made: rebuild it first.`;
  return {
    accept,
    reject: `Reject: ${headOf} stays the head; ${theirs} version is kept in the history, marked rejected.`,
    rebuild: head.version === p.base_version
      ? `Rebuild: not needed, the proposal is against the head (version ${head.version}).`
      : `Rebuild: makes this a proposal against version ${head.version}, the head now, so it can be accepted. Nothing else changes.`,
  };
}

/** What a decision on a proposal did, with its file and the version it made:
 *  "Proposal for hero.psd accepted: it is version 4, the head". */
export function decisionOutcome(decision: "accept" | "rebuild" | "reject", file: string, headVersion: number | undefined): string {
  const of = file ? ` for ${file}` : "";
  switch (decision) {
    case "accept":
      return headVersion ? `Proposal${of} accepted: it is version ${headVersion}, the head` : `Proposal${of} accepted: it is the head now`;
    case "rebuild":
      return `Proposal${of} rebuilt against version ${headVersion ?? "the head"}: it can be accepted now`;
    case "reject":
      return `Proposal${of} rejected: it stays in the history`;
  }
}

/** The question before an accept supersedes someone else's head; null when
 *  the head is your own (nothing of anyone else's is superseded). */
export function acceptQuestion(
  p: { author: string },
  head: { version: number; author: string },
  me: string | null | undefined,
): { title: string; body: string; confirm: string } | null {
  if (head.author === me) return null;
  const next = head.version + 1;
  return {
    title: `Replace ${participantName(head.author)}'s version ${head.version} as the head?`,
    body: `${whoseFirst(p.author, me)} version becomes version ${next}, the head. ${participantName(head.author)}'s version ${head.version} stays in the history, and can be restored from there.`,
    confirm: `Accept as version ${next}`,
  };
}

/** What is wrong with the server address typed in Settings, or null. */
export function serverAddressProblem(text: string): string | null {
  const addresses = text.split(",").map((a) => a.trim()).filter(Boolean);
  if (!addresses.length) return "Enter your studio's server address, such as https://leasedesk.example:7443.";
  for (const address of addresses) {
    let url: URL;
    try {
      url = new URL(address);
    } catch {
      return `“${address}” is not an address: it starts with https:// and names the server, such as https://leasedesk.example:7443.`;
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") return `“${address}” is not a web address: it starts with https://.`;
    if (url.search || url.hash || (url.pathname !== "/" && url.pathname !== "")) return `“${address}” has more than a server in it: give only https://server:port.`;
  }
  return null;
}

/** An error as the Settings dialog says it: in its own place, where the
 *  address and the token are typed (never "open Settings"). */
export function settingsProblem(error: AppError): string {
  switch (error.code) {
    case "no_server":
      return "Enter your studio's server address above.";
    case "no_token":
      return "Paste the token your admin gave you above.";
    case "unauthorized":
      return "The server did not accept this token. Paste a new one from your admin.";
    case "certificate_untrusted":
      return "The server's certificate is not trusted here: its fingerprint is above.";
    case "certificate_changed":
      return sentence(error.message);
    case "unavailable":
    case "offline":
      return "No server answers at this address. Check it, or ask your admin whether the server is running.";
    case "invalid":
      return sentence(error.message);
    default:
      return sentence(error.message).replace(/\s*[Oo]pen Settings and\s*/g, " ").trim();
  }
}

/** The window's zoom, as a percentage: "150 %". */
export function zoomPercent(level: number): string {
  return `${Math.round(level * 100)} %`;
}

/** The zoom levels Ctrl + and Ctrl − step through, as browsers have them. */
export const ZOOM_LEVELS = [0.5, 0.67, 0.8, 0.9, 1, 1.1, 1.25, 1.5, 1.75, 2, 2.5, 3];

/** The next zoom level up (+1) or down (−1) from `level`. */
export function nextZoom(level: number, step: 1 | -1): number {
  if (step > 0) return ZOOM_LEVELS.find((l) => l > level + 0.001) ?? ZOOM_LEVELS[ZOOM_LEVELS.length - 1];
  return [...ZOOM_LEVELS].reverse().find((l) => l < level - 0.001) ?? ZOOM_LEVELS[0];
}

// ----- asking the holder

/** The button on a busy file: "Ask bob to release…". */
export function askLabel(holder: string): string {
  return `Ask ${participantName(holder)} to release…`;
}

/** "12 of 1000 characters": what a request's or a reply's message may still take. */
export function charactersLeft(typed: string, max: number): string {
  return `${[...typed].length} of ${max} characters`;
}

/** What a request said and when: "bob asked at 14:02: “need it for the logo fix”". */
export function requestLine(request: Request, me: string | null | undefined, now: number): string {
  const said = request.message ? `: “${request.message}”` : "";
  return `${personFirst(request.from, me)} asked at ${clock(request.created_at, now)}${said}`;
}

/** The holder's answer, when there is one: "alice answered at 14:05: “20 more minutes”". */
export function replyLine(request: Request, me: string | null | undefined, now: number): string | null {
  if (request.reply === null) return null;
  const at = request.replied_at ? ` at ${clock(request.replied_at, now)}` : "";
  return `${personFirst(request.to, me)} answered${at}: “${request.reply}”`;
}

/** The asker's notice once the request is sent. */
export function askedNotice(request: Request): Explanation {
  return {
    title: `${participantName(request.to)} is asked to release ${fileName(request.path)}`,
    detail: "You will see the answer here, and be told when the file is free. Nothing is released until they choose to.",
  };
}

/** "1 request waiting", "3 requests waiting" (for your answer), as the tray says it. */
export function requestsWaiting(count: number): string {
  return count === 1 ? "1 request waiting" : `${count} requests waiting`;
}

/** How long a notice stays before it goes by itself, in milliseconds. One that
 *  offers buttons (a request to answer, Open Settings) stays long enough to be
 *  read and answered; the rest go once read. */
export function noticeLasts(kind: "info" | "error" | "success", offersActions: boolean): number {
  if (offersActions) return 60_000;
  return kind === "error" ? 15_000 : 7_000;
}

/** In place of Check out, on a file the folder's rules let you only view. */
export function viewOnly(path: string): string {
  const folder = folderOf(path);
  return folder ? `You can view ${folder}/, not change it` : "You can view this file, not change it";
}

/** A device in your list: its name, whether it is this one, when it was last used. */
export function deviceLine(device: { id: string; name: string; last_used_at: string | null }, current: string, now: number): string {
  const used = device.last_used_at ? `last used ${clock(device.last_used_at, now)}` : "not used yet";
  return `${device.name}${device.id === current ? " (this device)" : ""}, ${used}`;
}

/** What a preview's `Leasedesk-Preview` header says of it, in words: `null`
 *  for an exact preview, "approximate preview" for a document composited
 *  without all it shows, "preview saved by Illustrator, 256 px" for the
 *  thumbnail an application saved in the file. */
export function fidelityNote(header: string | null): { fidelity: "exact" | "approximate" | "saved"; words: string | null } {
  if (header === "approximate") return { fidelity: "approximate", words: "approximate preview" };
  const saved = header?.match(/^saved; by="([^"]*)"; size=(\d+)$/);
  if (saved) return { fidelity: "saved", words: `preview saved by ${saved[1]}, ${saved[2]} px` };
  return { fidelity: "exact", words: null };
}
