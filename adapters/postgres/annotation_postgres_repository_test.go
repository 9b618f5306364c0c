package postgres_test

import (
	"testing"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/ports/porttest"
)

func TestAnnotationRepositoryContract(t *testing.T) {
	porttest.AnnotationStoreContract(t, func(t *testing.T) porttest.Annotations {
		db := pgtest.New(t).DB
		return porttest.Annotations{Explorations: postgres.NewExplorationRepository(db), Annotations: postgres.NewAnnotationRepository(db)}
	})
}
