/*
 * opts.c - the option parser behind every perftracker subcommand (see
 * opts.h): finds each argument's entry in the command's table (and the
 * tables it includes), checks and stores its value, and gathers the
 * positionals.  The CLI prints --help from the same tables (cli/usage.c).
 */
#include "opts.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The address an entry writes to: its target, or base + off inside an
 * included table. */
static void *where(const pt_opt *o, char *base)
{
	return base ? base + o->off : o->target;
}

/* The entry for --name (name[0..n)) or -c (c != 0), searching included
 * tables depth first; *obase gets the base its target is relative to. */
static const pt_opt *find(const pt_opt *t, char *base, const char *name, size_t n, char c,
			  char **obase)
{
	for (; t->type != PT_OPT_TEND; t++) {
		if (t->type == PT_OPT_TINCLUDE) {
			const pt_opt *r = find(t->sub, where(t, base), name, n, c, obase);

			if (r)
				return r;
			continue;
		}
		if (t->type == PT_OPT_TGROUP)
			continue;
		if (c ? t->short_name == c
		      : t->long_name && strlen(t->long_name) == n && !strncmp(t->long_name, name, n)) {
			*obase = base;
			return t;
		}
	}
	return NULL;
}

static int takes_arg(const pt_opt *o)
{
	return o->type != PT_OPT_TFLAG;
}

static int has_max(const pt_opt *o)
{
	return o->max > o->min;
}

/* The messages of a number out of [min, max]: "not a non-negative ..."
 * for the common lower bound 0, else the range or the bound. */
static int bad_range(const pt_opt *o, const char *shown, const char *arg, const char *what,
		     pt_error *e)
{
	if (o->min == 0 && !has_max(o))
		return pt_error_set(e, PT_EINVAL, -1, "option '%s': '%s' is not a non-negative %s",
				    shown, arg, what);
	if (has_max(o))
		return pt_error_set(e, PT_EINVAL, -1, "option '%s': '%s' is out of range (%g-%g)",
				    shown, arg, o->min, o->max);
	return pt_error_set(e, PT_EINVAL, -1, "option '%s': '%s' is below %g", shown, arg, o->min);
}

static int set_int(const pt_opt *o, void *p, const char *shown, const char *arg, pt_error *e)
{
	char *end;
	long long v, lim;

	errno = 0;
	v = strtoll(arg, &end, 10);
	if (errno || end == arg || *end)
		return pt_error_set(e, PT_EINVAL, -1, o->min >= 0
				    ? "option '%s': '%s' is not a non-negative integer"
				    : "option '%s': '%s' is not an integer", shown, arg);
	if ((double)v < o->min || (has_max(o) && (double)v > o->max))
		return bad_range(o, shown, arg, "integer", e);
	/* Fits the target's width (a port in an int, a count in a size_t). */
	lim = o->size >= 8 ? INT64_MAX : (1LL << (o->size * 8 - 1)) - 1;
	if (v > lim || v < -lim - 1)
		return pt_error_set(e, PT_EINVAL, -1, "option '%s': '%s' is too large", shown, arg);
	switch (o->size) {
	case 1: *(int8_t *)p = (int8_t)v; break;
	case 2: *(int16_t *)p = (int16_t)v; break;
	case 4: *(int32_t *)p = (int32_t)v; break;
	default: *(int64_t *)p = (int64_t)v; break;
	}
	return 0;
}

static int set_double(const pt_opt *o, void *p, const char *shown, const char *arg, pt_error *e)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || v != v)
		return pt_error_set(e, PT_EINVAL, -1, o->min >= 0
				    ? "option '%s': '%s' is not a non-negative number"
				    : "option '%s': '%s' is not a number", shown, arg);
	if (v < o->min || (has_max(o) && v > o->max))
		return bad_range(o, shown, arg, "number", e);
	*(double *)p = v;
	return 0;
}

/* "option '--format': 'xml' is not 'text' or 'json'" */
static int set_choice(const pt_opt *o, void *p, const char *shown, const char *arg, pt_error *e)
{
	char list[256];
	size_t k, n = 0, len = 0;

	for (k = 0; o->choices[k]; k++) {
		if (!strcmp(o->choices[k], arg)) {
			*(int *)p = (int)k;
			return 0;
		}
	}
	n = k;
	list[0] = 0;
	for (k = 0; k < n && len < sizeof(list); k++) {
		int w = snprintf(list + len, sizeof(list) - len, "%s'%s'",
				 k == 0 ? "" : k + 1 == n ? " or " : ", ", o->choices[k]);

		len += w > 0 ? (size_t)w : 0;
	}
	return pt_error_set(e, PT_EINVAL, -1, "option '%s': '%s' is not %s", shown, arg, list);
}

static int apply(const pt_opt *o, char *base, const char *shown, const char *arg, pt_error *e)
{
	void *p = where(o, base);

	switch (o->type) {
	case PT_OPT_TFLAG:
		*(int *)p = (int)o->ival;
		return 0;
	case PT_OPT_TINT:
		return set_int(o, p, shown, arg, e);
	case PT_OPT_TDOUBLE:
		return set_double(o, p, shown, arg, e);
	case PT_OPT_TSTRING:
		if ((o->flags & PT_OPT_NONEMPTY) && !*arg)
			return pt_error_set(e, PT_EINVAL, -1, "option '%s' needs a value", shown);
		*(const char **)p = arg;
		return 0;
	case PT_OPT_TCHOICE:
		return set_choice(o, p, shown, arg, e);
	case PT_OPT_TCALLBACK:
		pt_error_clear(e);
		if (!o->cb(o, arg, p, e))
			return 0;
		if (e && !e->msg[0])
			pt_error_set(e, PT_EINVAL, -1, "option '%s': bad value '%s'", shown,
				     arg ? arg : "");
		return -1;
	default:
		return pt_error_set(e, PT_EINVAL, -1, "option '%s': bad table entry", shown);
	}
}

/* The optional argument of argv[*i] when it is not attached: the next
 * argument if it starts with a digit. */
static const char *next_digit_arg(int argc, char **argv, int *i)
{
	if (*i + 1 < argc && argv[*i + 1][0] >= '0' && argv[*i + 1][0] <= '9')
		return argv[++*i];
	return NULL;
}

int pt_opts_parse(const pt_opt *opts, int argc, char **argv, pt_error *e)
{
	int i, npos = 0, only_pos = 0;

	pt_error_clear(e);
	for (i = 1; i < argc; i++) {
		char *a = argv[i], shown[128];
		const char *arg = NULL;
		const pt_opt *o;
		char *base = NULL;

		if (only_pos || a[0] != '-' || !a[1]) {
			argv[1 + npos++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_pos = 1;
			continue;
		}
		if (a[1] == '-') {
			const char *name = a + 2, *eq = strchr(name, '=');
			size_t n = eq ? (size_t)(eq - name) : strlen(name);

			o = find(opts, NULL, name, n, 0, &base);
			if (!o && !eq && !strcmp(name, "help"))
				return PT_OPTS_HELP;
			if (!o) {
				pt_error_set(e, PT_EINVAL, -1, "unknown option '%.*s'",
					     (int)(eq ? (size_t)(eq - a) : strlen(a)), a);
				return PT_OPTS_UNKNOWN;
			}
			snprintf(shown, sizeof(shown), "--%s", o->long_name);
			if (!takes_arg(o)) {
				if (eq) {
					pt_error_set(e, PT_EINVAL, -1, "option '%s' takes no value", shown);
					return PT_OPTS_ERROR;
				}
			} else if (eq) {
				arg = eq + 1;
			} else if (o->flags & PT_OPT_OPTARG) {
				arg = next_digit_arg(argc, argv, &i);
			} else if (i + 1 < argc) {
				arg = argv[++i];
			} else {
				pt_error_set(e, PT_EINVAL, -1, "option '%s' needs a value", shown);
				return PT_OPTS_ERROR;
			}
		} else {
			o = find(opts, NULL, NULL, 0, a[1], &base);
			if (!o && a[1] == 'h' && !a[2])
				return PT_OPTS_HELP;
			if (!o || (!takes_arg(o) && a[2])) {
				pt_error_set(e, PT_EINVAL, -1, "unknown option '%s'", a);
				return PT_OPTS_UNKNOWN;
			}
			snprintf(shown, sizeof(shown), "-%c", a[1]);
			if (!takes_arg(o))
				arg = NULL;
			else if (a[2])
				arg = a + 2;
			else if (o->flags & PT_OPT_OPTARG)
				arg = next_digit_arg(argc, argv, &i);
			else if (i + 1 < argc)
				arg = argv[++i];
			else {
				pt_error_set(e, PT_EINVAL, -1, "option '%s' needs a value", shown);
				return PT_OPTS_ERROR;
			}
		}
		if (apply(o, base, shown, arg, e))
			return PT_OPTS_ERROR;
	}
	argv[1 + npos] = NULL;
	return npos;
}

/* ---- checking a table ------------------------------------------------------ */

typedef struct seen {
	const pt_opt *v[256];
	size_t n;
} seen;

static int check(const pt_opt *t, seen *s, int depth, pt_error *e)
{
	if (depth > 8)
		return pt_error_set(e, PT_EINVAL, -1, "option tables include each other");
	for (; t->type != PT_OPT_TEND; t++) {
		const char *name = t->long_name ? t->long_name : "";

		switch (t->type) {
		case PT_OPT_TGROUP:
			continue;
		case PT_OPT_TINCLUDE:
			if (!t->sub || check(t->sub, s, depth + 1, e))
				return t->sub ? -1 : pt_error_set(e, PT_EINVAL, -1, "include without a table");
			continue;
		case PT_OPT_TINT:
			if (t->size != 1 && t->size != 2 && t->size != 4 && t->size != 8)
				return pt_error_set(e, PT_EINVAL, -1, "option '%s': integer of %zu bytes",
						    name, t->size);
			break;
		case PT_OPT_TCHOICE:
			if (!t->choices || !t->choices[0])
				return pt_error_set(e, PT_EINVAL, -1, "option '%s': no choices", name);
			break;
		case PT_OPT_TCALLBACK:
			if (!t->cb)
				return pt_error_set(e, PT_EINVAL, -1, "option '%s': no callback", name);
			break;
		case PT_OPT_TFLAG:
		case PT_OPT_TDOUBLE:
		case PT_OPT_TSTRING:
			break;
		default:
			return pt_error_set(e, PT_EINVAL, -1, "option '%s': unknown type %d", name,
					    (int)t->type);
		}
		if (!t->long_name && !t->short_name)
			return pt_error_set(e, PT_EINVAL, -1, "an option without a name");
		if (t->type != PT_OPT_TFLAG && !t->argname && t->type != PT_OPT_TCHOICE)
			return pt_error_set(e, PT_EINVAL, -1, "option '%s': no argument name", name);
		for (size_t k = 0; k < s->n; k++) {
			const pt_opt *u = s->v[k];

			if ((t->short_name && u->short_name == t->short_name) ||
			    (t->long_name && u->long_name && !strcmp(t->long_name, u->long_name)))
				return pt_error_set(e, PT_EINVAL, -1, "option '%s%s' defined twice",
						    t->long_name ? "--" : "-",
						    t->long_name ? t->long_name
								 : (char[2]){ t->short_name, 0 });
		}
		if (s->n == sizeof(s->v) / sizeof(s->v[0]))
			return pt_error_set(e, PT_EINVAL, -1, "more than %zu options", s->n);
		s->v[s->n++] = t;
	}
	return 0;
}

int pt_opts_check(const pt_opt *opts, pt_error *e)
{
	seen s;

	s.n = 0;
	pt_error_clear(e);
	return check(opts, &s, 0, e) ? -1 : 0;
}
