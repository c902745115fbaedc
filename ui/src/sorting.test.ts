import { describe, expect, it } from "vitest";
import { BY_NAME, ariaSort, arrow, headTitle, nextOrder, shownOrder, sortable } from "./sorting";

describe("sorting the list by a column", () => {
  it("sorts by a head clicked, ascending, and reverses on the next click", () => {
    const bySize = nextOrder(BY_NAME, "size");
    expect(bySize).toEqual({ by: "size", descending: false });
    expect(nextOrder(bySize, "size")).toEqual({ by: "size", descending: true });
    expect(nextOrder(nextOrder(bySize, "size"), "size")).toEqual({ by: "size", descending: false });
    expect(nextOrder(nextOrder(bySize, "size"), "modified")).toEqual({ by: "modified", descending: false });
    expect(nextOrder(BY_NAME, "path")).toEqual({ by: "path", descending: true });
  });

  it("marks the head sorted by with aria-sort and an arrow, the others not", () => {
    const newest = { by: "modified", descending: true } as const;
    expect(ariaSort(newest, "modified")).toBe("descending");
    expect(arrow(newest, "modified")).toBe("▼");
    expect(ariaSort(newest, "size")).toBe("none");
    expect(arrow(newest, "size")).toBe("");
    expect(ariaSort(BY_NAME, "path")).toBe("ascending");
    expect(arrow(BY_NAME, "path")).toBe("▲");
  });

  it("sorts a folder's list only: a search and Held by others keep the server's order, and say so", () => {
    const folder = { kind: "folder", folder: "brand/" } as const;
    const bySize = { by: "size", descending: false } as const;
    expect(sortable(folder)).toBe(true);
    expect(sortable({ kind: "search", text: "hero" })).toBe(false);
    expect(shownOrder(bySize, folder)).toEqual(bySize);
    expect(shownOrder(bySize, { kind: "held" })).toEqual(BY_NAME);
    expect(headTitle(bySize, "size", "Size", { kind: "search", text: "hero" })).toBe("Search results are listed by path; choose a folder to sort by size");
    expect(headTitle(bySize, "size", "Size", { kind: "held" })).toBe("Files held by others are listed by path; choose a folder to sort by size");
    expect(headTitle(bySize, "size", "Size", folder)).toBe("Sorted by size, smallest first: click for largest first");
    expect(headTitle(bySize, "modified", "Modified", folder)).toBe("Sort by modified, oldest first");
  });
});
