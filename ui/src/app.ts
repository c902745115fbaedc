// What every view shares: the window's state, notices and errors, the one way
// an action runs (busy while it runs, its error shown, the list reloaded), and
// a render that each view hooks into. Every lease change starts from a click.
import { api, isAppError, type AppError, type FileRow, type Overview, type Event } from "./api";
import { explain, noticeLasts } from "./format";
import { $, button, h } from "./h";
import { noSelection, type Selection } from "./selection";

export type View = "files" | "mine" | "proposals" | "activity" | "studio";

export interface UiState {
  overview: Overview | null;
  shown: FileRow[];
  filter: string;
  view: View;
  selected: string | null; // artifact id
  /** The files chosen together (Ctrl/Shift-click, the checkboxes, the
   *  keyboard); with two or more, the detail acts on all of them. */
  several: Selection;
  /** On a narrow window the chosen file's detail takes the list's place:
   *  opened by a click or Enter, closed by "All files". */
  detailOpen: boolean;
  activity: Event[];
  busy: Set<string>; // artifact ids with an action in flight
  waiting: Set<string>; // "notify me when it's free"
  uploads: Map<string, { upload: string; sent: number; size: number }>; // by checkout id
  problem: Map<string, AppError>; // the last error per artifact, shown in its detail
  /** When each row was last seen to change (a local preview's cache stamp). */
  seen: Map<string, number>;
}

export const state: UiState = {
  overview: null,
  shown: [],
  filter: "",
  view: "files",
  selected: null,
  several: noSelection(),
  detailOpen: false,
  activity: [],
  busy: new Set(),
  waiting: new Set(),
  uploads: new Map(),
  problem: new Map(),
  seen: new Map(),
};

const renderers: ((now: number) => void)[] = [];

/** Adds a view's part of every render. */
export function onRender(part: (now: number) => void) {
  renderers.push(part);
}

export function render() {
  const now = Date.now();
  for (const part of renderers) part(now);
}

// ----- notices (toasts)

export function notice(title: string, body = "", kind: "info" | "error" | "success" = "info", actions: HTMLElement[] = []) {
  const box = h("div", { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status" },
    h("strong", {}, title), body ? h("p", {}, body) : null);
  const close = button("Dismiss", () => box.remove(), "ghost small");
  box.append(actions.length ? h("div", { class: "actions" }, ...actions, close) : close);
  const notices = $("notices");
  notices.append(box);
  // A few at a time: the oldest gives way.
  while (notices.children.length > 3) notices.firstElementChild?.remove();
  setTimeout(() => box.remove(), noticeLasts(kind, actions.length > 0));
}

/** Set by the settings view: the button an error about the connection offers. */
export const hooks = {
  openSettings: () => {},
  notifyWhenFree: async (_artifact: string, _on: boolean) => {},
};

export function showError(error: unknown, artifact?: string) {
  const appError: AppError = isAppError(error) ? error : { code: "internal", message: String(error) };
  const explained = explain(appError, Date.now());
  if (artifact) state.problem.set(artifact, appError);
  const actions: HTMLElement[] = [];
  if (explained.action === "open-settings") actions.push(button("Open Settings", () => hooks.openSettings(), "small"));
  if (explained.action === "notify-when-free" && artifact) {
    actions.push(button("Notify me when it's free", () => void hooks.notifyWhenFree(artifact, true), "small"));
  }
  notice(explained.title, explained.detail, "error", actions);
  render();
}

/** Asks before something that cannot simply be taken back; answers whether
 *  the user confirmed. In the window's own dialog, so it looks like the app. */
export function ask(question: { title: string; body: string; confirm: string }): Promise<boolean> {
  const dialog = $("confirm") as HTMLDialogElement;
  return new Promise((resolve) => {
    const answer = (yes: boolean) => {
      dialog.close();
      resolve(yes);
    };
    const confirm = button(question.confirm, () => answer(true), "primary", { id: "confirm-yes" });
    dialog.replaceChildren(h("form", { method: "dialog", class: "confirm-form" },
      h("h2", { id: "confirm-title" }, question.title),
      h("p", {}, question.body),
      h("div", { class: "actions" }, confirm, button("Back", () => answer(false), "ghost", { id: "confirm-no" }))));
    dialog.addEventListener("cancel", () => resolve(false), { once: true });
    dialog.showModal();
    confirm.focus();
  });
}

// ----- data

let reloadTimer: number | undefined;
export function scheduleReload() {
  clearTimeout(reloadTimer);
  reloadTimer = window.setTimeout(() => void reload(), 120);
}

export async function reload() {
  try {
    const overview = await api.overview();
    const before = new Map((state.overview?.files ?? []).map((r) => [r.artifact.id, r]));
    for (const row of overview.files) {
      const old = before.get(row.artifact.id);
      if (!old || old.local !== row.local || old.artifact.head.digest !== row.artifact.head.digest) {
        state.seen.set(row.artifact.id, Date.now());
      }
    }
    state.overview = overview;
    document.body.dataset.ready = "true";
    render();
    void hashChanged(overview);
  } catch (error) {
    state.overview = null;
    // Ready too: the window shows why there is no list.
    document.body.dataset.ready = "true";
    render();
    if (isAppError(error) && ["no_server", "no_token", "no_backend", "unauthorized", "certificate_untrusted", "certificate_changed"].includes(error.code)) {
      $("me").textContent = "Not connected";
    }
    showError(error);
  }
}

/** Rows whose local copy changed since it was last hashed: hash them one by one. */
async function hashChanged(overview: Overview) {
  for (const row of overview.files.filter((r) => r.local === "checking")) {
    try {
      replaceRow(await api.refreshRow(row.artifact.id));
    } catch {
      /* the next reload tries again */
    }
  }
}

export function replaceRow(row: FileRow) {
  const overview = state.overview;
  if (!overview) return;
  state.seen.set(row.artifact.id, Date.now());
  const index = overview.files.findIndex((r) => r.artifact.id === row.artifact.id);
  if (index >= 0) overview.files[index] = row;
  else overview.files.push(row);
  render();
}

export function rowOf(artifact: string): FileRow | undefined {
  return state.overview?.files.find((r) => r.artifact.id === artifact);
}

/** Runs one action on a file: busy meanwhile, its error shown, the list reloaded after. */
export async function run<T>(artifact: string, action: () => Promise<T>): Promise<T | undefined> {
  state.busy.add(artifact);
  state.problem.delete(artifact);
  render();
  try {
    return await action();
  } catch (error) {
    showError(error, artifact);
    return undefined;
  } finally {
    state.busy.delete(artifact);
    scheduleReload();
  }
}

export function setView(view: View) {
  state.view = view;
  for (const tab of document.querySelectorAll<HTMLButtonElement>("[role=tab]")) {
    tab.setAttribute("aria-selected", String(tab.dataset.view === view));
  }
  for (const name of ["files", "mine", "proposals", "activity", "studio"]) $(`view-${name}`).hidden = name !== view;
  render();
}

/** Chooses one file (or none): its detail shows. */
export function select(artifact: string | null) {
  state.selected = artifact;
  state.several = artifact ? { chosen: new Set([artifact]), anchor: artifact, focus: artifact } : noSelection();
  render();
}
