import { describe, expect, it } from "vitest";
import { diffPixels, TOLERANCE } from "./diff";
import { diffShare, fit, MAX_ZOOM, MIN_ZOOM, sizesLine, zoomAt, zoomLabel } from "./compared";
import { checkoutEnding, proposalStateWords, span } from "./format";

/** A width × height image of one colour. */
function solid(width: number, height: number, rgba: [number, number, number, number]) {
  const data = new Uint8ClampedArray(width * height * 4);
  for (let i = 0; i < data.length; i += 4) data.set(rgba, i);
  return { data, width, height };
}

describe("diffShare", () => {
  it("says identical only when no pixel differs", () => {
    expect(diffShare(0, 1000)).toBe("identical");
    expect(diffShare(1, 16_777_216)).toBe("less than 0.1 % of pixels differ");
  });
  it("gives the share to a tenth of a percent", () => {
    expect(diffShare(32, 1000)).toBe("3.2 % of pixels differ");
    expect(diffShare(1000, 1000)).toBe("100.0 % of pixels differ");
  });
  it("never rounds a partly changed image up to all of it", () => {
    expect(diffShare(9999, 10000)).toBe("99.9 % of pixels differ");
  });
});

describe("diffPixels", () => {
  it("finds no change between equal images, and marks none", () => {
    const a = solid(4, 3, [10, 20, 30, 255]);
    const out = new Uint8ClampedArray(4 * 3 * 4);
    expect(diffPixels(a, solid(4, 3, [10, 20, 30, 255]), out)).toBe(0);
    expect(out[0]).not.toBe(255); // not the magenta of a change
  });
  it("counts the changed pixels and marks them magenta", () => {
    const a = solid(4, 4, [0, 0, 0, 255]);
    const b = solid(4, 4, [0, 0, 0, 255]);
    b.data.set([255, 255, 255, 255], (1 * 4 + 2) * 4); // (2, 1)
    b.data.set([0, 0, 0, 0], (3 * 4 + 3) * 4); // alpha only, at (3, 3)
    const out = new Uint8ClampedArray(4 * 4 * 4);
    expect(diffPixels(a, b, out)).toBe(2);
    expect([...out.slice((1 * 4 + 2) * 4, (1 * 4 + 2) * 4 + 4)]).toEqual([255, 0, 170, 255]);
    expect([...out.slice(0, 4)]).not.toEqual([255, 0, 170, 255]);
  });
  it("lets rounding within the tolerance pass", () => {
    const out = new Uint8ClampedArray(4);
    expect(diffPixels(solid(1, 1, [100, 100, 100, 255]), solid(1, 1, [100 + TOLERANCE, 100 - TOLERANCE, 100, 255]), out)).toBe(0);
    expect(diffPixels(solid(1, 1, [100, 100, 100, 255]), solid(1, 1, [100 + TOLERANCE + 1, 100, 100, 255]), out)).toBe(1);
  });
  it("counts what only the larger image covers as changed", () => {
    const out = new Uint8ClampedArray(3 * 2 * 4);
    // 2×2 against 3×2 of the same colour: the third column differs.
    expect(diffPixels(solid(2, 2, [5, 5, 5, 255]), solid(3, 2, [5, 5, 5, 255]), out)).toBe(2);
  });
  it("refuses an output of the wrong size", () => {
    expect(() => diffPixels(solid(2, 2, [0, 0, 0, 255]), solid(3, 2, [0, 0, 0, 255]), new Uint8ClampedArray(16))).toThrow(/6/);
  });
});

describe("sizes", () => {
  it("says when the two images' sizes differ", () => {
    expect(sizesLine({ width: 800, height: 600 }, { width: 800, height: 600 })).toEqual({ text: "Both 800 × 600 px", differ: false });
    const line = sizesLine({ width: 800, height: 600 }, { width: 1024, height: 600 });
    expect(line.differ).toBe(true);
    expect(line.text).toBe("The sizes differ: 800 × 600 px and 1024 × 600 px");
  });
});

describe("zoom", () => {
  it("fits a large image into the box, centred", () => {
    expect(fit({ width: 4096, height: 2048 }, { width: 1024, height: 1024 })).toEqual({ scale: 0.25, x: 0, y: 256 });
  });
  it("never enlarges a small image to fit", () => {
    expect(fit({ width: 100, height: 50 }, { width: 1000, height: 500 })).toEqual({ scale: 1, x: 450, y: 225 });
  });
  it("keeps the pixel under the pointer where it was", () => {
    const before = { scale: 0.5, x: 10, y: 20 };
    const [px, py] = [210, 120];
    const imageX = (px - before.x) / before.scale;
    const imageY = (py - before.y) / before.scale;
    const after = zoomAt(before, 2, px, py);
    expect(after.scale).toBe(1);
    expect((px - after.x) / after.scale).toBeCloseTo(imageX);
    expect((py - after.y) / after.scale).toBeCloseTo(imageY);
  });
  it("stays within its limits", () => {
    expect(zoomAt({ scale: 30, x: 0, y: 0 }, 4, 0, 0).scale).toBe(MAX_ZOOM);
    expect(zoomAt({ scale: 0.04, x: 0, y: 0 }, 0.1, 0, 0).scale).toBe(MIN_ZOOM);
  });
  it("labels the scale as a percentage", () => {
    expect(zoomLabel({ scale: 1, x: 0, y: 0 })).toBe("100 %");
    expect(zoomLabel({ scale: 0.0625, x: 0, y: 0 })).toBe("6.3 %");
    expect(zoomLabel({ scale: 2.5, x: 0, y: 0 })).toBe("250 %");
  });
});

describe("history wording", () => {
  it("says how each check-out ended", () => {
    expect(checkoutEnding({ outcome: "checked_in", version: 4, unchanged: false })).toBe("checked in as version 4");
    expect(checkoutEnding({ outcome: "checked_in", version: 4, unchanged: true })).toBe("checked in unchanged: still version 4");
    expect(checkoutEnding({ outcome: "open" })).toBe("still checked out");
    expect(checkoutEnding({ outcome: "cancelled" })).toBe("cancelled, nothing checked in");
    expect(checkoutEnding({ outcome: "lapsed" })).toBe("the lease lapsed");
    expect(checkoutEnding({ outcome: "proposed", proposal: "p" })).toBe("checked in late: became a proposal");
    expect(checkoutEnding({ outcome: "broken", by: "user:admin", reason: "print run" })).toBe("lease broken by admin: “print run”");
  });
  it("gives a check-out's span, or since when for an open one", () => {
    const now = Date.parse("2026-12-01T12:00:00");
    expect(span("2026-12-01T09:05:00", "2026-12-01T11:30:00", now)).toBe("09:05 – 11:30");
    expect(span("2026-12-01T09:05:00", null, now)).toBe("since 09:05");
  });
  it("has words for every state of a proposal", () => {
    for (const state of ["open", "accepted", "rejected", "superseded"]) expect(proposalStateWords[state]).toBeTruthy();
  });
});
