import { describe, expect, it } from "vitest";
import { aborted, turns } from "./turns";

/** A job that runs until `finish` is called; records its start in `log`. */
function held(log: string[], name: string) {
  let finish!: () => void;
  let fail!: (e: unknown) => void;
  let signal: AbortSignal | undefined;
  const job = (s: AbortSignal) => {
    signal = s;
    log.push(name);
    return new Promise<void>((resolve, reject) => {
      finish = resolve;
      fail = reject;
    });
  };
  return { job, finish: () => finish(), fail: (e: unknown) => fail(e), signal: () => signal };
}

/** Lets queued microtasks (and the jobs' settling) run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("turns", () => {
  it("never runs more than its cap at once, and starts the next as one ends", async () => {
    const log: string[] = [];
    const q = turns(2);
    const jobs = ["a", "b", "c", "d", "e"].map((n) => held(log, n));
    for (const j of jobs) q.add(j.job);
    await settle();
    expect(log).toEqual(["a", "b"]);
    expect(q.running).toBe(2);
    expect(q.waiting).toBe(3);
    jobs[1].finish();
    await settle();
    expect(log).toEqual(["a", "b", "c"]);
    expect(q.running).toBe(2);
    jobs[0].fail(new Error("no preview"));
    await settle();
    expect(log).toEqual(["a", "b", "c", "d"]);
    jobs[2].finish();
    jobs[3].finish();
    await settle();
    expect(log).toEqual(["a", "b", "c", "d", "e"]);
    jobs[4].finish();
    await settle();
    expect(q.running).toBe(0);
    expect(q.waiting).toBe(0);
  });

  it("starts jobs in the order they were added", async () => {
    const log: string[] = [];
    const q = turns(1);
    const names = ["1", "2", "3", "4"];
    for (const n of names) q.add(async () => void log.push(n));
    await settle();
    expect(log).toEqual(names);
  });

  it("never starts a job inside add()", async () => {
    const log: string[] = [];
    const q = turns(4);
    const turn = q.add(async () => void log.push("ran"));
    expect(log).toEqual([]);
    expect(turn.state).toBe("waiting");
    await settle();
    expect(log).toEqual(["ran"]);
    expect(turn.state).toBe("done");
  });

  it("skips a job cancelled before its turn", async () => {
    const log: string[] = [];
    const q = turns(1);
    const first = held(log, "first");
    q.add(first.job);
    const skipped = q.add(async () => void log.push("skipped"));
    q.add(async () => void log.push("last"));
    await settle();
    skipped.cancel();
    expect(skipped.state).toBe("cancelled");
    expect(q.waiting).toBe(1);
    first.finish();
    await settle();
    expect(log).toEqual(["first", "last"]);
  });

  it("skips a job cancelled in the same moment it was added", async () => {
    const log: string[] = [];
    const q = turns(3);
    q.add(async () => void log.push("never")).cancel();
    await settle();
    expect(log).toEqual([]);
  });

  it("aborts a running job that is cancelled, and gives its place up at once", async () => {
    const log: string[] = [];
    const q = turns(1);
    const stuck = held(log, "stuck");
    const turn = q.add(stuck.job);
    q.add(async () => void log.push("next"));
    await settle();
    expect(log).toEqual(["stuck"]);
    turn.cancel();
    expect(stuck.signal()!.aborted).toBe(true);
    expect(turn.state).toBe("cancelled");
    await settle();
    // The stuck job never settled, yet the next one ran.
    expect(log).toEqual(["stuck", "next"]);
    expect(q.running).toBe(0);
    // Settling late changes nothing, nor does cancelling again.
    stuck.finish();
    turn.cancel();
    await settle();
    expect(q.running).toBe(0);
    expect(turn.state).toBe("cancelled");
  });

  it("counts a job that throws as done", async () => {
    const q = turns(1);
    const log: string[] = [];
    const turn = q.add(() => {
      throw new Error("at once");
    });
    q.add(async () => void log.push("after"));
    await settle();
    expect(turn.state).toBe("done");
    expect(log).toEqual(["after"]);
  });

  it("wants at least one at a time", () => {
    expect(() => turns(0)).toThrow(RangeError);
  });
});

describe("aborted", () => {
  it("rejects when the signal aborts, or at once if it has", async () => {
    const controller = new AbortController();
    const waiting = aborted(controller.signal);
    controller.abort("gone");
    await expect(waiting).rejects.toBe("gone");
    await expect(aborted(controller.signal)).rejects.toBe("gone");
  });
});
