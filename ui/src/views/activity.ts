// The store's recent events, newest first, as they arrive: one line per
// thing a person did, its steps folded in, each naming its files. The shell
// gives the paths of the files the events name (from its mirror: only files
// you may read), so a line names its file whether or not its row is loaded.
import { api, on, type Event } from "../api";
import { onRender, render, rowOf, state } from "../app";
import { activityLines } from "../activity-words";
import { clock } from "../format";
import { $, h } from "../h";

/** Each file's path as the shell gave it, for the events held. */
const paths = new Map<string, string>();
/** Paths kept before those of files no longer in the feed are let go. */
const MOST_PATHS = 2000;
/** Events told of, each batch after the one before (its paths asked for first). */
let arriving: Promise<void> = Promise.resolve();

/** The files an event names: its own, or a change's. */
function named(e: Event): string[] {
  const files = (e.data as { files?: unknown }).files;
  const ids = Array.isArray(files) ? files.map((f) => (f as { artifact_id?: unknown }).artifact_id) : [];
  return [e.artifact_id, ...ids].filter((id): id is string => typeof id === "string");
}

function remember(found: Partial<Record<string, string>>) {
  for (const [id, path] of Object.entries(found)) if (path) paths.set(id, path);
  if (paths.size > MOST_PATHS) {
    const held = new Set(state.activity.flatMap(named));
    for (const id of paths.keys()) if (!held.has(id)) paths.delete(id);
  }
}

/** Events came while the Activity view was not shown: their files' paths
 *  are asked for when it shows, not for each event nobody reads. */
let pathsWanted = false;

/** Files the shell had no path for (gone, or not yours to read): not
 *  asked for again. */
const pathless = new Set<string>();

/** Asks the shell for the paths of the files the events held name that
 *  are not known yet. */
async function askPaths() {
  const unknown = [...new Set(state.activity.flatMap(named))].filter((id) => !paths.has(id) && !pathless.has(id));
  if (!unknown.length) return;
  if (pathless.size > MOST_PATHS) pathless.clear();
  try {
    const found = await api.filePaths(unknown);
    remember(found);
    for (const id of unknown) if (!found[id]) pathless.add(id);
  } catch {
    /* its file is "a file" */
  }
}

function renderActivity() {
  if (state.view !== "activity") return;
  if (pathsWanted) {
    // Drawn once the paths are in, not first with "a file" in their place.
    pathsWanted = false;
    arriving = arriving.then(askPaths).then(renderActivity);
    return;
  }
  const now = Date.now();
  const pathOf = (id: string) => paths.get(id) ?? rowOf(id)?.artifact.path;
  const lines = activityLines(state.activity.slice(0, 300), state.overview?.me, pathOf);
  $("activity").replaceChildren(...lines.map((line) =>
    h("li", { "data-seq": String(line.seq) }, h("time", { datetime: line.at }, clock(line.at, now)), " ", line.text)));
}

export async function loadActivity() {
  try {
    const activity = await api.recentEvents(300);
    paths.clear();
    pathless.clear();
    state.activity = activity.events;
    remember(activity.paths);
    render();
  } catch {
    /* shown by reload */
  }
}

export function setUpActivity() {
  onRender(renderActivity);
  void on("activity", (events) => {
    arriving = arriving.then(async () => {
      const newest = state.activity[0]?.seq ?? 0;
      const fresh = events.filter((e) => e.seq > newest).reverse();
      state.activity = [...fresh, ...state.activity].slice(0, 500);
      if (state.view !== "activity") {
        pathsWanted = true;
        return;
      }
      await askPaths();
      renderActivity();
    });
  });
}
