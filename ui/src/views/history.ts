// A file's history in its detail, newest first: versions (thumbnail, number,
// author, time, description, size), check-outs and how they ended, proposals
// and what became of them, renames. Older entries page in with `next_before`.
// From a version: open a copy, restore it (while you hold the check-out),
// or pick two to compare. A version that came with other files says so,
// linking to them.
import { api, isAppError, previewUrl, type Change, type FileRow, type Head, type HistoryEntry, type HistoryPage } from "../api";
import { notice, rowOf, run, select, showError, state } from "../app";
import { partOfChange } from "../changes";
import { bytes, checkoutEnding, clock, fileName, person, personFirst, proposalStateWords, span } from "../format";
import { button, h } from "../h";
import { openCompare } from "./compare";
import { compareWithHead } from "./proposals";
import { lazyImage, extensionOf } from "./files";

export const HISTORY_PAGE = 30;
const THUMB = 96;
const COMPARE_SIZE = 4096;

/** The history shown for one artifact: its pages so far, and the versions picked to compare. */
interface Shown {
  artifact: string;
  head: number;
  entries: HistoryEntry[];
  nextBefore: number | null;
  picked: number[];
  element: HTMLElement;
  /** What the entries were last drawn from: drawn again only when it changes,
   *  so a reload neither reloads the thumbnails nor moves a button under a click. */
  drawn: string;
}

let shown: Shown | null = null;

/** The history section of a file's detail: kept while the same file and head
 *  are shown (so paging and picks survive reloads), loaded afresh otherwise. */
export function historySection(row: FileRow): HTMLElement {
  const artifact = row.artifact;
  if (shown && shown.artifact === artifact.id && shown.head === artifact.head.version) {
    renderEntries(shown, row);
    return shown.element;
  }
  const element = h("section", { class: "history", "aria-label": "History", id: "history" },
    h("h3", {}, "History"), h("p", { class: "muted" }, "Loading…"));
  const fresh: Shown = { artifact: artifact.id, head: artifact.head.version, entries: [], nextBefore: null, picked: [], element, drawn: "" };
  shown = fresh;
  void loadPage(fresh, null);
  return element;
}

async function loadPage(into: Shown, before: number | null) {
  let page: HistoryPage;
  try {
    page = await api.history(into.artifact, before, HISTORY_PAGE);
  } catch (error) {
    // Said here, in its place, rather than as a notice on every selection.
    const why = isAppError(error) ? error.message : String(error);
    into.element.replaceChildren(h("h3", {}, "History"), h("p", { class: "warning", role: "status" }, `The history could not be read: ${why}`));
    return;
  }
  if (shown !== into) return;
  into.entries.push(...page.entries);
  into.nextBefore = page.next_before;
  const row = rowOf(into.artifact);
  if (row) renderEntries(into, row);
}

function renderEntries(into: Shown, row: FileRow) {
  const drawn = [into.entries.length, into.nextBefore, into.picked.join(","), row.mine?.state === "open" ? row.mine.id : ""].join("|");
  if (drawn === into.drawn) return;
  into.drawn = drawn;
  const now = Date.now();
  const list = h("ol", { class: "entries" }, ...into.entries.map((entry) => entryItem(entry, into, row, now)));
  const picked = into.picked;
  const compare = picked.length === 2
    ? compareButton(row, picked, "history-compare")
    : h("p", { class: "muted small" }, picked.length === 1 ? "Pick one more version to compare." : "Pick two versions to compare them.");
  const more = into.nextBefore !== null
    ? button("Show older", () => void loadPage(into, into.nextBefore), "ghost small", { id: "history-older" })
    : into.entries.length ? h("p", { class: "muted small" }, "That is the whole history.") : h("p", { class: "muted" }, "Nothing yet.");
  into.element.replaceChildren(h("h3", {}, "History"), h("div", { class: "history-compare" }, compare), list, more);
}

function compareButton(row: FileRow, picked: number[], id: string): HTMLElement {
  return button(`Compare version ${Math.min(...picked)} and ${Math.max(...picked)}`, () => compareVersions(row, picked), "primary small", { id });
}

function entryItem(entry: HistoryEntry, into: Shown, row: FileRow, now: number): HTMLElement {
  switch (entry.kind) {
    case "version":
      return versionItem(entry, into, row, now);
    case "checkout": {
      // A lease lost before the end (lapsed, broken) is said before how it ended.
      const lost = entry.lease_lost && entry.lease_lost.outcome !== entry.ended.outcome ? entry.lease_lost : null;
      return h("li", { class: "entry checkout", "data-kind": "checkout" },
        h("p", {}, h("strong", {}, personFirst(entry.who, state.overview?.me)), ` checked out version ${entry.version}, ${span(entry.from, entry.to, now)}`),
        entry.note ? h("p", { class: "note-line" }, `“${entry.note}”`) : null,
        lost ? h("p", { class: `ending ${lost.outcome}` }, checkoutEnding(lost)) : null,
        h("p", { class: `ending ${entry.ended.outcome}`, "data-ended": entry.ended.outcome }, checkoutEnding(entry.ended)));
    }
    case "proposal": {
      const p = entry;
      return h("li", { class: "entry proposal", "data-kind": "proposal", "data-proposal-entry": p.id },
        h("p", {}, h("strong", {}, personFirst(p.author, state.overview?.me)), ` proposed a change made from version ${p.provenance.version}, against version ${p.base_version}, ${clock(p.created_at, now)} · ${bytes(p.size)}`),
        p.message ? h("p", { class: "description" }, p.message) : null,
        h("p", { class: `state ${p.state}` }, proposalStateWords[p.state] ?? p.state),
        h("div", { class: "actions" },
          button("Compare with the head", () => compareWithHead(p), "ghost small")));
    }
    case "renamed":
      return h("li", { class: "entry renamed", "data-kind": "renamed" },
        h("p", {}, `${entry.by ? personFirst(entry.by, state.overview?.me) : "An admin"} renamed it from “${entry.from}” to “${entry.to}”, ${clock(entry.at, now)}`));
  }
}

function versionItem(head: Head, into: Shown, row: FileRow, now: number): HTMLElement {
  const artifact = row.artifact;
  const picked = into.picked.includes(head.version);
  const pick = h("input", { type: "checkbox", class: "pick", "aria-label": `Pick version ${head.version} to compare`, "data-pick": String(head.version) });
  pick.checked = picked;
  pick.addEventListener("change", () => {
    into.picked = pick.checked ? [...into.picked.filter((v) => v !== head.version), head.version].slice(-2) : into.picked.filter((v) => v !== head.version);
    renderEntries(into, row);
  });
  // The compare action shows where the second pick was made, not only at the top.
  const secondPick = into.picked.length === 2 && into.picked[1] === head.version;
  const actions = h("div", { class: "actions" },
    button("Open a copy", () => void openCopy(row, head.version), "ghost small", { "data-open-copy": String(head.version) }));
  if (row.mine && row.mine.state === "open") {
    actions.append(button("Restore this version", () => void restore(row, head.version), "ghost small", { "data-restore": String(head.version) }));
  }
  return h("li", { class: `entry version${picked ? " picked" : ""}`, "data-kind": "version", "data-version": String(head.version) },
    lazyImage(previewUrl({ artifact: artifact.id, version: head.version }, THUMB), `Version ${head.version}`, extensionOf(artifact.path), null),
    h("div", { class: "entry-body" },
      h("p", {}, h("label", { class: "pick-label" }, pick, h("strong", {}, `Version ${head.version}`)),
        head.version === artifact.head.version ? h("span", { class: "badge" }, "head") : null,
        ` by ${person(head.author, state.overview?.me)}, ${clock(head.committed_at, now)} · ${bytes(head.size)}`),
      head.message ? h("p", { class: "description" }, head.message) : h("p", { class: "description muted" }, "No description"),
      head.change_id ? changeLine(head.change_id, artifact.id) : null,
      secondPick ? compareButton(row, into.picked, "history-compare-here") : null,
      actions));
}

/** Changes read once per window: a change never changes. */
const changes = new Map<string, Promise<Change>>();

/** "part of a change of 3 files", with the others as links to their detail. */
function changeLine(id: string, artifact: string): HTMLElement {
  const line = h("p", { class: "change-line", "data-change": id }, "part of a change");
  let change = changes.get(id);
  if (!change) {
    change = api.change(id);
    changes.set(id, change);
    change.catch(() => changes.delete(id));
  }
  change.then((c) => {
    const others = c.files.filter((f) => f.artifact_id !== artifact);
    line.replaceChildren(`${partOfChange(c.files.length)}: `, ...others.flatMap((f, i) => [
      i ? ", " : "",
      button(fileName(f.path), () => select(f.artifact_id), "link", { "data-change-file": f.artifact_id }),
    ]));
  }, () => {
    // The change could not be read now: the line keeps saying what it knows.
  });
  return line;
}

function compareVersions(row: FileRow, picked: number[]) {
  const [older, newer] = [Math.min(...picked), Math.max(...picked)];
  const side = (version: number) => {
    const entry = shown?.entries.find((e) => e.kind === "version" && e.version === version);
    return {
      label: `Version ${version}`,
      src: previewUrl({ artifact: row.artifact.id, version }, COMPARE_SIZE),
      file: entry?.kind === "version" ? { digest: entry.digest, size: entry.size } : undefined,
      review: { artifact: row.artifact.id, of: { version } },
    };
  };
  openCompare(`${fileName(row.artifact.path)}: version ${older} and ${newer}`, side(older), side(newer));
}

async function openCopy(row: FileRow, version: number) {
  const path = await run(row.artifact.id, () => api.openCopy(row.artifact.id, version));
  if (path) {
    notice(`Version ${version} is beside the file`, `“${fileName(path)}”, read-only.`, "success",
      [button("Show in folder", () => void api.reveal(path).catch((e) => showError(e)), "small")]);
  }
}

async function restore(row: FileRow, version: number) {
  const done = await run(row.artifact.id, () => api.restoreVersion(row.artifact.id, version));
  if (done) {
    const kept = done.backup ? ` What was there is kept as “${fileName(done.backup)}”.` : "";
    notice(`Version ${version} is in your copy`, `${kept} Check in to make it the head.`.trim(), "success");
  }
}
