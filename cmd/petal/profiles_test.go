package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	httpapi "github.com/petal-near/petal/adapters/http"
)

func testPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.NRGBA{R: uint8(x), G: uint8(y), B: 99, A: 255})
		}
	}
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

func testJPEG(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, 32, 24)), nil))
	return b.Bytes()
}

func dataURL(mediaType string, b []byte) string {
	return "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(b)
}

func profileBody(t *testing.T, profile map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"profile": profile})
	require.NoError(t, err)
	return string(b)
}

type profileAnswer struct {
	Profile   map[string]any `json:"profile"`
	UpdatedAt *string        `json:"updated_at"`
	Published any            `json:"published"`
}

func TestAProfileRoundTripWithItsPictures(t *testing.T) {
	t.Parallel()
	p, _ := signInPetal(t, nil)
	ctx := t.Context()
	put := func(cookie, body string) (*http.Response, string) {
		return p.do(t, http.MethodPut, "/api/v1/me/profile", body, "Cookie", cookie, "Origin", siteOrigin)
	}

	// A visitor has none and keeps none.
	res, body := p.do(t, http.MethodGet, "/api/v1/me/profile", "")
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
	res, body = p.do(t, http.MethodPut, "/api/v1/me/profile", `{"profile":{"name":"x"}}`, "Origin", siteOrigin)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, body)

	cookie, _ := signInAlice(t, p)
	res, body = p.do(t, http.MethodGet, "/api/v1/me/profile", "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.JSONEq(t, `{"tools_version":"1.0.0","profile":null,"updated_at":null,"published":null}`, body)

	avatar := testPNG(t, 48, 48)
	banner, err := os.ReadFile("../../domain/profiles/testdata/blue-purple-pink.lossy.webp")
	require.NoError(t, err)
	full := map[string]any{
		"name":     strings.Repeat("ä", 256),
		"about":    "Counts votes.\nLikes flowers. " + strings.Repeat("x", 10000-29),
		"location": strings.Repeat("l", 256),
		"links":    map[string]string{"twitter": "@alice", "github": "alice-near", "website": "https://alice.example/" + strings.Repeat("p", 2048-22)},
		"avatar":   dataURL("image/png", avatar),
		"banner":   dataURL("image/webp", banner),
	}
	res, body = p.do(t, http.MethodPut, "/api/v1/me/profile", profileBody(t, full), "Cookie", cookie, "Origin", "https://evil.example")
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "from another site: %s", body)
	res, body = put(cookie, profileBody(t, full))
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var kept profileAnswer
	require.NoError(t, json.Unmarshal([]byte(body), &kept))
	assert.Nil(t, kept.Published)
	require.NotNil(t, kept.UpdatedAt)
	avatarURL, bannerURL := kept.Profile["avatar"].(string), kept.Profile["banner"].(string)
	assert.Regexp(t, `^/api/v1/media/[0-9a-f]{64}\.png$`, avatarURL)
	assert.Regexp(t, `^/api/v1/media/[0-9a-f]{64}\.webp$`, bannerURL)
	assert.Equal(t, full["name"], kept.Profile["name"])
	assert.Equal(t, full["about"], kept.Profile["about"])
	assert.Equal(t, full["location"], kept.Profile["location"])
	assert.Len(t, kept.Profile["links"], 3)

	res, got := p.do(t, http.MethodGet, "/api/v1/me/profile", "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, got)
	assert.True(t, jsonEqual(t, body, got), "GET answers what PUT answered")

	// The pictures, to anyone, byte for byte.
	for url, want := range map[string][]byte{avatarURL: avatar, bannerURL: banner} {
		res, b := p.do(t, http.MethodGet, url, "")
		require.Equal(t, http.StatusOK, res.StatusCode, b)
		assert.Equal(t, want, []byte(b))
		assert.Equal(t, "public, max-age=31536000, immutable", res.Header.Get("Cache-Control"))
		assert.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
		assert.Contains(t, res.Header.Get("Content-Security-Policy"), "sandbox")
		res, b = p.do(t, http.MethodHead, url, "")
		assert.Equal(t, http.StatusOK, res.StatusCode)
		assert.Empty(t, b)
	}
	assert.Equal(t, "image/png", headerOf(t, p, avatarURL, "Content-Type"))
	assert.Equal(t, "image/webp", headerOf(t, p, bannerURL, "Content-Type"))
	for _, url := range []string{strings.TrimSuffix(avatarURL, ".png") + ".webp", strings.TrimSuffix(avatarURL, ".png"),
		"/api/v1/media/" + strings.Repeat("0", 64) + ".png", "/api/v1/media/..%2f..%2fetc.png"} {
		res, b := p.do(t, http.MethodGet, url, "")
		assert.Equal(t, http.StatusNotFound, res.StatusCode, "%s: %s", url, b)
	}

	// Keeping the avatar by its address, a fastfs:// banner, and nulls clearing.
	res, body = put(cookie, profileBody(t, map[string]any{"name": "Alice", "avatar": avatarURL, "banner": "fastfs://alice.near/banner.png", "about": nil}))
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	kept = profileAnswer{}
	require.NoError(t, json.Unmarshal([]byte(body), &kept))
	assert.Equal(t, map[string]any{"name": "Alice", "avatar": avatarURL, "banner": "fastfs://alice.near/banner.png"}, kept.Profile)
	res, _ = p.do(t, http.MethodGet, bannerURL, "")
	assert.Equal(t, http.StatusNotFound, res.StatusCode, "a picture no profile shows is gone")
	res, _ = p.do(t, http.MethodGet, avatarURL, "")
	assert.Equal(t, http.StatusOK, res.StatusCode)

	// A JPEG too.
	res, body = put(cookie, profileBody(t, map[string]any{"avatar": dataURL("image/jpeg", testJPEG(t))}))
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Regexp(t, `"avatar":"/api/v1/media/[0-9a-f]{64}\.jpg"`, body)

	// Clearing it all keeps an empty profile, and its pictures go.
	res, body = put(cookie, `{"profile":{}}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"profile":{}`)
	var pictures int
	require.NoError(t, p.DB.Pool.QueryRow(ctx, `SELECT count(*) FROM media`).Scan(&pictures))
	assert.Zero(t, pictures)
}

func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	require.NoError(t, json.Unmarshal([]byte(a), &x))
	require.NoError(t, json.Unmarshal([]byte(b), &y))
	return assert.ObjectsAreEqual(x, y)
}

func headerOf(t *testing.T, p *testPetal, path, name string) string {
	t.Helper()
	res, _ := p.do(t, http.MethodGet, path, "")
	return res.Header.Get(name)
}

func TestProfileLimitsAndPicturesRefused(t *testing.T) {
	t.Parallel()
	p, _ := signInPetal(t, nil)
	cookie, _ := signInAlice(t, p)
	put := func(body string) (*http.Response, string) {
		return p.do(t, http.MethodPut, "/api/v1/me/profile", body, "Cookie", cookie, "Origin", siteOrigin)
	}
	res, body := put(profileBody(t, map[string]any{"name": "Kept"}))
	require.Equal(t, http.StatusOK, res.StatusCode, body)

	good := testPNG(t, 8, 8)
	tallPNG := func() []byte {
		var b bytes.Buffer
		require.NoError(t, png.Encode(&b, image.NewGray(image.Rect(0, 0, 1, 100_000))))
		return b.Bytes()
	}()
	require.Less(t, len(tallPNG), 1024, "the bomb is a few bytes")
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`)
	links := map[string]string{}
	for i := range 33 {
		links["s"+strings.Repeat("x", i)] = "handle"
	}
	for _, c := range []struct {
		name    string
		profile map[string]any
		reason  string
	}{
		{"a name of 257 characters", map[string]any{"name": strings.Repeat("ä", 257)}, "/profile/name: at most 256 characters"},
		{"a location of 257 characters", map[string]any{"location": strings.Repeat("l", 257)}, "/profile/location: at most 256"},
		{"an about of 10,001 characters", map[string]any{"about": strings.Repeat("a", 10001)}, "/profile/about: at most 10000"},
		{"33 links", map[string]any{"links": links}, "/profile/links: at most 32 links"},
		{"a service in capitals", map[string]any{"links": map[string]string{"Twitter": "@a"}}, "/profile/links/Twitter"},
		{"a link to javascript:", map[string]any{"links": map[string]string{"web": "javascript:alert(1)"}}, "/profile/links/web"},
		{"a link over http", map[string]any{"links": map[string]string{"web": "http://a.example"}}, "an https:// URL"},
		{"a link of 2,049 characters", map[string]any{"links": map[string]string{"web": "https://a.example/" + strings.Repeat("p", 2049-18)}}, "at most 2048"},
		{"a link that isn't a string", map[string]any{"links": map[string]any{"web": 7}}, "/profile/links/web"},
		{"a member NEAR Social's shape doesn't have here", map[string]any{"image": map[string]string{"url": "https://a.example/a.png"}}, "unknown field"},
		{"a polyglot: a page after the PNG", map[string]any{"avatar": dataURL("image/png", append(bytes.Clone(good), "<html><script>alert(1)</script>"...))}, "after its IEND"},
		{"an SVG", map[string]any{"avatar": dataURL("image/svg+xml", svg)}, "SVG is never accepted"},
		{"an SVG said to be a PNG", map[string]any{"banner": dataURL("image/png", svg)}, "SVG"},
		{"a decompression bomb", map[string]any{"avatar": dataURL("image/png", tallPNG)}, "1 × 100000 px; at most 4096 px a side"},
		{"a truncated PNG", map[string]any{"avatar": dataURL("image/png", good[:len(good)-20])}, "truncated"},
		{"a picture over 2 MiB", map[string]any{"avatar": dataURL("image/png", append(bytes.Clone(good), make([]byte, 2<<20)...))}, "over 2 MiB"},
		{"a picture from elsewhere", map[string]any{"avatar": "https://evil.example/a.png"}, "/profile/avatar"},
		{"a picture not kept here", map[string]any{"avatar": "/api/v1/media/" + strings.Repeat("a", 64) + ".png"}, "no picture with that address is kept here"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, body := put(profileBody(t, c.profile))
			assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
			assert.Contains(t, body, `"bad_input"`)
			assert.Contains(t, body, c.reason)
		})
	}
	// The route's body limit lets two 2 MiB pictures through (here refused
	// for what they are, not for their size), and nothing larger.
	twoMiB := dataURL("image/png", make([]byte, 2<<20))
	res, body = put(profileBody(t, map[string]any{"avatar": twoMiB, "banner": twoMiB, "about": strings.Repeat("\u003c", 10000)}))
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, "%.300s", body)
	assert.Contains(t, body, "not a PNG, JPEG or WebP")
	res, body = put(`{"profile":{"about":"` + strings.Repeat("a", httpapi.ProfileBodyLimit) + `"}}`)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, "%.300s", body)
	assert.Contains(t, body, "the body is larger than")

	res, body = put(`{"name":"no profile member"}`)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	res, body = put(`{}`)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	assert.Contains(t, body, "profile is required")

	// Nothing refused was kept.
	res, body = p.do(t, http.MethodGet, "/api/v1/me/profile", "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"profile":{"name":"Kept"}`)
	var pictures int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM media`).Scan(&pictures))
	assert.Zero(t, pictures)
}
