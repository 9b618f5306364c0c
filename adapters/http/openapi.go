package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
)

// The OpenAPI document is generated from the served route table and the tool
// registry, never written by hand, so it cannot drift from what is served.

func (s *Server) openapiRoutes() []Route {
	return []Route{{
		Method: http.MethodGet, Path: "/api/v1/openapi.json", Access: AccessOpen, Sessionless: true, Handler: s.openapi,
		Answers: []Answer{{Media: "application/json", Says: "this document"}},
		Summary: "this API as an OpenAPI 3.1 document, generated from the route table and the tool registry",
	}}
}

type openapiDoc struct {
	once sync.Once
	body []byte
	err  error
}

func (s *Server) openapiSite() OpenAPISite {
	return OpenAPISite{Server: s.deps.Config.PublicURL, CookieName: s.deps.Config.SessionCookieName()}
}

// OpenAPI is the served document, built from this server's routes.
func (s *Server) OpenAPI() (map[string]any, error) {
	return OpenAPI(s.Routes(), s.deps.Registry, s.openapiSite())
}

func (s *Server) openapi(c echo.Context) error {
	s.doc.once.Do(func() {
		doc, err := OpenAPI(s.Routes(), s.deps.Registry, s.openapiSite())
		if err == nil {
			s.doc.body, err = json.Marshal(doc)
		}
		s.doc.err = err
	})
	if s.doc.err != nil {
		return errs.New(errs.Internal, "this API's description could not be built").WithCause(s.doc.err)
	}
	return c.Blob(http.StatusOK, jsonContentType, s.doc.body)
}

var pathParam = regexp.MustCompile(`:([A-Za-z0-9_]+)`)

// OpenAPIPath is a route's path in OpenAPI's form: /a/:b becomes /a/{b}.
func OpenAPIPath(echoPath string) string { return pathParam.ReplaceAllString(echoPath, "{$1}") }

// OpenAPIMethod is the operation a route is documented under: ALL (/mcp) is
// documented as its POST, the only method a stateless MCP server takes.
func OpenAPIMethod(method string) string {
	if method == MethodAll {
		return "post"
	}
	return strings.ToLower(method)
}

// OpenAPISite is what the document says of the site itself.
type OpenAPISite struct {
	// Server is PETAL_API, the site's public address ("" on a developer's
	// machine: the document then names the server it was fetched from, "/").
	Server string
	// CookieName is the session cookie's name (it follows PETAL_API).
	CookieName string
}

// OpenAPI builds the document for routes: each tool route's input and output
// from the registry, each other route's answers from the Go types its handler
// writes (Route.Answers), the errors each can answer, what credential each
// takes and its capability's tag. An error names a route that is not
// described; the document is never served half-described.
func OpenAPI(routes []Route, reg *toolkit.Registry, site OpenAPISite) (map[string]any, error) {
	paths := map[string]map[string]any{}
	var problems []string
	usedTags := map[string]bool{}
	for _, r := range routes {
		p := OpenAPIPath(r.Path)
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		op, err := operation(r, reg)
		if err != nil {
			problems = append(problems, r.Method+" "+r.Path+": "+err.Error())
			continue
		}
		tag, ok := capabilityOf(p)
		if !ok {
			problems = append(problems, r.Method+" "+r.Path+": no capability in capabilities (adapters/http/openapi_tags.go) holds this path")
			continue
		}
		usedTags[tag] = true
		op["tags"] = []string{tag}
		paths[p][OpenAPIMethod(r.Method)] = op
		if r.Head {
			paths[p]["head"] = headOperation(r, op)
		}
	}
	if len(problems) > 0 {
		return nil, errors.New("httpapi: the OpenAPI document: " + strings.Join(problems, "; "))
	}
	server := map[string]any{"url": site.Server, "description": "this site (PETAL_API)"}
	if site.Server == "" {
		server = map[string]any{"url": "/", "description": "the server this document was fetched from (PETAL_API is not set)"}
	}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "petal",
			"version":     toolkit.ToolsVersion,
			"description": "Who holds power on NEAR, as a flower. Every tool route's body and answer are its tool's input and output; the same tools are served over MCP at /mcp. Every JSON object answered carries tools_version.",
			"license":     map[string]any{"name": "All rights reserved", "identifier": "LicenseRef-petal"},
		},
		"servers": []any{server},
		"tags":    tagList(usedTags),
		"paths":   paths,
		"components": map[string]any{
			"schemas":         map[string]any{"Error": json.RawMessage(errorSchema)},
			"responses":       errorResponses(),
			"securitySchemes": securitySchemes(site.CookieName),
		},
	}
	if site.Server != "" {
		doc["info"].(map[string]any)["contact"] = map[string]any{"name": "petal", "url": site.Server + "/connect"}
	}
	return doc, nil
}

const errorSchema = `{"type":"object","required":["error"],"properties":{"tools_version":{"type":"string"},` +
	`"error":{"type":"object","required":["code","message","hint"],` +
	`"properties":{"code":{"type":"string","enum":["bad_input","unauthorised","invite_required","not_found","cannot_read","invalid_spec",` +
	`"rate_limited","budget_exhausted","payment_required","not_on_this_site","source_failed","conflict","method_not_allowed","internal"]},` +
	`"message":{"type":"string"},"hint":{"type":"string"},"retry_after_s":{"type":"integer"},` +
	`"problems":{"type":"array","items":{"type":"object","properties":{"path":{"type":"string"},"message":{"type":"string"}}}}}}}}`

func operation(r Route, reg *toolkit.Registry) (map[string]any, error) {
	op := map[string]any{
		"x-petal-access": [...]string{"open", "session", "plain"}[r.Access],
	}
	if r.Method == MethodAll {
		op["x-petal-methods"] = []string{"ALL"}
	}
	var params []map[string]any
	inPath := map[string]bool{}
	for _, m := range pathParam.FindAllStringSubmatch(r.Path, -1) {
		inPath[m[1]] = true
		params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
	}
	tool, isTool := (*toolkit.Tool)(nil), false
	if r.Tool != "" && reg != nil {
		tool, isTool = reg.Get(r.Tool)
	}
	responses := map[string]any{}
	if !isTool {
		op["operationId"] = strings.ToLower(r.Method) + strings.NewReplacer("/", "_", ":", "", ".", "_", "-", "_").Replace(r.Path)
		op["summary"] = r.Summary
		op["description"] = r.Summary
		if len(r.Answers) == 0 {
			return nil, errors.New("no Answers: say what the route answers (Route.Answers, adapters/http/openapi_answers.go)")
		}
		for _, a := range r.Answers {
			if err := addAnswer(responses, a); err != nil {
				return nil, err
			}
		}
		for _, name := range r.Query {
			params = append(params, map[string]any{"name": name, "in": "query", "required": false,
				"schema": map[string]any{"type": "string"}, "description": r.Summary})
		}
		if len(params) > 0 {
			op["parameters"] = params
		}
		if r.Body != nil {
			schema, err := toolkit.SchemaOf(r.Body)
			if err != nil {
				return nil, err
			}
			op["requestBody"] = map[string]any{"required": true,
				"content": map[string]any{"application/json": map[string]any{"schema": schema}}}
		}
		addErrors(responses, r, false)
		op["responses"] = responses
		op["security"] = security(r, false)
		return op, nil
	}
	op["operationId"] = tool.Name
	op["summary"] = tool.Name
	op["description"] = tool.Description
	op["x-petal-tool"] = tool.Name
	output := ToolOutputSchema(tool)
	content := map[string]any{"application/json": map[string]any{"schema": output}}
	if tool.Long {
		content["text/event-stream"] = map[string]any{"schema": map[string]any{"type": "string",
			"description": "with Accept: text/event-stream: progress events, then the result or the error as the last event"}}
	}
	responses["200"] = map[string]any{"description": "the tool's output", "content": content}
	for _, a := range r.Answers {
		if err := addAnswer(responses, a); err != nil {
			return nil, err
		}
	}
	addErrors(responses, r, true)
	op["responses"] = responses
	op["security"] = security(r, true)
	// Path parameters fill input fields of the same name, or the one the
	// route names for them.
	fromPath := map[string]bool{}
	for p := range inPath {
		fromPath[p] = true
		if field, ok := r.PathAs[p]; ok {
			fromPath[field] = true
		}
	}
	var schema map[string]any
	_ = json.Unmarshal(tool.Input, &schema)
	nameEveryField(schema)
	props, _ := schema["properties"].(map[string]any)
	rest := map[string]any{}
	for name, p := range props {
		if !fromPath[name] {
			rest[name] = p
		}
	}
	var required []any
	if req, ok := schema["required"].([]any); ok {
		for _, n := range req {
			if name, ok := n.(string); ok && !fromPath[name] {
				required = append(required, name)
			}
		}
	}
	if r.Method == http.MethodGet {
		names := make([]string, 0, len(rest))
		for name := range rest {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			isRequired := false
			for _, n := range required {
				isRequired = isRequired || n == name
			}
			params = append(params, map[string]any{"name": name, "in": "query", "required": isRequired, "schema": rest[name]})
		}
	} else {
		body := map[string]any{}
		for k, v := range schema {
			body[k] = v
		}
		body["properties"] = rest
		if len(required) > 0 {
			body["required"] = required
		} else {
			delete(body, "required")
		}
		op["requestBody"] = map[string]any{
			"required": len(required) > 0,
			"content":  map[string]any{"application/json": map[string]any{"schema": body}},
		}
	}
	// Door-only query parameters (like render's ?format) are not in the
	// tool's input; the route's Summary says what they do.
	for _, name := range r.Query {
		params = append(params, map[string]any{"name": name, "in": "query", "required": false,
			"schema": map[string]any{"type": "string"}, "description": r.Summary})
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	return op, nil
}

// ToolOutputSchema is a tool's output as the document describes its answer:
// the tool's schema, made plain for generators (nameEveryField), with
// tools_version, which every JSON object answered carries (writeJSON), when
// it lists its properties.
func ToolOutputSchema(tool *toolkit.Tool) map[string]any {
	var s map[string]any
	if err := json.Unmarshal(tool.Output, &s); err != nil {
		return map[string]any{"description": "the tool's output"}
	}
	nameEveryField(s)
	if _, shapes := s["oneOf"]; shapes && s["properties"] == nil {
		s["properties"] = map[string]any{} // one of several shapes, each with tools_version
	}
	if props, ok := s["properties"].(map[string]any); ok {
		if _, has := props["tools_version"]; !has {
			props["tools_version"] = map[string]any{"type": "string", "description": "the tool set's version"}
		}
	}
	return s
}

// headOperation documents a GET route's HEAD: its parameters, no body.
func headOperation(r Route, get map[string]any) map[string]any {
	op := map[string]any{}
	for k, v := range get {
		op[k] = v
	}
	id, _ := get["operationId"].(string)
	op["operationId"] = "head_" + strings.TrimPrefix(id, "get_")
	op["summary"] = "as GET " + r.Path + ": the same status and headers, no body"
	op["description"] = op["summary"]
	delete(op, "x-petal-tool")
	responses := map[string]any{}
	for status, resp := range get["responses"].(map[string]any) {
		if m, ok := resp.(map[string]any); ok {
			if _, hasContent := m["content"]; hasContent {
				resp = map[string]any{"description": m["description"].(string) + " (headers only)"}
			}
		}
		responses[status] = resp
	}
	op["responses"] = responses
	return op
}

// Served is every method and path the router answers, OPTIONS (CORS
// preflight) aside. Tests hold the OpenAPI document to it.
func (s *Server) Served() []ServedRoute {
	var out []ServedRoute
	for _, r := range s.echo.Routes() {
		if r.Method == http.MethodOptions {
			continue
		}
		out = append(out, ServedRoute{Method: r.Method, Path: r.Path})
	}
	return out
}

// ServedRoute is one method and path the router answers.
type ServedRoute struct{ Method, Path string }

// Registry is the tool registry the routes call.
func (s *Server) Registry() *toolkit.Registry { return s.deps.Registry }

// nameEveryField rewrites a schema into an equal one that generators read
// the same way: an array without items gets items {} (any value, as before),
// a required name its object does not describe gets the property {}
// (any value, as before), and an object that says nothing of its fields
// gets additionalProperties {} (any, as before), so no generator types an
// object as having no fields at all (openapi-typescript writes
// Record<string, never> for a bare {"type":"object"}). It changes what the
// schema accepts in nothing.
func nameEveryField(s map[string]any) {
	if s == nil {
		return
	}
	if isType(s, "object") {
		_, props := s["properties"]
		_, more := s["additionalProperties"]
		_, patterns := s["patternProperties"]
		_, req := s["required"]
		if !props && !more && !patterns && !req {
			s["additionalProperties"] = map[string]any{}
		}
	}
	if isType(s, "array") {
		_, items := s["items"]
		_, prefix := s["prefixItems"]
		if !items && !prefix {
			s["items"] = map[string]any{}
		}
	}
	if req, ok := s["required"].([]any); ok && len(req) > 0 && s["additionalProperties"] != false {
		props, _ := s["properties"].(map[string]any)
		if props == nil {
			props = map[string]any{}
			s["properties"] = props
		}
		for _, n := range req {
			if name, ok := n.(string); ok && props[name] == nil {
				props[name] = map[string]any{}
			}
		}
	}
	for _, key := range []string{"items", "additionalProperties", "not", "contains"} {
		if sub, ok := s[key].(map[string]any); ok {
			nameEveryField(sub)
		}
	}
	for _, key := range []string{"oneOf", "anyOf", "allOf", "prefixItems"} {
		if subs, ok := s[key].([]any); ok {
			for _, sub := range subs {
				if m, ok := sub.(map[string]any); ok {
					nameEveryField(m)
				}
			}
		}
	}
	for _, key := range []string{"properties", "$defs", "definitions", "patternProperties"} {
		if subs, ok := s[key].(map[string]any); ok {
			for _, sub := range subs {
				if m, ok := sub.(map[string]any); ok {
					nameEveryField(m)
				}
			}
		}
	}
	for _, key := range []string{"allOf", "anyOf", "oneOf", "prefixItems"} {
		if subs, ok := s[key].([]any); ok {
			for _, sub := range subs {
				if m, ok := sub.(map[string]any); ok {
					nameEveryField(m)
				}
			}
		}
	}
}

func isType(s map[string]any, want string) bool {
	switch t := s["type"].(type) {
	case string:
		return t == want
	case []any:
		for _, x := range t {
			if x == want {
				return true
			}
		}
	}
	return false
}
