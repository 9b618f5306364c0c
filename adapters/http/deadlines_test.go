package httpapi

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A client that sends its body a byte at a time is cut at
// PETAL_BODY_TIMEOUT_S, answered in the contract's shape, and its connection
// closed, long before its body would have arrived.
func TestASlowBodyIsCut(t *testing.T) {
	rs := newRulesServer(t, map[string]string{"PETAL_BODY_TIMEOUT_S": "1"})
	conn, err := net.Dial("tcp", strings.TrimPrefix(rs.URL, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	const bodyLen = 1000
	_, err = conn.Write([]byte("POST /test/echo HTTP/1.1\r\nHost: petal\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"))
	require.NoError(t, err)
	var sent atomic.Int64
	sent.Store(1)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		// A byte every 200 ms: the whole body would take 200 s.
		for range bodyLen - 1 {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			if _, err := conn.Write([]byte(" ")); err != nil {
				return
			}
			sent.Add(1)
		}
	}()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(60*time.Second)))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	e := response{Response: res, Body: readAll(t, res)}.errorBody(t)
	assert.Equal(t, "bad_input", e.Error.Code)
	assert.Contains(t, e.Error.Message, "the body took longer than 1 s to arrive")
	assert.Less(t, sent.Load(), int64(bodyLen), "cut before the body was whole")
	// The server closes the connection: nothing more comes.
	_, err = bufio.NewReader(conn).ReadByte()
	assert.Error(t, err, "the connection is closed")
}

// A body that arrives in time has no deadline left on its connection: the
// next request on it is served as usual.
func TestABodyInTimeLeavesNoDeadline(t *testing.T) {
	rs := newRulesServer(t, map[string]string{"PETAL_BODY_TIMEOUT_S": "1"})
	tr := &http.Transport{MaxConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	for i := range 2 {
		res, err := client.Post(rs.URL+"/test/echo", "application/json", strings.NewReader(`{"text":"hi"}`))
		require.NoError(t, err)
		readAll(t, res)
		assert.Equal(t, http.StatusOK, res.StatusCode, "request %d", i+1)
		if i == 0 {
			// Longer than the body's deadline, on the same kept-alive connection.
			time.Sleep(1500 * time.Millisecond)
		}
	}
}

func readAll(t *testing.T, res *http.Response) []byte {
	t.Helper()
	defer res.Body.Close()
	var b strings.Builder
	_, err := bufio.NewReader(res.Body).WriteTo(&b)
	require.NoError(t, err)
	return []byte(b.String())
}
