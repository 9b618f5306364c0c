package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/relationsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/relations"
	"github.com/petal-near/petal/ports"
)

// BenchmarkRelations loads generated groups with skewed memberships into the
// relations index (set-wise, by Load) and measures each tool through the
// registry (input check, store, answer encoded as the doors do) beside the
// plain SQL a newcomer would write for the same question over the same rows,
// as p50 and p99 in milliseconds; shared_accounts also between two of the
// large groups alone (the goal); then the rebuild of a large group
// (a new reading of it with a tenth of its accounts changed, through Offer),
// and this process's peak resident memory while serving (VmHWM, reset after
// the load).
//
//	PETAL_BENCH_RELATIONS_SCALE=1 go test ./cmd/petal -run '^$' -bench BenchmarkRelations -benchtime 200x -timeout 90m -v
//
// PETAL_BENCH_RELATIONS_BIG sets the three large groups' size alone. Scale 1
// is the issue's: 2,000 groups, 2,000,000 memberships, three groups
// of 100,000, five accounts in about 600 to 1,800 groups each, most accounts
// in one or two. It loads in about 10 minutes on the 2-core build machine.
func BenchmarkRelations(b *testing.B) {
	scale := 0.1
	if v := os.Getenv("PETAL_BENCH_RELATIONS_SCALE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f > 1 {
			b.Fatalf("PETAL_BENCH_RELATIONS_SCALE=%q: a number in (0, 1]", v)
		}
		scale = f
	}
	big := 0
	if v, err := strconv.Atoi(os.Getenv("PETAL_BENCH_RELATIONS_BIG")); err == nil && v > 0 {
		big = v
	}
	ctx := context.Background()
	db := pgtest.New(b)
	store := postgres.NewRelationRepository(db.DB)
	spec := specAtScale(scale, big)
	var gen []sampledGroup
	var largest ports.RelationReading
	started := time.Now()
	// Loaded set-wise (Load gives the rows Offer gives, TestRelationsLoadIsOffer).
	if err := store.Load(ctx, sampleRelations(spec.readings(), &gen, &largest)); err != nil {
		b.Fatal(err)
	}
	loaded := time.Since(started)
	_, _ = db.Pool.Exec(ctx, `VACUUM ANALYZE`)
	var memberships, pairs int64
	var size string
	_ = db.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM relation_members), (SELECT count(*) FROM relation_pairs), pg_size_pretty(pg_database_size(current_database()))`).Scan(&memberships, &pairs, &size)
	b.Logf("scale %.2f: %d groups, %d memberships, %d pairs, %s, loaded in %s (vacuumed in %s more)", scale, len(gen), memberships, pairs, size,
		loaded.Round(time.Second), (time.Since(started) - loaded).Round(time.Second))

	rel, err := relationsapp.NewRelationService(store, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		b.Fatal(err)
	}
	reg := toolkit.NewRegistry(config.Config{}, nil, []toolkit.ToolSet{rel})
	call := func(tool string, in map[string]any) {
		raw, _ := json.Marshal(in)
		out, err := reg.Call(ctx, tool, toolkit.Call{Input: raw, Caller: toolkit.Caller{Door: toolkit.DoorHTTP}})
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
			return relationsHubs[rng.IntN(len(relationsHubs))]
		}
		g := gen[rng.IntN(len(gen))]
		return g.accounts[rng.IntN(len(g.accounts))]
	}
	group := func() string { // a large group a tenth of the time
		if rng.IntN(10) == 0 {
			return gen[rng.IntN(3)].group
		}
		return gen[3+rng.IntN(len(gen)-3)].group
	}
	pathCase := func() (string, string) {
		for {
			a, c := gen[3+rng.IntN(len(gen)-3)].last, gen[3+rng.IntN(len(gen)-3)].last
			if a != c && !slices.Contains(relationsHubs, a) && !slices.Contains(relationsHubs, c) {
				return a, c
			}
		}
	}
	pid := strconv.Itoa(os.Getpid())
	// The peak counts from here: serving, not generating and loading.
	runtime.GC()
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/"+pid+"/clear_refs", []byte("5"), 0)

	type tcase struct {
		name   string
		tool   func()
		floor  func()
		floorN int // the floor's runs, when it is too slow for b.N
	}
	cases := []tcase{
		{name: "account_groups",
			tool: func() { call(relationsapp.ToolAccountGroups, map[string]any{"account": account()}) },
			// The newcomer: an account's groups by share, computed from
			// weights over each group's sum.
			floor: func() {
				sql(`SELECT m.group_id, m.weight / t.total AS share FROM relation_members m
JOIN (SELECT group_id, sum(weight) AS total FROM relation_members GROUP BY group_id) t ON t.group_id = m.group_id
WHERE m.account = $1 ORDER BY share DESC LIMIT 50`, account())
			}, floorN: 5},
		{name: "account_groups/plain-index-read",
			tool: func() { call(relationsapp.ToolAccountGroups, map[string]any{"account": account()}) },
			floor: func() {
				sql(`SELECT group_id, weight::text, share_e12 FROM relation_members WHERE account = $1 ORDER BY share_e12 DESC LIMIT 50`, account())
			}},
		{name: "shared_accounts",
			tool: func() {
				a, c := group(), group()
				for c == a {
					c = group()
				}
				call(relationsapp.ToolSharedAccounts, map[string]any{"group_a": a, "group_b": c})
			},
			floor: func() {
				a, c := group(), group()
				sql(`SELECT count(*) FROM relation_members x JOIN relation_members y ON y.account = x.account WHERE x.group_id = $1 AND y.group_id = $2`, a, c)
				sql(`SELECT x.account, x.weight, y.weight FROM relation_members x JOIN relation_members y ON y.account = x.account
WHERE x.group_id = $1 AND y.group_id = $2 ORDER BY least(x.share_e12, y.share_e12) DESC LIMIT 50`, a, c)
			}},
		{name: "shared_accounts/two-100k-groups", // the goal: two of the large groups
			tool: func() {
				i := rng.IntN(3)
				call(relationsapp.ToolSharedAccounts, map[string]any{"group_a": gen[i].group, "group_b": gen[(i+1+rng.IntN(2))%3].group})
			},
			floor: func() {
				i := rng.IntN(3)
				a, c := gen[i].group, gen[(i+1+rng.IntN(2))%3].group
				sql(`SELECT count(*) FROM relation_members x JOIN relation_members y ON y.account = x.account WHERE x.group_id = $1 AND y.group_id = $2`, a, c)
				sql(`SELECT x.account, x.weight, y.weight FROM relation_members x JOIN relation_members y ON y.account = x.account
WHERE x.group_id = $1 AND y.group_id = $2 ORDER BY least(x.share_e12, y.share_e12) DESC LIMIT 50`, a, c)
			}, floorN: 20},
		{name: "related_groups",
			tool: func() { call(relationsapp.ToolRelatedGroups, map[string]any{"group": group(), "by": "jaccard"}) },
			floor: func() {
				sql(`SELECT y.group_id, count(*) FROM relation_members x JOIN relation_members y ON y.account = x.account AND y.group_id <> x.group_id
WHERE x.group_id = $1 GROUP BY y.group_id ORDER BY count(*) DESC LIMIT 50`, group())
			}, floorN: 20},
		{name: "relations_overview",
			tool: func() { call(relationsapp.ToolRelationsOverview, map[string]any{}) },
			floor: func() {
				sql(`SELECT x.group_id, y.group_id, count(*) FROM relation_members x JOIN relation_members y ON y.account = x.account AND x.group_id < y.group_id
GROUP BY 1, 2 HAVING count(*) >= 2 ORDER BY 3 DESC LIMIT 50`)
			}, floorN: 2},
		{name: "power_path",
			tool: func() {
				a, c := pathCase()
				call(relationsapp.ToolPowerPath, map[string]any{"account_a": a, "account_b": c})
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
			tp50, tp99 := p50p99(tool)
			fp50, fp99 := p50p99(floor)
			b.ReportMetric(tp50, "p50-ms")
			b.ReportMetric(tp99, "p99-ms")
			b.ReportMetric(fp50, "sql-p50-ms")
			b.ReportMetric(fp99, "sql-p99-ms")
			b.ReportMetric(tp50/fp50, "ratio-p50")
		})
	}
	round := 0 // every reading offered is newer than the one before, across runs
	b.Run("rebuild_largest_group", func(b *testing.B) {
		big := largest
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
