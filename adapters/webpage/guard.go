package webpage

import (
	"net/netip"
	"net/url"
	"strings"
)

// Why a request is refused, as a metric label and in the caller's message.
const (
	ReasonScheme       = "scheme"       // not http or https
	ReasonCredentials  = "credentials"  // user:password@ in the URL
	ReasonBadURL       = "bad_url"      // not a URL with a host
	ReasonLoopback     = "loopback"     // this machine
	ReasonPrivate      = "private"      // a private network (RFC 1918, fc00::/7, 100.64.0.0/10)
	ReasonLinkLocal    = "link_local"   // 169.254.0.0/16 (cloud metadata), fe80::/10
	ReasonMulticast    = "multicast"    // 224.0.0.0/4, ff00::/8
	ReasonUnspecified  = "unspecified"  // 0.0.0.0/8, ::
	ReasonReserved     = "reserved"     // 240.0.0.0/4, benchmarking, IETF ranges, deprecated IPv6 forms
	ReasonNoAddress    = "no_address"   // the name resolves to nothing
	ReasonRedirects    = "redirects"    // more than MaxRedirects
	ReasonNotResolving = "not_resolved" // the name could not be resolved
)

// Ranges no public page is ever at, beyond what netip's predicates know.
var (
	thisNetwork  = netip.MustParsePrefix("0.0.0.0/8")
	sharedCGNAT  = netip.MustParsePrefix("100.64.0.0/10")
	ietfProtocol = netip.MustParsePrefix("192.0.0.0/24")
	benchmarking = netip.MustParsePrefix("198.18.0.0/15")
	reserved4    = netip.MustParsePrefix("240.0.0.0/4") // with 255.255.255.255
	ipv4Compat   = netip.MustParsePrefix("::/96")       // deprecated IPv4-compatible IPv6
	nat64        = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local   = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour    = netip.MustParsePrefix("2002::/16")
	teredo       = netip.MustParsePrefix("2001::/32")
	discardOnly  = netip.MustParsePrefix("100::/64")
)

// Refused says why a is no address for a public page, or "" when it may be
// reached. IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged as its IPv4, and so
// are the IPv4 addresses NAT64 and 6to4 carry inside IPv6; loopback passes
// only when allowLoopback (the tests' setting).
func Refused(a netip.Addr, allowLoopback bool) string {
	if !a.IsValid() {
		return ReasonBadURL
	}
	a = a.WithZone("").Unmap()
	switch {
	case a.IsUnspecified(), thisNetwork.Contains(a):
		return ReasonUnspecified
	case a.IsLoopback():
		if allowLoopback {
			return ""
		}
		return ReasonLoopback
	case a.IsPrivate(), sharedCGNAT.Contains(a):
		return ReasonPrivate
	case a.IsMulticast():
		return ReasonMulticast
	case a.IsLinkLocalUnicast():
		return ReasonLinkLocal
	case ietfProtocol.Contains(a), benchmarking.Contains(a), reserved4.Contains(a),
		ipv4Compat.Contains(a), nat64Local.Contains(a), teredo.Contains(a), discardOnly.Contains(a):
		return ReasonReserved
	case nat64.Contains(a):
		b := a.As16()
		return Refused(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), false)
	case sixToFour.Contains(a):
		b := a.As16()
		return Refused(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), false)
	}
	return ""
}

// CheckURL refuses what no request may name, before any lookup: a scheme
// other than http and https, credentials, no host, and an address literal
// that Refused refuses. It answers the reason, "" when the URL may be tried.
func CheckURL(u *url.URL, allowLoopback bool) string {
	if u == nil {
		return ReasonBadURL
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return ReasonScheme
	}
	if u.User != nil {
		return ReasonCredentials
	}
	host := u.Hostname()
	if host == "" {
		return ReasonBadURL
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return Refused(a, allowLoopback)
	}
	return ""
}
