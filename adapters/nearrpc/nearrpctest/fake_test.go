package nearrpctest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var writeRecordings = flag.Bool("write-recordings", false, "regenerate testdata/*.json from testdata/sources")

// The wire-shaped recordings are generated from their readable sources; this
// keeps the two in step (and writes them with -write-recordings).
func TestRecordingsUpToDate(t *testing.T) {
	sources, err := filepath.Glob("testdata/sources/*.json")
	if err != nil || len(sources) == 0 {
		t.Fatalf("no sources: %v", err)
	}
	for _, path := range sources {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		var src Source
		if err := dec.Decode(&src); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		rec, err := FromSource(src)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		want, err := Encode(rec)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join("testdata", filepath.Base(path))
		if *writeRecordings {
			if err := os.WriteFile(out, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(out)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is not generated from %s: run go test ./adapters/nearrpc/nearrpctest -run TestRecordingsUpToDate -write-recordings", out, path)
		}
	}
}

func TestEveryRecordingIsWireShaped(t *testing.T) {
	recs := Embedded(t)
	if len(recs) < 10 {
		t.Fatalf("only %d recordings", len(recs))
	}
	for _, r := range recs {
		var resp struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(r.Response, &resp); err != nil {
			t.Errorf("%s: %v", r.Name, err)
			continue
		}
		if resp.JSONRPC != "2.0" || len(resp.ID) == 0 || (len(resp.Result) == 0) == (len(resp.Error) == 0) {
			t.Errorf("%s: not a JSON-RPC 2.0 answer with exactly one of result and error", r.Name)
		}
		if r.Method == "query" && !strings.Contains(string(r.Params), `"request_type"`) {
			t.Errorf("%s: a query names its request_type", r.Name)
		}
	}
}
