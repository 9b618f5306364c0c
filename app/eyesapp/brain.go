package eyesapp

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/textmatch"
)

// The brain's contract names.
const (
	ToolBrainIndex = "brain_index"
	ToolBrainRoute = "brain_route"
	ToolBrainFile  = "brain_file"
)

// Kinds of brain file, in the order brain_index lists them: doctrine first.
var brainKinds = []string{"doctrine", "chapter", "recipe"}

// brainRouteMax is how many files brain_route answers.
const brainRouteMax = 3

//go:embed brain/*.md
var brainFS embed.FS

// BrainHeader is a brain file's header.
type BrainHeader struct {
	ID      string   `json:"id"`
	Kind    string   `json:"kind"`
	Title   string   `json:"title"`
	Answers []string `json:"answers"` // the calls (contract methods, petal's tools, refusal codes) it answers for
}

// RefineSchema: the kinds of brain file.
func (BrainHeader) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "kind").Enum = []any{"doctrine", "chapter", "recipe"}
}

// BrainFile is one file of the brain, whole.
type BrainFile struct {
	BrainHeader
	Commit   string `json:"commit"`
	Markdown string `json:"markdown"`
}

// BrainIndex is brain_index's answer.
type BrainIndex struct {
	Commit string        `json:"commit"`
	Files  []BrainHeader `json:"files"`
}

// BrainRoute is brain_route's answer: the best files, best first.
type BrainRoute struct {
	Commit  string       `json:"commit"`
	Query   string       `json:"q,omitempty"`
	Answers []string     `json:"answers,omitempty"`
	Files   []BrainMatch `json:"files"`
}

// BrainMatch is one file brain_route found, with why.
type BrainMatch struct {
	BrainHeader
	Score   float64  `json:"score"`
	Calls   []string `json:"calls,omitempty"` // the calls asked for that it answers
	Matched []string `json:"matched,omitempty"`
}

// BrainService is Petal's own doctrine, chapters and recipes for agents,
// embedded in the binary: the same on every replica, changed only by a
// build, so the build id is its commit.
type BrainService struct {
	files []BrainFile // doctrine first, then chapters, then recipes
	byID  map[string]int
	text  *textmatch.Index
}

var _ toolkit.ToolSet = (*BrainService)(nil)

// NewBrainService reads the embedded brain. A file without a sound header is
// a programming error, found at start-up (and by TestBrainFilesAreSound).
func NewBrainService() *BrainService {
	s, err := loadBrain(brainFS)
	if err != nil {
		panic("app: the brain: " + err.Error())
	}
	return s
}

func loadBrain(fsys fs.FS) (*BrainService, error) {
	names, err := fs.Glob(fsys, "brain/*.md")
	if err != nil {
		return nil, err
	}
	s := &BrainService{byID: map[string]int{}}
	for _, name := range names {
		raw, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		f, err := parseBrainFile(string(raw))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if f.ID != strings.TrimSuffix(path.Base(name), ".md") {
			return nil, fmt.Errorf("%s: id %q is not the file's name", name, f.ID)
		}
		s.files = append(s.files, f)
	}
	rank := func(kind string) int {
		for i, k := range brainKinds {
			if k == kind {
				return i
			}
		}
		return len(brainKinds)
	}
	sort.SliceStable(s.files, func(i, j int) bool {
		if a, b := rank(s.files[i].Kind), rank(s.files[j].Kind); a != b {
			return a < b
		}
		return s.files[i].ID < s.files[j].ID
	})
	var docs []textmatch.Doc
	for i, f := range s.files {
		s.byID[f.ID] = i
		docs = append(docs, textmatch.Doc{ID: f.ID, Fields: []textmatch.Field{
			{Text: f.Title, Weight: 3}, {Text: strings.Join(f.Answers, " "), Weight: 2}, {Text: f.Markdown, Weight: 1},
		}})
	}
	s.text = textmatch.New(docs)
	return s, nil
}

// parseBrainFile reads a file's header, between two lines of ---, as
// "key: value" lines (answers comma-separated), and keeps the rest as its
// Markdown.
func parseBrainFile(raw string) (BrainFile, error) {
	rest, ok := strings.CutPrefix(raw, "---\n")
	if !ok {
		return BrainFile{}, fmt.Errorf("no header: the file must start with ---")
	}
	head, body, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		return BrainFile{}, fmt.Errorf("the header has no closing ---")
	}
	var f BrainFile
	for _, line := range strings.Split(head, "\n") {
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			return BrainFile{}, fmt.Errorf("header line %q is not key: value", line)
		}
		value = strings.Trim(strings.TrimSpace(value), `"`)
		switch strings.TrimSpace(key) {
		case "id":
			f.ID = value
		case "kind":
			f.Kind = value
		case "title":
			f.Title = value
		case "answers":
			for _, a := range strings.Split(value, ",") {
				if a = strings.TrimSpace(a); a != "" {
					f.Answers = append(f.Answers, a)
				}
			}
		default:
			return BrainFile{}, fmt.Errorf("unknown header %q", key)
		}
	}
	switch {
	case f.ID == "" || f.Title == "":
		return BrainFile{}, fmt.Errorf("the header needs an id and a title")
	case !containsString(brainKinds, f.Kind):
		return BrainFile{}, fmt.Errorf("kind %q is not one of %s", f.Kind, strings.Join(brainKinds, ", "))
	}
	if f.Answers == nil {
		f.Answers = []string{}
	}
	f.Markdown = strings.TrimLeft(body, "\n")
	return f, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Tools implements ToolSet. The brain reads nothing outside the binary, so a
// public site keeps it.
func (s *BrainService) Tools() []toolkit.Tool {
	return []toolkit.Tool{
		toolkit.WithIO(toolkit.Tool{
			Name:        ToolBrainIndex,
			Description: "Petal's brain: every file's header (id, kind, title, answers), doctrine first, then chapters, then recipes, with the brain's commit. Read the doctrine before anything else.",
		}, func(context.Context, toolkit.Call, struct{}) (BrainIndex, error) { return s.Index(), nil }),
		toolkit.WithIO(toolkit.Tool{
			Name:        ToolBrainRoute,
			Description: "The brain's best three files for a question (q, in plain words), for the calls a contract answers (answers: contract methods, petal's tools or refusal codes, comma-separated, like get_policy,ft_balance_of), or both. Then read one whole with brain_file.",
		}, func(_ context.Context, _ toolkit.Call, in brainRouteInput) (BrainRoute, error) {
			return s.Route(in.Q, in.Answers)
		}),
		toolkit.WithIO(toolkit.Tool{
			Name:        ToolBrainFile,
			Description: "One brain file, whole, by its id (from brain_index or brain_route): its header and its Markdown. The doctrine is read first.",
		}, func(_ context.Context, _ toolkit.Call, in brainFileInput) (BrainFile, error) { return s.File(in.ID) }),
	}
}

type (
	brainRouteInput struct {
		Q       string `json:"q,omitempty" jsonschema:"a question in plain words"`
		Answers string `json:"answers,omitempty" jsonschema:"calls a contract answers (or petal's tools, or refusal codes), comma-separated"`
	}
	brainFileInput struct {
		ID string `json:"id" jsonschema:"a brain file's id, as brain_index lists it"`
	}
)

func (brainRouteInput) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "q").MaxLength = jsonschema.Ptr(500)
	toolkit.Property(s, "answers").MaxLength = jsonschema.Ptr(500)
}

func (brainFileInput) RefineSchema(s *jsonschema.Schema) {
	id := toolkit.Property(s, "id")
	id.Pattern, id.MaxLength = `^[a-z0-9-]+$`, jsonschema.Ptr(64)
}

// Index is every file's header, doctrine first.
func (s *BrainService) Index() BrainIndex {
	out := BrainIndex{Commit: toolkit.BuildID, Files: make([]BrainHeader, 0, len(s.files))}
	for _, f := range s.files {
		out.Files = append(out.Files, f.BrainHeader)
	}
	return out
}

// File is one file, whole.
func (s *BrainService) File(id string) (BrainFile, error) {
	i, ok := s.byID[id]
	if !ok {
		return BrainFile{}, errs.Newf(errs.NotFound, "the brain has no file %q", id).WithHint("brain_index lists every file's id")
	}
	f := s.files[i]
	f.Commit = toolkit.BuildID
	return f, nil
}

// Route is the best three files for a question, for calls named, or both: a
// file answering a named call ranks above one that only matches words.
func (s *BrainService) Route(q, answers string) (BrainRoute, error) {
	q = strings.TrimSpace(q)
	var calls []string
	for _, a := range strings.Split(answers, ",") {
		if a = strings.ToLower(strings.TrimSpace(a)); a != "" && !containsString(calls, a) {
			calls = append(calls, a)
		}
	}
	if q == "" && len(calls) == 0 {
		return BrainRoute{}, errs.New(errs.BadInput, "q or answers is required: a question, or the calls a contract answers",
			"like q=what does the gini mean, or answers=get_policy,get_proposals")
	}
	if len(calls) > 20 {
		return BrainRoute{}, errs.New(errs.BadInput, "answers: at most 20 calls")
	}
	scores := map[string]*BrainMatch{}
	get := func(id string) *BrainMatch {
		if m, ok := scores[id]; ok {
			return m
		}
		m := &BrainMatch{BrainHeader: s.files[s.byID[id]].BrainHeader}
		scores[id] = m
		return m
	}
	for _, f := range s.files {
		for _, c := range calls {
			for _, a := range f.Answers {
				if strings.EqualFold(a, c) {
					m := get(f.ID)
					m.Calls = append(m.Calls, a)
					m.Score += 10 // a named call outranks any words
				}
			}
		}
	}
	if q != "" {
		for _, h := range s.text.Rank(q, 0) {
			m := get(h.ID)
			m.Score += h.Score
			m.Matched = h.Matched
		}
	}
	out := BrainRoute{Commit: toolkit.BuildID, Query: q, Answers: calls, Files: []BrainMatch{}}
	for _, m := range scores {
		out.Files = append(out.Files, *m)
	}
	sort.Slice(out.Files, func(i, j int) bool {
		if out.Files[i].Score != out.Files[j].Score {
			return out.Files[i].Score > out.Files[j].Score
		}
		return s.byID[out.Files[i].ID] < s.byID[out.Files[j].ID]
	})
	if len(out.Files) > brainRouteMax {
		out.Files = out.Files[:brainRouteMax]
	}
	for i := range out.Files {
		out.Files[i].Score = float64(int(out.Files[i].Score*1000+0.5)) / 1000
	}
	return out, nil
}
