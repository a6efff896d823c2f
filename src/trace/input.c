/*
 * input.c - plain/gzip byte source for the trace readers (see input.h).
 *
 * First step of the flow: bytes of a raw trace (file or memory) become the
 * uncompressed stream that src/trace/kineto.c parses chunk by chunk.  gzip
 * is recognised by its magic bytes, not the file name, and inflated with
 * zlib's streaming API so a multi-GB .json.gz never sits in memory.
 */
#include "input.h"
#include "../util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define ZBUF_SIZE ((size_t)256 << 10)

struct pt_input {
	int fd;                    /* -1 for memory input */
	const unsigned char *mem;  /* memory input */
	size_t memlen, mempos;
	int probed;                /* magic bytes looked at */
	int gz;                    /* gzip stream */
	int zinit, zend, cut;      /* inflate initialised / stream ended / cut off */
	z_stream z;
	unsigned char *zbuf;       /* compressed bytes read from fd (file input) */
	unsigned char head[2];     /* first bytes of a plain file read while probing */
	size_t nhead, headpos;
	int eof;                   /* no more raw bytes */
	uint64_t delivered;
	/* An inflate error found after some output: the output goes first,
	 * the error on the next call, so that where the caller stops does
	 * not depend on how big its reads are. */
	int pending;
	pt_error perr;
};

pt_input *pt_input_open_file(const char *path, pt_error *err)
{
	pt_input *in = NULL;
	struct stat stt;
	int fd;

	pt_error_subject(err, path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pt_error_set(err, PT_EIO, -1, "cannot open: %s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &stt) == 0 && S_ISDIR(stt.st_mode)) {
		pt_error_set(err, PT_EIO, -1, "is a directory");
		close(fd);
		return NULL;
	}
	in = x_calloc(1, sizeof(*in));
	if (!in) {
		pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		close(fd);
		return NULL;
	}
	in->fd = fd;
	return in;
}

pt_input *pt_input_open_mem(const void *buf, size_t len, pt_error *err)
{
	pt_input *in = x_calloc(1, sizeof(*in));

	if (!in) {
		pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		return NULL;
	}
	in->fd = -1;
	in->mem = buf;
	in->memlen = buf ? len : 0;
	return in;
}

void pt_input_close(pt_input *in)
{
	if (!in)
		return;
	if (in->zinit)
		inflateEnd(&in->z);
	x_free(in->zbuf);
	if (in->fd >= 0)
		close(in->fd);
	x_free(in);
}

/* Raw (possibly compressed) bytes from the file or memory. */
static ssize_t raw_read(pt_input *in, void *dst, size_t cap, pt_error *err)
{
	ssize_t r;

	if (in->fd < 0) {
		size_t n = in->memlen - in->mempos;
		if (n > cap)
			n = cap;
		memcpy(dst, in->mem + in->mempos, n);
		in->mempos += n;
		return (ssize_t)n;
	}
	do {
		r = read(in->fd, dst, cap);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		pt_error_set(err, PT_EIO, -1, "read failed: %s", strerror(errno));
	return r;
}

/* Look at the first two bytes to decide plain or gzip. */
static int probe(pt_input *in, pt_error *err)
{
	in->probed = 1;
	if (in->fd < 0) {
		in->gz = in->memlen >= 2 && in->mem[0] == 0x1f && in->mem[1] == 0x8b;
	} else {
		while (in->nhead < 2) {
			ssize_t r = raw_read(in, in->head + in->nhead, 2 - in->nhead, err);
			if (r < 0)
				return -1;
			if (r == 0)
				break;
			in->nhead += (size_t)r;
		}
		in->gz = in->nhead == 2 && in->head[0] == 0x1f && in->head[1] == 0x8b;
	}
	if (!in->gz)
		return 0;
	if (inflateInit2(&in->z, 15 + 16) != Z_OK) {
		pt_error_set(err, PT_ENOMEM, -1, "cannot initialise zlib");
		return -1;
	}
	in->zinit = 1;
	if (in->fd >= 0) {
		in->zbuf = x_malloc(ZBUF_SIZE);
		if (!in->zbuf) {
			pt_error_set(err, PT_ENOMEM, -1, "out of memory");
			return -1;
		}
		in->zbuf[0] = in->head[0];
		in->zbuf[1] = in->head[1];
		in->z.next_in = in->zbuf;
		in->z.avail_in = 2;
		in->nhead = 0;
	} else {
		/* zlib takes uInt lengths: feed big buffers in slices. */
		in->z.next_in = (Bytef *)in->mem;
		in->z.avail_in = in->memlen > UINT32_MAX ? UINT32_MAX : (uInt)in->memlen;
		in->mempos = in->z.avail_in;
	}
	return 0;
}

/* Refill z.avail_in; returns 0, or -1 on a read error.  Sets eof. */
static int z_refill(pt_input *in, pt_error *err)
{
	ssize_t r;

	if (in->fd < 0) {
		size_t n = in->memlen - in->mempos;
		if (!n) {
			in->eof = 1;
			return 0;
		}
		if (n > UINT32_MAX)
			n = UINT32_MAX;
		in->z.next_in = (Bytef *)in->mem + in->mempos;
		in->z.avail_in = (uInt)n;
		in->mempos += n;
		return 0;
	}
	r = raw_read(in, in->zbuf, ZBUF_SIZE, err);
	if (r < 0)
		return -1;
	if (r == 0)
		in->eof = 1;
	in->z.next_in = in->zbuf;
	in->z.avail_in = (uInt)r;
	return 0;
}

static ssize_t take_pending(pt_input *in, pt_error *err)
{
	if (err) {
		err->code = in->perr.code;
		err->offset = in->perr.offset;
		memcpy(err->msg, in->perr.msg, sizeof(err->msg));
	}
	return -1;
}

static ssize_t gz_read(pt_input *in, unsigned char *dst, size_t cap, pt_error *err)
{
	size_t got = 0;

	if (cap > UINT32_MAX)
		cap = UINT32_MAX;
	while (got < cap && !in->cut) {
		size_t produced;
		int zr;

		if (in->zend) {
			/* Another gzip member may follow (gzip -c a b > c). */
			if (!in->z.avail_in && !in->eof && z_refill(in, err))
				return -1;
			/* Trailing bytes that do not start a gzip member (zero
			 * padding after a crash) end the stream, as in gzip(1). */
			if (!in->z.avail_in || in->z.next_in[0] != 0x1f)
				break;
			if (inflateReset(&in->z) != Z_OK)
				return pt_error_set(err, PT_EPARSE, (int64_t)in->delivered,
						    "corrupt gzip data"), -1;
			in->zend = 0;
		}
		if (!in->z.avail_in && !in->eof && z_refill(in, err))
			return -1;
		/* Call inflate even with no input left: it may still hold
		 * output from earlier input. */
		in->z.next_out = dst + got;
		in->z.avail_out = (uInt)(cap - got);
		zr = inflate(&in->z, Z_NO_FLUSH);
		produced = (cap - got) - in->z.avail_out;
		got += produced;
		if (zr == Z_STREAM_END) {
			in->zend = 1;
			continue;
		}
		if (zr == Z_BUF_ERROR && !produced) {
			if (!in->z.avail_in && in->eof) {
				/* Raw bytes ran out before the gzip end marker. */
				in->cut = 1;
				break;
			}
			if (in->z.avail_in)
				zr = Z_DATA_ERROR;  /* no progress with input: never loop */
			else
				continue;  /* the loop refills */
		}
		if (zr == Z_BUF_ERROR)
			continue;
		if (zr != Z_OK) {
			pt_error_clear(&in->perr);
			pt_error_set(&in->perr, zr == Z_MEM_ERROR ? PT_ENOMEM : PT_EPARSE,
				     (int64_t)(in->delivered + got), "corrupt gzip data (%s)",
				     in->z.msg ? in->z.msg : "inflate failed");
			in->pending = 1;
			if (got)
				break;
			return take_pending(in, err);
		}
	}
	in->delivered += got;
	return (ssize_t)got;
}

ssize_t pt_input_read(pt_input *in, void *dst, size_t cap, pt_error *err)
{
	unsigned char *d = dst;
	size_t got = 0;
	ssize_t r;

	if (in->pending)
		return take_pending(in, err);
	if (!in->probed && probe(in, err))
		return -1;
	if (in->gz)
		return gz_read(in, d, cap, err);
	if (cap > SSIZE_MAX)
		cap = SSIZE_MAX;
	while (in->headpos < in->nhead && got < cap)
		d[got++] = in->head[in->headpos++];
	/* Fill the whole request: the parser's cost per refill is fixed. */
	while (got < cap) {
		r = raw_read(in, d + got, cap - got, err);
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	in->delivered += got;
	return (ssize_t)got;
}

int pt_input_drain(pt_input *in, pt_error *err)
{
	unsigned char buf[1 << 16];
	ssize_t n;

	while ((n = pt_input_read(in, buf, sizeof(buf), err)) > 0)
		;
	return n < 0 ? (err && err->code ? err->code : PT_EIO) : PT_OK;
}

int pt_input_is_gzip(const pt_input *in) { return in && in->gz; }
int pt_input_cut(const pt_input *in) { return in && in->cut; }
uint64_t pt_input_offset(const pt_input *in) { return in ? in->delivered : 0; }
