// Your check-outs: each with its time left and the actions on it.
import { onRender, rowOf, select, setView, state } from "../app";
import { cancelCheckout, cancelUpload, checkIn, extend } from "../actions";
import { clock, fileName, localStateLabels } from "../format";
import { $, button, cards, h } from "../h";
import { holdWhileBusy } from "./detail";
import { countdown } from "./files";

function renderMine(now: number) {
  if (state.view !== "mine") return;
  const mine = state.overview?.checkouts ?? [];
  cards($("view-mine"), mine, "You hold no files. Pick a file and check it out.", (c) => {
    const row = rowOf(c.artifact_id);
    const actions = h("div", { class: "actions" },
      state.uploads.has(c.id)
        ? button("Cancel upload", () => void cancelUpload(c), "danger", { "data-while-busy": "" })
        : button("Check in", () => void checkIn(c), "primary"),
      button("Extend", () => void extend(c)),
      button("Cancel check-out", () => void cancelCheckout(c), "ghost"),
      button("Show", () => { state.detailOpen = true; setView("files"); select(c.artifact_id); }, "ghost", { "data-while-busy": "" }));
    if (state.busy.has(c.artifact_id)) holdWhileBusy(actions);
    return h("li", { class: "card" },
      h("h3", {}, fileName(c.path)),
      h("p", { class: "muted" }, c.path),
      h("p", {}, countdown(c.expires_at, now), ` left, until ${clock(c.expires_at, now)}`),
      row ? h("p", {}, h("span", { class: `local ${row.local}` }, localStateLabels[row.local])) : null,
      actions);
  });
}

export function setUpCheckouts() {
  onRender(renderMine);
}
