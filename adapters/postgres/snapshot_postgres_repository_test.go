package postgres_test

import (
	"testing"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/ports"
	"github.com/petal-near/petal/ports/porttest"
)

func TestSnapshotRepositoryContract(t *testing.T) {
	porttest.SnapshotStoreContract(t, func(t *testing.T) ports.SnapshotStore {
		return postgres.NewSnapshotRepository(pgtest.New(t).DB)
	})
}

func TestDAODirectoryRepositoryContract(t *testing.T) {
	porttest.DAODirectoryContract(t, func(t *testing.T) ports.DAODirectory {
		return postgres.NewDAODirectoryRepository(pgtest.New(t).DB)
	})
}
