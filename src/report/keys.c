/*
 * keys.c - the unit column of src/report/keys.def as a lookup: the text
 * report (text_people.c) formats a value by the unit of its key.  The
 * table is small (a few hundred keys) and read once per table cell of a
 * text report, so a linear scan is enough.
 */
#include <string.h>

#include "keys.h"

static const struct {
	const char *key;
	pt_unit unit;
} units[] = {
#define PT_KEY(id, s, u) { s, u },
#include "keys.def"
#undef PT_KEY
};

static int find(const char *key)
{
	size_t i;

	for (i = 0; key && i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(units[i].key, key))
			return (int)i;
	return -1;
}

pt_unit pt_key_unit(const char *key)
{
	int i = find(key);

	return i < 0 ? PT_UNIT_NONE : units[i].unit;
}

int pt_key_known(const char *key)
{
	return find(key) >= 0;
}
