package porttest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/petal-near/petal/domain/agentjobs"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/ports"
)

// AgentJobsHarness is one fresh, empty AgentJobs store and the way to make
// what its rows point to: a person, and an exploration of theirs.
type AgentJobsHarness struct {
	Jobs           ports.AgentJobs
	NewPerson      func(t *testing.T) string
	NewExploration func(t *testing.T, owner string) string
}

func openJob(t *testing.T, h AgentJobsHarness, owner, exp, to string, at time.Time) agentjobs.Job {
	t.Helper()
	j := agentjobs.Job{ID: hexID(t, "job_", 16), Owner: owner, Exploration: exp, Conversation: h.NewExploration(t, owner), Kind: "map",
		Title: "read the DAO", Brief: "draw its members", To: to, Status: agentjobs.Open, CreatedAt: at}
	if err := h.Jobs.Open(t.Context(), []agentjobs.Job{j}, explorations.Exploration{}, agentjobs.MaxOpenPerPerson); err != nil {
		t.Fatal(err)
	}
	return j
}

func take(t *testing.T, s ports.AgentJobs, owner, agent, worker string) *agentjobs.Job {
	t.Helper()
	j, err := s.Take(t.Context(), takeReq(t, owner, agent, worker))
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func takeReq(t *testing.T, owner, agent, worker string) ports.Take {
	id := hexID(t, "lnk_", 16)
	hash := hexID(t, "", 32)
	return ports.Take{Owner: owner, Agent: agentjobs.AgentKey(agent), Name: agent, Worker: worker, N: 1,
		LinkID: id, LinkSHA256: hash, Process: "proc_suite", At: suiteNow}
}

// AgentJobsContract is what every AgentJobs adapter does.
func AgentJobsContract(t *testing.T, fresh func(t *testing.T) AgentJobsHarness) {
	t.Run("links: only the hash, revoke one or all, another's revokes nothing", func(t *testing.T) {
		h := fresh(t)
		ctx := t.Context()
		alice, bob := h.NewPerson(t), h.NewPerson(t)
		for i := range 3 {
			l := agentjobs.Link{ID: fmt.Sprintf("alk_%032d", i), Owner: alice, TokenSHA256: hexID(t, "", 32), CreatedAt: suiteNow.Add(time.Duration(i) * time.Second)}
			if err := h.Jobs.CreateLink(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
		links, err := h.Jobs.Links(ctx, alice)
		must(t, err)
		if len(links) != 3 || links[0].ID != "alk_"+fmt.Sprintf("%032d", 0) {
			t.Fatalf("links %+v", links)
		}
		got, err := h.Jobs.LinkByToken(ctx, links[1].TokenSHA256)
		must(t, err)
		if got.Owner != alice || got.RevokedAt != nil {
			t.Fatalf("by token %+v", got)
		}
		if n, err := h.Jobs.RevokeLinks(ctx, bob, links[0].ID, suiteNow); err != nil || n != 0 {
			t.Fatalf("another's revoke: %d %v", n, err)
		}
		if n, err := h.Jobs.RevokeLinks(ctx, alice, links[0].ID, suiteNow); err != nil || n != 1 {
			t.Fatalf("revoke one: %d %v", n, err)
		}
		if n, err := h.Jobs.RevokeLinks(ctx, alice, "", suiteNow); err != nil || n != 2 {
			t.Fatalf("revoke all: %d %v", n, err)
		}
		got, err = h.Jobs.LinkByToken(ctx, links[1].TokenSHA256)
		must(t, err)
		if got.RevokedAt == nil {
			t.Fatal("a revoked link reads revoked")
		}
		if _, err := h.Jobs.LinkByToken(ctx, hexID(t, "", 32)); !errs.Is(err, errs.NotFound) {
			t.Fatalf("unknown token: %v", err)
		}
	})

	t.Run("workers: places in order, the cap per agent, presence", func(t *testing.T) {
		h := fresh(t)
		ctx := t.Context()
		alice := h.NewPerson(t)
		until := suiteNow.Add(time.Minute)
		at := suiteNow
		seen := func(name, worker string, can *string) (agentjobs.Worker, error) {
			at = at.Add(time.Millisecond)
			return h.Jobs.Seen(ctx, agentjobs.Worker{Owner: alice, Agent: agentjobs.AgentKey(name), Name: name, Worker: worker, Can: can,
				LastSeen: at, WaitingUntil: &until}, 3, 2)
		}
		can := "splits work among sub-agents"
		w, err := seen("Codex", "a", &can)
		must(t, err)
		if w.N != 1 || w.Can == nil || *w.Can != can {
			t.Fatalf("first worker %+v", w)
		}
		w, err = seen("codex", "b", nil)
		must(t, err)
		if w.N != 2 {
			t.Fatalf("second worker n=%d", w.N)
		}
		w, err = seen("CODEX", "a", nil)
		must(t, err)
		if w.N != 1 || w.Can == nil {
			t.Fatalf("a worker seen again keeps its place and what it said: %+v", w)
		}
		_, err = seen("Codex", "c", nil)
		must(t, err)
		if _, err := seen("Codex", "d", nil); !errs.Is(err, errs.RateLimited) {
			t.Fatalf("past the cap: %v", err)
		}
		if _, err := seen("Claude Code", "", nil); err != nil {
			t.Fatalf("another agent has its own cap: %v", err)
		}
		if _, err := seen("Gemini", "", nil); !errs.Is(err, errs.RateLimited) {
			t.Fatalf("past the person's agents: %v", err)
		}
		must(t, h.Jobs.WaitEnded(ctx, alice, "codex", "b", at))
		ws, err := h.Jobs.Workers(ctx, alice)
		must(t, err)
		if len(ws) != 4 || ws[0].Agent != "codex" || ws[3].Agent != "claude code" || ws[1].Waiting(suiteNow) || !ws[0].Waiting(suiteNow) {
			t.Fatalf("workers %+v", ws)
		}
		other, err := h.Jobs.Workers(ctx, h.NewPerson(t))
		must(t, err)
		if len(other) != 0 {
			t.Fatal("another person sees no workers")
		}
	})

	t.Run("jobs: sent to an agent first, then anyone; the open cap", func(t *testing.T) {
		h := fresh(t)
		alice := h.NewPerson(t)
		exp := h.NewExploration(t, alice)
		anyone := openJob(t, h, alice, exp, "", suiteNow)
		forCodex := openJob(t, h, alice, exp, "codex", suiteNow.Add(time.Second))
		openJob(t, h, alice, exp, "claude code", suiteNow.Add(2*time.Second))
		if j := take(t, h.Jobs, h.NewPerson(t), "Codex", ""); j != nil {
			t.Fatal("another person's agent takes nothing")
		}
		j := take(t, h.Jobs, alice, "Codex", "w1")
		if j == nil || j.ID != forCodex.ID || j.Status != agentjobs.Taken || j.TakenBy != "Codex" || j.Worker != "w1" {
			t.Fatalf("first take %+v", j)
		}
		j = take(t, h.Jobs, alice, "Codex", "w2")
		if j == nil || j.ID != anyone.ID {
			t.Fatalf("then anyone's: %+v", j)
		}
		if j := take(t, h.Jobs, alice, "Codex", "w3"); j != nil {
			t.Fatalf("another agent's job isn't taken: %+v", j)
		}
		many := make([]agentjobs.Job, 0, agentjobs.MaxOpenPerPerson)
		for i := range agentjobs.MaxOpenPerPerson {
			many = append(many, agentjobs.Job{ID: hexID(t, "job_", 16), Owner: alice, Exploration: exp, Conversation: exp, Kind: "map",
				Title: "t", Brief: "b", Status: agentjobs.Open, CreatedAt: suiteNow.Add(time.Duration(i) * time.Millisecond)})
		}
		if err := h.Jobs.Open(t.Context(), many, explorations.Exploration{}, agentjobs.MaxOpenPerPerson); !errs.Is(err, errs.RateLimited) {
			t.Fatalf("past the open cap: %v", err)
		}
		if got, err := h.Jobs.JobsOf(t.Context(), exp, "", 100); err != nil || len(got) != 3 {
			t.Fatalf("a refused hand-out stores nothing: %d %v", len(got), err)
		}
	})

	t.Run("N takers race: each job is taken exactly once", func(t *testing.T) {
		h := fresh(t)
		alice := h.NewPerson(t)
		exp := h.NewExploration(t, alice)
		const jobs, takers = 40, 8
		for i := range jobs {
			openJob(t, h, alice, exp, "", suiteNow.Add(time.Duration(i)*time.Millisecond))
		}
		var mu sync.Mutex
		taken := map[string]int{}
		var wg sync.WaitGroup
		for w := range takers {
			wg.Go(func() {
				for {
					j, err := h.Jobs.Take(context.Background(), takeReq(t, alice, "codex", fmt.Sprint("w", w)))
					if err != nil {
						t.Error(err)
						return
					}
					if j == nil {
						return
					}
					mu.Lock()
					taken[j.ID]++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(taken) != jobs {
			t.Fatalf("%d of %d jobs taken", len(taken), jobs)
		}
		for id, n := range taken {
			if n != 1 {
				t.Fatalf("job %s taken %d times", id, n)
			}
		}
	})

	t.Run("a take's link counts on its conversation's cap; a full one's job waits open; a report frees its place", func(t *testing.T) {
		h := fresh(t)
		ctx := t.Context()
		alice := h.NewPerson(t)
		exp, conv := h.NewExploration(t, alice), h.NewExploration(t, alice)
		var all []agentjobs.Job
		for i := range explorations.MaxLiveLinks + 1 {
			all = append(all, agentjobs.Job{ID: fmt.Sprintf("job_%016d", i), Owner: alice, Exploration: exp, Conversation: conv, Kind: "map",
				Title: "a part", Brief: "draw it", Status: agentjobs.Open, CreatedAt: suiteNow.Add(time.Duration(i) * time.Millisecond)})
		}
		must(t, h.Jobs.Open(ctx, all, explorations.Exploration{}, agentjobs.MaxOpenPerPerson))
		// Takers race for the conversation's 100 places.
		var mu sync.Mutex
		links := map[string]string{} // job → its worker's link
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for {
					req := takeReq(t, alice, "codex", fmt.Sprint("w", w))
					j, err := h.Jobs.Take(context.Background(), req)
					if err != nil {
						t.Error(err)
						return
					}
					if j == nil {
						return
					}
					mu.Lock()
					links[j.ID] = req.LinkID
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(links) != explorations.MaxLiveLinks {
			t.Fatalf("%d jobs of one conversation taken; its links cap them at %d", len(links), explorations.MaxLiveLinks)
		}
		var last agentjobs.Job // the one left open: which lost the race is the race's
		for _, j := range all {
			if _, ok := links[j.ID]; !ok {
				last = j
			}
		}
		only := takeReq(t, alice, "codex", "")
		only.OnlyJob = last.ID
		if _, err := h.Jobs.Take(ctx, only); !errs.Is(err, errs.Conflict) {
			t.Fatalf("taking the job whose conversation is full: %v", err)
		}
		if j, err := h.Jobs.Job(ctx, last.ID); err != nil || j.Status != agentjobs.Open {
			t.Fatalf("the job passed over stays open: %+v %v", j, err)
		}
		var done string
		for id := range links {
			done = id
			break
		}
		if _, _, err := h.Jobs.Report(ctx, done, links[done], agentjobs.Done, "drawn", suiteNow); err != nil {
			t.Fatal(err)
		}
		if tk, err := h.Jobs.TakeOf(ctx, links[done]); err != nil || tk.Ended != agentjobs.EndedReported {
			t.Fatalf("the reported job's take: %+v %v", tk, err)
		}
		if _, _, err := h.Jobs.Report(ctx, done, links[done], agentjobs.Done, "again", suiteNow); !errs.Is(err, errs.BadInput) {
			t.Fatalf("a second report through the ended take: %v", err)
		}
		if j, err := h.Jobs.Take(ctx, only); err != nil || j == nil || j.ID != last.ID {
			t.Fatalf("the report freed a place: %v %v", j, err)
		}
	})

	t.Run("a take that is no longer wanted takes nothing; a release puts it back", func(t *testing.T) {
		h := fresh(t)
		alice := h.NewPerson(t)
		exp := h.NewExploration(t, alice)
		j0 := openJob(t, h, alice, exp, "", suiteNow)
		req := takeReq(t, alice, "codex", "")
		req.StillThere = func() error { return context.Canceled }
		if j, _ := h.Jobs.Take(t.Context(), req); j != nil {
			t.Fatal("a waiter that is gone takes nothing")
		}
		if j, err := h.Jobs.Job(t.Context(), j0.ID); err != nil || j.Status != agentjobs.Open {
			t.Fatalf("still open: %+v %v", j, err)
		}
		req = takeReq(t, alice, "codex", "")
		if j, err := h.Jobs.Take(t.Context(), req); err != nil || j == nil {
			t.Fatalf("take: %v", err)
		}
		must(t, h.Jobs.Release(t.Context(), req.LinkID, suiteNow))
		if j, err := h.Jobs.Job(t.Context(), j0.ID); err != nil || j.Status != agentjobs.Open {
			t.Fatalf("released: %+v %v", j, err)
		}
		// An undelivered take of a process with no lease goes back too.
		req = takeReq(t, alice, "codex", "")
		if j, err := h.Jobs.Take(t.Context(), req); err != nil || j == nil {
			t.Fatalf("take again: %v", err)
		}
		owners, err := h.Jobs.ReleaseUndelivered(t.Context(), time.Minute, 100)
		must(t, err)
		if len(owners) != 1 || owners[0] != alice {
			t.Fatalf("released %v", owners)
		}
		req = takeReq(t, alice, "codex", "")
		if j, err := h.Jobs.Take(t.Context(), req); err != nil || j == nil {
			t.Fatalf("take a third time: %v", err)
		}
		must(t, h.Jobs.Delivered(t.Context(), req.LinkID, suiteNow))
		if owners, _ := h.Jobs.ReleaseUndelivered(t.Context(), time.Minute, 100); len(owners) != 0 {
			t.Fatal("a delivered take stays")
		}
	})

	t.Run("a take through a revoked link takes nothing, checked as it takes", func(t *testing.T) {
		h := fresh(t)
		ctx := t.Context()
		alice, bob := h.NewPerson(t), h.NewPerson(t)
		exp := h.NewExploration(t, alice)
		key := agentjobs.Link{ID: hexID(t, "alk_", 16), Owner: alice, TokenSHA256: hexID(t, "", 32), CreatedAt: suiteNow}
		must(t, h.Jobs.CreateLink(ctx, key))
		bobs := agentjobs.Link{ID: hexID(t, "alk_", 16), Owner: bob, TokenSHA256: hexID(t, "", 32), CreatedAt: suiteNow}
		must(t, h.Jobs.CreateLink(ctx, bobs))
		j0 := openJob(t, h, alice, exp, "", suiteNow)
		// Another's link takes none of alice's jobs.
		req := takeReq(t, alice, "codex", "")
		req.AgentLink = bobs.ID
		if j, err := h.Jobs.Take(ctx, req); j != nil || !errs.Is(err, errs.Unauthorised) {
			t.Fatalf("a take through another's link: %v %v", j, err)
		}
		req = takeReq(t, alice, "codex", "a")
		req.AgentLink = key.ID
		first, err := h.Jobs.Take(ctx, req)
		if err != nil || first == nil || first.ID != j0.ID {
			t.Fatalf("a take through a live link: %v %v", first, err)
		}
		workerLink := req.LinkID
		// The worker's own link takes its next job while it works.
		j1 := openJob(t, h, alice, exp, "", suiteNow.Add(time.Second))
		req = takeReq(t, alice, "codex", "b")
		req.ExplorationLink = workerLink
		if j, err := h.Jobs.Take(ctx, req); err != nil || j == nil || j.ID != j1.ID {
			t.Fatalf("a take through a worker's live link: %v %v", j, err)
		}
		j2 := openJob(t, h, alice, exp, "", suiteNow.Add(2*time.Second))
		// The owner revokes the agent link: the next take through it,
		// whatever the caller read of the link before, takes nothing.
		if n, err := h.Jobs.RevokeLinks(ctx, alice, key.ID, suiteNow); err != nil || n != 1 {
			t.Fatalf("revoke: %d %v", n, err)
		}
		req = takeReq(t, alice, "codex", "a")
		req.AgentLink = key.ID
		if j, err := h.Jobs.Take(ctx, req); j != nil || !errs.Is(err, errs.Unauthorised) {
			t.Fatalf("a take through a revoked agent link: %v %v", j, err)
		}
		// Stopping the worker's job ends its link: it takes nothing either.
		if _, err := h.Jobs.Stop(ctx, alice, j0.ID, suiteNow); err != nil {
			t.Fatal(err)
		}
		req = takeReq(t, alice, "codex", "b")
		req.ExplorationLink = workerLink
		if j, err := h.Jobs.Take(ctx, req); j != nil || !errs.Is(err, errs.NotFound) {
			t.Fatalf("a take through a worker's ended link: %v %v", j, err)
		}
		if j, err := h.Jobs.Job(ctx, j2.ID); err != nil || j.Status != agentjobs.Open {
			t.Fatalf("the job stays open for a link that works: %+v %v", j, err)
		}
	})

	t.Run("stop and send again end the old take; reports through it are refused", func(t *testing.T) {
		h := fresh(t)
		ctx := t.Context()
		alice, bob := h.NewPerson(t), h.NewPerson(t)
		exp := h.NewExploration(t, alice)
		j0 := openJob(t, h, alice, exp, "", suiteNow)
		first := takeReq(t, alice, "codex", "")
		_, err := h.Jobs.Take(ctx, first)
		must(t, err)
		if _, err := h.Jobs.Stop(ctx, bob, j0.ID, suiteNow); !errs.Is(err, errs.NotFound) {
			t.Fatalf("another's stop: %v", err)
		}
		if _, err := h.Jobs.Reopen(ctx, alice, j0.ID, "claude code", suiteNow); err != nil {
			t.Fatal(err)
		}
		if _, _, err := h.Jobs.Report(ctx, j0.ID, first.LinkID, agentjobs.Done, "done", suiteNow); !isEnded(err, agentjobs.EndedHandedOver) {
			t.Fatalf("the old worker's report: %v", err)
		}
		if j := take(t, h.Jobs, alice, "codex", ""); j != nil {
			t.Fatal("handed over to another agent")
		}
		second := takeReq(t, alice, "Claude Code", "")
		if j, err := h.Jobs.Take(ctx, second); err != nil || j == nil {
			t.Fatalf("the new agent takes it: %v", err)
		}
		tk, err := h.Jobs.TakeOf(ctx, first.LinkID)
		must(t, err)
		if tk.Ended != agentjobs.EndedHandedOver {
			t.Fatalf("first take %+v", tk)
		}
		if _, err := h.Jobs.Stop(ctx, alice, j0.ID, suiteNow); err != nil {
			t.Fatal(err)
		}
		if _, _, err := h.Jobs.Report(ctx, j0.ID, second.LinkID, agentjobs.Done, "done", suiteNow); !isEnded(err, agentjobs.EndedStopped) {
			t.Fatalf("after a stop: %v", err)
		}
		if _, err := h.Jobs.Stop(ctx, alice, j0.ID, suiteNow); !errs.Is(err, errs.BadInput) {
			t.Fatalf("stopping a stopped job: %v", err)
		}
		j, err := h.Jobs.Reopen(ctx, alice, j0.ID, "", suiteNow)
		must(t, err)
		if j.Status != agentjobs.Open {
			t.Fatalf("retry %+v", j)
		}
		third := takeReq(t, alice, "codex", "")
		_, err = h.Jobs.Take(ctx, third)
		must(t, err)
		must(t, h.Jobs.Touch(ctx, third.LinkID, suiteNow.Add(time.Minute)))
		j, _, err = h.Jobs.Report(ctx, j0.ID, third.LinkID, agentjobs.Done, "drew it", suiteNow.Add(2*time.Minute))
		must(t, err)
		if j.Status != agentjobs.Done || j.Report != "drew it" {
			t.Fatalf("reported %+v", j)
		}
		if _, _, err := h.Jobs.Report(ctx, j0.ID, third.LinkID, agentjobs.Done, "again", suiteNow); !errs.Is(err, errs.BadInput) {
			t.Fatalf("a second report: %v", err)
		}
	})

	t.Run("a group's last report is the only one that ends it", func(t *testing.T) {
		h := fresh(t)
		ctx := t.Context()
		alice := h.NewPerson(t)
		exp := h.NewExploration(t, alice)
		conv := h.NewExploration(t, alice)
		const parts = 6
		group := hexID(t, "job_", 16)
		var all []agentjobs.Job
		for i := range parts {
			all = append(all, agentjobs.Job{ID: hexID(t, "job_", 16), Owner: alice, Exploration: exp, Conversation: conv, PartOf: group,
				Part: i + 1, Parts: parts, Kind: "map", Title: "part", Brief: "b", Status: agentjobs.Open, CreatedAt: suiteNow.Add(time.Duration(i) * time.Millisecond)})
		}
		must(t, h.Jobs.Open(ctx, all, explorations.Exploration{}, agentjobs.MaxOpenPerPerson))
		links := map[string]string{}
		for range parts {
			req := takeReq(t, alice, "codex", "")
			j, err := h.Jobs.Take(ctx, req)
			must(t, err)
			links[j.ID] = req.LinkID
		}
		var mu sync.Mutex
		done := 0
		var wg sync.WaitGroup
		for id, link := range links {
			wg.Go(func() {
				_, last, err := h.Jobs.Report(context.Background(), id, link, agentjobs.Done, "ok", suiteNow)
				if err != nil {
					t.Error(err)
				}
				if last {
					mu.Lock()
					done++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if done != 1 {
			t.Fatalf("%d reports ended the group", done)
		}
		g, err := h.Jobs.Group(ctx, group)
		must(t, err)
		if len(g) != parts || g[0].Part != 1 {
			t.Fatalf("group %+v", g)
		}
	})

}

func isEnded(err error, ended string) bool {
	e, ok := errs.As(err)
	return ok && e.Code == errs.Unauthorised && e.Extra["ended"] == ended
}
