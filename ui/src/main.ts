// The window: files with thumbnails, holder, countdown and local state; a
// file's detail with its preview and history; compare; your check-outs;
// proposals; activity; your inbox; settings. Each view is a module of ./views; this one
// wires them to the page and to the shell's events.
import { open as openDialog } from "@tauri-apps/plugin-dialog";
import { getCurrentWebview } from "@tauri-apps/api/webview";
import { api, on } from "./api";
import { hooks, notice, onRender, reload, render, replaceRow, rowOf, scheduleListRefresh, scheduleReload, select, setView, showError, state, type View } from "./app";
import { backupNoLongerNeeded, checkOutFree, extendById, notifyWhenFree } from "./actions";
import { count, fileName, folderOf, loadingFiles, nextZoom, offlineDetail, offlineMark, participantName, requestsWaiting, serverLine, timeLeft, urgency, zoomPercent } from "./format";
import { $, button, h } from "./h";
import { setUpActivity, loadActivity } from "./views/activity";
import { setUpCheckouts } from "./views/checkouts";
import { setUpDetail } from "./views/detail";
import { clearSearch, setUpFiles } from "./views/files";
import { setUpFolders } from "./views/folders";
import { setUpProposals } from "./views/proposals";
import { openSettings } from "./views/settings";
import { offerFirstRun, openJoin } from "./views/join";
import { loadStudio } from "./views/studio";
import { setUpRequests } from "./requests";
import { setUpInbox } from "./views/inbox";
import { setUpReview } from "./views/review";

hooks.openSettings = () => void openSettings();
hooks.notifyWhenFree = notifyWhenFree;

onRender(() => {
  const overview = state.overview;
  // On the first run's choice nobody is signed in yet.
  const choosing = document.body.dataset.firstRun === "true";
  $("me").textContent = choosing ? "" : overview ? `Signed in as ${participantName(overview.me)}` : $("me").textContent;
  $("server").textContent = overview?.server ? serverLine(overview.server) : "";
  const offline = $("offline");
  const since = overview?.offline_since;
  offline.hidden = !since;
  offline.replaceChildren(...(since ? [h("strong", {}, offlineMark(since, Date.now())), " ", offlineDetail] : []));
  $("count-mine").textContent = overview?.checkouts.length ? count(overview.checkouts.length) : "";
  // Requests waiting for your answer are counted on My check-outs, as in the tray.
  const asking = overview?.requests.filter((r) => r.to === overview.me && r.state === "open").length ?? 0;
  $("tab-mine").dataset.requests = String(asking);
  $("tab-mine").title = asking ? requestsWaiting(asking) : "";
  $("count-proposals").textContent = overview?.proposals.length ? count(overview.proposals.length) : "";
});
setUpFiles();
setUpFolders();
setUpCheckouts();
setUpProposals();
setUpActivity();
setUpDetail();
setUpRequests();
setUpInbox();
setUpReview();

async function addFiles(paths: string[]) {
  if (!paths.length) return;
  // Into the folder chosen in the tree, else beside the chosen file.
  const folder = state.folder || (state.selected ? folderOf(rowOf(state.selected)?.artifact.path ?? "") : "");
  try {
    const results = await api.addFiles(paths, folder);
    const added = results.filter((r) => r.artifact);
    if (added.length) notice(added.length === 1 ? `${fileName(added[0].artifact!.path)} added` : `${added.length} files added`, "", "success");
    for (const failed of results.filter((r) => r.error)) showError(failed.error);
  } catch (error) {
    showError(error);
  }
  scheduleReload();
}

async function pickAndAdd() {
  const picked = await openDialog({ multiple: true, directory: false, title: "Add files to the store" });
  if (picked) await addFiles(Array.isArray(picked) ? picked : [picked]);
}

/** Only the countdown texts change each second. */
function tick() {
  const now = Date.now();
  for (const node of document.querySelectorAll<HTMLElement>("[data-expires]")) {
    const expires = node.dataset.expires!;
    node.textContent = timeLeft(expires, now);
    node.className = `countdown ${urgency(expires, now)}`;
  }
}

// The window's zoom (Ctrl + / Ctrl − / Ctrl 0), kept between runs and shown
// in the top bar whenever it is not 100 %.
const ZOOM_KEY = "leasedesk.zoom";
let zoomLevel = Number(localStorage.getItem(ZOOM_KEY)) || 1;
async function setZoom(level: number) {
  zoomLevel = level;
  localStorage.setItem(ZOOM_KEY, String(level));
  const shown = $("zoom");
  shown.textContent = zoomPercent(level);
  shown.hidden = Math.abs(level - 1) < 0.001;
  try {
    await getCurrentWebview().setZoom(level);
  } catch (error) {
    showError(error);
  }
}
$("zoom").addEventListener("click", () => void setZoom(1));
if (zoomLevel !== 1) void setZoom(zoomLevel);

// A focus ring for keyboard work only: shown from the first key (Enter
// moving the focus included), hidden again by the mouse.
document.addEventListener("keydown", () => (document.body.dataset.keys = "true"), true);
document.addEventListener("pointerdown", () => delete document.body.dataset.keys, true);

document.addEventListener("keydown", (e) => {
  if ((e.ctrlKey || e.metaKey) && !e.altKey && ["+", "=", "-", "_", "0"].includes(e.key)) {
    e.preventDefault();
    void setZoom(e.key === "0" ? 1 : nextZoom(zoomLevel, e.key === "-" || e.key === "_" ? -1 : 1));
    return;
  }
  const typing = e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.target instanceof HTMLTextAreaElement;
  const dialogOpen = document.querySelector("dialog[open]") !== null || !$("compare").hidden;
  if (e.key === "w" && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    void api.closeWindow();
  } else if (e.key === "/" && !typing && !dialogOpen) {
    e.preventDefault();
    $("filter").focus();
  } else if (e.key === "Escape" && !dialogOpen) {
    // Wherever the focus is, Escape first empties the search box.
    if (state.filter) clearSearch();
    else if (typing) (e.target as HTMLElement).blur();
    else select(null);
  }
});

for (const tab of document.querySelectorAll<HTMLButtonElement>("[role=tab]")) {
  tab.addEventListener("click", () => setView(tab.dataset.view as View));
}

$("add").addEventListener("click", () => void pickAndAdd());
$("open-settings").addEventListener("click", () => void openSettings());

void on("store-changed", () => {
  scheduleReload();
  // Another store, or another person on it: an admin's tab, or none.
  void loadStudio();
});
// Others' work on files: only what changed in the list is read again.
void on("list-changed", (changes) => scheduleListRefresh(changes));
void on("row", (row) => replaceRow(row));
// A proposal of yours accepted: the backup your late check-in left can go.
void on("activity", (events) => {
  for (const e of events) {
    const proposal = e.data.proposal_id;
    if (e.type === "proposal.accepted" && typeof proposal === "string") backupNoLongerNeeded(proposal);
  }
});
// The list of files read the first time, page by page: how far (the next
// reload shows the count again).
void on("mirror-progress", (p) => {
  $("count-files").textContent = loadingFiles(p.loaded, p.total);
});
void on("notice", (n) => {
  // Extend by the check-out's id: the reminder may come before the window
  // has read the check-out (made a moment ago, from the CLI or the tray).
  const checkout = n.extend;
  const free = n.check_out;
  const actions = checkout ? [button("Extend", () => void extendById(checkout), "small")]
    : free ? [button("Check out", () => void checkOutFree(free), "small primary", { "data-check-out": free })] : [];
  notice(n.title, n.body, "info", actions);
});

void getCurrentWebview().onDragDropEvent((event) => {
  const drop = $("drop");
  if (event.payload.type === "over" || event.payload.type === "enter") drop.hidden = false;
  else if (event.payload.type === "drop") {
    drop.hidden = true;
    void addFiles(event.payload.paths);
  } else drop.hidden = true;
});

setInterval(tick, 1000);
window.addEventListener("resize", () => render());
void reload();
void loadActivity();
void loadStudio();
// Started by an invite link: its join dialog; else, on a fresh profile, the first run's choice.
void api.takeJoinLink().then((link) => (link ? openJoin(link) : offerFirstRun()));
// A link opened while the app runs: taken once, whoever asks first.
void on("join-link", () => void api.takeJoinLink().then((link) => link && openJoin(link)));
