// The contract with the shell is types generated from Rust (Code, Shell):
// what is wrong here fails `tsc` (`npm run build`), each `@ts-expect-error`
// failing the build once what it marks is no longer an error.
import { describe, expect, it } from "vitest";
import type { AppError, Code } from "./api";
import type { ShellCommands, ShellEvents } from "./generated/Shell";

/** Never called: its body is checked by `tsc`, not run. */
function typed() {
  // @ts-expect-error: a misspelt code is no code
  const misspelt: Code = "artifact_bussy";
  const error = { code: "artifact_busy", message: "" } as AppError;
  // @ts-expect-error: a comparison with no code is no comparison
  const never = error.code === "artfact_busy";
  const busy = error.code === "artifact_busy";

  // @ts-expect-error: a command the shell does not have
  const unknown: keyof ShellCommands = "check_outt";
  // @ts-expect-error: an argument missing (the channel)
  const missing: ShellCommands["check_out"]["args"] = { artifact: "a", note: null, ttlSeconds: null };
  // @ts-expect-error: an argument by its Rust name, not the window's
  const snake: ShellCommands["extend"]["args"] = { checkout: "c", ttl_seconds: null };
  // @ts-expect-error: no argument where the command takes none
  const extra: ShellCommands["overview"]["args"] = { artifact: "a" };
  // @ts-expect-error: a number where the shell wants a string
  const wrong: ShellCommands["refresh_row"]["args"] = { artifact: 7 };
  const answer: ShellCommands["take_intent"]["answer"] = null;

  // @ts-expect-error: an event the shell does not send
  const unheard: keyof ShellEvents = "store_changed";
  // @ts-expect-error: a payload of another shape
  const shape: ShellEvents["activity"] = { events: [] };
  const notice: ShellEvents["notice"] = { title: "t", body: "b" };
  return [misspelt, never, busy, unknown, missing, snake, extra, wrong, answer, unheard, shape, notice];
}

describe("the shell's contract", () => {
  it("is checked by the compiler (this file's body is its test)", () => {
    expect(typeof typed).toBe("function");
  });
});
