package httpapi

import (
	"encoding/json"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app"
)

// The OpenAPI document is generated from the served route table and the tool
// registry, never written by hand, so it cannot drift from what is served.

func (s *Server) openapiRoutes() []Route {
	return []Route{{
		Method: http.MethodGet, Path: "/api/v1/openapi.json", Access: AccessOpen, Sessionless: true, Handler: s.openapi,
		Summary: "this API as an OpenAPI 3.1 document, generated from the route table and the tool registry",
	}}
}

type openapiDoc struct {
	once sync.Once
	body []byte
}

func (s *Server) openapi(c echo.Context) error {
	s.doc.once.Do(func() {
		b, err := json.Marshal(OpenAPI(s.Routes(), s.deps.Registry))
		if err != nil {
			panic("httpapi: the OpenAPI document could not be encoded: " + err.Error())
		}
		s.doc.body = b
	})
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

// OpenAPI builds the document for routes, with each tool route's input and
// output schemas from the registry.
func OpenAPI(routes []Route, reg *app.Registry) map[string]any {
	paths := map[string]map[string]any{}
	for _, r := range routes {
		p := OpenAPIPath(r.Path)
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		paths[p][OpenAPIMethod(r.Method)] = operation(r, reg)
		if r.Head {
			paths[p]["head"] = headOperation(r, reg)
		}
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "petal",
			"version":     app.ToolsVersion,
			"description": "Who holds power on NEAR, as a flower. Every tool route's body and answer are its tool's input and output; the same tools are served over MCP at /mcp.",
		},
		"paths": paths,
		"components": map[string]any{
			"schemas": map[string]any{"Error": json.RawMessage(errorSchema)},
		},
	}
}

const errorSchema = `{"type":"object","required":["error"],"properties":{"error":{"type":"object","required":["code","message","hint"],` +
	`"properties":{"code":{"type":"string","enum":["bad_input","unauthorised","invite_required","not_found","cannot_read","invalid_spec",` +
	`"rate_limited","budget_exhausted","payment_required","not_on_this_site","source_failed","conflict","method_not_allowed","internal"]},` +
	`"message":{"type":"string"},"hint":{"type":"string"},"retry_after_s":{"type":"integer"},` +
	`"problems":{"type":"array","items":{"type":"object","properties":{"path":{"type":"string"},"message":{"type":"string"}}}}}}}}`

func operation(r Route, reg *app.Registry) map[string]any {
	op := map[string]any{
		"x-petal-access": [...]string{"open", "session", "plain"}[r.Access],
		"responses": map[string]any{
			"default": map[string]any{
				"description": "an error, in the contract's shape",
				"content":     map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Error"}}},
			},
		},
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
	tool, isTool := (*app.Tool)(nil), false
	if r.Tool != "" && reg != nil {
		tool, isTool = reg.Get(r.Tool)
	}
	if !isTool {
		op["operationId"] = strings.ToLower(r.Method) + strings.NewReplacer("/", "_", ":", "", ".", "_", "-", "_").Replace(r.Path)
		op["summary"] = r.Summary
		op["responses"].(map[string]any)["200"] = map[string]any{"description": "success"}
		if len(params) > 0 {
			op["parameters"] = params
		}
		return op
	}
	op["operationId"] = tool.Name
	op["summary"] = tool.Name
	op["description"] = tool.Description
	op["x-petal-tool"] = tool.Name
	op["responses"].(map[string]any)["200"] = map[string]any{
		"description": "the tool's output",
		"content":     map[string]any{"application/json": map[string]any{"schema": json.RawMessage(tool.Output)}},
	}
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
	return op
}

// headOperation documents a GET route's HEAD: its parameters, no body.
func headOperation(r Route, reg *app.Registry) map[string]any {
	op := operation(r, reg)
	get, _ := op["operationId"].(string)
	op["operationId"] = "head_" + strings.TrimPrefix(get, "get_")
	op["summary"] = "as GET " + r.Path + ": the same status and headers, no body"
	delete(op, "description")
	delete(op, "x-petal-tool")
	op["responses"].(map[string]any)["200"] = map[string]any{"description": "success, headers only"}
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
func (s *Server) Registry() *app.Registry { return s.deps.Registry }
