/*
 * keys.h - the function key's rules, in one place for every stage.
 *
 * A kernel's key is its name followed by its launch shape, "G_G_G|B_B_B"
 * (grid, "|", block; docs/design.md "Function key"); a communication
 * kernel's is its name alone; a Python or CPU frame's name is normalised
 * (line numbers and object addresses dropped) and a stack's key is its
 * frames' names joined by "|"; a step is "ProfilerStep#N".  The trace
 * readers (src/trace/kineto.c, nsys.c) and the pattern builder
 * (src/analysis/patterns.c) write keys with these functions, so a kernel
 * has the same key whichever profiler recorded it; the diagnosis and the
 * report take keys apart with them.  Pure functions on strings (except
 * pt_key_kernel_role, which fills the caller's memo); thread-safe.
 */
#ifndef PT_KEYS_H
#define PT_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "commkind.h"

/* Longest name, stack or key part a reader keeps, in bytes: longer ones
 * are cut to this (a real name is at most a few KiB of C++ templates). */
#define PT_KEY_NAME_MAX ((size_t)64 << 10)

/* Between a kernel key's grid and block, and between a stack key's frames. */
#define PT_KEY_SEP '|'

/* Most bytes pt_key_kernel adds after the name: six int64 values (20
 * bytes each at most) and five separators. */
#define PT_KEY_SHAPE_MAX 128

/* The role of the kernel named name[0..n) (demangled, no launch shape):
 * commkind.c's table, the one rule for what is communication, memoised in
 * ck under id when 0 <= id < UINT32_MAX (a string id the reader already
 * has for this name or key), asked directly otherwise.  PT_ROLE_NONE for a
 * compute kernel, a role > 0 for communication, -1 only when out of
 * memory.  ck as pt_commkind_memo: not thread-safe. */
int pt_key_kernel_role(pt_commkind_cache *ck, int64_t id, const char *name, size_t n);

/* Write the function key of a kernel launch to out, which has room for
 * n + PT_KEY_SHAPE_MAX bytes; returns its length (not NUL-terminated).
 * A communication kernel (role > 0) is keyed by its name alone, so every
 * launch shape of one collective is one pattern; a compute kernel by its
 * name and launch shape "gx_gy_gz|bx_by_bz", or by its name alone when
 * grid or block is NULL (not recorded).  name may not overlap out. */
size_t pt_key_kernel(char *out, const char *name, size_t n, int role, const int64_t grid[3],
		     const int64_t block[3]);

/* N of a step marker name "ProfilerStep#N" (N of 1 to 18 digits); -1 for
 * any other name.  name need not be NUL-terminated. */
int64_t pt_key_step_number(const char *name, size_t n);

/* Normalise a Python frame or op name for use in a function key:
 * "file.py(123): func" -> "file.py: func", "... at 0x7f12ab>" -> "... at 0x>".
 * Writes at most cap-1 bytes to out and NUL-terminates (nothing when cap
 * is 0); returns the length.  s may not overlap out. */
size_t pt_key_normalize_name(const char *s, size_t n, char *out, size_t cap);

/* Length of key[0..n) without a trailing launch shape "G_G_G|B_B_B"; n
 * when it has none.  key may be NULL only when n is 0. */
size_t pt_key_strip_shape(const char *key, size_t n);

/* What a CUDA/HIP runtime or driver call is, by its name (never 0, so a
 * memo by string id can use 0 for "not yet"): a synchronisation (a name
 * with "Synchronize"), a synchronous copy (cudaMemcpy, hipMemcpy,
 * cuMemcpyDtoH*, cudaMemcpy2D: the host waits for the GPU), a kernel
 * launch, another enqueue (an "Async" copy or memset), or other host work.
 * The GPU idle causes (src/analysis/breakdown.c) and the critical path's
 * blocking calls (src/analysis/critpath.c) read calls with it. */
enum { PT_RT_SYNC = 1, PT_RT_SYNC_COPY, PT_RT_LAUNCH, PT_RT_ENQUEUE, PT_RT_OTHER };
int pt_key_runtime_kind(const char *name, size_t n);

#endif
