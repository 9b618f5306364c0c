package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/app/config"
)

func migrateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	if len(args) == 0 {
		return errors.New("say up, down [N], version or force V")
	}
	cfg, err := config.LoadConfig(config.Getenv)
	if err != nil {
		return err
	}
	located, err := postgres.LocateIn(ctx, cfg.DatabaseURL, cfg.DataDir, databasePlaces, newLogger(stderr, cfg.LogFormat))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, located.Stop()) }()
	// The migrations hold a session lock: never through a pooler.
	located.DirectURL = directURL(located, cfg)
	m, err := postgres.NewMigrator(located.Direct())
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, m.Close()) }()
	switch args[0] {
	case "up":
		err = m.Up()
	case "down":
		n := 1
		if len(args) > 1 {
			if args[1] == "all" {
				n = 0
			} else if n, err = strconv.Atoi(args[1]); err != nil || n < 1 {
				return fmt.Errorf("down takes a positive number of steps or all, not %q", args[1])
			}
		}
		err = m.Down(n)
	case "version":
	case "force":
		if len(args) < 2 {
			return errors.New("force needs a version")
		}
		v, perr := strconv.Atoi(args[1])
		if perr != nil {
			return fmt.Errorf("force needs a version number, not %q", args[1])
		}
		err = m.Force(v)
	default:
		return fmt.Errorf("unknown migrate command %q: say up, down [N], version or force V", args[0])
	}
	if err != nil {
		return err
	}
	v, dirty, err := m.Version()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "version %d", v)
	if dirty {
		fmt.Fprint(stdout, " (dirty: a migration failed; fix it, then petal migrate force V)")
	}
	fmt.Fprintln(stdout)
	return nil
}
