package ports

import (
	"context"
	"time"

	"github.com/petal-near/petal/domain/claims"
)

// Annotation is one kept claim/v2 and where it is kept: an exploration (its
// owner's, whoever that is now), or a person's own in no project.
type Annotation struct {
	Claim       claims.Claim
	Exploration string // "" for one kept in no project
	Owner       string // the person, for one in no project; "" otherwise
	AddedAt     time.Time
	Seq         int64 // the order it was kept in, site-wide: the lists' cursor
}

// AnnotationScope is where Add keeps claims: an exploration, or (Exploration
// "") a person's own.
type AnnotationScope struct {
	Exploration string
	Owner       string
}

// AnnotationQuery filters what an owner keeps: About a subject, a Verb, after
// the cursor AfterSeq, at most Limit.
type AnnotationQuery struct {
	About, Verb string
	AfterSeq    int64
	Limit       int
}

// AnnotationStore keeps annotations (migrations/000022_annotations).
type AnnotationStore interface {
	// Add keeps cs in scope, in their order, all or none: existed[i] says
	// whether cs[i] was kept there already (by its id), and then it is not
	// kept again. Past claims.MaxPerProject in the scope nothing is kept and
	// the error is bad_input.
	Add(ctx context.Context, scope AnnotationScope, cs []claims.Claim, at time.Time) (existed []bool, err error)
	// InExploration is an exploration's annotations, oldest first, as q
	// filters them.
	InExploration(ctx context.Context, exploration string, q AnnotationQuery) ([]Annotation, error)
	// OfOwner is everything owner keeps, in their explorations and in none,
	// oldest first, as q filters it.
	OfOwner(ctx context.Context, owner string, q AnnotationQuery) ([]Annotation, error)
}
