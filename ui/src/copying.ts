// A link to send, shown whole with a Copy button: the invite links of the
// Studio view and of Settings' "Add another computer". Some systems give a
// web view no clipboard; the link is then selected, to copy by hand.
import { button, h } from "./h";

/** The link in a read-only field `id`, a Copy button `id-copy`, and what
 *  copying did in `id-copied`. */
export function linkToSend(id: string, link: string): HTMLElement {
  const field = h("input", { id, type: "text", readonly: "", spellcheck: "false", value: link });
  const said = h("span", { class: "muted", role: "status", id: `${id}-copied` });
  const copy = button("Copy link", async () => {
    try {
      await navigator.clipboard.writeText(link);
      said.textContent = "Copied: paste it in a message.";
    } catch {
      field.select();
      said.textContent = "This system gave no clipboard: the link is selected, copy it with Ctrl+C.";
    }
  }, "small", { id: `${id}-copy` });
  field.addEventListener("focus", () => field.select());
  return h("div", { class: "link-to-send" }, h("div", { class: "with-button" }, field, copy), said);
}
