package specs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/snapshots"
)

// MaxProblems bounds how many problems one validation reports.
const MaxProblems = 50

// maxGroupsInSpec bounds petals.groups.
const maxGroupsInSpec = 64

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// problems collects what is wrong, each at a JSON Pointer path.
type problems struct{ list []errs.Problem }

func (p *problems) add(path, format string, args ...any) {
	if len(p.list) < MaxProblems {
		p.list = append(p.list, errs.Problem{Path: path, Message: fmt.Sprintf(format, args...)})
	}
}

// object reads raw as a JSON object, reporting unknown and missing members.
// It returns nil (with a problem) when raw is not an object.
func (p *problems) object(raw json.RawMessage, path string, known, required []string) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if err := strictUnmarshal(raw, &m); err != nil || m == nil {
		p.add(path, "must be a JSON object")
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(known, k) {
			p.add(path+"/"+escapePointer(k), "unknown field %s", quoteName(k))
		}
	}
	for _, k := range required {
		if _, ok := m[k]; !ok {
			p.add(path+"/"+k, "is required")
		}
	}
	return m
}

func (p *problems) str(m map[string]json.RawMessage, key, path string) (string, bool) {
	raw, ok := m[key]
	if !ok {
		return "", false
	}
	var s string
	if err := strictUnmarshal(raw, &s); err != nil {
		p.add(path, "must be a string")
		return "", false
	}
	return s, true
}

func (p *problems) enum(m map[string]json.RawMessage, key, path string, allowed []string) string {
	s, ok := p.str(m, key, path)
	if ok && !slices.Contains(allowed, s) {
		p.add(path, "must be one of %s, not %s", strings.Join(allowed, ", "), quoteName(s))
		return ""
	}
	return s
}

func (p *problems) boolean(m map[string]json.RawMessage, key, path string) bool {
	raw, ok := m[key]
	if !ok {
		return false
	}
	var b bool
	if err := strictUnmarshal(raw, &b); err != nil {
		p.add(path, "must be true or false")
	}
	return b
}

// integer reads a whole number in [lo, hi]; JSON's 5.0 is the integer 5.
func (p *problems) integer(m map[string]json.RawMessage, key, path string, lo, hi int) (int, bool) {
	raw, ok := m[key]
	if !ok {
		return 0, false
	}
	var f float64
	if err := strictUnmarshal(raw, &f); err != nil || f != math.Trunc(f) {
		p.add(path, "must be a whole number")
		return 0, false
	}
	if f < float64(lo) || f > float64(hi) {
		p.add(path, "must be from %d to %d", lo, hi)
		return 0, false
	}
	return int(f), true
}

func (p *problems) number(m map[string]json.RawMessage, key, path string, lo, hi float64) float64 {
	raw, ok := m[key]
	if !ok {
		return 0
	}
	var f float64
	if err := strictUnmarshal(raw, &f); err != nil {
		p.add(path, "must be a number")
		return 0
	}
	if f < lo || f > hi {
		p.add(path, "must be from %v to %v", lo, hi)
		return 0
	}
	return f
}

// ParseSpec reads a flower-spec/v1 and checks it against the schema
// (docs/schemas/flower-spec-v1.schema.json). With no problems, the spec is
// complete and normalised.
func ParseSpec(raw []byte) (Spec, []errs.Problem) {
	var p problems
	var s Spec
	m := p.object(raw, "", []string{"schema", "snapshot", "title", "petals", "size", "colour", "labels", "order", "legend", "others"},
		[]string{"schema", "snapshot", "title", "petals", "size", "colour", "labels", "order", "legend", "others"})
	if m == nil {
		return s, p.list
	}
	if v, ok := p.str(m, "schema", "/schema"); ok {
		if v != SpecSchema {
			p.add("/schema", "must be %q", SpecSchema)
		}
		s.Schema = v
	}
	if v, ok := p.str(m, "snapshot", "/snapshot"); ok {
		if !sha256Hex.MatchString(v) {
			p.add("/snapshot", "must be a snapshot's sha256: 64 lower-case hex digits")
		}
		s.Snapshot = v
	}
	if v, ok := p.str(m, "title", "/title"); ok {
		switch n := utf8.RuneCountInString(v); {
		case strings.TrimSpace(v) == "":
			p.add("/title", "must not be empty")
		case n > MaxTitle:
			p.add("/title", "must be at most %d characters, not %d", MaxTitle, n)
		}
		s.Title = v
	}
	if raw, ok := m["petals"]; ok {
		pm := p.object(raw, "/petals", []string{"top", "min_share", "groups"}, []string{"top"})
		if pm != nil {
			s.Petals.Top, _ = p.integer(pm, "top", "/petals/top", 1, MaxPetals)
			s.Petals.MinShare = p.number(pm, "min_share", "/petals/min_share", 0, 1)
			s.Petals.Groups = p.groups(pm)
		}
	}
	s.Size = p.enum(m, "size", "/size", Sizes)
	s.Colour = p.enum(m, "colour", "/colour", Colours)
	s.Labels = p.enum(m, "labels", "/labels", Labels)
	s.Order = p.enum(m, "order", "/order", Orders)
	s.Legend = p.boolean(m, "legend", "/legend")
	s.Others = p.enum(m, "others", "/others", Others)
	s.normalise()
	return s, p.list
}

func (p *problems) groups(pm map[string]json.RawMessage) []string {
	raw, ok := pm["groups"]
	if !ok {
		return nil
	}
	var list []json.RawMessage
	if err := strictUnmarshal(raw, &list); err != nil {
		p.add("/petals/groups", "must be an array of group ids")
		return nil
	}
	if len(list) > maxGroupsInSpec {
		p.add("/petals/groups", "must name at most %d groups", maxGroupsInSpec)
		return nil
	}
	out := make([]string, 0, len(list))
	for i, r := range list {
		path := fmt.Sprintf("/petals/groups/%d", i)
		var g string
		if err := strictUnmarshal(r, &g); err != nil || g == "" {
			p.add(path, "must be a group id (a non-empty string)")
			continue
		}
		if slices.Contains(out, g) {
			p.add(path, "names %s twice", quoteName(g))
			continue
		}
		out = append(out, g)
	}
	return out
}

// CheckAgainst checks a well-formed spec against the snapshot it draws: the
// snapshot must be the one named, and every group it selects one of the
// snapshot's.
func CheckAgainst(s Spec, snapSHA string, snap *snapshots.Snapshot) []errs.Problem {
	var p problems
	if s.Snapshot != snapSHA {
		p.add("/snapshot", "names snapshot %s, but the snapshot given is %s", short(s.Snapshot), short(snapSHA))
	}
	known := map[string]bool{}
	for _, g := range snap.Groups {
		known[g.ID] = true
	}
	for i, g := range s.Petals.Groups {
		if !known[g] {
			p.add(fmt.Sprintf("/petals/groups/%d", i), "%s is not one of the snapshot's groups", quoteName(g))
		}
	}
	return p.list
}

// ParseView reads a view/v1. Absent view members take the default view's.
func ParseView(raw []byte) (View, []errs.Problem) {
	var p problems
	v := DefaultView()
	m := p.object(raw, "", []string{"schema", "palette", "labels", "max_labels"}, []string{"schema"})
	if m == nil {
		return v, p.list
	}
	if s, ok := p.str(m, "schema", "/schema"); ok && s != ViewSchema {
		p.add("/schema", "must be %q", ViewSchema)
	}
	if s := p.enum(m, "palette", "/palette", PaletteNames); s != "" {
		v.Palette = s
	}
	if s := p.enum(m, "labels", "/labels", ViewLabelSet); s != "" {
		v.Labels = s
	}
	if n, ok := p.integer(m, "max_labels", "/max_labels", 0, MaxPetals+1); ok {
		v.MaxLabels = n
	}
	return v, p.list
}

// strictUnmarshal decodes one JSON value exactly: no trailing data.
func strictUnmarshal(raw []byte, into any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(into); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data")
	}
	// A JSON null decodes into anything without error; it is never a valid member here.
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return fmt.Errorf("null")
	}
	return nil
}

// escapePointer escapes a member name for a JSON Pointer (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// quoteName quotes a caller's string for a message, cut short.
func quoteName(s string) string {
	r := []rune(s)
	if len(r) > 60 {
		s = string(r[:60]) + "…"
	}
	return fmt.Sprintf("%q", s)
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12] + "…"
	}
	return sha
}
