import { describe, expect, it } from "vitest";
import { cancelButton, moved, progressOf, saving, sending } from "./sending";

const MB = 1024 * 1024;

describe("an upload's bar", () => {
  it("says how much of the file travels, and the time left once a rate is known", () => {
    const upload = sending("u", 0);
    moved(upload, { sent: 0, total: 84 * MB, size: 2100 * MB, reconnecting: false }, 0);
    expect(progressOf(upload, 0).label).toBe(
      "Sending 84 MB of 2.1 GB (the rest is already on the server): 0 B sent",
    );
    moved(upload, { sent: 21 * MB, total: 84 * MB, size: 2100 * MB, reconnecting: false }, 10_000);
    const bar = progressOf(upload, 10_000);
    // 21 MB in 10 s: 63 MB more take about 30 s.
    expect(bar.label).toBe(
      "Sending 84 MB of 2.1 GB (the rest is already on the server): 21 MB sent, about 30 s left",
    );
    expect(bar.width).toBe("25%");
  });

  it("says reconnecting while the link is down, and measures the rate afresh after", () => {
    const upload = sending("u", 0);
    moved(upload, { sent: 50 * MB, total: 100 * MB, size: 100 * MB, reconnecting: false }, 100_000);
    moved(upload, { sent: 50 * MB, total: 100 * MB, size: 100 * MB, reconnecting: true }, 101_000);
    expect(progressOf(upload, 101_000).label).toBe(
      "Reconnecting… 50 MB of 100 MB sent; it goes on from there",
    );
    moved(upload, { sent: 50 * MB, total: 100 * MB, size: 100 * MB, reconnecting: false }, 160_000);
    moved(upload, { sent: 60 * MB, total: 100 * MB, size: 100 * MB, reconnecting: false }, 170_000);
    // 10 MB in the 10 s since it went on, not 60 MB in 170 s: 40 MB more take 40 s.
    expect(progressOf(upload, 170_000).label).toBe("Uploading… 60 MB of 100 MB, about 40 s left");
  });

  it("is plain until the shell says what travels", () => {
    expect(progressOf(sending("u", 0), 0)).toEqual({ label: "Uploading…", width: "0%" });
    expect(progressOf(undefined).label).toBe("Uploading…");
  });
});

describe("cancelling an upload (issue 36)", () => {
  it("can cancel until every byte is sent, then says the server is saving and cannot", () => {
    const upload = sending("u", 0);
    moved(upload, { sent: 99 * MB, total: 100 * MB, size: 100 * MB, reconnecting: false }, 1000);
    expect(saving(upload)).toBe(false);
    expect(cancelButton(upload)).toEqual({ label: "Cancel upload", disabled: false });
    moved(upload, { sent: 100 * MB, total: 100 * MB, size: 100 * MB, reconnecting: false }, 2000);
    expect(saving(upload)).toBe(true);
    expect(cancelButton(upload)).toEqual({ label: "Saving on the server…", disabled: true });
    expect(progressOf(upload, 2000)).toEqual({ label: "Saving on the server… all 100 MB sent", width: "100%" });
  });

  it("says Cancelling once pressed, and never 'saving' before a size is known or while reconnecting", () => {
    const upload = sending("u", 0);
    expect(saving(upload)).toBe(false);
    upload.cancelAsked = true;
    expect(cancelButton(upload)).toEqual({ label: "Cancelling…", disabled: true });
    moved(upload, { sent: 10, total: 10, size: 10, reconnecting: true }, 0);
    expect(saving(upload)).toBe(false);
  });
});
