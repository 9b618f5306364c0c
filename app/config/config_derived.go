package config

import (
	"fmt"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/ports"
)

// Where limits are counted (PETAL_LIMITS).
const (
	LimitsMemory   = "memory"
	LimitsPostgres = "postgres"
)

// LimitsFor is where limits are counted on a database found the way how
// names: PETAL_LIMITS when set; else memory only on a private cluster this
// petal started (nobody else uses it), postgres on DATABASE_URL or a local
// server, which other processes may share.
func (c Config) LimitsFor(privateCluster bool) string {
	switch {
	case c.Limits != "":
		return c.Limits
	case privateCluster:
		return LimitsMemory
	default:
		return LimitsPostgres
	}
}

// BlobsOff is PETAL_BLOB_URL's value for bodies kept in PostgreSQL's rows.
const BlobsOff = "off"

// BlobsFor is where bodies are kept on a database found the way privateCluster
// says: PETAL_BLOB_URL when set; else, on a private cluster this petal
// started (one machine, nobody else), the folder blobs under PETAL_DATA_DIR;
// else off, since a folder on one machine would hide bodies from replicas on
// another.
func (c Config) BlobsFor(privateCluster bool) (string, error) {
	switch {
	case c.BlobURL != "":
		return c.BlobURL, nil
	case privateCluster:
		dir, err := filepath.Abs(filepath.Join(c.DataDir, "blobs"))
		if err != nil {
			return "", fmt.Errorf("PETAL_DATA_DIR: %w", err)
		}
		return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir), RawQuery: "create_dir=true"}).String(), nil
	default:
		return BlobsOff, nil
	}
}

// ParseCIDRs reads a comma-separated list of CIDRs (a bare address is its own
// /32 or /128).
func ParseCIDRs(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(list, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "/") {
			a, err := netip.ParseAddr(part)
			if err != nil {
				return nil, fmt.Errorf("%q is not a CIDR (like 10.0.0.0/8) or an address", part)
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR (like 10.0.0.0/8)", part)
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// Secure reports whether the site is served over https, which makes the session
// cookie __Host- and Secure.
func (c Config) Secure() bool { return strings.HasPrefix(c.PublicURL, "https://") }

// LLM names the model door health reports: "none" on a public site, "near-ai"
// with a key, "recorded" without.
func (c Config) LLM() string {
	switch {
	case c.Public:
		return "none"
	case c.ModelKey != "":
		return "near-ai"
	default:
		return "recorded"
	}
}

// ShowsDemoMap reports whether an empty map shows the demo drawings: on a
// site that isn't public, unless its operator turned them off. A public
// site's map is real or empty, never made up.
func (c Config) ShowsDemoMap() bool { return c.DemoMap && !c.Public }

// AgentAccessReported is agent_access as health says it.
func (c Config) AgentAccessReported() string {
	if c.Public {
		return "none"
	}
	return c.AgentAccess
}

// Price is what a person pays (price/v2): NEAR AI's bill, the base-fee
// switches as configured (all off by default) and their own tip.
func (c Config) Price() credit.Price {
	return credit.Price{CallFeeBps: c.FeeCallBps, TopUpFeeBps: c.FeeTopUpBps, PerTurn: c.FeePerTurn,
		PerTool: c.FeePerTool, FreeAllowance: c.FeeFreeAllowance}
}

// Receiver is where money is sent on network (mainnet or testnet):
// PETAL_RECEIVER_MAINNET or PETAL_RECEIVER_TESTNET.
func (c Config) Receiver(network string) string {
	if network == "testnet" {
		return c.ReceiverTest
	}
	return c.ReceiverMain
}

// ReceiverVariable names the setting of network's receiver.
func ReceiverVariable(network string) string {
	if network == "testnet" {
		return "PETAL_RECEIVER_TESTNET"
	}
	return "PETAL_RECEIVER_MAINNET"
}

// TakesRealMoney reports whether people pay here for something real: a
// public site, or a site served at an https:// address whose model is paid
// (a model key). A server on a developer's machine or in a test, with a key
// but no https:// address, is its operator's own and reads no receiver.
func (c Config) TakesRealMoney() bool {
	return c.Public || (c.ModelKey != "" && strings.HasPrefix(c.PublicURL, "https://"))
}

// TestnetCounts reports whether a NEAR transfer on testnet adds credit here.
// Testnet NEAR is free, so it never buys real model spend: it counts only on
// a site that isn't public whose model isn't a real, paid one (the recorded
// model), or where the operator said so (PETAL_PAY_TESTNET=1).
func (c Config) TestnetCounts() bool {
	return !c.Public && (c.ModelKey == "" || c.PayTestnet)
}

// TestnetWarning is the warning a start logs when testnet NEAR buys real
// model spend on this site; empty when it doesn't.
func (c Config) TestnetWarning() string {
	if c.TestnetCounts() && c.ModelKey != "" {
		return "PETAL_PAY_TESTNET=1: free testnet NEAR adds credit that pays for real NEAR AI calls on this site"
	}
	return ""
}

// PostedCaps are the day's caps on new posted readings for this site: the
// site's, and the share one address or one owner may take of it (Load
// refuses a share that isn't below the site's).
func (c Config) PostedCaps() ports.PostedCaps {
	return ports.PostedCaps{Site: c.PostedSnapshotsPerDay, PerAddress: c.PostedPerAddress, PerOwner: c.PostedPerAddress}
}

// WalletHostsOrDefault is what /signin's wallets may reach beyond the
// manifest's origin: PETAL_WALLET_HOSTS when set; else, with a manifest of
// one's own, nothing more (its wallets' hosts are the operator's to name);
// else defaults, the default manifest's wallets' hosts.
func (c Config) WalletHostsOrDefault(defaults []string) []string {
	if c.WalletHosts != nil || c.WalletManifest != "" {
		return c.WalletHosts
	}
	return defaults
}
