package memory_test

import (
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/memory"
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
