// Several files chosen in the list, in the detail's place: what they allow
// together. Check out N files (every one or none), Check in N files as one
// change (one description, one progress bar, cancellable until the commit
// begins), Cancel N check-outs. Every lease change starts from a click.
import type { FileRow } from "../api";
import { state } from "../app";
import { CHANGE_UPLOAD, cancelSeveral, cancelUploadOf, checkInSeveral, checkOutSeveral } from "../actions";
import { cancelButton, progressOf } from "../sending";
import { severalFiles, whatSeveralAllow } from "../changes";
import { fileName, holderName, leaseChoices } from "../format";
import { button, h } from "../h";

export function severalPanel(rows: FileRow[], now: number): HTMLElement {
  const allow = whatSeveralAllow(rows, now);
  const me = state.overview?.me;
  const n = rows.length;
  const upload = state.uploads.get(CHANGE_UPLOAD);
  const actions = h("div", { class: "actions" });
  const parts: (Node | null)[] = [
    h("h2", { id: "several-title" }, `${severalFiles(n)} chosen`),
    h("ul", { class: "several-files", id: "several-files" }, ...rows.map((r) => h("li", { "data-id": r.artifact.id }, fileName(r.artifact.path)))),
  ];
  if (upload) {
    const { label, width } = progressOf(upload);
    parts.push(h("div", { class: "progress", role: "progressbar", "aria-label": "Uploading", "data-upload": CHANGE_UPLOAD },
      h("span", { class: "bar", style: `width: ${width};` }), h("span", { class: "label" }, label)));
    const cancel = cancelButton(upload);
    const stop = button(cancel.label, () => void cancelUploadOf(CHANGE_UPLOAD), "danger", { id: "several-cancel-upload", "data-while-busy": "", "data-cancel-upload": CHANGE_UPLOAD });
    stop.disabled = cancel.disabled;
    actions.append(stop);
  } else if (allow.checkIn) {
    const mine = allow.checkIn;
    actions.append(
      button(`Check in ${severalFiles(n)}`, () => checkInSeveral(mine), "primary", { id: "several-checkin" }),
      button(`Cancel ${n} check-outs`, () => void cancelSeveral(mine), "ghost", { id: "several-cancel", title: "Releases the files; your changes are kept as backups" }),
    );
  } else if (allow.checkOut) {
    const ids = allow.checkOut;
    const hours = h("select", { id: "several-hours" });
    for (const [value, label] of leaseChoices(state.overview?.default_checkout_seconds ?? 8 * 3600)) hours.append(h("option", { value }, label));
    parts.push(h("div", { class: "checkout-form" },
      h("label", {}, "Note for others ", h("input", { id: "several-note", type: "text", placeholder: "What you are doing (optional)", maxlength: "200" })),
      h("label", {}, "For ", hours)));
    actions.append(button(`Check out ${severalFiles(n)}`, () => void checkOutSeveral(ids), "primary", { id: "several-checkout" }));
  } else if (allow.heldByOthers.length) {
    const held = allow.heldByOthers.map((r) => `${fileName(r.artifact.path)} (${holderName(r.artifact.lease!, me, now)})`);
    parts.push(h("p", { class: "hint", role: "status", id: "several-why" },
      `Someone else holds ${held.join(", ")}: check out the others, or ask for these from each file's detail.`));
  } else {
    parts.push(h("p", { class: "hint", role: "status", id: "several-why" },
      "These files are not all alike: choose files that are all free to check them out together, or all yours to check them in as one change."));
  }
  if (rows.some((r) => state.busy.has(r.artifact.id)) && !upload) {
    actions.querySelectorAll<HTMLButtonElement>("button").forEach((b) => (b.disabled = true));
  }
  parts.push(actions);
  return h("div", { class: "detail-main several", "data-several": String(n) }, ...parts);
}
