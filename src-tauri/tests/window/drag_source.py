"""A window to drag files from, as a file manager is: it offers the files
given as arguments (text/uri-list) when a drag starts on it. It prints
"ready" once shown, at the position given by --at X,Y."""
import sys
from pathlib import Path

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, Gtk  # noqa: E402

x, y = (int(v) for v in sys.argv[1].split(","))
uris = [Path(p).resolve().as_uri() for p in sys.argv[2:]]

window = Gtk.Window(title="drag source")
window.set_default_size(140, 80)
window.move(x, y)
box = Gtk.EventBox()
box.add(Gtk.Label(label="drag me"))
window.add(box)
box.drag_source_set(Gdk.ModifierType.BUTTON1_MASK, [], Gdk.DragAction.COPY)
box.drag_source_add_uri_targets()
box.connect("drag-data-get", lambda _w, _c, data, _i, _t: data.set_uris(uris))
window.connect("destroy", Gtk.main_quit)
window.connect("map-event", lambda *_: print("ready", flush=True))
window.show_all()
Gtk.main()
