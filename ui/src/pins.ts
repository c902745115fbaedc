// Where a review pin sits: a pin is kept as fractions of its picture (0..1
// from the top left, API.md), and drawn over a picture however it is shown,
// scaled and moved (the compare view's zoom and pan, the detail's fitted
// preview, the window's own zoom). Only arithmetic: the views measure.
import type { Size, Zoom } from "./compared";

/** A point of a picture as fractions of its width and height. */
export interface Fraction {
  x: number;
  y: number;
}

/** A point on screen, in the pixels of the layer the pins are drawn in. */
export interface Point {
  x: number;
  y: number;
}

/** Where the fraction `pin` of an `image` is on screen when the image's top
 *  left is at (at.x, at.y) and each of its pixels is `at.scale` wide. */
export function pinToScreen(pin: Fraction, image: Size, at: Zoom): Point {
  return { x: at.x + pin.x * image.width * at.scale, y: at.y + pin.y * image.height * at.scale };
}

/** The fraction of `image` under the screen point `point`, or null when it
 *  is off the picture (a click on the margin pins nothing). */
export function screenToPin(point: Point, image: Size, at: Zoom): Fraction | null {
  const width = image.width * at.scale;
  const height = image.height * at.scale;
  if (!(width > 0 && height > 0)) return null;
  const x = (point.x - at.x) / width;
  const y = (point.y - at.y) / height;
  if (x < 0 || y < 0 || x > 1 || y > 1) return null;
  return { x, y };
}

/** The image pixel (column, row) a fraction falls on; the right and bottom
 *  edges belong to the last pixel. */
export function pixelOf(pin: Fraction, image: Size): Point {
  return {
    x: Math.min(image.width - 1, Math.floor(pin.x * image.width)),
    y: Math.min(image.height - 1, Math.floor(pin.y * image.height)),
  };
}

/** How a picture of `natural` size is placed in a layer, from where the
 *  page drew it (`drawn`) and where the layer is (`layer`), both as
 *  `getBoundingClientRect` gives them. */
export function placementOf(drawn: { left: number; top: number; width: number }, layer: { left: number; top: number }, natural: Size): Zoom {
  return { scale: drawn.width / natural.width, x: drawn.left - layer.left, y: drawn.top - layer.top };
}

/** A box pin's size on screen, when it has one. */
export function boxOnScreen(pin: { w: number | null; h: number | null }, image: Size, at: Zoom): Size | null {
  if (pin.w == null || pin.h == null) return null;
  return { width: pin.w * image.width * at.scale, height: pin.h * image.height * at.scale };
}
