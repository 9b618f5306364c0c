package annotationsapp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/claims"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/ports"
)

const (
	owner   = "prs_00000000000000000000000000000001"
	session = "sess-owner"
)

func code(t *testing.T, err error) errs.Code {
	t.Helper()
	var e *errs.Error
	require.ErrorAs(t, err, &e)
	return e.Code
}

func input(subject, value string) claims.Input {
	obj, _ := json.Marshal(map[string]string{"value": value})
	return claims.Input{Subject: subject, Verb: "named", Object: obj, Kind: claims.Stated}
}

// A page's cursor is a seq this site gave, its limit 1 to 500 (100 when not
// given); anything else is bad input.
func TestAnnotationPagesTakeOnlyTheirCursorAndLimit(t *testing.T) {
	after, limit, err := annotationPage("", 0)
	require.NoError(t, err)
	assert.Equal(t, int64(0), after)
	assert.Equal(t, annotationPageDefault, limit)
	after, limit, err = annotationPage("42", annotationPageMax)
	require.NoError(t, err)
	assert.Equal(t, int64(42), after)
	assert.Equal(t, 500, limit)

	for _, c := range []struct {
		cursor string
		limit  int
	}{{"abc", 0}, {"-1", 0}, {"1.5", 0}, {"", -1}, {"", annotationPageMax + 1}} {
		_, _, err := annotationPage(c.cursor, c.limit)
		assert.Equal(t, errs.BadInput, code(t, err), "cursor %q limit %d", c.cursor, c.limit)
	}
}

// A list read one past its limit has a next cursor, the seq of its last
// annotation; one that fits has none.
func TestAnnotationListsCursorOnlyWhenMoreRemain(t *testing.T) {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var got []ports.Annotation
	for i := range 3 {
		c, err := claims.Make(i, input(fmt.Sprintf("near:mainnet:a%d.near", i), "A"), owner, "")
		require.NoError(t, err)
		got = append(got, ports.Annotation{Claim: c, Exploration: "exp_1", AddedAt: at, Seq: int64(10 + i)})
	}
	page := annotationList(got, 2)
	require.Len(t, page.Annotations, 2)
	require.NotNil(t, page.NextCursor)
	assert.Equal(t, "11", *page.NextCursor)
	assert.Equal(t, "exp_1", *page.Annotations[0].Exploration)

	page = annotationList(got, 3)
	assert.Len(t, page.Annotations, 3)
	assert.Nil(t, page.NextCursor)

	page = annotationList(nil, 3)
	assert.NotNil(t, page.Annotations, "an empty page is [], not null")
	own := annotationView(ports.Annotation{Claim: got[0].Claim, Owner: owner})
	assert.Nil(t, own.Exploration, "one kept in no project has a null exploration")
}

// One bad claim refuses the request, and 1 to 100 claims make one.
func TestClaimsAreCheckedAllBeforeAnyIsKept(t *testing.T) {
	_, err := makeClaims(nil, owner, "")
	assert.Equal(t, errs.BadInput, code(t, err))
	many := make([]claims.Input, claims.MaxPerRequest+1)
	for i := range many {
		many[i] = input("near:mainnet:a.near", fmt.Sprint(i))
	}
	_, err = makeClaims(many, owner, "")
	assert.Equal(t, errs.BadInput, code(t, err))

	cs, err := makeClaims(many[:claims.MaxPerRequest], "near:mainnet:me.near", AgentVia)
	require.NoError(t, err)
	assert.Len(t, cs, claims.MaxPerRequest)
	assert.Equal(t, "near:mainnet:me.near", cs[0].By)

	bad := []claims.Input{input("near:mainnet:a.near", "A"), input("not an account", "B"), input("near:mainnet:c.near", "C")}
	cs, err = makeClaims(bad, owner, "")
	assert.Equal(t, errs.BadInput, code(t, err))
	assert.Nil(t, cs)
}

// Refusals that need no exploration are made before one is read: the
// service has none here, so reaching for it would panic.
func TestBadInputIsRefusedBeforeTheExplorationIsRead(t *testing.T) {
	s := &AnnotationService{}
	_, err := s.add(t.Context(), toolkit.Call{}, addAnnotationInput{Exploration: "exp_1", As: "Not Valid!"})
	assert.Equal(t, errs.BadInput, code(t, err))
	for _, in := range []listAnnotationsInput{
		{Exploration: "exp_1", Cursor: "x"},
		{Exploration: "exp_1", Limit: 501},
		{Exploration: "exp_1", About: "alice"},
	} {
		_, err := s.list(t.Context(), toolkit.Call{}, in)
		assert.Equal(t, errs.BadInput, code(t, err), "%+v", in)
	}
}

// sessions is memory.Sessions (it passes SessionStoreContract) holding the
// three sessions the tests sign with.
func sessions(t *testing.T) *memory.Sessions {
	t.Helper()
	s := memory.NewSessions()
	for _, sess := range []people.Session{
		{ID: session, Subject: owner, WalletID: "wal_1"},
		{ID: "sess-no-wallet", Subject: owner},
		{ID: "sess-other", Subject: "prs_00000000000000000000000000000009", WalletID: "wal_1"},
	} {
		require.NoError(t, s.CreateSession(t.Context(), sess))
	}
	return s
}

type wallets struct{}

func (wallets) WalletsOf(_ context.Context, person string) ([]people.Wallet, error) {
	if person != owner {
		return nil, nil
	}
	return []people.Wallet{{ID: "wal_1", PersonID: owner, Network: "mainnet", AccountID: "me.near"}}, nil
}

// Who answers for a claim: the owner's signed-in wallet (via Petals' agent
// when it writes), else the agent, else the tool named by as (anonymous when
// none). A session that isn't the caller's, or has no wallet, never lends
// its account.
func TestWhoAnswersForAClaim(t *testing.T) {
	s := &AnnotationService{sessions: sessions(t), wallets: wallets{}}
	for _, c := range []struct {
		name    string
		caller  toolkit.Caller
		access  explorations.Access
		as      string
		by, via string
	}{
		{"the owner, signed in with a wallet", toolkit.Caller{Door: toolkit.DoorHTTP, Subject: owner, Session: session}, explorations.OwnerAccess, "", "near:mainnet:me.near", ""},
		{"the owner's agent", toolkit.Caller{Door: toolkit.DoorAgent, Subject: owner, Session: session}, explorations.OwnerAccess, "", "near:mainnet:me.near", AgentVia},
		{"the owner, a session without a wallet", toolkit.Caller{Door: toolkit.DoorMCP, Subject: owner, Session: "sess-no-wallet"}, explorations.OwnerAccess, "bot", "tool:bot@1", ""},
		{"another's session", toolkit.Caller{Door: toolkit.DoorHTTP, Subject: owner, Session: "sess-other"}, explorations.OwnerAccess, "", "tool:anonymous@1", ""},
		{"a session gone", toolkit.Caller{Door: toolkit.DoorHTTP, Subject: owner, Session: "sess-gone"}, explorations.OwnerAccess, "", "tool:anonymous@1", ""},
		{"a continue link", toolkit.Caller{Door: toolkit.DoorMCP}, explorations.ContinueAccess, "claude", "tool:claude@1", ""},
		{"the agent on a link", toolkit.Caller{Door: toolkit.DoorAgent}, explorations.ContinueAccess, "claude", AgentVia, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			by, via, err := s.answerer(t.Context(), c.caller, c.access, c.as)
			require.NoError(t, err)
			assert.Equal(t, c.by, by)
			assert.Equal(t, c.via, via)
		})
	}
}

// budget is a day's data budget in memory, as PostgreSQL's counts it.
type budget struct {
	mu    sync.Mutex
	spent int64
}

func (b *budget) Spend(_ context.Context, _ time.Time, n, limit int64) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.spent+n > limit {
		return false, nil
	}
	b.spent += n
	return true, nil
}

func (b *budget) Refund(_ context.Context, _ time.Time, n int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.spent -= n
	return nil
}

func (b *budget) Spent(context.Context, time.Time) (int64, error) { return b.spent, nil }

// store keeps annotations by id per scope up to claims.MaxPerProject, all
// or none, as ports.AnnotationStore says.
type store struct {
	ports.AnnotationStore
	kept map[string]bool
}

func (s *store) Add(_ context.Context, scope ports.AnnotationScope, cs []claims.Claim, _ time.Time) ([]bool, error) {
	existed := make([]bool, len(cs))
	fresh := map[string]bool{}
	for i, c := range cs {
		existed[i] = s.kept[c.ID] || fresh[c.ID]
		fresh[c.ID] = true
	}
	if len(s.kept)+len(fresh) > claims.MaxPerProject {
		return nil, explorations.TooMany("annotations", claims.MaxPerProject)
	}
	for id := range fresh {
		s.kept[id] = true
	}
	return existed, nil
}

// keep spends an anonymous owner's data budget for what it stores and
// counts added and existed; a refusal (the budget, the cap) stores nothing
// and gives the bytes back.
func TestKeepingSpendsTheBudgetOnlyForWhatIsKept(t *testing.T) {
	cfg, err := config.LoadConfig(func(string) string { return "" })
	require.NoError(t, err)
	b := &budget{}
	st := &store{kept: map[string]bool{}}
	s := &AnnotationService{store: st, clock: memory.SystemClock{},
		budget: snapshotsapp.NewDataBudget(cfg, b, memory.SystemClock{}, slog.New(slog.NewTextHandler(io.Discard, nil)), nil),
		kept:   ports.NoMetrics{}.Counter("c", "c")}
	anon := "anon_00000000000000000000000000000001"
	one, err := makeClaims([]claims.Input{input("near:mainnet:a.near", "A"), input("near:mainnet:b.near", "B")}, "tool:bot@1", "")
	require.NoError(t, err)

	got, err := s.keep(t.Context(), anon, ports.AnnotationScope{Exploration: "exp_1"}, append(one, one[0]))
	require.NoError(t, err)
	assert.Equal(t, Added{Added: 2, Existed: 1, IDs: []string{one[0].ID, one[1].ID, one[0].ID}}, got)
	spent := b.spent
	assert.Positive(t, spent)

	// A signed-in owner's claims count against no budget.
	_, err = s.keep(t.Context(), owner, ports.AnnotationScope{Exploration: "exp_1"}, one)
	require.NoError(t, err)
	assert.Equal(t, spent, b.spent)

	// Past the cap nothing is kept and the bytes come back; outside any
	// conversation the refusal says where to keep them instead.
	for i := len(st.kept); i < claims.MaxPerProject; i++ {
		st.kept[fmt.Sprint("filler", i)] = true
	}
	more, err := makeClaims([]claims.Input{input("near:mainnet:c.near", "C")}, "tool:bot@1", "")
	require.NoError(t, err)
	_, err = s.keep(t.Context(), anon, ports.AnnotationScope{Owner: anon}, more)
	var e *errs.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, errs.BadInput, e.Code)
	assert.Contains(t, e.Hint, "conversation")
	assert.Equal(t, spent, b.spent, "a refused write gives its bytes back")
	assert.False(t, st.kept[more[0].ID])

	// A budget spent refuses before anything is stored.
	b.spent = cfg.DataBudgetBytes
	delete(st.kept, "filler0")
	_, err = s.keep(t.Context(), anon, ports.AnnotationScope{Exploration: "exp_1"}, more)
	assert.Equal(t, errs.BudgetExhausted, code(t, err))
	assert.False(t, st.kept[more[0].ID], "nothing kept past the budget")
}
