package main

import (
	"bufio"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
)

// otlpReceiver is an OTLP/HTTP trace endpoint on loopback, decoding what
// the SDK's exporter sends (protobuf, gzipped or not) as a collector would.
type otlpReceiver struct {
	URL      string
	mu       sync.Mutex
	spans    []*tracepb.Span
	services []string
}

func startOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/v1/traces" || req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "not an OTLP/HTTP protobuf export", http.StatusBadRequest)
			return
		}
		var body io.Reader
		body = io.LimitReader(req.Body, 16<<20)
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		raw, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var export coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(raw, &export); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		for _, rs := range export.GetResourceSpans() {
			for _, a := range rs.GetResource().GetAttributes() {
				if a.GetKey() == "service.name" {
					r.services = append(r.services, a.GetValue().GetStringValue())
				}
			}
			for _, ss := range rs.GetScopeSpans() {
				r.spans = append(r.spans, ss.GetSpans()...)
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// trace is the spans received so far of one trace id (hex).
func (r *otlpReceiver) trace(id string) []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range r.spans {
		if hex.EncodeToString(s.GetTraceId()) == id {
			out = append(out, s)
		}
	}
	return out
}

// With the SDK's OTEL_EXPORTER_OTLP_ENDPOINT set, one request to petal serve
// sends its trace to a real OTLP/HTTP endpoint: the HTTP door's server span
// named by its route, continuing the caller's traceparent, under it the
// pool's queries (otelpgx) and the NEAR RPC call (a client span, which
// carries traceparent on to the node), and the request's log line names the
// same trace.
func TestARequestsSpansReachAnOTLPEndpointAndShareItsLogLinesTrace(t *testing.T) {
	t.Parallel()
	receiver := startOTLPReceiver(t)
	near := nearrpctest.New(t)
	viewAccount(near, "nobody-here.near", "")
	var nodeSaw sync.Map // traceparent headers the fake node received
	node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if tp := req.Header.Get("Traceparent"); tp != "" {
			nodeSaw.Store(tp, true)
		}
		proxy, _ := http.NewRequestWithContext(req.Context(), req.Method, near.URL+req.URL.Path, req.Body)
		proxy.Header = req.Header.Clone()
		res, err := http.DefaultClient.Do(proxy)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		w.Header().Set("Content-Type", res.Header.Get("Content-Type"))
		w.WriteHeader(res.StatusCode)
		_, _ = io.Copy(w, res.Body)
	}))
	t.Cleanup(node.Close)

	db := pgtest.New(t)
	p := startProcess(t, db, map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.URL,
		"OTEL_SERVICE_NAME":           "petal-under-test",
		"OTEL_BSP_SCHEDULE_DELAY":     "100", // ms: the batch goes out soon
		"PETAL_NEAR_RPC_MAINNET":      node.URL,
	})
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	req, err := http.NewRequest(http.MethodGet, p.URL+"/api/v1/look-up?query=nobody-here.near", nil)
	require.NoError(t, err)
	req.Header.Set("Traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, string(body))

	var spans []*tracepb.Span
	ok := assert.Eventually(t, func() bool {
		spans = receiver.trace(traceID)
		var server, query, client bool
		for _, s := range spans {
			server = server || (s.GetKind() == tracepb.Span_SPAN_KIND_SERVER && s.GetName() == "GET /api/v1/look-up")
			query = query || (s.GetKind() == tracepb.Span_SPAN_KIND_CLIENT && s.GetName() == "SELECT" && hasAttribute(s, "db.query.text"))
			client = client || (s.GetKind() == tracepb.Span_SPAN_KIND_CLIENT && strings.HasPrefix(s.GetName(), "HTTP POST"))
		}
		return server && query && client
	}, 15*time.Second, 50*time.Millisecond, "the request's server, query and NEAR RPC spans arrive")
	require.True(t, ok, "the trace's spans: %v\nall spans: %v", spanNames(receiver.trace(traceID)), receiver.all())
	t.Logf("trace %s: %d spans: %v", traceID, len(spans), spanNames(spans))
	receiver.mu.Lock()
	assert.Contains(t, receiver.services, "petal-under-test", "the SDK's OTEL_SERVICE_NAME names the resource")
	receiver.mu.Unlock()
	for _, s := range spans {
		if s.GetKind() == tracepb.Span_SPAN_KIND_SERVER {
			assert.Equal(t, "00f067aa0ba902b7", hex.EncodeToString(s.GetParentSpanId()), "the server span continues the caller's")
		}
	}
	sawTrace := false
	nodeSaw.Range(func(k, _ any) bool {
		sawTrace = sawTrace || strings.Contains(k.(string), traceID)
		return true
	})
	assert.True(t, sawTrace, "the NEAR node received the trace in traceparent")

	// The request's access line carries the trace (and a span of it).
	var line map[string]any
	require.Eventually(t, func() bool {
		sc := bufio.NewScanner(strings.NewReader(p.logs.String()))
		for sc.Scan() {
			var l map[string]any
			if json.Unmarshal(sc.Bytes(), &l) == nil && l["msg"] == "request" && l["path"] == "/api/v1/look-up" {
				line = l
				assert.Equal(t, 1, strings.Count(sc.Text(), `"request_id"`), "one request_id: %s", sc.Text())
				return true
			}
		}
		return false
	}, 5*time.Second, 50*time.Millisecond)
	assert.Equal(t, traceID, line["trace_id"], "the log line names the request's trace: %v", line)
	assert.NotEmpty(t, line["request_id"])
}

func hasAttribute(s *tracepb.Span, key string) bool {
	for _, a := range s.GetAttributes() {
		if a.GetKey() == key {
			return true
		}
	}
	return false
}

func spanNames(spans []*tracepb.Span) []string {
	names := []string{}
	for _, s := range spans {
		names = append(names, s.GetKind().String()+" "+s.GetName())
	}
	return names
}

// Without an endpoint nothing is traced and no log line carries a trace.
func TestWithoutAnEndpointNothingIsTraced(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	p := startProcess(t, db, nil)
	req, err := http.NewRequest(http.MethodGet, p.URL+"/api/v1/networks", nil)
	require.NoError(t, err)
	req.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Eventually(t, func() bool { return strings.Contains(p.logs.String(), `"path":"/api/v1/networks"`) }, 5*time.Second, 50*time.Millisecond)
	assert.NotContains(t, p.logs.String(), "trace_id")
}

func (r *otlpReceiver) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.spans {
		out = append(out, hex.EncodeToString(s.GetTraceId())[:6]+" "+s.GetKind().String()+" "+s.GetName())
	}
	return out
}
