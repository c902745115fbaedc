import { describe, expect, it } from "vitest";
import { mergeChanges, touchedOnScreen } from "./following";

const row = (id: string) => ({ artifact: { id } }) as never;
const proposal = (artifact_id: string) => ({ artifact_id }) as never;

describe("what of others' work is on screen", () => {
  const overview = { involved: [row("mine")], proposals: [proposal("proposed")] };

  it("reads the overview again when a file of your check-outs or proposals changed", () => {
    expect(touchedOnScreen({ changed: ["mine"], moved: false }, { overview, selected: null }).involved).toBe(true);
    expect(touchedOnScreen({ changed: ["proposed"], moved: false }, { overview, selected: null }).involved).toBe(true);
    expect(touchedOnScreen({ changed: ["elsewhere"], moved: false }, { overview, selected: null }).involved).toBe(false);
  });

  it("reads the chosen file again when it changed, or when files moved", () => {
    expect(touchedOnScreen({ changed: ["hero"], moved: false }, { overview, selected: "hero" }).chosen).toEqual(["hero"]);
    expect(touchedOnScreen({ changed: [], moved: true }, { overview, selected: "hero" }).chosen).toEqual(["hero"]);
    expect(touchedOnScreen({ changed: ["logo"], moved: false }, { overview, selected: "hero" }).chosen).toEqual([]);
    expect(touchedOnScreen({ changed: ["hero"], moved: false }, { overview: null, selected: null })).toEqual({ involved: false, chosen: [] });
  });
});

describe("a burst of the list's changes", () => {
  const count = (path: string, held: number) => ({ path, files: 10, held });

  it("is one change: every file named once, moved if any moved, the latest counts and total", () => {
    const first = { changed: ["hero", "logo"], moved: false, folders: [count("", 1), count("brand/", 1)], total: 10 };
    const second = { changed: ["logo", "cat"], moved: true, folders: [count("", 2), count("pets/", 1)], total: 11 };
    const merged = mergeChanges(mergeChanges(undefined, first), second);
    expect(merged.changed).toEqual(["hero", "logo", "cat"]);
    expect(merged.moved).toBe(true);
    expect(merged.folders).toEqual([count("", 2), count("brand/", 1), count("pets/", 1)]);
    expect(merged.total).toBe(11);
  });

  it("alone is itself", () => {
    const only = { changed: ["hero"], moved: false, folders: [count("", 1)], total: 3 };
    expect(mergeChanges(undefined, only)).toBe(only);
  });
});
