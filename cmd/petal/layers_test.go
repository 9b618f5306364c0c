package main

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/canon"
)

func TestLayersAndDatasetVersions(t *testing.T) {
	t.Parallel()
	p, rpc := signInPetal(t, nil)
	sha := storeFlowerSnapshot(t, p, flowerDAOSnapshot()) // alice, bob, carol
	erin := signInAs(t, p, rpc, "erin.testnet")
	exp := erin.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"who runs flowers?"}`)["id"].(string)
	base := "/api/v1/explorations/" + exp
	const about = "near:mainnet:flowers.sputnik-dao.near"
	layerBody := `{"about":"` + about + `","snapshot":"` + sha + `","title":"who is who","annotations":[
		{"subject":"near:mainnet:alice.near","verb":"named","object":{"value":"Ann"},"kind":"stated"},
		{"subject":"near:mainnet:zed.near","verb":"noted","object":{"value":"votes through alice"},"kind":"inferred"}]}`

	kept := erin.ok(t, http.MethodPost, base+"/layers", layerBody)
	layer, v1 := kept["layer"].(map[string]any), kept["version"].(map[string]any)
	assert.Equal(t, "layer/v1", layer["schema"])
	assert.Len(t, layer["claims"], 2)
	assert.Equal(t, "dataset/v1", v1["schema"])
	assert.Nil(t, v1["parent"], "a layer's version comes from the snapshot itself")
	assert.Equal(t, layer["hash"], v1["layer"])
	assert.Equal(t, []any{"near:mainnet:zed.near"}, v1["add"], "the accounts its claims speak of that the snapshot doesn't hold")
	assert.EqualValues(t, 4, v1["accounts"])
	assert.EqualValues(t, 2, kept["added"])
	again := erin.ok(t, http.MethodPost, base+"/layers", layerBody)
	assert.Equal(t, layer["hash"], again["layer"].(map[string]any)["hash"])
	assert.Equal(t, v1["hash"], again["version"].(map[string]any)["hash"])
	assert.EqualValues(t, 2, again["existed"])
	assert.Len(t, annotationsOf(t, erin.ok(t, http.MethodGet, base+"/annotations", "")), 2, "a layer's claims are the owner's annotations")

	// A fork names its parent and is named by its content: the same change,
	// sent in any order, is the same version.
	v1hash := v1["hash"].(string)
	fork := erin.ok(t, http.MethodPost, base+"/datasets/fork", `{"version":"`+v1hash+`","add":["near:mainnet:yan.near","near:mainnet:xi.near"],"drop":["near:mainnet:bob.near"]}`)
	v2 := fork["version"].(map[string]any)
	assert.Equal(t, false, fork["existed"])
	assert.Equal(t, v1hash, v2["parent"])
	assert.Nil(t, v2["layer"])
	assert.EqualValues(t, 5, v2["accounts"])
	want, _, err := canon.SHA256Hex(map[string]any{"schema": "dataset/v1", "about": about, "snapshot": sha, "parent": v1hash, "layer": nil,
		"add": []string{"near:mainnet:xi.near", "near:mainnet:yan.near"}, "drop": []string{"near:mainnet:bob.near"}})
	require.NoError(t, err)
	assert.Equal(t, want, v2["hash"], "the SHA-256 of its canonical JSON")
	same := erin.ok(t, http.MethodPost, base+"/datasets/fork", `{"version":"`+v1hash+`","drop":["near:mainnet:bob.near"],"add":["near:mainnet:xi.near","near:mainnet:yan.near","near:mainnet:xi.near"]}`)
	assert.Equal(t, want, same["version"].(map[string]any)["hash"], "a fork's hash is stable")
	assert.Equal(t, true, same["existed"])

	// What the parent's list holds decides what a fork may add or drop.
	v2hash := v2["hash"].(string)
	for _, bad := range []string{
		`{"version":"` + v2hash + `","drop":["near:mainnet:bob.near"]}`,  // already dropped
		`{"version":"` + v2hash + `","add":["near:mainnet:alice.near"]}`, // in the snapshot
		`{"version":"` + v2hash + `","add":["near:mainnet:zed.near"]}`,   // added by the layer
		`{"version":"` + v2hash + `"}`,                                   // no change
		`{"version":"` + v2hash + `","add":["zed"]}`,                     // not an account
	} {
		res, body := erin.do(t, http.MethodPost, base+"/datasets/fork", bad)
		assert.Equal(t, http.StatusBadRequest, res.StatusCode, "%s: %s", bad, body)
	}
	v3 := erin.ok(t, http.MethodPost, base+"/datasets/fork", `{"version":"`+v2hash+`","drop":["near:mainnet:zed.near"],"add":["near:mainnet:bob.near"]}`)["version"].(map[string]any)
	assert.EqualValues(t, 5, v3["accounts"])

	// Lists: the owner's about an address; one whole by hash.
	listed := erin.ok(t, http.MethodGet, base+"/layers?about="+about, "")
	assert.Len(t, listed["layers"], 1)
	assert.Len(t, listed["versions"], 3)
	assert.Nil(t, listed["next_cursor"])
	paged := erin.ok(t, http.MethodGet, base+"/layers?about="+about+"&limit=2", "")
	require.NotNil(t, paged["next_cursor"])
	rest := erin.ok(t, http.MethodGet, base+"/layers?about="+about+"&limit=2&cursor="+paged["next_cursor"].(string), "")
	assert.Len(t, rest["versions"], 1)
	assert.Empty(t, rest["layers"])
	whole := erin.ok(t, http.MethodGet, base+"/layers?hash="+layer["hash"].(string), "")
	assert.Equal(t, layer["claims"], whole["layer"].(map[string]any)["claims"])
	assert.Equal(t, v2hash, erin.ok(t, http.MethodGet, base+"/layers?hash="+v2hash, "")["version"].(map[string]any)["hash"])

	// Links: any link reads, a continue link writes, anyone else gets 404.
	read := tokenOf(t, erin.ok(t, http.MethodPost, base+"/links", `{"scope":"read"}`)["url"].(string))
	cont := tokenOf(t, erin.ok(t, http.MethodPost, base+"/links", `{"scope":"continue"}`)["url"].(string))
	stranger := p.browser(t)
	assert.Len(t, stranger.ok(t, http.MethodGet, "/api/v1/explorations/"+read+"/layers?about="+about, "")["versions"], 3)
	res, body := stranger.do(t, http.MethodPost, "/api/v1/explorations/"+read+"/datasets/fork", `{"version":"`+v2hash+`","add":["near:mainnet:q.near"]}`, "Origin", siteOrigin)
	assert.Equal(t, http.StatusNotFound, res.StatusCode, body)
	stranger.ok(t, http.MethodPost, "/api/v1/explorations/"+cont+"/datasets/fork", `{"version":"`+v2hash+`","add":["near:mainnet:q.near"]}`, "Origin", siteOrigin)
	for _, path := range []string{base + "/layers", base + "/layers?hash=" + v2hash} {
		res, body := stranger.do(t, http.MethodGet, path, "")
		assert.Equal(t, http.StatusNotFound, res.StatusCode, body)
	}

	// Another person can't fork erin's versions from a project of theirs.
	fay := signInAs(t, p, rpc, "fay.testnet")
	hers := fay.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"mine"}`)["id"].(string)
	res, body = fay.do(t, http.MethodPost, "/api/v1/explorations/"+hers+"/datasets/fork", `{"version":"`+v2hash+`","add":["near:mainnet:q.near"]}`)
	assert.Equal(t, http.StatusNotFound, res.StatusCode, body)
}
