package snapshotsapp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"golang.org/x/sync/singleflight"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// SnapshotService reads NEAR networks into snapshots and answers about them:
// the tools list_networks, get_network, find_target, get_snapshot and
// describe_snapshot, and the snapshot body route.
type SnapshotService struct {
	cfg     config.Config
	log     *slog.Logger
	store   ports.SnapshotStore
	library *SnapshotLibrary
	daos    ports.DAODirectory
	near    ports.NearContracts
	evm     ports.EVMTokens     // nil: no EVM chain is read
	ftIndex ports.FTHolderIndex // nil: near-ft-holders is refused
	clock   ports.Clock
	slots   ports.Semaphore // fresh reads: PETAL_FRESH_READS at once, one per address
	// refreshing lets one refresh of a chain's DAO list run at a time; the
	// others asking meanwhile get its answer.
	refreshing singleflight.Group

	freshInFlight ports.Gauge
	freshReads    ports.Histogram
}

// ObservedBy declares the service's metrics on m: fresh reads running, and
// how each ended.
func (s *SnapshotService) ObservedBy(m ports.Metrics) *SnapshotService {
	s.freshInFlight = m.Gauge("petal_fresh_reads_in_flight", "Fresh chain reads running now in this process.")
	s.freshReads = m.Histogram("petal_fresh_read_duration_seconds",
		"Fresh chain reads by outcome (ok; no_slot: refused, every slot on the site taken; address_busy: refused, that address has one running; timeout; failed), with their time; _count is the reads.",
		[]float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 60, 120}, "outcome")
	return s
}

// NewSnapshotService makes the snapshot service. It touches no store:
// StoreShipped does.
func NewSnapshotService(cfg config.Config, log *slog.Logger, library *SnapshotLibrary, daos ports.DAODirectory, near ports.NearContracts, clock ports.Clock, slots ports.Semaphore) *SnapshotService {
	s := &SnapshotService{cfg: cfg, log: log, store: library.Store(), library: library, daos: daos, near: near, clock: clock,
		slots: slots}
	return s.ObservedBy(ports.NoMetrics{})
}

// WithEVM gives the service the EVM chains it reads (the chains with an RPC
// setting); without it the EVM readers refuse every chain as unset.
func (s *SnapshotService) WithEVM(e ports.EVMTokens) *SnapshotService {
	s.evm = e
	return s
}

// WithFTHolderIndex gives the service the index near-ft-holders names a
// token's holders from.
func (s *SnapshotService) WithFTHolderIndex(ix ports.FTHolderIndex) *SnapshotService {
	s.ftIndex = ix
	return s
}

// StoreShipped stores the snapshots that ship inside petal, once, with
// origin demo; a process that serves calls it as it starts. A database that
// is down only delays that to the next start, and the body route serves them
// from memory meanwhile.
func (s *SnapshotService) StoreShipped(ctx context.Context) {
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for _, sh := range ShippedSnapshots() {
		if _, err := StoreCanonical(sctx, s.store, sh.Snapshot, sh.SHA256, sh.Canonical, OriginDemo); err != nil {
			s.log.Warn("the snapshots shipped inside petal could not be stored yet", "err", err)
			return
		}
	}
}

// Tools implements ToolSet.
func (s *SnapshotService) Tools() []toolkit.Tool {
	return []toolkit.Tool{
		toolkit.WithIO(toolkit.Tool{
			Name:        "list_networks",
			Description: "The networks petal can read (its readers): each with its id, title, chain, what it reads and the JSON Schema of its params. query filters by words.",
		}, s.listNetworks),
		toolkit.WithIO(toolkit.Tool{
			Name:        "get_network",
			Description: "One network (reader) by id. Given its params too, it also checks them and says the target they make and the newest snapshot stored for it.",
		}, s.getNetwork),
		toolkit.WithIO(toolkit.Tool{
			Name: "find_target",
			Description: "Turn words (\"the marketing DAO\", \"astro stakers\") into candidate targets to read: Sputnik DAOs from the factory's list and known staking pools, " +
				"or, on an EVM chain (eip155:<id>), a contract's address probed at the finalized block (a Baal's members and proposals, an ERC-20's holders, an ERC20Votes token's delegates), " +
				"each with its network and params. ambiguous is true when more than one fits about equally: ask which.",
			OnTheirMachine: true,
		}, s.findTarget),
		toolkit.WithIO(toolkit.Tool{
			Name: "get_snapshot",
			Description: "A snapshot of a network's target: the newest stored one (or the one at names), marked stored_only, unless fresh is asked or none is stored; " +
				"then it reads the chain now. Answers a summary, never the whole body (GET /api/v1/snapshots/:sha256 has it).",
			OnTheirMachine: true,
			Long:           true,
		}, s.getSnapshot),
		toolkit.WithIO(toolkit.Tool{
			Name:        "describe_snapshot",
			Description: "What a stored snapshot holds: its count, total weight, top accounts and groups, with shares as fractions from 0 to 1.",
		}, s.describe),
	}
}

// The snapshot tools' inputs: each tool's input is declared here and nowhere
// else (see WithInput).
type (
	listNetworksInput struct {
		Query string `json:"query,omitempty" jsonschema:"words to filter by, such as dao or staking"`
	}
	// getNetworkInput is a network's id and, optionally, its reader's
	// params, side by side; the reader reads the params as sent.
	getNetworkInput struct {
		ID       string   `json:"id" jsonschema:"the network's id, such as near-dao-members"`
		DAO      string   `json:"dao,omitempty" jsonschema:"a Sputnik DAO's account"`
		Pool     string   `json:"pool,omitempty" jsonschema:"a staking pool's account"`
		Token    string   `json:"token,omitempty" jsonschema:"a fungible token's contract"`
		Accounts []string `json:"accounts,omitempty" jsonschema:"the accounts whose balances to read"`
		Snapshot string   `json:"snapshot,omitempty" jsonschema:"a stored snapshot's sha256"`
		Chain    string   `json:"chain,omitempty" jsonschema:"near:mainnet or near:testnet; an EVM chain as eip155:<id>"`
		// FromBlock is evm-erc20-holders' first block; a pointer, so a 0
		// sent is passed on as sent.
		FromBlock *uint64 `json:"from_block,omitempty" jsonschema:"the first block an EVM reader reads logs from"`
	}
	findTargetInput struct {
		Query string `json:"query" jsonschema:"words naming a DAO or a staking pool; on an EVM chain the contract's address (0x…)"`
		Chain string `json:"chain,omitempty" jsonschema:"the chain to look on: near:mainnet (when left out), near:testnet, or an EVM chain as eip155:<id>"`
		Limit *int   `json:"limit,omitempty" jsonschema:"how many candidates, from 1 to 20 (default 5)"`
	}
	getSnapshotInput struct {
		Network string          `json:"network" jsonschema:"a network id from list_networks"`
		Params  json.RawMessage `json:"params" jsonschema:"the network's params"`
		Fresh   bool            `json:"fresh,omitempty" jsonschema:"read the chain now even if a snapshot is stored"`
		At      string          `json:"at,omitempty" jsonschema:"a stored snapshot of this target, by its sha256"`
	}
	describeSnapshotInput struct {
		SHA256 string `json:"sha256" jsonschema:"a stored snapshot's name"`
		Top    *int   `json:"top,omitempty" jsonschema:"how many top accounts (default 10)"`
	}
)

func (findTargetInput) RefineSchema(s *jsonschema.Schema) {
	q := toolkit.Property(s, "query")
	q.MinLength, q.MaxLength = jsonschema.Ptr(1), jsonschema.Ptr(200)
	toolkit.Property(s, "chain").Pattern = toolkit.ChainPattern
	limit := toolkit.Property(s, "limit")
	limit.Minimum, limit.Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(20.0)
}

func (getSnapshotInput) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "params").Type = "object"
	toolkit.Property(s, "at").Pattern = toolkit.Sha256Pattern
}

func (describeSnapshotInput) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "sha256").Pattern = toolkit.Sha256Pattern
	top := toolkit.Property(s, "top")
	top.Minimum, top.Maximum = jsonschema.Ptr(0.0), jsonschema.Ptr(float64(snapshots.MaxTop))
}

// Networks is list_networks' answer.
type Networks struct {
	Networks []Reader `json:"networks"`
}

// allNetworks is list_networks' answer with no query, encoded once: the
// readers are fixed in the binary, and the list is the commonest call of all.
var allNetworks = sync.OnceValue(func() toolkit.Encoded[Networks] {
	e, err := toolkit.Encode(matchNetworks(nil))
	if err != nil {
		panic(fmt.Sprintf("app: the readers do not encode: %v", err)) // a programming error, met at the first call
	}
	return e
})

func (s *SnapshotService) listNetworks(_ context.Context, call toolkit.Call, in listNetworksInput) (toolkit.Encoded[Networks], error) {
	words := strings.Fields(strings.ToLower(in.Query))
	if len(words) == 0 {
		return allNetworks(), nil
	}
	return toolkit.Encode(matchNetworks(words))
}

// matchNetworks lists the readers whose id, title or reading holds every word.
func matchNetworks(words []string) Networks {
	out := Networks{Networks: []Reader{}}
	for _, r := range readers {
		text := strings.ToLower(r.ID + " " + r.Title + " " + r.Reads)
		all := true
		for _, w := range words {
			if !strings.Contains(text, w) {
				all = false
			}
		}
		if all {
			out.Networks = append(out.Networks, r)
		}
	}
	return out
}

// NetworkAnswer is get_network's answer.
type NetworkAnswer struct {
	Network Reader       `json:"network"`
	Target  *TargetState `json:"target"`
}

// TargetState is a target and the newest snapshot stored for it.
type TargetState struct {
	Params    json.RawMessage `json:"params"`
	TargetKey string          `json:"target_key"`
	Latest    *StoredSummary  `json:"latest"`
}

// StoredSummary names a stored snapshot.
type StoredSummary struct {
	SHA256   string `json:"sha256"`
	AsOf     string `json:"as_of"`
	Count    int    `json:"count"`
	Title    string `json:"title"`
	StoredAt string `json:"stored_at"`
	Origin   string `json:"origin"` // always this_site: only this site's own readings are a target's
}

func (s *SnapshotService) getNetwork(ctx context.Context, call toolkit.Call, in getNetworkInput) (NetworkAnswer, error) {
	if in.ID == "" {
		return NetworkAnswer{}, errs.New(errs.BadInput, "id is required: a network id such as near-dao-members", "see list_networks")
	}
	r, ok := ReaderByID(in.ID)
	if !ok {
		return NetworkAnswer{}, errs.Newf(errs.NotFound, "no network %s", in.ID).WithHint("see list_networks")
	}
	out := NetworkAnswer{Network: r}
	// The reader reads its params as they were sent: every field but id.
	var given map[string]json.RawMessage
	if err := toolkit.DecodeInput(call.Input, &given); err != nil {
		return NetworkAnswer{}, err
	}
	delete(given, "id")
	if len(given) == 0 {
		return out, nil
	}
	params, _ := json.Marshal(given)
	t, err := r.prepare(s, params)
	if err != nil {
		return NetworkAnswer{}, err
	}
	key, err := snapshots.TargetKey(t.network, t.params)
	if err != nil {
		return NetworkAnswer{}, err
	}
	out.Target = &TargetState{Params: t.params, TargetKey: key}
	latest, err := s.store.Latest(ctx, key)
	switch {
	case err == nil:
		out.Target.Latest = &StoredSummary{SHA256: latest.SHA256, AsOf: latest.Block.Time, Count: latest.Count, Title: latest.Title,
			StoredAt: latest.StoredAt.UTC().Format(time.RFC3339), Origin: latest.Origin}
	case !errs.Is(err, errs.NotFound):
		return NetworkAnswer{}, err
	}
	return out, nil
}

func (s *SnapshotService) describe(ctx context.Context, call toolkit.Call, in describeSnapshotInput) (Described, error) {
	if err := CheckSHA256("sha256", in.SHA256); err != nil {
		return Described{}, err
	}
	top := 10
	if in.Top != nil {
		if *in.Top < 0 || *in.Top > snapshots.MaxTop {
			return Described{}, errs.Newf(errs.BadInput, "top must be from 0 to %d", snapshots.MaxTop)
		}
		top = *in.Top
	}
	got, err := s.library.Load(ctx, in.SHA256)
	if err != nil {
		return Described{}, err
	}
	d, err := snapshots.Describe(in.SHA256, *got.Snapshot, top)
	if err != nil {
		return Described{}, errs.New(errs.Internal, "the snapshot could not be described").WithCause(err)
	}
	return Described{Description: d, Origin: got.Origin, Demo: got.Demo()}, nil
}

// Described is describe_snapshot's answer: the description and where the
// reading came from.
type Described struct {
	snapshots.Description
	Origin string `json:"origin"`
	Demo   bool   `json:"demo,omitempty"`
}

// Body is a stored snapshot's canonical JSON, gzipped exactly as stored,
// and its origin, for the body route to serve without recompressing.
func (s *SnapshotService) Body(ctx context.Context, sha string) (Body, error) {
	return s.library.Body(ctx, sha)
}

// The snapshot tools' answers as their types can't say: params are objects
// (a reader's is the JSON Schema of its params, a target's the params
// themselves), and an origin is one of three words.
func (Reader) RefineSchema(s *jsonschema.Schema) {
	objectOf(s, "params", "the JSON Schema of the reader's params")
}

func (Candidate) RefineSchema(s *jsonschema.Schema) {
	objectOf(s, "params", "the network's params, as get_snapshot takes them")
}

func (TargetState) RefineSchema(s *jsonschema.Schema) {
	objectOf(s, "params", "the params checked, defaults filled in")
}

func objectOf(s *jsonschema.Schema, name, description string) {
	p := toolkit.Property(s, name)
	p.Type, p.Description = "object", description
}

func (StoredSummary) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "as_of").Format = "date-time"
	toolkit.Property(s, "stored_at").Format = "date-time"
	toolkit.Property(s, "origin").Enum = []any{OriginThisSite}
}

func (SnapshotAnswer) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "as_of").Format = "date-time"
	refineOrigin(s)
}

func (Described) RefineSchema(s *jsonschema.Schema) { refineOrigin(s) }

func refineOrigin(s *jsonschema.Schema) {
	toolkit.Property(s, "origin").Enum = []any{OriginThisSite, OriginTheirMachine, OriginDemo}
}
