package peopleapp

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/ports"
)

// WalletKeys holds the key that seals wallet addresses (PETAL_WALLET_KEY).
// The contract's start-up rules: a gated server with a model key refuses to
// start without it; anywhere else a throwaway key is made at the first
// sign-in, with one warning line, and wallets sealed under it can't be read
// after a restart.
type WalletKeys struct {
	mu     sync.Mutex
	key    *people.WalletKey
	random ports.Random
	log    *slog.Logger
}

// ErrWalletKeyRequired is the refusal to start.
var ErrWalletKeyRequired = errors.New("PETAL_WALLET_KEY is required: a gated server with a model key (NEAR_AI_API_KEY) refuses to start without it; " +
	"set 32 bytes as hex or base64 (openssl rand -hex 32)")

// NewWalletKeys reads PETAL_WALLET_KEY, or refuses to start per the rules.
func NewWalletKeys(cfg config.Config, random ports.Random, log *slog.Logger) (*WalletKeys, error) {
	k := &WalletKeys{random: random, log: log}
	if cfg.WalletKey != "" {
		key, err := people.ParseWalletKey(cfg.WalletKey)
		if err != nil {
			return nil, err
		}
		k.key = &key
		return k, nil
	}
	if cfg.AgentAccess != "open" && cfg.ModelKey != "" {
		return nil, ErrWalletKeyRequired
	}
	return k, nil
}

// Key is the wallet key, making the throwaway one on first use. ctx is the
// request's that needed it: the warning then carries its request_id.
func (k *WalletKeys) Key(ctx context.Context) (people.WalletKey, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.key != nil {
		return *k.key, nil
	}
	var secret [32]byte
	if _, err := k.random.Read(secret[:]); err != nil {
		return people.WalletKey{}, err
	}
	key := people.NewWalletKey(secret)
	k.key = &key
	if k.log != nil {
		k.log.WarnContext(ctx, "PETAL_WALLET_KEY is not set: wallets are sealed under a throwaway key and can't be read after a restart")
	}
	return key, nil
}
