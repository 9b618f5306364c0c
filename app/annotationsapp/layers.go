package annotationsapp

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/claims"
	"github.com/petal-near/petal/domain/datasets"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/ports"
)

// LayerService is layers and dataset versions (docs/annotations.md): its
// tools are keep_layer, list_layers and fork_dataset. Writes take the owner
// or a continue link; reads any link.
type LayerService struct {
	annotations *AnnotationService
	store       ports.LayerStore
	library     *snapshotsapp.SnapshotLibrary
	kept        ports.Counter // documents kept, by kind and outcome
}

// NewLayerService makes the layer service.
func NewLayerService(annotations *AnnotationService, store ports.LayerStore, library *snapshotsapp.SnapshotLibrary, metrics ports.Metrics) *LayerService {
	return &LayerService{annotations: annotations, store: store, library: library,
		kept: ports.MetricsOrNone(metrics).Counter("petal_dataset_documents_total",
			"Layers and dataset versions kept, by kind (layer, version) and outcome (added, existed: the same content kept before).", "kind", "outcome")}
}

// count notes one document kept.
func (s *LayerService) count(kind string, existed bool) {
	outcome := "added"
	if existed {
		outcome = "existed"
	}
	s.kept.Add(1, kind, outcome)
}

// LayerView is a kept layer as every door answers it.
type LayerView struct {
	Hash string `json:"hash"`
	datasets.Layer
	Exploration string    `json:"exploration"`
	CreatedAt   time.Time `json:"created_at"`
}

// VersionView is a kept dataset version: its change from its parent, and how
// many accounts its list holds.
type VersionView struct {
	Hash string `json:"hash"`
	datasets.Version
	Accounts    int       `json:"accounts"`
	Exploration string    `json:"exploration"`
	CreatedAt   time.Time `json:"created_at"`
}

// LayersAnswer is list_layers' answer, one of three shapes: one layer or
// one version whole (asked by hash), or a page of both. The shape answered
// is the one embed that is not nil (encoding/json leaves a nil one out).
type LayersAnswer struct {
	*OneLayer
	*OneVersion
	*LayersPage
}

// OneLayer is one layer whole.
type OneLayer struct {
	Layer LayerView `json:"layer"`
}

// OneVersion is one dataset version whole.
type OneVersion struct {
	Version VersionView `json:"version"`
}

// LayersPage is a page of the owner's layers and versions, with one cursor
// for both lists.
type LayersPage struct {
	Layers     []LayerView   `json:"layers"`
	Versions   []VersionView `json:"versions"`
	NextCursor *string       `json:"next_cursor" jsonschema:"the cursor of the next page; null on the last"`
}

// RefineSchema: the answer is one of its three shapes, each with its fields
// required, not one object holding all five.
func (LayersAnswer) RefineSchema(s *jsonschema.Schema) {
	shape := func(names ...string) *jsonschema.Schema {
		o := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}, Required: names}
		for _, n := range names {
			o.Properties[n] = toolkit.Property(s, n)
		}
		return o
	}
	s.OneOf = []*jsonschema.Schema{shape("layer"), shape("version"), shape("layers", "versions", "next_cursor")}
	s.Properties, s.Required, s.AdditionalProperties = nil, nil, nil
}

// KeptLayer is keep_layer's answer: the layer, the version it makes, and
// how many of its claims were new.
type KeptLayer struct {
	Layer   LayerView   `json:"layer"`
	Version VersionView `json:"version"`
	Added   int         `json:"added"`
	Existed int         `json:"existed"`
}

// Forked is fork_dataset's answer.
type Forked struct {
	Version VersionView `json:"version"`
	Existed bool        `json:"existed"`
}

type (
	keepLayerInput struct {
		Exploration string         `json:"exploration" jsonschema:"the exploration's id, or a continue link's token"`
		About       string         `json:"about" jsonschema:"the address the layer is about (CAIP-10)"`
		Snapshot    string         `json:"snapshot" jsonschema:"the stored reading the layer is read against, by its sha256"`
		Title       string         `json:"title,omitempty" jsonschema:"what the layer is, in a few words"`
		Annotations []claims.Input `json:"annotations" jsonschema:"1 to 100 claims about accounts (claim/v2 without id and by)"`
		As          string         `json:"as,omitempty" jsonschema:"on a continue link, the agent writing: by becomes tool:<as>@1"`
	}
	listLayersInput struct {
		Exploration string `json:"exploration" jsonschema:"the exploration's id, or a link's token"`
		About       string `json:"about,omitempty" jsonschema:"an address (CAIP-10): the owner's layers and versions about it, from any of their projects"`
		Hash        string `json:"hash,omitempty" jsonschema:"one layer or version, whole, by its hash"`
		Cursor      string `json:"cursor,omitempty" jsonschema:"the next_cursor of the page before"`
		Limit       int    `json:"limit,omitempty" jsonschema:"layers, and versions, on a page: 1 to 100, 50 when not given"`
	}
	forkDatasetInput struct {
		Exploration string   `json:"exploration" jsonschema:"the exploration's id, or a continue link's token"`
		Version     string   `json:"version" jsonschema:"the hash of one of the owner's dataset versions, the new one's parent"`
		Add         []string `json:"add,omitempty" jsonschema:"accounts (CAIP-10) to add, at most 1000"`
		Drop        []string `json:"drop,omitempty" jsonschema:"accounts (CAIP-10) to drop, at most 1000"`
	}
)

func (keepLayerInput) RefineSchema(s *jsonschema.Schema) {
	a := toolkit.Property(s, "annotations")
	a.MinItems, a.MaxItems = jsonschema.Ptr(1), jsonschema.Ptr(claims.MaxPerRequest)
	RefineClaimInput(a.Items)
	toolkit.Property(s, "snapshot").Pattern = toolkit.Sha256Pattern
	toolkit.Property(s, "about").MaxLength = jsonschema.Ptr(200)
	toolkit.Property(s, "title").MaxLength = jsonschema.Ptr(datasets.MaxTitleChars)
	toolkit.Property(s, "as").Pattern = `^[a-z0-9][-a-z0-9_]{0,31}$`
}

func (listLayersInput) RefineSchema(s *jsonschema.Schema) {
	limit := toolkit.Property(s, "limit")
	limit.Minimum, limit.Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(100.0)
	toolkit.Property(s, "hash").Pattern = toolkit.Sha256Pattern
	toolkit.Property(s, "about").MaxLength = jsonschema.Ptr(200)
}

func (forkDatasetInput) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "version").Pattern = toolkit.Sha256Pattern
	for _, name := range []string{"add", "drop"} {
		p := toolkit.Property(s, name)
		p.MaxItems = jsonschema.Ptr(datasets.MaxChange)
		p.Items.MaxLength = jsonschema.Ptr(200)
	}
}

// Tools implements ToolSet.
func (s *LayerService) Tools() []toolkit.Tool {
	return []toolkit.Tool{
		toolkit.WithIO(toolkit.Tool{
			Name: "keep_layer",
			Description: "Keep a layer (layer/v1): annotations about accounts read against one stored snapshot, privately under the project's owner, " +
				"and the dataset version (dataset/v1) it makes: the snapshot's accounts with those the claims speak of added. Both named by the SHA-256 of their canonical JSON.",
		}, s.keep),
		toolkit.WithIO(toolkit.Tool{
			Name:        "list_layers",
			Description: "The owner's layers and dataset versions about an address (about), or this project's; or one layer or version whole (hash).",
		}, s.list),
		toolkit.WithIO(toolkit.Tool{
			Name:        "fork_dataset",
			Description: "A new dataset version from one of the owner's, with accounts added or dropped, naming it as parent; content-addressed, so the same fork twice is one version.",
		}, s.fork),
	}
}

func (s *LayerService) keep(ctx context.Context, call toolkit.Call, in keepLayerInput) (KeptLayer, error) {
	if in.As != "" && !claims.ValidAs(in.As) {
		return KeptLayer{}, errs.New(errs.BadInput, "as must be 1 to 32 lower-case letters, digits, - or _")
	}
	if err := snapshotsapp.CheckSHA256("snapshot", in.Snapshot); err != nil {
		return KeptLayer{}, err
	}
	e, access, err := s.annotations.explorations.Resolve(ctx, in.Exploration, call.Caller, explorations.ContinueAccess)
	if err != nil {
		return KeptLayer{}, err
	}
	by, via, err := s.annotations.answerer(ctx, call.Caller, access, in.As)
	if err != nil {
		return KeptLayer{}, err
	}
	cs, err := makeClaims(in.Annotations, by, via)
	if err != nil {
		return KeptLayer{}, err
	}
	ids, subjects := make([]string, len(cs)), make([]string, len(cs))
	for i, c := range cs {
		ids[i], subjects[i] = c.ID, c.Subject
	}
	layer, err := datasets.NewLayer(in.About, in.Snapshot, in.Title, ids)
	if err != nil {
		return KeptLayer{}, err
	}
	inSnapshot, count, err := s.snapshotAccounts(ctx, in.Snapshot)
	if err != nil {
		return KeptLayer{}, err
	}
	lh, err := datasets.Name(layer)
	if err != nil {
		return KeptLayer{}, err
	}
	version, err := datasets.LayerVersion(layer, lh, subjects, inSnapshot)
	if err != nil {
		return KeptLayer{}, err
	}
	vh, err := datasets.Name(version)
	if err != nil {
		return KeptLayer{}, err
	}
	now := s.annotations.now()
	kl := ports.KeptLayer{Hash: lh, Layer: layer, Exploration: e.ID, CreatedAt: now}
	kv := ports.KeptVersion{Hash: vh, Version: version, Count: count + len(version.Add), Exploration: e.ID, CreatedAt: now}
	refund, err := s.annotations.budget.Spend(ctx, e.Owner, docBytes(layer)+docBytes(version))
	if err != nil {
		return KeptLayer{}, err
	}
	// The claims first, then the layer naming them: a retry after a failure
	// between the two finds the claims kept and keeps the layer.
	added, err := s.annotations.keep(ctx, e.Owner, ports.AnnotationScope{Exploration: e.ID}, cs)
	if err != nil {
		refund()
		return KeptLayer{}, err
	}
	layerExisted, versionExisted, err := s.store.KeepLayer(ctx, kl, kv)
	if err != nil {
		refund()
		return KeptLayer{}, err
	}
	s.count("layer", layerExisted)
	s.count("version", versionExisted)
	return KeptLayer{layerView(kl), versionView(kv), added.Added, added.Existed}, nil
}

// docBytes is what a kept document costs against the data budget.
func docBytes(v any) int64 {
	b, _ := json.Marshal(v)
	return snapshotsapp.RowBytes + int64(len(b))
}

// snapshotAccounts reads a stored snapshot's accounts: whether it holds one,
// and how many.
func (s *LayerService) snapshotAccounts(ctx context.Context, sha string) (func(string) bool, int, error) {
	loaded, err := s.library.Load(ctx, sha)
	if errs.Is(err, errs.NotFound) {
		return nil, 0, errs.Newf(errs.BadInput, "snapshot: no snapshot %s is stored here", sha).WithHint("post the reading to this exploration first, named by its sha256")
	}
	if err != nil {
		return nil, 0, err
	}
	set := make(map[string]bool, len(loaded.Snapshot.Accounts))
	for _, a := range loaded.Snapshot.Accounts {
		set[a.ID] = true
	}
	return func(a string) bool { return set[a] }, len(set), nil
}

// owners is where an exploration's layers and versions are looked up: its
// owner's, from all their projects, or an unowned one's own.
func owners(e explorations.Exploration) ports.LayerQuery {
	return ports.LayerQuery{Owner: e.Owner, Exploration: e.ID}
}

func (s *LayerService) fork(ctx context.Context, call toolkit.Call, in forkDatasetInput) (Forked, error) {
	e, _, err := s.annotations.explorations.Resolve(ctx, in.Exploration, call.Caller, explorations.ContinueAccess)
	if err != nil {
		return Forked{}, err
	}
	parent, err := s.store.Version(ctx, owners(e), in.Version)
	if errs.Is(err, errs.NotFound) {
		return Forked{}, errs.Newf(errs.NotFound, "no dataset version %s of this project's owner", in.Version).WithHint("list_layers lists them")
	}
	if err != nil {
		return Forked{}, err
	}
	chain := []datasets.Version{parent.Version}
	for at := parent.Version.Parent; at != nil; {
		if len(chain) >= datasets.MaxDepth {
			return Forked{}, errs.Newf(errs.BadInput, "version %s is %d forks from its snapshot, the most a version may be", in.Version, datasets.MaxDepth).
				WithHint("keep a new layer from the snapshot instead")
		}
		up, err := s.store.Version(ctx, owners(e), *at)
		if err != nil {
			return Forked{}, err
		}
		chain = append(chain, up.Version)
		at = up.Version.Parent
	}
	inSnapshot, _, err := s.snapshotAccounts(ctx, parent.Version.Snapshot)
	if err != nil {
		return Forked{}, err
	}
	v, err := datasets.Fork(parent.Version, parent.Hash, in.Add, in.Drop, datasets.Holds(chain, inSnapshot))
	if err != nil {
		return Forked{}, err
	}
	vh, err := datasets.Name(v)
	if err != nil {
		return Forked{}, err
	}
	kv := ports.KeptVersion{Hash: vh, Version: v, Count: parent.Count + len(v.Add) - len(v.Drop), Exploration: e.ID, CreatedAt: s.annotations.now()}
	refund, err := s.annotations.budget.Spend(ctx, e.Owner, docBytes(v))
	if err != nil {
		return Forked{}, err
	}
	existed, err := s.store.KeepVersion(ctx, kv)
	if err != nil {
		refund()
		return Forked{}, err
	}
	s.count("version", existed)
	return Forked{versionView(kv), existed}, nil
}

func (s *LayerService) list(ctx context.Context, call toolkit.Call, in listLayersInput) (LayersAnswer, error) {
	if in.About != "" && !claims.ValidCAIP10(in.About) {
		return LayersAnswer{}, errs.New(errs.BadInput, "about must be an account id (CAIP-10)")
	}
	limit := in.Limit
	if limit == 0 {
		limit = 50
	}
	afterLayer, afterVersion, err := layerCursor(in.Cursor)
	if err != nil {
		return LayersAnswer{}, err
	}
	e, _, err := s.annotations.explorations.Resolve(ctx, in.Exploration, call.Caller, explorations.ReadAccess)
	if err != nil {
		return LayersAnswer{}, err
	}
	q := owners(e)
	if in.Hash != "" {
		if l, err := s.store.Layer(ctx, q, in.Hash); err == nil {
			return LayersAnswer{OneLayer: &OneLayer{Layer: layerView(l)}}, nil
		} else if !errs.Is(err, errs.NotFound) {
			return LayersAnswer{}, err
		}
		v, err := s.store.Version(ctx, q, in.Hash)
		if err != nil {
			return LayersAnswer{}, err
		}
		return LayersAnswer{OneVersion: &OneVersion{Version: versionView(v)}}, nil
	}
	if in.About == "" {
		q.Owner = "" // without about: this project's own
	}
	q.About, q.Limit = in.About, limit+1
	q.AfterSeq = afterLayer
	ls, err := s.store.Layers(ctx, q)
	if err != nil {
		return LayersAnswer{}, err
	}
	q.AfterSeq = afterVersion
	vs, err := s.store.Versions(ctx, q)
	if err != nil {
		return LayersAnswer{}, err
	}
	out := LayersPage{Layers: []LayerView{}, Versions: []VersionView{}}
	// One cursor for both lists: where each stopped, so the next page
	// repeats nothing of either.
	more := len(ls) > limit || len(vs) > limit
	for i, l := range ls {
		if i == limit {
			break
		}
		out.Layers, afterLayer = append(out.Layers, layerView(l)), l.Seq
	}
	for i, v := range vs {
		if i == limit {
			break
		}
		out.Versions, afterVersion = append(out.Versions, versionView(v)), v.Seq
	}
	if more {
		next := strconv.FormatInt(afterLayer, 10) + "." + strconv.FormatInt(afterVersion, 10)
		out.NextCursor = &next
	}
	return LayersAnswer{LayersPage: &out}, nil
}

// layerCursor reads list_layers' cursor: the last layer's and the last
// version's place, "<layer>.<version>".
func layerCursor(c string) (int64, int64, error) {
	if c == "" {
		return 0, 0, nil
	}
	bad := errs.New(errs.BadInput, "cursor is not one this site gave", "send next_cursor back as it came")
	l, v, ok := strings.Cut(c, ".")
	if !ok {
		return 0, 0, bad
	}
	a, err1 := strconv.ParseInt(l, 10, 64)
	b, err2 := strconv.ParseInt(v, 10, 64)
	if err1 != nil || err2 != nil || a < 0 || b < 0 {
		return 0, 0, bad
	}
	return a, b, nil
}

func layerView(k ports.KeptLayer) LayerView {
	return LayerView{Hash: k.Hash, Layer: k.Layer, Exploration: k.Exploration, CreatedAt: k.CreatedAt}
}

func versionView(k ports.KeptVersion) VersionView {
	return VersionView{Hash: k.Hash, Version: k.Version, Accounts: k.Count, Exploration: k.Exploration, CreatedAt: k.CreatedAt}
}
