package postgres_test

import (
	"testing"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/ports"
	"github.com/petal-near/petal/ports/porttest"
)

func TestViewRepositoryContract(t *testing.T) {
	porttest.ViewStoreContract(t, func(t *testing.T) ports.ViewStore {
		return postgres.NewViewRepository(pgtest.New(t).DB)
	})
}
