// Your check-outs: each with its time left, the actions on it, and the
// requests others made of it (who, what, when) with Check in, Release and Reply.
import type { Checkout, Request } from "../api";
import { onRender, rowOf, scheduleReload, select, setView, state } from "../app";
import { cancelCheckout, cancelUpload, checkIn, extend, getCopy } from "../actions";
import { checkedOutOn, clock, fileName, leaseLost, localStateLabels, replyLine, requestLine } from "../format";
import { requestButtons, requestsOn } from "../requests";
import { $, button, cards, h } from "../h";
import { cancelButton } from "../sending";
import { holdWhileBusy } from "./detail";
import { countdown, holderCell } from "./files";

function renderMine(now: number) {
  if (state.view !== "mine") return;
  const mine = state.overview?.checkouts ?? [];
  cards($("view-mine"), mine, "You hold no files. Pick a file and check it out.", (c) => {
    const row = rowOf(c.artifact_id);
    const lost = row !== undefined && leaseLost(c, row.artifact.lease);
    // Made on another device (or its copy is not here): get the copy here, never a Check in that can only fail.
    const elsewhere = row?.elsewhere === true;
    const actions = h("div", { class: "actions" },
      state.uploads.has(c.id)
        ? cancelUploadButton(c)
        : elsewhere ? button("Download to edit", () => void getCopy(row!, c), "primary", { "data-get-copy": c.id })
        : button("Check in", () => void checkIn(c), "primary"),
      // An ended lease cannot be extended: checking out again takes a new one.
      lost ? null : button("Extend", () => void extend(c)),
      button("Cancel check-out", () => void cancelCheckout(c), "ghost"),
      button("Show", () => { state.detailOpen = true; setView("files"); select(c.artifact_id); }, "ghost", { "data-while-busy": "" }));
    if (state.busy.has(c.artifact_id)) holdWhileBusy(actions);
    return h("li", { class: "card" },
      h("h3", {}, fileName(c.path)),
      h("p", { class: "muted" }, c.path),
      lost ? h("p", { class: "warning" }, holderCell(row!, now), ": check in to keep your changes (as a proposal if someone else saved a version meanwhile), or cancel.")
        : h("p", {}, countdown(c.expires_at, now), ` left, until ${clock(c.expires_at, now)}`),
      row ? h("p", {}, h("span", { class: `local ${row.local}` }, localStateLabels[row.local])) : null,
      elsewhere && checkedOutOn(c) ? h("p", { class: "elsewhere", role: "status" }, h("strong", {}, checkedOutOn(c))) : null,
      actions,
      requestList(requestsOn(c.id), now));
  });
}

function cancelUploadButton(c: Checkout): HTMLButtonElement {
  const cancel = cancelButton(state.uploads.get(c.id));
  const stop = button(cancel.label, () => void cancelUpload(c), "danger", { "data-while-busy": "", "data-cancel-upload": c.id });
  stop.disabled = cancel.disabled;
  return stop;
}

/** The requests on one check-out of yours, newest first, each with its answers. */
function requestList(requests: Request[], now: number): HTMLElement | null {
  if (!requests.length) return null;
  const me = state.overview?.me;
  return h("ul", { class: "requests", "aria-label": "Requests" }, ...requests.map((r) => {
    const reply = replyLine(r, me, now);
    return h("li", { class: `request ${r.state}`, "data-request": r.id, "data-from": r.from },
      h("p", { class: "request-line" }, requestLine(r, me, now)),
      reply ? h("p", { class: "reply muted" }, reply) : null,
      h("div", { class: "actions" }, ...requestButtons(r, true)));
  }));
}

export function setUpCheckouts() {
  onRender(renderMine);
  // Asking again replaces a request's message without an event: opening
  // the view fetches the requests as they are now.
  $("tab-mine").addEventListener("click", () => scheduleReload());
}
