// The list of files as the window holds it: what is on screen and a little
// around it, never the studio. A folder's files are read by place from the
// app's mirror (blocks of BLOCK rows); a search, or the files others hold,
// is asked of the server a page at a time as the list is scrolled to its
// end. Rows far from the screen are dropped, so memory stays that of a few
// screens however many files there are. Held by others also has the paths
// others hold with no file yet (`holds`), each in its place by path.
import type { FileRow } from "./api";
import type { ListOrder } from "./generated/ListOrder";
import type { PathHold } from "./generated/PathHold";

/** What the list shows: the files under a folder (`""`: every one), those
 *  whose path contains a text, or those someone else holds. */
export type Source = { kind: "folder"; folder: string } | { kind: "search"; text: string } | { kind: "held" };

/** Rows asked for at a time. */
export const BLOCK = 100;
/** Rows kept either side of the screen; the rest are dropped. */
export const KEEP = 400;
/** A search or "held by others" stops loading here: refine it instead. */
export const MOST_FOUND = 5000;

/** Where rows come from: the shell's commands (tests give their own). */
export interface Fetcher {
  folder(folder: string, offset: number, limit: number, order: ListOrder): Promise<{ total: number; offset: number; rows: FileRow[] }>;
  found(source: Source, after: string | null, limit: number): Promise<{ rows: FileRow[]; holds?: PathHold[]; next: string | null }>;
}

/** Paths in the server's order: by code point (UTF-8's byte order), not by
 *  UTF-16 unit as `<` compares strings. */
export function byPath(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0)! - y[i].codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** A found page's files and holds as one run by path: each a row or a hold. */
export function merged(rows: FileRow[], holds: PathHold[] = []): ({ row: FileRow } | { hold: PathHold })[] {
  const out: ({ row: FileRow } | { hold: PathHold })[] = [];
  let r = 0;
  let h = 0;
  while (r < rows.length || h < holds.length) {
    if (h >= holds.length || (r < rows.length && byPath(rows[r].artifact.path, holds[h].path) <= 0)) out.push({ row: rows[r++] });
    else out.push({ hold: holds[h++] });
  }
  return out;
}

export function sameSource(a: Source, b: Source): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export class Listing {
  source: Source = { kind: "folder", folder: "" };
  /** The order of a folder's files (a search's is the server's, by path). */
  sortedBy: ListOrder = { by: "path", descending: false };
  /** The rows' count: a folder's total; for a search, what is loaded
   *  (more may come while `next` is set). */
  length = 0;
  /** Whether the count is known (a folder, or a search read to its end). */
  complete = false;
  readonly rows = new Map<number, FileRow>();
  /** Held by others' paths held with no file yet, by place among the rows
   *  (a place is a row's or a hold's, never both). */
  readonly holds = new Map<number, PathHold>();
  private next: string | null = null;
  /** Bumped by every new source or refresh: an older answer is dropped. */
  private generation = 0;
  /** The ranges of places being read now. */
  private asking = new Set<[number, number]>();
  /** The ranges of places whose read failed: not asked again until the next refresh. */
  private failedAt = new Set<[number, number]>();
  private loadingMore = false;
  /** A search's page failed: not asked again until the next refresh. */
  private failed = false;

  /** `kept` says which rows stay however far from the screen (the chosen ones). */
  constructor(private fetcher: Fetcher, private changed: () => void, private kept: (artifact: string) => boolean = () => false) {}

  /** Shows `source` from its start. */
  show(source: Source) {
    this.source = source;
    this.restart();
  }

  /** Shows a folder's files in `order` from the start. */
  sort(order: ListOrder) {
    this.sortedBy = order;
    this.restart();
  }

  /** Whether files read again (`changed`) may have moved on the list: in
   *  an order by size, save time, version or holder, a file changed off
   *  the screen may now be on it. */
  reorderedBy(changed: readonly string[]): boolean {
    return this.source.kind === "folder" && this.sortedBy.by !== "path" && changed.length > 0;
  }

  private restart() {
    this.generation++;
    this.rows.clear();
    this.holds.clear();
    this.asking.clear();
    this.failedAt.clear();
    this.length = 0;
    this.complete = false;
    this.next = null;
    this.loadingMore = false;
    this.failed = false;
  }

  /** Reads again what is on screen (after an event), and no more: rows
   *  stay shown until their new answer replaces them; those off the screen
   *  (but the kept ones) are dropped, to be read when scrolled to. */
  async refresh(first: number, last: number) {
    this.generation++;
    this.failedAt.clear();
    this.failed = false;
    const generation = this.generation;
    if (this.source.kind === "folder") {
      const page = await this.fetcher.folder(this.source.folder, first, Math.max(1, last - first), this.sortedBy);
      if (generation !== this.generation) return;
      for (const [at, row] of [...this.rows]) {
        if ((at < first || at >= last || at >= page.total) && !this.kept(row.artifact.id)) this.rows.delete(at);
      }
      this.length = page.total;
      this.complete = true;
      page.rows.forEach((row, i) => this.rows.set(page.offset + i, row));
      this.changed();
      return;
    }
    const upTo = Math.max(BLOCK, Math.min(MOST_FOUND, last + BLOCK));
    const found: ReturnType<typeof merged> = [];
    let after: string | null = null;
    let more = true;
    while (more && found.length < upTo) {
      const page = await this.fetcher.found(this.source, after, BLOCK * 2);
      if (generation !== this.generation) return;
      found.push(...merged(page.rows, page.holds));
      after = page.next;
      more = page.next !== null;
    }
    this.rows.clear();
    this.holds.clear();
    this.place(found, 0);
    this.length = found.length;
    this.next = after;
    this.complete = !more;
    this.changed();
  }

  /** Asks for the rows between places `first` and `last` that are not
   *  here (a block from the first missing); drops those far from them. */
  async need(first: number, last: number) {
    this.drop(first, last);
    if (this.source.kind !== "folder") return this.more(last);
    const folder = this.source.folder;
    const generation = this.generation;
    // At least the place `first`: a list that was empty may not be now.
    const end = Math.max(this.complete ? Math.min(last, this.length) : last, first + 1);
    let missing = -1;
    const within = (ranges: Set<[number, number]>, at: number) => [...ranges].some(([from, to]) => from <= at && at < to);
    for (let at = first; at < end && missing < 0; at++) {
      if (!this.rows.has(at) && !within(this.asking, at) && !within(this.failedAt, at)) missing = at;
    }
    if (missing < 0) return;
    const range: [number, number] = [missing, missing + BLOCK];
    this.asking.add(range);
    try {
      const page = await this.fetcher.folder(folder, missing, BLOCK, this.sortedBy);
      if (generation !== this.generation) return;
      this.length = page.total;
      this.complete = true;
      for (const key of [...this.rows.keys()]) if (key >= page.total) this.rows.delete(key);
      page.rows.forEach((row, i) => this.rows.set(page.offset + i, row));
      this.changed();
    } catch (error) {
      // Asked again by the next refresh, not by every render meanwhile.
      if (generation === this.generation) this.failedAt.add(range);
      throw error;
    } finally {
      this.asking.delete(range);
    }
  }

  /** A search's next page, when the screen nears the end of what is loaded. */
  private async more(last: number) {
    const ending = last + BLOCK / 2 >= this.length;
    if (this.loadingMore || this.failed || (this.complete && this.length > 0) || !ending || this.length >= MOST_FOUND) return;
    if (this.length > 0 && this.next === null) return;
    this.loadingMore = true;
    const generation = this.generation;
    try {
      const page = await this.fetcher.found(this.source, this.next, BLOCK * 2);
      if (generation !== this.generation) return;
      const found = merged(page.rows, page.holds);
      this.place(found, this.length);
      this.length += found.length;
      this.next = page.next;
      this.complete = page.next === null;
      this.changed();
    } catch (error) {
      // Asked again by the next refresh, not by every render meanwhile.
      if (generation === this.generation) this.failed = true;
      throw error;
    } finally {
      if (generation === this.generation) this.loadingMore = false;
    }
  }

  /** Puts found rows and holds in their places from `from`. */
  private place(found: ReturnType<typeof merged>, from: number) {
    found.forEach((entry, i) => {
      if ("row" in entry) this.rows.set(from + i, entry.row);
      else this.holds.set(from + i, entry.hold);
    });
  }

  /** Whether a search stopped at MOST_FOUND with more to come. */
  get cutShort(): boolean {
    return !this.complete && this.length >= MOST_FOUND;
  }

  /** A folder's far rows go; a search keeps what it loaded (at most MOST_FOUND). */
  private drop(first: number, last: number) {
    if (this.source.kind !== "folder") return;
    for (const [at, row] of [...this.rows]) {
      if ((at < first - KEEP || at >= last + KEEP) && !this.kept(row.artifact.id)) this.rows.delete(at);
    }
  }

  /** The row of `artifact` if it is loaded, and its place. */
  find(artifact: string): [number, FileRow] | undefined {
    for (const entry of this.rows) if (entry[1].artifact.id === artifact) return entry;
    return undefined;
  }

  /** Puts a row read again (its copy hashed, say) in its place, if shown. */
  replace(row: FileRow): boolean {
    const found = this.find(row.artifact.id);
    if (found) this.rows.set(found[0], row);
    return found !== undefined;
  }

  /** The loaded rows' ids in list order. */
  order(): string[] {
    return [...this.rows.entries()].sort((a, b) => a[0] - b[0]).map(([, row]) => row.artifact.id);
  }
}
