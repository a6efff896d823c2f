/*
 * server.h - the PerfDisplay HTTP server behind `perftracker display DIR`:
 * serves the files under one folder (index.html, report.json, ...) with
 * libmicrohttpd, read-only, GET and HEAD only.
 *
 * Flow: DIR/PerfDisplay/ (written by src/report and src/report/page.c)
 * --> this server --> a browser on the same machine (loopback by default).
 * Requests whose decoded path has a ".." or "." segment, a control byte, or
 * that resolve (through symbolic links) outside the root are refused with
 * 403; missing files get 404; other methods 405.  No directory listings.
 * The server runs its own thread; start/stop from one thread.  Never prints:
 * requests are reported through the optional log callback (called from the
 * server thread).
 */
#ifndef PT_DISPLAY_SERVER_H
#define PT_DISPLAY_SERVER_H

#include <stddef.h>

#include "../util/error.h"

#define PT_DISPLAY_DEFAULT_HOST "127.0.0.1"
#define PT_DISPLAY_DEFAULT_PORT 5000

typedef void (*pt_display_log_fn)(void *ctx, const char *method, const char *path, int status);

typedef struct pt_display_options {
	const char *host;       /* address or name to bind; NULL: 127.0.0.1 */
	int port;               /* 0: any free port (see pt_display_port) */
	pt_display_log_fn log;  /* NULL: no request log */
	void *log_ctx;
	double request_deadline_s; /* a request's header must be whole this long
	                              after the connection (or the previous
	                              response) began; 0: 10 s */
} pt_display_options;

typedef struct pt_display_server pt_display_server;

/* A listening socket (the page server's and the node agent's /metrics):
 * host resolved numerically or by name, port 0 for any free one. */
typedef struct pt_display_listener {
	int port;          /* the port it got */
	int loopback;      /* bound to a loopback address */
	char url[128];     /* "http://ADDR:PORT/" */
} pt_display_listener;

/* Create, bind (SO_REUSEADDR, O_CLOEXEC) and listen; the descriptor, or
 * -1 with err filled by a one-line reason (port in use, no permission,
 * not an address of this machine). */
int pt_display_listen(const char *host, int port, pt_display_listener *out, pt_error *err);

/* Serve the files under root (a directory).  Returns the running server or
 * NULL with err filled: PT_EIO for a root that is not a readable directory
 * or an address/port that cannot be bound (the message says "in use" for
 * EADDRINUSE), PT_EINVAL for a bad host or port. */
pt_display_server *pt_display_start(const char *root, const pt_display_options *opt, pt_error *err);

/* The bound port (useful with port 0) and the URL to open, e.g.
 * "http://127.0.0.1:5000/" (a wildcard bind is shown as 127.0.0.1). */
int pt_display_port(const pt_display_server *s);
const char *pt_display_url(const pt_display_server *s);
/* 1 when bound to a loopback address, else 0. */
int pt_display_is_loopback(const pt_display_server *s);

/* Stop serving, close the socket and free s (NULL is a no-op). */
void pt_display_stop(pt_display_server *s);

/* Map a decoded request path to a file under root_real (a realpath(3)
 * result): writes the file's path to out and returns 200, or returns 301
 * (a directory without the trailing slash), 403 (refused) or 404.  Pure
 * apart from stat/realpath; exported for the unit tests. */
int pt_display_resolve(const char *root_real, const char *url_path, char *out, size_t cap);

/* Content-Type for a file name by its extension (never NULL). */
const char *pt_display_content_type(const char *path);

#endif
