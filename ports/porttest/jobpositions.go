package porttest

import (
	"testing"

	"github.com/petal-near/petal/ports"
)

// JobPositionsContract runs the JobPositions contract against the keepers
// newPositions makes (fresh, with nothing kept).
func JobPositionsContract(t *testing.T, newPositions func(t *testing.T) ports.JobPositions) {
	t.Run("a walk starts at 0, goes on from where it was kept, per job and part", func(t *testing.T) {
		p := newPositions(t)
		at, err := p.Position(t.Context(), "map_sync", "near:mainnet")
		must(t, err)
		if at != 0 {
			t.Fatalf("a fresh walk is at %d", at)
		}
		must(t, p.SetPosition(t.Context(), "map_sync", "near:mainnet", 400))
		must(t, p.SetPosition(t.Context(), "map_sync", "near:testnet", 200))
		must(t, p.SetPosition(t.Context(), "other", "near:mainnet", 7))
		for _, c := range []struct {
			job, part string
			want      int64
		}{{"map_sync", "near:mainnet", 400}, {"map_sync", "near:testnet", 200}, {"other", "near:mainnet", 7}, {"other", "near:testnet", 0}} {
			at, err := p.Position(t.Context(), c.job, c.part)
			must(t, err)
			if at != c.want {
				t.Fatalf("%s %s is at %d, want %d", c.job, c.part, at, c.want)
			}
		}
		// A finished walk starts again.
		must(t, p.SetPosition(t.Context(), "map_sync", "near:mainnet", 0))
		if at, _ := p.Position(t.Context(), "map_sync", "near:mainnet"); at != 0 {
			t.Fatalf("after starting again: %d", at)
		}
	})
}
