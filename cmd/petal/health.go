package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/petal-near/petal/app/config"
)

// healthCmd asks a running petal whether it can serve. Container images have
// no shell or curl, so compose and Docker health checks call the binary.
func healthCmd(ctx context.Context, args []string, stdout io.Writer) error {
	var url string
	switch len(args) {
	case 0:
		cfg, err := config.LoadConfig(config.Getenv)
		if err != nil {
			return err
		}
		host, port, err := net.SplitHostPort(cfg.Addr)
		if err != nil {
			return err
		}
		// A wildcard listen address is reached on loopback.
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "127.0.0.1"
		}
		url = "http://" + net.JoinHostPort(host, port) + "/api/v1/health"
	case 1:
		url = args[0]
	default:
		return errors.New("say petal health, or petal health URL")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	fmt.Fprintf(stdout, "%s\n", body)
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d", url, res.StatusCode)
	}
	return nil
}
