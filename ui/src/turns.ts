// Work that takes turns: at most `cap` jobs run at once, in the order they
// were added; a job cancelled before its turn never runs, and a running one
// cancelled is told through its signal and gives its place up at once. The
// file list decodes its thumbnails through one (views/files.ts). Knows no DOM.

/** A job's place: cancel it before its turn (it never runs) or during it. */
export interface Turn {
  cancel(): void;
  readonly state: "waiting" | "running" | "done" | "cancelled";
}

export interface Turns {
  /** Adds `job`; it starts once fewer than `cap` run, never within this call. */
  add(job: (signal: AbortSignal) => Promise<unknown>): Turn;
  /** How many run now, and how many wait. */
  readonly running: number;
  readonly waiting: number;
}

interface Entry {
  job: (signal: AbortSignal) => Promise<unknown>;
  state: Turn["state"];
  abort: AbortController;
}

export function turns(cap: number): Turns {
  if (!(cap >= 1)) throw new RangeError(`at least one at a time, not ${cap}`);
  const queue: Entry[] = [];
  let running = 0;
  let pumping = false;

  const finish = (entry: Entry, state: "done" | "cancelled") => {
    if (entry.state !== "running") return;
    entry.state = state;
    running--;
    schedule();
  };

  // Jobs start in a microtask, never inside add(): what adds a job (a view
  // drawing an element) finishes first, and a job never runs within another's.
  function schedule() {
    if (pumping) return;
    pumping = true;
    queueMicrotask(pump);
  }

  function pump() {
    pumping = false;
    while (running < cap && queue.length) {
      const entry = queue.shift()!;
      if (entry.state !== "waiting") continue;
      entry.state = "running";
      running++;
      let settled: Promise<unknown>;
      try {
        settled = Promise.resolve(entry.job(entry.abort.signal));
      } catch (error) {
        settled = Promise.reject(error);
      }
      settled.then(() => finish(entry, "done"), () => finish(entry, "done"));
    }
  }

  return {
    add(job) {
      const entry: Entry = { job, state: "waiting", abort: new AbortController() };
      queue.push(entry);
      schedule();
      return {
        cancel() {
          if (entry.state === "waiting") {
            entry.state = "cancelled";
            const at = queue.indexOf(entry);
            if (at >= 0) queue.splice(at, 1);
          } else if (entry.state === "running") {
            entry.abort.abort();
            finish(entry, "cancelled");
          }
        },
        get state() {
          return entry.state;
        },
      };
    },
    get running() {
      return running;
    },
    get waiting() {
      return queue.length;
    },
  };
}

/** A promise that rejects when `signal` aborts: raced against work that
 *  cannot itself be stopped, so a cancelled job ends at once. */
export function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}
