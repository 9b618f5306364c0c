package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	httpapi "github.com/petal-near/petal/adapters/http"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/config"
)

// The OpenAPI document is generated, so it must hold every route served and
// nothing else.
func TestOpenAPIIsEveryRouteServed(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	cfg, err := config.LoadConfig(func(string) string { return "" })
	require.NoError(t, err)
	svc, cleanup, err := buildService(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), lentPool{db.DB})
	require.NoError(t, err)
	defer cleanup()
	srv := svc.Server
	h := srv.Handler()

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	var doc struct {
		OpenAPI string                               `json:"openapi"`
		Paths   map[string]map[string]map[string]any `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &doc))
	assert.Equal(t, "3.1.0", doc.OpenAPI)

	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	served := map[string]bool{}
	for _, r := range srv.Served() {
		method := r.Method
		if r.Path == "/mcp" {
			method = http.MethodPost // ALL /mcp is documented as its POST
		}
		served[method+" "+httpapi.OpenAPIPath(r.Path)] = true
	}
	for op := range served {
		assert.True(t, documented[op], "%s is served but not in the document", op)
	}
	for op := range documented {
		assert.True(t, served[op], "%s is in the document but not served", op)
	}

	// And each documented route really answers: the router finds it.
	for op := range documented {
		method, path, _ := strings.Cut(op, " ")
		req := httptest.NewRequest(method, strings.NewReplacer("{", "", "}", "").Replace(path), nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		assert.NotContains(t, rec.Body.String(), "no such route", op)
		assert.NotEqual(t, http.StatusMethodNotAllowed, rec.Code, op)
	}

	// Tool routes carry their tool's schemas, unchanged.
	get := doc.Paths["/api/v1/explorations/{ref}"]["get"]
	assert.Equal(t, "get_exploration", get["x-petal-tool"])
	tool, ok := srv.Registry().Get("get_exploration")
	require.True(t, ok)
	b, _ := json.Marshal(get["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"])
	want, _ := json.Marshal(httpapi.ToolOutputSchema(tool))
	assert.JSONEq(t, string(want), string(b))
	var answered, output struct {
		Properties map[string]any `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(b, &answered))
	require.NoError(t, json.Unmarshal(tool.Output, &output))
	for name := range output.Properties {
		assert.Contains(t, answered.Properties, name, "the answer's schema keeps every property of the tool's output")
	}
	assert.Contains(t, answered.Properties, "tools_version", "every JSON answer carries tools_version")
	post := doc.Paths["/api/v1/explorations/{ref}/steps"]["post"]
	body, _ := json.Marshal(post["requestBody"])
	assert.NotContains(t, string(body), `"exploration"`, "the path fills exploration, so the body has none")
	assert.Contains(t, string(body), `"spec_sha256"`)
}
