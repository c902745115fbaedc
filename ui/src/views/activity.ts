// The store's recent events, newest first, as they arrive.
import { api, on, type Event } from "../api";
import { onRender, render, state } from "../app";
import { clock, describeEvent } from "../format";
import { $, h } from "../h";

function renderActivity() {
  if (state.view !== "activity") return;
  const paths = new Map((state.overview?.files ?? []).map((r) => [r.artifact.id, r.artifact.path]));
  const now = Date.now();
  $("activity").replaceChildren(...state.activity.slice(0, 300).map((e) =>
    h("li", {}, h("time", { datetime: e.at }, clock(e.at, now)), " ", describeEvent(e, (id) => paths.get(id)))));
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
