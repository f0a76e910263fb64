/*
 * trees.h - symbol dictionaries (.trees files, ../shared/spec/amoeba.md §4).
 *
 * A .trees file is whitespace-separated tokens `[wb][0-9]+` (a bare digit
 * token means `w` + token); the ID of a symbol is the 0-based position of
 * its token. Tokens must already be canonical (children sorted in
 * descending byte order); a non-canonical or malformed token is an error
 * naming the file, line and token. A duplicate token is reported (warning)
 * and still uses up its ID; lookups return the first.
 *
 * Limits (bound every allocation): at most TREES_MAX_SYMBOLS tokens, each at
 * most TREES_MAX_NODES nodes, file at most 4 MiB.
 */
#ifndef TT_FIDUCIAL_TREES_H
#define TT_FIDUCIAL_TREES_H

#include <stddef.h>
#include <stdint.h>

#define TREES_MAX_SYMBOLS 65536
#define TREES_MAX_NODES 64

struct tree_set;

/* Loads a file. Returns 0 or ERR_IO / ERR_FORMAT (logged with line). */
int tree_set_load(const char *path, struct tree_set **out);
/* Parses text of `len` bytes; `name` is used in error messages. */
int tree_set_parse(const char *text, size_t len, const char *name, struct tree_set **out);
void tree_set_free(struct tree_set *set);  /* NULL-safe */

int tree_set_count(const struct tree_set *set);
int tree_set_max_nodes(const struct tree_set *set);   /* largest tree's node count */
int tree_set_max_depth(const struct tree_set *set);   /* deepest tree's depth */
int tree_set_min_nodes(const struct tree_set *set);
/* The ID of canonical string `canon` (with colour letter), or -1. */
int tree_set_lookup(const struct tree_set *set, const char *canon);
/* Token of ID `id` (with colour letter), or NULL. Borrowed from the set. */
const char *tree_set_token(const struct tree_set *set, int id);

/* Validates and canonicalises one token (with or without colour letter) into
 * buf. Returns 0, ERR_FORMAT (not a tree string), ERR_RANGE (too big). */
int tree_canonicalize(const char *token, char *buf, size_t cap);
/* Depth and node count of a canonical token. */
int tree_token_info(const char *token, int *depth, int *nodes);

#endif
