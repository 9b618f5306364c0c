package postgres_test

import (
	"testing"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/ports"
	"github.com/petal-near/petal/ports/porttest"
)

func TestFlowerCorrectionRepositoryContract(t *testing.T) {
	porttest.FlowerCorrectionsContract(t, func(t *testing.T) (ports.PublishedFlowers, ports.FlowerCorrections) {
		db := pgtest.New(t).DB
		return postgres.NewPublishedFlowerRepository(db), postgres.NewFlowerCorrectionRepository(db)
	})
}
