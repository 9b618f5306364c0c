package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app"
	"github.com/petal-near/petal/domain/relations"
	"github.com/petal-near/petal/ports"
)

// BenchmarkRelations loads generated groups with skewed memberships into the
// relations index and measures each tool through the registry (input check,
// store, answer encoded as the doors do) beside the plain SQL a newcomer
// would write for the same question over the same rows, as p50 and p99 in
// milliseconds; then the rebuild of the largest group (a new reading of it
// with a tenth of its accounts changed), and this process's peak resident
// memory while serving (VmHWM, reset after the load).
//
//	PETAL_BENCH_RELATIONS_SCALE=0.1 go test ./cmd/petal -run '^$' -bench BenchmarkRelations -benchtime 200x
//
// PETAL_BENCH_RELATIONS_BIG sets the three large groups' size alone. Scale 1
// is the issue's: 2,000 groups, 2,000,000 memberships, three groups
// of 100,000, five accounts in about 600 to 1,800 groups each, most accounts
// in one or two.
func BenchmarkRelations(b *testing.B) {
	scale := 0.1
	if v := os.Getenv("PETAL_BENCH_RELATIONS_SCALE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f > 1 {
			b.Fatalf("PETAL_BENCH_RELATIONS_SCALE=%q: a number in (0, 1]", v)
		}
		scale = f
	}
	ctx := context.Background()
	db := pgtest.New(b)
	store := postgres.NewRelationRepository(db.DB)
	gen := generateRelations(scale)
	started := time.Now()
	for _, g := range gen.groups {
		if _, err := store.Offer(ctx, g); err != nil {
			b.Fatal(err)
		}
	}
	var memberships, pairs int64
	_ = db.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM relation_members), (SELECT count(*) FROM relation_pairs)`).Scan(&memberships, &pairs)
	b.Logf("scale %.2f: %d groups, %d memberships, %d pairs, loaded in %s", scale, len(gen.groups), memberships, pairs, time.Since(started).Round(time.Second))
	_, _ = db.Pool.Exec(ctx, `ANALYZE`)

	rel, err := app.NewRelationService(store, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		b.Fatal(err)
	}
	reg := app.NewRegistry(app.Config{}, nil, []app.ToolSet{rel})
	call := func(tool string, in map[string]any) {
		raw, _ := json.Marshal(in)
		out, err := reg.Call(ctx, tool, app.Call{Input: raw, Caller: app.Caller{Door: app.DoorHTTP}})
		if err != nil {
			b.Fatalf("%s %s: %v", tool, raw, err)
		}
		if _, err := json.Marshal(out); err != nil {
			b.Fatal(err)
		}
	}
	// A newcomer's query that runs past floorTimeout is cancelled and counted
	// as that long (it says so in the log).
	const floorTimeout = 20 * time.Second
	sql := func(q string, args ...any) {
		ctx, cancel := context.WithTimeout(ctx, floorTimeout)
		defer cancel()
		rows, err := db.Pool.Query(ctx, q, args...)
		if err == nil {
			defer rows.Close()
		}
		if ctx.Err() != nil {
			b.Logf("a newcomer's query ran past %s and was cancelled", floorTimeout)
			return
		}
		if err != nil {
			b.Fatal(err)
		}
		for rows.Next() {
		}
		if rows.Err() != nil {
			if ctx.Err() != nil {
				b.Logf("a newcomer's query ran past %s and was cancelled", floorTimeout)
				return
			}
			b.Fatalf("%v: %s", rows.Err(), q)
		}
	}
	rng := rand.New(rand.NewPCG(7, 7))
	account := func() string { // hubs a tenth of the time, else anyone
		if rng.IntN(10) == 0 {
			return gen.hubs[rng.IntN(len(gen.hubs))]
		}
		g := gen.groups[rng.IntN(len(gen.groups))]
		return g.Members[rng.IntN(len(g.Members))].Account
	}
	group := func() string { // a large group a tenth of the time
		if rng.IntN(10) == 0 {
			return gen.groups[rng.IntN(3)].Group
		}
		return gen.groups[3+rng.IntN(len(gen.groups)-3)].Group
	}
	pathCase := func() (string, string) {
		for {
			ga, gb := gen.groups[3+rng.IntN(len(gen.groups)-3)], gen.groups[3+rng.IntN(len(gen.groups)-3)]
			a, c := ga.Members[len(ga.Members)-1].Account, gb.Members[len(gb.Members)-1].Account
			if a != c && !slices.Contains(gen.hubs, a) && !slices.Contains(gen.hubs, c) {
				return a, c
			}
		}
	}
	pid := strconv.Itoa(os.Getpid())
	_ = os.WriteFile("/proc/"+pid+"/clear_refs", []byte("5"), 0)

	type tcase struct {
		name   string
		tool   func()
		floor  func()
		floorN int // the floor's runs, when it is too slow for b.N
	}
	cases := []tcase{
		{name: "account_groups",
			tool: func() { call(app.ToolAccountGroups, map[string]any{"account": account()}) },
			// The newcomer: an account's groups by share, computed from
			// weights over each group's sum.
			floor: func() {
				sql(`SELECT m.group_id, m.weight / t.total AS share FROM relation_members m
JOIN (SELECT group_id, sum(weight) AS total FROM relation_members GROUP BY group_id) t ON t.group_id = m.group_id
WHERE m.account = $1 ORDER BY share DESC LIMIT 50`, account())
			}, floorN: 5},
		{name: "account_groups/plain-index-read",
			tool: func() { call(app.ToolAccountGroups, map[string]any{"account": account()}) },
			floor: func() {
				sql(`SELECT group_id, weight::text, share_e12 FROM relation_members WHERE account = $1 ORDER BY share_e12 DESC LIMIT 50`, account())
			}},
		{name: "shared_accounts",
			tool: func() {
				a, c := group(), group()
				for c == a {
					c = group()
				}
				call(app.ToolSharedAccounts, map[string]any{"group_a": a, "group_b": c})
			},
			floor: func() {
				a, c := group(), group()
				sql(`SELECT count(*) FROM relation_members x JOIN relation_members y ON y.account = x.account WHERE x.group_id = $1 AND y.group_id = $2`, a, c)
				sql(`SELECT x.account, x.weight, y.weight FROM relation_members x JOIN relation_members y ON y.account = x.account
WHERE x.group_id = $1 AND y.group_id = $2 ORDER BY least(x.share_e12, y.share_e12) DESC LIMIT 50`, a, c)
			}},
		{name: "related_groups",
			tool: func() { call(app.ToolRelatedGroups, map[string]any{"group": group(), "by": "jaccard"}) },
			floor: func() {
				sql(`SELECT y.group_id, count(*) FROM relation_members x JOIN relation_members y ON y.account = x.account AND y.group_id <> x.group_id
WHERE x.group_id = $1 GROUP BY y.group_id ORDER BY count(*) DESC LIMIT 50`, group())
			}, floorN: 20},
		{name: "relations_overview",
			tool: func() { call(app.ToolRelationsOverview, map[string]any{}) },
			floor: func() {
				sql(`SELECT x.group_id, y.group_id, count(*) FROM relation_members x JOIN relation_members y ON y.account = x.account AND x.group_id < y.group_id
GROUP BY 1, 2 HAVING count(*) >= 2 ORDER BY 3 DESC LIMIT 50`)
			}, floorN: 2},
		{name: "power_path",
			tool: func() {
				a, c := pathCase()
				call(app.ToolPowerPath, map[string]any{"account_a": a, "account_b": c})
			},
			// The newcomer: a recursive walk from a to b, two groups deep
			// (deeper does not finish).
			floor: func() {
				a, c := pathCase()
				sql(`WITH RECURSIVE walk(account, depth) AS (
  SELECT $1::text, 0
  UNION
  SELECT y.account, w.depth + 1 FROM walk w JOIN relation_members x ON x.account = w.account JOIN relation_members y ON y.group_id = x.group_id
  WHERE w.depth < 2
) SELECT min(depth) FROM walk WHERE account = $2`, a, c)
			}, floorN: 2},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var tool, floor []time.Duration
			n := b.N
			if c.floorN > 0 {
				n = min(n, c.floorN)
			}
			for i := range b.N {
				t0 := time.Now()
				c.tool()
				tool = append(tool, time.Since(t0))
				if i < n {
					t0 = time.Now()
					c.floor()
					floor = append(floor, time.Since(t0))
				}
			}
			tp50, tp99 := quantiles(tool)
			fp50, fp99 := quantiles(floor)
			b.ReportMetric(tp50, "p50-ms")
			b.ReportMetric(tp99, "p99-ms")
			b.ReportMetric(fp50, "sql-p50-ms")
			b.ReportMetric(fp99, "sql-p99-ms")
			b.ReportMetric(tp50/fp50, "ratio-p50")
		})
	}
	round := 0 // every reading offered is newer than the one before, across runs
	b.Run("rebuild_largest_group", func(b *testing.B) {
		big := gen.groups[0]
		var took, sharesTook time.Duration
		n := min(b.N, 3) // each rebuild of 100,000 accounts takes seconds
		for range n {
			round++
			i := round
			ws := make([]relations.Weighted, len(big.Members))
			for j, m := range big.Members {
				ws[j] = relations.Weighted{Account: m.Account, Weight: m.Weight}
				if j%10 == i%10 {
					ws[j].Account = fmt.Sprintf("near:mainnet:new%d-%d.near", i, j)
				}
			}
			t0 := time.Now()
			ms, total, err := relations.Members(ws)
			if err != nil {
				b.Fatal(err)
			}
			shares := time.Since(t0)
			r := big
			r.Snapshot, r.AsOf, r.Members, r.Total = fmt.Sprintf("%064x", 1_000_000+i), big.AsOf.Add(time.Duration(i+1)*time.Hour), ms, total
			rebuilt, err := store.Offer(ctx, r)
			if err != nil || !rebuilt {
				b.Fatalf("rebuilt %v: %v", rebuilt, err)
			}
			took += time.Since(t0)
			sharesTook += shares
			b.ReportMetric(float64(len(ms)), "accounts")
		}
		b.ReportMetric(sharesTook.Seconds()*1000/float64(n), "shares-ms")
		b.ReportMetric(took.Seconds()*1000/float64(n), "rebuild-ms")
	})
	b.Run("memory", func(b *testing.B) {
		for range b.N {
		}
		b.ReportMetric(float64(procStatus(b, pid, "VmHWM"))/(1<<20), "peak-MiB")
	})
}

func quantiles(ds []time.Duration) (p50, p99 float64) {
	if len(ds) == 0 {
		return math.NaN(), math.NaN()
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(s)))) - 1
		return s[max(i, 0)].Seconds() * 1000
	}
	return at(0.5), at(0.99)
}

// generatedRelations is a made-up map with the skew.
type generatedRelations struct {
	groups []ports.RelationReading
	hubs   []string
}

func generateRelations(scale float64) generatedRelations {
	rng := rand.New(rand.NewPCG(1, 1))
	const groups = 2000
	total := int(2_000_000 * scale)
	big := int(100_000 * scale)
	if v, err := strconv.Atoi(os.Getenv("PETAL_BENCH_RELATIONS_BIG")); err == nil && v > 0 {
		big = v // the three large groups' size alone
	}
	pool := total * 2 / 3 // most accounts in one or two groups
	var gen generatedRelations
	for h := range 5 {
		gen.hubs = append(gen.hubs, fmt.Sprintf("near:mainnet:hub%d.near", h))
	}
	hubChance := []float64{0.9, 0.7, 0.5, 0.4, 0.3}
	// Sizes: three large groups, the rest falling off as a power of their rank.
	rest := max(total-3*big, 3*groups)
	weights := make([]float64, groups-3)
	var sum float64
	for i := range weights {
		weights[i] = 1 / math.Pow(float64(i+1), 0.8)
		sum += weights[i]
	}
	zipf := rand.NewZipf(rng, 1.2, 1, uint64(pool-1))
	for g := range groups {
		size := big
		if g >= 3 {
			size = max(3, int(float64(rest)*weights[g-3]/sum))
		}
		seen := map[string]bool{}
		var ws []relations.Weighted
		add := func(acct string) {
			if !seen[acct] {
				seen[acct] = true
				w := strconv.Itoa(1 + rng.IntN(1_000_000))
				if rng.IntN(4) == 0 {
					w += "." + strconv.Itoa(rng.IntN(1000))
				}
				ws = append(ws, relations.Weighted{Account: acct, Weight: w})
			}
		}
		for h, hub := range gen.hubs {
			if rng.Float64() < hubChance[h] {
				add(hub)
			}
		}
		for len(ws) < size {
			n := rng.IntN(pool)
			if rng.IntN(5) == 0 {
				n = int(zipf.Uint64())
			}
			add(fmt.Sprintf("near:mainnet:a%07d.near", n))
		}
		ms, tot, err := relations.Members(ws)
		if err != nil {
			panic(err)
		}
		reader := []string{"near-dao-members", "near-staking-pool", "near-ft-balances"}[g%3]
		gen.groups = append(gen.groups, ports.RelationReading{Group: fmt.Sprintf("near:mainnet:g%04d.near", g), Snapshot: fmt.Sprintf("%064x", g+1),
			AsOf: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), Reader: reader, Title: fmt.Sprintf("Group %d", g), Holdings: true, Total: tot, Members: ms})
	}
	return gen
}
