// Two images of one file side by side, swiped, as an onion skin, or as their
// difference: a proposal against the head, any two versions, your modified
// copy against the head. Every mode's layers are built once per pair and the
// difference is computed once (and kept for the last few pairs), so
// switching modes only flips an attribute. Zoom and pan are one transform
// shared by every layer, so the two sides stay in step. A click on a
// picture that is a version or a proposal pins a comment there; the
// threads and the decision are beside the stage (views/review.ts).
import { diffPixels } from "../diff";
import { comparedLine, fit, sizesLine, zoomAt, zoomLabel, dimensions, type Compared, type Size, type Zoom } from "../compared";
import { $, button, h } from "../h";
import type { ReviewOf } from "../review";
import { Board, type Surface } from "./review";

export interface Side {
  label: string;
  src: string;
  /** The file's digest and size, when known: so identical pixels of
   *  different files are not called identical files. */
  file?: Compared;
  /** What a comment pinned on it is on (a version or a proposal of
   *  `artifact`); none for your local copy. */
  review?: { artifact: string; of: ReviewOf };
}

export type Mode = "side" | "swipe" | "onion" | "diff";
const MODES: [Mode, string][] = [["side", "Side by side"], ["swipe", "Swipe"], ["onion", "Onion skin"], ["diff", "Difference"]];

/** The difference of a pair of addresses: its picture and its share. */
interface Difference {
  canvas: HTMLCanvasElement;
  changed: number;
  total: number;
}
const differences = new Map<string, Promise<Difference>>();
const KEPT_DIFFERENCES = 4;

async function pixelsOf(src: string): Promise<ImageData> {
  const response = await fetch(src);
  if (!response.ok) throw new Error(`no preview (${response.status})`);
  const bitmap = await createImageBitmap(await response.blob());
  const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
  const context = canvas.getContext("2d", { willReadFrequently: true })!;
  context.drawImage(bitmap, 0, 0);
  bitmap.close();
  return context.getImageData(0, 0, canvas.width, canvas.height);
}

/** The difference's picture and count, from a worker when the window can
 *  start one (else here). The pixels are handed over, not copied. */
function diffOffThread(a: ImageData, b: ImageData): Promise<{ out: Uint8ClampedArray; changed: number }> {
  const here = () => {
    const out = new Uint8ClampedArray(Math.max(a.width, b.width) * Math.max(a.height, b.height) * 4);
    return { out, changed: diffPixels(a, b, out) };
  };
  let worker: Worker;
  try {
    worker = new Worker(new URL("../diff-worker.ts", import.meta.url), { type: "module" });
  } catch {
    return Promise.resolve(here());
  }
  return new Promise((resolve) => {
    worker.onmessage = (message) => {
      worker.terminate();
      resolve(message.data);
    };
    worker.onerror = (event) => {
      event.preventDefault();
      worker.terminate();
      resolve(here());
    };
    const pixels = (image: ImageData) => ({ data: image.data, width: image.width, height: image.height });
    worker.postMessage({ a: pixels(a), b: pixels(b) }, [a.data.buffer, b.data.buffer]);
  });
}

function differenceOf(left: string, right: string): Promise<Difference> {
  const key = `${left}\n${right}`;
  let found = differences.get(key);
  if (!found) {
    found = (async () => {
      const [a, b] = await Promise.all([pixelsOf(left), pixelsOf(right)]);
      const width = Math.max(a.width, b.width);
      const height = Math.max(a.height, b.height);
      const { out, changed } = await diffOffThread(a, b);
      const canvas = h("canvas", { class: "layer", width: String(width), height: String(height) });
      canvas.getContext("2d")!.putImageData(new ImageData(out as Uint8ClampedArray<ArrayBuffer>, width, height), 0, 0);
      return { canvas, changed, total: width * height };
    })();
    differences.set(key, found);
    found.catch(() => differences.delete(key));
    while (differences.size > KEPT_DIFFERENCES) differences.delete(differences.keys().next().value!);
  }
  return found;
}

let closeOpen: (() => void) | null = null;

/** Closes the compare view, if one is open (after a decision taken in it). */
export function closeCompare() {
  closeOpen?.();
}

/** Opens the compare view over the window; Escape or Close ends it.
 *  `decision`, when given, is shown with it (a proposal's Accept and Reject),
 *  so the designer decides while looking. */
export function openCompare(title: string, left: Side, right: Side, startMode: Mode = "side", decision?: HTMLElement) {
  closeOpen?.();
  const root = $("compare");
  let zoom: Zoom = { scale: 1, x: 0, y: 0 };
  let fitted = true;
  const sizes: (Size | null)[] = [null, null];

  const image = (side: Side, which: string) => {
    const img = h("img", { class: `layer ${which}`, alt: side.label, src: side.src, draggable: "false", "data-side": which });
    return img;
  };
  // Side by side: a pane per image. Swipe and onion: both in one pane.
  const sideA = image(left, "a");
  const sideB = image(right, "b");
  const stackA = image(left, "a");
  const stackB = image(right, "b");
  const diffHolder = h("div", { class: "layer-holder" });
  // Swipe clips the second image in the pane's own frame, not the image's,
  // so the split stays under the line however the images are panned.
  const clip = h("div", { class: "clip", id: "compare-clip" }, stackB);
  const swipeLine = h("div", { class: "swipe-line", id: "compare-swipe-line" });
  const stackKey = h("div", { class: "stack-key", id: "compare-stack-key" },
    h("span", { class: "key-a" }, ""), h("span", { class: "key-b" }, ""));
  const diffKey = h("div", { class: "diff-key", id: "compare-diff-key" },
    h("span", { class: "swatch changed" }), " changed pixels  ",
    h("span", { class: "swatch same" }), ` unchanged (a faint trace of ${left.label})`);
  // Pins are drawn over each picture in its pane's own pixels (pins.ts).
  const pinLayers = [h("div", { class: "pins" }), h("div", { class: "pins" }), h("div", { class: "pins" })];
  const panes = {
    side: [h("div", { class: "pane", "data-label": left.label }, sideA, pinLayers[0]), h("div", { class: "pane", "data-label": right.label }, sideB, pinLayers[1])],
    stack: h("div", { class: "pane stack" }, stackA, clip, swipeLine, stackKey, pinLayers[2]),
    diff: h("div", { class: "pane diff" }, diffHolder, diffKey),
  };
  const slider = h("input", { id: "compare-slider", type: "range", min: "0", max: "100", value: "50", "aria-label": "Swipe position" });
  const share = h("output", { id: "compare-share", "aria-live": "polite" }, "");
  const sizeLine = h("p", { id: "compare-sizes", class: "muted" }, "");
  const zoomText = h("span", { class: "zoom-label", id: "compare-zoom" }, "");
  const stage = h("div", { class: "compare-stage", "data-mode": startMode, id: "compare-stage" }, ...panes.side, panes.stack, panes.diff);
  // Review: the side a decision is on is a proposal's, else the newer (right) one.
  const reviewSides = [left.review ?? null, right.review ?? null];
  const reviewed = reviewSides.findIndex((r) => r && "proposal" in r.of) >= 0
    ? reviewSides.findIndex((r) => r && "proposal" in r.of)
    : right.review ? 1 : 0;
  const artifact = reviewSides[reviewed]?.artifact;
  const board = artifact
    ? new Board("compare", artifact, { of: reviewSides.map((r) => r?.of ?? null), reviewed, labels: [left.label, right.label] })
    : null;
  const surfaces: Surface[] = [
    { side: 0, layer: pinLayers[0] },
    { side: 1, layer: pinLayers[1] },
    { side: 0, layer: pinLayers[2] },
    { side: 1, layer: pinLayers[2] },
  ].map(({ side, layer }) => ({ side, layer, image: () => sizes[side], at: () => zoom }));
  board?.attach(surfaces);

  /** The surface under a click at (x, y) on screen, and the point in its
   *  layer: a side-by-side pane's, or in the stack the side shown there
   *  (left of the swipe's line or right; in the onion, the one mostly seen). */
  function surfaceAt(x: number, y: number): { surface: Surface; point: { x: number; y: number } } | null {
    const mode = stage.dataset.mode;
    if (mode === "diff") return null;
    const candidates = mode === "side" ? [0, 1] : [2, 3];
    for (const index of candidates) {
      const surface = surfaces[index];
      const box = surface.layer.getBoundingClientRect();
      if (x < box.left || x > box.right || y < box.top || y > box.bottom) continue;
      const value = Number(slider.value);
      const side = mode === "side" ? surface.side : mode === "swipe" ? (x - box.left < (box.width * value) / 100 ? 0 : 1) : value >= 50 ? 1 : 0;
      if (side !== surface.side) continue;
      return { surface, point: { x: x - box.left, y: y - box.top } };
    }
    return null;
  }

  const modeButtons = MODES.map(([mode, label], i) => {
    const b = button(label, () => setMode(mode), "small", { "data-mode": mode, title: `${label} (${i + 1})`, "aria-pressed": String(mode === startMode) });
    return b;
  });

  function setMode(mode: Mode) {
    stage.dataset.mode = mode;
    for (const b of modeButtons) b.setAttribute("aria-pressed", String(b.dataset.mode === mode));
    slider.classList.toggle("unused", mode !== "swipe" && mode !== "onion");
    slider.disabled = mode !== "swipe" && mode !== "onion";
    slider.setAttribute("aria-label", mode === "onion" ? "Opacity of the second image" : "Swipe position");
    applySlider();
    if (fitted) refit();
  }

  function applySlider() {
    const value = Number(slider.value);
    const mode = stage.dataset.mode;
    clip.style.clipPath = mode === "swipe" ? `inset(0 0 0 ${value}%)` : "";
    stackB.style.opacity = mode === "onion" ? String(value / 100) : "1";
    swipeLine.style.left = `${value}%`;
    // Which version is where: either side of the line, or on top.
    const [keyA, keyB] = stackKey.children as unknown as HTMLElement[];
    if (mode === "swipe") {
      keyA.textContent = `◀ ${left.label}`;
      keyB.textContent = `${right.label} ▶`;
    } else {
      keyA.textContent = `${left.label} below`;
      keyB.textContent = `${right.label} on top, at ${value} %`;
    }
  }
  slider.addEventListener("input", applySlider);

  /** The box the images are fitted in: a pane of the current mode. */
  function paneSize(): Size {
    const pane = stage.dataset.mode === "side" ? panes.side[0] : stage.dataset.mode === "diff" ? panes.diff : panes.stack;
    return { width: pane.clientWidth || 600, height: pane.clientHeight || 400 };
  }

  function largest(): Size | null {
    const known = sizes.filter((s): s is Size => s !== null);
    if (!known.length) return null;
    return { width: Math.max(...known.map((s) => s.width)), height: Math.max(...known.map((s) => s.height)) };
  }

  function refit() {
    const size = largest();
    if (!size) return;
    zoom = fit(size, paneSize());
    fitted = true;
    applyZoom();
  }

  function applyZoom() {
    const transform = `translate(${zoom.x}px, ${zoom.y}px) scale(${zoom.scale})`;
    for (const layer of stage.querySelectorAll<HTMLElement>(".layer, .layer-holder")) layer.style.transform = transform;
    zoomText.textContent = zoomLabel(zoom);
    board?.draw();
  }

  function zoomBy(factor: number, px?: number, py?: number) {
    const box = paneSize();
    zoom = zoomAt(zoom, factor, px ?? box.width / 2, py ?? box.height / 2);
    fitted = false;
    applyZoom();
  }

  function describeSizes() {
    const [a, b] = sizes;
    if (!a || !b) return;
    const line = sizesLine(a, b);
    sizeLine.textContent = `${left.label}: ${dimensions(a)} · ${right.label}: ${dimensions(b)}${line.differ ? ` — ${line.text}` : ""}`;
    sizeLine.classList.toggle("warning", line.differ);
    sizeLine.dataset.differ = String(line.differ);
  }

  const loaded = (img: HTMLImageElement, index: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        if (img.naturalWidth > 0) sizes[index] = { width: img.naturalWidth, height: img.naturalHeight };
        describeSizes();
        if (fitted) refit();
        resolve();
      };
      if (img.complete && img.naturalWidth > 0) done();
      else {
        img.addEventListener("load", done, { once: true });
        img.addEventListener("error", () => {
          img.closest(".pane")?.classList.add("none");
          resolve();
        }, { once: true });
      }
    });
  void Promise.all([loaded(sideA, 0), loaded(sideB, 1)]);

  share.textContent = "Comparing…";
  differenceOf(left.src, right.src).then(
    (difference) => {
      if (!root.contains(stage)) return;
      diffHolder.replaceChildren(difference.canvas);
      share.textContent = comparedLine(difference.changed, difference.total, left.file, right.file);
      share.dataset.changed = String(difference.changed);
      if (fitted) refit();
      else applyZoom();
    },
    (error) => {
      share.textContent = `No difference to show: ${error instanceof Error ? error.message : String(error)}`;
    },
  );

  // Pan by dragging, zoom with the wheel about the pointer.
  // A press let go where it began is a click: a comment pinned there.
  let drag: { x: number; y: number } | null = null;
  let pressed: { x: number; y: number } | null = null;
  stage.addEventListener("pointerdown", (e) => {
    if ((e.target as HTMLElement).closest("input, textarea, button, .composer")) return;
    drag = { x: e.clientX, y: e.clientY };
    pressed = { x: e.clientX, y: e.clientY };
    stage.setPointerCapture(e.pointerId);
  });
  stage.addEventListener("pointermove", (e) => {
    if (!drag) return;
    zoom = { ...zoom, x: zoom.x + e.clientX - drag.x, y: zoom.y + e.clientY - drag.y };
    drag = { x: e.clientX, y: e.clientY };
    fitted = false;
    applyZoom();
  });
  stage.addEventListener("pointerup", (e) => {
    drag = null;
    const click = pressed && Math.hypot(e.clientX - pressed.x, e.clientY - pressed.y) < 4;
    pressed = null;
    const under = click && board ? surfaceAt(e.clientX, e.clientY) : null;
    if (under) board!.pinAt(under.surface, under.point);
  });
  stage.addEventListener("wheel", (e) => {
    e.preventDefault();
    const pane = (e.target as HTMLElement).closest(".pane") ?? stage;
    const box = pane.getBoundingClientRect();
    zoomBy(e.deltaY < 0 ? 1.25 : 0.8, e.clientX - box.left, e.clientY - box.top);
  }, { passive: false });

  const keys = (e: KeyboardEvent) => {
    if (e.target instanceof HTMLInputElement && e.target.type !== "range") return;
    if (e.target instanceof HTMLTextAreaElement) return; // a comment being written
    if (e.ctrlKey || e.metaKey || e.altKey) return; // the window's own zoom and shortcuts
    if (document.querySelector("dialog[open]")) return; // a question asked over the compare
    const mode = MODES[Number(e.key) - 1];
    if (mode) setMode(mode[0]);
    else if (e.key === "+" || e.key === "=") zoomBy(1.25);
    else if (e.key === "-" || e.key === "_") zoomBy(0.8);
    else if (e.key === "0") refit();
    else if (e.key === "Escape") close();
    else return;
    e.preventDefault();
    e.stopPropagation();
  };
  const onResize = () => (fitted ? refit() : applyZoom());
  function close() {
    document.removeEventListener("keydown", keys, true);
    window.removeEventListener("resize", onResize);
    root.hidden = true;
    root.replaceChildren();
    closeOpen = null;
    board?.close();
  }
  closeOpen = close;
  document.addEventListener("keydown", keys, true);
  window.addEventListener("resize", onResize);

  root.replaceChildren(
    h("header", { class: "compare-bar" },
      h("h2", { id: "compare-title" }, title),
      h("div", { class: "modes", role: "group", "aria-label": "How to compare" }, ...modeButtons),
      slider,
      h("div", { class: "zoom", role: "group", "aria-label": "Zoom" },
        button("−", () => zoomBy(0.8), "small ghost", { title: "Zoom out (−)", id: "compare-zoom-out" }),
        zoomText,
        button("+", () => zoomBy(1.25), "small ghost", { title: "Zoom in (+)", id: "compare-zoom-in" }),
        button("Fit", refit, "small ghost", { title: "Fit (0)" })),
      button("Close", close, "", { id: "compare-close" })),
    h("div", { class: "compare-info" },
      h("p", {}, h("span", { class: "side-a" }, left.label), " and ", h("span", { class: "side-b" }, right.label), ": ", share),
      sizeLine, decision ?? null),
    board ? h("div", { class: "compare-body" }, stage, board.panel) : stage,
  );
  root.hidden = false;
  setMode(startMode);
  requestAnimationFrame(refit);
}
