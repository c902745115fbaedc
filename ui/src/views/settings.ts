// The settings dialog: which store, the server and its token (kept in the
// keychain), the workspace folder, your name on the bundled store. An
// address is checked before it is saved, and can be tried first with Test
// connection; errors are said here, in this dialog's words.
import { open as openDialog } from "@tauri-apps/plugin-dialog";
import { api, isAppError, type AppError, type SettingsView } from "../api";
import { ask, notice, scheduleReload, showError } from "../app";
import { explain } from "../error-words";
import { clock, deviceLine, fingerprint, participantName, serverAddressProblem, serverLine, settingsProblem } from "../format";
import { $, button, h } from "../h";
import { loadActivity } from "./activity";
import { openJoin } from "./join";
import { linkToSend } from "../copying";

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
  const url = h("input", { id: "settings-url", type: "text", spellcheck: "false", placeholder: "https://leasedesk.example:7443", value: s.server_url });
  const token = h("input", { id: "settings-token", type: "password", autocomplete: "off", placeholder: view.has_token ? "stored in your keychain" : "paste the token your admin gave you" });
  const workspace = h("input", { id: "settings-workspace", type: "text", value: s.workspace });
  const chooseFolder = button("Choose…", async () => {
    const picked = await openDialog({ directory: true, multiple: false, title: "Workspace folder", defaultPath: workspace.value || undefined });
    if (typeof picked === "string") workspace.value = picked;
  }, "ghost", { id: "settings-choose-workspace" });
  const name = h("input", { id: "settings-name", type: "text", value: s.display_name });
  const status = h("p", { class: "muted", role: "status", id: "settings-status" });
  const tested = h("p", { class: "muted", role: "status", id: "settings-tested" });
  const say = (where: HTMLElement, text: string, kind: "" | "error" | "ok" = "") => {
    where.textContent = text;
    where.className = kind === "error" ? "warning" : kind === "ok" ? "ok" : "muted";
  };
  const testConnection = button("Test connection", async () => {
    const wrong = serverAddressProblem(url.value);
    if (wrong) return say(tested, wrong, "error");
    say(tested, "Trying the server…");
    try {
      const answered = await api.testConnection(current(), token.value || null);
      say(tested, `Connected to ${serverLine(answered.server).replace(/^Server: /, "")} as ${participantName(answered.me)}.`, "ok");
    } catch (error) {
      say(tested, isAppError(error) ? settingsProblem(error) : String(error), "error");
    }
  }, "ghost", { id: "settings-test" });
  const join = button("Join with an invite…", () => {
    dialog.close();
    openJoin();
  }, "ghost", { id: "settings-join" });
  const devices = h("div", { id: "settings-devices" });
  const remoteOnly = h("div", {},
    field("Server address", url, "Several addresses may be given, separated by commas: when one does not answer, the next is used."),
    field("Token", token, "Kept in your system keychain, never in a file."),
    h("div", { class: "actions" }, testConnection, join), tested, devices);
  const bundledOnly = h("div", {}, field("Your name", name));
  const sync = () => { remoteOnly.hidden = backend.value !== "remote"; bundledOnly.hidden = backend.value !== "bundled"; };
  backend.addEventListener("change", () => {
    // An error about the other choice no longer applies.
    say(status, "");
    say(tested, "");
    certificate.replaceChildren();
    sync();
  });
  // An error about what is being fixed goes as it is fixed.
  for (const input of [url, token, workspace, name]) {
    input.addEventListener("input", () => {
      say(tested, "");
      if (status.className === "warning") say(status, "");
    });
  }
  sync();
  if (view.keychain_note) status.textContent = view.keychain_note;
  // This dialog is where a token is fixed: no "open Settings" here.
  const problem = (error: AppError) => settingsProblem(error);
  const certificate = h("div", { id: "settings-certificate", class: "certificate" });
  /** Settings saved through `saving`: the session's refusal said here (and
   *  answered), or the dialog closed and the window loaded again. */
  const applySaved = async (saving: () => Promise<SettingsView>): Promise<AppError | null> => {
    try {
      const saved = await saving();
      if (saved.session_error) {
        say(status, problem(saved.session_error), "error");
        return saved.session_error;
      }
      dialog.close();
      scheduleReload();
      void loadActivity();
    } catch (error) {
      say(status, isAppError(error) ? problem(error) : String(error), "error");
    }
    return null;
  };
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
    const trust = button("Trust this certificate", () => void applySaved(() => api.trustCertificate(seen.sha256)),
      "primary", { id: "settings-trust" });
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
  /** This device and your others, each revocable, and a code for one more. */
  const showDevices = async () => {
    let mine;
    try {
      mine = await api.myDevices();
    } catch {
      return devices.replaceChildren();
    }
    const fresh = h("div", { id: "settings-new-computer" });
    const rows = mine.devices.map((d) => {
      const thisOne = d.id === mine.current;
      const revoke = button(thisOne ? "Sign out this device" : "Revoke", async () => {
        const sure = await ask(thisOne
          ? { title: "Sign out this device?", body: "Its token stops working and is forgotten here. To come back, you need a new invite.", confirm: "Sign out" }
          : { title: `Revoke ${d.name}?`, body: "Its token stops working at once; that computer must be invited again.", confirm: "Revoke" });
        if (!sure) return;
        try {
          const left = await api.revokeMyDevice(d.id);
          if (left === null) {
            dialog.close();
            scheduleReload();
          } else void showDevices();
        } catch (error) {
          say(status, isAppError(error) ? problem(error) : String(error), "error");
        }
      }, thisOne ? "ghost" : "danger small", { "data-revoke": d.id });
      return h("li", { "data-device": d.id }, h("span", {}, deviceLine(d, mine.current, Date.now())), revoke);
    });
    const add = button("Add another computer", async () => {
      try {
        const made = await api.addComputer();
        fresh.replaceChildren(
          h("p", {}, "On the other computer, open this link, or paste it in Join your studio. It works once, until ", clock(made.invite.expires_at, Date.now()), "."),
          linkToSend("settings-new-link", made.link));
      } catch (error) {
        say(status, isAppError(error) ? problem(error) : String(error), "error");
      }
    }, "ghost", { id: "settings-add-computer" });
    devices.replaceChildren(h("h3", {}, "Your devices"), h("ul", { class: "devices" }, ...rows), h("div", { class: "actions" }, add), fresh);
  };
  /** Editors Leasedesk works inside: shown when Blender is on this computer. */
  const editors = h("div", { id: "settings-editors" });
  const offerBlender = async () => {
    if (!(await api.blenderFound().catch(() => null))) return;
    const said = h("p", { class: "muted", role: "status", id: "settings-blender-status" });
    const install = button("Install the Blender add-on", async () => {
      say(said, "Installing in Blender…");
      try {
        await api.installBlenderAddOn();
        say(said, "Installed. In Blender, the Leasedesk panel is in the 3D view's sidebar (N); restart Blender if it is open.", "ok");
      } catch (error) {
        say(said, isAppError(error) ? error.message : String(error), "error");
      }
    }, "ghost", { id: "settings-install-blender" });
    editors.replaceChildren(h("h3", {}, "Inside your editor"),
      h("p", { class: "muted" }, "See who holds the open file, check out and check in without leaving Blender."),
      h("div", { class: "actions" }, install), said);
  };
  void offerBlender();
  if (s.backend === "remote" && !view.session_error) void showDevices();
  if (view.session_error) say(status, problem(view.session_error), "error");
  if (certificateRefused(view.session_error)) void lookAtCertificate();
  // The pin changes only through "Trust this certificate".
  const current = () => ({ backend: backend.value as "bundled" | "remote", server_url: url.value.trim(), pinned_sha256: s.pinned_sha256, workspace: workspace.value.trim(), display_name: name.value.trim() });
  const save = button("Save", async () => {
    if (backend.value === "remote") {
      const wrong = serverAddressProblem(url.value);
      if (wrong) {
        say(status, wrong, "error");
        url.focus();
        return;
      }
    }
    say(status, "Saving…");
    const refused = await applySaved(async () => {
      const saved = await api.saveSettings(current(), token.value || null);
      if (!saved.session_error && saved.keychain_note) notice("Token kept for this run only", saved.keychain_note);
      return saved;
    });
    if (certificateRefused(refused)) void lookAtCertificate();
  }, "primary", { id: "settings-save" });
  dialog.replaceChildren(h("form", { method: "dialog", class: "settings-form" },
    h("h2", { id: "settings-title" }, "Settings"),
    field("Where your studio's files live", backend),
    remoteOnly, bundledOnly, certificate,
    field("Workspace folder", h("div", { class: "with-button" }, workspace, chooseFolder), "Your files are mirrored here. Switching stores never deletes them."),
    editors,
    status,
    h("div", { class: "actions sticky" }, save, button("Close", () => dialog.close(), "ghost", { id: "settings-close" }))));
  dialog.showModal();
}
