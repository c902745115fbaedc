"""The Leasedesk app's local API, as the add-on calls it (docs/PLUGINS.md).

Plain Python, no bpy: it finds the running app through its discovery file,
calls it with the secret of this start, and follows its `state` events.
Every call has a time limit; nothing here may wait on an app that is gone.
"""

import http.client
import json
import os
import sys

# The longest any call may take: the add-on never waits longer for the app.
CALL_LIMIT = 2.0


class NotRunning(Exception):
    """The app is not running (or not reachable): said plainly, not waited for."""


class Refused(Exception):
    """The app refused: its error code and message, as the HTTP API's."""

    def __init__(self, status, code, message, body):
        super().__init__(message)
        self.status = status
        self.code = code
        self.body = body


def data_folder():
    """The app's data folder: LEASEDESK_APP_HOME/data when set, as the app does."""
    home = os.environ.get("LEASEDESK_APP_HOME")
    if home:
        return os.path.join(home, "data")
    if sys.platform == "win32":
        return os.path.join(os.environ.get("LOCALAPPDATA", ""), "Leasedesk")
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Application Support/dev.leasedesk.desk")
    share = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
    return os.path.join(share, "dev.leasedesk.desk")


def discover():
    """(port, secret) of the running app, read anew each time: each start has its own."""
    path = os.path.join(data_folder(), "plugin-api.json")
    try:
        with open(path, "rb") as file:
            found = json.loads(file.read(64 * 1024))
        return int(found["port"]), str(found["secret"])
    except (OSError, ValueError, KeyError, TypeError):
        raise NotRunning("Leasedesk is not running") from None


def call(method, path, body=None, timeout=CALL_LIMIT):
    """One request; its JSON answer, or Refused, or NotRunning."""
    port, secret = discover()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {"Authorization": "Bearer " + secret, "Host": "127.0.0.1:%d" % port}
    payload = None
    if body is not None:
        payload = json.dumps(body).encode("utf-8")
        headers["Content-Type"] = "application/json"
    try:
        connection.request(method, path, body=payload, headers=headers)
        response = connection.getresponse()
        answer = json.loads(response.read(1 << 20) or b"null")
    except (OSError, http.client.HTTPException, ValueError):
        raise NotRunning("Leasedesk is not running") from None
    finally:
        connection.close()
    if response.status != 200:
        answer = answer if isinstance(answer, dict) else {}
        raise Refused(
            response.status,
            answer.get("error", "unknown"),
            answer.get("message", "Leasedesk refused"),
            answer,
        )
    return answer


def quote(text):
    from urllib.parse import quote as url_quote

    return url_quote(text, safe="")


def file_state(local_path):
    return call("GET", "/files?path=" + quote(local_path))


def check_out(local_path, note="", hours=None):
    body = {"path": local_path, "note": note or None}
    if hours:
        body["hours"] = hours
    return call("POST", "/files/checkout", body)


def check_in(local_path, description=""):
    # A check-in uploads the file: it may take longer than a look.
    return call("POST", "/files/checkin", {"path": local_path, "description": description or None}, timeout=600)


def extend(local_path):
    return call("POST", "/files/extend", {"path": local_path})


def cancel(local_path):
    return call("POST", "/files/cancel", {"path": local_path})


def ask(local_path, message=""):
    return call("POST", "/files/ask", {"path": local_path, "message": message or None})


def follow(on_state, stop, on_open=lambda: None):
    """Reads the app's `state` events, giving each FileState to on_state,
    until the link breaks (NotRunning) or stop() is true; on_open() once
    the app answers. The app sends a comment at least every 15 s, so a dead
    link is found within 30."""
    port, secret = discover()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": "Bearer " + secret, "Host": "127.0.0.1:%d" % port}
    try:
        connection.request("GET", "/events", headers=headers)
        response = connection.getresponse()
        if response.status != 200:
            raise NotRunning("Leasedesk refused to be followed (%d)" % response.status)
        on_open()
        event, data = None, []
        while not stop():
            line = response.readline(1 << 20)
            if not line:
                break
            line = line.decode("utf-8", "replace").rstrip("\r\n")
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
            elif line == "":
                if event == "state" and data:
                    try:
                        on_state(json.loads("\n".join(data)))
                    except ValueError:
                        pass
                event, data = None, []
    except (OSError, http.client.HTTPException):
        pass
    finally:
        connection.close()
    raise NotRunning("Leasedesk is not running")
