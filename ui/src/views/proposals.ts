// Open proposals: accept, rebuild or reject each, after comparing it with
// the head in the window (or beside the head's file, in the workspace). The
// decision is offered on the card and in the compare view, each choice
// saying what it does; an accept that supersedes someone else's head asks first.
import { api, previewUrl, type Proposal } from "../api";
import { ask, notice, onRender, render, rowOf, run, showError, state } from "../app";
import { decide } from "../actions";
import { acceptQuestion, bytes, clock, decisionWords, fileName, proposalSummary, whose, whoseFirst } from "../format";
import { groupedByChange, severalFiles } from "../changes";
import { $, button, cards, h } from "../h";
import { closeCompare, openCompare } from "./compare";
import { extensionOf, lazyImage } from "./files";
import { proposalReviewLine } from "./review";

const COMPARE_SIZE = 4096;
const THUMB = 96;

/** Compares a proposal with its file's head; `change` (its change's
 *  proposals, when it has several) gives steps to the others. */
export function compareWithHead(p: Proposal, change: Proposal[] = [p]) {
  const row = rowOf(p.artifact_id);
  const name = row ? fileName(row.artifact.path) : "A file";
  const head = row?.artifact.head;
  const version = head?.version ?? p.base_version;
  const me = state.overview?.me;
  const open = p.state === "open" && state.overview?.proposals.some((q) => q.id === p.id);
  const at = Math.max(0, change.findIndex((q) => q.id === p.id));
  const steps = change.length > 1 ? h("div", { class: "steps", role: "group", "aria-label": "Files of the change", id: "compare-steps" },
    stepButton("‹ Previous file", change[at - 1], change, "compare-previous"),
    h("span", { id: "compare-step" }, `File ${at + 1} of ${change.length} of the change`),
    stepButton("Next file ›", change[at + 1], change, "compare-next")) : null;
  const decision = open ? decisionPanel(p, "compare", change) : undefined;
  const side = steps ? h("div", { class: "compare-side" }, steps, decision ?? null) : decision;
  openCompare(`${name}: proposal and head`,
    { label: `${whoseFirst(p.author, me)} proposal`, src: previewUrl({ proposal: p.id }, COMPARE_SIZE), file: { digest: p.digest, size: p.size },
      review: { artifact: p.artifact_id, of: { proposal: p.id, base: p.base_version } } },
    { label: `Version ${version} (head)`, src: previewUrl({ artifact: p.artifact_id, version }, COMPARE_SIZE), file: head ? { digest: head.digest, size: head.size } : undefined,
      review: { artifact: p.artifact_id, of: { version } } },
    "side",
    side);
}

function stepButton(label: string, to: Proposal | undefined, change: Proposal[], id: string): HTMLButtonElement {
  const step = button(label, () => to && compareWithHead(to, change), "ghost small", { id });
  step.disabled = !to;
  return step;
}

/** Accept, rebuild and reject, each with what it does in words. `where`
 *  tells the buttons' ids apart (a card, or the compare view). */
export function decisionPanel(p: Proposal, where: "card" | "compare", change: Proposal[] = [p]): HTMLElement {
  const head = rowOf(p.artifact_id)?.artifact.head;
  const me = state.overview?.me;
  if (!head) return h("div", { class: "decision" });
  const words = decisionWords(p, head, me);
  // A change's proposals are decided together: accepted only if every head is still theirs.
  const current = change.every((q) => rowOf(q.artifact_id)?.artifact.head.version === q.base_version);
  const id = (what: string) => (where === "compare" ? `compare-${what}` : `${what}-${p.id}`);
  const accept = button("Accept", () => void acceptProposal(p), current ? "primary" : "", { id: id("accept"), "data-accept": p.id });
  accept.disabled = !current;
  const choices: [HTMLElement, string][] = [[accept, words.accept]];
  if (!current) choices.push([button("Rebuild", () => void decided(p, "rebuild"), "primary", { id: id("rebuild"), "data-rebuild": p.id }), words.rebuild]);
  choices.push([button("Reject", () => void decided(p, "reject"), "ghost", { id: id("reject"), "data-reject": p.id }), words.reject]);
  const together = change.length > 1 ? h("p", { class: "together" }, `Each choice acts on all ${severalFiles(change.length)} of the change together.`) : null;
  return h("div", { class: "decision", role: "group", "aria-label": "Decide" },
    together, ...choices.map(([b, said]) => h("div", { class: "choice" }, b, h("span", { class: "said" }, said))));
}

/** Accepts, asking first when the head it supersedes is someone else's. */
async function acceptProposal(p: Proposal) {
  const head = rowOf(p.artifact_id)?.artifact.head;
  const question = head && acceptQuestion(p, head, state.overview?.me);
  if (question && !(await ask(question))) return;
  await decided(p, "accept");
}

async function decided(p: Proposal, decision: "accept" | "rebuild" | "reject") {
  closeCompare();
  await decide(p, decision);
}

async function saveBeside(p: Proposal) {
  const file = await run(p.artifact_id, () => api.compareProposal(p.artifact_id, p.id));
  if (file) {
    notice("Ready to compare", `“${fileName(file)}” is beside the head's file, in your workspace folder.`, "success",
      [button("Show in folder", () => void api.reveal(file).catch((e) => showError(e)), "small")]);
  }
}

/** Who saved each version since a proposal was made, by file, as read for
 *  the head it was read at: read once a head, when a card needs it. */
const savers = new Map<string, { head: number; versions: { version: number; author: string }[] }>();
const readingSavers = new Set<string>();

function saversOf(artifact: string, from: number, head: number): { version: number; author: string }[] | undefined {
  const known = savers.get(artifact);
  if (known?.head === head) return known.versions;
  if (head > from && !readingSavers.has(artifact)) {
    readingSavers.add(artifact);
    // Only the versions since: a card never names more than a page's worth.
    void api.history(artifact, null, Math.min(100, (head - from) * 4 + 4))
      .then((page) => {
        const versions = page.entries.flatMap((e) => (e.kind === "version" ? [{ version: e.version, author: e.author }] : []));
        savers.set(artifact, { head, versions });
        render();
      }, () => {})
      .finally(() => readingSavers.delete(artifact));
  }
  return undefined;
}

function summaryOf(p: Proposal, head: { version: number; author: string } | undefined): string {
  const me = state.overview?.me;
  return proposalSummary(p, head, me, head ? saversOf(p.artifact_id, p.provenance.version, head.version) : undefined);
}

function renderProposals(now: number) {
  if (state.view !== "proposals") return;
  const proposals = state.overview?.proposals ?? [];
  const me = state.overview?.me;
  cards($("view-proposals"), groupedByChange(proposals), "No open proposals.", (change) => {
    if (change.length > 1) return changeCard(change, now);
    const p = change[0];
    const row = rowOf(p.artifact_id);
    const head = row?.artifact.head;
    const path = row?.artifact.path ?? "";
    return h("li", { class: "card proposal-card", "data-proposal": p.id },
      lazyImage(previewUrl({ proposal: p.id }, THUMB), `${whose(p.author, me)} proposal`, extensionOf(path), null),
      h("div", { class: "card-body" },
        h("h3", {}, row ? fileName(path) : "A file"),
        h("p", { class: "summary" }, summaryOf(p, head)),
        h("p", { class: "muted" }, `${clock(p.created_at, now)} · ${bytes(p.size)}`),
        p.message ? h("p", { class: "description" }, `“${p.message}”`) : null,
        proposalReviewLine(p),
        h("div", { class: "actions" },
          button("Compare with the head", () => compareWithHead(p), "primary", { "data-compare": p.id }),
          button("Save beside the head", () => void saveBeside(p), "ghost", { "data-save-beside": p.id, title: "Puts the proposal's file beside the head's, in your workspace folder" })),
        decisionPanel(p, "card")));
  });
}

/** A change's proposals as one card: each file, one decision for all. */
function changeCard(change: Proposal[], now: number): HTMLLIElement {
  const me = state.overview?.me;
  const first = change[0];
  return h("li", { class: "card proposal-card change-card", "data-change": first.change_id ?? "" },
    h("div", { class: "card-body" },
      h("h3", {}, `A change of ${severalFiles(change.length)}`),
      h("p", { class: "muted" }, `${whoseFirst(first.author, me)} · ${clock(first.created_at, now)}`),
      first.message ? h("p", { class: "description" }, `“${first.message}”`) : null,
      h("ul", { class: "change-files" }, ...change.map((p) => {
        const row = rowOf(p.artifact_id);
        const path = row?.artifact.path ?? "";
        return h("li", { "data-proposal": p.id },
          lazyImage(previewUrl({ proposal: p.id }, THUMB), `${whose(p.author, me)} proposal`, extensionOf(path), null),
          h("span", {}, h("strong", {}, row ? fileName(path) : "A file"), " ", h("span", { class: "summary" }, summaryOf(p, row?.artifact.head))),
          button("Compare with the head", () => compareWithHead(p, change), "ghost small", { "data-compare": p.id }));
      })),
      decisionPanel(change.find((p) => rowOf(p.artifact_id)?.artifact.head.version !== p.base_version) ?? first, "card", change)));
}

export function setUpProposals() {
  onRender(renderProposals);
}
