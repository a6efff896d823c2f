/*
 * reap.c - nothing of a job outlives it on its node (docs/collector.md,
 * "Jobs on one host"): the agent removes its node channel and its spool
 * folder when it exits with no live worker left (pt_agent_leave), and at
 * start removes those of jobs that ended without an agent to clean up
 * (pt_agent_reap: killed agents, agents of another build).  Everything
 * relative to directory descriptors, never through a link, only folders
 * of this user.
 */
#include "agent.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../control/nodechan.h"
#include "../util/file.h"
#include "../util/xalloc.h"

/* A channel whose workers may still come (created, no record yet) is
 * left alone this long; a spool folder without any channel, longer (its
 * agent may run without one). */
#define REAP_YOUNG_S 30.0
#define REAP_NOCHAN_S 3600.0

/* Does any record of channel ndir name a process that may be alive? */
static int channel_has_live(const char *ndir, const char *node, double now)
{
	pt_node_worker *w = NULL;
	size_t n = 0;
	int live = 0;

	if (pt_nodechan_workers_read(ndir, &w, &n, NULL))
		return 1;  /* unreadable: assume someone is there */
	for (size_t i = 0; i < n && !live; i++)
		live = !pt_control_worker_dead(&w[i].e, node) &&
		       (!strcmp(w[i].e.info.node, node) || now - w[i].e.hb.time < 600);
	x_free(w);
	return live;
}

static double age_of(int dfd, const char *name, double now)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return 0;
	return now - (double)st.st_mtime;
}

int pt_agent_reap(pt_agent *a, double now)
{
	char base[PT_CONTROL_PATH_MAX], own[PT_CONTROL_HOST_MAX + 24];
	DIR *d;
	struct dirent *de;
	int bfd, sfd, reaped = 0;
	unsigned uid = (unsigned)getuid();

	if (pt_nodechan_base(base, sizeof(base)) ||
	    pt_nodechan_key(own, sizeof(own), a->dir, a->host))
		return 0;
	sfd = a->spool_root[0] ? open(a->spool_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	bfd = open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (bfd >= 0 && (d = fdopendir(dup(bfd)))) {
		while ((de = readdir(d))) {
			char ndir[PT_CONTROL_PATH_MAX];

			if (de->d_name[0] == '.' || !strcmp(de->d_name, own) ||
			    (size_t)snprintf(ndir, sizeof(ndir), "%s/%s", base, de->d_name) >=
				    sizeof(ndir))
				continue;
			if (pt_nodechan_agent_alive(ndir) || age_of(bfd, de->d_name, now) < REAP_YOUNG_S ||
			    channel_has_live(ndir, a->node, now))
				continue;
			if (pt_file_remove_tree_at(bfd, de->d_name, 2, uid) == 0) {
				reaped++;
				if (sfd >= 0)
					pt_file_remove_tree_at(sfd, de->d_name, 3, uid);
			}
		}
		closedir(d);
	}
	/* Spool folders of jobs whose channel is gone (reaped before, or on
	 * another base): after an hour, nobody will summarise them. */
	if (sfd >= 0 && (d = fdopendir(dup(sfd)))) {
		while ((de = readdir(d))) {
			struct stat st;
			const char *dash = strrchr(de->d_name, '-');

			/* Only our own names: <host>-<16 hex>. */
			if (de->d_name[0] == '.' || !dash || strlen(dash + 1) != 16 ||
			    !strcmp(de->d_name, own) ||
			    (bfd >= 0 && fstatat(bfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) ||
			    age_of(sfd, de->d_name, now) < REAP_NOCHAN_S)
				continue;
			if (pt_file_remove_tree_at(sfd, de->d_name, 3, uid) == 0)
				reaped++;
		}
		closedir(d);
	}
	if (bfd >= 0)
		close(bfd);
	if (sfd >= 0)
		close(sfd);
	return reaped;
}

void pt_agent_leave(pt_agent *a, double now)
{
	char key[PT_CONTROL_HOST_MAX + 24];
	int sfd;
	unsigned uid = (unsigned)getuid();

	if (pt_nodechan_key(key, sizeof(key), a->dir, a->host))
		return;
	/* Traces of an active trigger stay for the next agent. */
	if (a->spool_root[0] && !(a->trig.id[0] && !strcmp(a->trig.state, PT_TRIGGER_ACTIVE) &&
				  now < a->trig.deadline)) {
		sfd = open(a->spool_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sfd >= 0) {
			pt_file_remove_tree_at(sfd, key, 3, uid);
			close(sfd);
		}
	}
	if (a->ndir[0] && !channel_has_live(a->ndir, a->node, now)) {
		char base[PT_CONTROL_PATH_MAX];
		int bfd;

		if (pt_nodechan_base(base, sizeof(base)) == 0 &&
		    (bfd = open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
			pt_file_remove_tree_at(bfd, key, 2, uid);
			/* The per-user folder too, when it is empty now. */
			close(bfd);
			rmdir(base);
		}
	}
}
