package postgres_test

import (
	"testing"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/ports/porttest"
)

func TestConversationsContract(t *testing.T) {
	porttest.ConversationsContract(t, func(t *testing.T) porttest.ConversationStores {
		db := pgtest.New(t).DB
		return porttest.ConversationStores{List: postgres.NewConversationRepository(db), Runs: postgres.NewRunRepository(db),
			Explorations: postgres.NewExplorationRepository(db)}
	})
}
