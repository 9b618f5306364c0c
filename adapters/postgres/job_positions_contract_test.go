package postgres_test

import (
	"testing"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/ports"
	"github.com/petal-near/petal/ports/porttest"
)

func TestJobPositionsContract(t *testing.T) {
	porttest.JobPositionsContract(t, func(t *testing.T) ports.JobPositions {
		return postgres.NewJobPositionRepository(pgtest.New(t).DB)
	})
}
