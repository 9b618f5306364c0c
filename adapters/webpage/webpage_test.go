package webpage

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/errs"
)

// names is a resolver the test controls: no lookup leaves the machine.
type names map[string][]netip.Addr

func (n names) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	a, ok := n[host]
	if !ok {
		return nil, fmt.Errorf("no such host %s", host)
	}
	return a, nil
}

func addrs(s ...string) []netip.Addr {
	var out []netip.Addr
	for _, x := range s {
		out = append(out, netip.MustParseAddr(x))
	}
	return out
}

func TestRefusedAddresses(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1": ReasonLoopback, "127.9.9.9": ReasonLoopback, "::1": ReasonLoopback, "::ffff:127.0.0.1": ReasonLoopback,
		"10.0.0.1": ReasonPrivate, "172.16.3.4": ReasonPrivate, "192.168.1.1": ReasonPrivate, "fd00::1": ReasonPrivate,
		"100.64.0.1": ReasonPrivate, "::ffff:10.0.0.1": ReasonPrivate, "::ffff:192.168.0.1": ReasonPrivate,
		"169.254.169.254": ReasonLinkLocal, "fe80::1": ReasonLinkLocal, "::ffff:169.254.169.254": ReasonLinkLocal,
		"224.0.0.1": ReasonMulticast, "ff02::1": ReasonMulticast, "ff05::2": ReasonMulticast,
		"0.0.0.0": ReasonUnspecified, "0.1.2.3": ReasonUnspecified, "::": ReasonUnspecified,
		"255.255.255.255": ReasonReserved, "240.0.0.1": ReasonReserved, "198.18.0.1": ReasonReserved,
		"::7f00:1":             ReasonReserved, // IPv4-compatible 127.0.0.1
		"64:ff9b::a00:1":       ReasonPrivate,  // NAT64 of 10.0.0.1
		"64:ff9b::7f00:1":      ReasonLoopback, // NAT64 of 127.0.0.1
		"2002:a9fe:a9fe::1":    ReasonLinkLocal,
		"2001:0:4136:e378::1":  ReasonReserved, // Teredo
		"93.184.215.14":        "",
		"2606:2800:21f:cb07::": "",
		"64:ff9b::5db8:d70e":   "", // NAT64 of a public address
	} {
		assert.Equal(t, want, Refused(netip.MustParseAddr(addr), false), addr)
	}
	assert.Equal(t, "", Refused(netip.MustParseAddr("127.0.0.1"), true), "the tests' setting allows loopback")
	assert.Equal(t, ReasonPrivate, Refused(netip.MustParseAddr("10.0.0.1"), true), "and nothing else")
}

// The dialler's own check: whatever a resolver said, a socket to a refused
// address is never opened.
func TestControlChecksTheDialledAddress(t *testing.T) {
	f := New(Options{})
	for _, a := range []string{"10.0.0.1:80", "[::1]:443", "169.254.169.254:80", "[::ffff:127.0.0.1]:80"} {
		err := f.control("tcp", a, nil)
		require.Error(t, err, a)
		assert.IsType(t, &refusal{}, err)
	}
	assert.NoError(t, f.control("tcp", "93.184.215.14:443", nil))
}

func reason(t *testing.T, err error) string {
	t.Helper()
	require.Error(t, err)
	e, ok := errs.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, errs.BadInput, e.Code, e.Message)
	assert.NotEmpty(t, e.Hint)
	i, j := strings.Index(e.Message, "refused ("), strings.Index(e.Message, "):")
	require.True(t, i >= 0 && j > i, e.Message)
	return e.Message[i+len("refused (") : j]
}

func TestReadsAPageOnLoopbackWithTheTestSetting(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/doc", http.StatusFound)
		case "/doc":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<html><head><title> The  Council </title><script>alert(1)</script></head>
<body><h1>Members</h1><p>Alice and <a href="/bob">Bob</a>.</p><ul><li>one</li><li>two</li></ul></body></html>`)
		case "/plain":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "just words")
		case "/latin1":
			w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
			_, _ = w.Write([]byte("caf\xe9"))
		case "/pdf":
			w.Header().Set("Content-Type", "application/pdf")
			fmt.Fprint(w, "%PDF-1.7")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	f := New(Options{AllowLoopback: true})

	page, err := f.Fetch(t.Context(), srv.URL+"/moved")
	require.NoError(t, err)
	assert.Equal(t, srv.URL+"/doc", page.URL, "where it was read, after the redirect")
	assert.Equal(t, "The Council", page.Title)
	assert.Equal(t, "text/html", page.ContentType)
	assert.Contains(t, page.Text, "# Members")
	assert.Contains(t, page.Text, "["+"Bob]("+srv.URL+"/bob)", "links made absolute")
	assert.Contains(t, page.Text, "- one")
	assert.NotContains(t, page.Text, "alert(1)", "scripts dropped")
	assert.False(t, page.Cut)

	page, err = f.Fetch(t.Context(), srv.URL+"/plain")
	require.NoError(t, err)
	assert.Equal(t, "just words", page.Text)
	page, err = f.Fetch(t.Context(), srv.URL+"/latin1")
	require.NoError(t, err)
	assert.Equal(t, "café", page.Text)

	_, err = f.Fetch(t.Context(), srv.URL+"/pdf")
	assert.True(t, errs.Is(err, errs.CannotRead), "%v", err)
	_, err = f.Fetch(t.Context(), srv.URL+"/missing")
	assert.True(t, errs.Is(err, errs.NotFound), "%v", err)

	// The setting is loopback only: a redirect from there to a private
	// address is still refused, before any connection.
	priv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://10.0.0.1/admin", http.StatusFound)
	}))
	defer priv.Close()
	_, err = f.Fetch(t.Context(), priv.URL)
	assert.Equal(t, ReasonPrivate, reason(t, err))
}

func TestRefusals(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "never read")
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	resolver := names{
		"internal.example":  addrs("10.1.2.3"),
		"meta.example":      addrs("169.254.169.254"),
		"mixed.example":     addrs("93.184.215.14", "192.168.0.10"),
		"sneaky.example":    addrs("::ffff:127.0.0.1"),
		"localhost.example": addrs("127.0.0.1"),
		"empty.example":     nil,
	}
	f := New(Options{Resolver: resolver})

	for url, want := range map[string]string{
		"http://127.0.0.1:" + port + "/":          ReasonLoopback,
		"http://[::1]:" + port + "/":              ReasonLoopback,
		"http://[::ffff:127.0.0.1]:" + port:       ReasonLoopback,
		"http://10.0.0.1/":                        ReasonPrivate,
		"http://169.254.169.254/latest/meta-data": ReasonLinkLocal,
		"http://0.0.0.0:" + port:                  ReasonUnspecified,
		"http://[ff02::1]/":                       ReasonMulticast,
		"http://internal.example/":                ReasonPrivate,
		"http://meta.example/":                    ReasonLinkLocal,
		"http://mixed.example/":                   ReasonPrivate,
		"http://sneaky.example:" + port:           ReasonLoopback,
		"http://localhost.example:" + port:        ReasonLoopback,
		"http://empty.example/":                   ReasonNoAddress,
		"http://nowhere.example/":                 ReasonNotResolving,
		"file:///etc/passwd":                      ReasonScheme,
		"ftp://example.com/x":                     ReasonScheme,
		"gopher://example.com/":                   ReasonScheme,
		"http://user:secret@example.com/":         ReasonCredentials,
		"https://token@example.com/":              ReasonCredentials,
		"http:///nohost":                          ReasonBadURL,
	} {
		_, err := f.Fetch(t.Context(), url)
		assert.Equal(t, want, reason(t, err), url)
		if e, ok := errs.As(err); ok {
			assert.NotContains(t, e.Message, "secret", "credentials never repeated")
		}
	}
	assert.Zero(t, hits.Load(), "no refused request reached the server")
}

func TestRedirectsAreCheckedAndCounted(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case r.URL.Path == "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case r.URL.Path == "/to-name":
			http.Redirect(w, r, "http://internal.example/", http.StatusMovedPermanently)
		case r.URL.Path == "/to-creds":
			http.Redirect(w, r, "http://u:p@"+strings.TrimPrefix(srv.URL, "http://")+"/ok", http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/hop/"):
			var n int
			fmt.Sscan(strings.TrimPrefix(r.URL.Path, "/hop/"), &n)
			if n == 0 {
				fmt.Fprint(w, "arrived")
				return
			}
			http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusFound)
		default:
			fmt.Fprint(w, "ok")
		}
	}))
	defer srv.Close()
	f := New(Options{AllowLoopback: true, Resolver: names{"internal.example": addrs("10.9.9.9")}})
	for path, want := range map[string]string{
		"/to-metadata": ReasonLinkLocal, "/to-file": ReasonScheme, "/to-name": ReasonPrivate,
		"/to-creds": ReasonCredentials, "/hop/6": ReasonRedirects,
	} {
		_, err := f.Fetch(t.Context(), srv.URL+path)
		assert.Equal(t, want, reason(t, err), path)
	}
	page, err := f.Fetch(t.Context(), srv.URL+"/hop/5")
	require.NoError(t, err, "five redirects are followed")
	assert.Equal(t, "arrived", strings.TrimSpace(page.Text))
}

// A 50 MiB page is read to 5 MiB and no further: the text is cut there.
func TestAHugePageStopsAtTheLimit(t *testing.T) {
	var written atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", fmt.Sprint(50<<20))
		line := []byte(strings.Repeat("petal ", 170) + "\n") // 1 KiB
		for i := 0; i < 50<<10; i++ {
			n, err := w.Write(line)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	f := New(Options{AllowLoopback: true})
	page, err := f.Fetch(t.Context(), srv.URL)
	require.NoError(t, err)
	assert.True(t, page.Cut)
	assert.Equal(t, MaxBytes, len(page.Text))
	srv.CloseClientConnections()
	assert.Less(t, written.Load(), int64(50<<20), "the rest was never read")
}

// A page of tiny elements is cut by their count (each costs memory once
// parsed), and one nested past x/net/html's 512 open elements is refused by
// the parser, so the converter never recurses that deep.
func TestElementBounds(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/deep" {
			fmt.Fprint(w, strings.Repeat("<div>", 100_000), "x")
			return
		}
		fmt.Fprint(w, strings.Repeat("<b>x</b>", MaxElements+5000))
	}))
	defer srv.Close()
	f := New(Options{AllowLoopback: true})
	page, err := f.Fetch(t.Context(), srv.URL+"/wide")
	require.NoError(t, err)
	assert.True(t, page.Cut)
	assert.Equal(t, MaxElements, strings.Count(page.Text, "x"))
	_, err = f.Fetch(t.Context(), srv.URL+"/deep")
	assert.True(t, errs.Is(err, errs.CannotRead), "%v", err)
}
