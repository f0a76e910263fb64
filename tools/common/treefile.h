/*
 * treefile.h - .trees files for the tools: raw tokens with line numbers,
 * canonical strings of any depth, and the structural distance between
 * depth-2 trees (../shared/spec/amoeba.md §3, §4).
 *
 * The daemon reads sets through src/fiducial/trees.h, which stops at the
 * first bad token; the tools need every token as written (to report all
 * problems at once, to render sets that the daemon would refuse), hence this
 * small separate reader.
 *
 * Structural distance ("leaf distance"): the least number of leaf
 * insertions and deletions (a dot gaining a hole, a hole filling in, a dot
 * vanishing, a stray dot appearing) that turns one depth-<=2 tree into the
 * other. A depth-2 tree is the multiset of its children's hole counts
 * (0 = dot); with both lists sorted in descending order and the shorter
 * padded with -1 (an absent child: removing a child with h holes costs
 * h + 1), the distance is sum |a_i - b_i| (sorted matching is optimal for
 * an L1 cost on a line). Trees of equal node count are an even distance
 * apart. Trees of different root colour are never confused (-1).
 *
 * Memory: treefile_read() allocates the token table (treefile_free()).
 */
#ifndef TT_TOOLS_TREEFILE_H
#define TT_TOOLS_TREEFILE_H

#include <stddef.h>

#define TREEFILE_MAX_TOKEN 256
#define TREEFILE_MAX_TOKENS 65536

struct treefile {
	int n;
	char **tokens;  /* as written in the file, NUL-terminated */
	int *lines;     /* 1-based line of each token */
};

/* Reads every whitespace-separated token. Returns 0, ERR_IO (logged),
 * ERR_RANGE (token longer than TREEFILE_MAX_TOKEN or too many tokens),
 * ERR_NOMEM. */
int treefile_read(const char *path, struct treefile *tf);
void treefile_free(struct treefile *tf);  /* NULL-safe */

/* Canonical form (with colour letter; bare means `w`) of a token of any
 * depth. Returns 0, ERR_FORMAT (not a tree string) or ERR_RANGE (longer
 * than cap - 1 or than TREEFILE_MAX_TOKEN). */
int treefile_canonical(const char *token, char *buf, size_t cap);
/* Nodes and depth of a valid tree token. Returns 0 or ERR_FORMAT. */
int treefile_info(const char *token, int *nodes, int *depth);
/* Children's hole counts, descending, of a depth <= 2 token; returns the
 * child count, ERR_FORMAT, ERR_UNSUPPORTED (deeper) or ERR_RANGE (> cap). */
int treefile_holes(const char *token, int *holes, int cap);
/* Leaf distance (above) of two depth <= 2 tokens; -1 when the colours
 * differ or either is not a depth <= 2 tree. */
int treefile_distance(const char *a, const char *b);
/* The leaf distance between two descending hole lists. */
int treefile_holes_distance(const int *a, int na, const int *b, int nb);

#endif
