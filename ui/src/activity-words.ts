// The activity feed in words: the ledger's events, one line per thing a
// person did, each naming its files (split from format.ts, the wording of
// the rest of the window).
import type { Event } from "./api";
import { fileName, person, personFirst, whose, whoseFirst } from "./format";

/** One line of the activity feed: what a person did, in their words. */
export interface ActivityLine {
  seq: number;
  at: string;
  text: string;
}

/** The feed from the ledger's events, newest first: one line per thing a
 *  person did. A store writes each action's steps in one transaction at one
 *  time (a check-in renews the lease, saves a version, releases the lease
 *  and closes the check-out), so the steps of one file at one instant are
 *  one action, told once; a change of several files (its own event, and
 *  each file's steps) is one line, and so are files checked out or decided
 *  together: "bob checked in props-000.png and 2 more". `pathOf` gives a
 *  file's path when known (only files you may read): else "a file". */
export function activityLines(events: Event[], me: string | null | undefined, pathOf: (id: string) => string | undefined): ActivityLine[] {
  const lines: ActivityLine[] = [];
  for (let i = 0; i < events.length; ) {
    let end = i + 1;
    while (end < events.length && events[end].at === events[i].at) end++;
    lines.push(...instantLines(events.slice(i, end), me, pathOf));
    i = end;
  }
  return lines;
}

/** One action's steps (one file, one instant) as one sentence. */
export function describeAction(steps: Event[], me: string | null | undefined, pathOf: (id: string) => string | undefined): string {
  const change = steps.find(isChange);
  if (change) return changeWords(change, steps, me, pathOf);
  const first = steps[0];
  return actionWords(steps, me, first.artifact_id ? filesLabel([first.artifact_id], pathOf) : "a file", false);
}

/** A change's own event (its files are in `data.files`). */
function isChange(e: Event): boolean {
  return e.type === "change.committed" || e.type === "change.proposed";
}

function changeFiles(change: Event): string[] {
  const files = (change.data as { files?: unknown }).files;
  if (!Array.isArray(files)) return [];
  return files.map((f) => (f as { artifact_id?: unknown }).artifact_id).filter((id): id is string => typeof id === "string");
}

/** "hero.psd", "hero.psd and 2 more" (the first file whose path is known
 *  named), "a file", "3 files". */
function filesLabel(ids: string[], pathOf: (id: string) => string | undefined): string {
  const known = ids.map(pathOf).find((path) => path);
  if (!known) return ids.length > 1 ? `${ids.length} files` : "a file";
  return ids.length > 1 ? `${fileName(known)} and ${ids.length - 1} more` : fileName(known);
}

/** The actions of one instant (events newest first), a line each, newest first. */
function instantLines(run: Event[], me: string | null | undefined, pathOf: (id: string) => string | undefined): ActivityLine[] {
  type Action = { steps: Event[]; newest: number; oldest: number };
  const action = (steps: Event[]): Action => ({
    steps,
    newest: Math.max(...steps.map((e) => e.seq)),
    oldest: Math.min(...steps.map((e) => e.seq)),
  });
  const changes: Action[] = [];
  const told = new Set<Event>();
  // A change, with each of its files' steps at that instant.
  for (const change of run.filter(isChange)) {
    const files = new Set(changeFiles(change));
    const steps = run.filter((e) => !told.has(e) && !isChange(e) && e.artifact_id !== null && files.has(e.artifact_id));
    for (const e of [change, ...steps]) told.add(e);
    changes.push(action([change, ...steps]));
  }
  // Each file's steps; a lapse found on the way (someone's lease that ran
  // out before this action) is its own line.
  const others: Action[] = [];
  const byFile = new Map<string, Event[]>();
  for (const e of run) {
    if (told.has(e)) continue;
    if (e.artifact_id === null) others.push(action([e]));
    else byFile.set(e.artifact_id, [...(byFile.get(e.artifact_id) ?? []), e]);
  }
  const lapseApart = (e: Event) => e.type === "lease.expired";
  const folded = (e: Event) => lapseApart(e) || e.type === "request.ended";
  for (const steps of byFile.values()) {
    if (steps.some(lapseApart) && steps.some((e) => !folded(e))) {
      others.push(action(steps.filter(lapseApart)), action(steps.filter((e) => !lapseApart(e))));
    } else {
      others.push(action(steps));
    }
  }
  // Files that had the same done to them at once (checked out together, a
  // change's proposals decided together) are one line.
  const together = new Map<string, Action[]>();
  for (const a of others) {
    const id = a.steps[0].artifact_id;
    const key = id === null ? `event ${a.steps[0].id}` : actionWords(a.steps, me, "\u0000", true);
    together.set(key, [...(together.get(key) ?? []), a]);
  }
  const lines: (ActivityLine & { newest: number })[] = changes.map((c) => {
    const change = c.steps[0];
    return { seq: c.newest, newest: c.newest, at: change.at, text: changeWords(change, c.steps, me, pathOf) };
  });
  for (const group of together.values()) {
    const newest = Math.max(...group.map((a) => a.newest));
    const first = group.reduce((a, b) => (b.oldest < a.oldest ? b : a));
    const ids = [...group].sort((a, b) => a.oldest - b.oldest).map((a) => a.steps[0].artifact_id ?? "");
    const text =
      group.length === 1
        ? actionWords(first.steps, me, first.steps[0].artifact_id ? filesLabel(ids, pathOf) : "a file", false)
        : actionWords(first.steps, me, filesLabel(ids, pathOf), true);
    lines.push({ seq: newest, newest, at: first.steps[0].at, text });
  }
  return lines.sort((a, b) => b.newest - a.newest).map(({ seq, at, text }) => ({ seq, at, text }));
}

/** A change of several files, checked in at once with its steps: "bob
 *  checked in props-000.png and 2 more: “new logo”", with the version when
 *  it is one file. */
function changeWords(change: Event, steps: Event[], me: string | null | undefined, pathOf: (id: string) => string | undefined): string {
  const who = change.participant ? personFirst(change.participant, me) : "Someone";
  const files = changeFiles(change);
  const what = filesLabel(files, pathOf);
  const data = change.data as { files?: { result?: { outcome?: string; version?: number } }[] };
  if (change.type === "change.proposed") {
    return files.length > 1
      ? `${who} checked in ${what} late: they became proposals, to be decided together`
      : `${who} checked in ${what} late: it became a proposal`;
  }
  // Its description, saved with each version it made.
  const saved = steps.find((e) => e.type === "version.committed");
  const message = saved && typeof saved.data.message === "string" && saved.data.message.trim() ? `: “${saved.data.message.trim()}”` : "";
  const result = files.length === 1 ? data.files?.[0]?.result : undefined;
  if (result?.outcome === "committed" && result.version !== undefined) return `${who} checked in ${what} as version ${result.version}${message}`;
  if (result?.outcome === "unchanged") return `${who} checked in ${what} unchanged`;
  return `${who} checked in ${what}${message}`;
}

/** One action's steps as a sentence naming `file`; `many` for the same done
 *  to several files at once (no version or other detail of one file). */
function actionWords(steps: Event[], me: string | null | undefined, file: string, many: boolean): string {
  const step = (type: string) => steps.find((e) => e.type === type);
  const first = steps[0];
  const actor = (e: Event) => (e.participant ? personFirst(e.participant, me) : "Someone");
  const data = (e: Event) => e.data as Record<string, unknown>;
  const quoted = (text: unknown) => (typeof text === "string" && text.trim() ? `: “${text.trim()}”` : "");
  const committed = step("version.committed");
  const accepted = step("proposal.accepted");
  if (accepted) {
    const author = committed?.participant;
    const whoseChange = author ? whose(author, me) : "a";
    return many
      ? `${actor(accepted)} accepted ${author ? `${whoseChange} proposals` : "the proposals"} for ${file}`
      : `${actor(accepted)} accepted ${whoseChange} proposal for ${file}: it is version ${String(data(accepted).version ?? "")} now`;
  }
  const rejected = step("proposal.rejected");
  if (rejected) return many ? `${actor(rejected)} rejected the proposals for ${file}` : `${actor(rejected)} rejected a proposal for ${file}`;
  const closed = step("checkout.closed");
  if (closed) {
    const result = data(closed).result as { outcome: string; version?: number } | null;
    const who = actor(closed);
    if (!result) return `${who} cancelled the check-out of ${file}`;
    if (result.outcome === "committed") {
      const message = quoted(committed && data(committed).message);
      return many ? `${who} checked in ${file}${message}` : `${who} checked in ${file} as version ${result.version}${message}`;
    }
    if (result.outcome === "unchanged") return `${who} checked in ${file} unchanged`;
    return many ? `${who} checked in ${file} late: they became proposals` : `${who} checked in ${file} late: it became a proposal`;
  }
  const opened = step("checkout.opened");
  if (opened) return `${actor(opened)} checked out ${file}${quoted(data(opened).note)}`;
  if (committed) {
    const version = data(committed).version;
    if (version === 1) return `${actor(committed)} added ${file}`;
    return many ? `${actor(committed)} saved ${file}` : `${actor(committed)} saved ${file} as version ${String(version ?? "")}${quoted(data(committed).message)}`;
  }
  const created = step("proposal.created");
  if (created) {
    return many
      ? `${actor(created)} proposed changes to ${file}`
      : `${actor(created)} proposed a change to ${file}, against version ${String(data(created).base_version ?? "")}`;
  }
  const broken = step("lease.broken");
  if (broken) {
    const holder = data(broken).holder_participant;
    const whoseLease = typeof holder === "string" ? whose(holder, me) : "a";
    return `${actor(broken)} broke ${whoseLease} ${many ? "leases" : "lease"} on ${file}${quoted(data(broken).reason)}`;
  }
  const expired = step("lease.expired");
  if (expired) return `${expired.participant ? whoseFirst(expired.participant, me) : "A"} ${many ? "leases" : "lease"} on ${file} lapsed`;
  const contended = step("lease.contended");
  if (contended) {
    const holder = data(contended).holder_participant;
    return `${actor(contended)} asked for ${file} while ${typeof holder === "string" ? person(holder, me) : "someone"} had it`;
  }
  const renewed = step("lease.renewed");
  if (renewed) return `${actor(renewed)} extended the lease on ${file}`;
  const acquired = step("lease.acquired");
  if (acquired) return `${actor(acquired)} started editing ${file}`;
  const released = step("lease.released");
  if (released) return `${actor(released)} released ${file}`;
  const renamed = step("artifact.renamed");
  if (renamed) return `${actor(renamed)} renamed ${String(data(renamed).from ?? "a file")} to ${String(data(renamed).to ?? "")}`;
  const asked = step("request.opened");
  if (asked) return `${actor(asked)} asked for ${file}`;
  const answered = step("request.replied");
  if (answered) return `${actor(answered)} answered a request for ${file}`;
  const withdrawn = step("request.withdrawn");
  if (withdrawn) return `${actor(withdrawn)} withdrew a request for ${file}`;
  if (step("request.ended")) return `A request for ${file} ended`;
  if (step("permissions.changed")) {
    return `${first.participant ? personFirst(first.participant, me) : "An admin"} changed the folder permissions`;
  }
  // A kind of event this window does not know yet, in words all the same.
  const words = first.type.replace(/[._]+/g, " ").trim();
  return `${actor(first)}: ${words}${first.artifact_id ? ` (${file})` : ""}`;
}
