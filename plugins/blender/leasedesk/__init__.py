"""Leasedesk for Blender: who holds the open file and until when, and check
out, extend, check in (saving first) and ask, from inside Blender.

The Leasedesk app does the work through its local API (client.py); this
add-on never holds a token. Nothing here blocks Blender: calls run on one
worker thread with a 2 s limit, and the app's events, not polling, bring
others' changes. The read-only copy is the real lock: Blender itself
refuses to save over it, and this add-on says why and offers Check out.
"""

bl_info = {
    "name": "Leasedesk",
    "author": "Leasedesk",
    "version": (0, 1, 0),
    "blender": (3, 4, 0),
    "location": "3D View > Sidebar > Leasedesk, and the status bar",
    "description": "Check files out and in with Leasedesk without leaving Blender",
    "category": "System",
}

import os
import queue
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone

import bpy
from bpy.app.handlers import persistent

from . import client

# --- main-thread time, measured -------------------------------------------
# Every entry point Blender calls on its main thread is timed, so the tests
# can hold the add-on to its promise of never blocking Blender (16 ms).
main_thread_ms = []


def _took(started):
    main_thread_ms.append((time.perf_counter() - started) * 1000.0)
    del main_thread_ms[:-1000]


def timed(function):
    """For handlers and timers, which Blender calls with any arguments."""

    def wrapper(*args):
        started = time.perf_counter()
        try:
            return function(*args)
        finally:
            _took(started)

    wrapper.__name__ = function.__name__
    return wrapper


def timed_method(function):
    """For execute and draw, which Blender checks take (self, context)."""

    def wrapper(self, context):
        started = time.perf_counter()
        try:
            return function(self, context)
        finally:
            _took(started)

    wrapper.__name__ = function.__name__
    return wrapper


# --- the state shown ------------------------------------------------------


class LeasedeskState(bpy.types.PropertyGroup):
    state: bpy.props.StringProperty(name="State", default="unknown")
    path: bpy.props.StringProperty(name="Path")
    repo_path: bpy.props.StringProperty(name="Path in Leasedesk")
    holder: bpy.props.StringProperty(name="Holder")
    note: bpy.props.StringProperty(name="Note")
    expires_at: bpy.props.StringProperty(name="Expires at")
    version: bpy.props.IntProperty(name="Version")
    read_only: bpy.props.BoolProperty(name="Read-only")
    modified: bpy.props.BoolProperty(name="Modified")
    message: bpy.props.StringProperty(name="Message")
    # The last check-in's outcome: committed, unchanged or proposal.
    result: bpy.props.StringProperty(name="Result")


def _expires(text):
    if not text:
        return None
    text = text.replace("Z", "+00:00")
    if "." in text:  # Python before 3.11 takes at most 6 digits of a second
        head, rest = text.split(".", 1)
        digits = len(rest) - len(rest.lstrip("0123456789"))
        text = head + "." + rest[:digits][:6].ljust(6, "0") + rest[digits:]
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def status_line(state):
    """The status bar's words for `state` (docs/API.md's)."""
    kind = state.state
    if kind == "not_running":
        return "Leasedesk is not running"
    if kind == "outside":
        return "Not in your Leasedesk workspace"
    if kind == "free":
        return "Not checked out (read-only)" if state.read_only else "Not checked out"
    expires = _expires(state.expires_at)
    if kind == "yours":
        if expires is None:
            return "Checked out by you"
        left = max(0, int((expires - datetime.now(timezone.utc)).total_seconds() // 60))
        return "Checked out by you: %d h %02d min left" % (left // 60, left % 60)
    if kind == "held":
        until = expires.astimezone().strftime("%H:%M") if expires else "?"
        line = "Held by %s until %s" % (state.holder, until)
        if state.note:
            line += ": " + state.note
        return line + (" (read-only)" if state.read_only else "")
    if kind == "unknown":
        return "Leasedesk: save the file to see its state"
    return "Leasedesk: " + kind


def _apply(answer, message=None):
    """Sets window_manager.leasedesk from a FileState (a dict), or marks the
    app not running (answer None)."""
    wm = _window_manager()
    if wm is None:
        return
    shown = wm.leasedesk
    if answer is None:
        shown.state = "not_running"
        shown.message = message or "Leasedesk is not running: start it to check files out."
    else:
        # The state last: in the background a script may be reading as the
        # worker writes, and waits on the state.
        if message is not None:
            shown.message = message
        shown.path = answer.get("path") or ""
        shown.repo_path = answer.get("repo_path") or ""
        shown.holder = answer.get("holder") or ""
        shown.note = answer.get("note") or ""
        shown.expires_at = answer.get("expires_at") or ""
        shown.version = answer.get("version") or 0
        shown.read_only = bool(answer.get("read_only"))
        shown.modified = bool(answer.get("modified"))
        result = answer.get("result")
        if isinstance(result, dict):
            shown.result = result.get("outcome", "")
        shown.state = answer.get("state") or "unknown"
    for window in wm.windows:
        for area in window.screen.areas:
            area.tag_redraw()


# --- the worker: every call off the main thread ---------------------------

_jobs = queue.Queue()
_results = queue.Queue()
_stopping = threading.Event()


def _deliver(answer, message=None):
    """Hands a result to Blender: straight from the worker in the background
    (timers never fire while a script runs there), else through the main
    thread's timer."""
    if bpy.app.background:
        _apply(answer, message)
    else:
        _results.put((answer, message))


def _current_path():
    return bpy.data.filepath


def _same_file(a, b):
    return bool(a) and bool(b) and os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


def _work():
    while not _stopping.is_set():
        try:
            job, path, done = _jobs.get(timeout=0.5)
        except queue.Empty:
            continue
        try:
            answer = job()
            _deliver(answer, done(answer) if done else "")
        except client.NotRunning:
            _deliver(None)
        except client.Refused as refused:
            _refused(refused, path)
        except Exception as error:  # never let the worker die
            _deliver_message("Leasedesk: %s" % error)


def _refused(refused, path):
    text = str(refused)
    text = text[:1].upper() + text[1:]
    if refused.code == "artifact_busy":
        lease = refused.body.get("lease") or {}
        who = (lease.get("participant") or "someone").split(":")[-1]
        text = "%s has it: ask them for it, or wait until it is free." % who
    _deliver_message(text)
    # What the refusal means for the file: look at it again.
    if path:
        try:
            _deliver(client.file_state(path), None)
        except (client.NotRunning, client.Refused):
            pass


def _deliver_message(text):
    if bpy.app.background:
        _set_message(text)
    else:
        _results.put(("message", text))


def _window_manager():
    """The one window manager, found through bpy.data (the worker has no context)."""
    managers = bpy.data.window_managers
    return managers[0] if len(managers) else None


def _set_message(text):
    wm = _window_manager()
    if wm is not None:
        wm.leasedesk.message = text


def submit(job, path, done=None):
    """Runs job() on the worker; `done(answer)` names the message shown after."""
    _jobs.put((job, path, done))


@timed
def _drain():
    """The main thread's share: applies what the worker got (UI only)."""
    while True:
        try:
            answer, message = _results.get_nowait()
        except queue.Empty:
            break
        if answer == "message":
            _set_message(message)
        else:
            _apply(answer, message)
    return 0.1


def refresh(path=None):
    path = path or _current_path()
    if not path:
        # Called from the worker's threads too: through the main thread.
        _deliver({"state": "unknown"}, "")
        return
    submit(lambda: client.file_state(path), path, lambda _: None)


# --- the app's events -----------------------------------------------------


def _follow_events():
    """Follows the app's `state` events for as long as the add-on is on,
    trying again each 2 s while the app is away, and looking at the open
    file again when it is back."""
    away = False

    def on_state(state):
        if _same_file(state.get("path"), _current_path()):
            _deliver(state, None)

    def on_open():
        nonlocal away
        if away:
            refresh()
        away = False

    while not _stopping.is_set():
        try:
            client.follow(on_state, _stopping.is_set, on_open)
        except client.NotRunning:
            if not away and _current_path():
                _deliver(None)
            away = True
        _stopping.wait(2.0)


# --- operators --------------------------------------------------------------


class _OnTheOpenFile:
    """An operator on the open file: `work(path)` gives the call for the
    worker and what to say after it; the main thread only queues it."""

    @timed_method
    def execute(self, context):
        if not bpy.data.filepath:
            self.report({"WARNING"}, "Save the file in your Leasedesk folder first")
            return {"CANCELLED"}
        self.before()
        path = bpy.data.filepath
        call, said = self.work(path)
        submit(call, path, said)
        return {"FINISHED"}

    def before(self):
        pass


class _AskedFirst:
    """Shows the operator's fields (a note, a description) before it runs."""

    def invoke(self, context, event):
        return context.window_manager.invoke_props_dialog(self)


class LEASEDESK_OT_check_out(_AskedFirst, _OnTheOpenFile, bpy.types.Operator):
    """Check this file out in Leasedesk, so that you alone may save it"""

    bl_idname = "leasedesk.check_out"
    bl_label = "Check out"
    note: bpy.props.StringProperty(name="Note", description="What you are doing, for the others")
    hours: bpy.props.FloatProperty(name="Hours", default=8.0, min=0.25, max=24.0 * 30)

    def work(self, path):
        note, hours = self.note, self.hours
        return (lambda: client.check_out(path, note, hours)), (lambda _: "Checked out: you may save.")


class LEASEDESK_OT_check_in(_AskedFirst, _OnTheOpenFile, bpy.types.Operator):
    """Save, then check this file in: its version goes to Leasedesk and the file is free again"""

    bl_idname = "leasedesk.check_in"
    bl_label = "Check in"
    description: bpy.props.StringProperty(name="Description", description="What changed")

    def before(self):
        if bpy.data.is_dirty:
            bpy.ops.wm.save_mainfile()

    def work(self, path):
        description = self.description

        def said(answer):
            outcome = (answer.get("result") or {}).get("outcome")
            if outcome == "committed":
                return "Checked in as version %s." % answer.get("version")
            if outcome == "proposal":
                return "Your lease had ended and the file moved on: your work is a proposal in Leasedesk."
            return "Checked in: nothing had changed."

        return (lambda: client.check_in(path, description)), said


class LEASEDESK_OT_extend(_OnTheOpenFile, bpy.types.Operator):
    """Extend your lease on this file"""

    bl_idname = "leasedesk.extend"
    bl_label = "Extend"

    def work(self, path):
        return (lambda: client.extend(path)), (lambda _: "Extended.")


class LEASEDESK_OT_cancel(_OnTheOpenFile, bpy.types.Operator):
    """Give the file back unchanged (Leasedesk keeps your changes beside it)"""

    bl_idname = "leasedesk.cancel"
    bl_label = "Cancel check-out"

    def work(self, path):
        return (lambda: client.cancel(path)), (lambda _: "Check-out cancelled.")


class LEASEDESK_OT_ask(_AskedFirst, _OnTheOpenFile, bpy.types.Operator):
    """Ask the holder of this file to let you have it"""

    bl_idname = "leasedesk.ask"
    bl_label = "Ask for it"
    message: bpy.props.StringProperty(name="Message")

    def work(self, path):
        message = self.message
        return (lambda: client.ask(path, message)), (lambda _: "Asked: Leasedesk tells you when it is free.")


class LEASEDESK_OT_refresh(bpy.types.Operator):
    """Look at this file's state in Leasedesk again"""

    bl_idname = "leasedesk.refresh"
    bl_label = "Refresh"

    @timed_method
    def execute(self, context):
        refresh()
        return {"FINISHED"}


def app_command():
    """How to start the app here: LEASEDESK_APP_BIN, or where it installs."""
    given = os.environ.get("LEASEDESK_APP_BIN")
    if given:
        return [given]
    if sys.platform == "darwin":
        return ["open", "-a", "Leasedesk"]
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA", "")
        for folder in (os.path.join(local, "Leasedesk"), os.path.join(local, "Programs", "Leasedesk")):
            exe = os.path.join(folder, "leasedesk-app.exe")
            if os.path.exists(exe):
                return [exe]
        return None
    import shutil

    found = shutil.which("leasedesk-app")
    return [found] if found else None


class LEASEDESK_OT_open_app(bpy.types.Operator):
    """Open this file in Leasedesk (which starts if it is not running)"""

    bl_idname = "leasedesk.open_app"
    bl_label = "Open in Leasedesk"

    @timed_method
    def execute(self, context):
        command = app_command()
        if command is None:
            self.report({"ERROR"}, "Leasedesk is not installed here: install the app first")
            return {"CANCELLED"}
        # A running app shows its window, on this file's detail; otherwise it
        # starts there. macOS' `open -a` only brings the window.
        if bpy.data.filepath and sys.platform != "darwin":
            command = command + [bpy.data.filepath]
        subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        refresh_later()
        return {"FINISHED"}


def refresh_later():
    def again():
        time.sleep(3.0)
        refresh()

    threading.Thread(target=again, daemon=True).start()


class LEASEDESK_OT_save(bpy.types.Operator):
    """Save, or say why the file cannot be saved and offer Check out"""

    bl_idname = "leasedesk.save"
    bl_label = "Save"

    @timed_method
    def execute(self, context):
        path = bpy.data.filepath
        if path and os.path.exists(path) and not os.access(path, os.W_OK):
            explained = explain_read_only(context.window_manager.leasedesk)
            _set_message(explained)
            self.report({"ERROR"}, explained)
            if not bpy.app.background:
                context.window_manager.popup_menu(_offer_check_out, title="Cannot save", icon="LOCKED")
            return {"CANCELLED"}
        if not path:
            return bpy.ops.wm.save_as_mainfile("INVOKE_DEFAULT")
        return bpy.ops.wm.save_mainfile()


def explain_read_only(shown):
    if shown.state == "held":
        return "%s has this file checked out, so your copy is read-only: ask them for it." % shown.holder
    if shown.state == "outside":
        return "This file is read-only, and not in your Leasedesk workspace."
    return "This copy is read-only because it is not checked out: check it out, then save."


def _offer_check_out(menu, context):
    layout = menu.layout
    layout.label(text=context.window_manager.leasedesk.message)
    if context.window_manager.leasedesk.state == "held":
        layout.operator("leasedesk.ask", icon="QUESTION")
    else:
        layout.operator("leasedesk.check_out", icon="LOCKED")


# --- where it is shown ----------------------------------------------------


class LEASEDESK_PT_panel(bpy.types.Panel):
    bl_label = "Leasedesk"
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Leasedesk"

    @timed_method
    def draw(self, context):
        shown = context.window_manager.leasedesk
        layout = self.layout
        layout.label(text=status_line(shown))
        if shown.message:
            layout.label(text=shown.message)
        column = layout.column(align=True)
        if shown.state == "free":
            column.operator("leasedesk.check_out", icon="LOCKED")
        elif shown.state == "yours":
            column.operator("leasedesk.check_in", icon="EXPORT")
            column.operator("leasedesk.extend", icon="TIME")
            column.operator("leasedesk.cancel", icon="CANCEL")
        elif shown.state == "held":
            column.operator("leasedesk.ask", icon="QUESTION")
        column.operator("leasedesk.refresh", icon="FILE_REFRESH")
        column.operator("leasedesk.open_app", icon="WINDOW")


@timed_method
def draw_status(self, context):
    self.layout.label(text=status_line(context.window_manager.leasedesk))


@persistent
@timed
def on_load(*args):
    refresh()


@persistent
@timed
def on_save(*args):
    refresh()


CLASSES = (
    LeasedeskState,
    LEASEDESK_OT_check_out,
    LEASEDESK_OT_check_in,
    LEASEDESK_OT_extend,
    LEASEDESK_OT_cancel,
    LEASEDESK_OT_ask,
    LEASEDESK_OT_refresh,
    LEASEDESK_OT_open_app,
    LEASEDESK_OT_save,
    LEASEDESK_PT_panel,
)

_keymaps = []
_threads = []


def register():
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.WindowManager.leasedesk = bpy.props.PointerProperty(type=LeasedeskState)
    bpy.types.STATUSBAR_HT_header.append(draw_status)
    bpy.app.handlers.load_post.append(on_load)
    bpy.app.handlers.save_post.append(on_save)
    # Ctrl+S (Cmd+S) goes through the add-on, which explains a refused save.
    keyconfig = bpy.context.window_manager.keyconfigs.addon
    if keyconfig is not None:
        keymap = keyconfig.keymaps.new(name="Window", space_type="EMPTY")
        item = keymap.keymap_items.new("leasedesk.save", "S", "PRESS", ctrl=sys.platform != "darwin", oskey=sys.platform == "darwin")
        _keymaps.append((keymap, item))
    _stopping.clear()
    for target in (_work, _follow_events):
        thread = threading.Thread(target=target, name="leasedesk " + target.__name__, daemon=True)
        thread.start()
        _threads.append(thread)
    if not bpy.app.background:
        bpy.app.timers.register(_drain, first_interval=0.1, persistent=True)


def unregister():
    _stopping.set()
    if bpy.app.timers.is_registered(_drain):
        bpy.app.timers.unregister(_drain)
    for keymap, item in _keymaps:
        keymap.keymap_items.remove(item)
    _keymaps.clear()
    bpy.app.handlers.save_post.remove(on_save)
    bpy.app.handlers.load_post.remove(on_load)
    bpy.types.STATUSBAR_HT_header.remove(draw_status)
    del bpy.types.WindowManager.leasedesk
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
    _threads.clear()
