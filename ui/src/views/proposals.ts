// Open proposals: accept, rebuild or reject each, after comparing it with
// the head in the window (or beside the head's file, in the workspace).
import { api, previewUrl, type Proposal } from "../api";
import { notice, onRender, rowOf, run, showError, state } from "../app";
import { decide } from "../actions";
import { bytes, clock, fileName, participantName } from "../format";
import { $, button, h } from "../h";
import { openCompare } from "./compare";

const COMPARE_SIZE = 4096;

export function compareWithHead(p: Proposal) {
  const row = rowOf(p.artifact_id);
  const name = row ? fileName(row.artifact.path) : "A file";
  const head = row?.artifact.head.version ?? p.base_version;
  openCompare(`${name}: proposal and head`,
    { label: `${participantName(p.author)}'s proposal`, src: previewUrl({ proposal: p.id }, COMPARE_SIZE) },
    { label: `Version ${head} (head)`, src: previewUrl({ artifact: p.artifact_id, version: head }, COMPARE_SIZE) });
}

async function saveBeside(p: Proposal) {
  const file = await run(p.artifact_id, () => api.compareProposal(p.artifact_id, p.id));
  if (file) {
    notice("Ready to compare", `“${fileName(file)}” is beside the head's file, in your workspace folder.`, "success",
      [button("Show in folder", () => void api.reveal(file).catch((e) => showError(e)), "small")]);
  }
}

function renderProposals(now: number) {
  if (state.view !== "proposals") return;
  const proposals = state.overview?.proposals ?? [];
  const view = $("view-proposals");
  if (!proposals.length) {
    view.replaceChildren(h("p", { class: "empty" }, "No open proposals."));
    return;
  }
  view.replaceChildren(h("ul", { class: "cards" }, ...proposals.map((p) => {
    const row = rowOf(p.artifact_id);
    const head = row?.artifact.head;
    const moved = head && head.version !== p.base_version;
    return h("li", { class: "card", "data-proposal": p.id },
      h("h3", {}, row ? fileName(row.artifact.path) : "A file"),
      h("p", {}, `${participantName(p.author)} proposed a change against version ${p.base_version}, ${clock(p.created_at, now)} · ${bytes(p.size)}`),
      p.message ? h("p", { class: "description" }, `“${p.message}”`) : null,
      moved ? h("p", { class: "warning" }, `The head has moved to version ${head.version}: rebuild before accepting.`) : null,
      h("div", { class: "actions" },
        button("Compare with the head", () => compareWithHead(p), "primary", { "data-compare": p.id }),
        button("Accept", () => void decide(p, "accept"), ""),
        button("Rebuild", () => void decide(p, "rebuild")),
        button("Reject", () => void decide(p, "reject"), "ghost"),
        button("Save beside the head", () => void saveBeside(p), "ghost", { "data-save-beside": p.id, title: "Puts the proposal's file beside the head's, in your workspace folder" })));
  })));
}

export function setUpProposals() {
  onRender(renderProposals);
}
