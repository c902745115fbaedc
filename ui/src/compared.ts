// What the compare view says of two pictures and where it draws them: the
// share of pixels that differ, the sizes, the zoom (split from format.ts).
import { bytes } from "./format";

/** "3.2 % of pixels differ", "identical"; a share too small to show as 0.1 %
 *  is still said to differ, so a changed pixel is never called identical. */
export function diffShare(changed: number, total: number): string {
  if (changed === 0) return "identical";
  const percent = (changed / total) * 100;
  if (percent < 0.1) return "less than 0.1 % of pixels differ";
  if (percent >= 99.95 && changed < total) return "99.9 % of pixels differ";
  return `${percent.toFixed(1)} % of pixels differ`;
}

export interface Size {
  width: number;
  height: number;
}

export function dimensions(size: Size): string {
  return `${size.width} × ${size.height} px`;
}

/** What the compare view says about the two images' sizes. */
export function sizesLine(a: Size, b: Size): { text: string; differ: boolean } {
  if (a.width === b.width && a.height === b.height) return { text: `Both ${dimensions(a)}`, differ: false };
  return { text: `The sizes differ: ${dimensions(a)} and ${dimensions(b)}`, differ: true };
}

/** Where an image sits: scaled by `scale`, its top-left at (x, y) in the viewport. */
export interface Zoom {
  scale: number;
  x: number;
  y: number;
}

export const MIN_ZOOM = 1 / 32;
export const MAX_ZOOM = 32;

/** The whole image in the box, centred, never enlarged past 100 %. */
export function fit(image: Size, box: Size): Zoom {
  const scale = Math.min(1, box.width / image.width, box.height / image.height);
  return { scale, x: (box.width - image.width * scale) / 2, y: (box.height - image.height * scale) / 2 };
}

/** Zooms by `factor` about the viewport point (px, py), which stays over the
 *  same image pixel; the scale is kept within MIN_ZOOM..MAX_ZOOM. */
export function zoomAt(zoom: Zoom, factor: number, px: number, py: number): Zoom {
  const scale = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, zoom.scale * factor));
  const k = scale / zoom.scale;
  return { scale, x: px - (px - zoom.x) * k, y: py - (py - zoom.y) * k };
}

/** "100 %", "12.5 %". */
export function zoomLabel(zoom: Zoom): string {
  const percent = zoom.scale * 100;
  return `${percent >= 10 ? Math.round(percent) : percent.toFixed(1)} %`;
}

/** What a compare says of two images whose pixels were counted: when no
 *  pixel differs but the files do, it says so, with both sizes when known.
 *  A `digest` of null is a copy known to differ from the other side (a
 *  local copy marked modified) that was not hashed here. */
export interface Compared {
  digest: string | null;
  size: number | null;
}

export function comparedLine(changed: number, total: number, a?: Compared, b?: Compared): string {
  if (changed > 0 || !a || !b) return diffShare(changed, total);
  if (a.digest !== null && a.digest === b.digest) return "identical: the same file";
  if (a.size === null || b.size === null) return "The pixels are identical; the file changed (saved again, re-encoded or with other metadata)";
  const sizes = a.size === b.size ? `the same size, ${bytes(b.size)}` : `${bytes(b.size)}, was ${bytes(a.size)}`;
  return `The pixels are identical; the file changed (${sizes})`;
}
