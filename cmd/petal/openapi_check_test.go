package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Every answer an end-to-end test receives from startPetal's server is held
// to the OpenAPI document that server serves: its status must be one the
// operation describes (a 5xx may fall to default), its media type one the
// status lists, and a JSON body must validate against that schema (JSON
// Schema 2020-12, as OpenAPI 3.1 writes it; the validator is the one the
// tool inputs are checked with). A route that answers something its
// description does not say fails the test that met it.

// answerChecker checks answers against one document.
type answerChecker struct {
	doc      map[string]any
	compiler *jsonschema.Compiler
	paths    []docPath

	mu      sync.Mutex
	schemas map[string]*jsonschema.Schema
}

type docPath struct {
	template string
	re       *regexp.Regexp
	segments []string
}

var (
	checkersMu sync.Mutex
	checkers   = map[[32]byte]*answerChecker{} // by the document's bytes: one per configuration
)

func checkerFor(t testing.TB, docBytes []byte) *answerChecker {
	t.Helper()
	key := sha256.Sum256(docBytes)
	checkersMu.Lock()
	defer checkersMu.Unlock()
	if c, ok := checkers[key]; ok {
		return c
	}
	c, err := newAnswerChecker(docBytes)
	if err != nil {
		t.Fatalf("the OpenAPI document cannot be read as a JSON Schema resource: %v", err)
	}
	checkers[key] = c
	return c
}

const docURL = "https://petal.invalid/openapi.json"

func newAnswerChecker(docBytes []byte) (*answerChecker, error) {
	var doc map[string]any
	if err := json.Unmarshal(docBytes, &doc); err != nil {
		return nil, err
	}
	res, err := jsonschema.UnmarshalJSON(bytes.NewReader(docBytes))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(docURL, res); err != nil {
		return nil, err
	}
	ch := &answerChecker{doc: doc, compiler: c, schemas: map[string]*jsonschema.Schema{}}
	paths, _ := doc["paths"].(map[string]any)
	for p := range paths {
		expr := "^" + regexp.MustCompile(`\\\{[A-Za-z0-9_]+\\\}`).ReplaceAllString(regexp.QuoteMeta(p), `[^/]+`) + "$"
		ch.paths = append(ch.paths, docPath{template: p, re: regexp.MustCompile(expr), segments: strings.Split(p, "/")})
	}
	// The router prefers a static segment to a parameter, segment by segment.
	sort.Slice(ch.paths, func(i, j int) bool {
		a, b := ch.paths[i].segments, ch.paths[j].segments
		for k := 0; k < len(a) && k < len(b); k++ {
			pa, pb := strings.HasPrefix(a[k], "{"), strings.HasPrefix(b[k], "{")
			if pa != pb {
				return !pa
			}
		}
		return ch.paths[i].template < ch.paths[j].template
	})
	return ch, nil
}

// check returns what is wrong with one answer, or "".
func (ch *answerChecker) check(method, path string, status int, header http.Header, body []byte, bodyComplete bool) string {
	template := ""
	for _, p := range ch.paths {
		if p.re.MatchString(path) {
			template = p.template
			break
		}
	}
	if template == "" {
		return "" // not a route: the router's own 404, which no operation describes
	}
	ops := ch.doc["paths"].(map[string]any)[template].(map[string]any)
	m := strings.ToLower(method)
	if template == "/mcp" {
		m = "post"
	}
	op, ok := ops[m].(map[string]any)
	if !ok {
		return "" // a method the route does not take: the router's 405
	}
	responses, _ := op["responses"].(map[string]any)
	key := strconv.Itoa(status)
	resp, ok := responses[key].(map[string]any)
	if !ok {
		if status < 500 {
			return fmt.Sprintf("%s %s answered %d, which its operation does not describe", method, template, status)
		}
		key = "default"
		resp, _ = responses[key].(map[string]any)
	}
	pointer := "/paths/" + escapePointer(template) + "/" + m + "/responses/" + key
	if ref, ok := resp["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/components/responses/")
		resp, _ = ch.doc["components"].(map[string]any)["responses"].(map[string]any)[name].(map[string]any)
		pointer = "/components/responses/" + escapePointer(name)
	}
	if resp == nil {
		return fmt.Sprintf("%s %s answered %d, and no response describes it", method, template, status)
	}
	if len(body) == 0 && bodyComplete {
		return "" // HEAD, 304, a redirect: nothing to hold to a schema
	}
	content, _ := resp["content"].(map[string]any)
	media, _, _ := mime.ParseMediaType(header.Get("Content-Type"))
	described := ""
	for k := range content {
		if k == media || (strings.HasSuffix(k, "/*") && strings.HasPrefix(media, strings.TrimSuffix(k, "*"))) {
			described = k
		}
	}
	if described == "" {
		return fmt.Sprintf("%s %s answered %d as %q, which its %s response does not list", method, template, status, media, key)
	}
	if media != "application/json" || !bodyComplete || header.Get("Content-Encoding") != "" {
		return ""
	}
	schema, err := ch.schema(pointer + "/content/" + escapePointer(described) + "/schema")
	if err != nil {
		return fmt.Sprintf("%s %s: the schema of its %s answer does not compile: %v", method, template, key, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Sprintf("%s %s answered %d with JSON that does not parse: %v", method, template, status, err)
	}
	if err := schema.Validate(v); err != nil {
		return fmt.Sprintf("%s %s answered %d with what its description does not say: %v\nthe answer: %.600s", method, template, status, err, body)
	}
	return ""
}

func (ch *answerChecker) schema(pointer string) (*jsonschema.Schema, error) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if s, ok := ch.schemas[pointer]; ok {
		return s, nil
	}
	s, err := ch.compiler.Compile(docURL + "#" + (&url.URL{Path: pointer}).EscapedPath())
	if err != nil {
		return nil, err
	}
	ch.schemas[pointer] = s
	return s, nil
}

func escapePointer(s string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(s) }

// checkAnswers wraps petal so every answer passes the checker; what fails
// is reported by report, once per test.
func checkAnswers(ch *answerChecker, report func(string)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := &answerRecorder{ResponseWriter: w}
			next.ServeHTTP(rec, r)
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			body := rec.body.Bytes()
			if r.Method == http.MethodHead {
				body = nil // written by the handler, dropped by net/http
			}
			if problem := ch.check(r.Method, r.URL.Path, status, w.Header(), body, !rec.overflow && !rec.hijacked); problem != "" {
				report(problem)
			}
		})
	}
}

// answerKeepLimit bounds the bytes kept of one answer for the check.
const answerKeepLimit = 16 << 20

// answerRecorder passes every byte through and keeps a copy of the body
// (not of an event stream, which is checked by its status and media type).
type answerRecorder struct {
	http.ResponseWriter
	status   int
	body     bytes.Buffer
	overflow bool
	hijacked bool
}

func (r *answerRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *answerRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if strings.HasPrefix(r.Header().Get("Content-Type"), "text/event-stream") {
		r.overflow = true
	} else if !r.overflow {
		if r.body.Len()+len(b) > answerKeepLimit {
			r.overflow = true
			r.body.Reset()
		} else {
			r.body.Write(b)
		}
	}
	return r.ResponseWriter.Write(b)
}

func (r *answerRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *answerRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	r.hijacked = true
	return http.NewResponseController(r.ResponseWriter).Hijack()
}

// Unwrap lets http.ResponseController reach the connection (deadlines).
func (r *answerRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// answerProblems collects one test's problems, each once.
type answerProblems struct {
	mu   sync.Mutex
	seen map[string]bool
	list []string
}

func (p *answerProblems) add(problem string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	if !p.seen[problem] {
		p.seen[problem] = true
		p.list = append(p.list, problem)
	}
}

func (p *answerProblems) all() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.list...)
}
