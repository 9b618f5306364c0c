package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/ports"
	"github.com/petal-near/petal/ports/porttest"
)

func TestPublishedFlowerRepositoryContract(t *testing.T) {
	porttest.PublishedFlowersContract(t, func(t *testing.T) ports.PublishedFlowers {
		return postgres.NewPublishedFlowerRepository(pgtest.New(t).DB)
	})
}

// A newly kept flower is announced on petal_flowers to a listener on
// another connection (another replica), once; keeping it again says nothing.
func TestPublishedFlowerKeepNotifies(t *testing.T) {
	db := pgtest.New(t)
	store := postgres.NewPublishedFlowerRepository(db.DB)
	conn, err := pgx.Connect(t.Context(), db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), "LISTEN "+ports.FlowersChannel); err != nil {
		t.Fatal(err)
	}
	f := published.Kept{ID: fmt.Sprintf("%064x", 1), Network: "near:testnet", Maker: "alice.testnet",
		Map: "near:testnet:population", Snapshot: fmt.Sprintf("%064x", 2), Record: []byte(`{}`),
		MadeAt: time.Now(), Status: published.StatusOK, Came: published.CameSynced}
	for range 2 {
		if _, _, err := store.Keep(t.Context(), f); err != nil {
			t.Fatal(err)
		}
	}
	n, err := conn.WaitForNotification(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if n.Payload != f.ID+" near:testnet:population" {
		t.Fatalf("payload %q", n.Payload)
	}
	// The second keep changed nothing, so nothing more is said: a NOTIFY
	// sent now is the next one the listener hears.
	if _, err := db.Pool.Exec(t.Context(), `SELECT pg_notify($1, 'marker')`, ports.FlowersChannel); err != nil {
		t.Fatal(err)
	}
	if n, err = conn.WaitForNotification(t.Context()); err != nil || n.Payload != "marker" {
		t.Fatalf("after a second keep heard %q, %v", n.Payload, err)
	}
}

// Retention deletes prepared records once they expire, and only those.
func TestRetentionDeletesExpiredPreparedFlowers(t *testing.T) {
	db := pgtest.New(t)
	store := postgres.NewPublishedFlowerRepository(db.DB)
	for i, expires := range []time.Time{time.Now().Add(-time.Minute), time.Now().Add(time.Hour)} {
		if err := store.Prepare(t.Context(), published.Prepared{ID: fmt.Sprintf("%064x", i), Account: "alice.testnet",
			Network: "near:testnet", Record: []byte(`{}`), ExpiresAt: expires}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := postgres.NewRetention(db.DB).Delete(t.Context(), ports.ExpiredPrepared, 0, 100)
	if err != nil || n != 1 {
		t.Fatalf("deleted %d, %v; want the expired one", n, err)
	}
	if _, err := store.Prepared(t.Context(), fmt.Sprintf("%064x", 1), "alice.testnet", "near:testnet", time.Now()); err != nil {
		t.Fatalf("the live one went too: %v", err)
	}
}
