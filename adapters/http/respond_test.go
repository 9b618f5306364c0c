package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every JSON answer carries tools_version, whether it is spliced into a copy
// (small answers) or written in two parts under its length (large ones), and
// an answer a tool keeps encoded goes out as it is.
func TestJSONAnswersCarryToolsVersionAtEverySize(t *testing.T) {
	e := echo.New()
	for _, tc := range []struct {
		name string
		v    any
	}{
		{"empty object", struct{}{}},
		{"small", map[string]string{"a": "b"}},
		{"large", map[string]string{"a": strings.Repeat("x", 3*splicedWriteOver)}},
		{"kept encoded, large", json.RawMessage(`{"a":"` + strings.Repeat("y", 2*splicedWriteOver) + `"}`)},
		{"kept encoded, small", json.RawMessage(`{"n":1}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			c := e.NewContext(httptest.NewRequest(http.MethodGet, "/", nil), rec)
			require.NoError(t, writeJSON(c, http.StatusOK, tc.v))
			assert.Equal(t, http.StatusOK, rec.Code)
			assert.Equal(t, jsonContentType, rec.Header().Get("Content-Type"))
			if cl := rec.Header().Get("Content-Length"); cl != "" {
				assert.Equal(t, strconv.Itoa(rec.Body.Len()), cl)
			}
			var got map[string]any
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got), rec.Body.String())
			assert.Equal(t, toolsVersionPrefix, rec.Body.Bytes()[:len(toolsVersionPrefix)])
			want, err := json.Marshal(tc.v)
			require.NoError(t, err)
			var wantMap map[string]any
			require.NoError(t, json.Unmarshal(want, &wantMap))
			delete(got, "tools_version")
			assert.Equal(t, wantMap, got)
		})
	}
}
