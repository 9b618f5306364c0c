package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sseEvent is one Server-Sent Event as a real client parses it.
type sseEvent struct {
	ID   string
	Name string
	Data string
}

func (e sseEvent) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(e.Data), &m); err != nil {
		t.Fatalf("event %s data is not JSON: %v: %s", e.Name, err, e.Data)
	}
	return m
}

// sseStream reads events off a live response.
type sseStream struct {
	res    *http.Response
	events chan sseEvent
	cancel context.CancelFunc
}

// openSSE sends a request and returns the open stream; the response must be
// 200 text/event-stream.
func (p *testPetal) openSSE(t testing.TB, method, path, body string, headers ...string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		cancel()
		t.Fatalf("%s %s: %d %s: %s", method, path, res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	s := &sseStream{res: res, events: make(chan sseEvent, 4096), cancel: cancel}
	go func() {
		defer close(s.events)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sseEvent
		var data []string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.Name != "" || len(data) > 0 {
					ev.Data = strings.Join(data, "\n")
					s.events <- ev
				}
				ev, data = sseEvent{}, nil
			case strings.HasPrefix(line, "id: "):
				ev.ID = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				ev.Name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = append(data, strings.TrimPrefix(line, "data: "))
			}
		}
	}()
	t.Cleanup(s.close)
	return s
}

func (s *sseStream) close() { s.cancel() }

// next is the next event other than a heartbeat, or false when the stream ended.
func (s *sseStream) next(t testing.TB) (sseEvent, bool) {
	t.Helper()
	for {
		select {
		case ev, ok := <-s.events:
			if ok && ev.Name == "heartbeat" {
				continue
			}
			return ev, ok
		case <-time.After(60 * time.Second):
			t.Fatal("no event for 60 s")
			return sseEvent{}, false
		}
	}
}

// rest reads every event until the server ends the stream.
func (s *sseStream) rest(t testing.TB) []sseEvent {
	t.Helper()
	var out []sseEvent
	for {
		ev, ok := s.next(t)
		if !ok {
			return out
		}
		out = append(out, ev)
	}
}
