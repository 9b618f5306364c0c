package porttest

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/petal-near/petal/ports"
)

// MapMarksContract runs the MapMarks contract against the keepers newMarks
// makes (fresh, with nothing kept). A keeper's schedule runs on its own
// clock, so the suite checks order and what is due now, never waits.
func MapMarksContract(t *testing.T, newMarks func(t *testing.T) ports.MapMarks) {
	t.Run("never-read maps are due first, a kept mark is not due until its time", func(t *testing.T) {
		m := newMarks(t)
		ids := []string{"near:mainnet:c.near", "near:mainnet:a.near", "near:mainnet:b.near"}
		due, err := m.Due(t.Context(), ids, 10)
		must(t, err)
		if !slices.Equal(due, []string{"near:mainnet:a.near", "near:mainnet:b.near", "near:mainnet:c.near"}) {
			t.Fatalf("due at first: %v", due)
		}
		if due, _ := m.Due(t.Context(), ids, 2); len(due) != 2 {
			t.Fatalf("a batch of 2 gave %v", due)
		}
		must(t, m.Keep(t.Context(), ports.MarkWrite{MapID: "near:mainnet:a.near", Mark: json.RawMessage(`{"name":null,"symbol":null,"logo":null,"read_at":"2026-11-30T00:00:00Z"}`), Again: time.Hour}))
		// Read again at once: due, but after the never-read.
		must(t, m.Keep(t.Context(), ports.MarkWrite{MapID: "near:mainnet:b.near", Mark: json.RawMessage(`{"name":null,"symbol":null,"logo":null,"read_at":"2026-11-30T00:00:00Z"}`), Again: 0}))
		due, err = m.Due(t.Context(), ids, 10)
		must(t, err)
		if !slices.Equal(due, []string{"near:mainnet:c.near", "near:mainnet:b.near"}) {
			t.Fatalf("due after reads: %v", due)
		}
	})

	t.Run("marks are listed by page, a failure keeps what was read, and the version moves only with a mark", func(t *testing.T) {
		m := newMarks(t)
		v0, err := m.Version(t.Context())
		must(t, err)
		mark := json.RawMessage(`{"name":{"value":"A","status":"read","source":"chain","ref":"a.near ft_metadata","at":"2026-11-30T00:00:00Z"},"symbol":null,"logo":null,"read_at":"2026-11-30T00:00:00Z"}`)
		for _, id := range []string{"near:mainnet:a.near", "near:mainnet:b.near", "near:mainnet:c.near"} {
			must(t, m.Keep(t.Context(), ports.MarkWrite{MapID: id, Mark: mark, Again: time.Hour}))
		}
		v1, err := m.Version(t.Context())
		must(t, err)
		if v1.Marks != 3 || v1 == v0 {
			t.Fatalf("version %+v after three marks (before %+v)", v1, v0)
		}
		page, next, err := m.Marks(t.Context(), "", 2)
		must(t, err)
		if len(page) != 2 || next != "near:mainnet:b.near" || string(page["near:mainnet:a.near"]) != string(mark) {
			t.Fatalf("first page %v next %q", page, next)
		}
		page, next, err = m.Marks(t.Context(), next, 2)
		must(t, err)
		if len(page) != 1 || next != "" || page["near:mainnet:c.near"] == nil {
			t.Fatalf("second page %v next %q", page, next)
		}
		// The same mark read again changes nothing anyone sees.
		must(t, m.Keep(t.Context(), ports.MarkWrite{MapID: "near:mainnet:a.near", Mark: mark, Again: time.Hour}))
		if v, _ := m.Version(t.Context()); v != v1 {
			t.Fatalf("the same mark moved the version: %+v, was %+v", v, v1)
		}
		// A failed re-read keeps the mark; a never-read map that fails has none.
		must(t, m.Failed(t.Context(), "near:mainnet:a.near", nil, "the chain could not be reached", time.Hour, 24*time.Hour))
		must(t, m.Failed(t.Context(), "near:mainnet:d.near", nil, "the chain could not be reached", time.Hour, 24*time.Hour))
		all, _, err := m.Marks(t.Context(), "", 10)
		must(t, err)
		if len(all) != 3 || all["near:mainnet:a.near"] == nil || all["near:mainnet:d.near"] != nil {
			t.Fatalf("after failures: %v", all)
		}
		if v, _ := m.Version(t.Context()); v != v1 {
			t.Fatalf("a failure moved the version: %+v", v)
		}
		// Tried and failed: not due until its back-off ends.
		due, err := m.Due(t.Context(), []string{"near:mainnet:d.near", "near:mainnet:e.near"}, 10)
		must(t, err)
		if !slices.Equal(due, []string{"near:mainnet:e.near"}) {
			t.Fatalf("due after a failure: %v", due)
		}
		// A failure with no wait is due again at once.
		must(t, m.Failed(t.Context(), "near:mainnet:f.near", nil, "x", 0, 0))
		if due, _ := m.Due(t.Context(), []string{"near:mainnet:f.near"}, 10); len(due) != 1 {
			t.Fatalf("a failure with no back-off is not due: %v", due)
		}
	})

	t.Run("a logo is kept once by its name with its mark, and replaced with it", func(t *testing.T) {
		m := newMarks(t)
		logo := &ports.StoredPicture{SHA256: "1111111111111111111111111111111111111111111111111111111111111111", MediaType: "image/png", Bytes: []byte("png"), Width: 1, Height: 1}
		mark := json.RawMessage(`{"name":null,"symbol":null,"logo":{"sha256":"` + logo.SHA256 + `"},"read_at":"2026-11-30T00:00:00Z"}`)
		must(t, m.Keep(t.Context(), ports.MarkWrite{MapID: "near:mainnet:a.near", Mark: mark, Logo: logo, Again: time.Hour}))
		must(t, m.Keep(t.Context(), ports.MarkWrite{MapID: "near:mainnet:b.near", Mark: mark, Logo: logo, Again: time.Hour}))
		must(t, m.Keep(t.Context(), ports.MarkWrite{MapID: "near:mainnet:a.near", Mark: json.RawMessage(`{"name":null,"symbol":null,"logo":null,"read_at":"2026-11-30T00:00:00Z"}`), Again: time.Hour}))
		all, _, err := m.Marks(t.Context(), "", 10)
		must(t, err)
		if string(all["near:mainnet:b.near"]) != string(mark) || string(all["near:mainnet:a.near"]) == string(mark) {
			t.Fatalf("marks: %v", all)
		}
	})

	t.Run("a failure can carry a mark, leaving the logo and backing off all the same", func(t *testing.T) {
		m := newMarks(t)
		if got, err := m.Mark(t.Context(), "near:mainnet:a.near"); err != nil || got != nil {
			t.Fatalf("a map never read has a mark: %s, %v", got, err)
		}
		listed := json.RawMessage(`{"name":{"value":"A","status":"curated","source":"curated","ref":"app/mapsapp/map-marks.json#near:mainnet:a.near","verified_by":"x","at":"2026-11-30T00:00:00Z"},"symbol":null,"logo":null,"read_at":"2026-11-30T00:00:00Z"}`)
		v0, err := m.Version(t.Context())
		must(t, err)
		must(t, m.Failed(t.Context(), "near:mainnet:a.near", listed, "the chain could not be reached", time.Hour, 24*time.Hour))
		got, err := m.Mark(t.Context(), "near:mainnet:a.near")
		must(t, err)
		if string(got) != string(listed) {
			t.Fatalf("the mark a failure carried: %s", got)
		}
		v1, err := m.Version(t.Context())
		must(t, err)
		if v1 == v0 || v1.Marks != 1 {
			t.Fatalf("a failure with a mark left the version: %+v (was %+v)", v1, v0)
		}
		if due, _ := m.Due(t.Context(), []string{"near:mainnet:a.near"}, 10); len(due) != 0 {
			t.Fatalf("a failure with a mark is due at once: %v", due)
		}
		// A failure without a mark keeps it; one with the same mark moves nothing.
		must(t, m.Failed(t.Context(), "near:mainnet:a.near", nil, "again", time.Hour, 24*time.Hour))
		must(t, m.Failed(t.Context(), "near:mainnet:a.near", listed, "again", time.Hour, 24*time.Hour))
		if got, _ := m.Mark(t.Context(), "near:mainnet:a.near"); string(got) != string(listed) {
			t.Fatalf("after more failures: %s", got)
		}
		if v, _ := m.Version(t.Context()); v != v1 {
			t.Fatalf("the same mark moved the version: %+v, was %+v", v, v1)
		}
		// A logo kept with a read stays through a failure that carries a mark.
		logo := &ports.StoredPicture{SHA256: "3333333333333333333333333333333333333333333333333333333333333333", MediaType: "image/png", Bytes: []byte("png"), Width: 1, Height: 1}
		withLogo := json.RawMessage(`{"name":null,"symbol":null,"logo":{"sha256":"` + logo.SHA256 + `"},"read_at":"2026-11-30T00:00:00Z"}`)
		must(t, m.Keep(t.Context(), ports.MarkWrite{MapID: "near:mainnet:b.near", Mark: withLogo, Logo: logo, Again: time.Hour}))
		refilled := json.RawMessage(`{"name":{"value":"B"},"symbol":null,"logo":{"sha256":"` + logo.SHA256 + `"},"read_at":"2026-11-30T00:00:00Z"}`)
		must(t, m.Failed(t.Context(), "near:mainnet:b.near", refilled, "down", time.Hour, 24*time.Hour))
		if got, _ := m.Mark(t.Context(), "near:mainnet:b.near"); string(got) != string(refilled) {
			t.Fatalf("refilled: %s", got)
		}
	})
}
