package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Past the day's cap, a client announcing 1 MiB and sending 1 KiB, then
// nothing, reads its 429 at once, on a connection that then closes: the
// refusal does not wait for a body it will never read (it reached the client
// only at the body's 30 s deadline).
func TestARefusalBeforeTheBodyIsAnsweredAtOnce(t *testing.T) {
	// The address's share (1) spent, below the site's cap (2).
	p := startPetal(t, map[string]string{"PETAL_POSTED_SNAPSHOTS_PER_DAY": "2", "PETAL_POSTED_SNAPSHOTS_PER_ADDRESS": "1"})
	owner := p.browser(t)
	id := owner.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"capped"}`)["id"].(string)
	shaA, a := reading(t, 1)
	owner.ok(t, http.MethodPut, "/api/v1/explorations/"+id+"/snapshots/"+shaA, string(a))
	shaB, _ := reading(t, 2)
	u, err := url.Parse(p.URL)
	require.NoError(t, err)
	var cookies []string
	for _, c := range owner.client.Jar.Cookies(u) {
		cookies = append(cookies, c.Name+"="+c.Value)
	}

	conn, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	defer conn.Close()
	started := time.Now()
	_, err = fmt.Fprintf(conn, "PUT /api/v1/explorations/%s/snapshots/%s HTTP/1.1\r\nHost: %s\r\nCookie: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		id, shaB, u.Host, strings.Join(cookies, "; "), 1<<20, strings.Repeat(" ", 1<<10))
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "no answer within 5 s")
	took := time.Since(started)
	defer res.Body.Close()
	t.Logf("the 429 arrived after %s", took)
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	assert.True(t, res.Close, "Connection: close")
	assert.Less(t, took, time.Second, "answered at once, not when the body's deadline ran out")
}

// A query string that does not parse is 400 bad_input, not page one.
func TestAnUnreadableQueryIsBadInput(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	b := p.browser(t)
	b.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"one"}`)
	for _, q := range []string{"cursor=%%%", "limit=5&cursor=%zz", "limit=5;cursor=x"} {
		res, body := b.do(t, http.MethodGet, "/api/v1/conversations?"+q, "")
		assert.Equal(t, http.StatusBadRequest, res.StatusCode, "%s: %s", q, body)
		assert.Contains(t, body, `"code":"bad_input"`, q)
		assert.Contains(t, body, "the query string could not be read", q)
	}
	res, body := b.do(t, http.MethodGet, "/api/v1/conversations?limit=5", "")
	assert.Equal(t, http.StatusOK, res.StatusCode, body)
}

// A NUL (or a name twice) inside a tool's arguments is answered as every bad
// argument is: a JSON-RPC result with isError and bad_input, under the
// call's id. In the envelope it is still the route's 400.
func TestANULInMCPArgumentsIsAToolError(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	for _, args := range []string{`{"question":"who\u0000"}`, `{"question":"a","question":"b"}`} {
		res, raw := p.do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"start_exploration","arguments":`+args+`}}`,
			"Accept", "application/json, text/event-stream")
		require.Equal(t, http.StatusOK, res.StatusCode, raw)
		if _, data, ok := strings.Cut(raw, "data: "); ok {
			raw = strings.TrimSpace(data)
		}
		var answer struct {
			ID     int `json:"id"`
			Result struct {
				IsError bool `json:"isError"`
				Content []struct{ Text string }
			}
		}
		require.NoError(t, json.Unmarshal([]byte(raw), &answer), raw)
		assert.Equal(t, 7, answer.ID)
		assert.True(t, answer.Result.IsError, raw)
		require.NotEmpty(t, answer.Result.Content, raw)
		assert.Contains(t, answer.Result.Content[0].Text, `"code":"bad_input"`)
	}
	res, raw := p.do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":7,"id":8,"method":"tools/call","params":{"name":"start_exploration","arguments":{}}}`,
		"Accept", "application/json, text/event-stream")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, raw)
	assert.Contains(t, raw, "given twice")
}
