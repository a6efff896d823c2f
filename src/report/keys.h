/*
 * keys.h - the report keys of src/report/keys.def for C: PT_KEY_<ID> is the
 * key's JSON spelling (a static const char array, so sizeof works and it can
 * stand in a static initialiser; it cannot be pasted into a literal), and
 * pt_key_unit() the unit of a value under a key.  Every writer and reader of
 * report.json spells keys through these; the page gets the same table as
 * build/gen/keys.js (web/keys.c).  PT_KEY_, not the event kinds' PT_K_
 * (model/store.h), so that an id never has to dodge a kind's name.
 */
#ifndef PT_REPORT_KEYS_H
#define PT_REPORT_KEYS_H

#include "unit.h"

#define PT_KEY(id, s, u) static const char PT_KEY_##id[] = s;
#include "keys.def"
#undef PT_KEY

/* The unit keys.def gives key; PT_UNIT_NONE for NULL and for a key not in
 * the table (worker ids, function keys).  Pure, thread-safe. */
pt_unit pt_key_unit(const char *key);

/* 1 when key is a line of keys.def, else 0 (NULL: 0). */
int pt_key_known(const char *key);

#endif
