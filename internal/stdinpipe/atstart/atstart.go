// Package atstart grows a pipe on the process's stdin (stdinpipe.Grow)
// while the program's packages are still being initialised: the sidecar
// imports it for that side effect alone. Nothing reads stdin until the
// collector has started its pipelines, ~90 ms after exec on a quiet host
// (~45 ms of package initialisation, then the collector's start), and an
// app writing its startup logs into the default 64 KiB pipe would wait
// that long; in main it would still wait for the initialisation. This
// package imports only os and x/sys/unix, so Go initialises it among the
// first (the order is by import path once its imports are done).
package atstart

import (
	"os"

	"github.com/sidecarhq/sidecar/internal/stdinpipe"
)

func init() { stdinpipe.Grow(os.Stdin) }
