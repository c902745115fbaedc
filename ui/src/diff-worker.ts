// Works out a difference off the window's thread, so zoom and pan stay
// smooth while two 4096 px images are compared.
import { diffPixels, type Pixels } from "./diff";

self.onmessage = (message: MessageEvent<{ a: Pixels; b: Pixels }>) => {
  const { a, b } = message.data;
  const out = new Uint8ClampedArray(Math.max(a.width, b.width) * Math.max(a.height, b.height) * 4);
  const changed = diffPixels(a, b, out);
  (self as unknown as Worker).postMessage({ out, changed }, [out.buffer]);
};
