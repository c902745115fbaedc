// The settings dialog: which store, the server and its token (kept in the
// keychain), the workspace folder, your name on the bundled store.
import { api, type AppError } from "../api";
import { notice, scheduleReload, showError } from "../app";
import { explain, fingerprint, sentence } from "../format";
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
  const problem = (error: AppError) => {
    if (error.code === "unauthorized") return "The server did not accept this token.";
    // Its own words name both fingerprints.
    if (error.code === "certificate_changed") return sentence(error.message);
    if (error.code === "certificate_untrusted") return "The server's certificate is not trusted here: its fingerprint is above.";
    return explain(error, Date.now()).detail;
  };
  const certificate = h("div", { id: "settings-certificate", class: "certificate" });
  /** The server's certificate, when the session refused it: its fingerprint
   *  and subject, to check with the admin, and a button to trust it. */
  const lookAtCertificate = async () => {
    certificate.replaceChildren(h("p", { class: "muted" }, "Looking at the server's certificate…"));
    let seen;
    try {
      seen = await api.serverCertificate();
    } catch (error) {
      certificate.replaceChildren(h("p", {}, explain(error as AppError, Date.now()).detail));
      return;
    }
    if (!seen || seen.trusted) {
      certificate.replaceChildren();
      return;
    }
    const trust = button("Trust this certificate", async () => {
      try {
        const saved = await api.trustCertificate(seen.sha256);
        if (saved.session_error) {
          status.textContent = problem(saved.session_error);
          return;
        }
        dialog.close();
        scheduleReload();
        void loadActivity();
      } catch (error) {
        showError(error);
      }
    }, "primary", { id: "settings-trust" });
    certificate.replaceChildren(
      h("p", {}, seen.changed
        ? "This is not the certificate you trusted. Trust it only if your admin says the server's certificate was renewed, and the fingerprint matches theirs."
        : "This computer does not trust the server's certificate; it may be your studio's own. Trust it only if the fingerprint matches the one your admin gives you."),
      h("dl", {},
        h("dt", {}, "Fingerprint (SHA-256)"), h("dd", { id: "settings-fingerprint", class: "fingerprint" }, fingerprint(seen.sha256)),
        h("dt", {}, "Subject"), h("dd", { id: "settings-subject" }, seen.subject)),
      h("div", { class: "actions" }, trust, button("Look again", () => void lookAtCertificate(), "ghost", { id: "settings-look-again" })));
  };
  const certificateRefused = (error: AppError | null) =>
    error !== null && (error.code === "certificate_untrusted" || error.code === "certificate_changed");
  if (view.session_error) status.textContent = problem(view.session_error);
  if (certificateRefused(view.session_error)) void lookAtCertificate();
  const save = button("Save", async () => {
    try {
      const saved = await api.saveSettings(
        // The pin changes only through "Trust this certificate".
        { backend: backend.value as "bundled" | "remote", server_url: url.value.trim(), pinned_sha256: s.pinned_sha256, workspace: workspace.value.trim(), display_name: name.value.trim() },
        token.value || null,
      );
      if (saved.session_error) {
        status.textContent = problem(saved.session_error);
        if (certificateRefused(saved.session_error)) void lookAtCertificate();
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
    remoteOnly, bundledOnly, certificate,
    field("Workspace folder", workspace, "Your files are mirrored here. Switching stores never deletes them."),
    status,
    h("div", { class: "actions" }, save, button("Close", () => dialog.close(), "ghost"))));
  dialog.showModal();
}
