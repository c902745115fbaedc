// The inbox: what needs you (mentions, requests to review, comments and
// decisions on your work), newest first, a page at a time; unread ones
// marked, and counted on the Inbox tab. A click opens the file's detail at
// its thread (`state.askedThread`, which the detail takes). New items come
// from the shell as its event follower hears of review: nothing here polls.
import { api, on, type InboxItem } from "../api";
import { notice, onRender, render, replaceRow, select, setView, showError, state } from "../app";
import { clock, count } from "../format";
import { INBOX_EMPTY, inboxLine, inboxNotices, markOnOpen, readUpTo, unreadBadge, unreadInInbox, withNews } from "../inbox-words";
import { $, button, h } from "../h";

/** Items a page holds; the window keeps a few pages at most. */
const PAGE = 50;
const MOST_SHOWN = 500;

const inbox = {
  items: [] as InboxItem[],
  unread: 0,
  /** Where the next older page starts (its `before`); null when none is left. */
  older: null as number | null,
  /** Whether the newest page was asked for (the view asks when first
   *  shown; a failure is shown once, not asked again at each render). */
  asked: false,
};

function renderBadge() {
  const tab = $("tab-inbox");
  $("count-inbox").textContent = unreadBadge(inbox.unread);
  tab.dataset.unread = String(inbox.unread);
  tab.title = unreadInInbox(inbox.unread);
}

function renderInbox(now: number) {
  renderBadge();
  if (state.view !== "inbox") return;
  if (!inbox.asked) {
    void loadInbox();
    return;
  }
  const markAll = button("Mark all read", () => void markAllRead(), "small", { id: "inbox-mark-read" });
  markAll.toggleAttribute("disabled", inbox.unread === 0);
  const head = h("div", { class: "inbox-head" },
    h("h2", {}, "Inbox"), h("span", { class: "muted", id: "inbox-unread" }, inbox.unread ? `${count(inbox.unread)} unread` : "All read"), markAll);
  const list = inbox.items.length
    ? h("ol", { class: "inbox", id: "inbox-items" }, ...inbox.items.map((item) => itemLine(item, now)))
    : h("p", { class: "empty" }, INBOX_EMPTY);
  const older = inbox.older !== null ? button("Older", () => void loadOlder(), "ghost small", { id: "inbox-older" }) : null;
  $("view-inbox").replaceChildren(head, list, ...(older ? [older] : []));
}

function itemLine(item: InboxItem, now: number): HTMLLIElement {
  const open = h("button", { type: "button", class: "inbox-open", "data-seq": String(item.seq), title: item.path },
    item.read ? null : h("span", { class: "unread-dot", "aria-label": "Unread" }),
    h("span", { class: "inbox-what" }, inboxLine(item)),
    h("time", { datetime: item.at, class: "muted" }, clock(item.at, now)));
  open.addEventListener("click", () => void openItem(item));
  return h("li", { class: `inbox-item${item.read ? "" : " unread"}`, "data-seq": String(item.seq), "data-kind": item.kind }, open);
}

/** Reads the newest page again (what was shown before is replaced). */
export async function loadInbox() {
  inbox.asked = true;
  try {
    const page = await api.inbox(null, PAGE);
    inbox.items = page.items;
    inbox.unread = page.unread;
    inbox.older = page.items.length === PAGE ? page.next : null;
  } catch (error) {
    showError(error);
  }
  render();
}

async function loadOlder() {
  if (inbox.older === null) return;
  try {
    const page = await api.inbox(inbox.older, PAGE);
    inbox.items = withNews(inbox.items, page.items).slice(0, MOST_SHOWN);
    inbox.unread = page.unread;
    inbox.older = page.items.length === PAGE && inbox.items.length < MOST_SHOWN ? page.next : null;
  } catch (error) {
    showError(error);
  }
  render();
}

async function markRead(upTo: number) {
  inbox.unread = await api.markInboxRead(upTo);
  inbox.items = readUpTo(inbox.items, upTo);
  forgetNoticesUpTo(upTo);
  render();
}

/** The inbox's own notices of items now read: they have been seen. */
function forgetNoticesUpTo(upTo: number) {
  for (const open of document.querySelectorAll<HTMLElement>("#notices [data-inbox-open]")) {
    if (Number(open.dataset.inboxOpen) <= upTo) open.closest(".notice")?.remove();
  }
}

async function markAllRead() {
  const newest = inbox.items[0]?.seq;
  if (newest === undefined) return;
  try {
    await markRead(newest);
  } catch (error) {
    showError(error);
  }
}

/** Opens an item: its file's detail at its thread; read, when marking it
 *  marks nothing older still unread. */
async function openItem(item: InboxItem) {
  await openSeen(item.artifact_id, item.thread_id, markOnOpen(inbox.items, inbox.unread, item));
}

/** Opens item `seq` as a click outside the window asked (the desktop's
 *  notification of it): as a click in the inbox, the item as loaded, else
 *  as just told (unread). */
export async function openFromOutside(seq: number, artifact: string, thread: string) {
  const loaded = inbox.items.find((i) => i.seq === seq);
  const told = { seq, read: false } as InboxItem;
  await openSeen(artifact, thread, markOnOpen(inbox.items, inbox.unread, loaded ?? told));
}

/** Opens a file at a thread, then sets the read mark `upTo` (none: left be). */
async function openSeen(artifact: string, thread: string | null, upTo: number | null) {
  await openThread(artifact, thread);
  if (upTo !== null) {
    try {
      await markRead(upTo);
    } catch (error) {
      showError(error);
    }
  }
}

/** Shows a file's detail, asking it for a thread (the detail scrolls to it
 *  once drawn). From the inbox, or a click on the desktop's notification. */
export async function openThread(artifact: string, thread: string | null) {
  state.askedThread = thread;
  setView("files");
  select(artifact);
  try {
    replaceRow(await api.refreshRow(artifact), false);
  } catch (error) {
    showError(error, artifact);
  }
}

export function showInbox() {
  inbox.asked = false;
  setView("inbox");
}

export function setUpInbox() {
  onRender(renderInbox);
  // Another store, or the same one reopened: the page shown may be another's.
  void on("store-changed", () => {
    inbox.asked = false;
    if (state.view === "inbox") render();
  });
  void on("inbox", (news) => {
    inbox.unread = news.unread;
    if (inbox.asked) inbox.items = withNews(inbox.items, news.items).slice(0, MOST_SHOWN);
    for (const told of inboxNotices(news.items)) {
      const item = told.item;
      const open = item
        ? button("Open", () => void openItem(item), "small primary", { "data-inbox-open": String(item.seq) })
        : button("Open the Inbox", () => showInbox(), "small primary");
      notice(told.title, told.detail, "info", [open]);
    }
    render();
  });
  void api.inboxUnread().then((unread) => {
    inbox.unread = unread;
    renderBadge();
  }, () => {
    /* no store open: the badge stays empty */
  });
}
