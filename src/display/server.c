/*
 * server.c - the PerfDisplay HTTP server (see server.h) on libmicrohttpd.
 * Sits at the very end of the flow: DIR/PerfDisplay/ -> browser.
 *
 * The listening socket is created here rather than by libmicrohttpd so that
 * a busy port or an address that is not on this machine comes back as a
 * clear error (MHD_start_daemon only returns NULL), and so that port 0 can
 * report the port the kernel chose.
 *
 * Slow clients (issue 11): a client that trickles header bytes holds a
 * connection until the idle timeout, which every byte resets.  So the
 * server takes up to CONNECTION_LIMIT connections (epoll, no FD_SETSIZE
 * ceiling; bounded by the descriptor limit), closes an idle one after
 * IDLE_TIMEOUT_S, and gives every request a deadline: its header must be
 * complete within the request deadline (REQUEST_DEADLINE_S by default) of
 * the connection's start or of the previous response, else a watcher
 * thread shuts the socket down.  Served on a network address, one client
 * address may also hold at most PER_IP_LIMIT connections (not on loopback,
 * where every local client, the user's browser too, is 127.0.0.1).
 */
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "../util/clock.h"
#include "../util/xalloc.h"

#define PER_IP_LIMIT 32
#define CONNECTION_LIMIT 1000
#define IDLE_TIMEOUT_S 10
#define REQUEST_DEADLINE_S 10.0

/* One open connection, for the request deadline.  Created and freed by
 * libmicrohttpd's connection notifications (its thread), read by the
 * watcher; all under the server's mutex.  libmicrohttpd announces the
 * close before it closes the socket, so a listed fd is still this
 * connection's. */
typedef struct conn {
	struct conn *prev, *next;
	int fd;
	int in_request;           /* header complete, response under way */
	double since;             /* start of the connection or of this request */
} conn;

/* The request's *req_cls when its raw URI holds an encoded NUL. */
static char bad_uri_mark;

struct pt_display_server {
	struct MHD_Daemon *mhd;
	char root[PATH_MAX];
	char url[128];
	int port;
	int loopback;
	pt_display_log_fn log;
	void *log_ctx;
	double deadline_s;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	conn *conns;
	pthread_t watcher;
	int watching, stopping;
};

static conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **ctx,
			  enum MHD_ConnectionNotificationCode what)
{
	pt_display_server *s = cls;
	conn *k = *ctx;

	if (what == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

		k = x_calloc(1, sizeof(*k));
		if (!k || !ci) {
			x_free(k);
			*ctx = NULL;
			return;
		}
		k->fd = ci->connect_fd;
		k->since = pt_clock_mono();
		pthread_mutex_lock(&s->mu);
		k->next = s->conns;
		if (s->conns)
			s->conns->prev = k;
		s->conns = k;
		pthread_mutex_unlock(&s->mu);
		*ctx = k;
		return;
	}
	if (!k)
		return;
	pthread_mutex_lock(&s->mu);
	if (k->prev)
		k->prev->next = k->next;
	else
		s->conns = k->next;
	if (k->next)
		k->next->prev = k->prev;
	pthread_mutex_unlock(&s->mu);
	x_free(k);
	*ctx = NULL;
}

/* A response was sent: the next request on the connection has its own
 * deadline. */
static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			 enum MHD_RequestTerminationCode why)
{
	pt_display_server *s = cls;
	conn *k = conn_of(c);

	(void)req_cls;
	(void)why;
	if (!k)
		return;
	pthread_mutex_lock(&s->mu);
	k->in_request = 0;
	k->since = pt_clock_mono();
	pthread_mutex_unlock(&s->mu);
}

/* Every quarter of a second: shut down the connections whose request has
 * not arrived whole within the deadline (libmicrohttpd then sees the end
 * of the stream and closes them in its own thread). */
static void *watch(void *arg)
{
	pt_display_server *s = arg;

	pthread_mutex_lock(&s->mu);
	while (!s->stopping) {
		struct timespec ts;
		double now = pt_clock_mono();

		for (conn *k = s->conns; k; k = k->next)
			if (!k->in_request && k->fd >= 0 && now - k->since > s->deadline_s) {
				shutdown(k->fd, SHUT_RDWR);
				k->fd = -1;
			}
		pt_clock_mono_deadline(&ts, 0.25);
		pthread_cond_timedwait(&s->cv, &s->mu, &ts);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

static const struct {
	const char *ext, *type;
} types[] = {
	{ ".html", "text/html; charset=utf-8" },
	{ ".htm", "text/html; charset=utf-8" },
	{ ".js", "text/javascript; charset=utf-8" },
	{ ".mjs", "text/javascript; charset=utf-8" },
	{ ".css", "text/css; charset=utf-8" },
	{ ".json", "application/json" },
	{ ".txt", "text/plain; charset=utf-8" },
	{ ".log", "text/plain; charset=utf-8" },
	{ ".md", "text/plain; charset=utf-8" },
	{ ".py", "text/plain; charset=utf-8" },
	{ ".csv", "text/csv; charset=utf-8" },
	{ ".svg", "image/svg+xml" },
	{ ".png", "image/png" },
	{ ".jpg", "image/jpeg" },
	{ ".jpeg", "image/jpeg" },
	{ ".gif", "image/gif" },
	{ ".ico", "image/x-icon" },
	{ ".wasm", "application/wasm" },
	{ ".gz", "application/gzip" },
	{ ".sqlite", "application/vnd.sqlite3" },
};

const char *pt_display_content_type(const char *path)
{
	const char *dot = path ? strrchr(path, '.') : NULL;
	const char *slash = path ? strrchr(path, '/') : NULL;
	size_t i;

	if (dot && (!slash || dot > slash))
		for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (!strcasecmp(dot, types[i].ext))
				return types[i].type;
	return "application/octet-stream";
}

/* 1 when a segment of the decoded path may name a file under the root.
 * Segments starting with '.' are refused: they cover "." and ".." and keep
 * hidden files (temporary files of atomic writes, .git) private. */
static int segment_ok(const char *s, size_t n)
{
	size_t i;

	if (n && s[0] == '.')
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

int pt_display_resolve(const char *root_real, const char *url_path, char *out, size_t cap)
{
	char cand[PATH_MAX + 64], real[PATH_MAX];
	const char *p, *q;
	size_t rl, ul;
	struct stat st;
	int dir_url;

	if (!root_real || !url_path || url_path[0] != '/' || !out || !cap)
		return 403;
	for (p = url_path; *p; p = q) {
		while (*p == '/')
			p++;
		for (q = p; *q && *q != '/'; q++)
			;
		if (!segment_ok(p, (size_t)(q - p)))
			return 403;
	}
	rl = strlen(root_real);
	ul = strlen(url_path);
	dir_url = url_path[ul - 1] == '/';
	if (rl + ul + sizeof("index.html") > sizeof(cand))
		return 404;
	memcpy(cand, root_real, rl);
	memcpy(cand + rl, url_path, ul + 1);
	if (dir_url)
		strcat(cand, "index.html");
	if (!realpath(cand, real))
		return errno == EACCES ? 403 : 404;
	/* Links may point anywhere: what counts is where the path ends up. */
	if (strncmp(real, root_real, rl) || (real[rl] != '/' && real[rl] != 0 && rl > 1))
		return 403;
	if (stat(real, &st))
		return 404;
	if (S_ISDIR(st.st_mode))
		return dir_url ? 404 : 301;
	if (!S_ISREG(st.st_mode))
		return 403;
	if (strlen(real) >= cap)
		return 404;
	strcpy(out, real);
	return 200;
}

static enum MHD_Result respond_text(struct MHD_Connection *c, unsigned status, const char *text,
				    const char *hname, const char *hval)
{
	struct MHD_Response *r;
	enum MHD_Result ok;

	r = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (hname)
		MHD_add_response_header(r, hname, hval);
	ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

/* Percent-encode a decoded path for a Location header (keeps '/'). */
static void encode_path(const char *in, char *out, size_t cap)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *in && o + 4 < cap; in++) {
		unsigned char c = (unsigned char)*in;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("/-._~", c)) {
			out[o++] = (char)c;
		} else {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_size, void **req_cls)
{
	pt_display_server *s = cls;
	char path[PATH_MAX], loc[PATH_MAX];
	struct MHD_Response *r;
	struct stat st;
	enum MHD_Result ok;
	int status, fd;

	{
		conn *k = conn_of(c);

		/* The header is whole: the deadline is met. */
		if (k) {
			pthread_mutex_lock(&s->mu);
			k->in_request = 1;
			pthread_mutex_unlock(&s->mu);
		}
	}
	if (*req_cls == &bad_uri_mark) {
		status = 400;
		ok = respond_text(c, 400, "400 bad request: NUL in the URL\n", NULL, NULL);
		goto out;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
		status = 405;
		ok = respond_text(c, 405, "405 method not allowed: this server only reads files\n",
				  MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
		goto out;
	}
	status = pt_display_resolve(s->root, url, path, sizeof(path));
	if (status == 301) {
		encode_path(url, loc, sizeof(loc) - 1);
		strcat(loc, "/");
		ok = respond_text(c, 301, "301 moved\n", MHD_HTTP_HEADER_LOCATION, loc);
		goto out;
	}
	if (status == 403) {
		ok = respond_text(c, 403, "403 forbidden: only files under the served folder are readable\n",
				  NULL, NULL);
		goto out;
	}
	if (status != 200) {
		status = 404;
		ok = respond_text(c, 404, "404 not found\n", NULL, NULL);
		goto out;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		status = 404;
		ok = respond_text(c, 404, "404 not found\n", NULL, NULL);
		goto out;
	}
	/* libmicrohttpd owns fd from here and closes it with the response. */
	r = MHD_create_response_from_fd64((uint64_t)st.st_size, fd);
	if (!r) {
		close(fd);
		status = 500;
		ok = respond_text(c, 500, "500 internal error\n", NULL, NULL);
		goto out;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, pt_display_content_type(path));
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	ok = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
out:
	if (s->log)
		s->log(s->log_ctx, method, url, status);
	return ok;
}

/* Sees the URI before libmicrohttpd decodes it: a "%00" would cut the
 * decoded path short (serving the file named before it), so the request
 * is marked and answered 400.  The return value becomes *req_cls. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	(void)cls;
	(void)c;
	for (const char *p = uri; p && (p = strchr(p, '%')); p++)
		if (p[1] == '0' && p[2] == '0')
			return &bad_uri_mark;
	return NULL;
}

/* Connections we may hold: CONNECTION_LIMIT, less where the descriptor
 * limit is lower (a few kept for files being served and the listener). */
static unsigned connection_limit(void)
{
	struct rlimit rl;
	unsigned lim = CONNECTION_LIMIT;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur / 2 < lim)
		lim = rl.rlim_cur / 2 > 64 ? (unsigned)(rl.rlim_cur / 2) : 64;
	return lim;
}

static int is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return 0;
}

/* Create, bind and listen; -1 with err filled. */
int pt_display_listen(const char *host, int port, pt_display_listener *s, pt_error *err)
{
	struct addrinfo hints, *ai = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char portstr[16], addr[INET6_ADDRSTRLEN];
	int fd = -1, one = 1, rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	snprintf(portstr, sizeof(portstr), "%d", port);
	rc = getaddrinfo(host, portstr, &hints, &ai);
	if (rc || !ai) {
		pt_error_set(err, PT_EINVAL, -1, "cannot resolve host '%s': %s", host, gai_strerror(rc));
		goto fail;
	}
	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0) {
		pt_error_set(err, PT_EIO, -1, "socket: %s", strerror(errno));
		goto fail;
	}
	/* SO_REUSEADDR lets a restart reuse a port in TIME_WAIT; on Linux it
	 * does not allow two listeners on one port, so "in use" still fails. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ai->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen)) {
		int e = errno;
		if (e == EADDRINUSE)
			pt_error_set(err, PT_EIO, -1, "port %d on %s is already in use "
				     "(another server is running there; choose a free one)", port, host);
		else if (e == EACCES)
			pt_error_set(err, PT_EIO, -1, "no permission to listen on port %d of %s "
				     "(ports below 1024 need root)", port, host);
		else if (e == EADDRNOTAVAIL)
			pt_error_set(err, PT_EIO, -1, "'%s' is not an address of this machine", host);
		else
			pt_error_set(err, PT_EIO, -1, "cannot listen on %s port %d: %s", host, port, strerror(e));
		goto fail;
	}
	if (listen(fd, 64)) {
		pt_error_set(err, PT_EIO, -1, "listen: %s", strerror(errno));
		goto fail;
	}
	if (getsockname(fd, (struct sockaddr *)&ss, &sl)) {
		pt_error_set(err, PT_EIO, -1, "getsockname: %s", strerror(errno));
		goto fail;
	}
	s->loopback = is_loopback((struct sockaddr *)&ss);
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		s->port = ntohs(in->sin_port);
		if (in->sin_addr.s_addr == htonl(INADDR_ANY))
			snprintf(addr, sizeof(addr), "127.0.0.1");
		else
			inet_ntop(AF_INET, &in->sin_addr, addr, sizeof(addr));
		snprintf(s->url, sizeof(s->url), "http://%s:%d/", addr, s->port);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
		s->port = ntohs(in6->sin6_port);
		if (IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr))
			snprintf(addr, sizeof(addr), "::1");
		else
			inet_ntop(AF_INET6, &in6->sin6_addr, addr, sizeof(addr));
		snprintf(s->url, sizeof(s->url), "http://[%s]:%d/", addr, s->port);
	}
	freeaddrinfo(ai);
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	if (ai)
		freeaddrinfo(ai);
	return -1;
}

pt_display_server *pt_display_start(const char *root, const pt_display_options *opt, pt_error *err)
{
	pt_display_server *s = NULL;
	const char *host = opt && opt->host && *opt->host ? opt->host : PT_DISPLAY_DEFAULT_HOST;
	int port = opt ? opt->port : PT_DISPLAY_DEFAULT_PORT;
	unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD;
	struct stat st;
	pt_display_listener l;
	int fd = -1;

	if (!root) {
		pt_error_set(err, PT_EINVAL, -1, "no folder to serve");
		goto fail;
	}
	if (port < 0 || port > 65535) {
		pt_error_set(err, PT_EINVAL, -1, "port %d is out of range (0-65535)", port);
		goto fail;
	}
	s = x_calloc(1, sizeof(*s));
	if (!s) {
		pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		goto fail;
	}
	if (!realpath(root, s->root) || stat(s->root, &st)) {
		pt_error_subject(err, root);
		pt_error_set(err, PT_EIO, -1, "cannot serve: %s", strerror(errno));
		goto fail;
	}
	if (!S_ISDIR(st.st_mode)) {
		pt_error_subject(err, root);
		pt_error_set(err, PT_EIO, -1, "not a folder");
		goto fail;
	}
	s->log = opt ? opt->log : NULL;
	s->log_ctx = opt ? opt->log_ctx : NULL;
	s->deadline_s = opt && opt->request_deadline_s > 0 ? opt->request_deadline_s
							   : REQUEST_DEADLINE_S;
	pthread_mutex_init(&s->mu, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&s->cv, &ca);
		pthread_condattr_destroy(&ca);
	}
	fd = pt_display_listen(host, port, &l, err);
	if (fd < 0)
		goto fail;
	s->port = l.port;
	s->loopback = l.loopback;
	snprintf(s->url, sizeof(s->url), "%s", l.url);
	if (strchr(s->url, '['))
		flags |= MHD_USE_IPv6;
	s->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s,
				  MHD_OPTION_LISTEN_SOCKET, fd,
				  MHD_OPTION_CONNECTION_LIMIT, connection_limit(),
				  MHD_OPTION_PER_IP_CONNECTION_LIMIT,
				  (unsigned)(s->loopback ? 0 : PER_IP_LIMIT),
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT_S,
				  MHD_OPTION_URI_LOG_CALLBACK, on_uri, (void *)NULL,
				  MHD_OPTION_NOTIFY_CONNECTION, on_connection, (void *)s,
				  MHD_OPTION_NOTIFY_COMPLETED, on_completed, (void *)s,
				  MHD_OPTION_END);
	if (!s->mhd) {
		pt_error_set(err, PT_EIO, -1, "cannot start the http server (libmicrohttpd)");
		goto fail;
	}
	if (pthread_create(&s->watcher, NULL, watch, s) != 0) {
		pt_error_set(err, PT_EIO, -1, "cannot start the http server's watcher thread");
		MHD_stop_daemon(s->mhd);
		fd = -1; /* closed by MHD_stop_daemon */
		goto fail;
	}
	s->watching = 1;
	return s;
fail:
	if (fd >= 0)
		close(fd);
	if (s) {
		pthread_cond_destroy(&s->cv);
		pthread_mutex_destroy(&s->mu);
	}
	x_free(s);
	return NULL;
}

int pt_display_port(const pt_display_server *s)
{
	return s ? s->port : -1;
}

const char *pt_display_url(const pt_display_server *s)
{
	return s ? s->url : "";
}

int pt_display_is_loopback(const pt_display_server *s)
{
	return s ? s->loopback : 0;
}

void pt_display_stop(pt_display_server *s)
{
	if (!s)
		return;
	/* The watcher first: the connections it looks at go with the daemon. */
	if (s->watching) {
		pthread_mutex_lock(&s->mu);
		s->stopping = 1;
		pthread_cond_signal(&s->cv);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->watcher, NULL);
	}
	/* MHD_stop_daemon waits for its thread and closes the listen socket. */
	if (s->mhd)
		MHD_stop_daemon(s->mhd);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	x_free(s);
}
