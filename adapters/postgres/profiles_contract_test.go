package postgres_test

import (
	"testing"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/ports"
	"github.com/petal-near/petal/ports/porttest"
)

func TestProfileRepositoryContract(t *testing.T) {
	porttest.ProfileStoreContract(t, func(t *testing.T) ports.ProfileStore {
		return postgres.NewProfileRepository(pgtest.New(t).DB)
	})
}
