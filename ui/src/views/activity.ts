// The store's recent events, newest first, as they arrive: one line per
// thing a person did, its steps folded in.
import { api, on, type Event } from "../api";
import { onRender, render, rowOf, state } from "../app";
import { activityLines, clock } from "../format";
import { $, h } from "../h";

function renderActivity() {
  if (state.view !== "activity") return;
  const now = Date.now();
  const lines = activityLines(state.activity.slice(0, 300), state.overview?.me, (id) => rowOf(id)?.artifact.path);
  $("activity").replaceChildren(...lines.map((line) =>
    h("li", { "data-seq": String(line.seq) }, h("time", { datetime: line.at }, clock(line.at, now)), " ", line.text)));
}

export async function loadActivity() {
  try {
    state.activity = await api.recentEvents(300);
    render();
  } catch {
    /* shown by reload */
  }
}

export function setUpActivity() {
  onRender(renderActivity);
  void on<Event[]>("activity", (events) => {
    state.activity = [...events.reverse(), ...state.activity].slice(0, 500);
    renderActivity();
  });
}
