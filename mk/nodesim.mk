# bench/nodesim.c counts the operations that reach the shared control
# directory with link-time wrappers of the libc calls that name a path
# (docs/bench.md, "Control plane at scale").  Included from the Makefile.

NODESIM_WRAP := open stat lstat rename unlink mkdir rmdir opendir access fopen
$(B)/bench/nodesim: LIBS += $(foreach f,$(NODESIM_WRAP),-Wl,--wrap=$(f))
