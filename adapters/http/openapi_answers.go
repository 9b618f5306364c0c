package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/petal-near/petal/app/toolkit"
)

// Answer is one success answer of a route with its own handler.
type Answer struct {
	Status int    // 200 when 0
	Media  string // the content type; application/json when empty
	// JSON is a value of the Go type the handler writes (its zero value will
	// do); the document describes the answer from that type.
	JSON any
	Says string // what the answer is
}

// answersJSON is a route's one answer: 200 and v's type as JSON.
func answersJSON(v any) []Answer { return []Answer{{JSON: v}} }

// The answers that are not JSON, described by their media type.
var (
	svgAnswer      = Answer{Media: "image/svg+xml", Says: "the picture, an SVG"}
	pageAnswer     = Answer{Media: "text/html", Says: "an HTML page"}
	markdownAnswer = Answer{Media: "text/markdown", Says: "a Markdown document"}
	plainAnswer    = Answer{Media: "text/plain", Says: "plain text"}
	streamAnswer   = Answer{Media: "text/event-stream", Says: "an event stream (SSE)"}
	notModified    = Answer{Status: http.StatusNotModified, Says: "not modified: the If-None-Match ETag is current"}
)

// pageErrors: a page answers its errors as a page, in the error's status.
func pageErrors() []Answer {
	var out []Answer
	for _, s := range []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
		http.StatusUnprocessableEntity, http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		out = append(out, Answer{Status: s, Media: "text/html", Says: http.StatusText(s) + ", as a page"})
	}
	return out
}

// plainErrors: a route for a reader that can only fetch a URL answers its
// errors as plain text.
func plainErrors(statuses ...int) []Answer {
	out := make([]Answer, 0, len(statuses))
	for _, s := range statuses {
		out = append(out, Answer{Status: s, Media: "text/plain", Says: http.StatusText(s) + ", in plain text"})
	}
	return out
}

func addAnswer(responses map[string]any, a Answer) error {
	status := a.Status
	if status == 0 {
		status = http.StatusOK
	}
	key := strconv.Itoa(status)
	resp, _ := responses[key].(map[string]any)
	if resp == nil {
		says := a.Says
		if says == "" {
			says = http.StatusText(status)
		}
		resp = map[string]any{"description": says}
		responses[key] = resp
	}
	media := a.Media
	if media == "" && a.JSON == nil {
		if status == http.StatusNotModified || status == http.StatusFound || status == http.StatusNoContent || status == http.StatusAccepted {
			return nil // no body
		}
		return fmt.Errorf("the %d answer names neither a media type nor a JSON type", status)
	}
	var schema any
	if a.JSON != nil {
		media = "application/json"
		s, err := toolkit.SchemaOf(a.JSON)
		if err != nil {
			return err
		}
		addToolsVersionProperty(s)
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		var plain map[string]any
		if err := json.Unmarshal(b, &plain); err != nil {
			return err
		}
		nameEveryField(plain) // as a tool's output is: no object typed as having no fields
		schema = plain
	} else if media == "application/json" {
		schema = map[string]any{"description": "any JSON value, as stored"}
	} else if media == "image/svg+xml" || media == "text/html" || media == "text/markdown" || media == "text/plain" || media == "text/event-stream" {
		schema = map[string]any{"type": "string"}
	} else {
		schema = map[string]any{"type": "string", "contentMediaType": media}
	}
	content, _ := resp["content"].(map[string]any)
	if content == nil {
		content = map[string]any{}
		resp["content"] = content
	}
	content[media] = map[string]any{"schema": schema}
	return nil
}

// addToolsVersionProperty: writeJSON splices tools_version into every JSON
// object it answers.
func addToolsVersionProperty(s *jsonschema.Schema) {
	if s.Type != "object" && (len(s.Types) == 0 || s.Types[len(s.Types)-1] != "object") {
		return
	}
	if s.Properties == nil {
		if s.AdditionalProperties != nil {
			return // a map: tools_version is one more of its keys
		}
		s.Properties = map[string]*jsonschema.Schema{}
	}
	s.Properties["tools_version"] = &jsonschema.Schema{Type: "string", Description: "the tool set's version"}
	s.Required = append(s.Required, "tools_version")
}

// The errors: each status an operation can answer, from the one error body.
var errorStatuses = map[int]string{
	http.StatusBadRequest:            "bad_input: the input is not what the route takes; the message names the field",
	http.StatusUnauthorized:          "unauthorised: no credential, or one that does not let the caller do this",
	http.StatusPaymentRequired:       "payment_required: the person's credit does not cover it",
	http.StatusForbidden:             "invite_required or not_on_this_site: this site does not do it for this caller",
	http.StatusNotFound:              "not_found: nothing by that name, or nothing this caller may see",
	http.StatusConflict:              "conflict: the state does not allow it now",
	http.StatusMethodNotAllowed:      "method_not_allowed: the route does not take this method",
	http.StatusRequestEntityTooLarge: "bad_input: the body is larger than the route takes",
	http.StatusUnprocessableEntity:   "cannot_read or invalid_spec: well-formed, but not something petal can read or draw",
	http.StatusTooManyRequests:       "rate_limited or budget_exhausted: try again after Retry-After seconds",
	http.StatusServiceUnavailable:    "source_failed: a source (the chain, a provider) or the database did not answer",
}

func errorResponseName(status int) string { return "Error" + strconv.Itoa(status) }

func errorResponses() map[string]any {
	out := map[string]any{}
	for status, says := range errorStatuses {
		out[errorResponseName(status)] = map[string]any{
			"description": says,
			"content": map[string]any{"application/json": map[string]any{
				"schema": map[string]any{"$ref": "#/components/schemas/Error"}}},
		}
	}
	return out
}

// failsOf is the error statuses a route can answer: the ones of its class,
// and the route's own (Route.Fails).
func failsOf(r Route, isTool bool) []int {
	set := map[int]bool{http.StatusBadRequest: true}
	add := func(ss ...int) {
		for _, s := range ss {
			set[s] = true
		}
	}
	switch {
	case isTool:
		// Every tool call: its input checked, public mode, the limit, what it
		// reads and the sources it reads from.
		// A credential in the input (an agent key, a link) or a write from
		// another site is unauthorised.
		add(http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusUnprocessableEntity,
			http.StatusTooManyRequests, http.StatusServiceUnavailable)
		if r.Access == AccessSession {
			add(http.StatusConflict)
		}
	case r.Access == AccessSession:
		add(http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusConflict, http.StatusTooManyRequests)
	case r.Access == AccessOpen:
		add(http.StatusNotFound, http.StatusTooManyRequests, http.StatusServiceUnavailable)
	default:
		add(http.StatusNotFound)
	}
	add(r.Fails...)
	out := make([]int, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Ints(out)
	return out
}

func addErrors(responses map[string]any, r Route, isTool bool) {
	for _, status := range failsOf(r, isTool) {
		if _, own := responses[strconv.Itoa(status)]; own {
			continue // the route answers this status in a shape of its own (Answers)
		}
		if _, ok := errorStatuses[status]; !ok {
			panic("httpapi: route " + r.Path + " fails with " + strconv.Itoa(status) + ", which errorStatuses does not describe")
		}
		responses[strconv.Itoa(status)] = map[string]any{"$ref": "#/components/responses/" + errorResponseName(status)}
	}
	responses["default"] = map[string]any{
		"description": "any other error (500 internal), in the same shape",
		"content":     map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Error"}}},
	}
}

// Credential is one way a caller proves who they are.
type Credential string

// The credentials. Anyone is no credential at all: the route serves anyone.
const (
	Anyone    Credential = ""
	Session   Credential = "sessionCookie"
	AgentLink Credential = "agentLink"
	LinkToken Credential = "linkToken"
)

func securitySchemes(cookie string) map[string]any {
	return map[string]any{
		string(Session): map[string]any{"type": "apiKey", "in": "cookie", "name": cookie,
			"description": "the session petal sets at sign-in (POST /api/v1/auth/verify) or when a write first needs an owner; " +
				"same-origin only: a write from another site is unauthorised"},
		string(AgentLink): map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "petal_agent_…",
			"description": "an agent link (POST /api/v1/agents/link), as Authorization: Bearer on /api/v1/agents/wait, or as take_job's and report_job's agent_key"},
		string(LinkToken): map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "an exploration link's token",
			"description": "an exploration's read or continue link (POST /api/v1/explorations/{ref}/links). It travels in the path, as {ref} " +
				"of /api/v1/explorations/{ref}/… or {token} of /s/{token}, or as a tool's exploration field; OpenAPI has no scheme for a " +
				"credential in a path, so this one names it for the operations that take it, and no Authorization header is read for it"},
	}
}

// takesOf is what credentials a route takes: the route's own (Takes), else
// its class's.
func takesOf(r Route) []Credential {
	if len(r.Takes) > 0 {
		return r.Takes
	}
	if r.Access != AccessSession {
		return []Credential{Anyone}
	}
	if strings.HasPrefix(r.Path, "/api/v1/explorations/:ref") {
		return []Credential{Session, LinkToken}
	}
	return []Credential{Session}
}

func security(r Route, _ bool) []map[string][]string {
	var out []map[string][]string
	for _, c := range takesOf(r) {
		if c == Anyone {
			out = append(out, map[string][]string{})
			continue
		}
		out = append(out, map[string][]string{string(c): {}})
	}
	return out
}
