/*
 * api.h - the mark of libperftracker's public API.
 *
 * The library is compiled with -fvisibility=hidden, so libperftracker.so
 * exports nothing by default.  A public header (one that src/perftracker.h
 * includes, directly or not) puts PT_API_BEGIN on its own line after its
 * #includes and PT_API_END before its closing #endif: every function and
 * variable declared between them is exported (GCC and clang carry the
 * visibility of the declaration over to the definition in the .c file that
 * includes it).  Internal headers (diagnose/internal.h, the CLI's, ...) get
 * no mark, so functions shared between library files stay inside the .so.
 *
 * The mark is also the list of what is public: `make install` installs
 * exactly the headers that carry it (plus perftracker.h and this one), and
 * tests/cli/test_library.sh checks that the .so exports only pt_ names.  One
 * line at each end, rather than a word on each declaration, so that adding
 * a function to a public header needs nothing more.  Including a public
 * header from inside another's marked region is fine (the marks nest); a
 * system header should be included before PT_API_BEGIN.
 */
#ifndef PT_UTIL_API_H
#define PT_UTIL_API_H

#if defined(__GNUC__) || defined(__clang__)
#define PT_API_BEGIN _Pragma("GCC visibility push(default)")
#define PT_API_END _Pragma("GCC visibility pop")
#else
#define PT_API_BEGIN
#define PT_API_END
#endif

#endif
