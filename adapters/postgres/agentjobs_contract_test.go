package postgres_test

import (
	"crypto/rand"
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/ports/porttest"
)

func TestAgentJobsContract(t *testing.T) {
	porttest.AgentJobsContract(t, func(t *testing.T) porttest.AgentJobsHarness {
		db := pgtest.New(t)
		exps := postgres.NewExplorationRepository(db.DB)
		return porttest.AgentJobsHarness{
			Jobs: postgres.NewAgentJobs(db.DB),
			NewPerson: func(t *testing.T) string {
				id, err := people.NewPersonID(rand.Reader)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := db.Pool.Exec(t.Context(), `INSERT INTO people (id) VALUES ($1)`, id); err != nil {
					t.Fatal(err)
				}
				return id
			},
			NewExploration: func(t *testing.T, owner string) string {
				id, err := explorations.NewID(rand.Reader, explorations.IDPrefix)
				if err != nil {
					t.Fatal(err)
				}
				now := time.Now().UTC()
				if err := exps.CreateExploration(t.Context(), explorations.Exploration{ID: id, Owner: owner, Question: "q", CreatedAt: now, UpdatedAt: now}); err != nil {
					t.Fatal(err)
				}
				return id
			},
		}
	})
}
