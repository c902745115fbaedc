import { describe, expect, it } from "vitest";
import { clicked, everything, inOrder, moved, noSelection, pruned, shownOf, toggled } from "./selection";

const order = ["a", "b", "c", "d", "e"];
const plain = { toggle: false, range: false };
const ctrl = { toggle: true, range: false };
const shift = { toggle: false, range: true };
const ctrlShift = { toggle: true, range: true };

describe("the selection", () => {
  it("is one file after a plain click", () => {
    const s = clicked(clicked(noSelection(), order, "b", plain), order, "d", plain);
    expect(inOrder(s, order)).toEqual(["d"]);
  });

  it("toggles a file with Ctrl, keeping the others", () => {
    let s = clicked(noSelection(), order, "b", plain);
    s = clicked(s, order, "d", ctrl);
    expect(inOrder(s, order)).toEqual(["b", "d"]);
    s = clicked(s, order, "b", ctrl);
    expect(inOrder(s, order)).toEqual(["d"]);
  });

  it("takes the range from the anchor with Shift, either way", () => {
    let s = clicked(noSelection(), order, "b", plain);
    s = clicked(s, order, "d", shift);
    expect(inOrder(s, order)).toEqual(["b", "c", "d"]);
    s = clicked(s, order, "a", shift);
    // The range replaces the last one, from the same anchor.
    expect(inOrder(s, order)).toEqual(["a", "b"]);
  });

  it("adds a range to what is chosen with Ctrl+Shift", () => {
    let s = clicked(noSelection(), order, "a", plain);
    s = clicked(s, order, "d", ctrl);
    s = clicked(s, order, "e", ctrlShift);
    expect(inOrder(s, order)).toEqual(["a", "d", "e"]);
  });

  it("is extended and shrunk by Shift and the arrows, and moved by the arrows alone", () => {
    let s = clicked(noSelection(), order, "b", plain);
    s = moved(s, order, 1, true);
    s = moved(s, order, 1, true);
    expect(inOrder(s, order)).toEqual(["b", "c", "d"]);
    s = moved(s, order, -1, true);
    expect(inOrder(s, order)).toEqual(["b", "c"]);
    s = moved(s, order, 10, false);
    expect(inOrder(s, order)).toEqual(["e"]); // clamped to the end
  });

  it("toggles with a checkbox or Space", () => {
    const s = toggled(toggled(noSelection(), "c"), "a");
    expect(inOrder(s, order)).toEqual(["a", "c"]);
    expect(inOrder(toggled(s, "c"), order)).toEqual(["a"]);
  });

  it("chooses every file shown, and drops what a filter hides", () => {
    const all = everything(order);
    expect(inOrder(all, order)).toEqual(order);
    const filtered = pruned(all, ["b", "e"]);
    expect(inOrder(filtered, order)).toEqual(["b", "e"]);
    expect(pruned(filtered, ["b", "e", "z"])).toBe(filtered);
  });
});

describe("the file shown for a choice (issue 36)", () => {
  const order = ["a", "b", "c"];
  it("is the focused file while it is chosen", () => {
    expect(shownOf(clicked(noSelection(), order, "b", { toggle: false, range: false }), order)).toBe("b");
  });
  it("is not a row just taken out with Ctrl-click: that one keeps no tint", () => {
    const two = clicked(clicked(noSelection(), order, "a", { toggle: false, range: false }), order, "c", { toggle: true, range: false });
    const out = clicked(two, order, "c", { toggle: true, range: false });
    expect(out.focus).toBe("c");
    expect(shownOf(out, order)).toBe("a");
    expect(shownOf(clicked(out, order, "a", { toggle: true, range: false }), order)).toBeNull();
  });
});
