package snapshotsapp

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/nearrpc"
	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/domain/snapshots"
)

const shippedMembers = "shipped/members-marketing.json"

// The shipped snapshot is exactly what the members reader makes of the
// recorded answers, so it stays real-shaped as the reader changes.
func TestShippedSnapshotIsTheReadersOutput(t *testing.T) {
	fake := nearrpctest.New(t)
	chain := nearrpc.New(nearrpc.Options{URLs: map[string]string{snapshots.Mainnet: fake.URL}, Backoff: time.Millisecond, PageSize: 100})
	svc := &SnapshotService{near: chain, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	snap, err := svc.Read(t.Context(), "near-dao-members", json.RawMessage(`{"dao":"marketing"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, canonical, err := snapshots.Name(snap)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("PETAL_WRITE_SHIPPED") == "1" {
		if err := os.WriteFile(shippedMembers, canonical, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(shippedMembers)
	if err != nil || !bytes.Equal(got, canonical) {
		t.Fatalf("%s is not the reader's output; regenerate it (see shipped/README.md)", shippedMembers)
	}
	sh := ShippedSnapshots()
	if len(sh) == 0 || sh[0].Snapshot.Title != "Members of marketing.sputnik-dao.near" {
		t.Fatalf("shipped: %+v", sh)
	}
}
