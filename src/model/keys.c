/*
 * keys.c - the function key's shared rules (keys.h): one reading of the
 * launch shape for the diagnosis sentences and the report's short names.
 */
#include "keys.h"

size_t pt_key_strip_shape(const char *s, size_t n)
{
	size_t i = n, part;

	for (part = 0; part < 2; part++) {
		int k;

		for (k = 0; k < 3; k++) {
			size_t digits = 0;

			while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') {
				i--;
				digits++;
			}
			if (!digits)
				return n;
			if (k < 2) {
				if (i == 0 || s[i - 1] != '_')
					return n;
				i--;
			}
		}
		if (part == 0) {
			if (i == 0 || s[i - 1] != '|')
				return n;
			i--;
		}
	}
	return i;
}
