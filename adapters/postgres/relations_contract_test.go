package postgres_test

import (
	"testing"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/ports"
	"github.com/petal-near/petal/ports/porttest"
)

func TestRelationRepositoryContract(t *testing.T) {
	porttest.RelationStoreContract(t, func(t *testing.T) ports.RelationStore {
		return postgres.NewRelationRepository(pgtest.New(t).DB)
	})
}
