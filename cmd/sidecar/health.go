package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"
)

// healthEndpointEnv names the variable the shipped configs read for the
// health_check extension's listen address; the health command reads the same
// one, so changing it moves both ends together.
const healthEndpointEnv = "SIDECAR_HEALTH_ENDPOINT"

// defaultHealthEndpoint is the configs' default for healthEndpointEnv.
const defaultHealthEndpoint = "127.0.0.1:13133"

// newHealthCommand checks the health_check extension from inside the
// container: minimal images have no curl, and ECS, docker and Kubernetes exec
// probes run a command.
func newHealthCommand() *cobra.Command {
	url := healthURL(os.Getenv(healthEndpointEnv))
	timeout := 2 * time.Second
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Exits 0 when the running sidecar's health check answers 200, 1 otherwise",
		Long: "Asks the health_check extension at $" + healthEndpointEnv + " (default " + defaultHealthEndpoint +
			"), the variable the shipped configs listen on; an address on every interface (0.0.0.0, ::) is asked on loopback.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			client := http.Client{Timeout: timeout}
			resp, err := client.Get(url)
			if err != nil {
				return fmt.Errorf("sidecar is not healthy: %w", err)
			}
			// The answer says which component is unhealthy and why.
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("sidecar is not healthy: %s answered %s: %s", url, resp.Status, bytes.TrimSpace(body))
			}
			fmt.Fprintln(cmd.OutOrStdout(), "healthy")
			return nil
		},
	}
	cmd.Flags().StringVar(&url, "url", url, "health_check endpoint to ask (default from $"+healthEndpointEnv+")")
	cmd.Flags().DurationVar(&timeout, "timeout", timeout, "how long to wait for the answer")
	return cmd
}

// healthURL turns a listen address into the URL a client in the same
// container asks: a listener on every interface (0.0.0.0, ::, or no host)
// is reached on loopback.
func healthURL(endpoint string) string {
	if endpoint == "" {
		endpoint = defaultHealthEndpoint
	}
	host, port, err := net.SplitHostPort(endpoint)
	if err != nil {
		// Not host:port; let the request report it.
		return "http://" + endpoint + "/"
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}
