// The folder permissions as the Studio view shows them, without a window:
// the pickers' choices in plain names ("bob", "build-bot (agent)", "group
// designers", "everyone") over the forms the server takes (`user:bob`,
// `agent:build-bot`, `group:designers`), a folder typed by hand made a
// rule's folder, and what a chosen person would see as a folder tree with
// counts at each level.
import type { SeenFile } from "./generated/SeenFile";
import type { Level } from "./generated/Level";
import { count, participantName } from "./format";

/** One choice of a picker: what is sent, and what is shown. */
export interface Choice {
  value: string;
  label: string;
}


/** Whom a rule names, in plain words: "everyone", "group designers", "bob",
 *  "build-bot (agent)". */
export function whoLabel(who: string): string {
  if (who === "everyone") return "everyone";
  if (who.startsWith("group:")) return `group ${who.slice("group:".length)}`;
  return participantName(who);
}

/** The people of the studio by plain name, sorted (agents after people). */
export function peopleChoices(members: { participant: string }[]): Choice[] {
  const agent = (p: string) => p.startsWith("agent:");
  return [...members]
    .map((m) => m.participant)
    .sort((a, b) => Number(agent(a)) - Number(agent(b)) || participantName(a).localeCompare(participantName(b)))
    .map((p) => ({ value: p, label: participantName(p) }));
}

/** The Who picker: everyone, each group, each person; and `current` when it
 *  is none of them (a rule naming someone since gone stays as it is). */
export function whoChoices(members: { participant: string }[], groups: { name: string }[], current = ""): Choice[] {
  const choices: Choice[] = [
    { value: "everyone", label: "everyone" },
    ...[...groups].map((g) => g.name).sort((a, b) => a.localeCompare(b)).map((name) => ({ value: `group:${name}`, label: `group ${name}` })),
    ...peopleChoices(members),
  ];
  if (current && !choices.some((c) => c.value === current)) choices.push({ value: current, label: whoLabel(current) });
  return choices;
}

/** The Folder picker: every file, then each folder by path; and `current`
 *  when it is not among them (a rule made before its folder has files). */
export function folderChoices(folders: string[], current = ""): Choice[] {
  const paths = [...new Set(folders.filter((f) => f.endsWith("/")))].sort((a, b) => a.localeCompare(b));
  if (current && !paths.includes(current)) paths.push(current);
  return [{ value: "", label: "Every folder" }, ...paths.map((p) => ({ value: p, label: p }))];
}

/** A folder typed by hand as a rule's folder: trimmed, no leading `/` or
 *  `./`, backslashes as `/`, ending in `/` ("brand" is "brand/"); empty
 *  is every folder. The server still checks the rest. */
export function folderTyped(text: string): string {
  let folder = text.trim().replace(/\\/g, "/");
  while (folder.startsWith("./")) folder = folder.slice(2);
  folder = folder.replace(/^\/+/, "").replace(/\/{2,}/g, "/");
  if (!folder) return "";
  return folder.endsWith("/") ? folder : `${folder}/`;
}

/** How many files at each level. */
export interface SeenCounts {
  write: number;
  read: number;
  none: number;
}

/** A folder of the preview: its counts (at any depth), its folders and its
 *  own files, each by path. */
export interface SeenFolder {
  path: string;
  name: string;
  counts: SeenCounts;
  folders: SeenFolder[];
  files: SeenFile[];
}

const noCounts = (): SeenCounts => ({ write: 0, read: 0, none: 0 });

/** The folder a folder is in: "brand/" for "brand/2026/", "" for "brand/". */
const parentOf = (folder: string) => folder.slice(0, folder.slice(0, -1).lastIndexOf("/") + 1);

/** What someone would see, as a tree: every folder with how many of the
 *  files under it they could change, only view, or would not see; folders
 *  and files by name. */
export function seenTree(files: SeenFile[]): SeenFolder {
  const top: SeenFolder = { path: "", name: "Every file", counts: noCounts(), folders: [], files: [] };
  const byPath = new Map<string, SeenFolder>([["", top]]);
  const folderAt = (path: string): SeenFolder => {
    const found = byPath.get(path);
    if (found) return found;
    const parentPath = parentOf(path);
    const made: SeenFolder = { path, name: path.slice(parentPath.length, -1), counts: noCounts(), folders: [], files: [] };
    folderAt(parentPath).folders.push(made);
    byPath.set(path, made);
    return made;
  };
  for (const file of files) {
    const folder = folderAt(file.path.slice(0, file.path.lastIndexOf("/") + 1));
    folder.files.push(file);
    for (let at = folder.path; ; at = parentOf(at)) {
      byPath.get(at)!.counts[file.level] += 1;
      if (at === "") break;
    }
  }
  const sort = (folder: SeenFolder) => {
    folder.folders.sort((a, b) => a.name.localeCompare(b.name));
    folder.files.sort((a, b) => a.path.localeCompare(b.path));
    folder.folders.forEach(sort);
  };
  sort(top);
  return top;
}

/** A level as the preview says it. */
export const levelWords: Record<Level, string> = {
  write: "view and change",
  read: "view only",
  none: "hidden",
};

/** A folder's counts in words: "120 files: 100 view and change, 20 view
 *  only", "12 files: all hidden", "1 file: view only". */
export function seenWords(counts: SeenCounts): string {
  const total = counts.write + counts.read + counts.none;
  const files = `${count(total)} ${total === 1 ? "file" : "files"}`;
  if (total === 0) return "no files";
  const levels = (["write", "read", "none"] as const).filter((l) => counts[l] > 0);
  if (levels.length === 1) return `${files}: ${total === 1 ? "" : "all "}${levelWords[levels[0]]}`;
  return `${files}: ${levels.map((l) => `${count(counts[l])} ${levelWords[l]}`).join(", ")}`;
}
