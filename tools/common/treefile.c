#include "treefile.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/core/err.h"
#include "../../src/core/log.h"

void treefile_free(struct treefile *tf)
{
	if (!tf)
		return;
	for (int i = 0; i < tf->n; i++)
		free(tf->tokens[i]);
	free(tf->tokens);
	free(tf->lines);
	memset(tf, 0, sizeof *tf);
}

static int push_token(struct treefile *tf, int *cap, const char *tok, size_t len, int line)
{
	if (tf->n >= TREEFILE_MAX_TOKENS)
		return ERR_RANGE;
	if (tf->n == *cap) {
		int nc = *cap ? *cap * 2 : 256;
		char **t = realloc(tf->tokens, (size_t)nc * sizeof *t);
		if (!t)
			return ERR_NOMEM;
		tf->tokens = t;
		int *l = realloc(tf->lines, (size_t)nc * sizeof *l);
		if (!l)
			return ERR_NOMEM;
		tf->lines = l;
		*cap = nc;
	}
	char *s = malloc(len + 1);
	if (!s)
		return ERR_NOMEM;
	memcpy(s, tok, len);
	s[len] = 0;
	tf->tokens[tf->n] = s;
	tf->lines[tf->n] = line;
	tf->n++;
	return 0;
}

int treefile_read(const char *path, struct treefile *tf)
{
	memset(tf, 0, sizeof *tf);
	FILE *f = fopen(path, "rb");
	if (!f) {
		log_error("%s: %s", path, strerror(errno));
		return ERR_IO;
	}
	int rc = 0, cap = 0, line = 1, c;
	char tok[TREEFILE_MAX_TOKEN + 1];
	size_t len = 0;
	int tok_line = 1;
	while ((c = fgetc(f)) != EOF) {
		if (isspace(c)) {
			if (len) {
				if ((rc = push_token(tf, &cap, tok, len, tok_line)))
					goto fail;
				len = 0;
			}
			if (c == '\n')
				line++;
			continue;
		}
		if (len == 0)
			tok_line = line;
		if (len >= TREEFILE_MAX_TOKEN) {
			log_error("%s:%d: token longer than %d characters", path, line,
				  TREEFILE_MAX_TOKEN);
			rc = ERR_RANGE;
			goto fail;
		}
		tok[len++] = (char)c;
	}
	if (ferror(f)) {
		log_error("%s: read error", path);
		rc = ERR_IO;
		goto fail;
	}
	if (len && (rc = push_token(tf, &cap, tok, len, tok_line)))
		goto fail;
	fclose(f);
	return 0;
fail:
	fclose(f);
	treefile_free(tf);
	return rc;
}

static int cmp_desc(const void *a, const void *b)
{
	return strcmp(*(const char *const *)b, *(const char *const *)a);
}

/* Canonical string of the node at s[*pos] (depth digit d) into out. */
static int canon_node(const char *s, size_t *pos, char *out, size_t cap)
{
	int d = s[*pos] - '0';
	(*pos)++;
	char *kids[TREEFILE_MAX_TOKEN];
	int n = 0, rc = 0;
	while (s[*pos] && s[*pos] - '0' == d + 1) {
		kids[n] = malloc(TREEFILE_MAX_TOKEN + 1);
		if (!kids[n]) {
			rc = ERR_NOMEM;
			goto done;
		}
		n++;
		if ((rc = canon_node(s, pos, kids[n - 1], TREEFILE_MAX_TOKEN + 1)))
			goto done;
	}
	qsort(kids, (size_t)n, sizeof kids[0], cmp_desc);
	size_t len = 1;
	if (cap < 2) {
		rc = ERR_RANGE;
		goto done;
	}
	out[0] = (char)('0' + d);
	for (int i = 0; i < n; i++) {
		size_t kl = strlen(kids[i]);
		if (len + kl + 1 > cap) {
			rc = ERR_RANGE;
			goto done;
		}
		memcpy(out + len, kids[i], kl);
		len += kl;
	}
	out[len] = 0;
done:
	for (int i = 0; i < n; i++)
		free(kids[i]);
	return rc;
}

int treefile_canonical(const char *token, char *buf, size_t cap)
{
	if (!token || cap < 3)
		return ERR_RANGE;
	const char *s = token;
	char colour = 'w';
	if (*s == 'w' || *s == 'b')
		colour = *s++;
	size_t n = strlen(s);
	if (n == 0 || s[0] != '0')
		return ERR_FORMAT;
	if (n > TREEFILE_MAX_TOKEN)
		return ERR_RANGE;
	for (size_t i = 1; i < n; i++)
		if (s[i] < '1' || s[i] > '9' || s[i] - s[i - 1] > 1)
			return ERR_FORMAT;
	buf[0] = colour;
	size_t pos = 0;
	int rc = canon_node(s, &pos, buf + 1, cap - 1);
	if (rc)
		return rc;
	return pos == n ? 0 : ERR_FORMAT;
}

int treefile_info(const char *token, int *nodes, int *depth)
{
	const char *s = token;
	if (*s == 'w' || *s == 'b')
		s++;
	if (*s != '0')
		return ERR_FORMAT;
	int n = 0, d = 0;
	for (; s[n]; n++) {
		if (s[n] < '0' || s[n] > '9' || (n > 0 && (s[n] == '0' || s[n] - s[n - 1] > 1)))
			return ERR_FORMAT;
		if (s[n] - '0' > d)
			d = s[n] - '0';
	}
	if (nodes)
		*nodes = n;
	if (depth)
		*depth = d;
	return 0;
}

int treefile_holes(const char *token, int *holes, int cap)
{
	int nodes, depth;
	if (treefile_info(token, &nodes, &depth))
		return ERR_FORMAT;
	if (depth > 2)
		return ERR_UNSUPPORTED;
	const char *s = token;
	if (*s == 'w' || *s == 'b')
		s++;
	int n = 0;
	for (int i = 1; s[i]; i++) {
		if (s[i] == '1') {
			if (n >= cap)
				return ERR_RANGE;
			holes[n++] = 0;
		} else {
			holes[n - 1]++;
		}
	}
	for (int i = 1; i < n; i++) {
		int h = holes[i], j = i;
		while (j > 0 && holes[j - 1] < h) {
			holes[j] = holes[j - 1];
			j--;
		}
		holes[j] = h;
	}
	return n;
}

int treefile_holes_distance(const int *a, int na, const int *b, int nb)
{
	int n = na > nb ? na : nb, d = 0;
	for (int i = 0; i < n; i++) {
		int x = i < na ? a[i] : -1, y = i < nb ? b[i] : -1;
		d += x > y ? x - y : y - x;
	}
	return d;
}

int treefile_distance(const char *a, const char *b)
{
	char ca = (*a == 'b') ? 'b' : 'w', cb = (*b == 'b') ? 'b' : 'w';
	if (ca != cb)
		return -1;
	int ha[TREEFILE_MAX_TOKEN], hb[TREEFILE_MAX_TOKEN];
	int na = treefile_holes(a, ha, TREEFILE_MAX_TOKEN);
	int nb = treefile_holes(b, hb, TREEFILE_MAX_TOKEN);
	if (na < 0 || nb < 0)
		return -1;
	return treefile_holes_distance(ha, na, hb, nb);
}
