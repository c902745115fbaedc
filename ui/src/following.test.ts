import { describe, expect, it } from "vitest";
import { touchedOnScreen } from "./following";

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
