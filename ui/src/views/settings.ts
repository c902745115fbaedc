// The settings dialog: which store, the server and its token (kept in the
// keychain), the workspace folder, your name on the bundled store.
import { api, type AppError } from "../api";
import { notice, scheduleReload, showError } from "../app";
import { explain } from "../format";
import { $, button, h } from "../h";
import { loadActivity } from "./activity";

export async function openSettings() {
  const dialog = $("settings") as HTMLDialogElement;
  let view;
  try {
    view = await api.settings();
  } catch (error) {
    return showError(error);
  }
  const s = view.settings;
  const field = (label: string, input: HTMLElement, help = "") =>
    h("label", { class: "field" }, h("span", {}, label), input, help ? h("small", { class: "muted" }, help) : null);
  const backend = h("select", { id: "settings-backend" },
    h("option", { value: "bundled" }, "On this computer (no server)"),
    h("option", { value: "remote" }, "A team server"));
  backend.value = s.backend;
  // Text, not "url": several addresses may be given, separated by commas.
  const url = h("input", { id: "settings-url", type: "text", spellcheck: "false", placeholder: "https://leasedesk.example:7443, https://standby.example:7443", value: s.server_url });
  const token = h("input", { id: "settings-token", type: "password", autocomplete: "off", placeholder: view.has_token ? "stored in your keychain" : "paste the token your admin gave you" });
  const workspace = h("input", { id: "settings-workspace", type: "text", value: s.workspace });
  const name = h("input", { id: "settings-name", type: "text", value: s.display_name });
  const remoteOnly = h("div", {}, field("Server address", url, "Several addresses, separated by commas: when one does not answer, the next is used."), field("Token", token, "Kept in your system keychain, never in a file."));
  const bundledOnly = h("div", {}, field("Your name", name));
  const sync = () => { remoteOnly.hidden = backend.value !== "remote"; bundledOnly.hidden = backend.value !== "bundled"; };
  backend.addEventListener("change", sync);
  sync();
  const status = h("p", { class: "muted", role: "status" });
  if (view.keychain_note) status.textContent = view.keychain_note;
  // This dialog is where a token is fixed: no "open Settings" here.
  const problem = (error: AppError) =>
    error.code === "unauthorized" ? "The server did not accept this token." : explain(error, Date.now()).detail;
  if (view.session_error) status.textContent = problem(view.session_error);
  const save = button("Save", async () => {
    try {
      const saved = await api.saveSettings(
        { backend: backend.value as "bundled" | "remote", server_url: url.value.trim(), workspace: workspace.value.trim(), display_name: name.value.trim() },
        token.value || null,
      );
      if (saved.session_error) {
        status.textContent = problem(saved.session_error);
        return;
      }
      if (saved.keychain_note) notice("Token kept for this run only", saved.keychain_note);
      dialog.close();
      scheduleReload();
      void loadActivity();
    } catch (error) {
      showError(error);
    }
  }, "primary", { id: "settings-save" });
  dialog.replaceChildren(h("form", { method: "dialog", class: "settings-form" },
    h("h2", { id: "settings-title" }, "Settings"),
    field("Where files are leased", backend),
    remoteOnly, bundledOnly,
    field("Workspace folder", workspace, "Your files are mirrored here. Switching stores never deletes them."),
    status,
    h("div", { class: "actions" }, save, button("Close", () => dialog.close(), "ghost"))));
  dialog.showModal();
}
