import { describe, expect, it } from "vitest";
import { fit, zoomAt, type Zoom } from "./compared";
import { boxOnScreen, pinToScreen, pixelOf, placementOf, screenToPin } from "./pins";

const poster = { width: 320, height: 200 };

describe("pins on screen", () => {
  it("puts a fraction where the picture's pixel is drawn at 100 %", () => {
    const at: Zoom = { scale: 1, x: 40, y: 10 };
    expect(pinToScreen({ x: 0, y: 0 }, poster, at)).toEqual({ x: 40, y: 10 });
    expect(pinToScreen({ x: 0.25, y: 0.5 }, poster, at)).toEqual({ x: 40 + 80, y: 10 + 100 });
    expect(pinToScreen({ x: 1, y: 1 }, poster, at)).toEqual({ x: 360, y: 210 });
  });

  it("reads back the fraction it drew, at any zoom and pan", () => {
    const pin = { x: 0.3125, y: 0.3 };
    for (const at of [{ scale: 1, x: 0, y: 0 }, { scale: 2, x: -100, y: 35 }, { scale: 0.37, x: 12.5, y: -3 }]) {
      const back = screenToPin(pinToScreen(pin, poster, at), poster, at)!;
      expect(back.x).toBeCloseTo(pin.x, 12);
      expect(back.y).toBeCloseTo(pin.y, 12);
    }
  });

  it("keeps a pin on the same image pixel when zoomed about a point and panned", () => {
    const pin = { x: 100.5 / 320, y: 60.5 / 200 }; // the middle of pixel (100, 60)
    let at = fit(poster, { width: 640, height: 400 });
    expect(at.scale).toBe(1);
    const pixel = (z: Zoom) => {
      const screen = pinToScreen(pin, poster, z);
      // Which pixel of the picture the browser draws under that screen point.
      return [Math.floor((screen.x - z.x) / z.scale), Math.floor((screen.y - z.y) / z.scale)];
    };
    expect(pixel(at)).toEqual([100, 60]);
    const before = pinToScreen(pin, poster, at);
    at = zoomAt(at, 2, 300, 120);
    expect(at.scale).toBe(2);
    expect(pixel(at)).toEqual([100, 60]);
    const zoomed = pinToScreen(pin, poster, at);
    // Twice as far from the point zoomed about as before.
    expect(zoomed.x - 300).toBeCloseTo(2 * (before.x - 300), 9);
    expect(zoomed.y - 120).toBeCloseTo(2 * (before.y - 120), 9);
    const panned = { ...at, x: at.x + 37, y: at.y - 21 };
    expect(pinToScreen(pin, poster, panned)).toEqual({ x: zoomed.x + 37, y: zoomed.y - 21 });
    expect(pixel(panned)).toEqual([100, 60]);
  });

  it("pins nothing off the picture", () => {
    const at: Zoom = { scale: 2, x: 10, y: 10 };
    expect(screenToPin({ x: 9, y: 50 }, poster, at)).toBeNull();
    expect(screenToPin({ x: 50, y: 10 + 400.5 }, poster, at)).toBeNull();
    expect(screenToPin({ x: 10 + 640, y: 10 + 400 }, poster, at)).toEqual({ x: 1, y: 1 });
    expect(screenToPin({ x: 5, y: 5 }, { width: 0, height: 0 }, at)).toBeNull();
  });

  it("measures a fitted preview's placement from where the page drew it", () => {
    // A 320 × 200 preview drawn 480 px wide, 30 px into its layer.
    const at = placementOf({ left: 130, top: 70, width: 480 }, { left: 100, top: 50 }, poster);
    expect(at).toEqual({ scale: 1.5, x: 30, y: 20 });
    expect(pinToScreen({ x: 0.5, y: 0.5 }, poster, at)).toEqual({ x: 30 + 240, y: 20 + 150 });
    // The window zoomed to 200 %: drawn twice as wide, the pin still on its pixel.
    const doubled = placementOf({ left: 260, top: 140, width: 960 }, { left: 200, top: 100 }, poster);
    const pin = screenToPin({ x: 60 + 0.25 * 960, y: 40 + 0.75 * 600 }, poster, doubled)!;
    expect(pixelOf(pin, poster)).toEqual({ x: 80, y: 150 });
  });

  it("gives the pixel a fraction falls on, the far edges on the last", () => {
    expect(pixelOf({ x: 0, y: 0 }, poster)).toEqual({ x: 0, y: 0 });
    expect(pixelOf({ x: 0.999, y: 0.5 }, poster)).toEqual({ x: 319, y: 100 });
    expect(pixelOf({ x: 1, y: 1 }, poster)).toEqual({ x: 319, y: 199 });
  });

  it("scales a box pin with the picture", () => {
    expect(boxOnScreen({ w: 0.5, h: 0.25 }, poster, { scale: 2, x: 0, y: 0 })).toEqual({ width: 320, height: 100 });
    expect(boxOnScreen({ w: null, h: null }, poster, { scale: 2, x: 0, y: 0 })).toBeNull();
  });
});
