import { describe, expect, it } from "vitest";
import type { FileRow } from "./api";
import { BLOCK, KEEP, Listing, MOST_FOUND, type Fetcher, type Source } from "./listing";

/** A studio of `total` files named by place, as the shell would answer. */
function studio(total: number, asked: string[] = []): Fetcher {
  const row = (i: number) => ({ artifact: { id: `id${i}`, path: `f/${String(i).padStart(7, "0")}.psd` } }) as unknown as FileRow;
  return {
    folder: async (folder, offset, limit) => {
      asked.push(`${folder}@${offset}`);
      const rows = [];
      for (let i = offset; i < Math.min(total, offset + limit); i++) rows.push(row(i));
      return { total, offset, rows };
    },
    found: async (_source: Source, after, limit) => {
      const from = after === null ? 0 : Number(after) + 1;
      const rows = [];
      for (let i = from; i < Math.min(total, from + limit); i++) rows.push(row(i));
      const last = from + rows.length - 1;
      return { rows, next: last < total - 1 ? String(last) : null };
    },
  };
}

describe("the list of files", () => {
  it("reads a folder in the order asked, from its start again, and says when changes reorder it", async () => {
    const asked: string[] = [];
    const orders: string[] = [];
    const base = studio(1000, asked);
    const list = new Listing({ ...base, folder: (f, o, l, order) => (orders.push(`${order.by}${order.descending ? "-" : "+"}`), base.folder(f, o, l, order)) }, () => {});
    await list.need(500, 520);
    expect(list.reorderedBy(["id3"])).toBe(false);
    list.sort({ by: "size", descending: true });
    expect(list.rows.size).toBe(0);
    await list.need(0, 20);
    await list.refresh(0, 20);
    expect(orders).toEqual(["path+", "size-", "size-"]);
    expect(asked).toEqual(["@500", "@0", "@0"]);
    expect(list.reorderedBy(["id3"])).toBe(true);
    expect(list.reorderedBy([])).toBe(false);
    list.show({ kind: "held" });
    expect(list.reorderedBy(["id3"])).toBe(false);
  });

  it("asks for the blocks on screen only, and knows the folder's length", async () => {
    const asked: string[] = [];
    const list = new Listing(studio(1_000_000, asked), () => {});
    await list.need(0, 20);
    expect(asked).toEqual(["@0"]);
    expect(list.length).toBe(1_000_000);
    expect(list.rows.get(19)?.artifact.id).toBe("id19");
    await list.need(0, 20);
    expect(asked).toEqual(["@0"]);
  });

  it("holds a few screens however far a million files are scrolled", async () => {
    const list = new Listing(studio(1_000_000), () => {});
    for (let first = 0; first < 1_000_000; first += 9973) await list.need(first, first + 20);
    expect(list.rows.size).toBeLessThanOrEqual(2 * KEEP + 2 * BLOCK);
    expect(list.rows.get(997_300)?.artifact.id).toBe("id997300");
  });

  it("keeps a chosen row however far the list scrolls from it", async () => {
    const list = new Listing(studio(100_000), () => {}, (id) => id === "id3");
    await list.need(0, 20);
    await list.need(50_000, 50_020);
    expect(list.find("id3")?.[0]).toBe(3);
    expect(list.find("id4")).toBeUndefined();
  });

  it("drops an answer that comes after the list showed something else", async () => {
    let release: () => void = () => {};
    const slow = studio(10);
    const list = new Listing({ ...slow, folder: (f, o, l, order) => new Promise((done) => (release = () => void slow.folder(f, o, l, order).then(done))) }, () => {});
    const pending = list.need(0, 10);
    list.show({ kind: "search", text: "kiwi" });
    release();
    await pending;
    expect(list.rows.size).toBe(0);
    expect(list.source).toEqual({ kind: "search", text: "kiwi" });
  });

  it("reads a search a page at a time as it nears the end, and stops at MOST_FOUND", async () => {
    const list = new Listing(studio(20_000), () => {});
    list.show({ kind: "search", text: "psd" });
    await list.need(0, 20);
    expect(list.length).toBe(2 * BLOCK);
    expect(list.complete).toBe(false);
    await list.need(10, 30);
    expect(list.length).toBe(2 * BLOCK);
    while (list.length < MOST_FOUND) await list.need(list.length - 10, list.length);
    await list.need(list.length - 10, list.length);
    expect(list.length).toBe(MOST_FOUND);
    expect(list.cutShort).toBe(true);
  });

  it("a short search is complete, its count known", async () => {
    const list = new Listing(studio(3), () => {});
    list.show({ kind: "held" });
    await list.need(0, 20);
    expect([list.length, list.complete, list.cutShort]).toEqual([3, true, false]);
  });

  it("a refresh keeps the rows shown until their new answer, then replaces them", async () => {
    let total = 50;
    const base = studio(1000);
    const list = new Listing({ ...base, folder: async (f, o, l, order) => ({ ...(await base.folder(f, o, l, order)), total, rows: (await base.folder(f, o, Math.min(l, total - o), order)).rows }) }, () => {});
    await list.need(0, 60);
    expect(list.length).toBe(50);
    total = 10;
    const refreshing = list.refresh(0, 60);
    expect(list.rows.size).toBe(50);
    await refreshing;
    expect(list.length).toBe(10);
    expect(list.rows.size).toBe(10);
  });
});

describe("a list read before its files came", () => {
  it("reads its first block again on a refresh, though it was empty", async () => {
    let total = 0;
    const base = studio(1000);
    const list = new Listing({ ...base, folder: async (f, o, l, order) => ({ ...(await base.folder(f, o, l, order)), total, rows: (await base.folder(f, o, Math.max(0, Math.min(l, total - o)), order)).rows }) }, () => {});
    await list.need(0, 0);
    expect([list.length, list.complete]).toEqual([0, true]);
    total = 5;
    await list.refresh(0, 20);
    expect(list.length).toBe(5);
    expect(list.rows.get(4)?.artifact.id).toBe("id4");
  });
});

describe("a list whose source fails", () => {
  it("asks once, not at every render, until the next refresh", async () => {
    let calls = 0;
    const failing: Fetcher = {
      folder: async () => { calls++; throw new Error("no"); },
      found: async () => { calls++; throw new Error("no"); },
    };
    const list = new Listing(failing, () => {});
    for (let i = 0; i < 3; i++) await list.need(0, 20).catch(() => {});
    expect(calls).toBe(1);
    list.show({ kind: "search", text: "hero" });
    for (let i = 0; i < 3; i++) await list.need(0, 20).catch(() => {});
    expect(calls).toBe(2);
    await list.refresh(0, 20).catch(() => {});
    expect(calls).toBe(3);
  });
});
