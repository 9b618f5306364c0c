// Package invites is the invite: a token an operator mints for a budget in
// dollars and a number of days, redeemed into sessions that then draw on that
// one budget. Only the token's hash is ever stored. Pure: randomness and the
// time come in.
package invites

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/people"
)

// DefaultDays is how long an invite lasts unless told otherwise.
const DefaultDays = 14

// TokenPrefix marks an invite token so a person can tell it from other secrets.
const TokenPrefix = "petal_invite_"

// Status is where an invite stands.
type Status string

// Statuses.
const (
	Active  Status = "active"
	Spent   Status = "spent"
	Revoked Status = "revoked"
	Expired Status = "expired"
)

// Invite is one invite as stored, with what its account has spent and holds.
type Invite struct {
	ID        string
	TokenHash string
	Budget    credit.Micros
	Spent     credit.Micros
	Held      credit.Micros
	CreatedAt time.Time
	ExpiresAt time.Time
	RevokedAt *time.Time
}

// StatusAt is the invite's status at now. Revoked and expired come before
// spent: an ended invite is ended, whatever it had left.
func (i Invite) StatusAt(now time.Time) Status {
	switch {
	case i.RevokedAt != nil:
		return Revoked
	case !now.Before(i.ExpiresAt):
		return Expired
	case i.Spent >= i.Budget:
		return Spent
	}
	return Active
}

// Left is what the budget has left after charges and holds, never below zero.
func (i Invite) Left() credit.Micros {
	return max(i.Budget-i.Spent-i.Held, 0)
}

// Mint makes a new invite for budget lasting days from now, and its token,
// shown once.
func Mint(random io.Reader, budget credit.Micros, days int, now time.Time) (token string, inv Invite, err error) {
	if budget <= 0 {
		return "", Invite{}, fmt.Errorf("an invite's budget must be more than $0")
	}
	if days <= 0 || days > 3650 {
		return "", Invite{}, fmt.Errorf("an invite lasts 1 to 3650 days, not %d", days)
	}
	var id [16]byte
	var secret [32]byte
	if _, err := io.ReadFull(random, id[:]); err != nil {
		return "", Invite{}, fmt.Errorf("invites: random: %w", err)
	}
	if _, err := io.ReadFull(random, secret[:]); err != nil {
		return "", Invite{}, fmt.Errorf("invites: random: %w", err)
	}
	token = TokenPrefix + base64.RawURLEncoding.EncodeToString(secret[:])
	now = now.UTC()
	return token, Invite{
		ID:        "inv_" + hex.EncodeToString(id[:]),
		TokenHash: people.HashToken(token),
		Budget:    budget,
		CreatedAt: now,
		ExpiresAt: now.Add(time.Duration(days) * 24 * time.Hour),
	}, nil
}

// HashToken is the stored form of an invite token, after trimming the
// whitespace a copy and paste may bring.
func HashToken(token string) string { return people.HashToken(strings.TrimSpace(token)) }

// View is an invite as the contract shows it.
type View struct {
	Status    Status           `json:"status"`
	BudgetUSD credit.USDNumber `json:"budget_usd"`
	SpentUSD  credit.USDNumber `json:"spent_usd"`
	LeftUSD   credit.USDNumber `json:"left_usd"`
	ExpiresAt time.Time        `json:"expires_at"`
}

// ViewAt is the invite's public view at now.
func (i Invite) ViewAt(now time.Time) View {
	left := max(i.Budget-i.Spent, 0)
	return View{Status: i.StatusAt(now), BudgetUSD: i.Budget.USD(), SpentUSD: i.Spent.USD(), LeftUSD: left.USD(), ExpiresAt: i.ExpiresAt.UTC()}
}
