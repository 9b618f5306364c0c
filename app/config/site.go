package config

import (
	"net"
	"net/url"
	"strings"
)

// PETAL_API alone decides who the site is: the NEP-413 recipient, the allowed
// Origin and the cookie's name come from it, never from a request header.

// SiteOrigin is PETAL_API's origin (scheme://host[:port]), "" when unset.
func (c Config) SiteOrigin() string {
	u, err := url.Parse(c.PublicURL)
	if c.PublicURL == "" || err != nil || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// Recipient is the site's hostname, which a NEP-413 sign-in must name. A site
// with no PETAL_API is "localhost".
func (c Config) Recipient() string {
	u, err := url.Parse(c.PublicURL)
	if c.PublicURL == "" || err != nil || u.Hostname() == "" {
		return "localhost"
	}
	return strings.ToLower(u.Hostname())
}

// LocalSite reports whether the site is local: no PETAL_API, or one on
// localhost, 127.0.0.1 or ::1. A local site accepts a local page matching the
// Host it asked as its own origin.
func (c Config) LocalSite() bool {
	if c.PublicURL == "" {
		return true
	}
	u, err := url.Parse(c.PublicURL)
	return err == nil && IsLocalHost(u.Hostname())
}

// IsLocalHost reports whether host (no port) is this machine's loopback name.
func IsLocalHost(host string) bool {
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.Equal(net.IPv4(127, 0, 0, 1)) || ip.Equal(net.IPv6loopback))
}

// SessionCookieName is __Host-petal_session on an https:// site (with Secure),
// petal_session otherwise.
func (c Config) SessionCookieName() string {
	if c.Secure() {
		return "__Host-petal_session"
	}
	return "petal_session"
}
