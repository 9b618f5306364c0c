package postgres_test

import (
	"testing"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/ports"
	"github.com/petal-near/petal/ports/porttest"
)

// pgStores is every store of people, sessions, invites and the ledger over
// one fresh database.
func pgStores(t *testing.T) porttest.Stores {
	db := pgtest.New(t)
	return porttest.Stores{
		People:   postgres.NewPeopleRepository(db.DB),
		Sessions: postgres.NewSessionRepository(db.DB),
		Invites:  postgres.NewInviteRepository(db.DB),
		Ledger:   postgres.NewLedgerRepository(db.DB),
		Runs:     postgres.NewRunRepository(db.DB),
		Leases:   postgres.NewLeases(db.DB),
		Intents:  postgres.NewIntentTopUpRepository(db.DB),
	}
}

func TestSessionStoreContract(t *testing.T) { porttest.SessionStoreContract(t, pgStores) }

func TestPeopleStoreContract(t *testing.T) { porttest.PeopleStoreContract(t, pgStores) }

func TestInviteStoreContract(t *testing.T) { porttest.InviteStoreContract(t, pgStores) }

func TestLedgerStoreContract(t *testing.T) { porttest.LedgerStoreContract(t, pgStores) }

func TestIntentTopUpsContract(t *testing.T) { porttest.IntentTopUpsContract(t, pgStores) }

func TestChatQuotesContract(t *testing.T) {
	porttest.ChatQuotesContract(t, func(t *testing.T) ports.ChatQuotes { return postgres.NewChatQuoteRepository(pgtest.New(t).DB) })
}
