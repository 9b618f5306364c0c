package postgres_test

import (
	"testing"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/ports"
	"github.com/petal-near/petal/ports/porttest"
)

func TestExplorationRepositoryContract(t *testing.T) {
	porttest.ExplorationStoreContract(t, func(t *testing.T) ports.ExplorationStore {
		return postgres.NewExplorationRepository(pgtest.New(t).DB)
	})
}

func TestDataBudgetRepositoryContract(t *testing.T) {
	porttest.DataBudgetContract(t, func(t *testing.T) ports.DataBudget {
		return postgres.NewDataBudgetRepository(pgtest.New(t).DB)
	})
}
