package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearai/nearaitest"
	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
)

// signedIn is a person's session, sent by hand: the site's cookie is
// __Host- and Secure, which a cookie jar keeps from a plain http:// test
// server.
type signedIn struct {
	p      *testPetal
	cookie string
}

func signInAs(t *testing.T, p *testPetal, rpc *nearrpctest.Server, account string) *signedIn {
	t.Helper()
	priv, account := goKey(t, rpc, account, "full")
	proof := signChallenge(t, p, priv, account)
	res, body := p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody("testnet", proof), "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	c := cookieOf(res, "__Host-petal_session")
	require.NotNil(t, c)
	return &signedIn{p: p, cookie: "__Host-petal_session=" + c.Value}
}

func (s *signedIn) do(t *testing.T, method, path, body string, headers ...string) (*http.Response, string) {
	t.Helper()
	return s.p.do(t, method, path, body, append([]string{"Cookie", s.cookie, "Origin", siteOrigin}, headers...)...)
}

func (s *signedIn) ok(t *testing.T, method, path, body string) map[string]any {
	t.Helper()
	res, out := s.do(t, method, path, body)
	require.Equal(t, http.StatusOK, res.StatusCode, "%s %s: %s", method, path, out)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	return v
}

func annotationsOf(t *testing.T, v map[string]any) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, a := range v["annotations"].([]any) {
		out = append(out, a.(map[string]any))
	}
	return out
}

func TestAnnotationsAreKeptPrivatelyOnceAndAllOrNone(t *testing.T) {
	t.Parallel()
	p, rpc := signInPetal(t, nil)
	erin := signInAs(t, p, rpc, "erin.testnet")
	exp := erin.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"who is who"}`)["id"].(string)
	path := "/api/v1/explorations/" + exp + "/annotations"
	two := `{"annotations":[
		{"subject":"near:mainnet:alice.near","verb":"named","object":{"value":"Ann"},"kind":"stated"},
		{"subject":"near:mainnet:bob.near","verb":"noted","object":{"value":"the treasurer"},"kind":"stated","evidence":[{"url":"https://example.org/minutes"}]}]}`

	first := erin.ok(t, http.MethodPost, path, two)
	assert.EqualValues(t, 2, first["added"])
	assert.EqualValues(t, 0, first["existed"])
	require.Len(t, first["ids"], 2)
	again := erin.ok(t, http.MethodPost, path, two)
	assert.EqualValues(t, 0, again["added"], "idempotent by content")
	assert.EqualValues(t, 2, again["existed"])
	assert.Equal(t, first["ids"], again["ids"])

	// One bad claim refuses the request: the good one beside it isn't kept.
	res, body := erin.do(t, http.MethodPost, path, `{"annotations":[
		{"subject":"near:mainnet:carol.near","verb":"noted","object":{"value":"kept?"},"kind":"stated"},
		{"subject":"carol","verb":"noted","object":{"value":"x"},"kind":"stated"}]}`)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	assert.Contains(t, body, "annotations/1/subject")
	for _, bad := range []string{
		`{"annotations":[{"subject":"near:mainnet:a.near","verb":"named","object":{"value":"A","extra":1},"kind":"stated"}]}`,
		`{"annotations":[{"subject":"near:mainnet:a.near","verb":"noted","object":{"value":"A"},"kind":"guessed"}]}`,
		`{"annotations":[{"subject":"near:mainnet:a.near","verb":"noted","object":{"value":"A"},"kind":"stated","by":"near:mainnet:x.near"}]}`,
		`{"annotations":[]}`,
	} {
		res, body := erin.do(t, http.MethodPost, path, bad)
		assert.Equal(t, http.StatusBadRequest, res.StatusCode, "%s: %s", bad, body)
	}
	list := annotationsOf(t, erin.ok(t, http.MethodGet, path, ""))
	require.Len(t, list, 2, "nothing of a refused request was kept")
	claim := list[0]["claim"].(map[string]any)
	assert.Equal(t, "claim/v2", claim["schema"])
	assert.Equal(t, "near:testnet:erin.testnet", claim["by"], "by comes from the door: the signed-in owner's account")
	assert.Equal(t, first["ids"].([]any)[0], claim["id"])
	assert.Equal(t, exp, list[0]["exploration"])

	// Anyone else gets the one not-found answer, for reads and writes.
	stranger := p.browser(t)
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		res, body := stranger.do(t, m, path, two, "Origin", siteOrigin)
		assert.Equal(t, http.StatusNotFound, res.StatusCode, body)
	}

	// A continue link writes as the agent it names; a read link only reads.
	cont := tokenOf(t, erin.ok(t, http.MethodPost, "/api/v1/explorations/"+exp+"/links", `{"scope":"continue"}`)["url"].(string))
	read := tokenOf(t, erin.ok(t, http.MethodPost, "/api/v1/explorations/"+exp+"/links", `{"scope":"read"}`)["url"].(string))
	viaLink := stranger.ok(t, http.MethodPost, "/api/v1/explorations/"+cont+"/annotations",
		`{"as":"codex","annotations":[{"subject":"near:mainnet:carol.near","verb":"noted","object":{"value":"found"},"kind":"inferred"}]}`, "Origin", siteOrigin)
	assert.EqualValues(t, 1, viaLink["added"])
	res, body = stranger.do(t, http.MethodPost, "/api/v1/explorations/"+read+"/annotations", two, "Origin", siteOrigin)
	assert.Equal(t, http.StatusNotFound, res.StatusCode, body)
	byLink := annotationsOf(t, stranger.ok(t, http.MethodGet, "/api/v1/explorations/"+read+"/annotations?about=near:mainnet:carol.near", ""))
	require.Len(t, byLink, 1)
	assert.Equal(t, "tool:codex@1", byLink[0]["claim"].(map[string]any)["by"])

	// A person's own: signed in only; one kept in no project has none.
	res, body = stranger.do(t, http.MethodGet, "/api/v1/me/annotations", "")
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
	mine := erin.ok(t, http.MethodPost, "/api/v1/me/annotations",
		`{"annotations":[{"subject":"near:mainnet:dave.near","verb":"named","object":{"value":"Dekan"},"kind":"stated","evidence":[]}]}`)
	assert.Nil(t, mine["exploration"])
	assert.EqualValues(t, 1, mine["added"])
	res, body = erin.do(t, http.MethodPost, "/api/v1/me/annotations",
		`{"conversation":"exp_00000000000000000000000000000000","annotations":[{"subject":"near:mainnet:dave.near","verb":"noted","object":{"value":"x"},"kind":"stated"}]}`)
	assert.Equal(t, http.StatusNotFound, res.StatusCode, body)
	inConv := erin.ok(t, http.MethodPost, "/api/v1/me/annotations",
		`{"conversation":"`+exp+`","annotations":[{"subject":"near:mainnet:dave.near","verb":"noted","object":{"value":"in the project"},"kind":"stated"}]}`)
	assert.Equal(t, exp, inConv["exploration"])
	named := annotationsOf(t, erin.ok(t, http.MethodGet, "/api/v1/me/annotations?verb=named", ""))
	require.Len(t, named, 2)
	assert.Equal(t, "Ann", named[0]["claim"].(map[string]any)["object"].(map[string]any)["value"])
	assert.Nil(t, named[1]["exploration"], "kept in no project")
	all := erin.ok(t, http.MethodGet, "/api/v1/me/annotations?limit=2", "")
	require.Len(t, all["annotations"], 2)
	require.NotNil(t, all["next_cursor"])
	rest := erin.ok(t, http.MethodGet, "/api/v1/me/annotations?cursor="+all["next_cursor"].(string), "")
	assert.Len(t, rest["annotations"], 3, "five in all: two, one by link, one in no project, one in the conversation")

	// Another person sees none of erin's.
	fay := signInAs(t, p, rpc, "fay.testnet")
	assert.Empty(t, fay.ok(t, http.MethodGet, "/api/v1/me/annotations", "")["annotations"])
}

func TestNamesAreDrawnForTheirOwnerAloneAndNeverCached(t *testing.T) {
	t.Parallel()
	p, rpc := signInPetal(t, nil)
	sha := storeFlowerSnapshot(t, p, flowerDAOSnapshot())
	visitor := p.browser(t)
	spec := visitor.ok(t, http.MethodPost, "/api/v1/specs/propose", `{"sha256":"`+sha+`"}`)["spec"]
	render := `{"spec":` + mustJSON(t, spec) + `}`

	erin := signInAs(t, p, rpc, "erin.testnet")
	erin.ok(t, http.MethodPost, "/api/v1/me/annotations",
		`{"annotations":[{"subject":"near:mainnet:alice.near","verb":"named","object":{"value":"Ann the Treasurer"},"kind":"stated"}]}`)

	for _, format := range []string{"", "?format=svg"} {
		res, mineBody := erin.do(t, http.MethodPost, "/api/v1/render"+format, render)
		require.Equal(t, http.StatusOK, res.StatusCode, mineBody)
		assert.Contains(t, mineBody, "Ann the Treasurer", "their own name on the petal they named")
		assert.Equal(t, "private, no-store", res.Header.Get("Cache-Control"))

		res, theirs := visitor.do(t, http.MethodPost, "/api/v1/render"+format, render)
		require.Equal(t, http.StatusOK, res.StatusCode, theirs)
		assert.NotContains(t, theirs, "Ann the Treasurer", "a visitor's carries none")
		assert.NotContains(t, res.Header.Get("Cache-Control"), "private")

		fay := signInAs(t, p, rpc, "fay"+strings.TrimPrefix(format, "?format=")+".testnet")
		res, hers := fay.do(t, http.MethodPost, "/api/v1/render"+format, render)
		require.Equal(t, http.StatusOK, res.StatusCode, hers)
		assert.NotContains(t, hers, "Ann the Treasurer", "another person's carries none of erin's")
		assert.Equal(t, theirs, hers, "a person with no names sees what a visitor sees")
	}

	// A view whose labels show none draws no names, and isn't private.
	res, body := erin.do(t, http.MethodPost, "/api/v1/render", `{"spec":`+mustJSON(t, spec)+`,"view":{"schema":"view/v1","palette":"okabe-ito","labels":"none","max_labels":0}}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.NotContains(t, body, "Ann the Treasurer")
	assert.Empty(t, res.Header.Get("Cache-Control"))
}

func TestTheAgentAnnotatesOncePerRunAndAKeptNoteEndsTheTurn(t *testing.T) {
	t.Parallel()
	named := `{"annotations":[{"subject":"near:mainnet:alice.near","verb":"named","object":{"value":"Dekan"},"kind":"stated"}]}`
	fake := nearaitest.New(t,
		nearaitest.Completion("n1", "deepseek-ai/DeepSeek-V3.1", "Noted: alice.near is Dekan's wallet.", nearaitest.Call{Name: "annotate", Args: named}),
		nearaitest.Completion("n2", "deepseek-ai/DeepSeek-V3.1", "Keeping that too.", nearaitest.Call{Name: "annotate", Args: named}),
		nearaitest.Completion("n3", "deepseek-ai/DeepSeek-V3.1", "I already kept what you told me in this conversation."),
	)
	p, rpc := signInPetal(t, modelEnv(fake))
	erin := signInAs(t, p, rpc, "erin.testnet")
	headers := []string{"Cookie", erin.cookie, "Origin", siteOrigin}

	evs := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", `{"messages":[{"role":"user","content":"alice.near is Dekan's wallet"}]}`, headers...).rest(t)
	var kinds []string
	var runID string
	for _, e := range evs {
		if e.Name == "run" {
			runID = e.json(t)["run_id"].(string)
		}
		if e.Name != "live" && e.Name != "stage" {
			kinds = append(kinds, e.Name)
		}
	}
	assert.Equal(t, []string{"run", "message", "tool_call", "tool_result", "done"}, kinds)
	assert.Len(t, fake.Completions(), 1, "a kept note beside the answer ends the turn at no model call of its own")

	mine := annotationsOf(t, erin.ok(t, http.MethodGet, "/api/v1/me/annotations?verb=named", ""))
	require.Len(t, mine, 1)
	claim := mine[0]["claim"].(map[string]any)
	assert.Equal(t, "near:testnet:erin.testnet", claim["by"], "the person's account answers for what they told the agent")
	assert.Equal(t, "tool:petals-agent@1", claim["via"])
	exp, _ := mine[0]["exploration"].(string)
	require.NotEmpty(t, exp, "kept in the conversation's project")
	run := erin.ok(t, http.MethodGet, "/api/v1/agent/runs/"+runID, "")
	assert.Equal(t, exp, run["exploration"].(map[string]any)["id"])

	// A second annotate in the same run is refused and goes back to the model.
	evs = p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", `{"run_id":"`+runID+`","messages":[{"role":"user","content":"and bob.near is his too"}]}`, headers...).rest(t)
	var result map[string]any
	for _, e := range evs {
		if e.Name == "tool_result" {
			result = e.json(t)
		}
	}
	require.NotNil(t, result)
	assert.Equal(t, false, result["ok"])
	assert.Contains(t, result["summary"], "once per conversation")
	assert.Len(t, fake.Completions(), 3, "one not kept goes back to the model")
	assert.Len(t, annotationsOf(t, erin.ok(t, http.MethodGet, "/api/v1/me/annotations", "")), 1)
}

func TestTheSitesClaimsAboutAMapAreTheSameForEveryone(t *testing.T) {
	t.Parallel()
	// A public site serves the map shipped in petal, which holds the
	// marketing DAO.
	p, rpc := signInPetal(t, map[string]string{"PETAL_PUBLIC": "1"})
	erin := signInAs(t, p, rpc, "erin.testnet")
	path := "/api/v1/maps/near:mainnet:marketing.sputnik-dao.near/claims"
	res, visitors := p.do(t, http.MethodGet, path, "", "Origin", "https://elsewhere.example")
	require.Equal(t, http.StatusOK, res.StatusCode, visitors)
	assert.Equal(t, "*", res.Header.Get("Access-Control-Allow-Origin"))
	var got struct {
		About  string           `json:"about"`
		Claims []map[string]any `json:"claims"`
	}
	require.NoError(t, json.Unmarshal([]byte(visitors), &got))
	assert.Equal(t, "near:mainnet:marketing.sputnik-dao.near", got.About)
	require.NotEmpty(t, got.Claims)
	for _, c := range got.Claims {
		assert.Equal(t, "claim/v3", c["schema"])
		assert.Equal(t, got.About, c["subject"])
		assert.NotEmpty(t, c["evidence"])
	}
	res, hers := erin.do(t, http.MethodGet, path, "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, visitors, hers, "the same for every viewer")

	res, body := p.do(t, http.MethodGet, "/api/v1/maps/"+url.PathEscape("near:mainnet:marketing.sputnik-dao.near")+"/claims", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Equal(t, visitors, body, "its id URL-encoded")
	res, body = p.do(t, http.MethodGet, "/api/v1/maps/near:mainnet:nobody.near/claims", "")
	assert.Equal(t, http.StatusNotFound, res.StatusCode, body)
	res, body = p.do(t, http.MethodGet, "/api/v1/maps/not-a-map/claims", "")
	assert.Equal(t, http.StatusNotFound, res.StatusCode, body)
}

// What a stranger's project keeps counts against the data budget: past it
// the request is 429 budget_exhausted and keeps nothing.
func TestAStrangersAnnotationsCountAgainstTheDataBudget(t *testing.T) {
	t.Parallel()
	p := startPetal(t, map[string]string{"PETAL_DATA_BUDGET_MB": "0.001"}) // 1,048 bytes
	stranger := p.browser(t)
	id := stranger.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"q"}`)["id"].(string)
	one := `{"annotations":[{"subject":"near:mainnet:a.near","verb":"noted","object":{"value":"` + strings.Repeat("n", 300) + `"},"kind":"stated"}]}`
	stranger.ok(t, http.MethodPost, "/api/v1/explorations/"+id+"/annotations", one)
	two := `{"annotations":[{"subject":"near:mainnet:b.near","verb":"noted","object":{"value":"` + strings.Repeat("m", 300) + `"},"kind":"stated"},` +
		`{"subject":"near:mainnet:c.near","verb":"noted","object":{"value":"x"},"kind":"stated"}]}`
	res, body := stranger.do(t, http.MethodPost, "/api/v1/explorations/"+id+"/annotations", two)
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode, body)
	assert.Contains(t, body, "budget_exhausted")
	assert.Len(t, annotationsOf(t, stranger.ok(t, http.MethodGet, "/api/v1/explorations/"+id+"/annotations", "")), 1, "the refused request kept nothing")

	families, err := p.Svc.Metrics.Gatherer().Gather()
	require.NoError(t, err)
	kept := map[string]float64{}
	for _, f := range families {
		if f.GetName() == "petal_annotations_total" {
			for _, m := range f.GetMetric() {
				kept[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
			}
		}
	}
	assert.Equal(t, map[string]float64{"added": 1, "existed": 0, "refused": 2}, kept)
}

// The map's pictures are kept a year by view and shared by everyone: they
// never carry anyone's names, even asked for by the person who gave them.
func TestTheMapsCachedPicturesCarryNobodysNames(t *testing.T) {
	t.Parallel()
	p, rpc := signInPetal(t, map[string]string{"PETAL_PUBLIC": "1"})
	erin := signInAs(t, p, rpc, "erin.testnet")
	erin.ok(t, http.MethodPost, "/api/v1/me/annotations",
		`{"annotations":[{"subject":"near:mainnet:alice.near","verb":"named","object":{"value":"Ann the Treasurer"},"kind":"stated"}]}`)
	m := getMap(t, p, "/api/v1/map")
	require.NotEmpty(t, m.Views)
	res, svg := erin.do(t, http.MethodGet, m.Views[0].Picture, "")
	require.Equal(t, http.StatusOK, res.StatusCode, svg)
	assert.Contains(t, svg, "alice.near", "the shipped map draws alice.near's petal")
	assert.NotContains(t, svg, "Ann the Treasurer")
	assert.Contains(t, res.Header.Get("Cache-Control"), "immutable")
}

// A signed-in person's lists give picture addresses with &names=<the hash of
// their named claims' ids>; such a picture draws their names for them alone,
// private and never cached, whoever asks, and only while the set is theirs.
func TestTheMapsPicturesWithNamesAreTheirPersonsAlone(t *testing.T) {
	t.Parallel()
	p, rpc := signInPetal(t, map[string]string{"PETAL_PUBLIC": "1"})
	erin := signInAs(t, p, rpc, "erin.testnet")
	named := erin.ok(t, http.MethodPost, "/api/v1/me/annotations",
		`{"annotations":[{"subject":"near:mainnet:alice.near","verb":"named","object":{"value":"Ann the Treasurer"},"kind":"stated"}]}`)
	ids, _ := json.Marshal(named["ids"])
	hash := sha256.Sum256(ids)

	var list mapAnswer
	res, body := erin.do(t, http.MethodGet, "/api/v1/map", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	require.NoError(t, json.Unmarshal([]byte(body), &list))
	require.NotEmpty(t, list.Views)
	assert.Contains(t, res.Header.Get("Cache-Control"), "private")
	picture := list.Views[0].Picture
	assert.True(t, strings.HasSuffix(picture, "&names="+hex.EncodeToString(hash[:])), picture)
	assert.NotContains(t, getMap(t, p, "/api/v1/map").Views[0].Picture, "names=", "a visitor's list carries none")

	res, mine := erin.do(t, http.MethodGet, picture, "")
	require.Equal(t, http.StatusOK, res.StatusCode, mine)
	assert.Contains(t, mine, "Ann the Treasurer")
	assert.Equal(t, "private, no-store", res.Header.Get("Cache-Control"))
	res, theirs := p.do(t, http.MethodGet, picture, "")
	require.Equal(t, http.StatusOK, res.StatusCode, theirs)
	assert.NotContains(t, theirs, "Ann the Treasurer", "someone else asking for erin's address")
	assert.Equal(t, "private, no-store", res.Header.Get("Cache-Control"), "whoever asks")

	// A new name makes a new set: the old address draws names no more.
	erin.ok(t, http.MethodPost, "/api/v1/me/annotations",
		`{"annotations":[{"subject":"near:mainnet:bob.near","verb":"named","object":{"value":"Bob the Builder"},"kind":"stated"}]}`)
	_, stale := erin.do(t, http.MethodGet, picture, "")
	assert.NotContains(t, stale, "Ann the Treasurer")
	var again mapAnswer
	_, body = erin.do(t, http.MethodGet, "/api/v1/map", "")
	require.NoError(t, json.Unmarshal([]byte(body), &again))
	assert.NotEqual(t, picture, again.Views[0].Picture, "the list gives the new set's address")
	_, fresh := erin.do(t, http.MethodGet, again.Views[0].Picture, "")
	assert.Contains(t, fresh, "Ann the Treasurer")
}
