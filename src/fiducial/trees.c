#include "trees.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/err.h"
#include "../core/file.h"
#include "../core/log.h"

#define TREES_MAX_FILE (4u << 20)
#define TOKEN_CAP (TREES_MAX_NODES + 2)

struct tree_set {
	int n;
	char *text;        /* all tokens, NUL-separated, with colour letter */
	int32_t *offset;   /* token i starts at text + offset[i] */
	int32_t *slots;    /* open-addressing hash: IDs, -1 empty */
	uint32_t n_slots;
	int max_nodes, max_depth, min_nodes;
	uint64_t serial;   /* tree_set_serial() */
};

/* The last serial given out (tree_set_serial); sets may be parsed on any
 * thread. */
static atomic_uint_least64_t last_serial;

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* Preorder depth digits -> canonical string. Children of a node are sorted
 * in descending byte order; this is done bottom-up by recursion on the
 * digit sequence itself, each subtree being a contiguous slice. */
static int canon_slice(const char *d, int n, char *out)
{
	/* d[0] is the node's digit; its children's subtrees follow, each
	 * starting at a digit of depth d[0] + 1. */
	int starts[TREES_MAX_NODES + 1], lens[TREES_MAX_NODES + 1];
	int n_child = 0;
	for (int i = 1; i < n; i++)
		if (d[i] == d[0] + 1) {
			starts[n_child] = i;
			n_child++;
		}
	for (int c = 0; c < n_child; c++)
		lens[c] = (c + 1 < n_child ? starts[c + 1] : n) - starts[c];
	char sub[TREES_MAX_NODES + 1][TOKEN_CAP];
	int order[TREES_MAX_NODES + 1];
	for (int c = 0; c < n_child; c++) {
		canon_slice(d + starts[c], lens[c], sub[c]);
		order[c] = c;
	}
	/* Insertion sort, descending by strcmp: trees are tiny. */
	for (int i = 1; i < n_child; i++) {
		int v = order[i], j = i;
		while (j > 0 && strcmp(sub[order[j - 1]], sub[v]) < 0) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = v;
	}
	int pos = 0;
	out[pos++] = d[0];
	for (int c = 0; c < n_child; c++) {
		int l = lens[order[c]];
		memcpy(out + pos, sub[order[c]], (size_t)l);
		pos += l;
	}
	out[pos] = 0;
	return pos;
}

int tree_canonicalize(const char *token, char *buf, size_t cap)
{
	if (!token || !buf)
		return ERR_FORMAT;
	char colour = 'w';
	const char *d = token;
	if (*d == 'w' || *d == 'b')
		colour = *d++;
	size_t n = strlen(d);
	if (n == 0 || d[0] != '0')
		return ERR_FORMAT;
	for (size_t i = 0; i < n; i++) {
		if (d[i] < '0' || d[i] > '9')
			return ERR_FORMAT;
		if (i > 0 && (d[i] == '0' || d[i] > d[i - 1] + 1))
			return ERR_FORMAT;
	}
	if (n > TREES_MAX_NODES || n + 2 > cap)
		return ERR_RANGE;
	/* canon_slice keeps a frame a tree level; depth <= 9 bounds the recursion. */
	buf[0] = colour;
	canon_slice(d, (int)n, buf + 1);
	return 0;
}

int tree_token_info(const char *token, int *depth, int *nodes)
{
	int dmax = 0, n = 0;
	if (!token)
		return ERR_FORMAT;
	if (*token == 'w' || *token == 'b')
		token++;
	for (; *token; token++) {
		if (*token < '0' || *token > '9')
			return ERR_FORMAT;
		if (*token - '0' > dmax)
			dmax = *token - '0';
		n++;
	}
	if (n == 0)
		return ERR_FORMAT;
	if (depth)
		*depth = dmax;
	if (nodes)
		*nodes = n;
	return 0;
}

static int32_t *hash_slot(const struct tree_set *set, const char *canon)
{
	uint32_t mask = set->n_slots - 1;
	for (uint32_t h = hash_str(canon) & mask;; h = (h + 1) & mask) {
		int32_t id = set->slots[h];
		if (id < 0 || strcmp(set->text + set->offset[id], canon) == 0)
			return &set->slots[h];
	}
}

int tree_set_lookup(const struct tree_set *set, const char *canon)
{
	if (!set || !canon)
		return -1;
	return *hash_slot(set, canon);
}

const char *tree_set_token(const struct tree_set *set, int id)
{
	if (!set || id < 0 || id >= set->n)
		return NULL;
	return set->text + set->offset[id];
}

int tree_set_count(const struct tree_set *set)
{
	return set ? set->n : 0;
}

uint64_t tree_set_serial(const struct tree_set *set)
{
	return set ? set->serial : 0;
}

int tree_set_max_nodes(const struct tree_set *set)
{
	return set ? set->max_nodes : 0;
}

int tree_set_max_depth(const struct tree_set *set)
{
	return set ? set->max_depth : 0;
}

int tree_set_min_nodes(const struct tree_set *set)
{
	return set ? set->min_nodes : 0;
}

void tree_set_free(struct tree_set *set)
{
	if (!set)
		return;
	free(set->text);
	free(set->offset);
	free(set->slots);
	free(set);
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Finds the whitespace-separated token after the one ending at *end: sets
 * [*start, *end) to it and adds the newlines skipped to *line; false when
 * none is left. Both passes of tree_set_parse walk the text with it, so the
 * counting pass sizes exactly what the parsing pass stores. */
static bool token_next(const char *text, size_t len, size_t *start, size_t *end, int *line)
{
	size_t i = *end;
	while (i < len && is_space(text[i])) {
		*line += text[i] == '\n';
		i++;
	}
	if (i >= len)
		return false;
	size_t j = i;
	while (j < len && !is_space(text[j]))
		j++;
	*start = i;
	*end = j;
	return true;
}

int tree_set_parse(const char *text, size_t len, const char *name, struct tree_set **out)
{
	struct tree_set *set = NULL;
	int e = ERR_NOMEM;
	if (!name)
		name = "(trees)";
	if (!out || (!text && len)) {
		e = ERR_RANGE;
		goto fail;
	}
	*out = NULL;
	if (len > TREES_MAX_FILE) {
		log_error("%s: file too large (%zu bytes, at most %u)", name, len, TREES_MAX_FILE);
		e = ERR_RANGE;
		goto fail;
	}
	/* Count tokens first so every allocation is exact. */
	size_t n_tok = 0, text_bytes = 0;
	int lines = 1;
	for (size_t i = 0, j = 0; token_next(text, len, &i, &j, &lines);) {
		n_tok++;
		text_bytes += (j - i) + 2;
	}
	if (n_tok == 0) {
		log_error("%s: no symbols", name);
		e = ERR_FORMAT;
		goto fail;
	}
	if (n_tok > TREES_MAX_SYMBOLS) {
		log_error("%s: %zu symbols, at most %d", name, n_tok, TREES_MAX_SYMBOLS);
		e = ERR_RANGE;
		goto fail;
	}
	set = calloc(1, sizeof *set);
	if (!set)
		goto fail;
	uint32_t n_slots = 16;
	while (n_slots < 2 * n_tok)
		n_slots <<= 1;
	set->n_slots = n_slots;
	set->text = malloc(text_bytes);
	set->offset = malloc(n_tok * sizeof *set->offset);
	set->slots = malloc(n_slots * sizeof *set->slots);
	if (!set->text || !set->offset || !set->slots)
		goto fail;
	memset(set->slots, 0xff, n_slots * sizeof *set->slots);
	set->min_nodes = TREES_MAX_NODES + 1;
	set->serial = atomic_fetch_add(&last_serial, 1) + 1;

	size_t pos = 0;
	int line = 1;
	for (size_t i = 0, j = 0; token_next(text, len, &i, &j, &line);) {
		char tok[TOKEN_CAP + 1];
		size_t tl = j - i;
		int shown = tl > 40 ? 40 : (int)tl;
		if (tl > TOKEN_CAP - 1) {
			log_error("%s:%d: token '%.*s...' is longer than %d nodes", name, line, shown, text + i,
				  TREES_MAX_NODES);
			e = ERR_RANGE;
			goto fail;
		}
		memcpy(tok, text + i, tl);
		tok[tl] = 0;
		char canon[TOKEN_CAP + 1];
		int r = tree_canonicalize(tok, canon, sizeof canon);
		if (r == ERR_RANGE) {
			log_error("%s:%d: token '%s' has more than %d nodes", name, line, tok, TREES_MAX_NODES);
			e = ERR_RANGE;
			goto fail;
		}
		if (r < 0) {
			log_error("%s:%d: token '%.*s' is not a tree string ([wb]0[0-9]*, each digit at most one "
				  "deeper than the one before)",
				  name, line, shown, tok);
			e = ERR_FORMAT;
			goto fail;
		}
		const char *plain = (tok[0] == 'w' || tok[0] == 'b') ? tok + 1 : tok;
		if (strcmp(plain, canon + 1) != 0) {
			log_error("%s:%d: token '%s' is not canonical (expected '%s')", name, line, tok, canon);
			e = ERR_FORMAT;
			goto fail;
		}
		int id = set->n++;
		set->offset[id] = (int32_t)pos;
		size_t cl = strlen(canon);
		memcpy(set->text + pos, canon, cl + 1);
		pos += cl + 1;
		int32_t *slot = hash_slot(set, canon);
		if (*slot >= 0)
			log_warn("%s:%d: token '%s' (ID %d) duplicates ID %d; lookups give %d", name, line, canon, id,
				 *slot, *slot);
		else
			*slot = id;
		int depth = 0, nodes = 0;
		tree_token_info(canon, &depth, &nodes);
		if (nodes > set->max_nodes)
			set->max_nodes = nodes;
		if (nodes < set->min_nodes)
			set->min_nodes = nodes;
		if (depth > set->max_depth)
			set->max_depth = depth;
	}
	*out = set;
	return 0;
fail:
	tree_set_free(set);
	return e;
}

int tree_set_load(const char *path, struct tree_set **out)
{
	char *buf = NULL;
	int e = ERR_IO;
	FILE *f = NULL;
	if (!path || !out)
		return ERR_RANGE;
	*out = NULL;
	const char *why = "";
	if (file_open_regular(path, &f, &why)) {
		log_error("%s: cannot open: %s", path, why);
		goto fail;
	}
	buf = malloc(TREES_MAX_FILE + 1);
	if (!buf) {
		e = ERR_NOMEM;
		goto fail;
	}
	size_t n = fread(buf, 1, TREES_MAX_FILE + 1, f);
	if (ferror(f)) {
		log_error("%s: read error: %s", path, strerror(errno));
		goto fail;
	}
	if (n > TREES_MAX_FILE) {
		log_error("%s: file too large (more than %u bytes)", path, TREES_MAX_FILE);
		e = ERR_RANGE;
		goto fail;
	}
	e = tree_set_parse(buf, n, path, out);
fail:
	free(buf);
	if (f)
		fclose(f);
	return e;
}
