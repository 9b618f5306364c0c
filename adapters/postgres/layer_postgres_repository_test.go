package postgres_test

import (
	"testing"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/ports/porttest"
)

func TestLayerRepositoryContract(t *testing.T) {
	porttest.LayerStoreContract(t, func(t *testing.T) porttest.Layers {
		db := pgtest.New(t).DB
		return porttest.Layers{Explorations: postgres.NewExplorationRepository(db), Layers: postgres.NewLayerRepository(db)}
	})
}
