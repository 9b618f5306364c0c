package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/petal-near/petal/adapters/nearai"
	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/app/config"
)

const modelUsage = `petal model distrusted      the models whose calls are held at one token a byte, and why
petal model trust <model>   hold its calls at NEAR AI's own counts again`

// modelCmd is the operator's look at the models a learned bound failed
// for (docs/money.md, "Holding what a call can cost"): a bound that was
// wrong once stays off until someone has looked.
func modelCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("say distrusted or trust:\n" + modelUsage)
	}
	cfg, err := config.LoadConfig(config.Getenv)
	if err != nil {
		return err
	}
	db, closeDB, err := openDatabase(ctx, cfg, newLogger(stderr, cfg.LogFormat), false)
	if err != nil {
		return err
	}
	defer closeDB()
	counts := postgres.NewPromptCountRepository(db)
	switch args[0] {
	case "distrusted":
		var models []string
		for _, m := range nearai.Catalogue {
			models = append(models, m.ID)
		}
		k, err := counts.Known(ctx, models, nil, nil)
		if err != nil {
			return err
		}
		if len(k.Distrusted) == 0 {
			fmt.Fprintln(stdout, "none: every model is held at NEAR AI's own counts")
		}
		for _, d := range k.Distrusted {
			fmt.Fprintf(stdout, "%s\tsince %s: NEAR AI counted %d input tokens where %d were held (%d request bytes)\n",
				d.Model, d.Since.UTC().Format("2006-01-02 15:04:05"), d.Reported, d.Bound, d.RequestBytes)
		}
		return nil
	case "trust":
		if len(args) != 2 {
			return errors.New("say which model:\n" + modelUsage)
		}
		if _, ok := nearai.Find(args[1]); !ok {
			return fmt.Errorf("%s is not in the catalogue", args[1])
		}
		if err := counts.Trust(ctx, args[1]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: held at NEAR AI's own counts again\n", args[1])
		return nil
	}
	return fmt.Errorf("unknown model command %q:\n%s", args[0], modelUsage)
}
