package annotationsapp

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/petal-near/petal/app/explorationsapp"
	"github.com/petal-near/petal/app/flowersapp"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/claims"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/ports"
)

// AnnotationService is annotations: claims (claim/v2) people and their agents
// keep about accounts, privately under the project's owner
// (docs/annotations.md). Its tools are add_annotation and list_annotations;
// a person's own (/me/annotations) and the names drawn on their petals read
// the same store.
type AnnotationService struct {
	explorations *explorationsapp.ExplorationService
	store        ports.AnnotationStore
	sessions     ports.SessionStore
	wallets      WalletReader
	runs         ports.RunStore
	budget       *snapshotsapp.DataBudget
	clock        ports.Clock
	kept         ports.Counter // claims sent, by outcome: added, existed or refused
}

// WalletReader opens a person's wallets (the sign-in service).
type WalletReader interface {
	WalletsOf(ctx context.Context, personID string) ([]people.Wallet, error)
}

// NewAnnotationService makes the annotation service; the flowers draw the
// names a signed-in person gives petals from it. wallets may be nil where no
// door has sessions (stdio MCP): then nobody's account answers for a claim.
func NewAnnotationService(ex *explorationsapp.ExplorationService, store ports.AnnotationStore, sessions ports.SessionStore, wallets WalletReader,
	runs ports.RunStore, budget *snapshotsapp.DataBudget, clock ports.Clock, flowers *flowersapp.FlowerService, metrics ports.Metrics) *AnnotationService {
	s := &AnnotationService{explorations: ex, store: store, sessions: sessions, wallets: wallets, runs: runs, budget: budget, clock: clock,
		kept: ports.MetricsOrNone(metrics).Counter("petal_annotations_total",
			"Annotations sent to be kept, by outcome: added, existed (kept before, by content) or refused (the whole request kept nothing).", "outcome")}
	if flowers != nil {
		flowers.DrawNamesFrom(s)
	}
	return s
}

// AgentVia is who a claim Petals' agent keeps came through.
const AgentVia = "tool:petals-agent@1"

// Annotation is one kept annotation as every door answers it.
type Annotation struct {
	Claim       claims.Claim `json:"claim"`
	Exploration *string      `json:"exploration"`
	AddedAt     time.Time    `json:"added_at"`
}

// Added is add_annotation's answer: how many were new, how many were kept
// already, and every claim's id in the order sent.
type Added struct {
	Added   int      `json:"added"`
	Existed int      `json:"existed"`
	IDs     []string `json:"ids"`
}

// AnnotationList is a page of annotations; NextCursor, when not null, reads
// the next.
type AnnotationList struct {
	Annotations []Annotation `json:"annotations"`
	NextCursor  *string      `json:"next_cursor"`
}

// Page sizes of the lists.
const (
	annotationPageDefault = 100
	annotationPageMax     = 500
	// namesRead bounds the named claims read to draw one person's petals.
	namesRead = 2 * claims.MaxPerProject
)

type (
	addAnnotationInput struct {
		Exploration string         `json:"exploration" jsonschema:"the exploration's id, or a continue link's token"`
		Annotations []claims.Input `json:"annotations" jsonschema:"one to 100 claims (claim/v2 without id and by), kept all or none"`
		As          string         `json:"as,omitempty" jsonschema:"on a continue link, the agent writing: by becomes tool:<as>@1"`
	}
	listAnnotationsInput struct {
		Exploration string `json:"exploration" jsonschema:"the exploration's id, or a link's token"`
		About       string `json:"about,omitempty" jsonschema:"an account (CAIP-10): everything the owner keeps about it, from any of their projects"`
		Cursor      string `json:"cursor,omitempty" jsonschema:"the next_cursor of the page before"`
		Limit       int    `json:"limit,omitempty" jsonschema:"how many, 1 to 500, 100 when not given"`
	}
)

func (addAnnotationInput) RefineSchema(s *jsonschema.Schema) {
	a := toolkit.Property(s, "annotations")
	a.MinItems, a.MaxItems = jsonschema.Ptr(1), jsonschema.Ptr(claims.MaxPerRequest)
	RefineClaimInput(a.Items)
	toolkit.Property(s, "as").Pattern = `^[a-z0-9][-a-z0-9_]{0,31}$`
}

// RefineClaimInput narrows the generated schema of a claims.Input.
func RefineClaimInput(item *jsonschema.Schema) {
	toolkit.Property(item, "subject").MaxLength = jsonschema.Ptr(200)
	toolkit.Property(item, "verb").Pattern = `^[a-z][a-z0-9_]{0,31}$`
	toolkit.Property(item, "kind").Enum = []any{claims.Stated, claims.Observed, claims.Inferred}
	toolkit.Property(item, "object").Type = "object"
	evidence := toolkit.Property(item, "evidence")
	evidence.Types, evidence.Items = []string{"array", "null"}, anyJSON()
	evidence.MaxItems = jsonschema.Ptr(claims.MaxEvidence)
}

// anyJSON is an evidence item: any JSON value.
func anyJSON() *jsonschema.Schema { return &jsonschema.Schema{Description: "any JSON value"} }

// RefineSchema: a kept claim's object is a JSON object and its evidence an
// array (Make writes [] for none), which their json.RawMessage can't say.
func (Annotation) RefineSchema(s *jsonschema.Schema) {
	c := toolkit.Property(s, "claim")
	toolkit.Property(c, "kind").Enum = []any{claims.Stated, claims.Observed, claims.Inferred}
	object := toolkit.Property(c, "object")
	object.Type, object.Description = "object", "what is said; named and noted hold { value }"
	evidence := toolkit.Property(c, "evidence")
	evidence.Type, evidence.Items, evidence.Description = "array", anyJSON(), "why: at most 16 items"
}

func (listAnnotationsInput) RefineSchema(s *jsonschema.Schema) {
	limit := toolkit.Property(s, "limit")
	limit.Minimum, limit.Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(float64(annotationPageMax))
	toolkit.Property(s, "about").MaxLength = jsonschema.Ptr(200)
}

// Tools implements ToolSet.
func (s *AnnotationService) Tools() []toolkit.Tool {
	return []toolkit.Tool{
		toolkit.WithIO(toolkit.Tool{
			Name:            "add_annotation",
			HiddenFromAgent: true, // Petals' agent has its own annotate
			Description: "Keep claims about accounts (claim/v2: subject CAIP-10, verb, object, kind stated | observed | inferred, evidence) privately under the project's owner, " +
				"all or none. by comes from the door: the signed-in owner's account, or tool:<as>@1 on a continue link. The same claim twice is kept once. " +
				"named { value } is the name the owner's petals carry for that account.",
		}, s.add),
		toolkit.WithIO(toolkit.Tool{
			Name:        "list_annotations",
			Description: "An exploration's annotations, oldest first and in the order sent; with about, everything its owner keeps about that account, from any of their projects.",
		}, s.list),
	}
}

func (s *AnnotationService) add(ctx context.Context, call toolkit.Call, in addAnnotationInput) (Added, error) {
	if in.As != "" && !claims.ValidAs(in.As) {
		return Added{}, errs.New(errs.BadInput, "as must be 1 to 32 lower-case letters, digits, - or _")
	}
	// Access first: anyone without it learns nothing from how claims fail.
	e, access, err := s.explorations.Resolve(ctx, in.Exploration, call.Caller, explorations.ContinueAccess)
	if err != nil {
		return Added{}, err
	}
	by, via, err := s.answerer(ctx, call.Caller, access, in.As)
	if err != nil {
		return Added{}, err
	}
	cs, err := makeClaims(in.Annotations, by, via)
	if err != nil {
		return Added{}, err
	}
	return s.keep(ctx, e.Owner, ports.AnnotationScope{Exploration: e.ID}, cs)
}

// answerer is who answers for claims sent to an exploration: the signed-in
// owner's account (via Petals' agent when it writes), or on a link or an
// unowned exploration the agent named by as.
func (s *AnnotationService) answerer(ctx context.Context, caller toolkit.Caller, access explorations.Access, as string) (by, via string, err error) {
	if access == explorations.OwnerAccess && people.IsPerson(caller.Subject) {
		account, err := s.account(ctx, caller)
		if err != nil {
			return "", "", err
		}
		if account != "" {
			if caller.Door == toolkit.DoorAgent {
				via = AgentVia
			}
			return account, via, nil
		}
	}
	if caller.Door == toolkit.DoorAgent {
		return AgentVia, "", nil
	}
	if as == "" {
		as = "anonymous"
	}
	return claims.ToolBy(as), "", nil
}

// account is the CAIP-10 account of the wallet the caller's session signed in
// with, "" for a session without one.
func (s *AnnotationService) account(ctx context.Context, caller toolkit.Caller) (string, error) {
	if caller.Session == "" || !people.IsPerson(caller.Subject) || s.wallets == nil {
		return "", nil
	}
	sess, err := s.sessions.Session(ctx, caller.Session)
	if errs.Is(err, errs.NotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if sess.WalletID == "" || sess.Subject != caller.Subject {
		return "", nil
	}
	ws, err := s.wallets.WalletsOf(ctx, caller.Subject)
	if err != nil {
		return "", err
	}
	for _, w := range ws {
		if w.ID == sess.WalletID {
			return w.View().CAIP10, nil
		}
	}
	return "", nil
}

// makeClaims checks every input before anything is kept: one bad claim
// refuses the request.
func makeClaims(in []claims.Input, by, via string) ([]claims.Claim, error) {
	if len(in) == 0 || len(in) > claims.MaxPerRequest {
		return nil, errs.Newf(errs.BadInput, "annotations must hold 1 to %d claims, not %d", claims.MaxPerRequest, len(in))
	}
	out := make([]claims.Claim, 0, len(in))
	for i, x := range in {
		c, err := claims.Make(i, x, by, via)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// keep stores claims in scope, counting against the data budget when owner
// isn't a signed-in person; a refusal stores nothing and spends nothing.
func (s *AnnotationService) keep(ctx context.Context, owner string, scope ports.AnnotationScope, cs []claims.Claim) (Added, error) {
	size := int64(0)
	for _, c := range cs {
		b, _ := json.Marshal(c)
		size += snapshotsapp.RowBytes + int64(len(b))
	}
	refund, err := s.budget.Spend(ctx, owner, size)
	if err != nil {
		s.kept.Add(float64(len(cs)), "refused")
		return Added{}, err
	}
	existed, err := s.store.Add(ctx, scope, cs, s.now())
	if err != nil {
		s.kept.Add(float64(len(cs)), "refused")
		refund()
		if errs.Is(err, errs.BadInput) && scope.Exploration == "" {
			return Added{}, errs.Newf(errs.BadInput, "you already keep %d annotations outside any conversation, the most one may", claims.MaxPerProject).
				WithHint("keep them in a conversation (conversation: a run id or an exploration id of yours)")
		}
		return Added{}, err
	}
	out := Added{IDs: make([]string, len(cs))}
	for i, c := range cs {
		out.IDs[i] = c.ID
		if existed[i] {
			out.Existed++
		} else {
			out.Added++
		}
	}
	s.kept.Add(float64(out.Added), "added")
	s.kept.Add(float64(out.Existed), "existed")
	return out, nil
}

func (s *AnnotationService) list(ctx context.Context, call toolkit.Call, in listAnnotationsInput) (AnnotationList, error) {
	after, limit, err := annotationPage(in.Cursor, in.Limit)
	if err != nil {
		return AnnotationList{}, err
	}
	if in.About != "" && !claims.ValidCAIP10(in.About) {
		return AnnotationList{}, errs.New(errs.BadInput, "about must be a CAIP-10 account id", "such as near:mainnet:alice.near")
	}
	e, _, err := s.explorations.Resolve(ctx, in.Exploration, call.Caller, explorations.ReadAccess)
	if err != nil {
		return AnnotationList{}, err
	}
	var got []ports.Annotation
	if in.About != "" && e.Owner != "" {
		got, err = s.store.OfOwner(ctx, e.Owner, ports.AnnotationQuery{About: in.About, AfterSeq: after, Limit: limit + 1})
	} else {
		got, err = s.store.InExploration(ctx, e.ID, ports.AnnotationQuery{About: in.About, AfterSeq: after, Limit: limit + 1})
	}
	if err != nil {
		return AnnotationList{}, err
	}
	return annotationList(got, limit), nil
}

// annotationPage reads a list's cursor (the last seq read) and limit.
func annotationPage(cursor string, limit int) (int64, int, error) {
	var after int64
	if cursor != "" {
		n, err := strconv.ParseInt(cursor, 10, 64)
		if err != nil || n < 0 {
			return 0, 0, errs.New(errs.BadInput, "cursor is not one this site gave", "send next_cursor back as it came")
		}
		after = n
	}
	switch {
	case limit == 0:
		limit = annotationPageDefault
	case limit < 1 || limit > annotationPageMax:
		return 0, 0, errs.Newf(errs.BadInput, "limit must be 1 to %d", annotationPageMax)
	}
	return after, limit, nil
}

func annotationList(got []ports.Annotation, limit int) AnnotationList {
	out := AnnotationList{Annotations: []Annotation{}}
	for i, a := range got {
		if i == limit {
			next := strconv.FormatInt(got[i-1].Seq, 10)
			out.NextCursor = &next
			break
		}
		out.Annotations = append(out.Annotations, annotationView(a))
	}
	return out
}

func annotationView(a ports.Annotation) Annotation {
	v := Annotation{Claim: a.Claim, AddedAt: a.AddedAt}
	if a.Exploration != "" {
		e := a.Exploration
		v.Exploration = &e
	}
	return v
}

func (s *AnnotationService) now() time.Time { return s.clock.Now().UTC().Truncate(time.Microsecond) }

// NamedSet is the names a person's petals carry and the hash of their named
// claims' ids (oldest first): what a picture's address carries as &names=,
// so a cached picture is never another set's. A visitor has none and "".
func (s *AnnotationService) NamedSet(ctx context.Context, subject string) (map[string]string, string, error) {
	if !people.IsPerson(subject) {
		return nil, "", nil
	}
	got, err := s.store.OfOwner(ctx, subject, ports.AnnotationQuery{Verb: claims.VerbNamed, Limit: namesRead})
	if err != nil || len(got) == 0 {
		return nil, "", err
	}
	named := make([]claims.Claim, 0, len(got))
	ids := make([]string, 0, len(got))
	for _, a := range got {
		named, ids = append(named, a.Claim), append(ids, a.Claim.ID)
	}
	return claims.Names(named), claims.NamesHash(ids), nil
}

// PetalNames implements PetalNamer: the names a signed-in person gives
// accounts (their named claims, the newest for each), for render_flower
// through the HTTP door, whose answer is then private. Anyone else, and any
// other door, gets none.
func (s *AnnotationService) PetalNames(ctx context.Context, caller toolkit.Caller) (map[string]string, error) {
	if caller.Door != toolkit.DoorHTTP {
		return nil, nil
	}
	names, _, err := s.NamedSet(ctx, caller.Subject)
	return names, err
}
