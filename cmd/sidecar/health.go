package main

import (
	"fmt"
	"net/http"
	"time"

	"github.com/spf13/cobra"
)

// newHealthCommand checks the health_check extension from inside the
// container: minimal images have no curl, and ECS and docker health checks
// run a command.
func newHealthCommand() *cobra.Command {
	url := "http://127.0.0.1:13133/"
	timeout := 2 * time.Second
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Exits 0 when the running sidecar's health check answers 200, 1 otherwise",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			client := http.Client{Timeout: timeout}
			resp, err := client.Get(url)
			if err != nil {
				return fmt.Errorf("sidecar is not healthy: %w", err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("sidecar is not healthy: %s answered %s", url, resp.Status)
			}
			fmt.Fprintln(cmd.OutOrStdout(), "healthy")
			return nil
		},
	}
	cmd.Flags().StringVar(&url, "url", url, "health_check endpoint to ask")
	cmd.Flags().DurationVar(&timeout, "timeout", timeout, "how long to wait for the answer")
	return cmd
}
