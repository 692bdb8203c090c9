package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// healthEndpointEnv names the variable the shipped configs read for the
// health_check extension's listen address; the health command reads the same
// one, so changing it moves both ends together.
const healthEndpointEnv = "SIDECAR_HEALTH_ENDPOINT"

// defaultHealthEndpoint is the configs' default for healthEndpointEnv.
const defaultHealthEndpoint = "127.0.0.1:13133"

// Exit statuses of `sidecar status`; `sidecar health` exits 0 or 1.
const (
	exitDegraded   = 1
	exitNotRunning = 2
)

// Two questions are asked of the same endpoint, because the platforms act
// on them differently:
//
//   - `sidecar health` is the liveness check every deploy file's probe runs:
//     would a restart help? It fails only when the sidecar does not answer
//     or is not running its pipelines (starting, stopping, a fatal error).
//     A probe that fails makes Kubernetes restart the sidecar, ECS replace
//     the whole task (the app with it), and keeps an app that waits for a
//     healthy sidecar from starting; none of that fixes a token Axiom
//     refuses, an Axiom outage or an unusable state folder, so those keep
//     it passing.
//   - `sidecar status` (and the endpoint's own answer, 500 with the reason)
//     says whether anything is degraded and why.

// newHealthCommand checks from inside the container whether the sidecar is
// live: minimal images have no curl, and ECS, docker and Kubernetes exec
// probes run a command.
func newHealthCommand() *cobra.Command {
	h := newHealthFlags()
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Liveness check: exits 0 while the sidecar runs its pipelines, degraded or not; 1 when a restart could help",
		Long: "Asks the health_check extension at $" + healthEndpointEnv + " (default " + defaultHealthEndpoint +
			"), the variable the shipped configs listen on; an address on every interface (0.0.0.0, ::) is asked on loopback.\n" +
			"Exits 1 when the sidecar does not answer, or is starting, stopping or failed (a wedged pipeline included: the watchdog extension). A degradation a restart " +
			"cannot fix (a token Axiom refuses, Axiom unreachable, the state folder unusable) still exits 0 and is printed; " +
			"`sidecar status` exits non-zero for it.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := h.ask()
			if err != nil {
				return fmt.Errorf("sidecar is not live: %w", err)
			}
			if !st.running {
				return fmt.Errorf("sidecar is not live: %s", st.summary())
			}
			fmt.Fprintln(cmd.OutOrStdout(), st.summary())
			return nil
		},
	}
	h.register(cmd)
	return cmd
}

// newStatusCommand says whether the sidecar is healthy, and what is
// degraded and why.
func newStatusCommand() *cobra.Command {
	h := newHealthFlags()
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Prints what is degraded and why; exits 0 when healthy, 1 when degraded, 2 when not running",
		Long: "Asks the same endpoint as `sidecar health`, and prints every component that reports a problem " +
			"(a token Axiom refuses, Axiom unreachable, the state folder unusable) with the reason.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SilenceErrors = true // the status says it all
			st, err := h.ask()
			out := cmd.OutOrStdout()
			switch {
			case err != nil:
				fmt.Fprintf(out, "not running: %v\n", err)
				return exitCode(exitNotRunning)
			case !st.running:
				fmt.Fprintln(out, st.summary())
				return exitCode(exitNotRunning)
			case len(st.problems) == 0:
				fmt.Fprintln(out, st.summary())
				return nil
			}
			fmt.Fprintln(out, "degraded (running; a restart would not fix this):")
			for _, p := range st.problems {
				fmt.Fprintln(out, "  "+p)
			}
			return exitCode(exitDegraded)
		},
	}
	h.register(cmd)
	return cmd
}

// exitCode ends the command with that status and no further message.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

type healthFlags struct {
	url     string
	timeout time.Duration
}

func newHealthFlags() *healthFlags {
	return &healthFlags{url: healthURL(os.Getenv(healthEndpointEnv)), timeout: 2 * time.Second}
}

func (h *healthFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&h.url, "url", h.url, "health_check endpoint to ask (default from $"+healthEndpointEnv+")")
	cmd.Flags().DurationVar(&h.timeout, "timeout", h.timeout, "how long to wait for the answer")
}

// ask gets the endpoint's verbose answer, which lists every component.
func (h *healthFlags) ask() (*healthStatus, error) {
	u, err := url.Parse(h.url)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	q.Set("verbose", "true")
	u.RawQuery = q.Encode()
	client := http.Client{Timeout: h.timeout}
	resp, err := client.Get(u.String())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	return parseHealth(resp.StatusCode, body), nil
}

// healthStatus is what the endpoint answered.
type healthStatus struct {
	// status is the collector's aggregate (StatusOK, StatusStarting, ...),
	// or the HTTP status when the answer does not carry one.
	status string
	// running is whether the pipelines run: liveness.
	running bool
	// problems are the components in error, "component (where): reason".
	problems []string
}

// The statuses in which the collector runs its pipelines; the aggregate
// puts starting, stopping and fatal before any error, so one of these
// means every component has started and none failed fatally.
var runningStatuses = []string{"StatusOK", "StatusRecoverableError", "StatusPermanentError"}

// componentHealth is the health_check extension's answer (with the
// extension.healthcheck.useComponentStatus gate): the aggregate status and,
// with ?verbose, a tree of pipelines and their components.
type componentHealth struct {
	Status     string                      `json:"status"`
	Error      string                      `json:"error"`
	Components map[string]*componentHealth `json:"components"`
}

func parseHealth(code int, body []byte) *healthStatus {
	var ch componentHealth
	if json.Unmarshal(body, &ch) != nil || !strings.HasPrefix(ch.Status, "Status") {
		// Not the component-status answer (a config of one's own with
		// the legacy health_check settings): only the HTTP status speaks.
		st := &healthStatus{status: fmt.Sprintf("HTTP %d", code), running: code == http.StatusOK}
		if !st.running {
			st.problems = []string{fmt.Sprintf("answered %d: %s", code, strings.TrimSpace(string(body)))}
		}
		return st
	}
	st := &healthStatus{status: ch.Status, running: slices.Contains(runningStatuses, ch.Status)}
	st.problems = ch.problems("", nil)
	slices.Sort(st.problems)
	st.problems = slices.Compact(st.problems)
	return st
}

// problems lists the components of the tree in error, each once per
// pipeline or group it sits in.
func (c *componentHealth) problems(where string, out []string) []string {
	for name, sub := range c.Components {
		if len(sub.Components) > 0 {
			out = sub.problems(name, out)
			continue
		}
		if sub.Error == "" && !strings.HasSuffix(sub.Status, "Error") {
			continue
		}
		reason := sub.Error
		if reason == "" {
			reason = sub.Status
		}
		out = append(out, fmt.Sprintf("%s (%s): %s", name, where, reason))
	}
	return out
}

// summary is the one line `sidecar health` prints.
func (s *healthStatus) summary() string {
	switch {
	case !s.running:
		msg := "not running its pipelines (" + s.status + ")"
		if len(s.problems) > 0 {
			msg += ": " + strings.Join(s.problems, "; ")
		}
		return msg
	case len(s.problems) == 0:
		return "healthy"
	}
	return "running, degraded (a restart would not fix this; `sidecar status` lists it): " + strings.Join(s.problems, "; ")
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
