package config

import (
	"context"
	"fmt"
	"time"

	"github.com/petal-near/petal/ports"
)

// receiverCheckTimeout bounds each view_account of a receiver at start.
const receiverCheckTimeout = 15 * time.Second

// CheckReceivers refuses to start a site that takes real money (a public
// site, or an https:// one with a model key) when a receiver it counts money to can't be
// read on chain (view_account): money sent to a misspelt account is lost.
// It reads the mainnet receiver, and the testnet one where testnet NEAR
// counts; the error names the variable to fix. Anywhere else it reads
// nothing.
func CheckReceivers(ctx context.Context, cfg Config, near ports.NearAccounts) error {
	if !cfg.TakesRealMoney() {
		return nil
	}
	networks := []string{"mainnet"}
	if cfg.TestnetCounts() {
		networks = append(networks, "testnet")
	}
	for _, network := range networks {
		account := cfg.Receiver(network)
		rctx, cancel := context.WithTimeout(ctx, receiverCheckTimeout)
		_, err := near.ViewAccount(rctx, "near:"+network, account)
		cancel()
		if err != nil {
			return fmt.Errorf("%s: %s can't be read on %s (view_account), so money sent to it might be lost: %w",
				ReceiverVariable(network), account, network, err)
		}
	}
	return nil
}
