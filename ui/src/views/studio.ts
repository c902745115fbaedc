// The Studio view, for admins only (the tab shows when the server says you
// are one): people and their devices with a revoke; Invite someone (name,
// role, lapse) showing the link to send; groups; and the folder permissions
// as a table of folder, who and level, with a preview of what a chosen
// person would see under the rules as edited, before they are saved.
import { api, isAppError } from "../api";
import type { StudioView } from "../generated/StudioView";
import type { RuleRow } from "../generated/RuleRow";
import type { Member } from "../generated/Member";
import type { Device } from "../generated/Device";
import type { InviteLink } from "../generated/InviteLink";
import { ask } from "../app";
import { clock, participantName, settingsProblem } from "../format";
import { $, button, h } from "../h";

let studio: StudioView | null = null;
/** The rules as edited, until saved. */
let draft: RuleRow[] = [];
/** The invite last made, shown until the view is left: a redraw must not lose its link. */
let lastInvite: InviteLink | null = null;
/** What saving the rules said: the save's own event redraws the view, which must not lose it. */
let rulesSaid = "";

const problem = (error: unknown) => (isAppError(error) ? settingsProblem(error) : String(error));

function say(where: HTMLElement, text: string, error = false) {
  where.textContent = text;
  where.className = error ? "warning" : "muted";
}

/** Asks the server for the studio; the tab shows only to an admin. */
export async function loadStudio() {
  try {
    studio = await api.studio();
  } catch {
    studio = null;
  }
  $("tab-studio").hidden = studio === null;
  if (studio) {
    draft = studio.rules.map((r) => ({ folder: r.folder, who: r.who, level: r.level }));
    drawStudio();
  }
}

function drawStudio() {
  if (!studio) return;
  const now = Date.now();
  const view = $("view-studio");
  const device = (m: Member, d: Device) => h("li", { "data-device": d.id },
    h("span", {}, `${d.name}, ${d.last_used_at ? `last used ${clock(d.last_used_at, now)}` : "not used yet"}`),
    button("Revoke", () => void revoke(m, d), "danger small", { "data-revoke-device": d.id }));
  const person = (m: Member) => h("tr", { "data-participant": m.participant },
    h("td", {}, participantName(m.participant),
      m.admin ? h("span", { class: "badge" }, "admin") : "", m.agent ? h("span", { class: "badge" }, "agent") : ""),
    h("td", {}, h("ul", { class: "devices" }, ...m.devices.map((d) => device(m, d)))));
  const people = h("table", { class: "studio-people", id: "studio-people" },
    h("thead", {}, h("tr", {}, h("th", {}, "Who"), h("th", {}, "Devices"))),
    h("tbody", {}, ...studio.members.map(person)));
  view.replaceChildren(
    h("p", { class: "muted", role: "status", id: "studio-status" }),
    h("section", { class: "studio-part" }, h("h2", {}, "People"), people),
    inviteForm(),
    groupsPart(),
    rulesPart());
}

async function revoke(m: Member, d: Device) {
  const sure = await ask({ title: `Revoke ${participantName(m.participant)}'s ${d.name}?`, body: "Its token stops working at once; that computer must be invited again.", confirm: "Revoke" });
  if (!sure) return;
  try {
    await api.studioRevokeDevice(m.participant, d.id);
    await loadStudio();
  } catch (error) {
    say($("studio-status"), problem(error), true);
  }
}

function inviteForm(): HTMLElement {
  const name = h("input", { id: "studio-invite-name", type: "text", placeholder: "carol", maxlength: "64" });
  const role = h("select", { id: "studio-invite-role" },
    h("option", { value: "user" }, "Designer"), h("option", { value: "admin" }, "Admin"), h("option", { value: "agent" }, "Agent (a script)"));
  const lapse = h("select", { id: "studio-invite-lapse" },
    h("option", { value: String(24 * 3600) }, "1 day"), h("option", { value: String(7 * 24 * 3600) }, "7 days"), h("option", { value: String(30 * 24 * 3600) }, "30 days"));
  lapse.value = String(7 * 24 * 3600);
  const made = h("div", { id: "studio-invite-made" });
  if (lastInvite) {
    made.replaceChildren(
      h("p", {}, `Send ${participantName(lastInvite.invite.participant)} this link. It works once, until ${clock(lastInvite.invite.expires_at, Date.now())}.`),
      h("input", { id: "studio-invite-link", type: "text", readonly: "", value: lastInvite.link }),
      h("p", { class: "fingerprint" }, lastInvite.invite.code));
  }
  const status = h("p", { class: "muted", role: "status" });
  const make = button("Make invite", async () => {
    try {
      lastInvite = await api.studioInvite(name.value.trim(), role.value as "user" | "admin" | "agent", Number(lapse.value));
      // The new person is listed, with the link kept on the redraw.
      await loadStudio();
    } catch (error) {
      say(status, problem(error), true);
    }
  }, "primary", { id: "studio-invite" });
  return h("section", { class: "studio-part" }, h("h2", {}, "Invite someone"),
    h("div", { class: "studio-row" },
      h("label", { class: "field" }, h("span", {}, "Name"), name),
      h("label", { class: "field" }, h("span", {}, "Role"), role),
      h("label", { class: "field" }, h("span", {}, "Lapses after"), lapse), make),
    status, made);
}

function groupsPart(): HTMLElement {
  const groups = studio?.groups ?? [];
  const status = h("p", { class: "muted", role: "status", id: "studio-group-status" });
  const name = h("input", { id: "studio-group-name", type: "text", placeholder: "freelancers", maxlength: "64" });
  const members = h("input", { id: "studio-group-members", type: "text", placeholder: "user:dana, user:eli" });
  const save = button("Save group", async () => {
    try {
      await api.studioPutGroup(name.value.trim(), members.value.split(",").map((m) => m.trim()).filter((m) => m));
      await loadStudio();
    } catch (error) {
      say(status, problem(error), true);
    }
  }, "", { id: "studio-group-save" });
  return h("section", { class: "studio-part" }, h("h2", {}, "Groups"),
    h("ul", { class: "studio-groups", id: "studio-groups" }, ...groups.map((g) => h("li", { "data-group": g.name },
      h("span", {}, `${g.name}: ${g.members.map(participantName).join(", ") || "nobody"}`),
      button("Remove", async () => {
        try {
          await api.studioDeleteGroup(g.name);
          await loadStudio();
        } catch (error) {
          say(status, problem(error), true);
        }
      }, "ghost small")))),
    h("div", { class: "studio-row" },
      h("label", { class: "field" }, h("span", {}, "Group"), name),
      h("label", { class: "field" }, h("span", {}, "Members"), members), save),
    status);
}

function rulesPart(): HTMLElement {
  const status = h("p", { class: "muted", role: "status", id: "studio-rules-status" }, rulesSaid);
  const seen = h("ul", { class: "studio-preview", id: "studio-preview" });
  const whoToPreview = h("select", { id: "studio-preview-who" },
    h("option", { value: "" }, "Choose someone…"),
    ...(studio?.members ?? []).map((m) => h("option", { value: m.participant }, participantName(m.participant))));
  const preview = async () => {
    if (!whoToPreview.value) return seen.replaceChildren();
    try {
      const files = await api.studioPreview(whoToPreview.value, draft);
      seen.replaceChildren(...files.map((f) => h("li", { "data-level": f.level, "data-path": f.path },
        h("span", {}, f.path), h("span", { class: "level" }, f.level === "none" ? "hidden" : f.level === "read" ? "view only" : "view and change"))));
      rulesSaid = "";
      say(status, "");
    } catch (error) {
      say(status, problem(error), true);
    }
  };
  whoToPreview.addEventListener("change", () => void preview());
  const rows = h("tbody", {});
  const drawRows = () => rows.replaceChildren(...draft.map((rule, i) => {
    const folder = h("input", { type: "text", value: rule.folder, placeholder: "brand/ (or empty: every file)", "data-rule-folder": String(i) });
    const who = h("input", { type: "text", value: rule.who, placeholder: "everyone, group:NAME, user:NAME", "data-rule-who": String(i) });
    const level = h("select", { "data-rule-level": String(i) },
      h("option", { value: "none" }, "none (hidden)"), h("option", { value: "read" }, "read (view only)"), h("option", { value: "write" }, "write"));
    level.value = rule.level;
    folder.addEventListener("input", () => { rule.folder = folder.value; });
    who.addEventListener("input", () => { rule.who = who.value; });
    level.addEventListener("change", () => { rule.level = level.value; void preview(); });
    for (const field of [folder, who]) field.addEventListener("change", () => void preview());
    return h("tr", {}, h("td", {}, folder), h("td", {}, who), h("td", {}, level),
      h("td", {}, button("Remove", () => { draft.splice(i, 1); drawRows(); void preview(); }, "ghost small")));
  }));
  drawRows();
  const add = button("Add a rule", () => { draft.push({ folder: "", who: "everyone", level: "read" }); drawRows(); }, "ghost", { id: "studio-rule-add" });
  const save = button("Save rules", async () => {
    try {
      await api.studioPutRules(draft);
      rulesSaid = "Saved: every server applies them from the next request.";
      await loadStudio();
    } catch (error) {
      say(status, problem(error), true);
    }
  }, "primary", { id: "studio-rules-save" });
  return h("section", { class: "studio-part" }, h("h2", {}, "Folder permissions"),
    h("p", { class: "muted" }, "The deepest folder with a rule for someone decides; a rule naming them beats a group's, which beats everyone's. With no rule: write. Admins see everything."),
    h("table", { class: "studio-rules", id: "studio-rules" },
      h("thead", {}, h("tr", {}, h("th", {}, "Folder"), h("th", {}, "Who"), h("th", {}, "Level"), h("th", {}))), rows),
    h("div", { class: "actions" }, add, save), status,
    h("h3", {}, "What someone would see"), whoToPreview, seen);
}
