/* complete.c - a fuzzy tree read as the one symbol of the set it can be
 * part of (match_int.h, match_complete). */
#include "match_int.h"

#include <string.h>

#define PT_MAX TREES_MAX_NODES

/* A tree parsed from a canonical string: nodes in preorder, each with its
 * first child and next sibling (-1: none). */
struct ptree {
	int n;
	int8_t first[PT_MAX], next[PT_MAX];
};

/* Parses the depth digits after the colour letter; false when malformed or
 * too big. */
static bool ptree_parse(const char *s, struct ptree *t)
{
	int8_t last[12];
	t->n = 0;
	for (; *s; s++) {
		const int d = *s - '0';
		if (d < 0 || d > 10 || t->n >= PT_MAX || (d == 0) != (t->n == 0))
			return false;
		const int i = t->n++;
		t->first[i] = t->next[i] = -1;
		if (d > 0) {
			const int p = last[d - 1];
			if (p < 0)
				return false;
			/* Appending keeps a node's children in string order. */
			int c = t->first[p];
			if (c < 0) {
				t->first[p] = (int8_t)i;
			} else {
				while (t->next[c] >= 0)
					c = t->next[c];
				t->next[c] = (int8_t)i;
			}
		}
		last[d] = (int8_t)i;
		for (int k = d + 1; k < 12; k++)
			last[k] = -1;
	}
	return t->n > 0;
}

struct incl_ctx {
	const struct ptree *o, *t;
	int8_t memo[PT_MAX][PT_MAX]; /* -1 unknown, 0 no, 1 yes */
};

static bool incl(struct incl_ctx *c, int oi, int ti);

/* Augmenting path for o-child slot i (kids ok[]) over t's kids tk[]. */
static bool augment(struct incl_ctx *c, const int8_t *ok, const int8_t *tk, int n_t, int8_t *owner, uint64_t *seen,
		    int i)
{
	for (int j = 0; j < n_t; j++) {
		if ((*seen >> j) & 1u || !incl(c, ok[i], tk[j]))
			continue;
		*seen |= 1ull << j;
		if (owner[j] < 0 || augment(c, ok, tk, n_t, owner, seen, owner[j])) {
			owner[j] = (int8_t)i;
			return true;
		}
	}
	return false;
}

/* Whether the sub-tree of o at oi is the sub-tree of t at ti less some
 * descendants: o's children go one to one into t's children, each
 * contained in its own. */
static bool incl(struct incl_ctx *c, int oi, int ti)
{
	if (c->memo[oi][ti] >= 0)
		return c->memo[oi][ti];
	int8_t ok[PT_MAX], tk[PT_MAX], owner[PT_MAX];
	int n_o = 0, n_t = 0;
	for (int k = c->o->first[oi]; k >= 0; k = c->o->next[k])
		ok[n_o++] = (int8_t)k;
	for (int k = c->t->first[ti]; k >= 0; k = c->t->next[k]) {
		owner[n_t] = -1;
		tk[n_t++] = (int8_t)k;
	}
	bool yes = n_o <= n_t;
	for (int i = 0; i < n_o && yes; i++) {
		uint64_t seen = 0;
		yes = augment(c, ok, tk, n_t, owner, &seen, i);
	}
	c->memo[oi][ti] = yes;
	return yes;
}

/* Whether symbol id's token holds o (parsed from a string of colour
 * letter `colour`) less min..max of its nodes; its node count in *nodes. */
static bool holds(const struct tree_set *set, int32_t id, char colour, const struct ptree *o, int min, int max,
		  int *nodes)
{
	struct ptree t;
	struct incl_ctx c = {.o = o, .t = &t};
	const char *tok = tree_set_token(set, id);
	const int len = (int)strlen(tok) - 1;
	if (tok[0] != colour || len - o->n < min || len - o->n > max || !ptree_parse(tok + 1, &t))
		return false;
	memset(c.memo, -1, sizeof c.memo);
	*nodes = t.n;
	return incl(&c, 0, 0);
}

int32_t match_complete(const struct match *m, const char *canon, int *nodes)
{
	struct ptree o;
	if (!canon[0] || !ptree_parse(canon + 1, &o) || o.n < COMPLETE_MIN_NODES)
		return -1;
	int32_t found = -1;
	const int n_ids = tree_set_count(m->cfg.trees);
	for (int32_t id = 0; id < n_ids; id++) {
		int n;
		if (!holds(m->cfg.trees, id, canon[0], &o, 1, COMPLETE_MAX_MISSING, &n))
			continue;
		if (found >= 0)
			return -1;
		found = id;
		*nodes = n;
	}
	return found;
}

bool match_holds(const struct tree_set *set, int32_t id, const char *canon, int max_missing)
{
	struct ptree o;
	int n;
	return id >= 0 && id < tree_set_count(set) && canon[0] && ptree_parse(canon + 1, &o) &&
	       holds(set, id, canon[0], &o, 0, max_missing, &n);
}
