package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/ports"
)

// SearchRepository reads search_docs (migrations/000032_search), which the
// database keeps from the map's and people's tables by triggers.
type SearchRepository struct{ db *DB }

var _ ports.SearchStore = (*SearchRepository)(nil)

// NewSearchRepository makes the store over db.
func NewSearchRepository(db *DB) *SearchRepository { return &SearchRepository{db: db} }

// headlineOptions: a snippet of about 12 to 30 words around the matches,
// the matches in ** (Markdown bold, which agents and pages both read).
const headlineOptions = `StartSel=**, StopSel=**, MinWords=12, MaxWords=30, MaxFragments=2, FragmentDelimiter=" … "`

// Search implements ports.SearchStore: one GIN lookup of the words and the
// caller's scope, the visible rows ranked, a page cut, and only that page's snippets made.
func (r *SearchRepository) Search(ctx context.Context, q ports.SearchQuery) ([]ports.SearchHit, error) {
	var tsq string
	switch {
	case q.Words != "" && q.Prefix != "":
		tsq = `websearch_to_tsquery('simple', $1) && to_tsquery('simple', $2 || ':*')`
	case q.Prefix != "":
		tsq = `to_tsquery('simple', $2 || ':*')`
	case q.Words != "":
		tsq = `websearch_to_tsquery('simple', $1)`
	default:
		return nil, nil
	}
	var owner *string
	if q.Owner != "" {
		owner = &q.Owner
	}
	after := q.After
	if after == nil {
		after = &ports.SearchCursor{}
	}
	kinds := q.Kinds
	if len(kinds) == 0 {
		kinds = ports.SearchKinds
	}
	rows, err := r.db.Pool.Query(ctx, `WITH q AS (SELECT `+tsq+` AS q, $1::text AS words, $2::text AS prefix,
    -- whose rows may match, read by the GIN index itself (migration 35)
    CASE WHEN $4::text IS NULL THEN '''# public'''::tsquery
         ELSE '''# public'''::tsquery || ('''# ' || md5($4) || '''')::tsquery END AS scope)
SELECT p.kind, p.ref, p.id, p.title,
       ts_headline('simple', CASE WHEN p.body = '' THEN p.title ELSE p.body END, q.q, '`+headlineOptions+`'),
       coalesce(p.map, ''), coalesce(p.exploration, ''), coalesce(p.about, ''), p.at, p.rank
FROM q, (
    SELECT d.kind, d.ref, d.id, d.title, d.body, d.map, d.exploration, d.about, d.at, ts_rank(d.tsv, q.q, 1) AS rank
    FROM search_docs d, q
    WHERE d.tsv @@ (q.q && q.scope)
      AND d.kind = ANY($3)
      AND (d.owner IS NULL OR d.owner = $4)
      AND (d.map IS NULL OR d.map <> ALL($5))
      AND (NOT $6 OR ts_rank(d.tsv, q.q, 1) < $7::real
           OR (ts_rank(d.tsv, q.q, 1) = $7::real AND (d.kind, d.ref) > ($8, $9)))
    ORDER BY rank DESC, d.kind, d.ref
    LIMIT $10
) p
ORDER BY p.rank DESC, p.kind, p.ref`,
		q.Words, q.Prefix, kinds, owner, hiddenOrEmpty(q.Hidden),
		q.After != nil, after.Rank, after.Kind, after.Ref, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: search: %w", err)
	}
	hits, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ports.SearchHit, error) {
		var h ports.SearchHit
		err := row.Scan(&h.Kind, &h.Ref, &h.ID, &h.Title, &h.Snippet, &h.Map, &h.Exploration, &h.About, &h.At, &h.Rank)
		h.At = h.At.UTC()
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: search: %w", err)
	}
	return hits, nil
}
