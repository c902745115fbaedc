"""The add-on in real Blender, against the real app: run by
src-tauri/tests/blender/main.rs as an ordinary user (root could save over
a read-only file and hide the lock), as

    blender --background --factory-startup --python in_blender.py -- SCENARIO ADDON_ZIP WORKSPACE OUTSIDE

SCENARIO is `running` (the app is up, the files seeded by the harness) or
`stopped` (the app is gone). Each check raises on failure; the figures are
printed on one line, `LEASEDESK-FIGURES {json}`.
"""

import json
import os
import statistics
import sys
import time

import bpy

scenario, addon_zip, workspace, outside = sys.argv[sys.argv.index("--") + 1:][:4]

bpy.ops.preferences.addon_install(filepath=addon_zip, overwrite=True)
bpy.ops.preferences.addon_enable(module="leasedesk")
import leasedesk  # noqa: E402  (installed just now)



def shown():
    # Looked up each time: opening a file may give Blender a new window manager.
    return bpy.data.window_managers[0].leasedesk



def wait_for(what, condition, limit=10.0):
    started = time.perf_counter()
    while not condition():
        if time.perf_counter() - started > limit:
            raise AssertionError("%s: not within %.0f s (state %s, message %r)" % (what, limit, shown().state, shown().message))
        time.sleep(0.005)
    return time.perf_counter() - started


def open_file(path):
    bpy.ops.wm.open_mainfile(filepath=path)
    # load_post asked the app; the answer comes from the worker.
    wait_for("the state of " + path, lambda: leasedesk._same_file(shown().path, path))


def get_copy(repo_path):
    leasedesk.client.call("POST", "/files/get", {"repo_path": repo_path})
    return os.path.join(workspace, *repo_path.split("/"))


if scenario == "stopped":
    path = os.path.join(outside, "any.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    # Said already, maybe, by the follower of events: forget it, and ask.
    shown().state = "unknown"
    bpy.ops.leasedesk.refresh()
    took = wait_for("not running said", lambda: shown().state == "not_running", limit=3.0)
    assert leasedesk.status_line(shown()) == "Leasedesk is not running", leasedesk.status_line(shown())
    bpy.ops.leasedesk.check_out(note="x", hours=1)
    wait_for("a check-out refused plainly", lambda: shown().state == "not_running", limit=3.0)
    print("LEASEDESK-FIGURES " + json.dumps({"not_running_said_ms": took * 1000}))
    sys.exit(0)

figures = {}

# A free file: read-only, and said so.
hero = get_copy("scenes/hero.blend")
open_file(hero)
assert shown().state == "free", shown().state
assert shown().read_only and shown().version == 1, (shown().read_only, shown().version)
assert leasedesk.status_line(shown()) == "Not checked out (read-only)", leasedesk.status_line(shown())

# Saving it is refused by the file system, and explained with Check out offered.
bpy.ops.mesh.primitive_monkey_add()
try:
    bpy.ops.leasedesk.save()
    raise AssertionError("the add-on's Save went on with a read-only copy")
except RuntimeError as explained:  # the operator's error report
    assert "not checked out" in str(explained), explained
assert "not checked out" in shown().message and "check it out" in shown().message, shown().message
try:
    bpy.ops.wm.save_mainfile()
    raise AssertionError("Blender saved over a copy that is not checked out")
except RuntimeError as refused:
    assert "not writable" in str(refused), refused

# Check out (the lease held as the operator's answer arrives), save, check in.
bpy.ops.leasedesk.check_out(note="new sky", hours=2)
wait_for("checked out", lambda: shown().state == "yours")
# An event may say "yours" before the copy is made writable; the answer
# after it says writable.
wait_for("the copy writable", lambda: not shown().read_only)
assert shown().note == "new sky" and not shown().read_only, (shown().note, shown().read_only)
line = leasedesk.status_line(shown())
assert line.startswith("Checked out by you: 1 h 5") or line.startswith("Checked out by you: 2 h 00"), line
assert bpy.ops.leasedesk.save() == {"FINISHED"}
wait_for("the change seen", lambda: shown().modified)
bpy.ops.leasedesk.check_in(description="the new sky")
# The app's event (with the outcome, and no message) may come before the
# answer that brings the message: wait for both.
wait_for("checked in", lambda: shown().state == "free" and shown().version == 2 and shown().result)
wait_for("the check-in's message", lambda: "version 2" in shown().message)
assert shown().result == "committed", shown().result
assert "version 2" in shown().message, shown().message

# The time from check_out to the lease held, median of 20.
held = []
for _ in range(20):
    started = time.perf_counter()
    bpy.ops.leasedesk.check_out(note="timing", hours=1)
    wait_for("checked out", lambda: shown().state == "yours")
    held.append((time.perf_counter() - started) * 1000)
    bpy.ops.leasedesk.cancel()
    wait_for("cancelled", lambda: shown().state == "free")
figures["check_out_to_held_ms_median"] = statistics.median(held)

# Refreshing never holds the main thread: every entry point is timed.
leasedesk.main_thread_ms.clear()
for _ in range(20):
    bpy.ops.leasedesk.refresh()
    time.sleep(0.02)
figures["main_thread_ms_max"] = max(leasedesk.main_thread_ms)
assert figures["main_thread_ms_max"] < 16, figures

# Someone else's file: the holder and their note, read-only.
held_file = get_copy("scenes/held.blend")
open_file(held_file)
assert shown().state == "held" and shown().holder == "bob" and shown().note == "retouching", (shown().state, shown().holder, shown().note)
line = leasedesk.status_line(shown())
assert line.startswith("Held by bob until ") and line.endswith(": retouching (read-only)"), line
bpy.ops.leasedesk.check_out(note="mine?", hours=1)
wait_for("the refusal named", lambda: "bob has it" in shown().message)
assert shown().state == "held"

# Ask the holder.
bpy.ops.leasedesk.ask(message="may I have it for the render?")
wait_for("asked", lambda: shown().message.startswith("Asked"))

# A file outside the workspace.
elsewhere = os.path.join(outside, "elsewhere.blend")
bpy.ops.wm.save_as_mainfile(filepath=elsewhere)
wait_for("outside", lambda: shown().state == "outside")
assert leasedesk.status_line(shown()) == "Not in your Leasedesk workspace"

print("LEASEDESK-FIGURES " + json.dumps(figures))
