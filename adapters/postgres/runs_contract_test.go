package postgres_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/ports"
	"github.com/petal-near/petal/ports/porttest"
)

// pgRuns is the run store and leases on a fresh database; Age moves a
// lease's heartbeat back in the processes table.
func pgRuns(t *testing.T) porttest.Runs {
	db := pgtest.New(t)
	return porttest.Runs{
		Store:  postgres.NewRunRepository(db.DB),
		Leases: postgres.NewLeases(db.DB),
		Age: func(t *testing.T, id string, d time.Duration) {
			if _, err := db.Pool.Exec(t.Context(), `UPDATE processes SET heartbeat_at = heartbeat_at - make_interval(secs => $2) WHERE id = $1`, id, d.Seconds()); err != nil {
				t.Fatal(err)
			}
		},
		AgeRun: func(t *testing.T, id string, d time.Duration) {
			if _, err := db.Pool.Exec(t.Context(), `UPDATE runs SET updated_at = updated_at - make_interval(secs => $2) WHERE id = $1`, id, d.Seconds()); err != nil {
				t.Fatal(err)
			}
		},
	}
}

func TestRunStoreContract(t *testing.T) { porttest.RunStoreContract(t, pgRuns) }

func TestLeasesContract(t *testing.T) { porttest.LeasesContract(t, pgRuns) }

func TestAttestationsContract(t *testing.T) {
	porttest.AttestationsContract(t, func(t *testing.T) ports.Attestations { return postgres.NewAttestations(pgtest.New(t).DB) })
}

// Two buses on two pools stand for two processes; appends go through a
// store publishing through the first, as petal serve wires it.
func TestEventBusContract(t *testing.T) {
	porttest.EventBusContract(t, func(t *testing.T) porttest.Buses {
		db := pgtest.New(t)
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		busA := postgres.NewEventBus(db.DB, log)
		dbB, err := postgres.Connect(t.Context(), db.URL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(dbB.Close)
		busB := postgres.NewEventBus(dbB, log)
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		go func() { _ = busA.Run(ctx) }()
		go func() { _ = busB.Run(ctx) }()
		<-busA.Ready()
		<-busB.Ready()
		return porttest.Buses{Store: postgres.NewRunRepository(db.DB).PublishingThrough(busA), A: busA, B: busB}
	})
}

func TestJobLeasesContract(t *testing.T) {
	porttest.JobLeasesContract(t, func(t *testing.T) ports.JobLeases { return postgres.NewJobLeases(pgtest.New(t).DB) })
}
