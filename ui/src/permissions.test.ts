import { describe, expect, it } from "vitest";
import { folderChoices, folderTyped, peopleChoices, seenTree, seenWords, whoChoices, whoLabel } from "./permissions";
import type { SeenFile } from "./generated/SeenFile";

const members = [{ participant: "user:bob" }, { participant: "agent:build-bot" }, { participant: "user:alice" }];
const groups = [{ name: "designers" }, { name: "clients" }];
/** A picker's option: what is sent, and what is shown. */
const choice = (value: string, label: string) => ({ value, label });

describe("the rules' pickers", () => {
  it("name whom a rule names in plain words", () => {
    expect(whoLabel("everyone")).toBe("everyone");
    expect(whoLabel("group:designers")).toBe("group designers");
    expect(whoLabel("user:bob")).toBe("bob");
    expect(whoLabel("agent:build-bot")).toBe("build-bot (agent)");
  });

  it("offer everyone, the groups and the people, shown by name and sent as the server's forms", () => {
    expect(whoChoices(members, groups)).toEqual([
      choice("everyone", "everyone"),
      choice("group:clients", "group clients"),
      choice("group:designers", "group designers"),
      choice("user:alice", "alice"),
      choice("user:bob", "bob"),
      choice("agent:build-bot", "build-bot (agent)"),
    ]);
  });

  it("keep a rule's who that is no longer a participant or group, so it is not changed unseen", () => {
    const choices = whoChoices(members, groups, "user:gone");
    expect(choices[choices.length - 1]).toEqual(choice("user:gone", "gone"));
    expect(whoChoices(members, groups, "user:bob").filter((c) => c.value === "user:bob")).toHaveLength(1);
  });

  it("list a group's possible members as people only", () => {
    expect(peopleChoices(members).map((c) => c.label)).toEqual(["alice", "bob", "build-bot (agent)"]);
  });

  it("offer every folder by path after every file, with a rule's own folder kept", () => {
    expect(folderChoices(["brand/", "finance/", "brand/2026/"])).toEqual([
      choice("", "Every folder"),
      choice("brand/", "brand/"),
      choice("brand/2026/", "brand/2026/"),
      choice("finance/", "finance/"),
    ]);
    expect(folderChoices(["brand/"], "later/").map((c) => c.value)).toEqual(["", "brand/", "later/"]);
  });

  it("make a folder typed by hand a rule's folder", () => {
    expect(folderTyped(" brand ")).toBe("brand/");
    expect(folderTyped("brand/2026/")).toBe("brand/2026/");
    expect(folderTyped("/brand//2026")).toBe("brand/2026/");
    expect(folderTyped("./brand\\2026")).toBe("brand/2026/");
    expect(folderTyped("  ")).toBe("");
    // What the server refuses is left for it to say.
    expect(folderTyped("../up")).toBe("../up/");
  });
});

describe("what someone would see", () => {
  const files: SeenFile[] = [
    { path: "finance/q3.xlsx", level: "none" },
    { path: "brand/hero.psd", level: "write" },
    { path: "brand/approved/logo.psd", level: "read" },
    { path: "brand/approved/mark.psd", level: "read" },
    { path: "readme.txt", level: "write" },
  ];

  it("is a folder tree with the counts of each level at every folder", () => {
    const top = seenTree(files);
    expect(top.counts).toEqual({ write: 2, read: 2, none: 1 });
    expect(top.folders.map((f) => f.path)).toEqual(["brand/", "finance/"]);
    expect(top.files.map((f) => f.path)).toEqual(["readme.txt"]);
    const [brand, finance] = top.folders;
    expect(brand.counts).toEqual({ write: 1, read: 2, none: 0 });
    expect(brand.folders.map((f) => [f.name, f.counts])).toEqual([["approved", { write: 0, read: 2, none: 0 }]]);
    expect(brand.files.map((f) => f.path)).toEqual(["brand/hero.psd"]);
    expect(finance.counts).toEqual({ write: 0, read: 0, none: 1 });
  });

  it("makes a folder whose parent has no file of its own", () => {
    const top = seenTree([{ path: "a/b/c/deep.psd", level: "read" }]);
    expect(top.folders[0].path).toBe("a/");
    expect(top.folders[0].folders[0].path).toBe("a/b/");
    expect(top.folders[0].folders[0].folders[0]).toMatchObject({ path: "a/b/c/", name: "c", counts: { write: 0, read: 1, none: 0 } });
    expect(seenTree([]).counts).toEqual({ write: 0, read: 0, none: 0 });
  });

  it("says each folder's counts in words", () => {
    expect(seenWords({ write: 100, read: 20, none: 0 })).toBe("120 files: 100 view and change, 20 view only");
    expect(seenWords({ write: 0, read: 0, none: 12 })).toBe("12 files: all hidden");
    expect(seenWords({ write: 0, read: 1, none: 0 })).toBe("1 file: view only");
    expect(seenWords({ write: 2800, read: 0, none: 202 })).toBe("3,002 files: 2,800 view and change, 202 hidden");
    expect(seenWords({ write: 0, read: 0, none: 0 })).toBe("no files");
  });
});
