package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/ports"
	"github.com/petal-near/petal/ports/porttest"
)

// The in-memory stores stand in for PostgreSQL's in app tests that only need
// a store to exist, so they run the same contract suites.

func TestSnapshotStoreContract(t *testing.T) {
	porttest.SnapshotStoreContract(t, func(*testing.T) ports.SnapshotStore { return memory.NewSnapshotStore() })
}

func TestDAODirectoryContract(t *testing.T) {
	porttest.DAODirectoryContract(t, func(*testing.T) ports.DAODirectory { return memory.NewDAODirectory() })
}

func TestSpecStoreContract(t *testing.T) {
	porttest.SpecStoreContract(t, func(*testing.T) ports.SpecStore { return memory.NewSpecStore() })
}

func memoryRuns(*testing.T) porttest.Runs {
	leases := memory.NewLeases(memory.SystemClock{})
	store := memory.NewRunRepository(memory.SystemClock{}, leases, memory.NewEventHub())
	return porttest.Runs{
		Store:  store,
		Leases: leases,
		Age:    func(_ *testing.T, id string, d time.Duration) { leases.Age(id, d) },
		AgeRun: func(_ *testing.T, id string, d time.Duration) { store.Age(id, d) },
	}
}

func TestRunStoreContract(t *testing.T) { porttest.RunStoreContract(t, memoryRuns) }

func TestLeasesContract(t *testing.T) { porttest.LeasesContract(t, memoryRuns) }

func TestAttestationsContract(t *testing.T) {
	porttest.AttestationsContract(t, func(*testing.T) ports.Attestations { return memory.NewAttestations() })
}

func TestEventBusContract(t *testing.T) {
	porttest.EventBusContract(t, func(*testing.T) porttest.Buses {
		hub := memory.NewEventHub()
		a, b := hub.Bus(), hub.Bus()
		leases := memory.NewLeases(memory.SystemClock{})
		return porttest.Buses{Store: memory.NewRunRepository(memory.SystemClock{}, leases, hub), A: a, B: b}
	})
}

func TestPromptCountsContract(t *testing.T) {
	porttest.PromptCountsContract(t, func(*testing.T) ports.PromptCounts { return memory.NewPromptCounts() })
}

func TestBlobsContract(t *testing.T) {
	porttest.BlobsContract(t, func(*testing.T) ports.Blobs { return memory.NewBlobs() })
}

func TestViewStoreContract(t *testing.T) {
	porttest.ViewStoreContract(t, func(*testing.T) ports.ViewStore { return memory.NewViews() })
}

// signInOnly is the two PeopleStore calls the ledger's suite makes to have a
// person to top up (there is no in-memory PeopleStore yet): a new person
// per sign-in.
type signInOnly struct{ ports.PeopleStore }

func (signInOnly) CreateChallenge(context.Context, people.Challenge) error { return nil }

func (signInOnly) SignIn(_ context.Context, in ports.SignIn) (ports.SignedIn, error) {
	s := in.NewSession
	s.Subject, s.WalletID = in.NewPersonID, in.Wallet.ID
	return ports.SignedIn{PersonID: in.NewPersonID, Session: s}, nil
}

func memoryLedger(*testing.T) porttest.Stores {
	leases := memory.NewLeases(memory.SystemClock{})
	ledger := memory.NewLedger(memory.SystemClock{}, leases)
	return porttest.Stores{People: signInOnly{}, Sessions: memory.NewSessions(), Invites: ledger, Ledger: ledger, Leases: leases}
}

func TestLedgerStoreContract(t *testing.T) { porttest.LedgerStoreContract(t, memoryLedger) }

func TestInviteStoreContract(t *testing.T) { porttest.InviteStoreContract(t, memoryLedger) }

func TestProfileStoreContract(t *testing.T) {
	porttest.ProfileStoreContract(t, func(*testing.T) ports.ProfileStore { return memory.NewProfiles() })
}

func TestSessionStoreContract(t *testing.T) { porttest.SessionStoreContract(t, memoryLedger) }

func TestExplorationStoreContract(t *testing.T) {
	porttest.ExplorationStoreContract(t, func(*testing.T) ports.ExplorationStore { return memory.NewExplorations() })
}
