package postgres_test

import (
	"testing"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/ports"
	"github.com/petal-near/petal/ports/porttest"
)

func TestSpecRepositoryContract(t *testing.T) {
	porttest.SpecStoreContract(t, func(t *testing.T) ports.SpecStore {
		return postgres.NewSpecRepository(pgtest.New(t).DB)
	})
}
