package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/domain/canon"
	"github.com/petal-near/petal/domain/snapshots"
)

// daoSnapshot is a stored reading with three groups, weights 6/2/2 and one
// hostile label.
func flowerDAOSnapshot() snapshots.Snapshot {
	acc := func(name, label, weight string, groups ...string) snapshots.Account {
		return snapshots.Account{ID: "near:mainnet:" + name, Label: label, Weight: weight, Groups: groups}
	}
	return snapshots.Snapshot{
		Schema: snapshots.Schema, Network: "near-dao-members",
		Params: json.RawMessage(`{"chain":"near:mainnet","dao":"flowers.sputnik-dao.near"}`),
		Chain:  snapshots.Mainnet,
		Block:  snapshots.Block{Height: 7, Hash: "h7", Time: "2026-11-01T12:00:00Z"},
		Title:  "Members of flowers.sputnik-dao.near", About: "roles",
		Groups: []snapshots.Group{{ID: "council", Label: "Council"}, {ID: "community", Label: "Community"}, {ID: "empty", Label: "Nobody"}},
		Accounts: []snapshots.Account{
			acc("alice.near", "", "6", "council"),
			acc("bob.near", "<script>alert(1)</script>", "2", "council", "community"),
			acc("carol.near", "", "2", "community"),
		},
		Source: snapshots.Source{Calls: []snapshots.Call{{Contract: "flowers.sputnik-dao.near", Method: "get_policy"}}},
	}
}

func storeFlowerSnapshot(t *testing.T, p *testPetal, s snapshots.Snapshot) string {
	t.Helper()
	sha, _, err := snapshotsapp.StoreSnapshot(t.Context(), postgres.NewSnapshotRepository(p.DB.DB), s, snapshotsapp.OriginThisSite)
	require.NoError(t, err)
	return sha
}

func decodeFlower(t *testing.T, body string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &m), body)
	return m
}

func TestFiguresRoute(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	snap := flowerDAOSnapshot()
	sha := storeFlowerSnapshot(t, p, snap)

	res, body := p.do(t, http.MethodPost, "/api/v1/figures", `{"sha256":"`+sha+`"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	// 6, 2, 2 (T=10): top1 0.6; Gini on [2,2,6]: (−2·2 + 0·2 + 2·6)/(3·10) = 0.266667;
	// HHI .36+.04+.04; half is 5, and 6 alone is more.
	assert.JSONEq(t, `{"tools_version":"1.0.0","sha256":"`+sha+`","origin":"this_site","count":3,"total_weight":"10",
		"top1_share":0.6,"top10_share":1,"top1pct_share":0.6,"top1pct_count":1,"gini":0.266667,"nakamoto":1,"hhi":0.44,
		"groups":[
		 {"id":"council","label":"Council","share":0.8,"count":2,"total_weight":"8","top1_share":0.75,"top10_share":1,"top1pct_share":0.75,"top1pct_count":1,"gini":0.25,"nakamoto":1,"hhi":0.625},
		 {"id":"community","label":"Community","share":0.4,"count":2,"total_weight":"4","top1_share":0.5,"top10_share":1,"top1pct_share":0.5,"top1pct_count":1,"gini":0,"nakamoto":2,"hhi":0.5},
		 {"id":"empty","label":"Nobody","share":0,"count":0,"total_weight":"0","top1_share":null,"top10_share":null,"top1pct_share":null,"top1pct_count":0,"gini":null,"nakamoto":null,"hhi":null}],
		"banzhaf":{"rule":"majority of weight: more than half of the total","quota":"6","voters":3,"method":"exact","accounts":[
		 {"id":"near:mainnet:alice.near","label":"","index":1,"error":null},
		 {"id":"near:mainnet:bob.near","label":"<script>alert(1)</script>","index":0,"error":null},
		 {"id":"near:mainnet:carol.near","label":"","index":0,"error":null}]}}`, body)

	// Inline, the same figures under the same name.
	inline, err := json.Marshal(map[string]any{"snapshot": snap, "group": "council"})
	require.NoError(t, err)
	res, body = p.do(t, http.MethodPost, "/api/v1/figures", string(inline))
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	m := decodeFlower(t, body)
	assert.Equal(t, sha, m["sha256"])
	assert.Equal(t, 0.266667, m["gini"])
	require.Len(t, m["groups"], 1)

	for _, c := range []struct {
		body   string
		status int
		code   string
	}{
		{`{}`, 400, "bad_input"},
		{`{"sha256":"` + sha + `","snapshot":{}}`, 400, "bad_input"},
		{`{"sha256":"nope"}`, 400, "bad_input"},
		{`{"sha256":"` + strings.Repeat("0", 64) + `"}`, 404, "not_found"},
		{`{"sha256":"` + sha + `","group":"nope"}`, 400, "bad_input"},
		{`{"sha256":"` + sha + `","extra":1}`, 400, "bad_input"},
		{`{"snapshot":{"schema":"snapshot/v1"}}`, 400, "bad_input"},
	} {
		res, body := p.do(t, http.MethodPost, "/api/v1/figures", c.body)
		assert.Equal(t, c.status, res.StatusCode, "%s → %s", c.body, body)
		assert.Equal(t, c.code, decodeFlower(t, body)["error"].(map[string]any)["code"], c.body)
	}
}

func TestProposeValidateRenderAndDraft(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	sha := storeFlowerSnapshot(t, p, flowerDAOSnapshot())

	// Propose.
	res, body := p.do(t, http.MethodPost, "/api/v1/specs/propose", `{"sha256":"`+sha+`","intent":"a picture of who holds power"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var proposal struct {
		Spec           json.RawMessage `json:"spec"`
		SpecSHA256     string          `json:"spec_sha256"`
		Interpretation string          `json:"interpretation"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &proposal))
	canonical, err := canon.Transform(proposal.Spec)
	require.NoError(t, err)
	assert.Equal(t, canon.Sum(canonical), proposal.SpecSHA256, "the spec's name is the SHA-256 of its canonical JSON")
	var spec map[string]any
	require.NoError(t, json.Unmarshal(proposal.Spec, &spec))
	assert.Equal(t, "flower-spec/v1", spec["schema"])
	assert.Equal(t, sha, spec["snapshot"])
	assert.Equal(t, "group", spec["colour"], "two groups among the petals: coloured by group")
	assert.Contains(t, proposal.Interpretation, "All 3 accounts are petals")
	assert.Contains(t, proposal.Interpretation, "more than half on its own")

	// Validate: the proposal is valid; broken specs list their problems.
	res, body = p.do(t, http.MethodPost, "/api/v1/specs/validate", `{"spec":`+string(proposal.Spec)+`}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.JSONEq(t, `{"tools_version":"1.0.0","valid":true,"problems":[],"spec_sha256":"`+proposal.SpecSHA256+`"}`, body)

	broken := copyFlowerSpec(spec)
	broken["petals"] = map[string]any{"top": 61, "groups": []any{"council", "ghosts"}}
	broken["colour"] = "rainbow"
	broken["extra"] = true
	res, body = p.do(t, http.MethodPost, "/api/v1/specs/validate", `{"spec":`+flowerJSON(t, broken)+`}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.JSONEq(t, `{"tools_version":"1.0.0","valid":false,"problems":[
		{"path":"/extra","message":"unknown field \"extra\""},
		{"path":"/petals/top","message":"must be from 1 to 60"},
		{"path":"/colour","message":"must be one of group, band, not \"rainbow\""}]}`, body)

	unknownGroup := copyFlowerSpec(spec)
	unknownGroup["petals"] = map[string]any{"top": 3, "groups": []any{"council", "ghosts"}}
	res, body = p.do(t, http.MethodPost, "/api/v1/specs/validate", `{"spec":`+flowerJSON(t, unknownGroup)+`}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.JSONEq(t, `{"tools_version":"1.0.0","valid":false,"problems":[{"path":"/petals/groups/1","message":"\"ghosts\" is not one of the snapshot's groups"}]}`, body)

	notStored := copyFlowerSpec(spec)
	notStored["snapshot"] = strings.Repeat("a", 64)
	res, body = p.do(t, http.MethodPost, "/api/v1/specs/validate", `{"spec":`+flowerJSON(t, notStored)+`}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.JSONEq(t, `{"tools_version":"1.0.0","valid":false,"problems":[{"path":"/snapshot","message":"no snapshot `+strings.Repeat("a", 64)+` is stored here"}]}`, body)

	// A spec is an object by the input's schema, so anything else is refused
	// before the tool runs, naming the field.
	res, body = p.do(t, http.MethodPost, "/api/v1/specs/validate", `{"spec":[1]}`)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	assert.Contains(t, body, `"bad_input"`)
	assert.Contains(t, body, "/spec")

	// Render as JSON, twice: the same bytes.
	res, body = p.do(t, http.MethodPost, "/api/v1/render", `{"spec":`+string(proposal.Spec)+`}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var rendered struct {
		SVG          string `json:"svg"`
		SpecSHA256   string `json:"spec_sha256"`
		RenderSHA256 string `json:"render_sha256"`
		Legend       []struct{ Label, Swatch string }
	}
	require.NoError(t, json.Unmarshal([]byte(body), &rendered))
	assert.Equal(t, proposal.SpecSHA256, rendered.SpecSHA256)
	sum := sha256.Sum256([]byte(rendered.SVG))
	assert.Equal(t, hex.EncodeToString(sum[:]), rendered.RenderSHA256)
	assert.Len(t, rendered.Legend, 2)
	assert.Equal(t, "Council", rendered.Legend[0].Label)
	assert.NotContains(t, rendered.SVG, "<script")
	assert.Contains(t, rendered.SVG, "&lt;script&gt;alert(1)&lt;/script&gt;")
	_, again := p.do(t, http.MethodPost, "/api/v1/render", `{"spec":`+string(proposal.Spec)+`}`)
	assert.Equal(t, body, again)

	// ?format=svg: the picture alone, the same bytes.
	res, svg := p.do(t, http.MethodPost, "/api/v1/render?format=svg", `{"spec":`+string(proposal.Spec)+`}`)
	require.Equal(t, http.StatusOK, res.StatusCode, svg)
	assert.Equal(t, "image/svg+xml; charset=utf-8", res.Header.Get("Content-Type"))
	assert.Equal(t, `"`+rendered.RenderSHA256+`"`, res.Header.Get("ETag"))
	assert.Equal(t, rendered.SVG, svg)
	assert.Equal(t, "*", res.Header.Get("Access-Control-Allow-Origin"))

	// A view changes the drawing, not the spec.
	res, body = p.do(t, http.MethodPost, "/api/v1/render", `{"spec":`+string(proposal.Spec)+`,"view":{"schema":"view/v1","palette":"tol-bright","labels":"none"}}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	viewed := decodeFlower(t, body)
	assert.Equal(t, rendered.SpecSHA256, viewed["spec_sha256"])
	assert.NotEqual(t, rendered.RenderSHA256, viewed["render_sha256"])
	res, body = p.do(t, http.MethodPost, "/api/v1/render", `{"spec":`+string(proposal.Spec)+`,"view":{"schema":"view/v1","palette":"neon"}}`)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	assert.Contains(t, body, `"path":"/view/palette"`)

	res, body = p.do(t, http.MethodPost, "/api/v1/render?format=png", `{"spec":`+string(proposal.Spec)+`}`)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)

	// Anywhere but validate, an invalid spec is 422 invalid_spec with the same problems.
	for _, path := range []string{"/api/v1/render", "/api/v1/render?format=svg"} {
		res, body = p.do(t, http.MethodPost, path, `{"spec":`+flowerJSON(t, unknownGroup)+`}`)
		assert.Equal(t, http.StatusUnprocessableEntity, res.StatusCode, body)
		e := decodeFlower(t, body)["error"].(map[string]any)
		assert.Equal(t, "invalid_spec", e["code"])
		assert.Equal(t, []any{map[string]any{"path": "/petals/groups/1", "message": `"ghosts" is not one of the snapshot's groups`}}, e["problems"])
	}

	// The draft link: 302, relative, to the kept spec.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err = noFollow.Get(p.URL + "/d/" + proposal.SpecSHA256)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusFound, res.StatusCode)
	loc := res.Header.Get("Location")
	require.True(t, strings.HasPrefix(loc, "/draft?spec="), loc)
	q, err := url.ParseQuery(strings.TrimPrefix(loc, "/draft?"))
	require.NoError(t, err)
	assert.Equal(t, string(canonical), q.Get("spec"))
	head, err := noFollow.Head(p.URL + "/d/" + proposal.SpecSHA256)
	require.NoError(t, err)
	headBody, _ := io.ReadAll(head.Body)
	head.Body.Close()
	assert.Equal(t, http.StatusFound, head.StatusCode, "HEAD answers as GET")
	assert.Equal(t, loc, head.Header.Get("Location"))
	assert.Equal(t, res.Header.Get("Cache-Control"), head.Header.Get("Cache-Control"))
	assert.Empty(t, headBody)

	// Validated and rendered specs are kept too.
	viewless := copyFlowerSpec(spec)
	viewless["labels"] = "none"
	res, body = p.do(t, http.MethodPost, "/api/v1/specs/validate", `{"spec":`+flowerJSON(t, viewless)+`}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	res, err = noFollow.Get(p.URL + "/d/" + decodeFlower(t, body)["spec_sha256"].(string))
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusFound, res.StatusCode)

	for _, unknown := range []string{strings.Repeat("b", 64), "not-a-hash"} {
		res, err = noFollow.Get(p.URL + "/d/" + unknown)
		require.NoError(t, err)
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		assert.Equal(t, http.StatusNotFound, res.StatusCode)
		assert.Equal(t, "text/plain; charset=UTF-8", res.Header.Get("Content-Type"))
		assert.Contains(t, string(b), "not found")
		head, err := noFollow.Head(p.URL + "/d/" + unknown)
		require.NoError(t, err)
		head.Body.Close()
		assert.Equal(t, http.StatusNotFound, head.StatusCode)
	}
}

// Every door gives the same answer: the registry through MCP equals the HTTP route.
func TestFlowerToolsThroughMCP(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	sha := storeFlowerSnapshot(t, p, flowerDAOSnapshot())
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).
		Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: p.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	defer cs.Close()
	tools, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = true
	}
	for _, n := range []string{"compute_figures", "propose_spec", "validate_spec", "render_flower"} {
		assert.True(t, names[n], n)
	}

	_, httpBody := p.do(t, http.MethodPost, "/api/v1/specs/propose", `{"sha256":"`+sha+`"}`)
	out, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "propose_spec", Arguments: map[string]any{"sha256": sha}})
	require.NoError(t, err)
	require.False(t, out.IsError, "%+v", out.Content)
	viaMCP, err := json.Marshal(out.StructuredContent)
	require.NoError(t, err)
	var a, b map[string]any
	require.NoError(t, json.Unmarshal([]byte(httpBody), &a))
	require.NoError(t, json.Unmarshal(viaMCP, &b))
	delete(a, "tools_version")
	delete(b, "tools_version")
	assert.Equal(t, a, b)
}

func copyFlowerSpec(s map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range s {
		out[k] = v
	}
	return out
}

func flowerJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// A public site keeps the flower tools: they read only what is stored here.
func TestFlowerToolsOnAPublicSite(t *testing.T) {
	t.Parallel()
	p := startPetal(t, map[string]string{"PETAL_PUBLIC": "1"})
	sha := storeFlowerSnapshot(t, p, flowerDAOSnapshot())
	res, body := p.do(t, http.MethodPost, "/api/v1/figures", `{"sha256":"`+sha+`"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	res, body = p.do(t, http.MethodPost, "/api/v1/specs/propose", `{"sha256":"`+sha+`","intent":"top 2, hide others"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	spec := decodeFlower(t, body)["spec"]
	assert.Equal(t, float64(2), spec.(map[string]any)["petals"].(map[string]any)["top"])
	assert.Equal(t, "hide", spec.(map[string]any)["others"])
	res, body = p.do(t, http.MethodPost, "/api/v1/specs/validate", `{"spec":`+flowerJSON(t, spec)+`}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Equal(t, true, decodeFlower(t, body)["valid"])
	res, body = p.do(t, http.MethodPost, "/api/v1/render?format=svg", `{"spec":`+flowerJSON(t, spec)+`}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.True(t, strings.HasPrefix(body, `<svg xmlns="http://www.w3.org/2000/svg"`))

	// The door-only ?format is in the OpenAPI document.
	res, body = p.do(t, http.MethodGet, "/api/v1/openapi.json", "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct{ Name, In string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(body), &doc))
	params := doc.Paths["/api/v1/render"]["post"].Parameters
	require.Len(t, params, 1)
	assert.Equal(t, "format", params[0].Name)
	assert.Equal(t, "query", params[0].In)
}
