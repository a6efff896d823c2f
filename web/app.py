#!/usr/bin/env python3
"""PerfDisplay: serve this folder (index.html, report.json) on http://127.0.0.1:5000/.

Written next to index.html by PerfTracker so that a copied PerfDisplay folder
can be opened on a laptop with `python3 app.py` (standard library only), as
the PAI guide instructs.  The page also opens directly from the file
(index.html embeds the report); `perftracker display DIR` serves the same way.

usage: python3 app.py [--host 127.0.0.1] [--port 5000]
"""
import argparse
import functools
import http.server
import os
import signal
import socket
import sys
import urllib.parse

HERE = os.path.dirname(os.path.realpath(__file__))


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = dict(http.server.SimpleHTTPRequestHandler.extensions_map)
    extensions_map.update({
        ".html": "text/html; charset=utf-8",
        ".js": "text/javascript; charset=utf-8",
        ".css": "text/css; charset=utf-8",
        ".json": "application/json",
        ".txt": "text/plain; charset=utf-8",
        ".py": "text/plain; charset=utf-8",
    })

    def list_directory(self, path):
        # Only files are served; no directory listings.
        self.send_error(404, "File not found")
        return None

    def end_headers(self):
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def send_head(self):
        # The same policy as `perftracker display` (src/display/server.c): a
        # NUL in the URL is 400; a segment starting with "." (".", "..",
        # hidden files such as temporary files of atomic writes, .git) or
        # holding a control character is 403.
        path = urllib.parse.unquote(self.path.split("?", 1)[0].split("#", 1)[0])
        if "\0" in path:
            self.send_error(400, "Bad request: NUL in the URL")
            return None
        for seg in path.split("/"):
            if seg.startswith(".") or any(ord(c) < 0x20 or ord(c) == 0x7F for c in seg):
                self.send_error(403, "Forbidden")
                return None
        # Also refuse any path that resolves (through links) outside this folder.
        real = os.path.realpath(self.translate_path(self.path))
        if real != HERE and not real.startswith(HERE + os.sep):
            self.send_error(403, "Forbidden")
            return None
        return super().send_head()

def main():
    ap = argparse.ArgumentParser(description="Serve this PerfDisplay folder.")
    ap.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, this machine only)")
    ap.add_argument("--port", type=int, default=5000, help="port (default 5000)")
    a = ap.parse_args()
    handler = functools.partial(Handler, directory=HERE)
    cls = http.server.ThreadingHTTPServer
    if ":" in a.host:
        cls = type("V6Server", (http.server.ThreadingHTTPServer,), {"address_family": socket.AF_INET6})
    try:
        srv = cls((a.host, a.port), handler)
    except OSError as e:
        sys.stderr.write("app.py: cannot listen on %s port %d: %s\n" % (a.host, a.port, e.strerror or e))
        return 1
    # Ctrl-C stops it even when started with SIGINT ignored (a background
    # job of a script, nohup &): Python leaves an inherited SIG_IGN alone.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    host = "[%s]" % a.host if ":" in a.host else a.host
    print("PerfDisplay: open http://%s:%d/ in a web browser (Ctrl-C to stop)" % (host, srv.server_address[1]),
          flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv.server_close()
    print("PerfDisplay: stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
