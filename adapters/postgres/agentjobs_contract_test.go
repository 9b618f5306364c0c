package postgres_test

import (
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/agentjobsapp"
	"github.com/petal-near/petal/domain/agentjobs"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/ports"
	"github.com/petal-near/petal/ports/porttest"
)

func TestAgentJobsContract(t *testing.T) {
	porttest.AgentJobsContract(t, func(t *testing.T) porttest.AgentJobsHarness {
		db := pgtest.New(t)
		exps := postgres.NewExplorationRepository(db.DB)
		return porttest.AgentJobsHarness{
			Jobs: postgres.NewAgentJobRepository(db.DB),
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

// Retention deletes ended jobs past their time, and nothing else.
func TestRetentionDeletesEndedJobsOnly(t *testing.T) {
	db := pgtest.New(t)
	ctx := t.Context()
	person, _ := people.NewPersonID(rand.Reader)
	_, err := db.Pool.Exec(ctx, `INSERT INTO people (id) VALUES ($1)`, person)
	require.NoError(t, err)
	exp, _ := explorations.NewID(rand.Reader, explorations.IDPrefix)
	now := time.Now().UTC()
	require.NoError(t, postgres.NewExplorationRepository(db.DB).CreateExploration(ctx, explorations.Exploration{ID: exp, Owner: person, Question: "q", CreatedAt: now, UpdatedAt: now}))
	jobs := postgres.NewAgentJobRepository(db.DB)
	var all []agentjobs.Job
	for i := range 3 {
		all = append(all, agentjobs.Job{ID: fmt.Sprintf("job_%032d", i), Owner: person, Exploration: exp, Conversation: exp, Kind: "map", Title: "t", Brief: "b",
			Status: agentjobs.Open, CreatedAt: now})
	}
	require.NoError(t, jobs.Open(ctx, all, explorations.Exploration{}, agentjobs.MaxOpenPerPerson))
	_, err = jobs.Stop(ctx, person, all[0].ID, now.Add(-31*24*time.Hour))
	require.NoError(t, err)
	_, err = jobs.Stop(ctx, person, all[1].ID, now)
	require.NoError(t, err)
	n, err := postgres.NewRetention(db.DB).Delete(ctx, ports.EndedJobs, agentjobsapp.JobsKept, 100)
	require.NoError(t, err)
	assert.EqualValues(t, 1, n, "only the job that ended more than 30 days ago")
	_, err = jobs.Job(ctx, all[0].ID)
	assert.True(t, errs.Is(err, errs.NotFound))
}
