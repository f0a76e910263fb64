/*
 * match_int.h - the matcher's private state and the helpers its files share.
 * Not part of the API: only src/fiducial/ includes it; match.h is the API.
 *
 * match_process() (match.c) runs, per frame:
 *  1. match_candidates_find() (candidates.c): the bottom-up walk from the
 *     leaves (amoeba.md §5) over the adjacency as the matcher sees it (see
 *     adj_of()), putting candidate roots in m->cands, and, in the first
 *     round, collecting the seeds of the repair round;
 *  2. match_candidates_decode() (decode.c): canonical strings, the leaf
 *     filter, the tree set lookup, centre and angle, with the tolerances
 *     for over-full trees and merged leaves, and the completion of fuzzy
 *     trees (complete.c); it fills the detections and
 *     m->claimed;
 *  3. match_repair_round() (repair.c): hairline groups rebuilt without
 *     their specks, then steps 1 and 2 again on the rebuilt lists, for
 *     decoded symbols only;
 *  4. match_roots_find() and, when fingers or blobs are wanted,
 *     match_claim_boxes() (roots.c), then the classifiers (classify.h).
 *
 * Indices are regions of the tree being matched; coordinates are pixels.
 * Every array of struct match is sized at create time (per-region arrays
 * for cap_regions, the repair arrays by the bounds below); nothing here
 * allocates. The per-region arrays are valid for the regions of the tree
 * of the current match_process() call only.
 */
#ifndef TT_FIDUCIAL_MATCH_INT_H
#define TT_FIDUCIAL_MATCH_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/detect.h"
#include "../core/regions.h"
#include "match.h"

/* A leaf this small or smaller (pixels) is taken for sensor noise inside the
 * region around it, not for a node of the tree. */
#define SPECK_MAX_AREA 2

enum node_state {
	ST_RESOLVED = 1u << 0, /* its sub-tree is complete; parent[] is set */
	ST_DEAD = 1u << 1,     /* too deep or too big to be inside a symbol */
	ST_SPECK = 1u << 2,    /* noise leaf: ignored by the tree */
	ST_CUT = 1u << 3,      /* the frame's edge may have cut its sub-tree (candidates.c) */
};

/* Over-full candidates (noise added leaves) hold up to this many nodes. */
#define OVER_MAX_NODES 128
/* The repair round (repair.c): at most REPAIR_MAX groups a frame from at
 * most SEED_MAX seeds; their rebuilt lists share REPAIR_POOL slots. */
#define REPAIR_MAX 64
#define REPAIR_POOL (REPAIR_MAX * 128)
#define SEED_MAX 1024
/* Matcher flags beyond the tree's: the region's list is in repair_pool;
 * the region was merged into another or flipped (a speck). */
#define FLAG_REPAIRED (1u << 7)
#define FLAG_GONE (1u << 6)
/* ... and (small_candidate, match_config.specks_unconfirmed) the root was
 * taken with more specks than few_specks allows: its read is unconfirmed. */
#define FLAG_UNCONFIRMED (1u << 5)
/* claimed[]: 0, part of a decoded symbol, of a fuzzy one, or of a fuzzy one
 * of the first round (which the second may still decode). */
#define CLAIM_SYMBOL 1
#define CLAIM_FUZZY 2
#define CLAIM_FUZZY_FIRST 3

struct match {
	struct match_config cfg;
	int32_t cap_regions;
	uint8_t *state;
	uint8_t *n_done;  /* resolved children (specks included) */
	uint8_t *height;
	int32_t *dc;      /* descendants, specks excluded */
	int32_t *parent;
	int32_t *queue;
	int32_t *cands;   /* candidate roots, full and fuzzy */
	uint8_t *claimed;
	/* Region flags as the matcher sees them: the tree's, except for
	 * regions whose lists were rebuilt without specks (repair.c). */
	uint8_t *flags;
	int32_t *repair_at; /* read only where flags has FLAG_REPAIRED: offset in repair_pool */
	int32_t repair_pool[REPAIR_POOL];  /* a list: count, merged index or -1, neighbours */
	int32_t n_repair_pool;
	struct region merged[REPAIR_MAX];  /* a group's region: its members together */
	int32_t seeds[SEED_MAX];           /* regions the repair round starts from */
	int32_t n_seeds;
	/* valid[d] bit n-1: some tree of depth d has n nodes. */
	uint64_t valid[11];
	uint64_t fuzzy_ok[11];
	/* over[h][n]: a sub-tree of height h with n nodes may be a symbol with
	 * noise leaves added (h = d or d + 1, N < n <= 2N). */
	uint8_t over[11][OVER_MAX_NODES + 1];
	int max_depth, max_nodes, dead_nodes;
	uint64_t tables_serial; /* tree_set_serial() of the set the tables above were derived from; 0: none */
	bool again;       /* the second round, on rebuilt lists: decoded symbols only */
};

/* ---- adjacency and statistics as the matcher sees them ------------------ */

/* Region r's neighbour list: the tree's, or its rebuilt one (m may be NULL:
 * the tree's). */
static inline const int32_t *adj_of(const struct match *m, const struct region_tree *t, int32_t r, int *n)
{
	if (m && (m->flags[r] & FLAG_REPAIRED)) {
		const int32_t *p = m->repair_pool + m->repair_at[r];
		*n = p[0];
		return p + 2;
	}
	*n = t->regions[r].n_adj;
	return region_adj(t, r);
}

/* Whether region k is a child of p in the tree being read: resolved
 * there, not a speck, and hung under p. */
static inline bool kept_child(const struct match *m, int32_t k, int32_t p)
{
	return (m->state[k] & (ST_RESOLVED | ST_SPECK)) == ST_RESOLVED && m->parent[k] == p;
}

/* Region r's statistics: the tree's, or its group's (repair.c). */
static inline const struct region *reg(const struct match *m, const struct region_tree *t, int32_t r)
{
	if (m->flags[r] & FLAG_REPAIRED) {
		const int32_t mi = m->repair_pool[m->repair_at[r] + 1];
		if (mi >= 0)
			return &m->merged[mi];
	}
	return &t->regions[r];
}

/* Whether the hairline round merged other regions into region r: its
 * statistics are then its group's (reg()) and its pixels in the tree's runs
 * partly its members', under their labels. A region whose list alone the
 * round rebuilt (FLAG_REPAIRED, its statistics the tree's) keeps its own
 * pixels. */
static inline bool region_merged(const struct match *m, int32_t r)
{
	return (m->flags[r] & FLAG_REPAIRED) && m->repair_pool[m->repair_at[r] + 1] >= 0;
}

/* Whether (height, nodes) is that of some tree in the set (is_valid), or
 * 1-2 nodes short of one with at least 4 left (is_fuzzy). */
static inline int is_valid(const struct match *m, int height, int nodes)
{
	return height >= 0 && height <= 10 && nodes >= 1 && nodes <= 64 && ((m->valid[height] >> (nodes - 1)) & 1u);
}

static inline int is_fuzzy(const struct match *m, int height, int nodes)
{
	return height >= 0 && height <= 10 && nodes >= 4 && nodes <= 64 && ((m->fuzzy_ok[height] >> (nodes - 1)) & 1u);
}

/* ---- the steps of match_process() ----------------------------------------- */

/* Bottom-up from the leaves: fills m->state, n_done, height, dc and parent
 * for every region and puts candidate roots in m->cands; returns their
 * number. In the first round (m->again false) it also resets m->claimed
 * and m->flags from the tree and collects m->seeds. */
int32_t match_candidates_find(struct match *m, const struct region_tree *t);

/* Decodes the n_cands candidates in m->cands into out (symbols, then the
 * fuzzy ones not part of a symbol) and marks their regions in m->claimed. */
void match_candidates_decode(struct match *m, const struct region_tree *t, int32_t n_cands,
			     struct detections *out);

/* Decodes the candidate at root, of the given height and node count (a
 * whole or fuzzy one, or what is left of an over-full one), into out:
 * a symbol, or else a fuzzy one (not in the second round, m->again). */
void match_tree_decode(struct match *m, const struct region_tree *t, int32_t root, int height, int nodes,
		       struct detections *out);

/* A fuzzy tree's completion (complete.c): canon is a canonical string
 * with colour letter; the ID (and in *nodes its node count) of the one tree of the set, of the same colour
 * and 1 to COMPLETE_MAX_MISSING nodes more, that holds it with some of its
 * descendants taken away (the fuzzy tree's children one to one in its
 * children, each held in its own, down to the leaves), or -1 when no tree
 * or more than one does, or when the fuzzy tree has fewer than
 * COMPLETE_MIN_NODES nodes. Motion streaks and blur take nodes away (a
 * hole filled, a dot erased, two leaves merged); they seldom add one. The
 * floor keeps it to big trees: the fewer nodes a tree has, the likelier a
 * damaged small one, or a foreign structure, fits a single tree of a small
 * set (a set of a few trees, or reacTIVision's mini set of 10 nodes). */
#define COMPLETE_MAX_MISSING 2
#define COMPLETE_MIN_NODES 16
int32_t match_complete(const struct match *m, const char *canon, int *nodes);

/* The hairline round after the first decode: rebuilds the lists around
 * saturated regions and specks, then decodes again on them; adds only
 * decoded symbols to out (dropping a first-round fuzzy one at the place of
 * a new symbol). A tree with overflow or without runs is left alone. */
void match_repair_round(struct match *m, const struct region_tree *t, struct detections *out);

/* Root regions worth tracking into out->roots (see match.h); reads the
 * tree alone. */
void match_roots_find(const struct match *m, const struct region_tree *t,
		      struct detections *out);

/* Marks in m->claimed the regions inside the bounding box of a decoded or
 * fuzzy symbol's root, for the finger and blob classifiers. */
void match_claim_boxes(struct match *m, const struct region_tree *t,
		       const struct detections *out);

#endif
