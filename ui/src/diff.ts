// The difference of two images, pixel by pixel, as a picture: unchanged
// pixels dimmed to a faint grey of the first image, changed ones in a strong
// magenta; pixels only one image has (their sizes differ) count as changed.
// Pure over RGBA arrays, so it is tested without a window.

export interface Pixels {
  data: Uint8ClampedArray;
  width: number;
  height: number;
}

/** Channels may differ by this much (of 255) and still count as equal:
 *  PNG encoders and colour management round differently. */
export const TOLERANCE = 2;

/** Writes the difference picture into `out` (max width × max height) and
 *  answers how many of its pixels differ. */
export function diffPixels(a: Pixels, b: Pixels, out: Uint8ClampedArray): number {
  const width = Math.max(a.width, b.width);
  const height = Math.max(a.height, b.height);
  if (out.length !== width * height * 4) throw new Error(`the output holds ${out.length / 4} pixels, not ${width * height}`);
  let changed = 0;
  for (let y = 0; y < height; y++) {
    const inA = y < a.height;
    const inB = y < b.height;
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      const hasA = inA && x < a.width;
      const hasB = inB && x < b.width;
      let same = hasA && hasB;
      let grey = 255;
      if (same) {
        const i = (y * a.width + x) * 4;
        const j = (y * b.width + x) * 4;
        const da = a.data, db = b.data;
        same =
          Math.abs(da[i] - db[j]) <= TOLERANCE &&
          Math.abs(da[i + 1] - db[j + 1]) <= TOLERANCE &&
          Math.abs(da[i + 2] - db[j + 2]) <= TOLERANCE &&
          Math.abs(da[i + 3] - db[j + 3]) <= TOLERANCE;
        grey = (da[i] * 77 + da[i + 1] * 150 + da[i + 2] * 29) >> 8;
      }
      if (same) {
        // A faint trace of the image, so the changes can be placed.
        const faint = 200 + (grey >> 2);
        out[o] = faint;
        out[o + 1] = faint;
        out[o + 2] = faint;
        out[o + 3] = 255;
      } else {
        changed++;
        out[o] = 255;
        out[o + 1] = 0;
        out[o + 2] = 170;
        out[o + 3] = 255;
      }
    }
  }
  return changed;
}
