// Joining a studio: the first run's choice (work on this computer, or join
// your studio), and the join dialog. An invite link or code is pasted (or
// opened from a leasedesk://join link); a code alone asks for the server's
// address beside it (the server this app is connected to, if any, filled
// in). Its server is shown with the fingerprint of a certificate this
// computer does not trust, this device named (the computer's name unless
// changed), then the code redeemed and the token kept in the keychain.
import { api, isAppError, type SettingsView } from "../api";
import type { JoinView } from "../generated/JoinView";
import { notice, render, scheduleReload } from "../app";
import { fingerprint, participantName, serverLine, settingsProblem } from "../format";
import { $, button, h } from "../h";
import { loadActivity } from "./activity";
import { loadStudio } from "./studio";
import { needsServer } from "../invites";

const dialog = () => $("join") as HTMLDialogElement;

function say(where: HTMLElement, text: string, error = false) {
  where.textContent = text;
  where.className = error ? "warning" : "muted";
}

function done(saved: SettingsView, joined = false) {
  dialog().close();
  delete document.body.dataset.firstRun;
  // Who the studio's server says you are, now that you joined it.
  if (joined) void api.overview().then((o) => notice(`You joined as ${participantName(o.me)}`, serverLine(saved.settings.server_url), "success"), () => {});
  if (saved.keychain_note) notice("Token kept for this run only", saved.keychain_note);
  scheduleReload();
  void loadActivity();
  // Someone else on another store now: an admin's tab, or none. Asked here,
  // once the session is open, not only when the store says it changed.
  void loadStudio();
}

/** A fresh profile opens on a choice, not on an empty list. */
export async function offerFirstRun() {
  const view = await api.settings();
  if (!view.first_run) return;
  // Nobody is signed in before a choice is made: the top bar says nobody.
  document.body.dataset.firstRun = "true";
  render();
  const status = h("p", { class: "muted", role: "status", id: "join-status" });
  const here = button("Work on this computer", async () => {
    try {
      done(await api.saveSettings({ ...view.settings, backend: "bundled" }, null));
    } catch (error) {
      say(status, isAppError(error) ? settingsProblem(error) : String(error), true);
    }
  }, "primary", { id: "first-run-here" });
  const studio = button("Join your studio", () => openJoin(), "", { id: "first-run-join" });
  dialog().replaceChildren(h("form", { method: "dialog", class: "settings-form first-run" },
    h("h2", { id: "join-title" }, "Welcome to Leasedesk"),
    h("div", { class: "choices" },
      h("div", { class: "choice" }, here, h("p", { class: "muted" }, "Your files and their check-outs stay on this computer. No server is needed.")),
      h("div", { class: "choice" }, studio, h("p", { class: "muted" }, "Paste the invite link or code your studio sent you, and work on the studio's files."))),
    status));
  dialog().showModal();
}

/** The join dialog, with `text` (a link opened from outside) already in. */
export function openJoin(text = "") {
  const invite = h("input", { id: "join-invite", type: "text", spellcheck: "false", placeholder: "leasedesk://join?… or 7KQ2-…", value: text });
  // A code alone does not name its server: its address goes beside it.
  const server = h("input", { id: "join-server-url", type: "text", spellcheck: "false", placeholder: "https://files.studio.lan:7443" });
  const serverField = h("label", { class: "field", id: "join-server-field" }, h("span", {}, "Server"), server,
    h("small", { class: "muted" }, "A code alone does not say which server it is for: your admin gives its address (the whole link says it)."));
  const showServer = () => { serverField.hidden = !needsServer(invite.value); };
  showServer();
  // The server this app is connected to, if any: a code from its admin is likely for it.
  void api.settings().then((view) => {
    if (!server.value && view.settings.backend === "remote") server.value = view.settings.server_url.split(",")[0].trim();
  }, () => undefined);
  const serverOf = () => (needsServer(invite.value) ? server.value.trim() || null : null);
  const status = h("p", { class: "muted", role: "status", id: "join-status" });
  const next = h("div", { id: "join-next" });
  const read = button("Continue", () => void readInvite(invite.value, serverOf(), next, status), "primary", { id: "join-continue" });
  invite.addEventListener("input", () => {
    next.replaceChildren();
    read.className = "button primary";
    showServer();
  });
  server.addEventListener("input", () => {
    next.replaceChildren();
    read.className = "button primary";
  });
  dialog().replaceChildren(h("form", { method: "dialog", class: "settings-form" },
    h("h2", { id: "join-title" }, "Join your studio"),
    h("label", { class: "field" }, h("span", {}, "Invite link or code"), invite,
      h("small", { class: "muted" }, "Your studio's admin sends it; it works once.")),
    serverField,
    h("div", { class: "actions" }, read),
    next, status,
    h("div", { class: "actions sticky" }, button("Close", () => dialog().close(), "ghost", { id: "join-close" }))));
  if (!dialog().open) dialog().showModal();
  if (text) void readInvite(text, null, next, status);
  else invite.focus();
}

async function readInvite(text: string, server: string | null, next: HTMLElement, status: HTMLElement) {
  say(status, "Reading the invite…");
  let view: JoinView;
  try {
    view = await api.readInvite(text, server);
  } catch (error) {
    next.replaceChildren();
    return say(status, isAppError(error) ? settingsProblem(error) : String(error), true);
  }
  say(status, "");
  const device = h("input", { id: "join-device", type: "text", maxlength: "64", value: view.device });
  const certificate = view.certificate;
  const untrusted = certificate !== null && !certificate.trusted;
  const matches = h("input", { id: "join-fingerprint-matches", type: "checkbox" });
  const join = button("Join", async () => {
    if (untrusted && !matches.checked) return say(status, "Check the fingerprint with your studio first, then tick the box.", true);
    say(status, "Joining…");
    try {
      const saved = await api.joinStudio(view.server, view.code, device.value.trim(), certificate && !certificate.trusted ? certificate.sha256 : null);
      if (saved.session_error) return say(status, settingsProblem(saved.session_error), true);
      done(saved, true);
    } catch (error) {
      say(status, isAppError(error) ? settingsProblem(error) : String(error), true);
    }
  }, "primary", { id: "join-submit" });
  // One primary button at a time: Join, now that the invite is read.
  $("join-continue").className = "button ghost";
  next.replaceChildren(h("p", { id: "join-server" }, `Server: ${view.server}`));
  if (certificate && !certificate.trusted) {
    next.append(h("div", { class: "certificate" },
      h("p", {}, "This computer does not know the server's certificate; it may be your studio's own. Join only if this fingerprint is the one your studio gives you."),
      h("dl", {},
        h("dt", {}, "Fingerprint (SHA-256)"), h("dd", { id: "join-fingerprint", class: "fingerprint" }, fingerprint(certificate.sha256)),
        h("dt", {}, "Subject"), h("dd", {}, certificate.subject)),
      h("label", { class: "check" }, matches, " The fingerprint matches")));
  }
  next.append(
    h("label", { class: "field" }, h("span", {}, "This computer's name"), device,
      h("small", { class: "muted" }, "How this device shows in your list of devices.")),
    h("div", { class: "actions" }, join));
  device.focus();
}
