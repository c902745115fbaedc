// Raises three notices through the app's own Copy path (or, given "all",
// unfolds those raised), then, two frames later, answers every shown
// notice's and every visible control's rectangle, how many notices are
// folded, the strip's height and its "N more" (see main.rs, raise_notices_and_look).
const done = arguments[arguments.length - 1];
// Called again with "all": the notices already raised, shown all at once.
const unfold = arguments.length > 1 && arguments[0] === "all";
const strip = document.getElementById("notices");
if (unfold) {
  if (!strip.classList.contains("all")) document.getElementById("notices-more").click();
} else {
  for (const b of strip.querySelectorAll(".notice .button")) if (b.textContent === "Dismiss") b.click();
  const copy = document.getElementById("action-copy-path");
  for (let i = 0; i < 3; i++) copy.click();
}
const started = performance.now();
(function wait() {
  if (strip.querySelectorAll(".notice").length >= 3 || performance.now() - started > 5000) {
    requestAnimationFrame(() => requestAnimationFrame(look));
  } else setTimeout(wait, 20);
})();
/** What of `element` its scrolling ancestors and the window let show. */
function clipped(element) {
  let r = element.getBoundingClientRect();
  let box = { left: r.left, top: r.top, right: r.right, bottom: r.bottom };
  const cut = (c) => {
    box = { left: Math.max(box.left, c.left), top: Math.max(box.top, c.top),
            right: Math.min(box.right, c.right), bottom: Math.min(box.bottom, c.bottom) };
  };
  for (let up = element.parentElement; up; up = up.parentElement) {
    const style = getComputedStyle(up);
    if (style.overflowX !== "visible" || style.overflowY !== "visible") cut(up.getBoundingClientRect());
  }
  cut({ left: 0, top: 0, right: innerWidth, bottom: innerHeight });
  return box.right - box.left >= 1 && box.bottom - box.top >= 1 ? box : null;
}
/** Whether `element` is what a pointer meets at some of its points. */
function onTop(element, box) {
  const xs = [box.left + 1, (box.left + box.right) / 2, box.right - 1];
  const ys = [box.top + 1, (box.top + box.bottom) / 2, box.bottom - 1];
  return xs.some((x) => ys.some((y) => {
    const at = document.elementFromPoint(x, y);
    return at !== null && (at === element || element.contains(at) || [...(element.labels ?? [])].some((l) => l.contains(at)));
  }));
}
const name = (e) => `${e.tagName.toLowerCase()}${e.id ? "#" + e.id : ""} "${(e.textContent || e.getAttribute("aria-label") || e.value || "").trim().slice(0, 40)}"`;
function look() {
  // Notices folded behind "N more" are not drawn: counted apart.
  const all = [...strip.querySelectorAll(".notice")];
  const folded = all.filter((n) => n.getClientRects().length === 0).length;
  const notices = all.filter((n) => n.getClientRects().length > 0).map((n) => {
    const box = clipped(n);
    return { name: n.querySelector("strong")?.textContent ?? "", box, seen: box !== null && onTop(n, box) };
  });
  strip.style.visibility = "hidden";
  const controls = [];
  for (const c of document.querySelectorAll("button, input, select, textarea")) {
    if (strip.contains(c)) continue;
    const box = clipped(c);
    if (box && onTop(c, box)) controls.push({ name: name(c), box });
  }
  strip.style.visibility = "";
  const compare = document.getElementById("compare");
  const over = compare.hidden ? null : compare.getBoundingClientRect();
  const more = document.getElementById("notices-more");
  done({ notices, folded, strip: strip.getBoundingClientRect().height,
         more: more && !more.hidden ? more.textContent : null,
         controls, window: [innerWidth, innerHeight],
         compare: over && { left: over.left, top: over.top, right: over.right, bottom: over.bottom } });
}
