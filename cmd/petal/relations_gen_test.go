package main

import (
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/petal-near/petal/domain/relations"
	"github.com/petal-near/petal/ports"
)

// relationsSpec sizes a made-up map with the skew: groups, total
// memberships, and the size of its three large groups.
type relationsSpec struct {
	groups, total, big int
}

// specAtScale is the map (2,000 groups, 2,000,000 memberships, three
// groups of 100,000) times scale; big > 0 sets the large groups' size alone.
func specAtScale(scale float64, big int) relationsSpec {
	s := relationsSpec{groups: 2000, total: int(2_000_000 * scale), big: int(100_000 * scale)}
	if big > 0 {
		s.big = big
	}
	return s
}

var relationsHubs = func() []string {
	var hubs []string
	for h := range 5 {
		hubs = append(hubs, fmt.Sprintf("near:mainnet:hub%d.near", h))
	}
	return hubs
}()

// readings generates the map one group's reading at a time (the same every
// time it is ranged over), so a loader need not hold 2,000,000 memberships:
// five hub accounts in most groups, the large groups first, the rest falling
// off as a power of their rank, accounts drawn from a pool of two thirds of
// the memberships (most in one or two groups) and a fifth of them from a
// Zipf law (a few in thousands of groups); weights random, some fractional.
func (s relationsSpec) readings() iter.Seq[ports.RelationReading] {
	return func(yield func(ports.RelationReading) bool) {
		rng := rand.New(rand.NewPCG(1, 1))
		pool := s.total * 2 / 3
		hubChance := []float64{0.9, 0.7, 0.5, 0.4, 0.3}
		rest := max(s.total-3*s.big, 3*s.groups)
		weights := make([]float64, s.groups-3)
		var sum float64
		for i := range weights {
			weights[i] = 1 / math.Pow(float64(i+1), 0.8)
			sum += weights[i]
		}
		zipf := rand.NewZipf(rng, 1.2, 1, uint64(pool-1))
		for g := range s.groups {
			size := s.big
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
			for h, hub := range relationsHubs {
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
			if !yield(ports.RelationReading{Group: fmt.Sprintf("near:mainnet:g%04d.near", g), Snapshot: fmt.Sprintf("%064x", g+1),
				AsOf: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), Reader: reader, Title: fmt.Sprintf("Group %d", g), Holdings: true, Total: tot, Members: ms}) {
				return
			}
		}
	}
}

// sampledGroup is what the benchmark keeps of a generated group to pick
// inputs from: a few of its accounts and its last (smallest share).
type sampledGroup struct {
	group    string
	accounts []string
	last     string
}

// sampleRelations passes the readings through, keeping a sample of each
// group and the first (a large group) whole, for its rebuild.
func sampleRelations(rs iter.Seq[ports.RelationReading], groups *[]sampledGroup, first *ports.RelationReading) iter.Seq[ports.RelationReading] {
	return func(yield func(ports.RelationReading) bool) {
		rng := rand.New(rand.NewPCG(3, 3))
		for rd := range rs {
			if len(*groups) == 0 {
				*first = rd
			}
			sg := sampledGroup{group: rd.Group, last: rd.Members[len(rd.Members)-1].Account}
			for range 16 {
				sg.accounts = append(sg.accounts, rd.Members[rng.IntN(len(rd.Members))].Account)
			}
			*groups = append(*groups, sg)
			if !yield(rd) {
				return
			}
		}
	}
}
