package specs

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzValidateSpec feeds validate_spec's domain (ParseSpec, then the checks
// against a snapshot) any bytes. It must never panic, every problem must have
// a JSON Pointer path and a message, and a spec it accepts must name, lay
// out, render to well-formed XML, and read back as itself from its canonical
// JSON. Run: go test ./domain/specs -run '^$' -fuzz FuzzValidateSpec -fuzztime 60s
func FuzzValidateSpec(f *testing.F) {
	snap := daoSnapshot()
	for _, intent := range []string{"", "top 3, equal sizes, no labels", "colour by band, by name, hide others", "only council, square root"} {
		s, err := Propose(snap, daoSHA, intent)
		if err != nil {
			f.Fatal(err)
		}
		b, _ := json.Marshal(s)
		f.Add(b)
	}
	for _, seed := range []string{
		``, `null`, `[]`, `{}`, `"flower-spec/v1"`, `{"schema":"flower-spec/v1"}`,
		`{"schema":"flower-spec/v1","snapshot":"` + daoSHA + `","title":"t","petals":{"top":1},"size":"weight","colour":"group","labels":"name","order":"weight","legend":true,"others":"fold"}`,
		`{"schema":"flower-spec/v1","snapshot":"` + daoSHA + `","title":" ","petals":{"top":60.0,"min_share":1e-9,"groups":["council","council"]},"size":"sqrt","colour":"band","labels":"none","order":"name","legend":false,"others":"hide"}`,
		`{"petals":{"top":1e400,"min_share":-0,"groups":[null,1,""]},"legend":"yes","x~/y":1}`,
		`{"petals":[],"title":"` + strings.Repeat("é", 201) + `"}`,
		`{"schema":"view/v1","palette":"tol-muted","labels":"none","max_labels":3}`,
		`{"title":"\ud800","snapshot":"` + strings.ToUpper(daoSHA) + `"}{}`,
		`{"a":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if _, problems := ParseView(raw); len(problems) > MaxProblems {
			t.Fatalf("%d view problems", len(problems))
		}
		spec, problems := ParseSpec(raw)
		if len(problems) > MaxProblems {
			t.Fatalf("%d problems, more than %d", len(problems), MaxProblems)
		}
		for _, p := range problems {
			if (p.Path != "" && !strings.HasPrefix(p.Path, "/")) || p.Message == "" {
				t.Fatalf("bad problem %+v", p)
			}
		}
		if len(problems) > 0 {
			return
		}
		// Against the fixture snapshot, whatever snapshot the spec names.
		against := spec
		against.Snapshot = daoSHA
		if problems := CheckAgainst(against, daoSHA, snap); len(problems) > 0 {
			return
		}
		name, canonical, err := Name(against)
		if err != nil || len(name) != 64 {
			t.Fatalf("name: %q %v", name, err)
		}
		back, problems := ParseSpec(canonical)
		if len(problems) > 0 {
			t.Fatalf("its canonical JSON is not valid: %v\n%s", problems, canonical)
		}
		if again, _, _ := Name(back); again != name {
			t.Fatalf("read back under another name: %s vs %s", again, name)
		}
		fl, err := Layout(against, snap)
		if err != nil {
			t.Fatal(err)
		}
		if len(fl.Petals) > MaxPetals+1 {
			t.Fatalf("%d petals", len(fl.Petals))
		}
		assertWellFormed(t, Render(fl, DefaultView()).SVG)
	})
}
