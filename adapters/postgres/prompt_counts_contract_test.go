package postgres_test

import (
	"testing"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/ports"
	"github.com/petal-near/petal/ports/porttest"
)

func TestPromptCountsContract(t *testing.T) {
	porttest.PromptCountsContract(t, func(t *testing.T) ports.PromptCounts { return postgres.NewPromptCountRepository(pgtest.New(t).DB) })
}
