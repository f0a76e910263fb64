/* fuzz_trees.c - libFuzzer target: arbitrary bytes as a .trees file
 * (tree_set_parse). Any input must give 0, ERR_FORMAT or ERR_RANGE, never a
 * crash; a loaded set must look every one of its tokens up to an ID holding
 * the same token, and every token must canonicalise to itself. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/core/err.h"
#include "../../src/core/log.h"
#include "../../src/fiducial/trees.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	log_set_level(LOG_ERROR - 1);
	struct tree_set *set = NULL;
	int rc = tree_set_parse((const char *)data, size, "fuzz", &set);
	if (rc != 0 && rc != ERR_FORMAT && rc != ERR_RANGE && rc != ERR_NOMEM)
		abort();
	if (rc == 0) {
		if (!set || tree_set_count(set) < 1)
			abort();
		for (int i = 0; i < tree_set_count(set); i++) {
			const char *tok = tree_set_token(set, i);
			char buf[TREES_MAX_NODES + 2];
			int depth, nodes;
			int id = tree_set_lookup(set, tok);
			if (!tok || id < 0 || id > i || strcmp(tree_set_token(set, id), tok) != 0)
				abort();
			if (tree_canonicalize(tok, buf, sizeof buf) != 0 || strcmp(buf, tok) != 0)
				abort();
			if (tree_token_info(tok, &depth, &nodes) != 0 || nodes > tree_set_max_nodes(set) ||
			    nodes < tree_set_min_nodes(set) || depth > tree_set_max_depth(set))
				abort();
		}
		tree_set_free(set);
	} else if (set) {
		abort();
	}
	/* The same bytes as one token. */
	char tok[80];
	size_t n = size < sizeof tok - 1 ? size : sizeof tok - 1;
	memcpy(tok, data, n);
	tok[n] = 0;
	char buf[TREES_MAX_NODES + 2];
	if (tree_canonicalize(tok, buf, sizeof buf) == 0) {
		char again[TREES_MAX_NODES + 2];
		if (tree_canonicalize(buf, again, sizeof again) != 0 || strcmp(buf, again) != 0)
			abort();
	}
	return 0;
}
