package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/moneyapp"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/invites"
)

const inviteUsage = `petal invite mint <usd> [--days N] [--json]   make an invite; its token is printed once
petal invite revoke <id>                        end an invite
petal invite list                               every invite with its status`

// inviteCmd is the operator's invite tool, on the configured database.
func inviteCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	if len(args) == 0 {
		return errors.New("say mint, revoke or list:\n" + inviteUsage)
	}
	cfg, err := config.LoadConfig(config.Getenv)
	if err != nil {
		return err
	}
	// An operator's one-off command never changes the schema: a database
	// that is behind is refused, naming petal migrate up.
	db, closeDB, err := openDatabase(ctx, cfg, newLogger(stderr, cfg.LogFormat), false)
	if err != nil {
		return err
	}
	defer closeDB()
	clock := memory.SystemClock{}
	svc := moneyapp.NewInviteService(postgres.NewInviteRepository(db), postgres.NewSessionRepository(db), clock, rand.Reader)
	switch args[0] {
	case "mint":
		return inviteMint(ctx, svc, args[1:], stdout)
	case "revoke":
		if len(args) != 2 {
			return errors.New("revoke takes one invite id: petal invite revoke inv_…")
		}
		inv, err := svc.Revoke(ctx, args[1])
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s revoked at %s\n", inv.ID, inv.RevokedAt.Format(time.RFC3339))
		return nil
	case "list":
		list, err := svc.List(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATUS\tBUDGET_USD\tSPENT_USD\tLEFT_USD\tEXPIRES_AT")
		now := clock.Now()
		for _, inv := range list {
			v := inv.ViewAt(now)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", inv.ID, v.Status, inv.Budget, inv.Spent, max(inv.Budget-inv.Spent, 0), inv.ExpiresAt.Format(time.RFC3339))
		}
		return tw.Flush()
	}
	return fmt.Errorf("unknown invite command %q:\n%s", args[0], inviteUsage)
}

func inviteMint(ctx context.Context, svc *moneyapp.InviteService, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("invite mint", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	days := fs.Int("days", invites.DefaultDays, "days the invite lasts")
	asJSON := fs.Bool("json", false, "print { id, token, budget_usd, expires_at }")
	// The amount may come before or after the flags.
	var amount []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return fmt.Errorf("invite mint: %v\nusage: %s", err, strings.SplitN(inviteUsage, "\n", 2)[0])
		}
		args = fs.Args()
		if len(args) > 0 {
			amount = append(amount, args[0])
			args = args[1:]
		}
	}
	if len(amount) != 1 {
		return errors.New("invite mint takes one amount in dollars, such as 5 or 0.50")
	}
	budget, err := credit.ParseUSD(amount[0])
	if err != nil || budget <= 0 {
		return fmt.Errorf("%q is not a dollar amount more than 0 (such as 5 or 0.50)", amount[0])
	}
	m, err := svc.Mint(ctx, budget, *days)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		return enc.Encode(m)
	}
	fmt.Fprintf(stdout, "invite %s: $%s until %s\ntoken (shown once, only its hash is kept):\n%s\n", m.ID, budget, m.ExpiresAt, m.Token)
	return nil
}
