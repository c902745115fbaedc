// The Studio view, for admins only (the tab shows when the server says you
// are one): people and their devices with a revoke (yours marked "this
// device"); Invite someone (name, role, lapse) showing the whole link to
// send with a Copy button, and the invites waiting to be used, each
// revocable; groups, their members picked by name; and the folder
// permissions as a table of pickers (folder, who, level), with a preview
// of what a chosen person would see under the rules as edited, before they
// are saved, as a folder tree with counts. The words and the tree are
// `permissions.ts`'s and `invites.ts`'s.
import { api, isAppError, type Code } from "../api";
import type { StudioView } from "../generated/StudioView";
import type { RuleRow } from "../generated/RuleRow";
import type { Member } from "../generated/Member";
import type { Device } from "../generated/Device";
import type { InviteLink } from "../generated/InviteLink";
import type { OpenInvite } from "../generated/OpenInvite";
import { ask } from "../app";
import { clock, count, deviceLine, fileName, participantName, settingsProblem } from "../format";
import { $, button, h } from "../h";
import { linkToSend } from "../copying";
import { openInviteLine } from "../invites";
import { folderChoices, folderTyped, levelWords, peopleChoices, seenTree, seenWords, whoChoices, whoLabel, type Choice, type SeenFolder } from "../permissions";

let studio: StudioView | null = null;
/** The rules as edited, until saved. */
let draft: RuleRow[] = [];
/** The invite last made, shown until the view is left: a redraw must not lose its link. */
let lastInvite: InviteLink | null = null;
/** What saving the rules said: the save's own event redraws the view, which must not lose it. */
let rulesSaid = "";
/** Whose view the preview shows: kept across redraws, a Save's included. */
let previewWho = "";
/** The folders of the preview's tree that are open, kept across redraws. */
const openFolders = new Set<string>([""]);
/** The studio's folders, for the Folder picker. */
let folders: string[] = [];

/** The Folder picker's choice that opens a field for a folder typed by hand
 *  (no folder's value: those end in `/`, or are empty for every folder). */
const ANOTHER_FOLDER = "(another)";
/** Most files a folder of the preview lists at once. */
const MOST_FILES_SHOWN = 200;

const problem = (error: unknown) => (isAppError(error) ? settingsProblem(error) : String(error));

function say(where: HTMLElement, text: string, error = false) {
  where.textContent = text;
  where.className = error ? "warning" : "muted";
}

const options = (choices: Choice[]) => choices.map((c) => h("option", { value: c.value }, c.label));

/** Answers that mean the studio is not this app's to show: no server, or not an admin. */
const NOT_YOURS = new Set<Code>(["no_server", "forbidden", "unauthorized"]);
/** How long a passing failure (a slow or busy server) waits before asking again. */
const RETRY_MS = 3000;
/** The latest ask: an older answer arriving after it is stale and dropped. */
let asking = 0;
let retry: ReturnType<typeof setTimeout> | undefined;

/** Asks the server for the studio; the tab shows only to an admin. Only
 *  the latest ask counts, and a passing failure keeps what shows and asks
 *  again: a join's first moments must not hide the tab for good. */
export async function loadStudio() {
  const ask = ++asking;
  clearTimeout(retry);
  // What the last answer was, for a test that finds no tab to say why.
  const said = (what: string) => ($("tab-studio").dataset.said = what);
  const wanted = api.studioFolders().catch(() => folders);
  let answer: StudioView | null;
  try {
    answer = await api.studio();
  } catch (error) {
    if (ask !== asking) return;
    said(isAppError(error) ? error.code : String(error));
    if (isAppError(error) && NOT_YOURS.has(error.code)) answer = null;
    else {
      retry = setTimeout(() => void loadStudio(), RETRY_MS);
      return;
    }
  }
  if (ask !== asking) return;
  if (answer) said("studio");
  studio = answer;
  $("tab-studio").hidden = studio === null;
  if (!studio) return;
  draft = studio.rules.map((r) => ({ folder: r.folder, who: r.who, level: r.level }));
  drawStudio();
  const found = await wanted;
  if (ask !== asking) return;
  folders = found;
  drawStudio();
}

/** The participant this app acts as: the one whose device it is. */
function me(view: StudioView): string | null {
  return view.members.find((m) => m.devices.some((d) => d.id === view.this_device))?.participant ?? null;
}

function drawStudio() {
  if (!studio) return;
  const now = Date.now();
  const view = $("view-studio");
  const thisDevice = studio.this_device;
  const device = (m: Member, d: Device) => h("li", { "data-device": d.id, ...(d.id === thisDevice ? { "data-this-device": "" } : {}) },
    h("span", {}, deviceLine(d, thisDevice, now)),
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
    invitesPart(me(studio), now),
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
      h("p", {}, `Send ${participantName(lastInvite.invite.participant)} this link. It opens Leasedesk on Join, names this server, and works once, until ${clock(lastInvite.invite.expires_at, Date.now())}.`),
      linkToSend("studio-invite-link", lastInvite.link));
  }
  const status = h("p", { class: "muted", role: "status" });
  const make = button("Make invite", async () => {
    try {
      lastInvite = await api.studioInvite(name.value.trim(), role.value as "user" | "admin" | "agent", Number(lapse.value));
      // The new invite is listed, with the link kept on the redraw.
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

/** The invites waiting to be used, each revocable (their codes were shown once and are not kept). */
function invitesPart(myself: string | null, now: number): HTMLElement {
  const invites = studio?.invites ?? [];
  const status = h("p", { class: "muted", role: "status", id: "studio-invites-status" });
  const row = (invite: OpenInvite) => h("li", { "data-invite": invite.id, "data-participant": invite.participant },
    h("span", {}, openInviteLine(invite, myself, now)),
    button("Revoke", async () => {
      const sure = await ask({ title: `Revoke the invite for ${participantName(invite.participant)}?`, body: "Its link stops working at once; to join, they need a new invite.", confirm: "Revoke invite" });
      if (!sure) return;
      try {
        await api.studioRevokeInvite(invite.id);
        if (lastInvite && lastInvite.invite.participant === invite.participant) lastInvite = null;
        await loadStudio();
      } catch (error) {
        say(status, problem(error), true);
      }
    }, "danger small", { "data-revoke-invite": invite.id }));
  return h("section", { class: "studio-part" }, h("h2", {}, "Invites waiting to be used"),
    invites.length
      ? h("ul", { class: "devices", id: "studio-invites" }, ...invites.map(row))
      : h("p", { class: "muted", id: "studio-invites" }, "None: every invite made was used, lapsed or revoked."),
    status);
}

function groupsPart(): HTMLElement {
  const groups = studio?.groups ?? [];
  const status = h("p", { class: "muted", role: "status", id: "studio-group-status" });
  const name = h("input", { id: "studio-group-name", type: "text", placeholder: "freelancers", maxlength: "64" });
  const members = h("fieldset", { class: "studio-members", id: "studio-group-members" },
    h("legend", {}, "Members"),
    ...peopleChoices(studio?.members ?? []).map((c) => h("label", { class: "check" },
      h("input", { type: "checkbox", value: c.value }), ` ${c.label}`)));
  const boxes = () => [...members.querySelectorAll<HTMLInputElement>("input[type=checkbox]")];
  const save = button("Save group", async () => {
    try {
      await api.studioPutGroup(name.value.trim(), boxes().filter((b) => b.checked).map((b) => b.value));
      await loadStudio();
    } catch (error) {
      say(status, problem(error), true);
    }
  }, "", { id: "studio-group-save" });
  /** The form filled with a group, to change its members. */
  const edit = (group: { name: string; members: string[] }) => {
    name.value = group.name;
    for (const box of boxes()) box.checked = group.members.includes(box.value);
    name.focus();
  };
  return h("section", { class: "studio-part" }, h("h2", {}, "Groups"),
    h("ul", { class: "studio-groups", id: "studio-groups" }, ...groups.map((g) => h("li", { "data-group": g.name },
      h("span", {}, `${g.name}: ${g.members.map(participantName).join(", ") || "nobody"}`),
      h("span", { class: "studio-group-actions" },
        button("Change", () => edit(g), "ghost small", { "data-edit-group": g.name }),
        button("Remove", async () => {
          try {
            await api.studioDeleteGroup(g.name);
            await loadStudio();
          } catch (error) {
            say(status, problem(error), true);
          }
        }, "ghost small"))))),
    h("div", { class: "studio-row" },
      h("label", { class: "field" }, h("span", {}, "Group"), name), members, save),
    status);
}

/** What someone would see, as a folder tree: each folder with its counts by
 *  level, its folders and files listed when it is opened. */
function seenFolder(folder: SeenFolder): HTMLElement {
  const node = h("details", {
    class: "seen-folder", "data-folder": folder.path,
    "data-write": String(folder.counts.write), "data-read": String(folder.counts.read), "data-none": String(folder.counts.none),
  }, h("summary", {},
    h("span", { class: "seen-name" }, folder.path ? `${folder.name}/` : folder.name),
    h("span", { class: "seen-counts" }, seenWords(folder.counts))));
  let filled = false;
  const fill = () => {
    if (filled) return;
    filled = true;
    const files = folder.files.slice(0, MOST_FILES_SHOWN).map((f) => h("li", { "data-path": f.path, "data-level": f.level },
      h("span", {}, fileName(f.path)), h("span", { class: "seen-level" }, levelWords[f.level])));
    const more = folder.files.length - MOST_FILES_SHOWN;
    node.append(h("ul", { class: "seen-children" },
      ...folder.folders.map((child) => h("li", { class: "seen-child" }, seenFolder(child))),
      ...files,
      more > 0 ? h("li", { class: "muted" }, `and ${count(more)} more files`) : null));
  };
  node.open = openFolders.has(folder.path);
  if (node.open) fill();
  node.addEventListener("toggle", () => {
    if (node.open) {
      openFolders.add(folder.path);
      fill();
    } else openFolders.delete(folder.path);
  });
  return node;
}

function rulesPart(): HTMLElement {
  const status = h("p", { class: "muted", role: "status", id: "studio-rules-status" }, rulesSaid);
  const seen = h("div", { class: "studio-preview", id: "studio-preview" });
  const members = studio?.members ?? [];
  const groups = studio?.groups ?? [];
  const whoToPreview = h("select", { id: "studio-preview-who" },
    h("option", { value: "" }, "Choose someone…"), ...options(peopleChoices(members)));
  whoToPreview.value = members.some((m) => m.participant === previewWho) ? previewWho : "";
  const preview = async () => {
    previewWho = whoToPreview.value;
    if (!previewWho) return seen.replaceChildren();
    try {
      const files = await api.studioPreview(previewWho, draft);
      seen.replaceChildren(seenFolder(seenTree(files)));
      if (status.className === "warning") say(status, "");
    } catch (error) {
      rulesSaid = "";
      say(status, problem(error), true);
    }
  };
  whoToPreview.addEventListener("change", () => void preview());
  /** A rule changed: what a Save said is no longer true of the table. */
  const edited = () => {
    rulesSaid = "";
    if (status.className !== "warning") say(status, "");
    void preview();
  };
  const rows = h("tbody", {});
  const drawRows = () => rows.replaceChildren(...draft.map((rule, i) => {
    const folder = h("select", { "data-rule-folder": String(i), "aria-label": "Folder" },
      ...options(folderChoices(folders, rule.folder)), h("option", { value: ANOTHER_FOLDER }, "Another folder…"));
    folder.value = rule.folder;
    const typed = h("input", { type: "text", placeholder: "brand/2026/", "data-rule-folder-typed": String(i), "aria-label": "Another folder" });
    typed.hidden = true;
    folder.addEventListener("change", () => {
      if (folder.value === ANOTHER_FOLDER) {
        typed.hidden = false;
        typed.focus();
        return;
      }
      typed.hidden = true;
      rule.folder = folder.value;
      edited();
    });
    typed.addEventListener("change", () => {
      rule.folder = folderTyped(typed.value);
      drawRows();
      edited();
    });
    const who = h("select", { "data-rule-who": String(i), "aria-label": "Who" }, ...options(whoChoices(members, groups, rule.who)));
    who.value = rule.who;
    who.addEventListener("change", () => {
      rule.who = who.value;
      edited();
    });
    const level = h("select", { "data-rule-level": String(i), "aria-label": "Level" },
      h("option", { value: "none" }, "none (hidden)"), h("option", { value: "read" }, "read (view only)"), h("option", { value: "write" }, "write"));
    level.value = rule.level;
    level.addEventListener("change", () => {
      rule.level = level.value;
      edited();
    });
    return h("tr", { "data-rule": String(i), title: `${whoLabel(rule.who)} in ${rule.folder || "every folder"}` },
      h("td", {}, folder, typed), h("td", {}, who), h("td", {}, level),
      h("td", {}, button("Remove", () => { draft.splice(i, 1); drawRows(); edited(); }, "ghost small")));
  }));
  drawRows();
  const add = button("Add a rule", async () => {
    draft.push({ folder: "", who: "everyone", level: "read" });
    // The folders as the list has them now (it may have filled since the view was drawn).
    folders = await api.studioFolders().catch(() => folders);
    drawRows();
    edited();
  }, "ghost", { id: "studio-rule-add" });
  const save = button("Save rules", async () => {
    try {
      await api.studioPutRules(draft);
      rulesSaid = "Saved: every server applies them from the next request.";
      await loadStudio();
    } catch (error) {
      rulesSaid = "";
      say(status, problem(error), true);
    }
  }, "primary", { id: "studio-rules-save" });
  // Drawn again (after a Save, or anyone's change): the chosen person's view again.
  if (whoToPreview.value) void preview();
  return h("section", { class: "studio-part" }, h("h2", {}, "Folder permissions"),
    h("p", { class: "muted" }, "The deepest folder with a rule for someone decides; a rule naming them beats a group's, which beats everyone's. With no rule: write. Admins see everything."),
    h("table", { class: "studio-rules", id: "studio-rules" },
      h("thead", {}, h("tr", {}, h("th", {}, "Folder"), h("th", {}, "Who"), h("th", {}, "Level"), h("th", {}))), rows),
    h("div", { class: "actions" }, add, save), status,
    h("h3", {}, "What someone would see"),
    h("label", { class: "studio-whose" }, "Whose view ", whoToPreview), seen);
}
