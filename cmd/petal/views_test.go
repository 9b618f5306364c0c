package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/specs"
)

// herView is the view the tests keep: another palette, no labels.
const herView = `{"schema":"view/v1","palette":"tol-bright","labels":"none"}`

type viewAnswer struct {
	View json.RawMessage `json:"view"`
	Hash string          `json:"hash"`
}

func decodeView(t *testing.T, body string) viewAnswer {
	t.Helper()
	var v viewAnswer
	require.NoError(t, json.Unmarshal([]byte(body), &v), body)
	return v
}

func TestAPersonKeepsAViewAndAnyoneReadsItByItsHash(t *testing.T) {
	t.Parallel()
	p, _ := signInPetal(t, nil)
	ctx := t.Context()
	defaultHash := specs.DefaultViewName()

	// A visitor sees through the default, and can't keep a view.
	res, body := p.do(t, http.MethodGet, "/api/v1/me/view", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.JSONEq(t, `{"tools_version":"1.0.0","view":{"schema":"view/v1","palette":"okabe-ito","labels":"spec","max_labels":0},"hash":"`+defaultHash+`"}`, body)
	res, body = p.do(t, http.MethodPut, "/api/v1/me/view", `{"view":`+herView+`}`, "Origin", siteOrigin)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, body)

	cookie, person := signInAlice(t, p)
	res, body = p.do(t, http.MethodGet, "/api/v1/me/view", "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Equal(t, defaultHash, decodeView(t, body).Hash, "no view of her own yet")

	// Refusals keep nothing: another site, a view that isn't view/v1, a stray field.
	res, body = p.do(t, http.MethodPut, "/api/v1/me/view", `{"view":`+herView+`}`, "Cookie", cookie, "Origin", "https://evil.example")
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
	res, body = p.do(t, http.MethodPut, "/api/v1/me/view", `{"view":{"schema":"view/v1","palette":"rainbow"}}`, "Cookie", cookie, "Origin", siteOrigin)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	assert.Contains(t, body, "/view/palette")
	res, body = p.do(t, http.MethodPut, "/api/v1/me/view", `{"view":{"schema":"view/v1","max_labels":62}}`, "Cookie", cookie, "Origin", siteOrigin)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	assert.Contains(t, body, "/view/max_labels")
	res, body = p.do(t, http.MethodPut, "/api/v1/me/view", `{"view":`+herView+`,"colour":"red"}`, "Cookie", cookie, "Origin", siteOrigin)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	res, body = p.do(t, http.MethodPut, "/api/v1/me/view", `{}`, "Cookie", cookie, "Origin", siteOrigin)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	var n int
	require.NoError(t, p.DB.Pool.QueryRow(ctx, `SELECT count(*) FROM person_views`).Scan(&n))
	assert.Zero(t, n)

	res, body = p.do(t, http.MethodPut, "/api/v1/me/view", `{"view":`+herView+`}`, "Cookie", cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	kept := decodeView(t, body)
	assert.JSONEq(t, `{"schema":"view/v1","palette":"tol-bright","labels":"none","max_labels":0}`, string(kept.View))
	assert.Regexp(t, `^[0-9a-f]{64}$`, kept.Hash)
	assert.NotEqual(t, defaultHash, kept.Hash)
	assert.Equal(t, "no-store", res.Header.Get("Cache-Control"))

	// Kept with the session's credential and the time.
	var credential, session string
	var keptAt time.Time
	require.NoError(t, p.DB.Pool.QueryRow(ctx, `SELECT credential, session_id, kept_at FROM person_views WHERE person_id = $1 AND view_hash = $2`,
		person, kept.Hash).Scan(&credential, &session, &keptAt))
	assert.Regexp(t, `^wal_[0-9a-f]{32}$`, credential)
	assert.Regexp(t, `^[0-9a-f]{64}$`, session)
	assert.WithinDuration(t, time.Now(), keptAt, time.Minute)

	res, body = p.do(t, http.MethodGet, "/api/v1/me/view", "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Equal(t, kept, decodeView(t, body))

	// Anyone reads a kept view by its hash, and the default's without anyone keeping it.
	res, body = p.do(t, http.MethodGet, "/api/v1/views/"+kept.Hash, "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Equal(t, kept, decodeView(t, body))
	assert.Contains(t, res.Header.Get("Cache-Control"), "immutable")
	for _, h := range []string{defaultHash, defaultHash[:12]} {
		res, body = p.do(t, http.MethodGet, "/api/v1/views/"+h, "")
		require.Equal(t, http.StatusOK, res.StatusCode, body)
		assert.Equal(t, defaultHash, decodeView(t, body).Hash)
	}
	for _, h := range []string{"0000000000000000000000000000000000000000000000000000000000000000", "nothing", kept.Hash[:12]} {
		res, body = p.do(t, http.MethodGet, "/api/v1/views/"+h, "")
		assert.Equal(t, http.StatusNotFound, res.StatusCode, body)
		assert.Contains(t, body, `"not_found"`)
	}

	// Putting the default back is a PUT of the default; her old view stays readable by its hash.
	res, body = p.do(t, http.MethodPut, "/api/v1/me/view", `{"view":{"schema":"view/v1"}}`, "Cookie", cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Equal(t, defaultHash, decodeView(t, body).Hash)
	res, _ = p.do(t, http.MethodGet, "/api/v1/views/"+kept.Hash, "")
	assert.Equal(t, http.StatusOK, res.StatusCode)
}

// renderOf is a render_flower answer's pieces the tests compare.
type renderOf struct {
	SVG          string            `json:"svg"`
	SpecSHA256   string            `json:"spec_sha256"`
	RenderSHA256 string            `json:"render_sha256"`
	Legend       []json.RawMessage `json:"legend"`
}

func render(t *testing.T, p *testPetal, body string, headers ...string) renderOf {
	t.Helper()
	res, out := p.do(t, http.MethodPost, "/api/v1/render", body, headers...)
	require.Equal(t, http.StatusOK, res.StatusCode, out)
	var r renderOf
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	return r
}

func TestRenderAndTheAgentDrawThroughThePersonsView(t *testing.T) {
	t.Parallel()
	p, _ := signInPetal(t, nil)
	cookie, _ := signInAlice(t, p)
	res, body := p.do(t, http.MethodPut, "/api/v1/me/view", `{"view":`+herView+`}`, "Cookie", cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)

	sha := storeFlowerSnapshot(t, p, flowerDAOSnapshot())
	spec := `{"schema":"flower-spec/v1","snapshot":"` + sha + `","title":"Members","petals":{"top":3},"size":"weight","colour":"group","labels":"name","order":"weight","legend":true,"others":"fold"}`

	visitor := render(t, p, `{"spec":`+spec+`}`)
	hers := render(t, p, `{"spec":`+spec+`}`, "Cookie", cookie)
	asHers := render(t, p, `{"spec":`+spec+`,"view":`+herView+`}`)
	assert.Equal(t, asHers, hers, "drawn for her, it is the flower drawn through her view")
	assert.NotEqual(t, visitor.RenderSHA256, hers.RenderSHA256)
	assert.Equal(t, visitor.SpecSHA256, hers.SpecSHA256, "the same flower")
	assert.Len(t, hers.Legend, len(visitor.Legend), "the same keys, other colours")
	assert.Less(t, strings.Count(hers.SVG, "<text"), strings.Count(visitor.SVG, "<text"), "her view writes no labels")
	// A view of the call's own wins over hers.
	own := render(t, p, `{"spec":`+spec+`,"view":{"schema":"view/v1"}}`, "Cookie", cookie)
	assert.Equal(t, visitor, own)

	// Petals' agent draws through her view: the recorded chat's render_flower gives no view.
	flowerOf := func(headers ...string) map[string]any {
		evs := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", drawIt, headers...).rest(t)
		for _, e := range evs {
			if e.Name == "flower" {
				return e.json(t)
			}
		}
		t.Fatalf("no flower: %v", names(evs))
		return nil
	}
	anon := flowerOf()
	mine := flowerOf("Cookie", cookie, "Origin", siteOrigin)
	assert.Equal(t, anon["spec_sha256"], mine["spec_sha256"], "the same flower")
	assert.NotEqual(t, anon["render_sha256"], mine["render_sha256"], "drawn through her view")
	agentSpec, err := json.Marshal(mine["spec"])
	require.NoError(t, err)
	assert.Equal(t, mine["render_sha256"], render(t, p, `{"spec":`+string(agentSpec)+`,"view":`+herView+`}`).RenderSHA256)
	assert.Equal(t, anon["render_sha256"], render(t, p, `{"spec":`+string(agentSpec)+`}`).RenderSHA256)
}

func TestTheMapDrawsThroughAKeptView(t *testing.T) {
	t.Parallel()
	p, rpc := signInPetal(t, nil)
	cookie, _ := signInAlice(t, p)
	res, body := p.do(t, http.MethodPut, "/api/v1/me/view", `{"view":`+herView+`}`, "Cookie", cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	hers := decodeView(t, body).Hash

	record, id, _ := aFlower(t, "alice.near", "First", 4)
	publishElsewhere(t, rpc, "alice.near", id, record)
	_, err := p.Svc.MapSync.Run(t.Context())
	require.NoError(t, err)

	type card struct {
		Picture string                           `json:"picture"`
		Keys    []struct{ Label, Swatch string } `json:"keys"`
	}
	cardOf := func(path string, headers ...string) card {
		t.Helper()
		res, body := p.do(t, http.MethodGet, path, "", headers...)
		require.Equal(t, http.StatusOK, res.StatusCode, body)
		var out struct {
			Maps []card `json:"maps"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &out), body)
		require.Len(t, out.Maps, 1, body)
		return out.Maps[0]
	}
	visitor := cardOf("/api/v1/maps")
	byHash := cardOf("/api/v1/maps?view=" + hers)
	signedIn := cardOf("/api/v1/maps", "Cookie", cookie)
	assert.Contains(t, byHash.Picture, "view="+hers)
	assert.Equal(t, byHash, signedIn, "a signed-in person's list is drawn through their view")
	assert.NotEqual(t, visitor.Picture, byHash.Picture)
	require.Len(t, byHash.Keys, len(visitor.Keys), "the same keys")
	for i := range visitor.Keys {
		assert.Equal(t, visitor.Keys[i].Label, byHash.Keys[i].Label)
	}
	assert.NotEqual(t, visitor.Keys, byHash.Keys, "in her palette's colours")

	res, mine := p.do(t, http.MethodGet, byHash.Picture, "")
	require.Equal(t, http.StatusOK, res.StatusCode, mine)
	res, theirs := p.do(t, http.MethodGet, visitor.Picture, "")
	require.Equal(t, http.StatusOK, res.StatusCode, theirs)
	assert.NotEqual(t, theirs, mine)
	assert.Less(t, strings.Count(mine, "<text"), strings.Count(theirs, "<text"), "her view writes no labels")
}
